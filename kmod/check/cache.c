// SPDX-License-Identifier: GPL-2.0
/*
 * The code cache's check (docs/design.md, "The code cache"): before anything enters a copy, prove
 * with the kernel's decoder and its own reading of the kernel's tables that the copy does what
 * the original does, plus counters, and that control never comes back to the original where the
 * area's splices cover it. User space built the copy; nothing of its analysis is trusted.
 *
 * The map says, per original instruction, where its counterpart is and in which form; each rule
 * below is one predicate, and a broken one names itself (enum kinstr_cache_rule), the original
 * instruction and the offset in the cache.
 */
#include <linux/bitmap.h>
#include <linux/kallsyms.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/insn.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"
#include "actions/actions.h"
#include "check/cache.h"
#include "check/cache_timer.h"
#include "rules/flags.h"
#include "rules/out_of_line.h"

#define COUNTER_LEN 16		/* push %rax; movabs $c, %rax; incq %gs:(%rax); pop %rax */
#define R(x) (1U << KINSTR_R_##x)
/* Reservations a form answers for; any other refuses the instruction (the kernel rewrites it). */
#define FORM_REASONS (R(EXTABLE) | R(BUG) | R(JUMP_LABEL) | R(STATIC_CALL))

struct cc {
	const struct kinstr_cache_check *c;
	struct kinstr_verdict *v;
	u32 *at;
	unsigned long *used;		/* counters seen */
	unsigned long *enter;		/* per map entry: an entry or re-entry point is spliced there */
	/* the function being checked: its symbol, its map run [f0, f1), its code [lo, hi) */
	unsigned long fstart, fsize, lo, hi;
	u32 f0, f1;
	bool compiled_c;		/* an ftrace NOP at its entry: the C calling convention holds */
	bool timed;			/* its first entry starts timer `timer` (KINSTR_CACHE_M_TIMER) */
	u32 timer;
};

/* The core's table, or that of the module holding a (pinned by the area's probes in its text). */
static struct kinstr_span table_for(unsigned long a, enum kinstr_patch_sites which)
{
	struct kinstr_span t;

	if (kinstr_span_has(&kinstr_ksyms.text, a, 1))
		return which == KINSTR_SITES_JUMP_LABEL ? kinstr_ksyms.jump_table : kinstr_ksyms.static_call_sites;
	kinstr_module_table_of(a, which, &t);
	return t;
}

static int jump_entry(unsigned long code, unsigned long *key, bool *branch, unsigned long *target)
{
	struct kinstr_span t = table_for(code, KINSTR_SITES_JUMP_LABEL);

	return kinstr_jump_entry_in(&t, code, key, branch, target);
}

static int static_call_site(unsigned long addr, unsigned long *key, bool *tail)
{
	struct kinstr_span t = table_for(addr, KINSTR_SITES_STATIC_CALL);

	return kinstr_static_call_site_in(&t, addr, key, tail);
}

static int bad(struct cc *x, u32 rule, u32 i, unsigned long addr)
{
	*x->v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_COPY, .reasons = rule, .addr = addr,
					 .offset = i < x->c->nmap ? x->c->map[i].copy : 0 };
	*x->at = i;
	return -ENOEXEC;
}

static unsigned int counter_len(const struct kinstr_cache_map *m)
{
	return m->flags & KINSTR_CACHE_M_COUNTED ? COUNTER_LEN + 2 * !!(m->flags & KINSTR_CACHE_M_PUSHF) : 0;
}

/* The edge counter before everything of the entry: its length. */
static unsigned int edge_in_len(const struct kinstr_cache_map *m)
{
	return m->flags & KINSTR_CACHE_M_EDGE_IN ? COUNTER_LEN + 2 * !!(m->flags & KINSTR_CACHE_M_EDGE_IN_PUSHF) : 0;
}

/* Where control entering entry j's instruction may land: its counterpart, its counter, its edge counter. */
static bool lands_on(const struct kinstr_cache_check *c, u32 j, u64 off)
{
	const struct kinstr_cache_map *m = &c->map[j];

	return off == m->copy || off == m->copy - counter_len(m) || off == m->copy - counter_len(m) - edge_in_len(m);
}

static s32 get32(const u8 *p)
{
	s32 v;

	memcpy(&v, p, 4);
	return v;
}

/* The map entry of the instruction at addr, or -1 (the map is sorted by address). */
static long find_map(const struct kinstr_cache_check *c, unsigned long addr)
{
	u32 l = 0, h = c->nmap;

	while (l < h) {
		u32 m = l + (h - l) / 2;

		if (c->map[m].addr < addr)
			l = m + 1;
		else
			h = m;
	}
	return l < c->nmap && c->map[l].addr == addr ? l : -1;
}

/* Is addr inside some function's copied code (the entry before it: its run's code reaches addr)? */
static bool in_copied(const struct kinstr_cache_check *c, unsigned long addr, long *j)
{
	u32 l = 0, h = c->nmap;

	while (l < h) {		/* the last entry at or below addr */
		u32 m = l + (h - l) / 2;

		if (c->map[m].addr <= addr)
			l = m + 1;
		else
			h = m;
	}
	if (!l)
		return false;
	*j = l - 1;
	/* inside an instruction, or exactly at one: runs are contiguous, so the entry decides */
	return addr < c->map[l - 1].addr + c->map[l - 1].len || c->map[l - 1].addr == addr;
}

/*
 * A branch of the copy of the current function: aimed at copy_t where the original's goes to t.
 * Inside the function's code: the counterpart of the instruction there (or its counter). Inside
 * another copied function: the original, where an entry point or a native instruction must be.
 * Elsewhere: the original.
 */
