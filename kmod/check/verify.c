// SPDX-License-Identifier: GPL-2.0
/*
 * Verify a probe request with the kernel's own instruction decoder, independently of the user
 * space analysis that built it: instruction boundaries decoded from the symbol's start, the
 * displaced bytes equal to memory, no branch of the function into the displaced bytes, and a
 * relocated body that does what the displaced instructions did (same branch and RIP-relative
 * targets, everything else byte for byte). Each failure has its own refusal code.
 */
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <asm/insn.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"
#include "actions/actions.h"
#include "rules/out_of_line.h"
#include "rules/entry.h"
#include "rules/flags.h"
#include "rules/insn_len.h"

#define MAX_FUNC_SIZE (1U << 20)

static int decode(struct insn *insn, unsigned long addr)
{
	u8 buf[MAX_INSN_SIZE];

	if (copy_from_kernel_nofault(buf, (void *)addr, sizeof(buf)))
		return -EFAULT;
	/* decode a copy: insn_decode() reads through kaddr, which must stay valid */
	if (kinstr_kcall(insn_decode)(insn, buf, sizeof(buf), INSN_MODE_64) < 0 || !insn->length)
		return -EILSEQ;
	insn->kaddr = NULL;
	insn->next_byte = NULL;
	insn->end_kaddr = NULL;
	return 0;
}

/*
 * A function's bytes read a window at a time (one copy where decode() makes one per
 * instruction): scan_function() decodes every instruction of the function.
 */
struct text_window {
	unsigned long base;
	unsigned int len;
	u8 buf[256];
};

/* The window holding [addr, addr + MAX_INSN_SIZE), read anew where it does not; NULL: unmapped there. */
static const u8 *window_at(struct text_window *w, unsigned long addr)
{
	if (addr < w->base || addr + MAX_INSN_SIZE > w->base + w->len) {
		w->base = addr;
		w->len = copy_from_kernel_nofault(w->buf, (void *)addr, sizeof(w->buf)) ? 0 : sizeof(w->buf);
		if (!w->len)
			return NULL;
	}
	return w->buf + (addr - w->base);
}

static int decode_window(struct text_window *w, struct insn *insn, unsigned long addr)
{
	const u8 *b = window_at(w, addr);

	if (!b)		/* the window would cross the end of what is mapped: as decode() */
		return decode(insn, addr);
	if (kinstr_kcall(insn_decode)(insn, b, MAX_INSN_SIZE, INSN_MODE_64) < 0 || !insn->length)
		return -EILSEQ;
	insn->kaddr = NULL;	/* as decode(): nothing may read through the window later */
	insn->next_byte = NULL;
	insn->end_kaddr = NULL;
	return 0;
}

static int decode_buf(struct insn *insn, const u8 *buf, int len)
{
	if (len <= 0 || kinstr_kcall(insn_decode)(insn, buf, len, INSN_MODE_64) < 0 || !insn->length)
		return -EILSEQ;
	return 0;
}

enum branch_kind { BR_NONE, BR_JMP, BR_JCC, BR_CALL, BR_LOOP };

/* VEX, EVEX, XOP: the opcode byte is in a map the prefix names, never the legacy one's branches */
static bool vex_encoded(const struct insn *insn)
{
	return insn->vex_prefix.nbytes != 0;
}

/* Direct relative branches, and the condition code of a jcc. */
static enum branch_kind branch_of(const struct insn *insn, int *cc)
{
	u8 op0 = insn->opcode.bytes[0], op1 = insn->opcode.bytes[1];

	if (vex_encoded(insn))	/* c5 79 7f f2 is vmovdqa, not jg */
		return BR_NONE;
	if (insn->opcode.nbytes == 1) {
		if (op0 == 0xe8)
			return BR_CALL;
		if (op0 == 0xe9 || op0 == 0xeb)
			return BR_JMP;
		if (op0 >= 0x70 && op0 <= 0x7f) {
			*cc = op0 & 0xf;
			return BR_JCC;
		}
		if (op0 >= 0xe0 && op0 <= 0xe3)
			return BR_LOOP;
	} else if (insn->opcode.nbytes == 2 && op0 == 0x0f && op1 >= 0x80 && op1 <= 0x8f) {
		*cc = op1 & 0xf;
		return BR_JCC;
	}
	return BR_NONE;
}

