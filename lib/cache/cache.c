// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The code cache's builder (include/kinstr/cache.h): an instrumented copy of one function. Two
 * passes over the CFG's instructions: the first decides how each appears in the copy and so its
 * size, which places every block's counter and every instruction; the second writes the bytes,
 * now that every branch inside the function knows where its target went.
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

struct kinstr_cache_fn {
	uint64_t copy_addr;
	uint8_t *bytes;
	size_t size;
	struct kinstr_cache_insn *insns;
	size_t nr_insns;
	struct kinstr_cache_block *blocks;
	size_t nr_blocks;
	struct kinstr_cache_reentry *reentries;
	size_t nr_reentries;
	struct kinstr_cache_edge *edges;
	size_t nr_edges;
};

/* Sizes of what the copy holds besides copied instructions. */
#define COUNTER_LEN	16	/* push %rax; movabs $c, %rax; incq %gs:(%rax); pop %rax */
#define PUSHJMP_LEN	10	/* push $imm32; jmp rel32 */
#define JMP_LEN		5
#define JCC_LEN		6
#define JL_LEN		13	/* cmpl $0, disp32(%rip); jg/jle rel32 */
#define CMPL_LEN	7	/* cmpl $0, disp32(%rip) */
/* a conditional branch with its taken edge counted: j<not cc> rel8 over pushfq; counter; popfq; jmp */
#define EDGE_JCC_LEN	(2 + COUNTER_LEN + 2 + JMP_LEN)

/* Reservations that refuse the whole function: its text is not for a copy at all. */
#define POLICY_REASONS ((1u << KINSTR_R_NOT_TEXT) | (1u << KINSTR_R_OWN_MODULE) | (1u << KINSTR_R_ENTRY_TEXT) | \
			(1u << KINSTR_R_NOINSTR_TEXT) | (1u << KINSTR_R_KPROBES_TEXT) |                    \
			(1u << KINSTR_R_KPROBE_BLACKLIST) | (1u << KINSTR_R_CFI_SYMBOL) |                  \
			(1u << KINSTR_R_UNVERIFIABLE) | (1u << KINSTR_R_MODULE_STATE) |                    \
			(1u << KINSTR_R_HIT_PATH) | (1u << KINSTR_R_DIE_NOTIFIER))
/* ... and those an instruction of the copy cannot hold: the kernel may rewrite the original's. */
#define REWRITTEN_REASONS ((1u << KINSTR_R_ALTERNATIVE) | (1u << KINSTR_R_KPROBE) | (1u << KINSTR_R_FTRACE))

/* What the first pass decides per instruction. */
struct plan {
	uint8_t how;
	uint8_t leader;		/* starts a block of the copy */
	uint8_t counter;	/* its block's counter goes just before it */
	uint8_t saves_flags;	/* ... and saves the flags */
	uint8_t reentry;	/* 1 + enum kinstr_cache_why, or 0 */
	uint8_t tail;		/* STATIC_CALL: a tail call */
	uint8_t carries;	/* a leader whose re-entry point counts the block before it (count_after_native()) */
	uint8_t counted_after;	/* a leader whose block is counted after its native start */
	uint32_t count_at;	/* ... by the counter before instruction count_at - 1 (0: its own) */
	int jl_branch;		/* JUMP_LABEL: the entry's branch bit */
	uint64_t aux;		/* JUMP_LABEL: the key; STATIC_CALL: the trampoline */
	uint64_t jl_target;	/* JUMP_LABEL: where the jump goes when taken; a moved bare ret: its thunk */
	uint64_t copy;		/* where the instruction starts in the copy */
	uint32_t size;		/* its bytes in the copy, its counters' included */
	uint32_t block;
	/* edges (KINSTR_CACHE_F_EDGES) */
	uint8_t fall_re;	/* its re-entry point continues a path: falls into it (entry, return, after native) */
	uint8_t edges;		/* KINSTR_CACHE_I_EDGE_* */
	uint32_t edge;		/* its first edge's index */
	uint32_t in_ctr, out_ctr;	/* their counters' indices */
};

static unsigned int edge_in_len(const struct plan *pi)
{
	return pi->edges & KINSTR_CACHE_I_EDGE_IN ? COUNTER_LEN + 2 * !!(pi->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF) : 0;
}

static int refuse(struct kinstr_cache_refusal *r, int code, uint64_t addr, uint32_t reserved, const char *fmt, ...)
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

static int fits_rel32(uint64_t from_end, uint64_t to)
{
	int64_t d = (int64_t)(to - from_end);

	return d >= INT32_MIN && d <= INT32_MAX;
}

static int fits_imm32(uint64_t v)
{
	return (uint64_t)(int64_t)(int32_t)v == v;
}

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

static uint8_t *emit_rel32(uint8_t *b, uint64_t at, const uint8_t *op, unsigned int oplen, uint64_t target)
{
	memcpy(b, op, oplen);
	put32(b + oplen, (int32_t)(target - (at + oplen + 4)));
	return b + oplen + 4;
}