static bool target_ok(struct cc *x, unsigned long copy_t, unsigned long t)
{
	const struct kinstr_cache_check *c = x->c;
	long j;

	if (!in_copied(c, t, &j))
		return copy_t == t;
	if (c->map[j].addr != t)
		return false;	/* into an instruction */
	if (t >= x->lo && t < x->hi)
		return copy_t >= c->base && lands_on(c, j, copy_t - c->base);
	return copy_t == t && (test_bit(j, x->enter) || c->map[j].form == KINSTR_CACHE_FORM_NATIVE);
}

/* Control passes from the original's instruction back to t: an entry point, a native one, or outside. */
static bool exit_ok(struct cc *x, unsigned long t)
{
	const struct kinstr_cache_check *c = x->c;
	long j;

	if (!in_copied(c, t, &j))
		return true;
	return c->map[j].addr == t && (test_bit(j, x->enter) || c->map[j].form == KINSTR_CACHE_FORM_NATIVE);
}

/*
 * A counter of entry i at b: the exact sequence on counter idx, one of the area's never used
 * before; without pushfq the flags must be dead just before the instruction (the counter
 * clobbers them; counters between it and the instruction read none).
 */
static int check_counter_at(struct cc *x, u32 i, const u8 *b, u32 idx, bool pushf, const u8 *ob, unsigned int olen)
{
	const struct kinstr_cache_check *c = x->c;
	const struct kinstr_cache_map *m = &c->map[i];
	u64 want, got;

	if (idx >= c->ncounters || test_and_set_bit(idx, x->used))
		return bad(x, KINSTR_CACHE_RULE_COUNTER, i, m->addr);
	want = c->chunks[idx / KINSTR_CACHE_CHUNK] + 8ull * (idx % KINSTR_CACHE_CHUNK);
	if (pushf && (b[0] != 0x9c || b[COUNTER_LEN + 1] != 0x9d))
		return bad(x, KINSTR_CACHE_RULE_COUNTER, i, m->addr);
	b += pushf;
	memcpy(&got, b + 3, 8);
	if (b[0] != 0x50 || b[1] != 0x48 || b[2] != 0xb8 || got != want || memcmp(b + 11, "\x65\x48\xff\x00\x58", 5))
		return bad(x, KINSTR_CACHE_RULE_COUNTER, i, m->addr);
	if (!pushf && !kinstr_flags_killed(ob, olen) && !kinstr_flags_dead_by_abi(m->addr))
		return bad(x, KINSTR_CACHE_RULE_FLAGS, i, m->addr);
	return 0;
}

/* The counters before entry i's counterpart: the edge into it, then its block's. */
static int check_counter(struct cc *x, u32 i, const u8 *ob, unsigned int olen)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	const u8 *b = x->c->bytes + m->copy - counter_len(m);
	int err = 0;

	if (m->flags & KINSTR_CACHE_M_EDGE_IN)
		err = check_counter_at(x, i, b - edge_in_len(m), m->edge, m->flags & KINSTR_CACHE_M_EDGE_IN_PUSHF, ob, olen);
	if (!err && (m->flags & KINSTR_CACHE_M_COUNTED))
		err = check_counter_at(x, i, b, m->counter, m->flags & KINSTR_CACHE_M_PUSHF, ob, olen);
	return err;
}

/*
 * A conditional branch whose taken way is counted (KINSTR_CACHE_M_EDGE_OUT on a jcc or a jump
 * label): at cb, j<not cc> rel8 over the rest, then pushfq; counter; popfq; jmp rel32 on the
 * branch's target (cp: cb's address). The flags the condition reads are the original's: the
 * not-taken way falls past, the taken way saves them around the counter.
 */
static bool edge_jcc_ok(struct cc *x, u32 i, const u8 *cb, unsigned int len, unsigned long cp, int notcc,
			unsigned long target, const u8 *ob, unsigned int olen)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	u32 idx = m->edge + !!(m->flags & KINSTR_CACHE_M_EDGE_IN);
	const unsigned int l = 2 + COUNTER_LEN + 2 + 5;

	if (len != l || cb[0] != (0x70 | notcc) || cb[1] != l - 2 || !(m->flags & KINSTR_CACHE_M_EDGE_OUT_PUSHF) ||
	    check_counter_at(x, i, cb + 2, idx, true, ob, olen) || cb[l - 5] != 0xe9)
		return false;
	return target_ok(x, cp + l + get32(cb + l - 4), target);
}

static bool is_bare_ret(const struct insn *o)
{
	return o->length == 1 && o->opcode.bytes[0] == 0xc3;
}

/* May the original's bytes run at another address, unchanged? */
static bool copyable(struct cc *x, u32 i, const struct insn *o, const u8 *ob)
{
	const struct kinstr_cache_check *c = x->c;
	int cc;

	if (kinstr_branch_of(o, &cc) != KINSTR_BR_NONE || kinstr_rip_relative(o) || kinstr_indirect_branch(o))
		return false;
	if (is_bare_ret(o))	/* where the CPU needs no return thunk, a ret is a ret anywhere */
		return !kinstr_ksyms.return_thunk && !kinstr_ksyms.return_thunk_its;
	if (o->length == 1 && ob[0] == 0xcc) {
		/*
		 * int3s after a ret or jmp never run (an SLS guard, or a return thunk's jmp the
		 * kernel turned into `ret; int3 x4` at boot); any other int3 may be someone's
		 */
		struct insn p;
		u32 j = i;

		while (j > x->f0) {
			j--;
			if (kinstr_decode_live(&p, c->map[j].addr))
				return false;
			if (p.length == 1 && p.opcode.bytes[0] == 0xcc)
				continue;
			return is_bare_ret(&p) || kinstr_branch_of(&p, &cc) == KINSTR_BR_JMP;
		}
		return false;
	}
	return kinstr_ool_check(ob, o->length) == KINSTR_OOL_OK;
}

