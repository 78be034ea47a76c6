// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Probe sets: from analysed sites to installed counting probes. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <kinstr/bpf.h>
#include <kinstr/probe.h>
#include <kinstr/reloc.h>

struct pset_probe {
	struct kinstr_probe_info info;
	uint8_t bytes[KINSTR_MAX_DISPLACED];
	uint8_t live_len;		/* bytes[] that run: the rest is int3 filler after a ret/jmp */
	uint8_t insn_len;		/* the site's own instruction */
	bool is_call;			/* ends with a direct call (a trap's one, a jump's last): emulated */
	uint8_t call_off;		/* where that call starts in bytes[] */
	bool is_ret;			/* bare ret: moves as jmp __x86_return_thunk */
	uint64_t call_target;
	uint8_t action;			/* enum kinstr_action (0: KINSTR_ACTION_COUNT); pset_actions[] */
	uint32_t arg;			/* KINSTR_ACTION_TIMER_*: the timer */
	struct kinstr_trace_spec spec;	/* KINSTR_ACTION_TRACE, KINSTR_ACTION_TALLY */
	const struct kinstr_pred *pred;	/* its predicate (the caller's), or NULL */
	int bpf_fd;			/* KINSTR_ACTION_BPF: bpf_fd's program with bpf_cookie */
	uint64_t bpf_cookie;
};

/*
 * What each probe action is to a probe set, one line each (the module's own table is
 * kmod/patch/ops.c): the feature the module must announce for it and what to say when it does
 * not, and whether kinstr_probeset__set_action() makes it (an action with no argument and nothing
 * to hand over; the others have setters of their own).
 */
static const struct pset_action {
	uint64_t feature;
	const char *missing;
	bool plain;
} pset_actions[] = {
	[KINSTR_ACTION_COUNT] = { .plain = true },
	[KINSTR_ACTION_TRACE] = { .plain = false },		/* kinstr_probeset__set_trace */
	[KINSTR_ACTION_TIMER_START] = { .plain = false },	/* kinstr_probeset__set_timer */
	[KINSTR_ACTION_TIMER_STOP] = { .plain = false },
	/* KINSTR_ACTION_ENTER: a code cache's requests (lib/cache/cacheset.c), never a probe set's */
	[KINSTR_ACTION_BPF] = { .feature = KINSTR_FEAT_BPF,	/* kinstr_probeset__set_bpf */
				.missing = "this kinstr.ko runs no BPF programs (needs ABI 0.11 and bpf_prog_active)" },
	[KINSTR_ACTION_NOP] = { .feature = KINSTR_FEAT_NOP, .missing = "this kinstr.ko has no no-op action (needs ABI 0.15)", .plain = true },
	[KINSTR_ACTION_TALLY] = { .feature = KINSTR_FEAT_TALLY,	/* kinstr_probeset__set_tally */
				  .missing = "this kinstr.ko counts nothing by key in the module (needs ABI 0.18)" },
	[KINSTR_ACTION_SPAN] = { .feature = KINSTR_FEAT_SPAN,	/* kinstr_probeset__set_span */
				 .missing = "this kinstr.ko measures no span in the module (needs ABI 0.18)" },
};

/* A probe's action, 0 standing for KINSTR_ACTION_COUNT (what a probe added does). */
static uint8_t pset_action_of(const struct pset_probe *p)
{
	return p->action ? p->action : KINSTR_ACTION_COUNT;
}

/* Analyses kept for the set's life, by function: each function is analysed once per set. */
struct pset_fn {
	const struct kinstr_func *f;
	struct kinstr_fn *fn;
};

struct kinstr_probeset {
	struct kinstr_dev *dev;
	const struct kinstr_kernel *k;
	struct pset_probe *probes;
	size_t n, cap;
	struct pset_fn *fns;		/* open addressing on f, fns_cap a power of two */
	size_t fns_n, fns_cap;
	uint32_t area;			/* 0: not installed */
	uint64_t area_addr;
	bool async;			/* install returns with int3s in, before the jumps */
};

struct kinstr_probeset *kinstr_probeset__new(struct kinstr_dev *dev, const struct kinstr_kernel *k)
{
	struct kinstr_probeset *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->dev = dev;
	ps->k = k;
	return ps;
}

void kinstr_probeset__free(struct kinstr_probeset *ps)
{
	if (!ps)
		return;
	if (ps->area)
		kinstr_probeset__remove(ps);
	free(ps->probes);
	for (size_t i = 0; i < ps->fns_cap; i++)
		kinstr_fn__free(ps->fns[i].fn);
	free(ps->fns);
	free(ps);
}