static unsigned long branch_target(const struct insn *insn, unsigned long addr)
{
	return addr + insn->length + (long)insn->immediate.value;
}

static bool rip_relative(const struct insn *insn)
{
	return insn->modrm.nbytes && X86_MODRM_MOD(insn->modrm.bytes[0]) == 0 &&
	       X86_MODRM_RM(insn->modrm.bytes[0]) == 5;
}

static bool indirect_jmp(const struct insn *insn)
{
	return !vex_encoded(insn) && insn->opcode.bytes[0] == 0xff && insn->modrm.nbytes &&
	       (X86_MODRM_REG(insn->modrm.bytes[0]) == 4 || X86_MODRM_REG(insn->modrm.bytes[0]) == 5);
}

static bool indirect_call(const struct insn *insn)
{
	return !vex_encoded(insn) && insn->opcode.bytes[0] == 0xff && insn->modrm.nbytes &&
	       (X86_MODRM_REG(insn->modrm.bytes[0]) == 2 || X86_MODRM_REG(insn->modrm.bytes[0]) == 3);
}

/*
 * Instructions that must never run out of line (they trap, change IF or privilege, leave, or touch
 * system state): the rule user space applies too (rules/out_of_line.h), on the decoded bytes.
 */
static bool unsafe_insn(const struct insn *insn, unsigned long addr)
{
	u8 b[MAX_INSN_SIZE];

	if (insn->length > sizeof(b) || copy_from_kernel_nofault(b, (void *)addr, insn->length))
		return true;
	return kinstr_ool_check(b, insn->length) != KINSTR_OOL_OK;
}

/*
 * Does this instruction overwrite all six status flags without reading any (add, or, and, sub,
 * xor, cmp, test)? Then the flags are dead just before it, and a probe placed there may clobber
 * them: the rule lib/cache/place.c applies too (rules/flags.h), on the decoded bytes.
 */
static bool kills_flags(const struct insn *insn, unsigned long addr)
{
	u8 b[MAX_INSN_SIZE];

	return insn->length <= sizeof(b) && !copy_from_kernel_nofault(b, (void *)addr, insn->length) &&
	       kinstr_flags_killed(b, insn->length);
}

static bool function_of(unsigned long site, unsigned long *start, unsigned long *size);
static unsigned long fentry_of(unsigned long start);

/*
 * Are the flags dead at site by the C calling convention? No flags pass into or out of a C
 * function, so at its first instruction after the ftrace NOP, and at a return, whatever runs
 * next writes the flags before it reads them. The ftrace NOP at the symbol's start is what
 * shows the function is compiled C (assembly may take or return flags: cmpxchg emulations do).
 */
static bool dead_by_abi(unsigned long site, unsigned long start, const struct insn *insn)
{
	unsigned long nop = fentry_of(start);

	if (!kinstr_khas(ftrace_text_reserved) || !kinstr_kcall(ftrace_text_reserved)((void *)nop, (void *)nop))
		return false;
	if (site == nop || site == nop + 5)	/* an ftrace probe's site, or the one after the NOP */
		return true;
	return (insn->length == 1 && insn->opcode.bytes[0] == 0xc3) ||
	       (insn->opcode.bytes[0] == 0xe9 && kinstr_ksyms.return_thunk &&
		branch_target(insn, site) == kinstr_ksyms.return_thunk);
}

bool kinstr_flags_dead_by_abi(unsigned long site)
{
	unsigned long start, size;
	struct insn insn;

	return kinstr_khas(ftrace_text_reserved) && function_of(site, &start, &size) && !decode(&insn, site) &&
	       dead_by_abi(site, start, &insn);
}

/* Where a function's fentry NOP would be: after its ENDBR, if it has one (rules/entry.h). */
static unsigned long fentry_of(unsigned long start)
{
	u8 b[KINSTR_ENDBR_LEN];

	if (copy_from_kernel_nofault(b, (void *)start, sizeof(b)))
		return start;
	return start + kinstr_entry_endbr_len(b);
}