/* A re-aimed instruction: its counterpart at cb (address cp, clen bytes). */
static int check_reloc(struct cc *x, u32 i, const struct insn *o, const u8 *ob, const u8 *cb, unsigned long cp,
		       unsigned int clen)
{
	const struct kinstr_cache_check *c = x->c;
	const struct kinstr_cache_map *m = &c->map[i];
	unsigned long a = m->addr;
	int ko, kr, cco = -1, ccr = -1, off;
	struct insn r;

	if (is_bare_ret(o)) {	/* as patch_return() would write it here; never under ITS */
		if (kinstr_ksyms.return_thunk_its || !kinstr_ksyms.return_thunk || clen != 5 || cb[0] != 0xe9 ||
		    cp + 5 + get32(cb + 1) != kinstr_ksyms.return_thunk)
			return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
		return 0;
	}
	if (kinstr_decode_bytes(&r, cb, clen) || r.length != clen)
		return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
	ko = kinstr_branch_of(o, &cco);
	if (ko == KINSTR_BR_JMP || ko == KINSTR_BR_JCC) {
		kr = kinstr_branch_of(&r, &ccr);
		if (kr != ko || cco != ccr || r.immediate.nbytes != 4 ||
		    !target_ok(x, kinstr_branch_target(&r, cp), kinstr_branch_target(o, a)))
			return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
		return 0;
	}
	if (ko != KINSTR_BR_NONE || !kinstr_rip_relative(o) || kinstr_indirect_branch(o) ||
	    kinstr_ool_check(ob, o->length) != KINSTR_OOL_OK)
		return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
	/* the same bytes but the displacement, which reaches the same address from here */
	off = insn_offset_displacement((struct insn *)o);	/* its argument is not const */
	if (!kinstr_rip_relative(&r) || r.length != o->length || insn_offset_displacement(&r) != off ||
	    memcmp(ob, cb, off) || memcmp(ob + off + 4, cb + off + 4, o->length - off - 4) ||
	    cp + r.length + (long)r.displacement.value != a + o->length + (long)o->displacement.value)
		return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
	return 0;
}

/* `push $ret; jmp target` (10 bytes), or a tail's `jmp target` (5). */
static bool push_jmp(const u8 *cb, unsigned int len, unsigned long cp, unsigned long ret, unsigned long target,
		     bool tail)
{
	if (tail)
		return len == 5 && cb[0] == 0xe9 && cp + 5 + get32(cb + 1) == target;
	return len == 10 && cb[0] == 0x68 && (unsigned long)(long)get32(cb + 1) == ret && cb[5] == 0xe9 &&
	       cp + 10 + get32(cb + 6) == target;
}

static bool falls_through(const struct insn *o)
{
	int cc;

	return !is_bare_ret(o) && kinstr_branch_of(o, &cc) != KINSTR_BR_JMP && !kinstr_indirect_branch(o) &&
	       !(o->length == 1 && o->opcode.bytes[0] == 0xcc);
}

/*
 * Does control leave the function's copy at entry i's counterpart: a ret, a jmp out of the
 * function's code, a tail static call? A conditional branch or a jump label out of it would
 * leave with no stop: *unstoppable.
 */
static bool leaves(struct cc *x, u32 i, const struct insn *o, bool *unstoppable)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	unsigned long a = m->addr, key, t;
	bool branch, tail;
	int cc, k = kinstr_branch_of(o, &cc);

	*unstoppable = false;
	if (is_bare_ret(o) && (m->form == KINSTR_CACHE_FORM_COPY || m->form == KINSTR_CACHE_FORM_RELOC))
		return true;
	if (m->form == KINSTR_CACHE_FORM_STATIC_CALL)
		return !static_call_site(a, &key, &tail) && tail;
	if (m->form == KINSTR_CACHE_FORM_JUMP_LABEL) {
		*unstoppable = !jump_entry(a, &key, &branch, &t) && (t < x->lo || t >= x->hi);
		return false;
	}
	if (m->form != KINSTR_CACHE_FORM_RELOC || (k != KINSTR_BR_JMP && k != KINSTR_BR_JCC))
		return false;
	t = kinstr_branch_target(o, a);
	if (t >= x->lo && t < x->hi)
		return false;
	*unstoppable = k == KINSTR_BR_JCC;
	return k == KINSTR_BR_JMP;
}

static bool has_stop(const struct kinstr_cache_map *m)
{
	return (m->flags & KINSTR_CACHE_M_TIMER) && !(m->flags & KINSTR_CACHE_M_FUNC);
}

/* A timer stop exactly at the exits of a timed function (a function's first: none). */
static int check_stop_place(struct cc *x, u32 i, const struct insn *o)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	bool unstoppable, exit = leaves(x, i, o, &unstoppable);

	if ((has_stop(m) && !x->timed) ||
	    (x->timed && (unstoppable || exit != has_stop(m) || ((m->flags & KINSTR_CACHE_M_FUNC) && exit))))
		return bad(x, KINSTR_CACHE_RULE_TIMER_PLACE, i, m->addr);
	return 0;
}

/* Entry i's timer stop, if it has one (then past it: *cb, *cp, *clen), on the timer its entry started. */
static int check_stop(struct cc *x, u32 i, const u8 **cb, unsigned long *cp, unsigned int *clen)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	u32 t;

	if (!has_stop(m))
		return 0;
	if (*clen <= KINSTR_CACHE_TIMER_LEN || !kinstr_cache_timer_ok(x->c, *cb, *cp, false, &t) ||
	    t != x->timer)
		return bad(x, KINSTR_CACHE_RULE_TIMER, i, m->addr);
	*cb += KINSTR_CACHE_TIMER_LEN;
	*cp += KINSTR_CACHE_TIMER_LEN;
	*clen -= KINSTR_CACHE_TIMER_LEN;
	return 0;
}

