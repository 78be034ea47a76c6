// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven refusals of the probe ABI (run in the guest, module loaded): every bad request
 * gets its documented errno and refusal code, and the kernel text is unchanged afterwards.
 * Prints "ok ..." / "not ok ..." lines; exit 1 on any "not ok".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/probe.h>
#include <kinstr/reloc.h>
#include <kinstr/sites.h>

static int failed, fd;
static struct kinstr_kernel *k;

static void expect(int cond, const char *what, int err, unsigned int refusal)
{
	if (refusal || err)
		printf("%s %s (errno %s, refusal %u)\n", cond ? "ok" : "not ok", what,
		       strerrorname_np(err) ?: "0", refusal);
	else
		printf("%s %s\n", cond ? "ok" : "not ok", what);
	failed |= !cond;
}

static unsigned long long sym(const char *name, unsigned long long off)
{
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);

	if (!f) {
		printf("not ok setup: no %s\n", name);
		exit(1);
	}
	return f->addr + off;
}

/* A function's fentry NOP: after its ENDBR, if it has one. */
static unsigned long long fentry(const char *name)
{
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);

	return f ? f->addr + f->endbr : sym(name, 0);
}

/*
 * A jump site of name displacing several instructions, the first longer than one byte and the
 * last byte but one inside an instruction (the analysis of this kernel's build picks it, so no
 * offset of one build is written here): *len gets its displaced length.
 */
static unsigned long long multi_insn_site(const char *name, unsigned int *len)
{
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);
	struct kinstr_fn *fn = f ? kinstr_fn__analyze(k, f) : NULL;
	size_t i;

	for (i = 0; fn && i < kinstr_fn__site_cnt(fn); i++) {
		const struct kinstr_site *s = kinstr_fn__site(fn, i);
		unsigned long long a = s->addr;

		if (s->cls != KINSTR_SITE_JUMP || s->displaced_len <= 5 || s->insn_len < 2 ||
		    s->live_len != s->displaced_len || s->addr < f->addr + f->endbr + 5 ||
		    kinstr_fn__site_at(fn, a + s->displaced_len - 1))
			continue;
		*len = s->displaced_len;
		kinstr_fn__free(fn);
		return a;
	}
	kinstr_fn__free(fn);
	printf("not ok setup: no jump site over several instructions in %s\n", name);
	exit(1);
}

/* The first reservation of a kind, for a site that must be refused for it. */
static unsigned long long reserved_site(unsigned int reason)
{
	size_t i;

	for (i = 0; i < kinstr_kernel__reserved_cnt(k); i++)
		if (kinstr_kernel__reserved_at(k, i)->reason == reason &&
		    kinstr_kernel__func_at(k, kinstr_kernel__reserved_at(k, i)->addr))
			return kinstr_kernel__reserved_at(k, i)->addr;
	printf("not ok setup: no reservation %u\n", reason);
	exit(1);
}

/* A correct request for a jump probe at site displacing len bytes, for the area at addr. */
static void good_request(struct kinstr_probe *p, unsigned long long site, unsigned int len,
			 unsigned long long area_addr)
{
	uint8_t out[KINSTR_RELOC_MAX_OUT];
	struct kinstr_reloc r;
	const unsigned char *t = kinstr_kernel__text(k, site, len);

	memset(p, 0, sizeof(*p));
	p->site = site;
	p->kind = KINSTR_PROBE_JUMP;
	p->action = KINSTR_ACTION_COUNT;
	p->displaced_len = len;
	if (t)
		memcpy(p->expected, t, len);
	if (t && len == 5 && !memcmp(t, "\xc3\xcc\xcc\xcc\xcc", 5)) {
		/* a ret and its int3 filler: the ret moves as the kernel writes returns, the filler stays */
		unsigned long long to = 0;
		int32_t rel;

		kinstr_kernel__ret_relocation(k, &to);
		if (!to) {
			p->body[0] = 0xc3;
			p->body_len = 1;
			return;
		}
		rel = (int32_t)(to - (area_addr + KINSTR_SLOT_BODY + 5));
		p->body[0] = 0xe9;
		memcpy(p->body + 1, &rel, 4);
		p->body_len = 5;
		return;
	}
	if (t && !kinstr_reloc__run(&r, t, len, site, out, sizeof(out), area_addr + KINSTR_SLOT_BODY) &&
	    r.out_len <= KINSTR_SLOT_BODY_MAX) {
		memcpy(p->body, out, r.out_len);
		p->body_len = r.out_len;
	}
}

struct installed {
	int err;
	struct kinstr_install in;
};

/* ALLOC n slots, INSTALL the requests, REMOVE the area whatever happened. */
static struct installed try_install(struct kinstr_probe *p, unsigned int n,
				    void (*build)(struct kinstr_probe *p, unsigned long long area))
{
	struct kinstr_alloc al = { .size = sizeof(al), .count = n };
	struct kinstr_remove rm = { .size = sizeof(rm) };
	struct installed res = { 0 };

	if (ioctl(fd, KINSTR_IOC_ALLOC, &al) < 0) {
		res.err = errno;
		return res;
	}
	if (build)
		build(p, al.addr);
	res.in = (struct kinstr_install){ .size = sizeof(res.in), .area = al.area, .count = n,
					  .probes = (uintptr_t)p };
	res.err = ioctl(fd, KINSTR_IOC_INSTALL, &res.in) < 0 ? errno : 0;
	rm.area = al.area;
	ioctl(fd, KINSTR_IOC_REMOVE, &rm);
	return res;
}

