// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The code cache's first pass (include/kinstr/cache.h): how each instruction of the function appears in
 * the copy and so its size: copied, emulated, run natively, counted; where the copy re-enters the
 * original, which blocks carry counters, and (--edges) which edges are counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/reloc.h>
#include <kinstr/sites.h>
#include <kinstr/x86.h>
#include "rules/flags.h"
#include "rules/out_of_line.h"
#include "lib/cache/cache_priv.h"

/* What comes before a block's own counter: the timer's start (the entry's only), the edge-in counter. */
unsigned int cc_edge_in_len(const struct plan *pi)
{
	return (pi->timer == KINSTR_CACHE_TIMER_STARTS ? KINSTR_CACHE_TIMER_LEN : 0) +
	       (pi->edges & KINSTR_CACHE_I_EDGE_IN ? COUNTER_LEN + 2 * !!(pi->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF) : 0);
}

int cc_refuse(struct kinstr_cache_refusal *r, int code, uint64_t addr, uint32_t reserved, const char *fmt, ...)
{
	va_list ap;

	if (r) {
		r->code = code;
		r->addr = addr;
		r->reserved = reserved;
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	errno = EPERM;
	return -EPERM;
}

int cc_fits_rel32(uint64_t from_end, uint64_t to)
{
	int64_t d = (int64_t)(to - from_end);

	return d >= INT32_MIN && d <= INT32_MAX;
}

static int fits_imm32(uint64_t v)
{
	return (uint64_t)(int64_t)(int32_t)v == v;
}

void cc_put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

uint8_t *cc_emit_rel32(uint8_t *b, uint64_t at, const uint8_t *op, unsigned int oplen, uint64_t target)
{
	memcpy(b, op, oplen);
	cc_put32(b + oplen, (int32_t)(target - (at + oplen + 4)));
	return b + oplen + 4;
}

/* The counter of block idx at b (copy address at). */
uint8_t *cc_emit_counter(uint8_t *b, uint64_t counters, uint32_t idx, int saves_flags)
{
	uint64_t c = counters + 8ull * idx;

	if (saves_flags)
		*b++ = 0x9c;
	*b++ = 0x50;
	*b++ = 0x48;
	*b++ = 0xb8;
	memcpy(b, &c, 8);
	b += 8;
	memcpy(b, "\x65\x48\xff\x00", 4);	/* incq %gs:(%rax): the per-CPU counter */
	b += 4;
	*b++ = 0x58;
	if (saves_flags)
		*b++ = 0x9d;
	return b;
}

/* A jcc's condition: the low nibble of its opcode (7x rel8, or the 8x after 0f for rel32). */
int cc_jcc_cond(const struct kinstr_x86_insn *x)
{
	return x->bytes[x->branch_off - 1] & 0xf;
}

/* Native instructions: the kernel finds them by address, or they must not move. */
/*
 * Xen's and KVM's emulate prefix, ud2 then the bytes "xen" or "kvm", before an instruction the
 * hypervisor emulates (cpuid): the kernel's decoder, the module's, takes the five bytes as that
 * instruction's prefix, so no boundary lies after the ud2 for the module.
 */
static int emulate_prefix(const struct kinstr_kernel *k, const struct kinstr_x86_insn *x)
{
	const unsigned char *b = x->len == 2 && x->bytes[0] == 0x0f && x->bytes[1] == 0x0b ?
				 kinstr_kernel__text(k, x->addr + 2, 3) : NULL;

	return b && (!memcmp(b, "xen", 3) || !memcmp(b, "kvm", 3));
}

/*
 * Is t inside a function other than [fstart, fend), past its start? Such a function's copy
 * (in the same area: the module refuses it off its re-entry points) or another session's
 * splice there may cover the target.
 */
static int into_another(const struct kinstr_kernel *k, uint64_t t, uint64_t fstart, uint64_t fend)
{
	const struct kinstr_func *g;

	if (t >= fstart && t < fend)
		return 0;
	g = kinstr_kernel__func_at(k, t);
	return g && g->addr != t;
}

int cc_runs_native(const struct kinstr_x86_insn *x, uint32_t reserved)
{
	int ool = kinstr_x86__out_of_line(x);

	if (reserved & ((1u << KINSTR_R_EXTABLE) | (1u << KINSTR_R_BUG)))
		return 1;
	return ool == KINSTR_OOL_UD || ool == KINSTR_OOL_IF || ool == KINSTR_OOL_LEAVES || ool == KINSTR_OOL_SYSTEM;
}

/* Where the copy is entered: after the ftrace NOP at the start (after any ENDBR), else there. */
uint64_t cc_entry_of(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	uint64_t e = f->addr + f->endbr;

	if (kinstr_kernel__reserved(k, e, 1) & (1u << KINSTR_R_FTRACE))
		return e + 5;
	return e;
}

/*
 * Where a jmp is a return for the flags rule: the thunk the kernel sends returns to now, as the
 * module's own rule reads it (kinstr_flags_dead_by_abi()); none where returns are bare.
 */
static uint64_t abi_return_thunk(const struct kinstr_kernel *k)
{
	unsigned long long to = 0;

	return kinstr_kernel__ret_relocation(k, &to) ? 0 : to;
}

/*
 * The ABI leaves the flags dead at the entry of compiled C (abi_entry: right after the ftrace
 * NOP; 0 without one) and at a return; else rules/flags.h.
 */
static int flags_dead(const struct kinstr_x86_insn *x, uint64_t abi_entry, uint64_t return_thunk)
{
	/* only compiled C (an ftrace NOP) keeps the convention: assembly may return flags */
	if (abi_entry && (x->addr == abi_entry || x->flow == KINSTR_X86_FLOW_RET))
		return 1;
	if (abi_entry && x->flow == KINSTR_X86_FLOW_JMP && return_thunk && x->target == return_thunk)
		return 1;
	return kinstr_flags_killed(x->bytes, x->len);
}

/* Where a branch to original address a inside the copied range goes (a block's counter), or 0. */
uint64_t cc_copy_of(const struct plan *p, const struct kinstr_cfg *cfg, size_t first, size_t n, uint64_t a)
{
	int i = kinstr_cfg__find_insn(cfg, a);

	if (i < 0 || (size_t)i < first || (size_t)i >= first + n)
		return 0;
	return p[i - first].copy + cc_edge_in_len(&p[i - first]);
}

/* Is a re-entry point's 5-byte jmp clear of what must stay: reservations, native code, other points? */
int cc_reentry_jump_fits(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct plan *p,
			     size_t first, size_t n, size_t i, uint64_t code_end, const struct kinstr_func *f)
{
	const struct kinstr_cfg_insn *ci = kinstr_cfg__insn(cfg, first + i);
	const struct kinstr_cfg_edge *e;
	uint64_t a = ci->x.addr;
	size_t j, ne;

	if (a + 5 > code_end || kinstr_kernel__reserved(k, a, 5))
		return 0;
	/* the kernel's tables (jump labels, exception fixups) may send control into the bytes */
	ne = kinstr_kernel__edges(k, f->addr, f->addr + f->size, &e);
	for (j = 0; j < ne; j++)
		if (e[j].to > a && e[j].to < a + 5)
			return 0;
	for (j = i + 1; j < n; j++) {
		const struct kinstr_cfg_insn *cj = kinstr_cfg__insn(cfg, first + j);

		if (cj->x.addr >= a + 5)
			break;
		if (p[j].reentry || p[j].how == KINSTR_CACHE_NATIVE)
			return 0;
	}
	return 1;
}

/* The caller's answer, else the live view's (a snapshot has none). */
static int jump_label_of(const struct kinstr_kernel *k, const struct kinstr_cache_opts *o, uint64_t site, struct plan *pi)
{
	unsigned long long key;

	if (o->jump_label)
		return o->jump_label(site, &pi->aux, &pi->jl_branch, o->ctx);
	if (kinstr_kernel__jump_label(k, site, &key, &pi->jl_branch))
		return -ENOENT;
	pi->aux = key;
	return 0;
}

static int static_call_of(const struct kinstr_kernel *k, const struct kinstr_cache_opts *o, uint64_t site,
			  struct plan *pi, int *tail)
{
	unsigned long long tramp;

	if (o->static_call)
		return o->static_call(site, &pi->aux, tail, o->ctx);
	if (kinstr_kernel__static_call(k, site, &tramp, tail))
		return -ENOENT;
	pi->aux = tramp;
	return 0;
}

int cc_plan_insn(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o,
		     struct plan *p, size_t first, size_t i, uint64_t entry, uint64_t abi_entry, uint64_t fstart, uint64_t fend, struct kinstr_cache_refusal *r)
{
	const struct kinstr_cfg_insn *ci = kinstr_cfg__insn(cfg, first + i);
	const struct kinstr_x86_insn *x = &ci->x;
	uint32_t res = kinstr_kernel__reserved(k, x->addr, x->len);
	struct plan *pi = &p[i];
	size_t size;

	if (ci->flags & (KINSTR_CFG_I_INVALID | KINSTR_CFG_I_BAD_TARGET))
		return cc_refuse(r, KINSTR_CACHE_R_UNDECODABLE, x->addr, 0, "bytes that do not decode, or a branch into an instruction");
	if (emulate_prefix(k, x))
		return cc_refuse(r, KINSTR_CACHE_R_UNDECODABLE, x->addr, 0,
			      "a ud2 with 'xen' or 'kvm' after it: the kernel's decoder reads it as a prefix of the next instruction");
	if (x->attr & KINSTR_X86_A_ENDBR)
		return cc_refuse(r, KINSTR_CACHE_R_ENDBR, x->addr, 0, "an ENDBR inside the function: an indirect branch may land in the original");
	if (res & REWRITTEN_REASONS)
		return cc_refuse(r, KINSTR_CACHE_R_RESERVED, x->addr, res & REWRITTEN_REASONS,
			      "an instruction the kernel may rewrite in the original");
	if (x->flow == KINSTR_X86_FLOW_INT3) {
		/* an SLS guard after a ret or jmp runs never; any other int3 may be someone's breakpoint */
		const struct kinstr_cfg_insn *prev = i ? kinstr_cfg__insn(cfg, first + i - 1) : NULL;

		if (!prev || kinstr_x86__falls_through(&prev->x) || (ci->flags & KINSTR_CFG_I_TARGET))
			return cc_refuse(r, KINSTR_CACHE_R_INT3, x->addr, 0, "an int3 that may run: someone's breakpoint");
		/* the fill of a NULL tail static call (`ret; int3 x4`): the site's bytes, for the kernel to rewrite */
		pi->how = res & (1u << KINSTR_R_STATIC_CALL) ? KINSTR_CACHE_NATIVE : KINSTR_CACHE_COPY;
		size = pi->how == KINSTR_CACHE_NATIVE ? JMP_LEN : x->len;
	} else if (res & (1u << KINSTR_R_JUMP_LABEL)) {
		const struct kinstr_cfg_edge *e;
		size_t ne = kinstr_kernel__edges(k, x->addr, x->addr + x->len, &e), j;

		if (jump_label_of(k, o, x->addr, pi))
			return cc_refuse(r, KINSTR_CACHE_R_JUMP_LABEL, x->addr, 0, "a jump label whose key is not known");
		/*
		 * The test clobbers the flags. A jump label in compiled C is an asm goto, and GCC
		 * takes every x86 asm to clobber the flags: dead there whatever the CFG can prove
		 * (its target may be a .cold part, where it assumes all live). The ftrace NOP at the
		 * function's start shows compiled C, as for the module's ABI rule.
		 */
		if (!abi_entry)	/* the module's rule: without it, dead flags there are not proven to it */
			return cc_refuse(r, KINSTR_CACHE_R_JUMP_LABEL, x->addr, 0, "a jump label outside compiled C (no ftrace NOP): the flags may be live there");
		for (j = 0; j < ne; j++)
			if (e[j].to != x->addr + x->len)
				pi->jl_target = e[j].to;
		if (!pi->jl_target)
			return cc_refuse(r, KINSTR_CACHE_R_JUMP_LABEL, x->addr, 0, "a jump label whose target is not known");
		pi->how = KINSTR_CACHE_JUMP_LABEL;
		size = JL_LEN;
	} else if (res & (1u << KINSTR_R_STATIC_CALL)) {
		int tail = 0;

		if (static_call_of(k, o, x->addr, pi, &tail))
			return cc_refuse(r, KINSTR_CACHE_R_STATIC_CALL, x->addr, 0, "a static call whose trampoline is not known");
		pi->tail = !!tail;
		pi->how = KINSTR_CACHE_STATIC_CALL;
		size = tail ? JMP_LEN : PUSHJMP_LEN;
		if (!tail && !fits_imm32(x->addr + x->len))
			return cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a return address beyond a sign-extended imm32");
	} else if (kinstr_x86__out_of_line(x) == KINSTR_OOL_LEAVES) {
		/* the module takes it to fall through (it cannot know where it goes): no map says */
		return cc_refuse(r, KINSTR_CACHE_R_FAR, x->addr, 0, "an iret, sysret or far transfer: control goes where the copy cannot follow");
	} else if (cc_runs_native(x, res)) {
		pi->how = KINSTR_CACHE_NATIVE;
		size = JMP_LEN;
	} else if (x->flow == KINSTR_X86_FLOW_JMP_IND) {
		return cc_refuse(r, KINSTR_CACHE_R_INDIRECT_JMP, x->addr, 0, "a jmp through a register or memory: it may land in the original");
	} else if (x->flow == KINSTR_X86_FLOW_CALL_IND) {
		return cc_refuse(r, KINSTR_CACHE_R_INDIRECT_CALL, x->addr, 0, "a call through a register or memory");
	} else if (x->attr & KINSTR_X86_A_LOOP) {
		return cc_refuse(r, KINSTR_CACHE_R_LOOP, x->addr, 0, "loop/jrcxz: no rel32 form");
	} else if ((x->flow == KINSTR_X86_FLOW_CALL || x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC) &&
		   into_another(k, x->target, fstart, fend)) {
		return cc_refuse(r, KINSTR_CACHE_R_FOREIGN, x->addr, 0,
			      "a branch into another function's middle (asm sharing code between symbols): a copy or splice of it may cover the target");
	} else if (x->flow == KINSTR_X86_FLOW_CALL) {
		if (x->target >= fstart && x->target < fend)
			return cc_refuse(r, KINSTR_CACHE_R_INTERNAL_CALL, x->addr, 0, "a call into the function itself");
		if (!fits_imm32(x->addr + x->len))
			return cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a return address beyond a sign-extended imm32");
		pi->how = KINSTR_CACHE_CALL;
		size = PUSHJMP_LEN;
	} else if (x->flow == KINSTR_X86_FLOW_RET && x->len == 1) {
		unsigned long long to;

		/* a bare ret moves as the kernel's patch_return() would write it there (lib/plan/probe.c too) */
		if (kinstr_kernel__ret_relocation(k, &to))
			return cc_refuse(r, KINSTR_CACHE_R_RETURN, x->addr, 0, "a bare ret that cannot move (%s)",
				      kinstr_kernel__ret_relocation(k, &to) == -EPERM ?
				      "the kernel's return thunk depends on the return's address: ITS" : "no return thunk known");
		pi->jl_target = to;
		pi->how = to ? KINSTR_CACHE_RELOC : KINSTR_CACHE_COPY;
		size = to ? JMP_LEN : 1;
	} else if (x->flow == KINSTR_X86_FLOW_JMP) {
		pi->how = KINSTR_CACHE_RELOC;
		size = JMP_LEN;
	} else if (x->flow == KINSTR_X86_FLOW_JCC) {
		pi->how = KINSTR_CACHE_RELOC;
		size = JCC_LEN;
	} else {
		pi->how = (x->attr & KINSTR_X86_A_RIP_REL) ? KINSTR_CACHE_RELOC : KINSTR_CACHE_COPY;
		size = x->len;
	}
	/* an int3 run after a ret or jmp never runs: part of the block before it, not a block of its own */
	pi->leader = x->addr == entry || ((ci->flags & KINSTR_CFG_I_LEADER) && x->flow != KINSTR_X86_FLOW_INT3);
	pi->size = (uint32_t)size;
	return 0;
}

/* Does control go on to the next instruction of the block, whatever happens (but a BUG)? */
static int stays(const struct kinstr_kernel *k, const struct kinstr_x86_insn *x, const struct plan *pi)
{
	switch (pi->how) {
	case KINSTR_CACHE_CALL:
		return 1;
	case KINSTR_CACHE_STATIC_CALL:
		return !pi->tail;
	case KINSTR_CACHE_NATIVE:	/* an extable fixup, a native jump label may go elsewhere */
		return kinstr_x86__falls_through(x) &&
		       !(kinstr_kernel__reserved(k, x->addr, x->len) & ((1u << KINSTR_R_EXTABLE) | (1u << KINSTR_R_JUMP_LABEL)));
	case KINSTR_CACHE_JUMP_LABEL:
		return 0;
	default:
		return x->flow == KINSTR_X86_FLOW_NEXT;
	}
}

/* Does the copy of the instruction fall on to the next one in the copy (not through the original)? */
static int copy_falls(const struct kinstr_x86_insn *x, const struct plan *pi)
{
	if (pi->how == KINSTR_CACHE_JUMP_LABEL)
		return 1;
	return (pi->how == KINSTR_CACHE_COPY || pi->how == KINSTR_CACHE_RELOC) &&
	       (x->flow == KINSTR_X86_FLOW_NEXT || x->flow == KINSTR_X86_FLOW_JCC);
}

/* May control go on from the instruction to the next in some way (through the original too)? */
static int may_fall(const struct kinstr_kernel *k, const struct kinstr_x86_insn *x, const struct plan *pi)
{
	switch (pi->how) {
	case KINSTR_CACHE_CALL:
	case KINSTR_CACHE_JUMP_LABEL:
		return 1;
	case KINSTR_CACHE_STATIC_CALL:
		return !pi->tail;
	case KINSTR_CACHE_NATIVE:
		return kinstr_x86__falls_through(x) || (kinstr_kernel__reserved(k, x->addr, x->len) & (1u << KINSTR_R_JUMP_LABEL));
	default:
		return copy_falls(x, pi);
	}
}

/*
 * Does one of the kernel's tables send control to a from the original: an exception fixup, or a
 * jump label run there (one the copy tests goes to a's counterpart)? Not from the instructions
 * [lo, hi), a native run whose faults are its own way (as for every fault, the counters do not
 * see a retry), nor a fixup that retries its own instruction (loadsegment's).
 */
static int table_edge_into(const struct kinstr_cfg *cfg, const struct plan *p, size_t first, size_t n,
			   const struct kinstr_cfg_edge *e, size_t ne, uint64_t a, size_t lo, size_t hi)
{
	size_t j;

	for (j = 0; j < ne; j++) {
		int src = kinstr_cfg__find_insn(cfg, e[j].from);

		if (e[j].to != a || e[j].from == e[j].to)
			continue;
		if (src >= 0 && (size_t)src >= first + lo && (size_t)src < first + hi)
			continue;
		if (src < 0 || (size_t)src < first || (size_t)src >= first + n || p[src - first].how == KINSTR_CACHE_NATIVE)
			return 1;
	}
	return 0;
}

/*
 * Does the original itself run into instruction i: i runs natively, and the native instruction
 * before it may fall into it there, or a kernel table sends control to it? Its counterpart in the
 * copy (a jmp back to it) then sees only the copy's branches to it.
 */
static int original_enters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct plan *p,
			   size_t first, size_t n, size_t i, const struct kinstr_cfg_edge *e, size_t ne)
{
	if (p[i].how != KINSTR_CACHE_NATIVE)
		return 0;
	if (i && p[i - 1].how == KINSTR_CACHE_NATIVE && may_fall(k, &kinstr_cfg__insn(cfg, first + i - 1)->x, &p[i - 1]))
		return 1;
	return table_edge_into(cfg, p, first, n, e, ne, kinstr_cfg__insn(cfg, first + i)->x.addr, 0, 0);
}