/*
 * Re-laid copies (KINSTR_CACHE_IMAGE_LAID, kinstr optimize; docs/design.md, "Re-laid copies"). The
 * same instructions in the same forms as any copy, without counters, in another order; what may
 * differ is only how control gets from one counterpart to the next:
 *   - the counterparts tile the function's part of the image in any order (check_laid_run());
 *   - where a counterpart runs on past its form (a copied or re-aimed instruction that falls
 *     through, a jump label's test, a jcc's other way), control reaches the counterpart of the
 *     original's next instruction (a jcc's other way's): by a jmp, rel8 or rel32, that is all
 *     the rest of the counterpart, or, with no rest, by that counterpart beginning right after
 *     (laid_runs_on(): else KINSTR_CACHE_RULE_FALL);
 *   - a jcc is the original's condition in rel8 or rel32 form aimed at the target's counterpart,
 *     running on to the next instruction's; or the inverted condition aimed at the next
 *     instruction's counterpart, running on to the target's, which must be inside the function
 *     (else KINSTR_CACHE_RULE_RELOC, or _FALL for where it runs on);
 *   - a jmp is rel8 or rel32 to its target's counterpart, or dropped (an empty counterpart) where
 *     its target's counterpart, not itself empty, begins at the same offset (else _FALL);
 *   - any other form is checked as for any copy, and only a dropped jmp may be empty (_LAYOUT).
 */
static bool laid_runs_on(struct cc *x, const u8 *cb, unsigned long cp, unsigned int len, unsigned long want)
{
	const struct kinstr_cache_check *c = x->c;
	long j = want >= x->lo && want < x->hi ? find_map(c, want) : -1;
	unsigned long dest;
	struct insn r;
	int cc;

	if (j < 0)
		return false;
	dest = c->base + c->map[j].copy;
	if (!len)	/* the counterparts tile the copy: what begins here is j's */
		return cp == dest;
	if (kinstr_decode_bytes(&r, cb, len) || r.length != len || kinstr_branch_of(&r, &cc) != KINSTR_BR_JMP)
		return false;
	return kinstr_branch_target(&r, cp) == dest;
}

static int check_laid_branch(struct cc *x, u32 i, const struct insn *o, const u8 *cb, unsigned long cp,
			     unsigned int clen)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	unsigned long a = m->addr, t = kinstr_branch_target(o, a), next = a + o->length;
	int ko, cco = -1, ccr = -1;
	struct insn r;
	long j;

	ko = kinstr_branch_of(o, &cco);
	if (ko == KINSTR_BR_JMP && !clen) {	/* dropped: its target's counterpart is right here */
		j = t >= x->lo && t < x->hi ? find_map(x->c, t) : -1;
		if (j < 0 || x->c->map[j].copy != m->copy || !x->c->map[j].copy_len)
			return bad(x, KINSTR_CACHE_RULE_FALL, i, a);
		return 0;
	}
	if (kinstr_decode_bytes(&r, cb, clen) || r.length > clen || kinstr_branch_of(&r, &ccr) != ko ||
	    (r.immediate.nbytes != 1 && r.immediate.nbytes != 4))
		return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
	if (ko == KINSTR_BR_JMP)
		return r.length == clen && target_ok(x, kinstr_branch_target(&r, cp), t) ? 0 :
		       bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
	if (ccr == cco) {	/* as it is: taken to the target, running on to the next instruction */
		if (!target_ok(x, kinstr_branch_target(&r, cp), t))
			return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
		return laid_runs_on(x, cb + r.length, cp + r.length, clen - r.length, next) ? 0 :
		       bad(x, KINSTR_CACHE_RULE_FALL, i, a);
	}
	/* inverted: taken to the next instruction, running on to the target */
	if (ccr != (cco ^ 1) || !target_ok(x, kinstr_branch_target(&r, cp), next))
		return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
	return laid_runs_on(x, cb + r.length, cp + r.length, clen - r.length, t) ? 0 : bad(x, KINSTR_CACHE_RULE_FALL, i, a);
}

/*
 * Entry i of a re-laid copy: 0 (a branch, all checked), 1 with *clen the form's length for the
 * form's own check (where it runs on checked), or a refusal.
 */
static int check_laid_insn(struct cc *x, u32 i, const struct insn *o, const u8 *cb, unsigned long cp,
			   unsigned int *clen)
{
	const struct kinstr_cache_map *m = &x->c->map[i];
	int cc, br = kinstr_branch_of(o, &cc);
	unsigned int l;

	if (m->form == KINSTR_CACHE_FORM_RELOC && (br == KINSTR_BR_JMP || br == KINSTR_BR_JCC))
		return check_laid_branch(x, i, o, cb, cp, *clen);
	if (!*clen)
		return bad(x, KINSTR_CACHE_RULE_LAYOUT, i, m->addr);	/* only a dropped jmp is empty */
	if (m->form == KINSTR_CACHE_FORM_JUMP_LABEL)
		l = 13;		/* cmpl $0, key(%rip); jg/jle target */
	else if ((m->form == KINSTR_CACHE_FORM_COPY || m->form == KINSTR_CACHE_FORM_RELOC) && br == KINSTR_BR_NONE &&
		 falls_through(o))
		l = o->length;
	else
		return 1;	/* no way on in the copy: the form is all of it */
	if (*clen < l || !laid_runs_on(x, cb + l, cp + l, *clen - l, m->addr + o->length))
		return bad(x, KINSTR_CACHE_RULE_FALL, i, m->addr);
	*clen = l;
	return 1;
}

