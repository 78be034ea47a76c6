/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Code positioning for the code cache (kinstr optimize; KernInst's runtime optimisation): from a
 * function's blocks and their measured edge counts, an order of the blocks in which hot chains
 * fall through (Pettis–Hansen: chains merged greedily along the heaviest edges), a conditional
 * branch whose hot way is its target is inverted so that that way falls through, and blocks
 * that never ran go after the hot part. Pure computation (the order and what it predicts); the
 * copy laid out in that order is kinstr_cache_fn__build() with opts.layout (cache.h).
 *
 * Taken branches here are those between the function's blocks: a jcc taken, a jmp, and a jmp the
 * layout adds where a block's fall-through successor is not next. Calls, returns and exits of the
 * function are the same in every layout and not counted.
 */
#ifndef KINSTR_LAYOUT_H
#define KINSTR_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_kernel;
struct kinstr_cache_fn;

/* How a block ends, for its layout. */
enum kinstr_layout_end {
	KINSTR_LAYOUT_LEAVES,	/* no way on in the copy: a return, a call, a native run, an exit */
	KINSTR_LAYOUT_FALLS,	/* runs on into the next instruction's block (fall) */
	KINSTR_LAYOUT_JCC,	/* a jcc: taken to taken (or out of the function), else to fall */
	KINSTR_LAYOUT_JMP,	/* a jmp to taken (or out of the function) */
	KINSTR_LAYOUT_FIXED,	/* a jump label's test: to taken or fall, the condition stays as it is */
	KINSTR_LAYOUT_NR_END
};
#define KINSTR_LAYOUT_NONE UINT32_MAX	/* no such block (outside the function) */

struct kinstr_layout_block {
	uint8_t end;		/* enum kinstr_layout_end */
	uint32_t fall, taken;	/* successor blocks, or KINSTR_LAYOUT_NONE */
	uint64_t count;		/* passes through the block */
	uint64_t fall_count;	/* ... of which went on to fall (by falling through, or a jmp) */
	uint64_t taken_count;	/* ... and to taken */
};

/*
 * The order of n blocks (order[n], a permutation of 0..n-1): entry's chain first, then the other
 * chains that ran, hottest first, then the blocks that never ran in their original order; the
 * original order itself (entry 0) where that predicts no more taken branches. 0 or -EINVAL.
 */
int kinstr_layout__order(const struct kinstr_layout_block *b, size_t n, uint32_t entry, uint32_t *order);
/* The taken branches the blocks' counts make in that order (the identity: the original's). */
uint64_t kinstr_layout__taken(const struct kinstr_layout_block *b, size_t n, const uint32_t *order);

/*
 * The blocks of a plan built with KINSTR_CACHE_F_EDGES (its blocks are the laid copy's), with
 * counts from that plan's edge counters (edge_counts[i]: edge i's): how each ends, as k's text
 * says. b has kinstr_cache_fn__block_cnt(plan) entries. *calls (may be NULL): the entry edge's
 * count. 0, or -EINVAL (a plan without edges, text k does not hold).
 */
int kinstr_layout__blocks(const struct kinstr_kernel *k, const struct kinstr_cache_fn *plan,
			  const uint64_t *edge_counts, struct kinstr_layout_block *b, uint64_t *calls);

const char *kinstr_layout_end__str(unsigned int end);	/* "leaves", "falls", "jcc", "jmp", "fixed" */

#ifdef __cplusplus
}
#endif
#endif