/* The counter of block idx at b (copy address at). */
static uint8_t *emit_counter(uint8_t *b, uint64_t counters, uint32_t idx, int saves_flags)
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
static int jcc_cond(const struct kinstr_x86_insn *x)
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

static int runs_native(const struct kinstr_x86_insn *x, uint32_t reserved)
{
	int ool = kinstr_x86__out_of_line(x);

	if (reserved & ((1u << KINSTR_R_EXTABLE) | (1u << KINSTR_R_BUG)))
		return 1;
	return ool == KINSTR_OOL_UD || ool == KINSTR_OOL_IF || ool == KINSTR_OOL_LEAVES || ool == KINSTR_OOL_SYSTEM;
}

/* Where the copy is entered: after the ftrace NOP at the start (after any ENDBR), else there. */
static uint64_t entry_of(const struct kinstr_kernel *k, const struct kinstr_func *f)
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
static uint64_t copy_of(const struct plan *p, const struct kinstr_cfg *cfg, size_t first, size_t n, uint64_t a)
{
	int i = kinstr_cfg__find_insn(cfg, a);

	if (i < 0 || (size_t)i < first || (size_t)i >= first + n)
		return 0;
	return p[i - first].copy + edge_in_len(&p[i - first]);
}

/* Is a re-entry point's 5-byte jmp clear of what must stay: reservations, native code, other points? */
static int reentry_jump_fits(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct plan *p,
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

static int plan_insn(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o,
		     struct plan *p, size_t first, size_t i, uint64_t entry, uint64_t abi_entry, uint64_t fstart, uint64_t fend, struct kinstr_cache_refusal *r)
{
	const struct kinstr_cfg_insn *ci = kinstr_cfg__insn(cfg, first + i);
	const struct kinstr_x86_insn *x = &ci->x;
	uint32_t res = kinstr_kernel__reserved(k, x->addr, x->len);
	struct plan *pi = &p[i];
	size_t size;

	if (ci->flags & (KINSTR_CFG_I_INVALID | KINSTR_CFG_I_BAD_TARGET))
		return refuse(r, KINSTR_CACHE_R_UNDECODABLE, x->addr, 0, "bytes that do not decode, or a branch into an instruction");
	if (emulate_prefix(k, x))
		return refuse(r, KINSTR_CACHE_R_UNDECODABLE, x->addr, 0,
			      "a ud2 with 'xen' or 'kvm' after it: the kernel's decoder reads it as a prefix of the next instruction");
	if (x->attr & KINSTR_X86_A_ENDBR)
		return refuse(r, KINSTR_CACHE_R_ENDBR, x->addr, 0, "an ENDBR inside the function: an indirect branch may land in the original");
	if (res & REWRITTEN_REASONS)
		return refuse(r, KINSTR_CACHE_R_RESERVED, x->addr, res & REWRITTEN_REASONS,
			      "an instruction the kernel may rewrite in the original");
	if (x->flow == KINSTR_X86_FLOW_INT3) {
		/* an SLS guard after a ret or jmp runs never; any other int3 may be someone's breakpoint */
		const struct kinstr_cfg_insn *prev = i ? kinstr_cfg__insn(cfg, first + i - 1) : NULL;

		if (!prev || kinstr_x86__falls_through(&prev->x) || (ci->flags & KINSTR_CFG_I_TARGET))
			return refuse(r, KINSTR_CACHE_R_INT3, x->addr, 0, "an int3 that may run: someone's breakpoint");
		/* the fill of a NULL tail static call (`ret; int3 x4`): the site's bytes, for the kernel to rewrite */
		pi->how = res & (1u << KINSTR_R_STATIC_CALL) ? KINSTR_CACHE_NATIVE : KINSTR_CACHE_COPY;
		size = pi->how == KINSTR_CACHE_NATIVE ? JMP_LEN : x->len;
	} else if (res & (1u << KINSTR_R_JUMP_LABEL)) {
		const struct kinstr_cfg_edge *e;
		size_t ne = kinstr_kernel__edges(k, x->addr, x->addr + x->len, &e), j;

		if (jump_label_of(k, o, x->addr, pi))
			return refuse(r, KINSTR_CACHE_R_JUMP_LABEL, x->addr, 0, "a jump label whose key is not known");
		/*
		 * The test clobbers the flags. A jump label in compiled C is an asm goto, and GCC
		 * takes every x86 asm to clobber the flags: dead there whatever the CFG can prove
		 * (its target may be a .cold part, where it assumes all live). The ftrace NOP at the
		 * function's start shows compiled C, as for the module's ABI rule.
		 */
		if (!abi_entry)	/* the module's rule: without it, dead flags there are not proven to it */
			return refuse(r, KINSTR_CACHE_R_JUMP_LABEL, x->addr, 0, "a jump label outside compiled C (no ftrace NOP): the flags may be live there");
		for (j = 0; j < ne; j++)
			if (e[j].to != x->addr + x->len)
				pi->jl_target = e[j].to;
		if (!pi->jl_target)
			return refuse(r, KINSTR_CACHE_R_JUMP_LABEL, x->addr, 0, "a jump label whose target is not known");
		pi->how = KINSTR_CACHE_JUMP_LABEL;
		size = JL_LEN;
	} else if (res & (1u << KINSTR_R_STATIC_CALL)) {
		int tail = 0;

		if (static_call_of(k, o, x->addr, pi, &tail))
			return refuse(r, KINSTR_CACHE_R_STATIC_CALL, x->addr, 0, "a static call whose trampoline is not known");
		pi->tail = !!tail;
		pi->how = KINSTR_CACHE_STATIC_CALL;
		size = tail ? JMP_LEN : PUSHJMP_LEN;
		if (!tail && !fits_imm32(x->addr + x->len))
			return refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a return address beyond a sign-extended imm32");
	} else if (kinstr_x86__out_of_line(x) == KINSTR_OOL_LEAVES) {
		/* the module takes it to fall through (it cannot know where it goes): no map says */
		return refuse(r, KINSTR_CACHE_R_FAR, x->addr, 0, "an iret, sysret or far transfer: control goes where the copy cannot follow");
	} else if (runs_native(x, res)) {
		pi->how = KINSTR_CACHE_NATIVE;
		size = JMP_LEN;
	} else if (x->flow == KINSTR_X86_FLOW_JMP_IND) {
		return refuse(r, KINSTR_CACHE_R_INDIRECT_JMP, x->addr, 0, "a jmp through a register or memory: it may land in the original");
	} else if (x->flow == KINSTR_X86_FLOW_CALL_IND) {
		return refuse(r, KINSTR_CACHE_R_INDIRECT_CALL, x->addr, 0, "a call through a register or memory");
	} else if (x->attr & KINSTR_X86_A_LOOP) {
		return refuse(r, KINSTR_CACHE_R_LOOP, x->addr, 0, "loop/jrcxz: no rel32 form");
	} else if ((x->flow == KINSTR_X86_FLOW_CALL || x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC) &&
		   into_another(k, x->target, fstart, fend)) {
		return refuse(r, KINSTR_CACHE_R_FOREIGN, x->addr, 0,
			      "a branch into another function's middle (asm sharing code between symbols): a copy or splice of it may cover the target");
	} else if (x->flow == KINSTR_X86_FLOW_CALL) {
		if (x->target >= fstart && x->target < fend)
			return refuse(r, KINSTR_CACHE_R_INTERNAL_CALL, x->addr, 0, "a call into the function itself");
		if (!fits_imm32(x->addr + x->len))
			return refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a return address beyond a sign-extended imm32");
		pi->how = KINSTR_CACHE_CALL;
		size = PUSHJMP_LEN;
	} else if (x->flow == KINSTR_X86_FLOW_RET && x->len == 1) {
		unsigned long long to;

		/* a bare ret moves as the kernel's patch_return() would write it there (lib/plan/probe.c too) */
		if (kinstr_kernel__ret_relocation(k, &to))
			return refuse(r, KINSTR_CACHE_R_RETURN, x->addr, 0, "a bare ret that cannot move (%s)",
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
			return refuse(r, KINSTR_CACHE_R_UNCOUNTED, xi->addr, 0,
				      "a block the original runs into leaves through the original at 0x%llx: no counter can see it",
				      (unsigned long long)x->addr);
	}
	for (j = i + 1; j < s; j++) {
		const struct kinstr_cfg_insn *cj = kinstr_cfg__insn(cfg, first + j);

		if (p[j].leader && ((cj->flags & KINSTR_CFG_I_TARGET) || table_edge_into(cfg, p, first, n, e, ne, cj->x.addr, i, s)))
			return refuse(r, KINSTR_CACHE_R_UNCOUNTED, xi->addr, 0,
				      "a block inside a run the original makes is entered another way too at 0x%llx: no counter sees it alone",
				      (unsigned long long)cj->x.addr);
	}
	if (s == n || p[s].reentry != 1 + KINSTR_CACHE_AFTER_NATIVE || !p[s].fall_re ||
	    table_edge_into(cfg, p, first, n, e, ne, kinstr_cfg__insn(cfg, first + s)->x.addr, i, s))
		return refuse(r, KINSTR_CACHE_R_UNCOUNTED, xi->addr, 0,
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
static int place_counters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
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
static int mark(struct plan *p, size_t n, size_t i, int why)
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
			mark(p, n, (size_t)t - first, KINSTR_CACHE_AFTER_NATIVE);
	}
	p[i].how = KINSTR_CACHE_NATIVE;
	p[i].reentry = 0;
	p[i].fall_re = 0;
	p[i].size = old + JMP_LEN;
}

/* Mark where control comes back from the original: entry, returns, after native runs, fixups. */
static void plan_reentries(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
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
static size_t plan_edges(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
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
static int carry_counters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
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
				return refuse(r, KINSTR_CACHE_R_UNCOUNTED, x->addr, 0,
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

/*
 * A conditional branch whose taken way is counted: [cmpl $0, key(%rip)] j<not cc> rel8 over
 * pushfq; counter; popfq; jmp rel32 target. A jump label is taken when enabled XOR its branch
 * bit (jg, or jle with the bit): not taken on jle, or jg with the bit.
 */
static int emit_edge_jcc(const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o, const struct plan *p,
			 size_t first, size_t n, size_t i, uint8_t *b, uint64_t at, struct kinstr_cache_refusal *r)
{
	const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
	const struct plan *pi = &p[i];
	int jl = pi->how == KINSTR_CACHE_JUMP_LABEL;
	uint64_t to = jl ? pi->jl_target : x->target, t = copy_of(p, cfg, first, n, to);
	static const uint8_t jmp[] = { 0xe9 };

	if (!t)
		t = to;
	if (jl) {
		b[0] = 0x83;
		b[1] = 0x3d;
		put32(b + 2, (int32_t)(pi->aux - (at + CMPL_LEN)));
		b[6] = 0;
		if (!fits_rel32(at + CMPL_LEN, pi->aux))
			return refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a jump label's key beyond rel32 reach");
		b += CMPL_LEN;
		at += CMPL_LEN;
	}
	b[0] = jl ? (pi->jl_branch ? 0x7f : 0x7e) : (uint8_t)(0x70 | (jcc_cond(x) ^ 1));
	b[1] = COUNTER_LEN + 2 + JMP_LEN;
	b = emit_counter(b + 2, o->counters, pi->out_ctr, 1);
	at += 2 + COUNTER_LEN + 2;
	emit_rel32(b, at, jmp, 1, t);
	return fits_rel32(at + JMP_LEN, t) ? 0 :
	       refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a branch target beyond rel32 reach of the copy");
}

static int emit_insn(const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o, const struct plan *p, size_t first,
		     size_t n, size_t i, uint8_t *b, struct kinstr_cache_refusal *r)
{
	const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
	const struct plan *pi = &p[i];
	uint64_t at = pi->copy, t;
	static const uint8_t jmp[] = { 0xe9 }, push[] = { 0x68 };
	struct kinstr_reloc rl;

	if (pi->edges & KINSTR_CACHE_I_EDGE_IN) {
		b = emit_counter(b, o->counters, pi->in_ctr, !!(pi->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF));
		at += edge_in_len(pi);
	}
	if (pi->counter) {
		b = emit_counter(b, o->counters, pi->block, pi->saves_flags);
		at += COUNTER_LEN + 2 * pi->saves_flags;
	}
	if (pi->edges & KINSTR_CACHE_I_EDGE_OUT) {
		int jl = pi->how == KINSTR_CACHE_JUMP_LABEL, pf = !!(pi->edges & KINSTR_CACHE_I_EDGE_OUT_PUSHF);

		if (jl || x->flow == KINSTR_X86_FLOW_JCC)
			return emit_edge_jcc(cfg, o, p, first, n, i, b, at, r);
		b = emit_counter(b, o->counters, pi->out_ctr, pf);	/* then the jmp, ret or tail call */
		at += COUNTER_LEN + 2 * pf;
	}
	switch (pi->how) {
	case KINSTR_CACHE_NATIVE:
		emit_rel32(b, at, jmp, 1, x->addr);
		return fits_rel32(at + JMP_LEN, x->addr) ? 0 :
		       refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "the original beyond rel32 reach of the copy");
	case KINSTR_CACHE_CALL:
	case KINSTR_CACHE_STATIC_CALL:
		t = pi->how == KINSTR_CACHE_CALL ? x->target : pi->aux;
		if (!pi->tail) {
			b[0] = push[0];
			put32(b + 1, (int32_t)(x->addr + x->len));
			b += 5;
			at += 5;
		}
		emit_rel32(b, at, jmp, 1, t);
		return fits_rel32(at + JMP_LEN, t) ? 0 :
		       refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a call target beyond rel32 reach of the copy");
	case KINSTR_CACHE_JUMP_LABEL: {
		/* cmpl $0, key(%rip): enabled when the count is > 0; jg when taken on enabled, else jle */
		uint8_t cond[] = { 0x0f, pi->jl_branch ? 0x8e : 0x8f };

		t = copy_of(p, cfg, first, n, pi->jl_target);
		if (!t)
			t = pi->jl_target;
		b[0] = 0x83;
		b[1] = 0x3d;
		put32(b + 2, (int32_t)(pi->aux - (at + 7)));
		b[6] = 0;
		if (!fits_rel32(at + 7, pi->aux) || !fits_rel32(at + JL_LEN, t))
			return refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a jump label's key or target beyond rel32 reach");
		emit_rel32(b + 7, at + 7, cond, 2, t);
		return 0;
	}
	default:
		break;
	}
	if (x->flow == KINSTR_X86_FLOW_RET && pi->jl_target) {	/* a bare ret, as jmp to the thunk */
		emit_rel32(b, at, jmp, 1, pi->jl_target);
		return fits_rel32(at + JMP_LEN, pi->jl_target) ? 0 :
		       refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "the return thunk beyond rel32 reach of the copy");
	}
	if (x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC) {
		uint8_t cond[] = { 0x0f, (uint8_t)(0x80 | jcc_cond(x)) };

		t = copy_of(p, cfg, first, n, x->target);
		if (!t)
			t = x->target;
		if (x->flow == KINSTR_X86_FLOW_JMP)
			emit_rel32(b, at, jmp, 1, t);
		else
			emit_rel32(b, at, cond, 2, t);
		return fits_rel32(at + (x->flow == KINSTR_X86_FLOW_JMP ? JMP_LEN : JCC_LEN), t) ? 0 :
		       refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a branch target beyond rel32 reach of the copy");
	}
	if (x->flow == KINSTR_X86_FLOW_INT3) {
		memcpy(b, x->bytes, x->len);
		return 0;
	}
	/* copied, or a RIP-relative operand re-aimed: the relocator's rules (and its refusals) */
	if (kinstr_reloc__run(&rl, x->bytes, x->len, x->addr, b, x->len, at) || rl.out_len != x->len)
		return refuse(r, rl.reason == KINSTR_RELOC_OUT_OF_RANGE ? KINSTR_CACHE_R_RANGE : KINSTR_CACHE_R_UNDECODABLE,
			      x->addr, 0, "%s", kinstr_reloc__why(&rl));
	return 0;
}

/* int3 or a NOP (90, 0f 1f /0, with 66 or 2e prefixes): what the module takes for padding */
static int is_pad(const struct kinstr_x86_insn *x)
{
	unsigned int i = 0;

	while (i < x->len && (x->bytes[i] == 0x66 || x->bytes[i] == 0x2e))
		i++;
	if (i == x->len)
		return 0;
	if (x->len == 1 && x->bytes[0] == 0xcc)
		return 1;
	return x->bytes[i] == 0x90 || (i + 1 < x->len && x->bytes[i] == 0x0f && x->bytes[i + 1] == 0x1f);
}

/* Is f in [START, END) of the kernel's symbols (when the view has both)? */
static int between(const struct kinstr_kernel *k, const struct kinstr_func *f, const char *start, const char *end)
{
	const struct kinstr_func *s = kinstr_kernel__find_func(k, start), *e = kinstr_kernel__find_func(k, end);

	return s && e && f->addr >= s->addr && f->addr < e->addr;
}

static int in_sched_text(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	return between(k, f, "__sched_text_start", "__sched_text_end") ||
	       between(k, f, "__lock_text_start", "__lock_text_end");
}

/* GCC's .cold part of f ("f.cold"), a symbol of its own whose jumps come back into f's middle. */
static int name_has_cold_part(const struct kinstr_kernel *k, const char *fname)
{
	char name[512];

	if (strlen(fname) + 6 > sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%s.cold", fname);
	/* by name, as the module asks kallsyms: any function's of that name (duplicates too) */
	return kinstr_kernel__lookup(k, name, NULL, 0) > 0;
}

/* f, or an alias at its address (the module names whichever kallsyms gives: init_module's virtio_init) */
static int has_cold_part(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	const struct kinstr_func *g = kinstr_kernel__func_at(k, f->addr);
	size_t i, n = kinstr_kernel__func_cnt(k);

	if (name_has_cold_part(k, f->name))
		return 1;
	if (!g)
		return 0;
	for (i = (size_t)(g - kinstr_kernel__func(k, 0)); i && kinstr_kernel__func(k, i - 1)->addr == f->addr; i--)
		;
	for (; i < n && kinstr_kernel__func(k, i)->addr == f->addr; i++)
		if (name_has_cold_part(k, kinstr_kernel__func(k, i)->name))
			return 1;
	return 0;
}

/*
 * Does control fall off the function's last instruction into whatever follows (an asm function
 * whose next label is a symbol of its own: __put_user_1 into __put_user_nocheck_1)? The
 * module's rule (kmod/cache.c, check_function): the code ends on a ret, a jmp, an indirect
 * branch, an int3, a call (noreturn) or a BUG's ud2.
 */
static int runs_off_end(const struct kinstr_x86_insn *x)
{
	switch (x->flow) {
	case KINSTR_X86_FLOW_JMP: case KINSTR_X86_FLOW_JMP_IND: case KINSTR_X86_FLOW_CALL:
	case KINSTR_X86_FLOW_CALL_IND: case KINSTR_X86_FLOW_INT3:
		return 0;
	case KINSTR_X86_FLOW_UD2:	/* ud2 only: the kernel's BUG */
		return !(x->len == 2 && x->bytes[0] == 0x0f && x->bytes[1] == 0x0b);
	case KINSTR_X86_FLOW_RET:	/* the module's own reading: a bare ret */
		return !(x->len == 1 && x->bytes[0] == 0xc3);
	default:
		return 1;
	}
}

/* A function's .cold part itself: entered and left by jumps from and to its function. */
static int is_cold_part(const struct kinstr_func *f)
{
	const char *c = strstr(f->name, ".cold");

	return c && (c[5] == 0 || c[5] == '.');
}

struct kinstr_cache_fn *kinstr_cache_fn__build(const struct kinstr_kernel *k, const struct kinstr_func *f,
					       uint64_t copy_addr, const struct kinstr_cache_opts *opts,
					       struct kinstr_cache_refusal *r)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o) };
	struct kinstr_cache_fn *c = NULL;
	const struct kinstr_cfg *cfg;
	struct kinstr_fn *fn = NULL;
	struct plan *p = NULL;
	struct kinstr_cache_edge *edges = NULL;
	uint8_t *unseen = NULL;
	uint64_t entry, abi_entry, code_end, at, pre[8];
	size_t first, n, i, nb = 0, nr = 0, total = 0, npre = 0, ne = 0;
	uint32_t res;
	int e;

	if (r)
		memset(r, 0, sizeof(*r));
	if (!k || !f || (opts && opts->sz < sizeof(size_t))) {
		errno = EINVAL;
		return NULL;
	}
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (kinstr_kernel__reserved(k, f->addr, f->size) & (1u << KINSTR_R_HELD)) {
		refuse(r, KINSTR_CACHE_R_HELD, f->addr, 1u << KINSTR_R_HELD,
		       "held by another kinstr session (pid %d): its probe or its code cache is in the function",
		       kinstr_kernel__held_by(k, f->addr, f->size));
		return NULL;
	}
	res = kinstr_kernel__reserved(k, f->addr, f->size) & POLICY_REASONS;
	if (res) {
		refuse(r, KINSTR_CACHE_R_POLICY, f->addr, res, "the function's text is reserved");
		return NULL;
	}
	if (in_sched_text(k, f)) {
		refuse(r, KINSTR_CACHE_R_SCHED_TEXT, f->addr, 0,
		       ".sched.text or lock text: wchan and profile_pc look for these functions by address");
		return NULL;
	}
	if (is_cold_part(f)) {
		refuse(r, KINSTR_CACHE_R_COLD, f->addr, 0, "a .cold part: its function jumps into it and it jumps back");
		return NULL;
	}
	if (has_cold_part(k, f)) {
		refuse(r, KINSTR_CACHE_R_COLD, f->addr, 0, "a .cold part of the function may jump back into the original");
		return NULL;
	}
	fn = kinstr_fn__analyze(k, f);
	if (!fn)
		return NULL;
	cfg = kinstr_fn__cfg(fn);
	entry = entry_of(k, f);
	e = kinstr_cfg__find_insn(cfg, entry);
	if (e < 0) {
		refuse(r, KINSTR_CACHE_R_NO_CODE, f->addr, 0, "no instruction at the entry");
		goto fail;
	}
	first = (size_t)e;
	/*
	 * Native instructions at the entry (cli in _raw_spin_lock_irq), and a jump label or a
	 * static call there (the kernel rewrites them in place), run in the original before the
	 * splice: a splice on one would enter a copy that jumps straight back to it, and none fits
	 * on a rewritten site. A jump label's target becomes a re-entry point.
	 */
	while (first < kinstr_cfg__insn_cnt(cfg)) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first)->x;
		uint32_t rs = kinstr_kernel__reserved(k, x->addr, x->len);
		int site = !!(rs & ((1u << KINSTR_R_JUMP_LABEL) | (1u << KINSTR_R_STATIC_CALL)));

		if ((!runs_native(x, rs) && !site) || (!kinstr_x86__falls_through(x) && !(rs & (1u << KINSTR_R_JUMP_LABEL))))
			break;
		if (rs & (1u << KINSTR_R_JUMP_LABEL)) {
			const struct kinstr_cfg_edge *je;
			size_t nje = kinstr_kernel__edges(k, x->addr, x->addr + x->len, &je), j;

			for (j = 0; j < nje && npre < sizeof(pre) / sizeof(pre[0]); j++)
				if (je[j].to != x->addr + x->len)
					pre[npre++] = je[j].to;
		}
		first++;
	}
	if (first == kinstr_cfg__insn_cnt(cfg) || (kinstr_cfg__insn(cfg, first)->flags & KINSTR_CFG_I_PADDING)) {
		refuse(r, KINSTR_CACHE_R_NO_CODE, f->addr, 0, "nothing after the entry");
		goto fail;
	}
	/* compiled C (an ftrace NOP): the flags are dead at the instruction after the NOP */
	abi_entry = entry != f->addr + f->endbr ? entry : 0;
	entry = kinstr_cfg__insn(cfg, first)->x.addr;
	/* the code ends before the trailing padding (int3s and NOPs: a last BUG's ud2 is code) */
	for (n = kinstr_cfg__insn_cnt(cfg); n > first && (kinstr_cfg__insn(cfg, n - 1)->flags & KINSTR_CFG_I_PADDING) &&
	     is_pad(&kinstr_cfg__insn(cfg, n - 1)->x); n--)
		;
	n -= first;
	if (!n) {
		refuse(r, KINSTR_CACHE_R_NO_CODE, f->addr, 0, "nothing after the entry");
		goto fail;
	}
	code_end = kinstr_cfg__insn(cfg, first + n - 1)->x.addr + kinstr_cfg__insn(cfg, first + n - 1)->x.len;
	if (runs_off_end(&kinstr_cfg__insn(cfg, first + n - 1)->x)) {
		refuse(r, KINSTR_CACHE_R_RUNS_ON, kinstr_cfg__insn(cfg, first + n - 1)->x.addr, 0,
		       "the code runs on past the function's end (into the next symbol)");
		goto fail;
	}
	p = calloc(n, sizeof(*p));
	if (!p)
		goto fail;
	for (i = 0; i < n; i++)
		if (plan_insn(k, cfg, &o, p, first, i, entry, abi_entry, f->addr, f->addr + f->size, r))
			goto fail;
	plan_reentries(k, cfg, p, first, n, entry);
	for (i = 0; i < npre; i++) {	/* where the entry's jump labels go */
		int t = kinstr_cfg__find_insn(cfg, pre[i]);

		if (t >= 0 && (size_t)t >= first && (size_t)t < first + n)
			mark(p, n, (size_t)t - first, KINSTR_CACHE_AFTER_NATIVE);
	}
	if (place_counters(k, cfg, p, first, n, abi_entry, f->addr, f->addr + f->size, r))
		goto fail;
	for (i = 0; i < n; i++) {
		if (p[i].leader)
			nb++;
		p[i].block = (uint32_t)(nb - 1);
	}
	if (!(unseen = calloc(nb, 1)))
		goto fail;
	if (o.flags & KINSTR_CACHE_F_EDGES) {
		if (!(edges = calloc(2 * n, sizeof(*edges))))
			goto fail;
		ne = plan_edges(k, cfg, p, first, n, abi_entry, nb, edges, unseen);
	}
	if (carry_counters(k, cfg, p, first, n, abi_entry, !!(o.flags & KINSTR_CACHE_F_EDGES), r))
		goto fail;
	for (i = 0, at = copy_addr; i < n; i++) {
		p[i].copy = at;
		at += p[i].size;
		nr += !!p[i].reentry;
	}
	total = (size_t)(at - copy_addr);

	c = calloc(1, sizeof(*c));
	if (!c || !(c->bytes = malloc(total)) || !(c->insns = calloc(n, sizeof(*c->insns))) ||
	    !(c->blocks = calloc(nb, sizeof(*c->blocks))) || !(c->reentries = calloc(nr ? nr : 1, sizeof(*c->reentries))))
		goto fail;
	c->copy_addr = copy_addr;
	c->size = total;
	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
		struct kinstr_cache_insn *ci = &c->insns[i];

		if (emit_insn(cfg, &o, p, first, n, i, c->bytes + (p[i].copy - copy_addr), r))
			goto fail;
		ci->addr = x->addr;
		ci->len = x->len;
		ci->how = p[i].how;
		ci->block = p[i].block;
		ci->copy = p[i].copy + edge_in_len(&p[i]) + (p[i].counter ? COUNTER_LEN + 2 * p[i].saves_flags : 0);
		ci->copy_len = (uint8_t)(p[i].copy + p[i].size - ci->copy);
		ci->counted = p[i].counter;
		ci->edges = p[i].edges;
		ci->edge = p[i].edge;
		ci->in_counter = p[i].in_ctr;
		if (p[i].leader) {
			c->blocks[p[i].block].addr = x->addr;
			c->blocks[p[i].block].copy = p[i].copy + edge_in_len(&p[i]);
			c->blocks[p[i].block].first = (uint32_t)i;
			c->blocks[p[i].block].unseen = unseen[p[i].block];
			c->blocks[p[i].block].ctr = p[i].block;
			c->blocks[p[i].block].counted_after = p[i].counted_after;
		}
		if (p[i].counter) {
			c->blocks[p[i].block].counter = p[i].copy + edge_in_len(&p[i]);
			c->blocks[p[i].block].saves_flags = p[i].saves_flags;
		}
		c->blocks[p[i].block].count++;
		if (p[i].reentry) {
			struct kinstr_cache_reentry *re = &c->reentries[c->nr_reentries++];

			re->addr = x->addr;
			/* a path continued lands on the edge into it, a branch from the original after it */
			re->copy = p[i].copy + (p[i].fall_re ? 0 : edge_in_len(&p[i]));
			re->why = p[i].reentry - 1;
			re->jump = reentry_jump_fits(k, cfg, p, first, n, i, code_end, f);
			if (!re->jump && (kinstr_kernel__reserved(k, x->addr, 1))) {
				refuse(r, KINSTR_CACHE_R_REENTRY, x->addr, kinstr_kernel__reserved(k, x->addr, 1),
				       "a re-entry point the kernel reserves");
				goto fail;
			}
		}
	}
	/* blocks counted after a native run: by the counter before it all of a block that carries them, or another's */
	for (i = 0; i < n; i++) {
		struct kinstr_cache_block *bl = &c->blocks[p[i].block];
		const struct plan *pk;

		if (!p[i].leader || !p[i].count_at)
			continue;
		pk = &p[p[i].count_at - 1];
		if (pk->carries) {
			bl->counter = pk->copy;
			bl->saves_flags = !!(pk->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF);
			bl->ctr = pk->in_ctr;
		} else if (pk->block != p[i].block) {
			bl->counter = c->blocks[pk->block].counter;
			bl->saves_flags = c->blocks[pk->block].saves_flags;
			bl->ctr = pk->block;
		}
	}
	c->nr_insns = n;
	c->nr_blocks = nb;
	c->edges = edges;
	c->nr_edges = ne;
	free(unseen);
	free(p);
	kinstr_fn__free(fn);
	return c;