static int check_insn(struct cc *x, u32 i)
{
	const struct kinstr_cache_check *c = x->c;
	const struct kinstr_cache_map *m = &c->map[i];
	unsigned long a = m->addr, cp = c->base + m->copy, key, t;
	const u8 *cb = c->bytes + m->copy;
	u8 ob[MAX_INSN_SIZE];
	struct insn o;
	unsigned int clen = m->copy_len;
	bool branch, tail;
	u32 res;
	int err, cc;

	if (kinstr_decode_live(&o, a) || o.length != m->len || copy_from_kernel_nofault(ob, (void *)a, o.length))
		return bad(x, KINSTR_CACHE_RULE_BOUNDARY, i, a);
	res = kinstr_policy_check(a, o.length);
	if (res & ~FORM_REASONS) {
		*x->v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_RESERVED, .reasons = res & ~FORM_REASONS,
						 .addr = a };
		*x->at = i;
		return res & R(NOT_TEXT) ? -EFAULT : -EPERM;
	}
	/* what the kernel finds by address runs where it is; its rewritten sites take their forms */
	if ((res & (R(EXTABLE) | R(BUG)) && m->form != KINSTR_CACHE_FORM_NATIVE) ||
	    (res & R(JUMP_LABEL) && m->form != KINSTR_CACHE_FORM_JUMP_LABEL && m->form != KINSTR_CACHE_FORM_NATIVE) ||
	    (res & R(STATIC_CALL) && m->form != KINSTR_CACHE_FORM_STATIC_CALL && m->form != KINSTR_CACHE_FORM_NATIVE))
		return bad(x, KINSTR_CACHE_RULE_COPY + m->form, i, a);	/* the form's own rule */
	err = check_counter(x, i, ob, o.length);
	if (!err)
		err = check_stop_place(x, i, &o);
	if (err)
		return err;
	if (m->flags & KINSTR_CACHE_M_EDGE_OUT) {
		/* a conditional's taken way, or an exit's counter before it (then the form, checked below) */
		u32 idx = m->edge + !!(m->flags & KINSTR_CACHE_M_EDGE_IN);
		bool pushf = m->flags & KINSTR_CACHE_M_EDGE_OUT_PUSHF;
		unsigned int l = COUNTER_LEN + 2 * pushf;

		if (m->form == KINSTR_CACHE_FORM_RELOC && kinstr_branch_of(&o, &cc) == KINSTR_BR_JCC) {
			if (!edge_jcc_ok(x, i, cb, m->copy_len, cp, cc ^ 1, kinstr_branch_target(&o, a), ob, o.length))
				return bad(x, KINSTR_CACHE_RULE_RELOC, i, a);
			return 0;
		}
		if (m->form == KINSTR_CACHE_FORM_JUMP_LABEL) {
			/* cmpl $0, key(%rip), then not taken on jle (jg with the branch bit) */
			if (!x->compiled_c || jump_entry(a, &key, &branch, &t) || m->copy_len < 7 || cb[0] != 0x83 ||
			    cb[1] != 0x3d || cp + 7 + get32(cb + 2) != key || cb[6] != 0 ||
			    !edge_jcc_ok(x, i, cb + 7, m->copy_len - 7, cp + 7, branch ? 0xf : 0xe, t, ob, o.length))
				return bad(x, KINSTR_CACHE_RULE_JUMP_LABEL, i, a);
			return 0;
		}
		/* only what leaves: a jmp, a ret, a tail static call */
		if (falls_through(&o) || m->copy_len <= l || check_counter_at(x, i, cb, idx, pushf, ob, o.length))
			return bad(x, KINSTR_CACHE_RULE_COUNTER, i, a);
		cb += l;
		cp += l;
		clen -= l;
	}
	err = check_stop(x, i, &cb, &cp, &clen);
	if (err)
		return err;
	if (x->c->laid) {
		err = check_laid_insn(x, i, &o, cb, cp, &clen);
		if (err <= 0)
			return err;
	}
	switch (m->form) {
	case KINSTR_CACHE_FORM_COPY:
		if (clen != o.length || memcmp(cb, ob, o.length) || !copyable(x, i, &o, ob))
			return bad(x, KINSTR_CACHE_RULE_COPY, i, a);
		return 0;
	case KINSTR_CACHE_FORM_RELOC:
		return check_reloc(x, i, &o, ob, cb, cp, clen);
	case KINSTR_CACHE_FORM_CALL:
		if (kinstr_branch_of(&o, &cc) != KINSTR_BR_CALL)
			return bad(x, KINSTR_CACHE_RULE_CALL, i, a);
		t = kinstr_branch_target(&o, a);
		/* a call into the function would push a return address the copy does not map */
		if ((t >= x->fstart && t < x->fstart + x->fsize) || !exit_ok(x, t) ||
		    !push_jmp(cb, clen, cp, a + o.length, t, false))
			return bad(x, KINSTR_CACHE_RULE_CALL, i, a);
		return 0;
	case KINSTR_CACHE_FORM_NATIVE:
		/* an indirect branch may come back anywhere into the original, under a splice */
		if (kinstr_indirect_branch(&o) || clen != 5 || cb[0] != 0xe9 || cp + 5 + get32(cb + 1) != a)
			return bad(x, KINSTR_CACHE_RULE_NATIVE, i, a);
		return 0;
	case KINSTR_CACHE_FORM_JUMP_LABEL:
		/*
		 * cmpl $0, key(%rip) reads the key's count (static_key.enabled, its first field):
		 * taken when enabled XOR the entry's branch bit, as jump_label_type() decides: jg,
		 * or jle with the bit. It clobbers the flags, dead at every asm goto of compiled C.
		 */
		if (!x->compiled_c || jump_entry(a, &key, &branch, &t) || clen != 13 ||
		    cb[0] != 0x83 || cb[1] != 0x3d || cp + 7 + get32(cb + 2) != key || cb[6] != 0 || cb[7] != 0x0f ||
		    cb[8] != (branch ? 0x8e : 0x8f) || !target_ok(x, cp + 13 + get32(cb + 9), t))
			return bad(x, KINSTR_CACHE_RULE_JUMP_LABEL, i, a);
		return 0;
	case KINSTR_CACHE_FORM_STATIC_CALL:
		/* a call or jmp site is 5 bytes; a NULL tail call's is `ret` (int3s fill the rest) */
		if (static_call_site(a, &key, &tail) || (o.length != 5 && !(tail && is_bare_ret(&o))) ||
		    !(t = kinstr_static_call_trampoline(key)) ||
		    !push_jmp(cb, clen, cp, a + 5, t, tail))
			return bad(x, KINSTR_CACHE_RULE_STATIC_CALL, i, a);
		return 0;
	}
	return bad(x, KINSTR_CACHE_RULE_REQUEST, i, a);
}