/*
 * A block the original runs into (filldir64's unsafe_put_user()s: `mov [rdi], r14`, `mov
 * [rdi+0x10], r15w`, each with a fixup, each a block): counted where control comes back into the
 * copy after the native run, the one way every pass takes (a fault inside the run leaves to its
 * fixup uncounted). That is *at: before the next instruction of the run's last block, or the
 * next block's re-entry point, which then (*carried) carries the count before its own. Every
 * block the run holds is passed only by falling from the one before: they share that counter.
 * -EPERM (r says why) where the run may leave otherwise, or a block of it or that point is
 * entered another way too.
 */
static int count_after_native(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct plan *p,
			      size_t first, size_t n, size_t i, const struct kinstr_cfg_edge *e, size_t ne, size_t *at,
			      size_t *carried, struct kinstr_cache_refusal *r)
{
	const struct kinstr_x86_insn *xi = &kinstr_cfg__insn(cfg, first + i)->x;
	size_t s, j;

	for (s = i; s < n && p[s].how == KINSTR_CACHE_NATIVE; s++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + s)->x;

		if (!kinstr_x86__falls_through(x) || (kinstr_kernel__reserved(k, x->addr, x->len) & (1u << KINSTR_R_JUMP_LABEL)))
			return cc_refuse(r, KINSTR_CACHE_R_UNCOUNTED, xi->addr, 0,
				      "a block the original runs into leaves through the original at 0x%llx: no counter can see it",
				      (unsigned long long)x->addr);
	}
	for (j = i + 1; j < s; j++) {
		const struct kinstr_cfg_insn *cj = kinstr_cfg__insn(cfg, first + j);

		if (p[j].leader && ((cj->flags & KINSTR_CFG_I_TARGET) || table_edge_into(cfg, p, first, n, e, ne, cj->x.addr, i, s)))
			return cc_refuse(r, KINSTR_CACHE_R_UNCOUNTED, xi->addr, 0,
				      "a block inside a run the original makes is entered another way too at 0x%llx: no counter sees it alone",
				      (unsigned long long)cj->x.addr);
	}
	if (s == n || p[s].reentry != 1 + KINSTR_CACHE_AFTER_NATIVE || !p[s].fall_re ||
	    table_edge_into(cfg, p, first, n, e, ne, kinstr_cfg__insn(cfg, first + s)->x.addr, i, s))
		return cc_refuse(r, KINSTR_CACHE_R_UNCOUNTED, xi->addr, 0,
			      "a block the original runs into comes back to the copy where other paths do too: no counter sees it alone");
	*at = s;
	*carried = p[s].leader ? s : SIZE_MAX;
	return 0;
}