static size_t fn_slot(const struct pset_fn *t, size_t cap, const struct kinstr_func *f)
{
	size_t h = (size_t)(((uintptr_t)f >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);

	while (t[h].f && t[h].f != f)
		h = (h + 1) & (cap - 1);
	return h;
}

const struct kinstr_fn *kinstr_probeset__analysis(struct kinstr_probeset *ps, const struct kinstr_func *f)
{
	struct kinstr_fn *fn;
	size_t h;

	if (ps->fns_cap) {
		h = fn_slot(ps->fns, ps->fns_cap, f);
		if (ps->fns[h].f)
			return ps->fns[h].fn;
	}
	if (2 * (ps->fns_n + 1) > ps->fns_cap) {	/* at most half full */
		size_t cap = ps->fns_cap ? 2 * ps->fns_cap : 64, i;
		struct pset_fn *t = calloc(cap, sizeof(*t));

		if (!t) {
			errno = ENOMEM;
			return NULL;
		}
		for (i = 0; i < ps->fns_cap; i++)
			if (ps->fns[i].f)
				t[fn_slot(t, cap, ps->fns[i].f)] = ps->fns[i];
		free(ps->fns);
		ps->fns = t;
		ps->fns_cap = cap;
	}
	fn = kinstr_fn__analyze(ps->k, f);
	if (!fn)
		return NULL;
	h = fn_slot(ps->fns, ps->fns_cap, f);
	ps->fns[h].f = f;
	ps->fns[h].fn = fn;
	ps->fns_n++;
	return fn;
}

const struct kinstr_kernel *kinstr_probeset__kernel(const struct kinstr_probeset *ps)
{
	return ps->k;
}

size_t kinstr_probeset__cnt(const struct kinstr_probeset *ps)
{
	return ps->n;
}

const struct kinstr_probe_info *kinstr_probeset__info(const struct kinstr_probeset *ps, size_t i)
{
	return i < ps->n ? &ps->probes[i].info : NULL;
}

/* Why a bare ret cannot move (kinstr_kernel__ret_relocation() failed). */
static const char *ret_why(const struct kinstr_kernel *k)
{
	unsigned long long to;

	return kinstr_kernel__ret_relocation(k, &to) == -EPERM ?
	       "a bare ret cannot move: the kernel's return thunk (ITS) depends on the return's address" :
	       "a bare ret cannot move without __x86_return_thunk";
}

/* Does jump probe p displace the instruction at addr, past its own? */
static bool covers_later(const struct pset_probe *p, uint64_t addr)
{
	return p->info.kind == KINSTR_PROBE_JUMP && addr >= p->info.addr + p->insn_len &&
	       addr < p->info.addr + p->info.displaced_len;
}

/* A jump probe as a trap probe on its own instruction (every jump site is a trap site first). */
static void demote_to_trap(struct pset_probe *p)
{
	p->info.kind = KINSTR_PROBE_TRAP;
	p->info.displaced_len = p->live_len = p->insn_len;
	/* a call it displaced came after its own instruction; a call of its own is 5 bytes, no jump's tail */
	if (p->call_off)
		p->is_call = false;
}

/* The last instruction that runs of those a probe at in displaces, up to end. */
static void last_displaced(const struct kinstr_cfg *cfg, const struct kinstr_cfg_insn *in, uint64_t end,
			   const struct kinstr_cfg_insn **last)
{
	const struct kinstr_cfg_insn *first = kinstr_cfg__insn(cfg, 0);
	size_t j = (size_t)(in - first), n = kinstr_cfg__insn_cnt(cfg);

	*last = in;
	for (; j < n && first[j].x.addr < end; j++)
		if (first[j].x.flow != KINSTR_X86_FLOW_INT3)	/* filler after a ret/jmp never runs */
			*last = &first[j];
}

/* Room for one more probe: 0, or -ENOMEM. */
static int grow(struct kinstr_probeset *ps)
{
	void *np;

	if (ps->n < ps->cap)
		return 0;
	np = realloc(ps->probes, (ps->cap = ps->cap ? ps->cap * 2 : 64) * sizeof(*ps->probes));
	if (!np)
		return -ENOMEM;
	ps->probes = np;
	return 0;
}

int kinstr_probeset__add(struct kinstr_probeset *ps, const struct kinstr_func *f, uint64_t addr,
			 struct kinstr_why *why)
{
	const struct kinstr_site *s;
	unsigned long long to;
	const struct kinstr_cfg_insn *in, *last;
	const struct kinstr_fn *fn;
	struct pset_probe *p;
	const unsigned char *text;
	char rule[256];
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->probes[i].info.addr == addr)
			return kinstr_why__fail(why, -EEXIST, "%s+0x%llx: already probed", f->name,
						(unsigned long long)(addr - f->addr));
	fn = kinstr_probeset__analysis(ps, f);
	if (!fn)
		return kinstr_why__fail(why, -errno, "%s: cannot analyse: %s", f->name, strerror(errno));
	s = kinstr_fn__site_at(fn, addr);
	if (!s) {
		const struct kinstr_cfg *cfg = kinstr_fn__cfg(fn);
		size_t n = kinstr_cfg__insn_cnt(cfg);

		for (i = 0; i < n && kinstr_cfg__insn(cfg, i)->x.addr + kinstr_cfg__insn(cfg, i)->x.len <= addr; i++)
			;
		if (i < n)
			return kinstr_why__fail(why, -EILSEQ,
						"%s+0x%llx: not an instruction boundary (instruction at +0x%llx, %u bytes)",
						f->name, (unsigned long long)(addr - f->addr),
						(unsigned long long)(kinstr_cfg__insn(cfg, i)->x.addr - f->addr),
						kinstr_cfg__insn(cfg, i)->x.len);
		return kinstr_why__fail(why, -EILSEQ, "%s+0x%llx: outside the function (%u bytes)", f->name,
					(unsigned long long)(addr - f->addr), f->size);
	}
	in = kinstr_cfg__insn(kinstr_fn__cfg(fn), s - kinstr_fn__site(fn, 0));
	if (s->cls == KINSTR_SITE_REFUSED) {
		int pid = kinstr_kernel__held_by(ps->k, f->addr, f->size);

		/* held: the process that holds it, as cover says (the view knows it, the site does not) */
		if (pid > 0 && (kinstr_kernel__reserved(ps->k, f->addr, f->size) & (1u << KINSTR_R_HELD)))
			return kinstr_why__fail(why, -EPERM, "%s+0x%llx: refused: held by another kinstr session (pid %d): "
						"its probe or its code cache is in the function", f->name,
						(unsigned long long)(addr - f->addr), pid);
		return kinstr_why__fail(why, -EPERM, "%s+0x%llx: refused: %s", f->name,
					(unsigned long long)(addr - f->addr), kinstr_site__why(s, rule, sizeof(rule)));
	}
	if (grow(ps))
		return kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
	p = &ps->probes[ps->n];
	memset(p, 0, sizeof(*p));
	p->info.addr = addr;
	p->info.func = f;
	p->info.kind = s->cls == KINSTR_SITE_JUMP ? KINSTR_PROBE_JUMP : KINSTR_PROBE_TRAP;
	p->info.displaced_len = s->cls == KINSTR_SITE_JUMP ? s->displaced_len : s->insn_len;
	p->live_len = s->cls == KINSTR_SITE_JUMP ? s->live_len : s->insn_len;
	p->insn_len = s->insn_len;
	last_displaced(kinstr_fn__cfg(fn), in, addr + p->info.displaced_len, &last);
	p->is_call = last->x.flow == KINSTR_X86_FLOW_CALL;
	p->call_off = (uint8_t)(last->x.addr - addr);
	p->call_target = last->x.target;
	p->is_ret = in->x.len == 1 && in->x.bytes[0] == 0xc3;
	if (p->is_ret && kinstr_kernel__ret_relocation(ps->k, &to))
		return kinstr_why__fail(why, -EPERM, "%s+0x%llx: %s", f->name, (unsigned long long)(addr - f->addr),
					ret_why(ps->k));
	text = kinstr_kernel__text(ps->k, addr, p->info.displaced_len);
	if (!text || p->info.displaced_len > KINSTR_MAX_DISPLACED)
		return kinstr_why__fail(why, -ERANGE, "%s+0x%llx: no live text", f->name,
					(unsigned long long)(addr - f->addr));
	memcpy(p->bytes, text, p->info.displaced_len);
	/*
	 * Two splices never share a byte: a jmp would cover the other's int3 or jmp. Where one
	 * probe's jmp would cover the instruction another probe wants (a call that --calls times,
	 * right after the return of the one before), the first becomes a trap on its own instruction.
	 */
	for (i = 0; i < ps->n; i++) {
		const struct kinstr_probe_info *o = &ps->probes[i].info;

		if (covers_later(&ps->probes[i], addr))
			demote_to_trap(&ps->probes[i]);
		else if (covers_later(p, o->addr))
			demote_to_trap(p);
		if (o->addr < addr + p->info.displaced_len && addr < o->addr + o->displaced_len) {
			char oname[160];

			snprintf(oname, sizeof(oname), "%s+0x%llx", o->func->name,
				 (unsigned long long)(o->addr - o->func->addr));
			return kinstr_why__fail(why, -EBUSY, "%s+0x%llx: overlaps the probe at %s (%s, %u bytes)", f->name,
						(unsigned long long)(addr - f->addr), oname,
						kinstr_probe_kind__str(o->kind), o->displaced_len);
		}
	}
	ps->n++;
	return 0;
}