static void refuse(struct kinstr_verdict *v, u32 why, unsigned long addr)
{
	v->refusal = why;
	v->addr = addr;
}

/* The function containing site, from kallsyms: [start, start + size). */
static bool function_of(unsigned long site, unsigned long *start, unsigned long *size)
{
	unsigned long off;

	if (!kinstr_khas(kallsyms_lookup_size_offset) ||
	    !kinstr_kcall(kallsyms_lookup_size_offset)(site, size, &off))
		return false;
	*start = site - off;
	return *size && *size <= MAX_FUNC_SIZE;
}

/* What one decoding pass over a function, from its symbol's start, shows a probe at site. */
struct fn_scan {
	unsigned long bad_at;		/* the site is no boundary: the instruction at start + bad_at */
	u8 bad_len;			/* ... of this length covers it (0: it did not decode) */
	bool not_boundary;
	bool sets_df;			/* the function sets the direction flag */
	bool indirect_jmp;		/* ... has an indirect jmp (a jump table may aim anywhere) */
	bool target_in;			/* a direct branch aims into (site, site + len) */
	unsigned long target;
};

/* One instruction as the pass over a function needs it. */
struct scan_step {
	unsigned int len;
	enum kinstr_lite_kind kind;	/* OTHER for anything but a direct branch, std, an indirect jmp */
	unsigned long target;		/* a direct branch's */
};

/* A full decoding, as the scan reads it. */
static void step_of_insn(const struct insn *insn, unsigned long a, struct scan_step *s)
{
	int cc;

	s->len = insn->length;
	s->target = 0;
	switch (branch_of(insn, &cc)) {
	case BR_JMP:
		s->kind = KINSTR_LITE_JMP;
		break;
	case BR_JCC:
		s->kind = KINSTR_LITE_JCC;
		break;
	case BR_CALL:
		s->kind = KINSTR_LITE_CALL;
		break;
	case BR_LOOP:
		s->kind = KINSTR_LITE_LOOP;
		break;
	default:
		s->kind = insn->opcode.nbytes == 1 && insn->opcode.bytes[0] == 0xfd ? KINSTR_LITE_STD :
			  indirect_jmp(insn) ? KINSTR_LITE_IJMP : KINSTR_LITE_OTHER;
		return;
	}
	s->target = branch_target(insn, a);
}

/*
 * The instruction at a: the table-driven reading of rules/insn_len.h where it answers (nearly all
 * kernel code), else the kernel's insn_decode(), which also decides where the code ends.
 */
static int scan_step(struct text_window *w, unsigned long a, struct scan_step *s)
{
	const u8 *b = window_at(w, a);
	struct kinstr_lite l;
	struct insn insn;

	if (b && kinstr_lite_decode(b, MAX_INSN_SIZE, &l)) {
		s->len = l.len;
		s->kind = l.kind;
		s->target = l.rel_len ? kinstr_lite_target(b, &l, a) : 0;
		return 0;
	}
	if (decode_window(w, &insn, a))
		return -EILSEQ;
	step_of_insn(&insn, a, s);
	return 0;
}

/*
 * One pass up to the end of the code (the first bytes that do not decode: padding or data):
 * boundaries up to the site, and every direct branch, `std` and indirect jmp of the function.
 */
static void scan_function(unsigned long start, unsigned long size, unsigned long site, unsigned int len,
			  struct fn_scan *f)
{
	unsigned long a = start, hi = site + len;
	struct text_window w = { .len = 0 };
	struct scan_step s;

	memset(f, 0, sizeof(*f));
	while (a < start + size) {
		if (scan_step(&w, a, &s)) {
			if (a < site) {
				f->not_boundary = true;
				f->bad_at = a - start;
			}
			return;
		}
		if (a < site && a + s.len > site) {
			f->not_boundary = true;
			f->bad_at = a - start;
			f->bad_len = s.len;
		}
		if (s.kind == KINSTR_LITE_STD)
			f->sets_df = true;
		else if (s.kind == KINSTR_LITE_IJMP)
			f->indirect_jmp = true;
		else if (s.kind != KINSTR_LITE_OTHER && !f->target_in && s.target > site && s.target < hi) {
			f->target_in = true;
			f->target = s.target;
		}
		a += s.len;
	}
}