/*
 * Each block's counter: just before its first instruction where the flags are dead (killed by
 * it, or dead by the ABI), if every instruction before that one stays in the block, so that
 * every pass through the block passes the counter once; else at its start, saving the flags.
 * A block the original runs into is counted after its native run (count_after_native()).
 */
int cc_place_counters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			  size_t n, uint64_t abi_entry, uint64_t fstart, uint64_t fend, struct kinstr_cache_refusal *r)
{
	uint64_t thunk = abi_return_thunk(k);
	const struct kinstr_cfg_edge *e;
	size_t ne = kinstr_kernel__edges(k, fstart, fend, &e);
	size_t i, m;

	for (i = 0; i < n; i = m) {
		size_t at = i, s = i, carried = SIZE_MAX;
		int dead = 0;

		if (original_enters(k, cfg, p, first, n, i, e, ne)) {
			if (count_after_native(k, cfg, p, first, n, i, e, ne, &s, &carried, r))
				return -EPERM;
			for (m = i; m < s; m++)
				p[m].counted_after = p[m].leader;
			if (carried != SIZE_MAX) {	/* the next block's first instruction counts these */
				p[carried].carries = 1;
				for (m = i; m < s; m++)
					if (p[m].leader)
						p[m].count_at = (uint32_t)carried + 1;
				m = carried;
				continue;
			}
			at = s;
		} else {
			/*
			 * A block that starts with instructions the original runs (stac, a faulting load)
			 * may be entered there from the original (an exception fixup): its counter goes
			 * after them, where every pass comes back into the copy.
			 */
			while (s < n && (s == i || !p[s].leader) && p[s].how == KINSTR_CACHE_NATIVE &&
			       stays(k, &kinstr_cfg__insn(cfg, first + s)->x, &p[s]))
				s++;
			if (s < n && s > i && !p[s].leader)
				at = s;
			else
				s = i;
			p[i].counted_after = s > i;
		}
		for (m = i; m < n && (m == i || m < s || !p[m].leader); m++) {
			const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + m)->x;

			if (m < s)	/* the native start, whose blocks (a run the original makes) share the counter */
				continue;
			if (!dead && flags_dead(x, abi_entry, thunk)) {
				dead = 1;
				at = m;
			}
			if (!dead && !stays(k, x, &p[m]))
				dead = -1;	/* the counter stays at the start */
		}
		p[at].counter = 1;
		p[at].saves_flags = dead != 1;
		p[at].size += COUNTER_LEN + 2 * p[at].saves_flags;
		for (s = i; s < at; s++)
			if (p[s].leader && p[s].counted_after)
				p[s].count_at = (uint32_t)at + 1;
	}
	return 0;
}