/*
 * Where control leaves the copy for the original and comes back: after a call (its return
 * address), after and out of a native instruction (the next one, its branch target, its jump
 * label's target, its exception fixup). Each must be an entry point, a native instruction or
 * outside every copy: the original's other bytes may be under a splice.
 */
static int check_exits(struct cc *x, u32 i)
{
	const struct kinstr_cache_check *c = x->c;
	const struct kinstr_cache_map *m = &c->map[i];
	const struct exception_table_entry *e;
	unsigned long a = m->addr, key, t;
	struct insn o;
	bool branch, tail;
	int cc;

	if (m->form == KINSTR_CACHE_FORM_CALL ||
	    (m->form == KINSTR_CACHE_FORM_STATIC_CALL && !static_call_site(a, &key, &tail) && !tail))
		return exit_ok(x, a + m->len) ? 0 : bad(x, KINSTR_CACHE_RULE_EXIT, i, a + m->len);
	if (m->form != KINSTR_CACHE_FORM_NATIVE)
		return 0;
	if (kinstr_decode_live(&o, a))
		return bad(x, KINSTR_CACHE_RULE_BOUNDARY, i, a);
	if (falls_through(&o) && !exit_ok(x, a + o.length))
		return bad(x, KINSTR_CACHE_RULE_EXIT, i, a + o.length);
	if (kinstr_branch_of(&o, &cc) != KINSTR_BR_NONE && !exit_ok(x, t = kinstr_branch_target(&o, a)))
		return bad(x, KINSTR_CACHE_RULE_EXIT, i, t);
	if (!jump_entry(a, &key, &branch, &t) && !exit_ok(x, t))
		return bad(x, KINSTR_CACHE_RULE_EXIT, i, t);
	e = kinstr_khas(search_exception_tables) ? kinstr_kcall(search_exception_tables)(a) : NULL;
	if (e && !exit_ok(x, t = (unsigned long)&e->fixup + e->fixup))
		return bad(x, KINSTR_CACHE_RULE_EXIT, i, t);
	return 0;
}

/*
 * Only zero bytes from a to end: the fill after the last function of a module's text, which
 * kallsyms counts into that function (lib/kernel/live.c sizes it without).
 */
static bool zero_fill(unsigned long a, unsigned long end)
{
	u8 b[64];

	while (a < end) {
		unsigned long n = min_t(unsigned long, sizeof(b), end - a);

		if (copy_from_kernel_nofault(b, (void *)a, n) || memchr_inv(b, 0, n))
			return false;
		a += n;
	}
	return true;
}

/*
 * A function's run of the map [f0, f1): a function the cache may hold, its instructions back to
 * back from a boundary decoded from the symbol's start, its code ending where the function's does
 * (nothing but int3 or NOP padding after a last instruction that does not fall through).
 */