fail:
	e = errno ? errno : ENOMEM;
	free(unseen);
	free(edges);	/* not yet c's */
	free(p);
	kinstr_cache_fn__free(c);
	kinstr_fn__free(fn);
	errno = e;
	return NULL;
}

void kinstr_cache_fn__free(struct kinstr_cache_fn *c)
{
	if (!c)
		return;
	free(c->bytes);
	free(c->insns);
	free(c->blocks);
	free(c->reentries);
	free(c->edges);
	free(c);
}

uint64_t kinstr_cache_fn__copy_addr(const struct kinstr_cache_fn *c)
{
	return c->copy_addr;
}

size_t kinstr_cache_fn__size(const struct kinstr_cache_fn *c)
{
	return c->size;
}

const uint8_t *kinstr_cache_fn__bytes(const struct kinstr_cache_fn *c)
{
	return c->bytes;
}

size_t kinstr_cache_fn__insn_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_insns;
}

const struct kinstr_cache_insn *kinstr_cache_fn__insn(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_insns ? &c->insns[i] : NULL;
}

size_t kinstr_cache_fn__block_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_blocks;
}

const struct kinstr_cache_block *kinstr_cache_fn__block(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_blocks ? &c->blocks[i] : NULL;
}

size_t kinstr_cache_fn__edge_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_edges;
}