/* Mark re-entry point i (why), unless it runs natively; 1 if marked. */
int cc_mark(struct plan *p, size_t n, size_t i, int why)
{
	if (i >= n || p[i].reentry || p[i].how == KINSTR_CACHE_NATIVE)
		return 0;
	p[i].reentry = 1 + why;
	return 1;
}

/*
 * A re-entry point on a jump label or a static call cannot be spliced (the kernel rewrites it):
 * the original runs it too, and control comes back after it, and at a jump label's target.
 */
static void go_native(const struct kinstr_cfg *cfg, struct plan *p, size_t first, size_t n, size_t i)
{
	uint32_t old = p[i].size - (p[i].how == KINSTR_CACHE_JUMP_LABEL ? JL_LEN :
				     p[i].how == KINSTR_CACHE_STATIC_CALL ? (p[i].tail ? JMP_LEN : PUSHJMP_LEN) : 0);

	if (p[i].how == KINSTR_CACHE_JUMP_LABEL) {
		int t = kinstr_cfg__find_insn(cfg, p[i].jl_target);

		if (t >= 0 && (size_t)t >= first)
			cc_mark(p, n, (size_t)t - first, KINSTR_CACHE_AFTER_NATIVE);
	}
	p[i].how = KINSTR_CACHE_NATIVE;
	p[i].reentry = 0;
	p[i].fall_re = 0;
	p[i].size = old + JMP_LEN;
}