/*
 * The decoder self-test (decoder_selftest=1 at load, tests/vm/decoder.t): every function of the
 * core text walked as scan_function() walks it, each instruction read both ways; wherever
 * rules/insn_len.h answers, its length, kind and target must be insn_decode()'s, and where
 * insn_decode() refuses the bytes (the end of the code, for the scan) it must not answer.
 */
void kinstr_decoder_selftest(void)
{
	unsigned long a = kinstr_ksyms.text.start, fns = 0, insns = 0, fast = 0, differ = 0;
	struct text_window w = { .len = 0 };

	if (!kinstr_khas(insn_decode) || !kinstr_khas(kallsyms_lookup_size_offset)) {
		pr_info(KINSTR_PR_PREFIX "decoder self-test: cannot run (no insn_decode or kallsyms)\n");
		return;
	}
	while (a < kinstr_ksyms.text.end) {
		unsigned long size, off, start, end, p;

		if (!kinstr_kcall(kallsyms_lookup_size_offset)(a, &size, &off) || !size) {
			a++;
			continue;
		}
		start = a - off;
		end = start + size;
		fns++;
		for (p = start; p < end;) {
			struct scan_step s;
			struct kinstr_lite l;
			struct insn insn;
			const u8 *b;

			if (decode_window(&w, &insn, p)) {
				/* where scan_function() stops too: the fast decoder must not read on */
				b = window_at(&w, p);
				if (b && kinstr_lite_decode(b, MAX_INSN_SIZE, &l) && differ++ < 10)
					pr_info(KINSTR_PR_PREFIX "decoder self-test: %pS: %*ph: fast %u, insn_decode "
						"refuses it\n", (void *)p, (int)l.len, b, l.len);
				break;
			}
			step_of_insn(&insn, p, &s);
			insns++;
			b = window_at(&w, p);
			if (b && kinstr_lite_decode(b, MAX_INSN_SIZE, &l)) {
				unsigned long t = l.rel_len ? kinstr_lite_target(b, &l, p) : 0;

				fast++;
				if (l.len != s.len || l.kind != s.kind || t != s.target) {
					if (differ++ < 10)
						pr_info(KINSTR_PR_PREFIX "decoder self-test: %pS: %*ph: fast %u/%u, "
							"insn_decode %u/%u\n", (void *)p, (int)s.len, b, l.len, l.kind,
							s.len, s.kind);
				}
			}
			p += s.len;
		}
		a = end > a ? end : a + 1;
		if (!(fns & 1023))
			cond_resched();
	}
	pr_info(KINSTR_PR_PREFIX "decoder self-test: %lu functions, %lu instructions, %lu read by the fast "
		"decoder, %lu differ\n", fns, insns, fast, differ);
}

/* Is a jump label or an extable fixup of the core or of the range's module aimed into (lo, hi)? */
static bool table_target_inside(unsigned long lo, unsigned long hi, unsigned long *target)
{
	return kinstr_ksyms_table_target_in(lo, hi, target) || kinstr_module_target_in(lo, hi, target);
}

/* Does control never reach the byte after this instruction from it (a bare ret, a direct jmp)? */
static bool ends_code(const struct insn *insn)
{
	return (insn->length == 1 && insn->opcode.bytes[0] == 0xc3) ||
	       branch_of(insn, &(int){0}) == BR_JMP;
}

static bool filler(const struct insn *insn)
{
	return insn->length == 1 && insn->opcode.bytes[0] == 0xcc;
}

/*
 * Does body (relocated to run at body_addr) do what the displaced instructions up to live_end did?
 * Displaced bytes from live_end on are int3 filler after a ret or jmp: never run, not relocated.
 * A direct call (a trap probe's one, a jump probe's last) is relocated as `push $return; jmp
 * target`, so that the callee returns to the original code and never into the slot.
 */
