/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Control-flow graph and register/flags liveness of one kernel function, built from its bytes
 * by a linear decode from the symbol's start (the kernel is built with -fno-jump-tables, so a
 * linear sweep reaches every instruction that a direct branch can).
 *
 * Memory: kinstr_cfg__new() makes exactly one allocation (the cfg, its instructions, blocks,
 * resolved extra edges and dataflow scratch; about 160 bytes per instruction) and no other;
 * kinstr_cfg__free() releases it. Pointers returned by the accessors stay valid until then.
 * The function's bytes are copied per instruction and need not outlive the call.
 *
 * Blocks end after jmp/jcc/ret/indirect jmp/int3/ud2/far transfers, after a call whose target
 * is inside the function, after the source of an opts->edges edge, and before every branch
 * target; other calls stay inside blocks. A run of int3, and the trailing padding, is one
 * block.
 *
 * Liveness is conservative, never optimistic: a register reported dead at an instruction is
 * one the kernel will not read before writing it, so a probe may clobber it there.
 *  - At a direct or indirect call, the SysV argument registers (rdi rsi rdx rcx r8 r9) and rax
 *    are read (plus whatever opts->entry_live() adds: the retpoline thunks
 *    __x86_indirect_thunk_<reg> read <reg>, so callers must say so); a call kills only the
 *    status flags, never a GPR, because kernel helpers with their own conventions
 *    (__get_user_N, paravirt callee-save thunks) preserve more than SysV does.
 *  - At a return (bare ret or jmp to opts->return_thunk): rax, rdx, rsp and the callee-saved
 *    rbx rbp r12-r15 are live (the caller still expects those); the flags are dead.
 *  - A jump out of the function is a tail call or a jump into a .cold part, which cannot be
 *    told apart from bytes alone: everything is live unless opts->entry_live() says otherwise.
 *  - Indirect jumps, far transfers, iret/sysret, int3 (it may be someone else's breakpoint),
 *    undecodable bytes, branches into the middle of an instruction and falling off the end of
 *    the function: everything live.
 *  - ud2 (BUG/WARN) falls through to the next instruction, since WARN resumes there.
 *  - rsp is live everywhere.
 *  - Jump labels and exception fixups are invisible in the bytes: pass them as opts->edges,
 *    or liveness may miss what their targets read.
 */
#ifndef KINSTR_CFG_H
#define KINSTR_CFG_H

#include <stddef.h>
#include <stdint.h>

#include <kinstr/edge.h>
#include <kinstr/x86.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KINSTR_CFG_NONE UINT32_MAX

/* Register sets used by the liveness rules, exported so entry_live() callbacks can use them. */
#define KINSTR_CFG_LIVE_ARGS	(KINSTR_X86_REG(KINSTR_X86_RDI) | KINSTR_X86_REG(KINSTR_X86_RSI) | \
				 KINSTR_X86_REG(KINSTR_X86_RDX) | KINSTR_X86_REG(KINSTR_X86_RCX) | \
				 KINSTR_X86_REG(KINSTR_X86_R8) | KINSTR_X86_REG(KINSTR_X86_R9))
#define KINSTR_CFG_LIVE_CALL	(KINSTR_CFG_LIVE_ARGS | KINSTR_X86_REG(KINSTR_X86_RAX))
#define KINSTR_CFG_LIVE_RET	(KINSTR_X86_REG(KINSTR_X86_RAX) | KINSTR_X86_REG(KINSTR_X86_RDX) | \
				 KINSTR_X86_REG(KINSTR_X86_RSP) | KINSTR_X86_REG(KINSTR_X86_RBX) | \
				 KINSTR_X86_REG(KINSTR_X86_RBP) | KINSTR_X86_REG(KINSTR_X86_R12) | \
				 KINSTR_X86_REG(KINSTR_X86_R13) | KINSTR_X86_REG(KINSTR_X86_R14) | \
				 KINSTR_X86_REG(KINSTR_X86_R15))
/* A tail call to a SysV function: its arguments, plus what our own caller expects. */
#define KINSTR_CFG_LIVE_TAIL	(KINSTR_CFG_LIVE_CALL | KINSTR_CFG_LIVE_RET)


struct kinstr_cfg_opts {
	size_t sz;			/* sizeof(struct kinstr_cfg_opts) */
	/* Address of __x86_return_thunk (0: none); a jmp/jcc there is a return. */
	uint64_t return_thunk;
	/*
	 * Optional. Registers live on entry to code at target outside the function, reached by a
	 * direct call (is_call) or a jump out of the function. Let it return e.g. rax|ARGS for
	 * `call __x86_indirect_thunk_rax` (the retpoline thunks read their register), and
	 * KINSTR_CFG_LIVE_TAIL for a jump to the start of a SysV function. Defaults: a call reads
	 * KINSTR_CFG_LIVE_CALL, a jump out reads everything.
	 */
	uint32_t (*entry_live)(uint64_t target, int is_call, void *ctx);
	void *ctx;
	/*
	 * Optional: edges the bytes do not show. A jump label's site can be flipped between a jmp
	 * to its target and a nop at any time: pass both code->target and code->code+len. An
	 * exception-table entry: insn->fixup. Edges from outside the function are ignored. Their
	 * targets become KINSTR_CFG_I_TARGET (and count for kinstr_cfg__has_target_in()), their
	 * sources end blocks and they take part in liveness; block succ[] lists only the edges
	 * the instructions themselves show.
	 */
	const struct kinstr_cfg_edge *edges;
	size_t nr_edges;
};