const char *kinstr_probe_kind__str(unsigned int kind)
{
	return kind == KINSTR_PROBE_JUMP ? "jump" : kind == KINSTR_PROBE_TRAP ? "trap" :
	       kind == KINSTR_PROBE_FTRACE ? "ftrace" : "?";
}

int kinstr_probeset__add_ftrace(struct kinstr_probeset *ps, const struct kinstr_func *f,
				struct kinstr_why *why)
{
	const struct kinstr_fn *fn;
	struct pset_probe *p;
	const unsigned char *text;
	size_t i;

	unsigned long long nop = f->addr + f->endbr;

	for (i = 0; i < ps->n; i++)
		if (ps->probes[i].info.addr < nop + 5 && nop < ps->probes[i].info.addr +
		    ps->probes[i].info.displaced_len)
			return kinstr_why__fail(why, -EEXIST, "%s+0x%x: already probed", f->name, f->endbr);
	fn = kinstr_probeset__analysis(ps, f);
	if (!fn)
		return kinstr_why__fail(why, -errno, "%s: cannot analyse: %s", f->name, strerror(errno));
	if (!kinstr_site__ftrace_own(kinstr_fn__site_at(fn, nop), f))
		return kinstr_why__fail(why, -EPERM, "%s+0x%x: not an ftrace site that only ftrace reserves", f->name,
					f->endbr);
	text = kinstr_kernel__text(ps->k, nop, 5);
	if (!text)
		return kinstr_why__fail(why, -ERANGE, "%s+0x%x: no live text", f->name, f->endbr);
	if (grow(ps))
		return kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
	p = &ps->probes[ps->n++];
	memset(p, 0, sizeof(*p));
	p->info.addr = nop;
	p->info.func = f;
	p->info.kind = KINSTR_PROBE_FTRACE;
	p->info.displaced_len = 5;
	p->live_len = 0;
	memcpy(p->bytes, text, 5);
	return 0;
}