static bool relocation_ok(const struct kinstr_probe *p, unsigned long live_end, unsigned long body_addr,
			  unsigned long *bad)
{
	unsigned long a = p->site, b = body_addr;
	const u8 *body = p->body;
	int left = p->body_len;

	while (a < live_end) {
		struct insn o, r;
		enum branch_kind ko, kr;
		int cco = -1, ccr = -1;

		*bad = a;
		if (decode(&o, a) || decode_buf(&r, body, left))
			return false;
		ko = branch_of(&o, &cco);
		if (ko == BR_LOOP)
			return false;	/* expansions are not verified yet: refuse */
		if (o.opcode.bytes[0] == 0xc3 && o.length == 1) {
			/*
			 * a bare ret moves as the kernel's patch_return() would write it there: `jmp`
			 * to the thunk it chose, or a bare ret where the CPU needs none
			 */
			if (kinstr_ksyms.return_thunk_its)
				return false;
			if (!kinstr_ksyms.return_thunk ? r.length != 1 || r.opcode.bytes[0] != 0xc3 :
			    r.opcode.bytes[0] != 0xe9 || branch_target(&r, b) != kinstr_ksyms.return_thunk)
				return false;
		} else if (ko == BR_CALL) {
			struct insn j;

			/*
			 * 68 imm32 = push sign-extended return address, then jmp rel32 target; the
			 * call is the last displaced instruction (checked above), so the return
			 * address is the end of the patched bytes
			 */
			if (a + o.length != p->site + p->displaced_len || r.opcode.bytes[0] != 0x68 ||
			    r.length != 5 || (unsigned long)(long)r.immediate.value != a + o.length)
				return false;
			if (decode_buf(&j, body + 5, left - 5) || j.opcode.bytes[0] != 0xe9 ||
			    branch_target(&j, b + 5) != branch_target(&o, a))
				return false;
			r.length += j.length;
		} else if (ko != BR_NONE) {
			kr = branch_of(&r, &ccr);
			if (kr != ko || cco != ccr || branch_target(&r, b) != branch_target(&o, a))
				return false;
		} else if (rip_relative(&o)) {
			int off = insn_offset_displacement(&o);
			u8 ob[MAX_INSN_SIZE];

			if (!rip_relative(&r) || r.length != o.length ||
			    insn_offset_displacement(&r) != off ||
			    copy_from_kernel_nofault(ob, (void *)a, o.length) ||
			    memcmp(ob, body, off) || memcmp(ob + off + 4, body + off + 4, o.length - off - 4) ||
			    b + r.length + (long)r.displacement.value != a + o.length + (long)o.displacement.value)
				return false;
		} else {
			u8 ob[MAX_INSN_SIZE];

			if (r.length != o.length || copy_from_kernel_nofault(ob, (void *)a, o.length) ||
			    memcmp(ob, body, o.length))
				return false;
		}
		a += o.length;
		b += r.length;
		body += r.length;
		left -= r.length;
	}
	return left == 0;
}

/* The decoder's helpers for the code cache's check (cache.c): the same rules, one source. */
int kinstr_decode_live(struct insn *insn, unsigned long addr)
{
	return decode(insn, addr);
}

int kinstr_decode_bytes(struct insn *insn, const u8 *buf, int len)
{
	return decode_buf(insn, buf, len);
}

int kinstr_branch_of(const struct insn *insn, int *cc)
{
	return branch_of(insn, cc);
}

unsigned long kinstr_branch_target(const struct insn *insn, unsigned long addr)
{
	return branch_target(insn, addr);
}

bool kinstr_rip_relative(const struct insn *insn)
{
	return rip_relative(insn);
}

bool kinstr_indirect_branch(const struct insn *insn)
{
	return indirect_jmp(insn) || indirect_call(insn);
}

bool kinstr_function_of(unsigned long site, unsigned long *start, unsigned long *size)
{
	return function_of(site, start, size);
}

unsigned long kinstr_fentry_of(unsigned long start)
{
	return fentry_of(start);
}