const struct kinstr_cache_edge *kinstr_cache_fn__edge(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_edges ? &c->edges[i] : NULL;
}

size_t kinstr_cache_fn__counter_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_blocks + c->nr_edges;
}

size_t kinstr_cache_fn__reentry_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_reentries;
}

const struct kinstr_cache_reentry *kinstr_cache_fn__reentry(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_reentries ? &c->reentries[i] : NULL;
}

const char *kinstr_cache_how__str(unsigned int how)
{
	static const char *const s[] = { "copy", "reloc", "call", "native", "jump-label", "static-call" };

	return how < KINSTR_CACHE_NR_HOW ? s[how] : "?";
}

const char *kinstr_cache_why__str(unsigned int why)
{
	static const char *const s[] = { "entry", "return", "after-native", "fixup" };

	return why < KINSTR_CACHE_NR_WHY ? s[why] : "?";
}

const char *kinstr_cache_edge_kind__str(unsigned int kind)
{
	static const char *const s[KINSTR_CACHE_NR_EDGE] = { "entry", "fall", "taken", "exit" };

	return kind < KINSTR_CACHE_NR_EDGE ? s[kind] : "?";
}

const char *kinstr_cache_refusal__id(unsigned int code)
{
	static const char *const s[] = {
		"ok", "policy", "undecodable", "int3", "indirect-jmp", "indirect-call", "internal-call", "loop",
		"endbr", "reserved", "jump-label", "static-call", "reentry", "range", "no-code", "return", "cold-part", "sched-text",
		"far-transfer", "runs-on", "foreign-branch", "uncounted-block", "held",
	};

	return code < KINSTR_CACHE_R_NR ? s[code] : "?";
}