static unsigned long long g_site;
static unsigned int g_len;
static void (*g_mutate)(struct kinstr_probe *p);
static unsigned long long g_area;	/* the area build_one builds for */

static void build_one(struct kinstr_probe *p, unsigned long long area)
{
	g_area = area;
	good_request(p, g_site, g_len, area);
	if (g_mutate)
		g_mutate(p);
}

static void build_two_same(struct kinstr_probe *p, unsigned long long area)
{
	good_request(&p[0], g_site, g_len, area);
	good_request(&p[1], g_site, g_len, area + KINSTR_SLOT_SIZE);
}

static void m_none(struct kinstr_probe *p) { (void)p; }
static void m_expected(struct kinstr_probe *p) { p->expected[0] ^= 1; }
static void m_body(struct kinstr_probe *p) { p->body[p->body_len - 1] ^= 1; }
static void m_kind(struct kinstr_probe *p) { p->kind = 9; }
static void m_action(struct kinstr_probe *p) { p->action = 0; }
static void m_len_short(struct kinstr_probe *p) { p->displaced_len--; }
static void m_arg(struct kinstr_probe *p) { p->arg = 1; }
static void m_action_past(struct kinstr_probe *p) { p->action = KINSTR_ACTION_SPAN + 1; }	/* past the table */
static void m_tally(struct kinstr_probe *p) { p->action = KINSTR_ACTION_TALLY; }
static void m_span(struct kinstr_probe *p) { p->action = KINSTR_ACTION_SPAN; p->arg = 1; }
static void m_nop(struct kinstr_probe *p) { p->action = KINSTR_ACTION_NOP; }
static void m_nop_arg(struct kinstr_probe *p) { m_nop(p); p->arg = 1; }
static void m_body_len(struct kinstr_probe *p) { p->body_len = KINSTR_SLOT_BODY_MAX + 1; }
/* The ret in the other form than the kernel's: bare where it wants a thunk, or the reverse. */
static void m_other_ret(struct kinstr_probe *p)
{
	unsigned long long to = 0;
	int32_t rel;

	kinstr_kernel__ret_relocation(k, &to);
	if (to) {
		p->body[0] = 0xc3;
		p->body_len = 1;
		return;
	}
	rel = (int32_t)(kinstr_kernel__return_thunk(k) - (p->site + 5));	/* any thunk: refused */
	p->body[0] = 0xe9;
	memcpy(p->body + 1, &rel, 4);
	p->body_len = 5;
}
static void m_ftrace(struct kinstr_probe *p) { p->kind = KINSTR_PROBE_FTRACE; p->body_len = 0; }
static void m_ftrace_trace(struct kinstr_probe *p) { m_ftrace(p); p->action = KINSTR_ACTION_TRACE; }
static void m_ftrace_body(struct kinstr_probe *p) { m_ftrace(p); p->body_len = 5; }
static void m_ftrace_nop(struct kinstr_probe *p) { m_ftrace(p); m_nop(p); }

/* A `ret; int3 x4` in function name: a return thunk's jmp that the kernel rewrote at boot. */
static unsigned long long filler_ret(const char *name)
{
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);
	const unsigned char *t = f ? kinstr_kernel__text(k, f->addr, f->size) : NULL;
	unsigned int i;

	for (i = 0; t && i + 5 <= f->size; i++)
		if (!memcmp(t + i, "\xc3\xcc\xcc\xcc\xcc", 5))
			return f->addr + i;
	printf("not ok setup: no ret with int3 filler in %s\n", name);
	exit(1);
}

/*
 * Two int3s of padding at the very end of a function whose successor's first bytes nothing
 * reserves: a 5-byte jump there would run into the next function.
 */
static unsigned long long end_of_function(void)
{
	size_t i;

	for (i = 0; i + 1 < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		unsigned long long end = f->addr + f->size;
		const unsigned char *t = f->size > 16 ? kinstr_kernel__text(k, end - 16, 16) : NULL;
		const struct kinstr_func *next = kinstr_kernel__func_at(k, end);
		struct kinstr_fn *fn;
		int ok;

		if (!t || t[14] != 0xcc || t[15] != 0xcc || !next || next->addr != end ||
		    kinstr_kernel__reserved(k, end - 2, 5))
			continue;
		fn = kinstr_fn__analyze(k, f);
		ok = fn && kinstr_fn__site_at(fn, end - 2) != NULL;
		kinstr_fn__free(fn);
		if (ok)
			return end - 2;
	}
	printf("not ok setup: no function ends in int3 before an unreserved one\n");
	exit(1);
}

/*
 * A jump site of name whose displaced bytes hold an instruction before a direct call and end with
 * it (the slot emulates the call); *len its displaced length, *next the length of the instruction
 * after the call.
 */
