// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Code positioning (include/kinstr/layout.h): the order of a function's blocks by measured edge
 * counts (Pettis–Hansen), the taken branches an order makes, and the blocks of a plan with edges
 * as the layout sees them. The copy laid out in an order is layout.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/cache.h>
#include <kinstr/kernel.h>
#include <kinstr/layout.h>
#include <kinstr/x86.h>

#define NONE KINSTR_LAYOUT_NONE

struct cand {
	uint32_t from, to;
	uint64_t w;
	int fall;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	if (x->fall != y->fall)	/* a tie: keep the original's fall-through */
		return y->fall - x->fall;
	return x->from < y->from ? -1 : x->from > y->from;
}

static uint32_t head_of(const uint32_t *prev, uint32_t i)
{
	while (prev[i] != NONE)
		i = prev[i];
	return i;
}

/* Join c's chain after a's: a the tail of its chain, c the head of another, c not the entry. */
static void join(uint32_t *next, uint32_t *prev, uint32_t a, uint32_t c, uint32_t entry)
{
	if (a == c || next[a] != NONE || prev[c] != NONE || c == entry || head_of(prev, a) == c)
		return;
	next[a] = c;
	prev[c] = a;
}

struct chain {
	uint32_t head;
	uint64_t heat;	/* its hottest block's count */
};

static int chain_cmp(const void *a, const void *b)
{
	const struct chain *x = a, *y = b;

	if ((x->heat != 0) != (y->heat != 0))	/* what never ran goes last */
		return x->heat ? -1 : 1;
	if (x->heat != y->heat)
		return x->heat > y->heat ? -1 : 1;
	return x->head < y->head ? -1 : x->head > y->head;	/* cold: the original order */
}

int kinstr_layout__order(const struct kinstr_layout_block *b, size_t n, uint32_t entry, uint32_t *order)
{
	uint32_t *next = NULL, *prev = NULL, i;
	struct cand *cd = NULL;
	struct chain *ch = NULL;
	size_t nc = 0, nh = 0, k, at = 0;
	int ret = -ENOMEM;

	if (!b || !order || !n || entry >= n || n >= NONE)
		return -EINVAL;
	next = malloc(n * sizeof(*next));
	prev = malloc(n * sizeof(*prev));
	cd = calloc(2 * n, sizeof(*cd));
	ch = calloc(n, sizeof(*ch));
	if (!next || !prev || !cd || !ch)
		goto out;
	for (i = 0; i < n; i++) {
		next[i] = prev[i] = NONE;
		if (b[i].end >= KINSTR_LAYOUT_NR_END || (b[i].fall != NONE && b[i].fall >= n) ||
		    (b[i].taken != NONE && b[i].taken >= n)) {
			ret = -EINVAL;
			goto out;
		}
	}
	/* the edges that may fall through in a copy: a fall-through (a jcc's too), a jmp's or a jcc's target */
	for (i = 0; i < n; i++) {
		int e = b[i].end;

		if ((e == KINSTR_LAYOUT_FALLS || e == KINSTR_LAYOUT_JCC || e == KINSTR_LAYOUT_FIXED) && b[i].fall != NONE)
			cd[nc++] = (struct cand){ .from = i, .to = b[i].fall, .w = b[i].fall_count, .fall = 1 };
		if ((e == KINSTR_LAYOUT_JCC || e == KINSTR_LAYOUT_JMP) && b[i].taken != NONE && b[i].taken != b[i].fall)
			cd[nc++] = (struct cand){ .from = i, .to = b[i].taken, .w = b[i].taken_count };
	}
	qsort(cd, nc, sizeof(*cd), cand_cmp);
	/* Pettis–Hansen: the heaviest edges first, each joining two chains end to head */
	for (k = 0; k < nc && cd[k].w; k++)
		join(next, prev, cd[k].from, cd[k].to, entry);
	/* blocks that never ran keep their original fall-throughs among themselves */
	for (k = 0; k < nc; k++)
		if (cd[k].fall && !b[cd[k].from].count && !b[cd[k].to].count)
			join(next, prev, cd[k].from, cd[k].to, entry);
	for (i = 0; i < n; i++) {
		uint32_t j;

		if (prev[i] != NONE)
			continue;
		ch[nh].head = i;
		for (j = i; j != NONE; j = next[j])
			if (b[j].count > ch[nh].heat)
				ch[nh].heat = b[j].count;
		if (i == entry)	/* the entry's chain first, whatever its heat */
			ch[nh].heat = UINT64_MAX;
		nh++;
	}
	qsort(ch, nh, sizeof(*ch), chain_cmp);
	for (k = 0; k < nh; k++) {
		uint32_t j;

		for (j = ch[k].head; j != NONE; j = next[j])
			order[at++] = j;
	}
	ret = at == n ? 0 : -EINVAL;
	/* greedy chains may lose to the original order: then it stays (ties too: less to check) */
	if (!ret && kinstr_layout__taken(b, n, order) >= kinstr_layout__taken(b, n, NULL) && entry == 0)
		for (i = 0; i < n; i++)
			order[i] = i;
out:
	free(next);
	free(prev);
	free(cd);
	free(ch);
	return ret;
}

/* What one block's end costs in taken branches with nxt next (NONE: last). */
static uint64_t taken_of(const struct kinstr_layout_block *bl, uint32_t nxt)
{
	switch (bl->end) {
	case KINSTR_LAYOUT_FALLS:
		return bl->fall != NONE && nxt != bl->fall ? bl->fall_count : 0;
	case KINSTR_LAYOUT_JCC:
		if (nxt == bl->fall)
			return bl->taken != NONE ? bl->taken_count : 0;
		if (bl->taken != NONE && nxt == bl->taken)
			return bl->fall_count;	/* inverted */
		return (bl->taken != NONE ? bl->taken_count : 0) + bl->fall_count;
	case KINSTR_LAYOUT_JMP:
		return bl->taken != NONE && nxt != bl->taken ? bl->taken_count : 0;
	case KINSTR_LAYOUT_FIXED:
		return (bl->taken != NONE ? bl->taken_count : 0) + (nxt != bl->fall ? bl->fall_count : 0);
	default:
		return 0;
	}
}