/* kinstr_cfg_insn.flags */
enum kinstr_cfg_insn_flags {
	KINSTR_CFG_I_LEADER	= 1u << 0,	/* first instruction of a basic block */
	KINSTR_CFG_I_TARGET	= 1u << 1,	/* a direct jmp/jcc/call of this function lands here */
	KINSTR_CFG_I_RETURN	= 1u << 2,	/* ret, or jmp/jcc to the return thunk */
	KINSTR_CFG_I_TAIL_CALL	= 1u << 3,	/* direct jmp/jcc to outside the function (not the thunk) */
	KINSTR_CFG_I_PADDING	= 1u << 4,	/* trailing int3/ud2/nop after the function's code */
	KINSTR_CFG_I_INVALID	= 1u << 5,	/* undecodable byte(s): x.len is 1 (or the rest) */
	KINSTR_CFG_I_BAD_TARGET	= 1u << 6,	/* branches into the middle of an instruction */
	KINSTR_CFG_I_EXTRA_EDGE	= 1u << 7,	/* source of an opts->edges edge */
};

/* kinstr_cfg__flags(): facts about the whole function */
enum kinstr_cfg_flags {
	KINSTR_CFG_F_INDIRECT_JMP  = 1u << 0,	/* has jmp via register/memory: trap sites only */
	KINSTR_CFG_F_INDIRECT_CALL = 1u << 1,
	KINSTR_CFG_F_INVALID	   = 1u << 2,	/* undecodable bytes in the function */
	KINSTR_CFG_F_TRUNCATED	   = 1u << 3,	/* the last instruction runs past the end */
	KINSTR_CFG_F_BAD_TARGET	   = 1u << 4,	/* a branch lands inside an instruction */
	KINSTR_CFG_F_FALLS_OFF_END = 1u << 5,	/* control can run past the last instruction */
	KINSTR_CFG_F_INTERNAL_CALL = 1u << 6,	/* call to a non-entry address inside the function */
	KINSTR_CFG_F_EXIT	   = 1u << 7,	/* iret/sysret/far jmp or ret */
};

struct kinstr_cfg_insn {
	struct kinstr_x86_insn x;
	uint32_t block;		/* index of its basic block */
	uint32_t target_insn;	/* index of the direct branch's target here, or KINSTR_CFG_NONE */
	uint32_t flags;		/* enum kinstr_cfg_insn_flags */
	uint32_t live_in;	/* KINSTR_X86_REG() set live just before the instruction */
	uint32_t live_out;	/* ... and just after it (on any path) */
};

/* kinstr_cfg_block.exits: how control leaves the function from the end of the block */
enum kinstr_cfg_exit {
	KINSTR_CFG_EXIT_RETURN	  = 1u << 0,
	KINSTR_CFG_EXIT_TAIL_CALL = 1u << 1,
	KINSTR_CFG_EXIT_UNKNOWN	  = 1u << 2,	/* indirect jmp, far/iret, int3, invalid, off the end */
	KINSTR_CFG_EXIT_TRAP	  = 1u << 3,	/* ud2 with nothing after it: BUG() */
};

struct kinstr_cfg_block {
	uint64_t start, end;	/* [start, end) */
	uint32_t first;		/* index of its first instruction */
	uint32_t count;		/* number of instructions */
	uint32_t succ[2];	/* successor blocks in the function, KINSTR_CFG_NONE if absent */
	uint32_t exits;		/* enum kinstr_cfg_exit */
};

struct kinstr_cfg;

/*
 * Build the CFG of the function whose size bytes at code sit at runtime address start (size
 * from the symbol table: up to the next symbol, padding included). opts may be NULL.
 * Returns NULL with errno set: EINVAL, ENOMEM, or E2BIG (more than 2^31 instructions).
 */
struct kinstr_cfg *kinstr_cfg__new(const void *code, size_t size, uint64_t start,
				   const struct kinstr_cfg_opts *opts);
void kinstr_cfg__free(struct kinstr_cfg *cfg);

uint64_t kinstr_cfg__start(const struct kinstr_cfg *cfg);
size_t kinstr_cfg__size(const struct kinstr_cfg *cfg);
uint32_t kinstr_cfg__flags(const struct kinstr_cfg *cfg);

size_t kinstr_cfg__insn_cnt(const struct kinstr_cfg *cfg);
const struct kinstr_cfg_insn *kinstr_cfg__insn(const struct kinstr_cfg *cfg, size_t idx);
/* Index of the instruction starting exactly at addr, or -ENOENT. */
int kinstr_cfg__find_insn(const struct kinstr_cfg *cfg, uint64_t addr);

size_t kinstr_cfg__block_cnt(const struct kinstr_cfg *cfg);
const struct kinstr_cfg_block *kinstr_cfg__block(const struct kinstr_cfg *cfg, size_t idx);

/*
 * Does any direct branch of the function (jmp, jcc, call; aligned or not) or any opts->edges
 * edge land in [lo, hi) other than exactly at lo? The jump-splice check for a displaced range
 * [site, site + 5). Returns 1 or 0.
 */
int kinstr_cfg__has_target_in(const struct kinstr_cfg *cfg, uint64_t lo, uint64_t hi);

#ifdef __cplusplus
}
#endif
#endif