/* The slot body for probe p at body_addr: the displaced instructions, relocated. */
static int build_body(const struct kinstr_probeset *ps, const struct pset_probe *p, uint64_t body_addr,
		      struct kinstr_probe *req, struct kinstr_why *why)
{
	uint8_t out[KINSTR_RELOC_MAX_OUT];
	struct kinstr_reloc r;
	uint32_t len, tail;
	int ret;

	if (p->info.kind == KINSTR_PROBE_FTRACE) {	/* the module writes what the slot needs */
		req->body_len = 0;
		return 0;
	}
	if (p->is_ret && p->info.displaced_len == 1) {
		unsigned long long to;
		int32_t rel;

		kinstr_kernel__ret_relocation(ps->k, &to);	/* checked when the probe was added */
		if (!to) {
			req->body[0] = 0xc3;	/* the CPU needs no thunk: the kernel's returns are bare too */
			req->body_len = 1;
			return 0;
		}
		rel = (int32_t)(to - (body_addr + 5));
		req->body[0] = 0xe9;
		memcpy(req->body + 1, &rel, 4);
		req->body_len = 5;
		return 0;
	}
	/*
	 * Only what runs moves: int3 filler after a ret/jmp is overwritten and never reached. A
	 * direct call that ends the displaced bytes (a trap's own, or a jump's last) does not
	 * move: what runs before it does, and the call becomes push $return (sign-extended imm32:
	 * kernel text is in the top 2 GiB); jmp target, so that the callee returns to the original
	 * code after the patched bytes, never into the slot.
	 */
	len = p->is_call ? p->call_off : p->live_len;
	tail = p->is_call ? 10 : 0;
	r.out_len = 0;
	r.nr_insns = 0;
	if (len) {
		ret = kinstr_reloc__run(&r, p->bytes, len, p->info.addr, out, sizeof(out), body_addr);
		if (ret)
			return kinstr_why__fail(why, ret, "%s+0x%llx: cannot relocate: %s", p->info.func->name,
						(unsigned long long)(p->info.addr - p->info.func->addr), kinstr_reloc__why(&r));
	}
	/* a bare ret copied as is would bypass the return thunk: end with jmp to it instead */
	if (r.nr_insns && r.insns[r.nr_insns - 1].old_len == 1 &&
	    p->bytes[r.insns[r.nr_insns - 1].old_off] == 0xc3) {
		unsigned long long thunk;
		uint32_t at = r.insns[r.nr_insns - 1].new_off;
		int32_t rel;

		if (kinstr_kernel__ret_relocation(ps->k, &thunk))
			return kinstr_why__fail(why, -EPERM, "%s+0x%llx: %s", p->info.func->name,
						(unsigned long long)(p->info.addr - p->info.func->addr), ret_why(ps->k));
		if (thunk) {
			rel = (int32_t)(thunk - (body_addr + at + 5));
			out[at] = 0xe9;
			memcpy(out + at + 1, &rel, 4);
			r.out_len = at + 5;
		}
	}
	if (r.out_len + tail > KINSTR_SLOT_BODY_MAX)
		return kinstr_why__fail(why, -E2BIG, "%s+0x%llx: relocated code too long (%u bytes)", p->info.func->name,
					(unsigned long long)(p->info.addr - p->info.func->addr), r.out_len + tail);
	memcpy(req->body, out, r.out_len);
	req->body_len = r.out_len + tail;
	if (p->is_call) {
		int32_t ret_addr = (int32_t)(p->info.addr + p->info.displaced_len);
		int32_t rel = (int32_t)(p->call_target - (body_addr + r.out_len + 10));

		req->body[r.out_len] = 0x68;
		memcpy(req->body + r.out_len + 1, &ret_addr, 4);
		req->body[r.out_len + 5] = 0xe9;
		memcpy(req->body + r.out_len + 6, &rel, 4);
	}
	return 0;
}