/*
 * Does the action (ops, NULL: none) take a probe of this kind, with this arg? arg means something
 * to some actions only (the timers: which timer; a cache's entry: where in it).
 */
static bool action_ok(const struct kinstr_probe *p, const struct kinstr_action_ops *ops)
{
	return ops && (ops->kinds & (1U << p->kind)) && (!p->arg || ops->arg);
}

/*
 * An ftrace direct-call probe: at a function's first byte, which must be an ftrace site and
 * reserved for nothing else. ftrace patches the text; there is nothing to relocate.
 */
static int verify_ftrace_probe(const struct kinstr_probe *p, const struct kinstr_action_ops *ops,
			       struct kinstr_verdict *v)
{
	unsigned long start, size;
	u32 r;

	if (!action_ok(p, ops) || p->displaced_len != 5 || p->body_len) {
		refuse(v, KINSTR_REFUSE_BAD_REQUEST, p->site);
		return -EINVAL;
	}
	r = kinstr_policy_check(p->site, 5) & ~(1U << KINSTR_R_FTRACE);
	if (r) {
		refuse(v, KINSTR_REFUSE_RESERVED, p->site);
		v->reasons = r;
		return r & (1U << KINSTR_R_NOT_TEXT) ? -EFAULT : -EPERM;
	}
	if (!function_of(p->site, &start, &size) || fentry_of(start) != p->site) {
		refuse(v, KINSTR_REFUSE_NOT_BOUNDARY, p->site);
		return -EILSEQ;
	}
	if (!kinstr_khas(ftrace_text_reserved) ||
	    !kinstr_kcall(ftrace_text_reserved)((void *)p->site, (void *)p->site)) {
		refuse(v, KINSTR_REFUSE_BAD_REQUEST, p->site);	/* no ftrace site there */
		return -EINVAL;
	}
	v->flags_dead = true;	/* the ftrace NOP of compiled C (kinstr_flags_dead_by_abi) */
	return 0;
}

/*
 * Check one request, whose action's entry is ops (NULL: no such action); body_addr is where its
 * body will run. Fills v and returns 0 or -errno.
 */
int kinstr_verify_probe(const struct kinstr_probe *p, const struct kinstr_action_ops *ops, unsigned long body_addr,
			struct kinstr_verdict *v)
{
	unsigned long start, size, a, t = 0, live_end = 0, exit_end = 0;
	u8 live[KINSTR_MAX_DISPLACED];
	struct fn_scan fs;
	struct insn insn;
	bool enter;
	u32 r;