static int check_function(struct cc *x)
{
	const struct kinstr_cache_check *c = x->c;
	const struct exception_table_entry *e;
	char sym[KSYM_SYMBOL_LEN + 8], *plus;
	unsigned long a, end;
	struct insn o;
	u32 i;

	if (!kinstr_function_of(c->map[x->f0].addr, &x->fstart, &x->fsize) ||
	    kinstr_ksyms_sched_or_lock_text(x->fstart, x->fsize))
		return bad(x, KINSTR_CACHE_RULE_FUNCTION, x->f0, c->map[x->f0].addr);
	/* a .cold part of it (GCC splits some; the builder refuses them too) may jump back anywhere into the original */
	sprint_symbol(sym, x->fstart);
	plus = strchr(sym, '+');
	if (plus && plus - sym + 6 < (long)sizeof(sym)) {
		strcpy(plus, ".cold");
		if (kinstr_kcall(kallsyms_lookup_name)(sym))
			return bad(x, KINSTR_CACHE_RULE_FUNCTION, x->f0, c->map[x->f0].addr);
	}
	a = kinstr_fentry_of(x->fstart);
	x->compiled_c = kinstr_khas(ftrace_text_reserved) && kinstr_kcall(ftrace_text_reserved)((void *)a, (void *)a);
	/*
	 * The instructions before the copied code run in the original (the ftrace NOP, a native
	 * instruction or a jump label or static call at the entry): where they go must be an entry
	 * point too, and control falls from the last of them onto the first (an entry point).
	 */
	for (a = x->fstart; a < c->map[x->f0].addr; a += o.length) {
		unsigned long key, t;
		bool branch;

		cond_resched();
		if (kinstr_decode_live(&o, a))
			return bad(x, KINSTR_CACHE_RULE_BOUNDARY, x->f0, a);
		if ((kinstr_branch_of(&o, &(int){0}) != KINSTR_BR_NONE && !exit_ok(x, t = kinstr_branch_target(&o, a))) ||
		    (!jump_entry(a, &key, &branch, &t) && !exit_ok(x, t)))
			return bad(x, KINSTR_CACHE_RULE_EXIT, x->f0, t);
		if (kinstr_indirect_branch(&o))
			return bad(x, KINSTR_CACHE_RULE_EXIT, x->f0, a);
		e = kinstr_khas(search_exception_tables) ? kinstr_kcall(search_exception_tables)(a) : NULL;
		if (e && !exit_ok(x, t = (unsigned long)&e->fixup + e->fixup))
			return bad(x, KINSTR_CACHE_RULE_EXIT, x->f0, t);
	}
	if (a != c->map[x->f0].addr)
		return bad(x, KINSTR_CACHE_RULE_BOUNDARY, x->f0, c->map[x->f0].addr);
	for (i = x->f0; i < x->f1; i++)
		if (i > x->f0 && c->map[i].addr != c->map[i - 1].addr + c->map[i - 1].len)
			return bad(x, KINSTR_CACHE_RULE_BOUNDARY, i, c->map[i].addr);
	x->lo = c->map[x->f0].addr;
	x->hi = c->map[x->f1 - 1].addr + c->map[x->f1 - 1].len;
	x->timed = c->map[x->f0].flags & KINSTR_CACHE_M_TIMER;
	if (x->timed && !kinstr_cache_timer_ok(c, c->bytes + c->map[x->f0].copy - counter_len(&c->map[x->f0]) -
					       edge_in_len(&c->map[x->f0]) - KINSTR_CACHE_TIMER_LEN,
					       c->base + c->map[x->f0].copy - counter_len(&c->map[x->f0]) -
					       edge_in_len(&c->map[x->f0]) - KINSTR_CACHE_TIMER_LEN, true, &x->timer))
		return bad(x, KINSTR_CACHE_RULE_TIMER, x->f0, c->map[x->f0].addr);
	end = x->fstart + x->fsize;
	/* the last instruction ends the code: it does not fall through, or is a call (noreturn) or a BUG */
	if (x->hi > end || kinstr_decode_live(&o, c->map[x->f1 - 1].addr) ||
	    (falls_through(&o) && kinstr_branch_of(&o, &(int){0}) != KINSTR_BR_CALL &&
	     !(o.opcode.nbytes == 2 && o.opcode.bytes[0] == 0x0f && o.opcode.bytes[1] == 0x0b)))
		return bad(x, KINSTR_CACHE_RULE_END, x->f1 - 1, c->map[x->f1 - 1].addr);
	for (a = x->hi; a < end; a += o.length) {
		bool pad;

		if (zero_fill(a, end))
			break;
		if (kinstr_decode_live(&o, a))
			return bad(x, KINSTR_CACHE_RULE_END, x->f1 - 1, a);
		/* int3, or a NOP (90, 0f 1f /0) with any prefixes */
		pad = (o.length == 1 && o.opcode.bytes[0] == 0xcc) ||
		      (o.opcode.nbytes == 2 && o.opcode.bytes[0] == 0x0f && o.opcode.bytes[1] == 0x1f) ||
		      (o.opcode.nbytes == 1 && o.opcode.bytes[0] == 0x90);
		if (!pad)
			return bad(x, KINSTR_CACHE_RULE_END, x->f1 - 1, a);
	}
	return 0;
}

/* The map on its own: fields in range, sorted, the counterparts back to back filling the image. */
/*
 * A re-laid function's run, at its first entry i (the map's checks of each entry done by the
 * caller as they come): every entry of the run re-laid, none with a counter; the counterparts
 * tile the function's part of the image, from at on, in any order (laid.c). *at: its end.
 */
static int check_laid_run(struct cc *x, u32 i, u64 *at)
{
	const struct kinstr_cache_check *c = x->c;
	u32 f1, j;
	int err;

	for (f1 = i + 1; f1 < c->nmap && !(c->map[f1].flags & KINSTR_CACHE_M_FUNC); f1++)
		;
	for (j = i; j < f1; j++)
		if (c->map[j].flags & (KINSTR_CACHE_M_COUNTED | KINSTR_CACHE_M_EDGE_IN | KINSTR_CACHE_M_EDGE_OUT |
				       KINSTR_CACHE_M_TIMER))
			return bad(x, KINSTR_CACHE_RULE_REQUEST, j, c->map[j].addr);
	err = kinstr_laid_tiles(c->map, i, f1, *at, at);
	if (err < 0)
		return err;
	if (err || *at > c->len)
		return bad(x, KINSTR_CACHE_RULE_LAYOUT, i, c->map[i].addr);
	return 0;
}