int kinstr_probeset__body(const struct kinstr_probeset *ps, size_t i, uint64_t body_addr, uint8_t *buf,
			  size_t size, struct kinstr_why *why)
{
	struct kinstr_probe req;
	int ret;

	if (!ps || i >= ps->n || !buf)
		return kinstr_why__fail(why, -EINVAL, "no probe %zu", i);
	memset(&req, 0, sizeof(req));
	ret = build_body(ps, &ps->probes[i], body_addr, &req, why);
	if (ret)
		return ret;
	if (req.body_len > size)
		return kinstr_why__fail(why, -ENOSPC, "body of %u bytes, buffer of %zu", req.body_len, size);
	memcpy(buf, req.body, req.body_len);
	return req.body_len;
}

static const char *const refusals[KINSTR_REFUSE_NR] = {
	[KINSTR_REFUSE_NONE] = "no refusal",
	[KINSTR_REFUSE_RESERVED] = "reserved by the kernel",
	[KINSTR_REFUSE_NOT_BOUNDARY] = "not an instruction boundary",
	[KINSTR_REFUSE_BAD_LENGTH] = "the displaced length does not end on an instruction boundary",
	[KINSTR_REFUSE_BYTES_DIFFER] = "the live bytes differ from the analysed ones (patched by someone else?)",
	[KINSTR_REFUSE_BAD_RELOCATION] = "the relocated code does not match the kernel decoder's view",
	[KINSTR_REFUSE_BRANCH_TARGET] = "a branch target lies inside the displaced bytes",
	[KINSTR_REFUSE_INDIRECT_JMP] = "the function has an indirect jmp",
	[KINSTR_REFUSE_UNSAFE_INSN] = "an instruction that may not run out of line",
	[KINSTR_REFUSE_BUSY] = "the site is already probed",
	[KINSTR_REFUSE_BAD_REQUEST] = "malformed request",
	[KINSTR_REFUSE_LOCKDOWN] = "the kernel is locked down",
	[KINSTR_REFUSE_CROSSES_END] = "the displaced bytes run past the end of the function",
	[KINSTR_REFUSE_BAD_COPY] = "the code cache's copy does not do what the original does",
	[KINSTR_REFUSE_BPF_PROG] = "the BPF program may not run there",
};

const char *kinstr_refusal__str(unsigned int refusal)
{
	return refusal < KINSTR_REFUSE_NR && refusals[refusal] ? refusals[refusal] : "unknown refusal";
}

