/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The code cache builder's insides, shared by lib/cache/'s files: the copy, the first pass's per-instruction
 * decisions (struct plan) and the sizes of what the copy holds. Nothing outside lib/cache/ includes this.
 */
#ifndef KINSTR_LIB_CACHE_PRIV_H
#define KINSTR_LIB_CACHE_PRIV_H

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
	uint8_t *laid;		/* a re-laid copy (layout.c): per block, KINSTR_CACHE_L_*; else NULL */
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
	uint8_t timer;		/* KINSTR_CACHE_TIMER_STARTS or _STOPS (KINSTR_CACHE_F_TIMER) */
};

/* place.c */
int cc_carry_counters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			  size_t n, uint64_t abi_entry, int edges, struct kinstr_cache_refusal *r);
uint64_t cc_copy_of(const struct plan *p, const struct kinstr_cfg *cfg, size_t first, size_t n, uint64_t a);
unsigned int cc_edge_in_len(const struct plan *pi);
uint8_t *cc_emit_counter(uint8_t *b, uint64_t counters, uint32_t idx, int saves_flags);
uint8_t *cc_emit_rel32(uint8_t *b, uint64_t at, const uint8_t *op, unsigned int oplen, uint64_t target);
uint64_t cc_entry_of(const struct kinstr_kernel *k, const struct kinstr_func *f);
int cc_fits_rel32(uint64_t from_end, uint64_t to);
int cc_jcc_cond(const struct kinstr_x86_insn *x);
int cc_mark(struct plan *p, size_t n, size_t i, int why);
int cc_place_counters(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			  size_t n, uint64_t abi_entry, uint64_t fstart, uint64_t fend, struct kinstr_cache_refusal *r);
size_t cc_plan_edges(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			 size_t n, uint64_t abi_entry, size_t nb, struct kinstr_cache_edge *e, uint8_t *unseen);
int cc_plan_insn(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o,
		     struct plan *p, size_t first, size_t i, uint64_t entry, uint64_t abi_entry, uint64_t fstart, uint64_t fend, struct kinstr_cache_refusal *r);
void cc_plan_reentries(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, struct plan *p, size_t first,
			   size_t n, uint64_t entry);
void cc_put32(uint8_t *p, int32_t v);
int cc_reentry_jump_fits(const struct kinstr_kernel *k, const struct kinstr_cfg *cfg, const struct plan *p,
			     size_t first, size_t n, size_t i, uint64_t code_end, const struct kinstr_func *f);
int cc_refuse(struct kinstr_cache_refusal *r, int code, uint64_t addr, uint32_t reserved, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int cc_runs_native(const struct kinstr_x86_insn *x, uint32_t reserved);

/* timer.c */
int cc_plan_timers(const struct kinstr_cfg *cfg, struct plan *p, size_t first, size_t n, struct kinstr_cache_refusal *r);
uint8_t *cc_emit_timer(uint8_t *b, uint64_t at, const struct kinstr_cache_opts *o, int start);
/* layout.c: the copy re-laid in o->layout's order, from the first pass's plan */
struct kinstr_cache_fn *cc_build_laid(const struct kinstr_kernel *k, const struct kinstr_func *f,
				      const struct kinstr_cfg *cfg, struct plan *p, size_t first, size_t n,
				      uint64_t code_end, uint64_t copy_addr, const struct kinstr_cache_opts *o,
				      struct kinstr_cache_refusal *r);

/* emit.c */
int cc_emit_insn(const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o, const struct plan *p, size_t first,
		     size_t n, size_t i, uint8_t *b, struct kinstr_cache_refusal *r);


#endif