static int check_layout(struct cc *x)
{
	const struct kinstr_cache_check *c = x->c;
	u64 at = 0;
	u32 i;
	int err;

	for (i = 0; i < c->nmap; i++) {
		const struct kinstr_cache_map *m = &c->map[i];
		bool laid = c->laid;

		if ((m->flags & ~KINSTR_CACHE_M_ALL) || m->form >= KINSTR_CACHE_FORM_NR ||
		    !m->len || m->len > MAX_INSN_SIZE || (!m->copy_len && !laid) || (!i && !(m->flags & KINSTR_CACHE_M_FUNC)) ||
		    ((m->flags & KINSTR_CACHE_M_PUSHF) && !(m->flags & KINSTR_CACHE_M_COUNTED)) ||
		    ((m->flags & KINSTR_CACHE_M_EDGE_IN_PUSHF) && !(m->flags & KINSTR_CACHE_M_EDGE_IN)) ||
		    ((m->flags & KINSTR_CACHE_M_EDGE_OUT_PUSHF) && !(m->flags & KINSTR_CACHE_M_EDGE_OUT)) ||
		    (m->edge && !(m->flags & (KINSTR_CACHE_M_EDGE_IN | KINSTR_CACHE_M_EDGE_OUT))) ||
		    (i && m->addr <= c->map[i - 1].addr))
			return bad(x, KINSTR_CACHE_RULE_REQUEST, i, m->addr);
		if (laid) {	/* the whole run at its first entry; the others: part of a re-laid run */
			err = m->flags & KINSTR_CACHE_M_FUNC ? check_laid_run(x, i, &at) : 0;
			if (err)
				return err;
			continue;
		}
		if ((u64)m->copy != at + kinstr_cache_timer_start_len(m) + edge_in_len(m) + counter_len(m))
			return bad(x, KINSTR_CACHE_RULE_LAYOUT, i, m->addr);
		at = (u64)m->copy + m->copy_len;
		if (at > c->len)
			return bad(x, KINSTR_CACHE_RULE_LAYOUT, i, m->addr);
	}
	if (at != c->len || !c->nmap)
		return bad(x, KINSTR_CACHE_RULE_LAYOUT, c->nmap, 0);
	return 0;
}

/*
 * The area's entry points: each on an instruction of a copy, leading to its counterpart (or its
 * counter); a jump's bytes inside that function's code, over no native instruction. Every
 * function's first instruction is one. Marks them in x->enter.
 */
static int check_entries(struct cc *x, const struct kinstr_probe *req, const unsigned long *entries, u32 nreq)
{
	const struct kinstr_cache_check *c = x->c;
	u32 i, k;

	for (k = 0; k < nreq; k++) {
		const struct kinstr_probe *p = &req[k];
		long j;

		if (!test_bit(k, entries))
			continue;
		j = find_map(c, p->site);
		if (j >= 0 && kinstr_cache_timer_start_len(&c->map[j])) {
			/* a timed function is entered on its start, only there */
			if (p->arg != c->map[j].copy - counter_len(&c->map[j]) - edge_in_len(&c->map[j]) -
				      KINSTR_CACHE_TIMER_LEN)
				return bad(x, KINSTR_CACHE_RULE_TIMER_PLACE, j, p->site);
		} else if (j < 0 || !lands_on(c, j, p->arg) || c->map[j].form == KINSTR_CACHE_FORM_NATIVE) {
			return bad(x, KINSTR_CACHE_RULE_REENTRY, j < 0 ? c->nmap : (u32)j, p->site);
		}
		for (i = j; i < c->nmap && c->map[i].addr < p->site + p->displaced_len; i++)
			if ((i > j && (c->map[i].flags & KINSTR_CACHE_M_FUNC)) || c->map[i].form == KINSTR_CACHE_FORM_NATIVE)
				return bad(x, KINSTR_CACHE_RULE_REENTRY, j, p->site);
		if (i == c->nmap && c->map[i - 1].addr + c->map[i - 1].len < p->site + p->displaced_len)
			return bad(x, KINSTR_CACHE_RULE_REENTRY, j, p->site);
		if (i < c->nmap && (c->map[i].flags & KINSTR_CACHE_M_FUNC) &&
		    c->map[i - 1].addr + c->map[i - 1].len < p->site + p->displaced_len)
			return bad(x, KINSTR_CACHE_RULE_REENTRY, j, p->site);
		__set_bit(j, x->enter);
	}
	for (i = 0; i < c->nmap; i++)
		if ((c->map[i].flags & KINSTR_CACHE_M_FUNC) && !test_bit(i, x->enter))
			return bad(x, KINSTR_CACHE_RULE_REENTRY, i, c->map[i].addr);
	return 0;
}

int kinstr_cache_check(const struct kinstr_cache_check *c, const struct kinstr_probe *req,
		       const unsigned long *entries, u32 nreq, struct kinstr_verdict *v, u32 *at)
{
	struct cc x = { .c = c, .v = v, .at = at };
	int err;
	u32 i;

	memset(v, 0, sizeof(*v));
	x.used = bitmap_zalloc(max(c->ncounters, 1U), GFP_KERNEL);
	x.enter = bitmap_zalloc(max(c->nmap, 1U), GFP_KERNEL);
	err = !x.used || !x.enter ? -ENOMEM : check_layout(&x);
	if (!err)
		err = check_entries(&x, req, entries, nreq);
	for (x.f0 = 0; !err && x.f0 < c->nmap; x.f0 = x.f1) {
		for (x.f1 = x.f0 + 1; x.f1 < c->nmap && !(c->map[x.f1].flags & KINSTR_CACHE_M_FUNC); x.f1++)
			;
		err = check_function(&x);
		for (i = x.f0; !err && i < x.f1; i++) {
			if (!(i % 256))
				cond_resched();	/* thousands of instructions */
			err = check_insn(&x, i);
			if (!err)
				err = check_exits(&x, i);
		}
	}
	bitmap_free(x.used);
	bitmap_free(x.enter);
	return err;
}

int kinstr_cache_functions(const struct kinstr_cache_check *c, struct kinstr_cache_range *r)
{
	u32 i, n = 0;

	for (i = 0; i < c->nmap; i++) {
		if (c->map[i].flags & KINSTR_CACHE_M_FUNC) {
			if (r)
				r[n].start = c->map[i].addr;
			n++;
		}
		if (r)
			r[n - 1].end = c->map[i].addr + c->map[i].len;
	}
	return n;
}