static int pset_install(struct kinstr_probeset *ps, bool verify_only, size_t *refused, struct kinstr_why *why)
{
	struct kinstr_alloc al = { .size = sizeof(al) };
	struct kinstr_install in = { .size = sizeof(in) };
	struct kinstr_remove rm = { .size = sizeof(rm) };
	struct kinstr_trace_spec *specs = NULL;
	struct kinstr_bpf_attach *bpf = NULL;
	struct kinstr_pred *preds = NULL;
	struct kinstr_probe *req;
	size_t i;
	int ret = 0;

	if (!ps->dev || !ps->n || ps->area)
		return kinstr_why__fail(why, -EINVAL, "%s", strerror(EINVAL));
	if (ps->n > KINSTR_AREA_MAX_PROBES)
		return kinstr_why__fail(why, -E2BIG, "%zu probes: at most %d in one batch", ps->n, KINSTR_AREA_MAX_PROBES);
	al.count = ps->n;
	if (kinstr_dev__ioctl(ps->dev, KINSTR_IOC_ALLOC, &al) < 0) {
		ret = -errno;
		return kinstr_why__fail(why, ret, "cannot reserve patch space for %zu probes: %s%s", ps->n, strerror(-ret),
					ret == -EPERM ? " (kernel lockdown?)" :
					ret == -EDQUOT ? " (this descriptor's probe limit: /sys/module/kinstr/parameters/max_probes_per_fd)" :
					ret == -ENOSPC ? " (the probe limit of all descriptors: /sys/module/kinstr/parameters/max_probes)" : "");
	}
	req = calloc(ps->n, sizeof(*req));
	if (!req) {
		ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		goto undo;
	}
	for (i = 0; i < ps->n; i++) {
		const struct pset_probe *p = &ps->probes[i];
		uint64_t body = al.addr + i * KINSTR_SLOT_SIZE + KINSTR_SLOT_BODY;

		req[i].site = p->info.addr;
		req[i].kind = p->info.kind;
		req[i].action = pset_action_of(p);
		req[i].arg = p->arg;
		if (req[i].action == KINSTR_ACTION_BPF) {
			if (!bpf)
				bpf = calloc(ps->n, sizeof(*bpf));
			if (!bpf) {
				ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
				goto undo;
			}
			bpf[i] = (struct kinstr_bpf_attach){ .prog_fd = p->bpf_fd, .cookie = p->bpf_cookie };
		}
		if (req[i].action == KINSTR_ACTION_TRACE || req[i].action == KINSTR_ACTION_TALLY ||
		    req[i].action == KINSTR_ACTION_SPAN) {
			if (!specs)
				specs = calloc(ps->n, sizeof(*specs));
			if (!specs) {
				ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
				goto undo;
			}
			specs[i] = p->spec;
			if (p->pred) {
				if (!kinstr_dev__has(ps->dev, KINSTR_FEAT_PRED)) {
					ret = kinstr_why__fail(why, -EOPNOTSUPP, "this kinstr.ko has no value predicates "
							       "(needs ABI 0.17): 'if' and --where need it");
					goto undo;
				}
				if (!preds)
					preds = calloc(ps->n, sizeof(*preds));
				if (!preds) {
					ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
					goto undo;
				}
				preds[i] = *p->pred;
				specs[i].flags |= KINSTR_TRACE_SPEC_F_PRED;
			}
		}
		req[i].displaced_len = p->info.displaced_len;
		memcpy(req[i].expected, p->bytes, p->info.displaced_len);
		ret = build_body(ps, p, body, &req[i], why);
		if (ret)
			goto undo;
	}
	in.area = al.area;
	in.count = ps->n;
	in.flags = verify_only ? KINSTR_INSTALL_F_VERIFY_ONLY : ps->async ? 0 : KINSTR_INSTALL_F_WAIT;
	in.specs = (uintptr_t)specs;
	in.bpf = (uintptr_t)bpf;
	in.preds = (uintptr_t)preds;
	in.probes = (uintptr_t)req;
	for (i = 0; i < ps->n; i++) {
		const struct pset_action *pa = &pset_actions[req[i].action];

		if (pa->feature && !kinstr_dev__has(ps->dev, pa->feature)) {
			ret = kinstr_why__fail(why, -EOPNOTSUPP, "%s", pa->missing);
			goto undo;
		}
	}
	if (kinstr_dev__ioctl(ps->dev, KINSTR_IOC_INSTALL, &in) < 0) {
		ret = -errno;
		if (in.refusal && in.refused_index < ps->n) {
			const struct pset_probe *p = &ps->probes[in.refused_index];

			if (refused)
				*refused = in.refused_index;
			char extra[256] = "";
			unsigned int b;

			if (in.refusal == KINSTR_REFUSE_RESERVED)
				for (b = 0; b < KINSTR_R_NR; b++)
					if (in.refusal_reasons & (1u << b))
						snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ": %s",
							 kinstr_site_reason__str(b));
			if (in.refusal == KINSTR_REFUSE_BPF_PROG)
				for (b = 0; b < KINSTR_BPF_R_NR; b++)
					if (in.refusal_reasons & (1u << b)) {
						char what[80];
						bool byfd = b == KINSTR_BPF_R_NOT_KPROBE || b == KINSTR_BPF_R_BAD_FD;

						snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ": %s%s%s%s",
							 kinstr_bpf_reason__str(b), byfd ? " (" : "",
							 byfd ? kinstr_bpf_fd__describe(p->bpf_fd, what, sizeof(what)) : "",
							 byfd ? ")" : "");
					}
			if (in.refusal == KINSTR_REFUSE_BRANCH_TARGET || in.refusal == KINSTR_REFUSE_BAD_RELOCATION)
				snprintf(extra, sizeof(extra), " (at 0x%llx)", (unsigned long long)in.refusal_addr);
			kinstr_why__fail(why, ret, "%s+0x%llx: the module refused: %s%s", p->info.func->name,
					 (unsigned long long)(p->info.addr - p->info.func->addr),
					 kinstr_refusal__str(in.refusal), extra);
		} else {
			kinstr_why__fail(why, ret, "installing %zu probes failed: %s%s", ps->n, strerror(-ret),
					 ret == -ENODEV ? " (trace and timer probes need a trace channel or timers)" : "");
		}
		goto undo;
	}
	if (verify_only)
		goto undo;	/* the area is still new: removing it frees it */
	free(req);
	free(specs);
	free(bpf);
	free(preds);
	ps->area = al.area;
	ps->area_addr = al.addr;
	{
		/* learn how each probe's slot runs its action */
		uint32_t *flags = calloc(ps->n, sizeof(*flags));
		uint64_t *counts = calloc(ps->n, sizeof(*counts));
		struct kinstr_counts c = { .size = sizeof(c), .area = ps->area, .count = ps->n,
					   .counts = (uintptr_t)counts, .flags = (uintptr_t)flags };

		if (flags && counts && kinstr_dev__ioctl(ps->dev, KINSTR_IOC_COUNTS, &c) == 0)
			for (i = 0; i < ps->n; i++) {
				ps->probes[i].info.inline_count = flags[i] & KINSTR_PROBE_F_INLINE;
				ps->probes[i].info.saves_flags = flags[i] & KINSTR_PROBE_F_SAVES_FLAGS;
			}
		free(flags);
		free(counts);
	}
	return 0;