static unsigned long long call_site(const char *name, unsigned int *len, unsigned int *next)
{
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);
	struct kinstr_fn *fn = f ? kinstr_fn__analyze(k, f) : NULL;
	const struct kinstr_cfg *cfg = fn ? kinstr_fn__cfg(fn) : NULL;
	size_t i;

	for (i = 0; cfg && i + 2 < kinstr_fn__site_cnt(fn); i++) {
		const struct kinstr_site *s = kinstr_fn__site(fn, i);
		const struct kinstr_cfg_insn *c = kinstr_cfg__insn(cfg, i + 1);

		if (s->cls == KINSTR_SITE_JUMP && c->x.flow == KINSTR_X86_FLOW_CALL &&
		    c->x.addr + c->x.len == s->addr + s->displaced_len &&
		    kinstr_cfg__insn(cfg, i + 2)->x.len + s->displaced_len <= KINSTR_MAX_DISPLACED) {
			unsigned long long a = s->addr;

			*len = s->displaced_len;
			*next = kinstr_cfg__insn(cfg, i + 2)->x.len;
			kinstr_fn__free(fn);
			return a;
		}
	}
	kinstr_fn__free(fn);
	printf("not ok setup: no jump site ending with a call in %s\n", name);
	exit(1);
}

static unsigned int g_next;

/* The body user space builds for the site: the prefix relocated, the call as push $return; jmp. */
static void m_lib_body(struct kinstr_probe *p)
{
	const struct kinstr_func *f = kinstr_kernel__func_at(k, p->site);
	struct kinstr_probeset *ps = kinstr_probeset__new(NULL, k);
	int n = -1;

	if (ps && f && !kinstr_probeset__add(ps, f, p->site, NULL))
		n = kinstr_probeset__body(ps, 0, g_area + KINSTR_SLOT_BODY, p->body, sizeof(p->body), NULL);
	kinstr_probeset__free(ps);
	p->body_len = n > 0 ? n : 0;
}

/* The pushed return address one off. */
static void m_call_ret(struct kinstr_probe *p) { m_lib_body(p); p->body[p->body_len - 9] ^= 1; }

/* The call not the last displaced instruction: the one after it displaced too. */
static void m_call_not_last(struct kinstr_probe *p)
{
	const unsigned char *t = kinstr_kernel__text(k, p->site, p->displaced_len + g_next);

	m_lib_body(p);
	if (t)
		memcpy(p->expected, t, p->displaced_len + g_next);
	p->displaced_len += g_next;
}

struct rcase {
	const char *what;
	unsigned long long site;
	unsigned int len;
	void (*mutate)(struct kinstr_probe *p);
	int err;
	unsigned int refusal;
	unsigned int reason;	/* for KINSTR_REFUSE_RESERVED: a bit that must be set */
};

/*
 * One FTRACE trace probe at vfs_read's entry recording %rdx (count) on descriptor tfd (which has
 * a trace channel), with pred if not NULL: INSTALL's errno (0: installed; removed again).
 */
static int try_pred(int tfd, const struct kinstr_pred *pred, bool flag, unsigned int *refusal)
{
	struct kinstr_alloc al = { .size = sizeof(al), .count = 1 };
	struct kinstr_remove rm = { .size = sizeof(rm) };
	struct kinstr_trace_spec spec = { .nvals = 1, .flags = flag ? KINSTR_TRACE_SPEC_F_PRED : 0,
					  .vals = { { .kind = KINSTR_VAL_REG, .reg = KINSTR_REG_RDX } } };
	struct kinstr_install in;
	struct kinstr_probe p;
	int err;

	if (ioctl(tfd, KINSTR_IOC_ALLOC, &al) < 0)
		return errno;
	good_request(&p, fentry("vfs_read"), 5, al.addr);
	m_ftrace_trace(&p);
	in = (struct kinstr_install){ .size = sizeof(in), .area = al.area, .count = 1, .probes = (uintptr_t)&p,
				      .specs = (uintptr_t)&spec, .preds = (uintptr_t)pred,
				      .flags = KINSTR_INSTALL_F_WAIT };
	err = ioctl(tfd, KINSTR_IOC_INSTALL, &in) < 0 ? errno : 0;
	*refusal = in.refusal;
	rm.area = al.area;
	ioctl(tfd, KINSTR_IOC_REMOVE, &rm);
	return err;
}