/* Mark where control comes back from the original: entry, returns, after native runs, fixups. */
void cc_plan_reentries(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			   size_t n, uint64_t entry)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct kinstr_cfg_insn *ci = kinstr_cfg__insn(cfg, first + i);
		int nat = p[i].how == KINSTR_CACHE_NATIVE;

		if (ci->x.addr == entry) {
			p[i].reentry = 1 + KINSTR_CACHE_ENTRY;
			p[i].fall_re = 1;
		}
		if (i + 1 < n && (p[i + 1].how == KINSTR_CACHE_JUMP_LABEL || p[i + 1].how == KINSTR_CACHE_STATIC_CALL) &&
		    (p[i].how == KINSTR_CACHE_CALL || (p[i].how == KINSTR_CACHE_STATIC_CALL && !p[i].tail) ||
		     (nat && kinstr_x86__falls_through(&ci->x))))
			go_native(cfg, p, first, n, i + 1);
		if (i + 1 < n && !p[i + 1].reentry && p[i + 1].how != KINSTR_CACHE_NATIVE) {
			if (p[i].how == KINSTR_CACHE_CALL || (p[i].how == KINSTR_CACHE_STATIC_CALL && !p[i].tail))
				p[i + 1].reentry = 1 + KINSTR_CACHE_RETURN;
			else if (nat && kinstr_x86__falls_through(&ci->x))
				p[i + 1].reentry = 1 + KINSTR_CACHE_AFTER_NATIVE;
			p[i + 1].fall_re = !!p[i + 1].reentry;
		}
		if (kinstr_kernel__reserved(k, ci->x.addr, ci->x.len) & (1u << KINSTR_R_EXTABLE)) {
			const struct kinstr_cfg_edge *e;
			size_t ne = kinstr_kernel__edges(k, ci->x.addr, ci->x.addr + ci->x.len, &e), j;

			for (j = 0; j < ne; j++) {
				int t = kinstr_cfg__find_insn(cfg, e[j].to);

				if (t >= 0 && (size_t)t >= first && (size_t)t < first + n && !p[t - first].reentry &&
				    p[t - first].how != KINSTR_CACHE_NATIVE)
					p[t - first].reentry = 1 + KINSTR_CACHE_FIXUP;
			}
		}
	}
}