undo:
	free(req);
	free(specs);
	free(bpf);
	free(preds);
	rm.area = al.area;
	kinstr_dev__ioctl(ps->dev, KINSTR_IOC_REMOVE, &rm);
	return ret;
}

int kinstr_probeset__install(struct kinstr_probeset *ps, struct kinstr_why *why)
{
	return pset_install(ps, false, NULL, why);
}

int kinstr_probeset__verify(struct kinstr_probeset *ps, size_t *refused, struct kinstr_why *why)
{
	return pset_install(ps, true, refused, why);
}

int kinstr_probeset__counts(struct kinstr_probeset *ps, uint64_t *counts)
{
	return kinstr_probeset__counts_missed(ps, counts, NULL);
}

int kinstr_probeset__counts_missed(struct kinstr_probeset *ps, uint64_t *counts, uint64_t *missed)
{
	struct kinstr_counts c = { .size = sizeof(c), .area = ps->area, .count = ps->n,
				   .counts = (uintptr_t)counts, .missed = (uintptr_t)missed };

	if (!ps->area)
		return -EINVAL;
	/* a module before ABI 0.5 knows no missed[]: it counts no recursion, so none */
	if (missed && !kinstr_dev__has(ps->dev, KINSTR_FEAT_MISSED)) {
		memset(missed, 0, ps->n * sizeof(*missed));
		c.size = KINSTR_COUNTS_SIZE_VER0;
		c.missed = 0;
	}
	return kinstr_dev__ioctl(ps->dev, KINSTR_IOC_COUNTS, &c);
}

int kinstr_probeset__set_tally(struct kinstr_probeset *ps, size_t i)
{
	if (i >= ps->n || ps->area || ps->probes[i].action != KINSTR_ACTION_TRACE)
		return -EINVAL;
	ps->probes[i].action = KINSTR_ACTION_TALLY;
	return 0;
}

int kinstr_probeset__set_span(struct kinstr_probeset *ps, size_t i, bool stop)
{
	if (i >= ps->n || ps->area || ps->probes[i].action != KINSTR_ACTION_TRACE)
		return -EINVAL;
	ps->probes[i].action = KINSTR_ACTION_SPAN;
	ps->probes[i].arg = stop;
	return 0;
}

int kinstr_probeset__set_trace(struct kinstr_probeset *ps, size_t i, const struct kinstr_trace_spec *spec)
{
	if (i >= ps->n || ps->area)
		return -EINVAL;
	if (ps->probes[i].action == KINSTR_ACTION_BPF || (!spec && ps->probes[i].action != KINSTR_ACTION_TRACE))
		return 0;	/* a BPF probe stays one; NULL undoes a trace only */
	ps->probes[i].action = spec ? KINSTR_ACTION_TRACE : KINSTR_ACTION_COUNT;
	ps->probes[i].arg = 0;
	if (!spec)
		ps->probes[i].pred = NULL;
	if (spec)
		ps->probes[i].spec = *spec;
	return 0;
}

int kinstr_probeset__set_pred(struct kinstr_probeset *ps, size_t i, const struct kinstr_pred *pred)
{
	if (i >= ps->n || ps->area || (pred && ps->probes[i].action != KINSTR_ACTION_TRACE))
		return -EINVAL;
	ps->probes[i].pred = pred;
	return 0;
}