int main(void)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_probe p[2];
	unsigned long long g7, gc;
	unsigned int g7_len, gc_len;
	unsigned char big[KINSTR_MAX_STRUCT_SIZE + 64];
	struct installed r;
	size_t i;

	k = dev ? kinstr_kernel__open_live(dev) : NULL;
	if (!k) {
		perror("setup");
		return 1;
	}
	fd = kinstr_dev__fd(dev);
	g7 = multi_insn_site("__x64_sys_getppid", &g7_len);
	gc = call_site("__x64_sys_getppid", &gc_len, &g_next);
	{
		struct rcase cases[] = {
			{ "a correct jump request installs", g7, g7_len, m_none, 0, 0, 0 },
			{ "mid-instruction site", g7 + 1, 5, m_none, EILSEQ, KINSTR_REFUSE_NOT_BOUNDARY, 0 },
			{ "displaced length not on a boundary", g7, g7_len, m_len_short, EILSEQ,
			  KINSTR_REFUSE_BAD_LENGTH, 0 },
			{ "wrong expected bytes", g7, g7_len, m_expected, ESTALE, KINSTR_REFUSE_BYTES_DIFFER, 0 },
			{ "relocation that disagrees with the kernel decoder", g7, g7_len, m_body, ENOEXEC,
			  KINSTR_REFUSE_BAD_RELOCATION, 0 },
			{ "unknown probe kind", g7, g7_len, m_kind, EINVAL, KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "unknown action", g7, g7_len, m_action, EINVAL, KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "arg set on a counting probe", g7, g7_len, m_arg, EINVAL, KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "an action past the last one", g7, g7_len, m_action_past, EINVAL, KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "a no-op jump probe installs", g7, g7_len, m_nop, 0, 0, 0 },
			{ "a tally probe without the descriptor's tally", g7, g7_len, m_tally, ENODEV,
			  KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "a span probe without the descriptor's spans", g7, g7_len, m_span, ENODEV,
			  KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "arg set on a no-op probe", g7, g7_len, m_nop_arg, EINVAL, KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "body longer than a slot holds", g7, g7_len, m_body_len, EINVAL,
			  KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "a jump over a ret and its int3 filler installs", filler_ret("__x64_sys_getppid"), 5,
			  m_none, 0, 0, 0 },
			{ "a ret moved otherwise than the kernel writes returns", filler_ret("__x64_sys_getppid"), 5,
			  m_other_ret, ENOEXEC, KINSTR_REFUSE_BAD_RELOCATION, 0 },
			{ "a jump over an instruction and a call, the call emulated, installs", gc, gc_len, m_lib_body,
			  0, 0, 0 },
			{ "a displaced call that pushes another return address", gc, gc_len, m_call_ret, ENOEXEC,
			  KINSTR_REFUSE_BAD_RELOCATION, 0 },
			{ "a displaced call relocated as a call (it would return into the slot)", gc, gc_len, m_none,
			  ENOEXEC, KINSTR_REFUSE_BAD_RELOCATION, 0 },
			{ "a jump that displaces a call and the instruction after it", gc, gc_len, m_call_not_last,
			  EPERM, KINSTR_REFUSE_UNSAFE_INSN, 0 },
			{ "a jump that runs past the function's end", end_of_function(), 5, m_none, EXDEV,
			  KINSTR_REFUSE_CROSSES_END, 0 },
			{ "ftrace site", fentry("vfs_read"), 5, m_none, EPERM, KINSTR_REFUSE_RESERVED, KINSTR_R_FTRACE },
			{ "an ftrace direct-call probe at an ftrace site installs", fentry("vfs_read"), 5, m_ftrace,
			  0, 0, 0 },
			{ "an ftrace probe not at a function's start", g7, 5, m_ftrace, EILSEQ,
			  KINSTR_REFUSE_NOT_BOUNDARY, 0 },
			{ "an ftrace probe at a function without an ftrace site", sym("entry_SYSCALL_64", 0), 5,
			  m_ftrace, EPERM, KINSTR_REFUSE_RESERVED, KINSTR_R_ENTRY_TEXT },
			/* ABI 0.4 lets an ftrace probe trace (trace.t), but only into a trace session */
			{ "an ftrace probe that would trace with no trace session", fentry("vfs_read"), 5, m_ftrace_trace,
			  ENODEV, KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "an ftrace probe with a body", fentry("vfs_read"), 5, m_ftrace_body, EINVAL,
			  KINSTR_REFUSE_BAD_REQUEST, 0 },
			{ "a no-op ftrace probe installs", fentry("vfs_read"), 5, m_ftrace_nop, 0, 0, 0 },
			{ "entry text", sym("entry_SYSCALL_64", 0), 5, m_none, EPERM, KINSTR_REFUSE_RESERVED,
			  KINSTR_R_ENTRY_TEXT },
			{ "noinstr text", sym("exc_page_fault", 0), 5, m_none, EPERM, KINSTR_REFUSE_RESERVED,
			  KINSTR_R_NOINSTR_TEXT },
			{ "kprobe blacklist", sym("do_int3", 0), 5, m_none, EPERM, KINSTR_REFUSE_RESERVED,
			  KINSTR_R_KPROBE_BLACKLIST },
			{ "jump label site", reserved_site(KINSTR_R_JUMP_LABEL), 5, m_none, EPERM,
			  KINSTR_REFUSE_RESERVED, KINSTR_R_JUMP_LABEL },
			{ "static call site", reserved_site(KINSTR_R_STATIC_CALL), 5, m_none, EPERM,
			  KINSTR_REFUSE_RESERVED, KINSTR_R_STATIC_CALL },
			{ "exception-table site", reserved_site(KINSTR_R_EXTABLE), 5, m_none, EPERM,
			  KINSTR_REFUSE_RESERVED, KINSTR_R_EXTABLE },
			{ "BUG site", reserved_site(KINSTR_R_BUG), 5, m_none, EPERM, KINSTR_REFUSE_RESERVED,
			  KINSTR_R_BUG },
			{ "address beyond _etext", kinstr_kernel__layout(k)->text.end + 0x100000, 5,
			  m_none, EFAULT, KINSTR_REFUSE_RESERVED, KINSTR_R_NOT_TEXT },
		};
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			g_site = cases[i].site;
			g_len = cases[i].len;
			g_mutate = cases[i].mutate;
			r = try_install(p, 1, build_one);
			expect(r.err == cases[i].err && r.in.refusal == cases[i].refusal &&
			       (cases[i].refusal != KINSTR_REFUSE_RESERVED ||
				(r.in.refusal_reasons & (1u << cases[i].reason))),
			       cases[i].what, r.err, r.in.refusal);
		}
	}
	/* the module's own text */
	{
		unsigned long long stub = 0, a;
		char t, name[128], line[512];
		FILE *f = fopen("/proc/kallsyms", "r");

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c %127s", &a, &t, name) == 3 && !strcmp(name, "kinstr_trace_stub"))
				stub = a;
		if (f)
			fclose(f);
		g_site = stub;
		g_len = 5;
		g_mutate = m_none;
		r = try_install(p, 1, build_one);
		expect(stub && r.err == EFAULT && (r.in.refusal_reasons & (1u << KINSTR_R_OWN_MODULE)),
		       "kinstr.ko's own text", r.err, r.in.refusal);
	}
	g_site = g7;
	g_len = g7_len;
	r = try_install(p, 2, build_two_same);
	expect(r.err == EBUSY && r.in.refusal == KINSTR_REFUSE_BUSY && r.in.refused_index == 1,
	       "two probes of one batch on one site", r.err, r.in.refusal);

	/* struct-level refusals */
	{
		struct kinstr_alloc al = { .size = sizeof(al), .count = 1 };
		struct kinstr_install in = { .size = sizeof(in) };
		struct kinstr_remove rm = { .size = sizeof(rm) };

		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_ALLOC, &al) == 0, "ALLOC of one slot", errno, 0);
		in.area = al.area;
		in.count = 2;
		in.probes = (uintptr_t)p;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, &in) < 0 && errno == EINVAL, "count differs from the area's",
		       errno, 0);
		in.count = 1;
		in.flags = 1U << 31;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, &in) < 0 && errno == EINVAL, "unknown flag", errno, 0);
		in.flags = 0;
		in.size = 0;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, &in) < 0 && errno == EINVAL, "zero-sized struct", errno, 0);
		memset(big, 0, sizeof(big));
		memcpy(big, &in, sizeof(in));
		((struct kinstr_install *)big)->size = KINSTR_MAX_STRUCT_SIZE + 1;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, big) < 0 && errno == E2BIG, "oversized struct", errno, 0);
		((struct kinstr_install *)big)->size = sizeof(in) + 8;
		big[sizeof(in) + 3] = 1;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, big) < 0 && errno == E2BIG, "unknown non-zero tail", errno, 0);
		in.size = sizeof(in);
		in.area = 999999;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, &in) < 0 && errno == ENOENT, "unknown area", errno, 0);
		in.area = al.area;
		in.probes = 16;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_INSTALL, &in) < 0 && errno == EFAULT, "bad probes pointer", errno, 0);
		al.count = KINSTR_AREA_MAX_PROBES + 1;
		al.area = 0;
		al.addr = 0;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_ALLOC, &al) < 0 && errno == EINVAL, "too many slots", errno, 0);
		al.count = 0;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_ALLOC, &al) < 0 && errno == EINVAL, "zero slots", errno, 0);
		rm.area = in.area;
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_REMOVE, &rm) == 0, "REMOVE of the unused area", errno, 0);
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_REMOVE, &rm) < 0 && errno == ENOENT, "REMOVE twice", errno, 0);
	}
	/* KINSTR_IOC_HELD: no flags, nothing reserved; room 0 asks for the count */
	{
		struct kinstr_held h = { .size = sizeof(h), .flags = 1 };

		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_HELD, &h) < 0 && errno == EINVAL, "HELD with an unknown flag", errno, 0);
		h = (struct kinstr_held){ .size = sizeof(h), .__reserved = 1 };
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_HELD, &h) < 0 && errno == EINVAL, "HELD with its reserved field set", errno, 0);
		h = (struct kinstr_held){ .size = 8 };
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_HELD, &h) < 0 && errno == EINVAL, "HELD with a struct too small", errno, 0);
		h = (struct kinstr_held){ .size = sizeof(h) };
		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_HELD, &h) == 0 && h.count == 0, "HELD with nothing held: count 0", errno, 0);
	}
	/* value predicates (ABI 0.17): each malformed program refused as a bad request, nothing installed */
	{
		struct kinstr_trace_create tc = { .size = sizeof(tc), .subbuf_size = 4096, .num_subbufs = 2 };
		struct kinstr_pred good = { .ninsns = 3, .insns = {
			{ .op = KINSTR_PRED_VAL, .a = 0 }, { .op = KINSTR_PRED_IMM, .imm = 4096 },
			{ .op = KINSTR_PRED_CMP, .a = KINSTR_PRED_GT } } }, bad;
		struct kinstr_sync sy = { .size = sizeof(sy) };
		int tfd = open(KINSTR_DEVICE, O_RDWR | O_CLOEXEC), err;
		unsigned int refusal, j;

		expect(tfd >= 0 && ioctl(tfd, KINSTR_IOC_TRACE_CREATE, &tc) == 0, "a trace channel for the predicates",
		       errno, 0);
		err = try_pred(tfd, &good, true, &refusal);
		expect(err == 0, "a predicate count > 4096 installs", err, refusal);
		err = try_pred(tfd, NULL, true, &refusal);
		expect(err == EINVAL && refusal == KINSTR_REFUSE_BAD_REQUEST, "a spec with a predicate and no preds", err,
		       refusal);
		err = try_pred(tfd, &good, false, &refusal);
		expect(err == 0, "preds not read for a spec without KINSTR_TRACE_SPEC_F_PRED", err, refusal);
#define BAD_PRED(what, stmt)                                                                              \
		do {                                                                                      \
			bad = good;                                                                       \
			stmt;                                                                             \
			err = try_pred(tfd, &bad, true, &refusal);                                        \
			expect(err == EINVAL && refusal == KINSTR_REFUSE_BAD_REQUEST, what, err, refusal);  \
		} while (0)
		BAD_PRED("a predicate with an unknown op", bad.insns[1].op = KINSTR_PRED_OP_NR);
		/* jumps are forward by construction (b unsigned): the largest b is a jump out of the program */
		BAD_PRED("a predicate whose jump goes backward (b = 0xffff: out of range)",
			 (bad.insns[3] = bad.insns[2], bad.insns[2] = (struct kinstr_pred_insn){ .op = KINSTR_PRED_JZ,
				.b = 0xffff }, bad.ninsns = 4));
		BAD_PRED("a predicate with a value index past nvals", bad.insns[0].a = 1);
		BAD_PRED("a predicate with a non-zero tail", bad.insns[KINSTR_PRED_MAX_INSNS - 1].imm = 1);
		BAD_PRED("a predicate with a flag", bad.flags = 1);
		BAD_PRED("a predicate leaving two values", bad.ninsns = 2);
		BAD_PRED("a predicate with a string op on a number", (bad.insns[1] = (struct kinstr_pred_insn){
				.op = KINSTR_PRED_STR, .a = 0 }, bad.insns[2] = (struct kinstr_pred_insn){
				.op = KINSTR_PRED_DATA }, bad.ninsns = 3));
		memset(&bad, 0, sizeof(bad));
		for (j = 0; j <= KINSTR_PRED_MAX_STACK; j++)
			bad.insns[j] = (struct kinstr_pred_insn){ .op = KINSTR_PRED_IMM, .imm = j };
		for (; j < 2 * KINSTR_PRED_MAX_STACK + 1; j++)
			bad.insns[j] = (struct kinstr_pred_insn){ .op = KINSTR_PRED_CMP };
		bad.ninsns = (uint16_t)j;
		err = try_pred(tfd, &bad, true, &refusal);
		expect(err == EINVAL && refusal == KINSTR_REFUSE_BAD_REQUEST, "a predicate deeper than the stack", err,
		       refusal);
#undef BAD_PRED
		errno = 0;
		expect(ioctl(tfd, KINSTR_IOC_SYNC, &sy) == 0, "SYNC after the predicates", errno, 0);
		close(tfd);
	}
	/* KINSTR_IOC_TALLY_*: every field of the create checked, one per descriptor, reads in range */
	{
		struct kinstr_tally_create tc;
		struct kinstr_tally_read rd = { .size = sizeof(rd) };
		static const struct { const char *what; struct kinstr_tally_create tc; } bad[] = {
			{ "TALLY_CREATE by nothing", { .by = 0, .entries = 64 } },
			{ "TALLY_CREATE by an unknown key", { .by = KINSTR_TALLY_BY_VALUE + 1, .entries = 64 } },
			{ "TALLY_CREATE with entries not a power of two", { .by = KINSTR_TALLY_BY_COMM, .entries = 100 } },
			{ "TALLY_CREATE with too few entries", { .by = KINSTR_TALLY_BY_COMM, .entries = 32 } },
			{ "TALLY_CREATE with too many entries",
			  { .by = KINSTR_TALLY_BY_COMM, .entries = 2 * KINSTR_TALLY_MAX_ENTRIES } },
			{ "TALLY_CREATE by comm with a key size", { .by = KINSTR_TALLY_BY_COMM, .entries = 64, .key_size = 8 } },
			{ "TALLY_CREATE by value with no key size", { .by = KINSTR_TALLY_BY_VALUE, .entries = 64 } },
			{ "TALLY_CREATE by value with a key size not a multiple of 8",
			  { .by = KINSTR_TALLY_BY_VALUE, .entries = 64, .key_size = 12 } },
			{ "TALLY_CREATE by value with a key past the longest string",
			  { .by = KINSTR_TALLY_BY_VALUE, .entries = 64, .key_size = KINSTR_TRACE_STR_MAX + 8 } },
			{ "TALLY_CREATE with an unknown flag", { .by = KINSTR_TALLY_BY_PID, .entries = 64, .flags = 1 } },
			{ "TALLY_CREATE with nr_cpus set", { .by = KINSTR_TALLY_BY_PID, .entries = 64, .nr_cpus = 1 } },
		};
		int fd2 = open(KINSTR_DEVICE, O_RDWR | O_CLOEXEC);

		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_READ, &rd) < 0 && errno == ENODEV, "TALLY_READ with no tally", errno, 0);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			tc = bad[i].tc;
			tc.size = sizeof(tc);
			errno = 0;
			expect(ioctl(fd2, KINSTR_IOC_TALLY_CREATE, &tc) < 0 && errno == EINVAL, bad[i].what, errno, 0);
		}
		tc = (struct kinstr_tally_create){ .size = sizeof(tc), .by = KINSTR_TALLY_BY_TID, .entries = 64 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_CREATE, &tc) == 0 && tc.nr_cpus > 0, "TALLY_CREATE by tid", errno, 0);
		rd.cpu = tc.nr_cpus;
		tc.nr_cpus = 0;	/* out only */
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_CREATE, &tc) < 0 && errno == EEXIST, "TALLY_CREATE twice", errno, 0);
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_READ, &rd) < 0 && errno == EINVAL, "TALLY_READ past the last CPU",
		       errno, 0);
		rd = (struct kinstr_tally_read){ .size = sizeof(rd), .count = 1 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_READ, &rd) < 0 && errno == EINVAL, "TALLY_READ with room and no pointer",
		       errno, 0);
		rd = (struct kinstr_tally_read){ .size = sizeof(rd), .found = 1 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_READ, &rd) < 0 && errno == EINVAL, "TALLY_READ with an out field set",
		       errno, 0);
		rd = (struct kinstr_tally_read){ .size = sizeof(rd) };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TALLY_READ, &rd) == 0 && rd.found == 0 && rd.overflow == 0,
		       "TALLY_READ of an empty tally", errno, 0);
		close(fd2);
	}
	/* KINSTR_TIMERS_F_BY_*: at most one key; KINSTR_IOC_TIMER_BY only with one, its fields checked */
	{
		struct kinstr_timers_create tc = { .size = sizeof(tc), .count = 1,
						   .flags = KINSTR_TIMERS_F_BY_COMM | KINSTR_TIMERS_F_BY_PID };
		struct kinstr_timer_by tb = { .size = sizeof(tb) };
		int fd2 = open(KINSTR_DEVICE, O_RDWR | O_CLOEXEC), fd3 = open(KINSTR_DEVICE, O_RDWR | O_CLOEXEC);

		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TIMER_BY, &tb) < 0 && errno == ENODEV, "TIMER_BY with no timers", errno, 0);
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TIMERS_CREATE, &tc) < 0 && errno == EINVAL, "TIMERS_CREATE by two keys",
		       errno, 0);
		tc.flags = 0;
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TIMERS_CREATE, &tc) == 0, "TIMERS_CREATE by no key", errno, 0);
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_TIMER_BY, &tb) < 0 && errno == EOPNOTSUPP, "TIMER_BY of timers by no key",
		       errno, 0);
		tc.flags = KINSTR_TIMERS_F_BY_TID;
		errno = 0;
		expect(ioctl(fd3, KINSTR_IOC_TIMERS_CREATE, &tc) == 0, "TIMERS_CREATE by tid", errno, 0);
		tb.count = 1;
		errno = 0;
		expect(ioctl(fd3, KINSTR_IOC_TIMER_BY, &tb) < 0 && errno == EINVAL, "TIMER_BY with room and no pointer",
		       errno, 0);
		tb = (struct kinstr_timer_by){ .size = sizeof(tb), .cpu = 1U << 30 };
		errno = 0;
		expect(ioctl(fd3, KINSTR_IOC_TIMER_BY, &tb) < 0 && errno == EINVAL, "TIMER_BY past the last CPU", errno, 0);
		tb = (struct kinstr_timer_by){ .size = sizeof(tb) };
		errno = 0;
		expect(ioctl(fd3, KINSTR_IOC_TIMER_BY, &tb) == 0 && tb.found == 0, "TIMER_BY of timers that timed nothing",
		       errno, 0);
		close(fd2);
		close(fd3);
	}
	/* KINSTR_IOC_SPAN_*: every field of the create checked, one per descriptor, reads in range */
	{
		struct kinstr_span_create sc;
		struct kinstr_span_read rd = { .size = sizeof(rd) };
		static const struct { const char *what; struct kinstr_span_create sc; } bad[] = {
			{ "SPAN_CREATE by nothing", { .by = 0, .starts = 64, .rows = 64 } },
			{ "SPAN_CREATE by an unknown key", { .by = KINSTR_SPAN_BY_VALUE + 1, .starts = 64, .rows = 64 } },
			{ "SPAN_CREATE with starts not a power of two", { .by = KINSTR_SPAN_BY_TID, .starts = 100, .rows = 64 } },
			{ "SPAN_CREATE with too few rows", { .by = KINSTR_SPAN_BY_TID, .starts = 64, .rows = 32 } },
			{ "SPAN_CREATE with too many starts",
			  { .by = KINSTR_SPAN_BY_TID, .starts = 2 * KINSTR_TALLY_MAX_ENTRIES, .rows = 64 } },
			{ "SPAN_CREATE with an unknown flag", { .by = KINSTR_SPAN_BY_PID, .starts = 64, .rows = 64, .flags = 2 } },
			{ "SPAN_CREATE with nr_cpus set", { .by = KINSTR_SPAN_BY_PID, .starts = 64, .rows = 64, .nr_cpus = 1 } },
		};
		int fd2 = open(KINSTR_DEVICE, O_RDWR | O_CLOEXEC);

		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SPAN_READ, &rd) < 0 && errno == ENODEV, "SPAN_READ with no spans", errno, 0);
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			sc = bad[i].sc;
			sc.size = sizeof(sc);
			errno = 0;
			expect(ioctl(fd2, KINSTR_IOC_SPAN_CREATE, &sc) < 0 && errno == EINVAL, bad[i].what, errno, 0);
		}
		sc = (struct kinstr_span_create){ .size = sizeof(sc), .by = KINSTR_SPAN_BY_TID, .starts = 64, .rows = 64,
						  .flags = KINSTR_SPAN_F_LOCAL_CLOCK };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SPAN_CREATE, &sc) == 0 && sc.nr_cpus > 0, "SPAN_CREATE by tid", errno, 0);
		rd.cpu = sc.nr_cpus;
		sc.nr_cpus = 0;	/* out only */
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SPAN_CREATE, &sc) < 0 && errno == EEXIST, "SPAN_CREATE twice", errno, 0);
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SPAN_READ, &rd) < 0 && errno == EINVAL, "SPAN_READ past the last CPU", errno, 0);
		rd = (struct kinstr_span_read){ .size = sizeof(rd), .open = 1 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SPAN_READ, &rd) < 0 && errno == EINVAL, "SPAN_READ with an out field set",
		       errno, 0);
		rd = (struct kinstr_span_read){ .size = sizeof(rd) };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SPAN_READ, &rd) == 0 && rd.found == 0 && rd.open == 0,
		       "SPAN_READ of empty spans", errno, 0);
		close(fd2);
	}
	/* KINSTR_IOC_SCOPE: once, before the descriptor's first ALLOC, every field checked */
	{
		struct kinstr_scope sc = { .size = sizeof(sc), .cgroup_fd = -1 };
		uint32_t zero = 0, me = (uint32_t)getpid();
		unsigned char tail[sizeof(sc) + 8] = { 0 };
		int fd2 = open(KINSTR_DEVICE, O_RDWR | O_CLOEXEC), pfd = open("/proc", O_RDONLY | O_DIRECTORY);

		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EBUSY, "SCOPE after the descriptor's ALLOC",
		       errno, 0);
		sc.flags = 1U << 7;
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EINVAL, "SCOPE with an unknown flag", errno, 0);
		sc.flags = KINSTR_SCOPE_F_FOLLOW;
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EINVAL, "SCOPE following no pid", errno, 0);
		sc = (struct kinstr_scope){ .size = sizeof(sc), .cgroup_fd = -1, .pids = (unsigned long)&zero, .npids = 1 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EINVAL, "SCOPE with pid 0", errno, 0);
		sc = (struct kinstr_scope){ .size = sizeof(sc), .cgroup_fd = -1 };
		memset(sc.comm, 'a', sizeof(sc.comm));
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EINVAL, "SCOPE with a comm of 16 bytes", errno, 0);
		sc = (struct kinstr_scope){ .size = sizeof(sc), .cgroup_fd = pfd };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EBADF, "SCOPE of a directory not a cgroup",
		       errno, 0);
		sc = (struct kinstr_scope){ .size = 8, .cgroup_fd = -1 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EINVAL, "SCOPE with a struct too small", errno, 0);
		sc = (struct kinstr_scope){ .size = sizeof(tail), .cgroup_fd = -1 };
		memcpy(tail, &sc, sizeof(sc));
		tail[sizeof(sc) + 3] = 1;
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, tail) < 0 && errno == E2BIG, "SCOPE with an unknown non-zero tail",
		       errno, 0);
		sc = (struct kinstr_scope){ .size = sizeof(sc), .cgroup_fd = -1, .tids = (unsigned long)&me, .ntids = 1 };
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) == 0, "SCOPE of this thread", errno, 0);
		errno = 0;
		expect(ioctl(fd2, KINSTR_IOC_SCOPE, &sc) < 0 && errno == EBUSY, "SCOPE twice", errno, 0);
		close(pfd);
		close(fd2);
		/* the scope's tracepoints out again (the text is compared after this program) */
		struct kinstr_sync sy = { .size = sizeof(sy) };

		errno = 0;
		expect(ioctl(fd, KINSTR_IOC_SYNC, &sy) == 0, "SYNC after the scope's descriptor closed", errno, 0);
	}
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return failed;
}