/* Edge ne (*ne then one more), its counter the nb-th after the blocks'; returns that counter. */
static uint32_t edge_add(struct kinstr_cache_edge *e, size_t *ne, size_t nb, uint32_t from, uint32_t to, int kind,
			 size_t insn)
{
	e[*ne] = (struct kinstr_cache_edge){ .from = from, .to = to, .kind = (uint8_t)kind, .insn = (uint32_t)insn,
					     .counter = (uint32_t)(nb + *ne) };
	return e[(*ne)++].counter;
}

/*
 * The edges and where their counters go (blocks numbered already): into each leader that the
 * previous instruction falls into, through the copy or back from the original at a re-entry
 * point that continues the path (its splice then lands on this counter); out of each block's
 * last instruction when it branches or leaves (a conditional branch's taken way, a jmp, a
 * return). What the counters cannot see marks the blocks: entered from the original elsewhere
 * (an exception fixup, a jump label run natively), left through a native instruction or not at all.
 * e has room for 2n edges; its counters are numbered after the nb blocks'.
 */
size_t cc_plan_edges(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			 size_t n, uint64_t abi_entry, size_t nb, struct kinstr_cache_edge *e, uint8_t *unseen)
{
	uint64_t thunk = abi_return_thunk(k);
	const struct kinstr_cfg_insn *c0 = kinstr_cfg__insn(cfg, first), *cn = kinstr_cfg__insn(cfg, first + n - 1);
	const struct kinstr_cfg_edge *he;
	size_t i, j, ne = 0, nhe;

	/* where the kernel's tables send control (exception fixups, jump labels): from the original */
	nhe = kinstr_kernel__edges(k, c0->x.addr, cn->x.addr + cn->x.len, &he);
	for (j = 0; j < nhe; j++) {
		int t = kinstr_cfg__find_insn(cfg, he[j].to);

		if (t >= 0 && (size_t)t >= first && (size_t)t < first + n)
			unseen[p[t - first].block] |= KINSTR_CACHE_B_IN_UNSEEN;
	}
	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
		struct plan *pi = &p[i];
		uint32_t b = pi->block;

		if (pi->reentry && !pi->fall_re)
			unseen[b] |= KINSTR_CACHE_B_IN_UNSEEN;
		if (pi->leader) {
			const struct kinstr_x86_insn *px = i ? &kinstr_cfg__insn(cfg, first + i - 1)->x : NULL;

			pi->edge = (uint32_t)ne;
			if (!i || (px && (copy_falls(px, &p[i - 1]) || (pi->fall_re && may_fall(k, px, &p[i - 1]))))) {
				pi->in_ctr = edge_add(e, &ne, nb, i ? p[i - 1].block : KINSTR_CACHE_OUTSIDE, b,
						      i ? KINSTR_CACHE_EDGE_FALL : KINSTR_CACHE_EDGE_ENTRY, i);
				pi->edges |= KINSTR_CACHE_I_EDGE_IN |
					     (flags_dead(x, abi_entry, thunk) ? 0 : KINSTR_CACHE_I_EDGE_IN_PUSHF);
				pi->size += COUNTER_LEN + 2 * !flags_dead(x, abi_entry, thunk);
			} else if (px && may_fall(k, px, &p[i - 1])) {
				unseen[b] |= KINSTR_CACHE_B_IN_UNSEEN;	/* a way in no counter sees */
				unseen[p[i - 1].block] |= KINSTR_CACHE_B_OUT_UNSEEN;
			}
		}
		if (x->flow == KINSTR_X86_FLOW_INT3)
			continue;	/* an SLS guard: never runs */
		/* the block's last instruction, SLS int3s aside? */
		for (j = i + 1; j < n && !p[j].leader && kinstr_cfg__insn(cfg, first + j)->x.flow == KINSTR_X86_FLOW_INT3; j++)
			;
		if (j < n && !p[j].leader) {
			if (!stays(k, x, pi))	/* it may leave the block before its end */
				unseen[b] |= KINSTR_CACHE_B_OUT_UNSEEN;
			continue;
		}
		if ((pi->how == KINSTR_CACHE_RELOC && (x->flow == KINSTR_X86_FLOW_JCC || x->flow == KINSTR_X86_FLOW_JMP)) ||
		    pi->how == KINSTR_CACHE_JUMP_LABEL) {
			uint64_t t = pi->how == KINSTR_CACHE_JUMP_LABEL ? pi->jl_target : x->target;
			int ti = kinstr_cfg__find_insn(cfg, t);
			int cond = pi->how == KINSTR_CACHE_JUMP_LABEL || x->flow == KINSTR_X86_FLOW_JCC;
			int in = ti >= 0 && (size_t)ti >= first && (size_t)ti < first + n;

			if (!pi->leader || !(pi->edges & KINSTR_CACHE_I_EDGE_IN))
				pi->edge = (uint32_t)ne;
			pi->out_ctr = edge_add(e, &ne, nb, b, in ? p[ti - first].block : KINSTR_CACHE_OUTSIDE,
					       in ? KINSTR_CACHE_EDGE_TAKEN : KINSTR_CACHE_EDGE_EXIT, i);
			if (cond) {	/* j<not cc> rel8 over pushfq; counter; popfq; jmp: the taken way */
				pi->edges |= KINSTR_CACHE_I_EDGE_OUT | KINSTR_CACHE_I_EDGE_OUT_PUSHF;
				pi->size += EDGE_JCC_LEN - (pi->how == KINSTR_CACHE_JUMP_LABEL ? JL_LEN - CMPL_LEN : JCC_LEN);
			} else {
				pi->edges |= KINSTR_CACHE_I_EDGE_OUT | (flags_dead(x, abi_entry, thunk) ? 0 : KINSTR_CACHE_I_EDGE_OUT_PUSHF);
				pi->size += COUNTER_LEN + 2 * !flags_dead(x, abi_entry, thunk);
			}
		} else if (x->flow == KINSTR_X86_FLOW_RET || (pi->how == KINSTR_CACHE_STATIC_CALL && pi->tail)) {
			if (!pi->leader || !(pi->edges & KINSTR_CACHE_I_EDGE_IN))
				pi->edge = (uint32_t)ne;
			pi->out_ctr = edge_add(e, &ne, nb, b, KINSTR_CACHE_OUTSIDE, KINSTR_CACHE_EDGE_EXIT, i);
			pi->edges |= KINSTR_CACHE_I_EDGE_OUT | (flags_dead(x, abi_entry, thunk) ? 0 : KINSTR_CACHE_I_EDGE_OUT_PUSHF);
			pi->size += COUNTER_LEN + 2 * !flags_dead(x, abi_entry, thunk);
		} else if ((pi->how == KINSTR_CACHE_NATIVE && !stays(k, x, pi)) || !may_fall(k, x, pi) || j == n) {
			/* through the original (a fixup, a jump label), or no exit at all (noreturn, a BUG) */
			unseen[b] |= KINSTR_CACHE_B_OUT_UNSEEN;
		}
	}
	return ne;
}

/*
 * A leader that carries the block before it (count_after_native()): the counter before it all,
 * reached only through its re-entry point, counts that block. With edge counters it is already
 * there, the edge falling in from that block: its count is the block's. Else it is put there on
 * that block's own counter.
 */
int cc_carry_counters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			  size_t n, uint64_t abi_entry, int edges, struct kinstr_cache_refusal *r)
{
	uint64_t thunk = abi_return_thunk(k);
	size_t i;

	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
		int pf;

		if (!p[i].carries)
			continue;
		if (edges) {
			if (!(p[i].edges & KINSTR_CACHE_I_EDGE_IN) || !p[i].fall_re)
				return cc_refuse(r, KINSTR_CACHE_R_UNCOUNTED, x->addr, 0,
					      "no edge counter where the block before it comes back from the original");
			continue;
		}
		pf = !flags_dead(x, abi_entry, thunk);
		p[i].edges |= KINSTR_CACHE_I_EDGE_IN | (pf ? KINSTR_CACHE_I_EDGE_IN_PUSHF : 0);
		p[i].in_ctr = p[i - 1].block;	/* the run's last block's (the others share it) */
		p[i].size += COUNTER_LEN + 2 * pf;
	}
	return 0;
}