int kinstr_probeset__filtered(struct kinstr_probeset *ps, uint64_t *filtered)
{
	uint64_t *counts;
	struct kinstr_counts c = { .size = sizeof(c), .area = ps->area, .count = ps->n, .filtered = (uintptr_t)filtered };
	int ret;

	memset(filtered, 0, ps->n * sizeof(*filtered));
	if (!ps->area)
		return -EINVAL;
	if (!kinstr_dev__has(ps->dev, KINSTR_FEAT_PRED))
		return 0;
	counts = calloc(ps->n, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	c.counts = (uintptr_t)counts;
	ret = kinstr_dev__ioctl(ps->dev, KINSTR_IOC_COUNTS, &c) < 0 ? -errno : 0;
	free(counts);
	return ret;
}

int kinstr_probeset__set_action(struct kinstr_probeset *ps, size_t i, unsigned int action)
{
	if (i >= ps->n || ps->area || action >= sizeof(pset_actions) / sizeof(pset_actions[0]) ||
	    !pset_actions[action].plain)
		return -EINVAL;
	ps->probes[i].action = (uint8_t)action;
	ps->probes[i].arg = 0;
	return 0;
}

int kinstr_probeset__set_bpf(struct kinstr_probeset *ps, size_t i, int prog_fd, uint64_t cookie)
{
	if (i >= ps->n || ps->area || prog_fd < 0)
		return -EINVAL;
	ps->probes[i].action = KINSTR_ACTION_BPF;
	ps->probes[i].arg = 0;
	ps->probes[i].bpf_fd = prog_fd;
	ps->probes[i].bpf_cookie = cookie;
	return 0;
}

int kinstr_probeset__attach_bpf(struct kinstr_probeset *ps, int prog_fd, uint64_t cookie)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < ps->n && !ret; i++)
		ret = kinstr_probeset__set_bpf(ps, i, prog_fd, cookie);
	return ret;
}

int kinstr_probeset__truncate(struct kinstr_probeset *ps, size_t n)
{
	if (ps->area || n > ps->n)
		return -EINVAL;
	ps->n = n;
	return 0;
}

int kinstr_probeset__set_timer(struct kinstr_probeset *ps, size_t i, bool start, uint32_t timer)
{
	if (i >= ps->n || ps->area)
		return -EINVAL;
	if (ps->probes[i].action == KINSTR_ACTION_BPF)
		return 0;	/* a BPF probe stays one */
	ps->probes[i].action = start ? KINSTR_ACTION_TIMER_START : KINSTR_ACTION_TIMER_STOP;
	ps->probes[i].arg = timer;
	return 0;
}

int kinstr_probeset__disarm(struct kinstr_probeset *ps, const uint32_t *idx, size_t n, size_t *disarmed)
{
	struct kinstr_disarm d = { .size = sizeof(d), .area = ps->area, .count = (uint32_t)n,
				   .indices = (uintptr_t)idx };

	if (!ps->area || !n || n > KINSTR_DISARM_MAX)
		return -EINVAL;
	if (kinstr_dev__ioctl(ps->dev, KINSTR_IOC_DISARM, &d) < 0)
		return -errno;
	if (disarmed)
		*disarmed = d.disarmed;
	return 0;
}

void kinstr_probeset__set_async(struct kinstr_probeset *ps, bool async)
{
	ps->async = async;
}

uint64_t kinstr_probeset__missed_total(struct kinstr_probeset *ps)
{
	size_t i, n = ps->n;
	uint64_t *c = calloc(n ? n : 1, sizeof(*c)), *m = calloc(n ? n : 1, sizeof(*m)), sum = 0;

	if (c && m && !kinstr_probeset__counts_missed(ps, c, m))
		for (i = 0; i < n; i++)
			sum += m[i];
	free(c);
	free(m);
	return sum;
}

uint64_t kinstr_probeset__filtered_total(struct kinstr_probeset *ps)
{
	size_t i, n = ps->n;
	uint64_t *f = calloc(n ? n : 1, sizeof(*f)), sum = 0;

	if (f && !kinstr_probeset__filtered(ps, f))
		for (i = 0; i < n; i++)
			sum += f[i];
	free(f);
	return sum;
}

int kinstr_probeset__remove(struct kinstr_probeset *ps)
{
	struct kinstr_remove rm = { .size = sizeof(rm), .area = ps->area };
	int ret;

	if (!ps->area)
		return 0;
	ret = kinstr_dev__ioctl(ps->dev, KINSTR_IOC_REMOVE, &rm);
	ps->area = 0;
	return ret;
}