	memset(v, 0, sizeof(*v));
	if (p->kind == KINSTR_PROBE_FTRACE)
		return verify_ftrace_probe(p, ops, v);
	enter = ops && ops->enters_cache;
	if ((p->kind != KINSTR_PROBE_JUMP && p->kind != KINSTR_PROBE_TRAP) ||
	    !action_ok(p, ops) || !p->displaced_len ||
	    p->displaced_len > KINSTR_MAX_DISPLACED || p->body_len > KINSTR_SLOT_BODY_MAX || (enter && p->body_len) ||
	    (p->kind == KINSTR_PROBE_JUMP && p->displaced_len < 5)) {
		refuse(v, KINSTR_REFUSE_BAD_REQUEST, p->site);
		return -EINVAL;
	}
	r = kinstr_policy_check(p->site, p->displaced_len);
	if (r) {
		refuse(v, KINSTR_REFUSE_RESERVED, p->site);
		v->reasons = r;
		return r & (1U << KINSTR_R_NOT_TEXT) ? -EFAULT : -EPERM;
	}
	if (!kinstr_khas(insn_decode) || !function_of(p->site, &start, &size)) {
		refuse(v, KINSTR_REFUSE_RESERVED, p->site);
		v->reasons = 1U << KINSTR_R_UNVERIFIABLE;
		return -EPERM;
	}
	/* boundaries, decoded from the symbol's start, in the one pass over the function */
	scan_function(start, size, p->site, p->displaced_len, &fs);
	if (fs.not_boundary) {
		refuse(v, KINSTR_REFUSE_NOT_BOUNDARY, p->site);
		v->offset = fs.bad_at;
		v->insn_len = fs.bad_len;
		return -EILSEQ;
	}
	a = p->site;
	if (p->site + p->displaced_len > start + size) {
		refuse(v, KINSTR_REFUSE_CROSSES_END, p->site);
		v->offset = size;
		return -EXDEV;
	}
	for (; a < p->site + p->displaced_len; a += insn.length) {
		if (decode(&insn, a)) {
			refuse(v, KINSTR_REFUSE_BAD_LENGTH, a);
			return -EILSEQ;
		}
		/* what the slot's prologue needs (slot.c), from this decoding and lookup, not new ones */
		if (a == p->site)
			v->flags_dead = kills_flags(&insn, a) || dead_by_abi(a, start, &insn);
		/*
		 * After a ret or jmp, a jump probe may cover int3 filler (a return thunk's jmp turned
		 * into `ret; int3 x4` at boot): never run, so overwritten, not relocated. No branch
		 * may land in it (scan_function, table_target_inside), and nothing else may follow it.
		 */
		/*
		 * An entry point of a code cache displaces instructions that never run here again:
		 * the copy runs them (cache.c proves it), so they need not run out of line.
		 */
		if (enter)
			continue;
		if (filler(&insn) && (live_end || (p->kind == KINSTR_PROBE_JUMP && exit_end == a))) {
			if (!live_end)
				live_end = a;
			continue;
		}
		if (live_end) {
			refuse(v, KINSTR_REFUSE_UNSAFE_INSN, a);
			return -EPERM;
		}
		if (ends_code(&insn))
			exit_end = a + insn.length;
		/* a jump's direct call must be its last: the pushed return address is after the jmp */
		if (unsafe_insn(&insn, a) || indirect_call(&insn) ||
		    (p->kind == KINSTR_PROBE_JUMP && branch_of(&insn, &(int){0}) == BR_CALL &&
		     a + insn.length != p->site + p->displaced_len)) {
			refuse(v, KINSTR_REFUSE_UNSAFE_INSN, a);
			return -EPERM;
		}
	}
	if (a != p->site + p->displaced_len || (p->kind == KINSTR_PROBE_TRAP && a != p->site + insn.length)) {
		refuse(v, KINSTR_REFUSE_BAD_LENGTH, p->site);
		return -EILSEQ;
	}
	if (fs.sets_df && !enter) {
		refuse(v, KINSTR_REFUSE_UNSAFE_INSN, p->site);
		return -EPERM;
	}
	if (copy_from_kernel_nofault(live, (void *)p->site, p->displaced_len) ||
	    memcmp(live, p->expected, p->displaced_len)) {
		refuse(v, KINSTR_REFUSE_BYTES_DIFFER, p->site);
		return -ESTALE;
	}
	/*
	 * Once a code cache's entry points are in, the original runs only from them (cache.c: every
	 * way back from the copy lands on one), so the function's own branches may aim inside one;
	 * the kernel's tables aim from anywhere.
	 */
	if (enter && p->kind == KINSTR_PROBE_JUMP &&
	    table_target_inside(p->site, p->site + p->displaced_len, &fs.target)) {
		refuse(v, KINSTR_REFUSE_BRANCH_TARGET, fs.target);
		v->offset = fs.target - start;
		return -EXDEV;
	}
	if (enter)
		return 0;
	if (p->kind == KINSTR_PROBE_JUMP) {
		if (fs.target_in || table_target_inside(p->site, p->site + p->displaced_len, &fs.target)) {
			refuse(v, KINSTR_REFUSE_BRANCH_TARGET, fs.target);
			v->offset = fs.target - start;
			return -EXDEV;
		}
		if (fs.indirect_jmp) {
			refuse(v, KINSTR_REFUSE_INDIRECT_JMP, p->site);
			return -EXDEV;
		}
	}
	if (!relocation_ok(p, live_end ? live_end : p->site + p->displaced_len, body_addr, &t)) {
		refuse(v, KINSTR_REFUSE_BAD_RELOCATION, t);
		return -ENOEXEC;
	}
	return 0;
}
