// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The copy laid out in an order (kinstr_cache_fn__build() with opts.layout, from the first pass's
 * plan; the order itself is order.c's, include/kinstr/layout.h): no counters, each
 * block's instructions in their order, its end adapted to what follows it in the copy:
 *   - a jcc whose not-taken successor is next stays; whose target is next is inverted (j<not cc>
 *     to the not-taken successor, the target falling through); else it stays, a jmp after it to
 *     the not-taken successor;
 *   - a jmp to the block next is dropped (its SLS int3s move to the copy's end);
 *   - a block that runs on into the next instruction's block gets a jmp there when that is not next;
 *   - every such branch is rel8 where it reaches (relaxed until nothing shrinks).
 * kinstr.ko checks exactly these changes (kmod/check/cache.c, "Re-laid copies").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/cache.h>
#include <kinstr/kernel.h>
#include <kinstr/layout.h>
#include <kinstr/x86.h>
#include "lib/cache/cache_priv.h"

#define NONE KINSTR_LAYOUT_NONE

struct lay {
	const struct kinstr_cfg *cfg;
	struct plan *p;
	size_t first, n, nb;
	uint32_t *blk_first, *blk_cnt, *term, *fall, *taken, *nxt;
	uint8_t *kind, *flags;	/* per block: what its end is (KINSTR_LAYOUT_*), what the layout did */
	uint8_t *moved;		/* per instruction: an SLS int3 moved to the copy's end */
	uint8_t *near;		/* per block: its branch, its added jmp in rel32 form */
};

static const struct kinstr_x86_insn *xi(const struct lay *l, size_t i)
{
	return &kinstr_cfg__insn(l->cfg, l->first + i)->x;
}

/* The plan's index of the instruction at a, or SIZE_MAX. */
static size_t idx_at(const struct lay *l, uint64_t a)
{
	int t = kinstr_cfg__find_insn(l->cfg, a);

	return t >= 0 && (size_t)t >= l->first && (size_t)t < l->first + l->n ? (size_t)t - l->first : SIZE_MAX;
}

static int is_int3(const struct kinstr_x86_insn *x)
{
	return x->flow == KINSTR_X86_FLOW_INT3;
}

/* Each block's end, successors and what the layout does to it with nxt next. */
static int lay_plan(struct lay *l, const struct kinstr_kernel *k, struct kinstr_cache_refusal *r)
{
	size_t b, i;

	(void)k;
	for (b = 0; b < l->nb; b++) {
		size_t t = l->blk_first[b] + l->blk_cnt[b] - 1, ti;
		const struct kinstr_x86_insn *x;
		const struct plan *pt;

		while (t > l->blk_first[b] && is_int3(xi(l, t)))
			t--;
		l->term[b] = (uint32_t)t;
		x = xi(l, t);
		pt = &l->p[t];
		l->kind[b] = KINSTR_LAYOUT_LEAVES;
		l->fall[b] = l->taken[b] = NONE;
		if (pt->how == KINSTR_CACHE_RELOC && (x->flow == KINSTR_X86_FLOW_JCC || x->flow == KINSTR_X86_FLOW_JMP)) {
			l->kind[b] = x->flow == KINSTR_X86_FLOW_JCC ? KINSTR_LAYOUT_JCC : KINSTR_LAYOUT_JMP;
			ti = idx_at(l, x->target);
			if (ti != SIZE_MAX)
				l->taken[b] = l->p[ti].block;
		} else if (pt->how == KINSTR_CACHE_JUMP_LABEL) {
			l->kind[b] = KINSTR_LAYOUT_FIXED;
		} else if ((pt->how == KINSTR_CACHE_COPY || pt->how == KINSTR_CACHE_RELOC) && x->flow == KINSTR_X86_FLOW_NEXT) {
			l->kind[b] = KINSTR_LAYOUT_FALLS;
		}
		if (l->kind[b] != KINSTR_LAYOUT_LEAVES && l->kind[b] != KINSTR_LAYOUT_JMP) {
			if (t + 1 >= l->n || !l->p[t + 1].leader)
				return cc_refuse(r, KINSTR_CACHE_R_RUNS_ON, x->addr, 0,
						 "a block that runs on has no block after it to run on to");
			l->fall[b] = l->p[t + 1].block;
		}
		if (l->kind[b] == KINSTR_LAYOUT_JCC && l->nxt[b] != l->fall[b] && l->taken[b] != NONE &&
		    l->nxt[b] == l->taken[b])
			l->flags[b] |= KINSTR_CACHE_L_INVERTED;
		if ((l->kind[b] == KINSTR_LAYOUT_JCC && !(l->flags[b] & KINSTR_CACHE_L_INVERTED) && l->nxt[b] != l->fall[b]) ||
		    ((l->kind[b] == KINSTR_LAYOUT_FALLS || l->kind[b] == KINSTR_LAYOUT_FIXED) && l->nxt[b] != l->fall[b]))
			l->flags[b] |= KINSTR_CACHE_L_JMP_ADDED;
		/* a jmp to the next block goes, unless that block starts on a jmp (no empty chains) */
		if (l->kind[b] == KINSTR_LAYOUT_JMP && l->taken[b] != NONE && l->nxt[b] == l->taken[b] &&
		    !(l->p[l->blk_first[l->taken[b]]].how == KINSTR_CACHE_RELOC &&
		      xi(l, l->blk_first[l->taken[b]])->flow == KINSTR_X86_FLOW_JMP)) {
			l->flags[b] |= KINSTR_CACHE_L_JMP_DROPPED;
			for (i = t + 1; i < l->blk_first[b] + l->blk_cnt[b]; i++)
				l->moved[i] = 1;
		}
	}
	return 0;
}

/* The size of instruction i's counterpart in the copy (its added jmp included). */
static uint32_t lay_size(const struct lay *l, size_t i)
{
	uint32_t b = l->p[i].block;
	int sh = !l->near[b];
	uint32_t s;

	if (i != l->term[b])
		return l->p[i].size;
	if (l->flags[b] & KINSTR_CACHE_L_JMP_DROPPED)
		return 0;
	if (l->kind[b] == KINSTR_LAYOUT_JCC)
		s = sh ? 2 : JCC_LEN;
	else if (l->kind[b] == KINSTR_LAYOUT_JMP)
		s = sh ? 2 : JMP_LEN;
	else
		s = l->p[i].size;
	if (l->flags[b] & KINSTR_CACHE_L_JMP_ADDED)
		s += sh ? 2 : JMP_LEN;
	return s;
}

/* Every instruction's place: the blocks in order, then the moved int3s. */
static uint64_t lay_place(struct lay *l, const uint32_t *order, uint64_t at)
{
	size_t k, i;

	for (k = 0; k < l->nb; k++) {
		uint32_t b = order[k];

		for (i = l->blk_first[b]; i < l->blk_first[b] + l->blk_cnt[b]; i++) {
			if (l->moved[i])
				continue;
			l->p[i].copy = at;
			at += lay_size(l, i);
		}
	}
	for (i = 0; i < l->n; i++)
		if (l->moved[i]) {
			l->p[i].copy = at;
			at += l->p[i].size;
		}
	return at;
}

static int fits8(int64_t d)
{
	return d >= -128 && d <= 127;
}

/* Where block b's branch goes and where its added jmp goes (copy addresses; 0: none or outside). */
static void lay_targets(const struct lay *l, uint32_t b, uint64_t *br, uint64_t *aj)
{
	const struct kinstr_x86_insn *x = xi(l, l->term[b]);
	uint64_t fall = l->fall[b] != NONE ? l->p[l->blk_first[l->fall[b]]].copy : 0;
	uint64_t tk = l->taken[b] != NONE ? l->p[l->blk_first[l->taken[b]]].copy : 0;

	*br = 0;
	if (l->kind[b] == KINSTR_LAYOUT_JCC || l->kind[b] == KINSTR_LAYOUT_JMP)
		*br = l->flags[b] & KINSTR_CACHE_L_INVERTED ? fall : tk ? tk : x->target;
	*aj = l->flags[b] & KINSTR_CACHE_L_JMP_ADDED ? fall : 0;
}

/*
 * Branches rel8 where they reach: all start rel8 (shortest), and a branch that does not reach
 * grows to rel32 for good; growing only moves targets away, so this ends, every branch fitting.
 */
static uint64_t lay_relax(struct lay *l, const uint32_t *order, uint64_t copy_addr)
{
	uint64_t end;
	int changed;
	uint32_t b;

	do {
		changed = 0;
		end = lay_place(l, order, copy_addr);
		for (b = 0; b < l->nb; b++) {
			size_t t = l->term[b];
			uint64_t br, aj, at = l->p[t].copy;

			if (l->near[b] || (l->flags[b] & KINSTR_CACHE_L_JMP_DROPPED))
				continue;
			lay_targets(l, b, &br, &aj);
			if ((l->kind[b] == KINSTR_LAYOUT_JCC || l->kind[b] == KINSTR_LAYOUT_JMP) &&
			    !fits8((int64_t)(br - (at + 2)))) {
				l->near[b] = 1;
				changed = 1;
				continue;
			}
			if (aj && !fits8((int64_t)(aj - (at + lay_size(l, t)))))
				l->near[b] = changed = 1;
		}
	} while (changed);
	return end;
}

/* A branch at b (copy address at): op's rel8 form when short, else its rel32 (jcc: 0f 8x). */
static uint8_t *emit_branch(uint8_t *b, uint64_t at, int jcc, int cond, int sh, uint64_t to)
{
	if (sh) {
		b[0] = jcc ? (uint8_t)(0x70 | cond) : 0xeb;
		b[1] = (uint8_t)(int8_t)(int64_t)(to - (at + 2));
		return b + 2;
	}
	if (jcc) {
		uint8_t op[] = { 0x0f, (uint8_t)(0x80 | cond) };

		return cc_emit_rel32(b, at, op, 2, to);
	}
	return cc_emit_rel32(b, at, (const uint8_t[]){ 0xe9 }, 1, to);
}

/* Instruction i (its block's end) as laid: its branch, and the added jmp. */
static int lay_emit_term(const struct lay *l, size_t i, uint8_t *out, const struct kinstr_cache_opts *o,
			 struct kinstr_cache_refusal *r)
{
	uint32_t b = l->p[i].block;
	const struct kinstr_x86_insn *x = xi(l, i);
	uint64_t br, aj, at = l->p[i].copy;
	int sh = !l->near[b];
	uint8_t *e = out;

	if (l->flags[b] & KINSTR_CACHE_L_JMP_DROPPED)
		return 0;	/* nothing: its target follows */
	lay_targets(l, b, &br, &aj);
	if (l->kind[b] == KINSTR_LAYOUT_JCC || l->kind[b] == KINSTR_LAYOUT_JMP) {
		int jcc = l->kind[b] == KINSTR_LAYOUT_JCC;

		if (!sh && !cc_fits_rel32(at + (jcc ? JCC_LEN : JMP_LEN), br))
			return cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a branch target beyond rel32 reach of the copy");
		e = emit_branch(out, at, jcc, jcc ? cc_jcc_cond(x) ^ !!(l->flags[b] & KINSTR_CACHE_L_INVERTED) : 0, sh, br);
	} else {
		if (cc_emit_insn(l->cfg, o, l->p, l->first, l->n, i, out, r))
			return -EPERM;
		e = out + l->p[i].size;
	}
	if (aj)
		emit_branch(e, at + (uint64_t)(e - out), 0, 0, sh, aj);
	return 0;
}

static void lay_free(struct lay *l)
{
	free(l->blk_first);
	free(l->blk_cnt);
	free(l->term);
	free(l->fall);
	free(l->taken);
	free(l->nxt);
	free(l->kind);
	free(l->moved);
	free(l->near);
}

struct kinstr_cache_fn *cc_build_laid(const struct kinstr_kernel *k, const struct kinstr_func *f,
				      const struct kinstr_cfg *cfg, struct plan *p, size_t first, size_t n,
				      uint64_t code_end, uint64_t copy_addr, const struct kinstr_cache_opts *o,
				      struct kinstr_cache_refusal *r)
{
	struct lay l = { .cfg = cfg, .p = p, .first = first, .n = n };
	struct kinstr_cache_fn *c = NULL;
	uint8_t *seen = NULL;
	size_t i, nr = 0, total;
	uint64_t end;
	uint32_t b;

	for (i = 0; i < n; i++) {
		if (p[i].leader)
			l.nb++;
		p[i].block = (uint32_t)(l.nb - 1);
		p[i].counter = 0;	/* no counters: the first pass placed none yet */
	}
	if (o->nlayout != l.nb) {
		errno = EINVAL;
		return NULL;
	}
	l.blk_first = calloc(l.nb, sizeof(uint32_t));
	l.blk_cnt = calloc(l.nb, sizeof(uint32_t));
	l.term = calloc(l.nb, sizeof(uint32_t));
	l.fall = calloc(l.nb, sizeof(uint32_t));
	l.taken = calloc(l.nb, sizeof(uint32_t));
	l.nxt = calloc(l.nb, sizeof(uint32_t));
	l.kind = calloc(l.nb, 1);
	l.near = calloc(l.nb, 1);
	l.moved = calloc(n, 1);
	seen = calloc(l.nb, 1);
	c = calloc(1, sizeof(*c));
	if (!l.blk_first || !l.blk_cnt || !l.term || !l.fall || !l.taken || !l.nxt || !l.kind || !l.near || !l.moved ||
	    !seen || !c || !(c->laid = calloc(l.nb, 1)))
		goto nomem;
	l.flags = c->laid;
	for (i = 0; i < l.nb; i++) {	/* a permutation of the blocks */
		if (o->layout[i] >= l.nb || seen[o->layout[i]]) {
			errno = EINVAL;
			goto fail;
		}
		seen[o->layout[i]] = 1;
		l.nxt[o->layout[i]] = i + 1 < l.nb ? o->layout[i + 1] : NONE;
	}
	for (i = 0; i < n; i++) {
		if (p[i].leader)
			l.blk_first[p[i].block] = (uint32_t)i;
		l.blk_cnt[p[i].block]++;
	}
	if (lay_plan(&l, k, r))
		goto fail;
	end = lay_relax(&l, o->layout, copy_addr);
	total = (size_t)(end - copy_addr);
	for (i = 0; i < n; i++)
		nr += !!p[i].reentry;
	if (!(c->bytes = malloc(total ? total : 1)) || !(c->insns = calloc(n, sizeof(*c->insns))) ||
	    !(c->blocks = calloc(l.nb, sizeof(*c->blocks))) || !(c->reentries = calloc(nr ? nr : 1, sizeof(*c->reentries))))
		goto nomem;
	c->copy_addr = copy_addr;
	c->size = total;
	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = xi(&l, i);
		struct kinstr_cache_insn *ci = &c->insns[i];
		uint8_t *out = c->bytes + (p[i].copy - copy_addr);

		b = p[i].block;
		ci->addr = x->addr;
		ci->len = x->len;
		ci->how = p[i].how;
		ci->block = b;
		ci->copy = p[i].copy;
		ci->copy_len = (uint8_t)(l.moved[i] ? p[i].size : lay_size(&l, i));
		if (i == l.term[b] && !l.moved[i]) {
			if (lay_emit_term(&l, i, out, o, r))
				goto fail;
		} else if (cc_emit_insn(cfg, o, p, first, n, i, out, r)) {
			goto fail;
		}
		if (p[i].leader) {
			c->blocks[b].addr = x->addr;
			c->blocks[b].copy = p[i].copy;
			c->blocks[b].first = (uint32_t)i;
			c->blocks[b].ctr = b;
		}
		c->blocks[b].count++;
		if (p[i].reentry) {
			struct kinstr_cache_reentry *re = &c->reentries[c->nr_reentries++];

			re->addr = x->addr;
			re->copy = p[i].copy;
			re->why = p[i].reentry - 1;
			re->jump = cc_reentry_jump_fits(k, cfg, p, first, n, i, code_end, f);
			if (!re->jump && kinstr_kernel__reserved(k, x->addr, 1)) {
				cc_refuse(r, KINSTR_CACHE_R_REENTRY, x->addr, kinstr_kernel__reserved(k, x->addr, 1),
					  "a re-entry point the kernel reserves");
				goto fail;
			}
		}
	}
	for (b = 0; b < l.nb; b++)
		if (!l.near[b] && (l.kind[b] == KINSTR_LAYOUT_JCC || l.kind[b] == KINSTR_LAYOUT_JMP ||
				   (l.flags[b] & KINSTR_CACHE_L_JMP_ADDED)) && !(l.flags[b] & KINSTR_CACHE_L_JMP_DROPPED))
			l.flags[b] |= KINSTR_CACHE_L_SHORT;
	c->nr_insns = n;
	c->nr_blocks = l.nb;
	free(seen);
	lay_free(&l);
	return c;
nomem:
	errno = ENOMEM;
fail:
	i = errno ? errno : ENOMEM;
	free(seen);
	lay_free(&l);
	if (c) {	/* not kinstr_cache_fn__free(): build.c calls down to here */
		free(c->bytes);
		free(c->insns);
		free(c->blocks);
		free(c->reentries);
		free(c->laid);
		free(c);
	}
	errno = (int)i;
	return NULL;
}

int kinstr_cache_fn__laid(const struct kinstr_cache_fn *c)
{
	return c && c->laid;
}

unsigned int kinstr_cache_fn__laid_block(const struct kinstr_cache_fn *c, size_t b)
{
	return c && c->laid && b < c->nr_blocks ? c->laid[b] : 0;
}