uint64_t kinstr_layout__taken(const struct kinstr_layout_block *b, size_t n, const uint32_t *order)
{
	uint64_t t = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		uint32_t i = order ? order[k] : (uint32_t)k, nxt = k + 1 < n ? (order ? order[k + 1] : (uint32_t)k + 1) : NONE;

		if (i < n)
			t += taken_of(&b[i], nxt);
	}
	return t;
}

const char *kinstr_layout_end__str(unsigned int end)
{
	static const char *const s[KINSTR_LAYOUT_NR_END] = { "leaves", "falls", "jcc", "jmp", "fixed" };

	return end < KINSTR_LAYOUT_NR_END ? s[end] : "?";
}

/* The block whose first instruction is at a, or NONE. */
static uint32_t block_at(const struct kinstr_cache_fn *c, uint64_t a)
{
	size_t i;

	for (i = 0; i < kinstr_cache_fn__block_cnt(c); i++)
		if (kinstr_cache_fn__block(c, i)->addr == a)
			return (uint32_t)i;
	return NONE;
}

/* Block b's last instruction but its SLS int3s (they never run). */
static size_t term_of(const struct kinstr_cache_fn *c, const struct kinstr_cache_block *bl, const struct kinstr_kernel *k)
{
	size_t t = bl->first + bl->count - 1;

	while (t > bl->first) {
		const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, t);
		const unsigned char *tx = kinstr_kernel__text(k, ci->addr, 1);

		if (!tx || ci->len != 1 || tx[0] != 0xcc)
			break;
		t--;
	}
	return t;
}

int kinstr_layout__blocks(const struct kinstr_kernel *k, const struct kinstr_cache_fn *plan,
			  const uint64_t *edge_counts, struct kinstr_layout_block *b, uint64_t *calls)
{
	size_t nb, ne, i;

	if (!k || !plan || !edge_counts || !b || !(ne = kinstr_cache_fn__edge_cnt(plan)))
		return -EINVAL;
	nb = kinstr_cache_fn__block_cnt(plan);
	if (calls)
		*calls = 0;
	for (i = 0; i < nb; i++) {
		const struct kinstr_cache_block *bl = kinstr_cache_fn__block(plan, i);
		size_t t = term_of(plan, bl, k);
		const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(plan, t);
		const unsigned char *tx = kinstr_kernel__text(k, ci->addr, ci->len);
		struct kinstr_x86_insn x;

		if (!tx || kinstr_x86__decode(tx, ci->len, ci->addr, &x))
			return -EINVAL;
		b[i] = (struct kinstr_layout_block){ .end = KINSTR_LAYOUT_LEAVES, .fall = NONE, .taken = NONE };
		if (ci->how == KINSTR_CACHE_RELOC && x.flow == KINSTR_X86_FLOW_JCC) {
			b[i].end = KINSTR_LAYOUT_JCC;
			b[i].taken = block_at(plan, x.target);
		} else if (ci->how == KINSTR_CACHE_RELOC && x.flow == KINSTR_X86_FLOW_JMP) {
			b[i].end = KINSTR_LAYOUT_JMP;
			b[i].taken = block_at(plan, x.target);
		} else if (ci->how == KINSTR_CACHE_JUMP_LABEL) {
			b[i].end = KINSTR_LAYOUT_FIXED;
		} else if ((ci->how == KINSTR_CACHE_COPY || ci->how == KINSTR_CACHE_RELOC) && x.flow == KINSTR_X86_FLOW_NEXT) {
			b[i].end = KINSTR_LAYOUT_FALLS;
		}
		if (b[i].end != KINSTR_LAYOUT_LEAVES && b[i].end != KINSTR_LAYOUT_JMP && t + 1 < kinstr_cache_fn__insn_cnt(plan))
			b[i].fall = kinstr_cache_fn__insn(plan, t + 1)->block;
	}
	for (i = 0; i < ne; i++) {
		const struct kinstr_cache_edge *e = kinstr_cache_fn__edge(plan, i);
		uint64_t v = edge_counts[i];

		if (e->kind == KINSTR_CACHE_EDGE_ENTRY && calls)
			*calls += v;
		if (e->from == KINSTR_CACHE_OUTSIDE || e->from >= nb)
			continue;
		b[e->from].count += v;	/* what leaves it, every way */
		if (e->kind == KINSTR_CACHE_EDGE_FALL && e->to == b[e->from].fall)
			b[e->from].fall_count += v;
		else if (e->kind == KINSTR_CACHE_EDGE_TAKEN) {
			if (b[e->from].end == KINSTR_LAYOUT_FIXED && b[e->from].taken == NONE)
				b[e->from].taken = e->to;	/* a jump label's target */
			if (e->to == b[e->from].taken)
				b[e->from].taken_count += v;
		}
	}
	/* a block no counter sees leave (a call's, a native run's, a BUG's): what went in */
	for (i = 0; i < nb; i++) {
		uint64_t in = 0;
		size_t j;

		for (j = 0; j < ne; j++)
			if (kinstr_cache_fn__edge(plan, j)->to == i)
				in += edge_counts[j];
		if (in > b[i].count)
			b[i].count = in;
	}
	return 0;
}

