// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Per-function CFG and backward register/flags liveness; the rules are in cfg.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/cfg.h>
#include "lib/opts.h"
#include "lib/zalloc.h"

#define REG(r)		KINSTR_X86_REG(KINSTR_X86_##r)
#define ALL		KINSTR_X86_REGS_ALL
#define RSP_BIT		REG(RSP)
#define FLAGS_BIT	REG(FLAGS)

/* An opts->edges edge from an instruction of the function, resolved. */
struct extra_edge {
	uint64_t to;
	uint32_t from_insn;
	uint32_t to_insn;		/* KINSTR_CFG_NONE: outside, or not an insn boundary */
};

struct kinstr_cfg {
	uint64_t start;
	size_t size;
	size_t alloc_size;		/* of the one allocation, for kinstr__zfree() */
	uint32_t flags;
	uint32_t ninsns;
	uint32_t nblocks;
	uint32_t nedges;
	uint32_t ntargets;
	uint64_t return_thunk;
	struct kinstr_cfg_insn *insns;
	struct kinstr_cfg_block *blocks;
	struct extra_edge *edges;	/* sorted by from_insn */
	uint64_t *targets;		/* every direct branch and extra edge target, sorted */
};

/* Dataflow terms of one instruction. */
struct live_terms {
	uint32_t use, kill, exit;	/* exit: live on paths leaving the function */
	uint32_t fall;			/* falls through to the next instruction */
	uint32_t edge_first;		/* its extra edges: edges[edge_first .. + edge_cnt) */
	uint32_t edge_cnt;
};

/*
 * Instructions the sweep decodes on the stack (32 KiB) before the one allocation: most
 * functions fit, so their bytes are decoded once; past this, the rest is decoded twice (to
 * count it, then into the allocation).
 */
#define SWEEP_BUF 512

/*
 * The linear sweep over a function's bytes. int3 is decoded once and copied after that: the
 * kernel fills alignment gaps with it, megabytes of it after some sections.
 */
struct sweep {
	const uint8_t *code;
	size_t size;
	uint64_t start;
	struct kinstr_x86_insn int3;
	int have_int3;
};

/* Decode one instruction of the sweep; undecodable bytes become a 1-byte INVALID insn. */
static uint32_t sweep_one(struct sweep *sw, size_t off, struct kinstr_x86_insn *x, int *err)
{
	const uint8_t *code = sw->code + off;
	size_t left = sw->size - off;
	uint64_t addr = sw->start + off;

	/* int3 has no operand, no target: only its address differs from one to the next */
	if (*code == 0xcc && sw->have_int3) {
		*x = sw->int3;
		x->addr = addr;
		*err = 0;
		return 1;
	}
	*err = kinstr_x86__decode(code, left, addr, x);
	if (!*err) {
		if (*code == 0xcc && x->len == 1) {
			sw->int3 = *x;
			sw->have_int3 = 1;
		}
		return x->len;
	}
	memset(x, 0, sizeof(*x));
	x->addr = addr;
	x->flow = KINSTR_X86_FLOW_EXIT;
	/* a truncated tail is one unknown piece; a bad opcode is skipped byte by byte, as objdump */
	x->len = *err == -ENODATA && left <= KINSTR_X86_MAX_INSN_LEN ? (uint8_t)left : 1;
	memcpy(x->bytes, code, x->len);
	return x->len;
}

int kinstr_cfg__find_insn(const struct kinstr_cfg *cfg, uint64_t addr)
{
	uint32_t lo = 0, hi = cfg->ninsns;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t a = cfg->insns[mid].x.addr;

		if (a == addr)
			return (int)mid;
		if (a < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

static int inside(const struct kinstr_cfg *cfg, uint64_t addr)
{
	return addr >= cfg->start && addr - cfg->start < cfg->size;
}

static uint32_t entry_live(const struct kinstr_cfg_opts *opts, uint64_t target, int is_call)
{
	if (KINSTR_OPTS_HAS(opts, ctx) && opts->entry_live)
		return opts->entry_live(target, is_call, opts->ctx);
	return is_call ? KINSTR_CFG_LIVE_CALL : ALL;
}

/* Where does a direct branch go, and what does that mean for the instruction? */
static void resolve_target(struct kinstr_cfg *cfg, struct kinstr_cfg_insn *in,
			   const struct kinstr_cfg_opts *opts, struct live_terms *t)
{
	uint64_t tgt = in->x.target;
	int idx, is_call = in->x.flow == KINSTR_X86_FLOW_CALL;

	if (opts && opts->return_thunk && tgt == opts->return_thunk && !is_call) {
		in->flags |= KINSTR_CFG_I_RETURN;
		t->exit |= KINSTR_CFG_LIVE_RET;
		return;
	}
	if (!inside(cfg, tgt)) {
		if (is_call) {
			t->use |= entry_live(opts, tgt, 1);
		} else {
			in->flags |= KINSTR_CFG_I_TAIL_CALL;
			t->exit |= entry_live(opts, tgt, 0);
		}
		return;
	}
	/* a call to our own entry is recursion: an ordinary SysV call */
	if (is_call && tgt == cfg->start) {
		t->use |= entry_live(opts, tgt, 1);
		cfg->insns[0].flags |= KINSTR_CFG_I_TARGET;
		return;
	}
	idx = kinstr_cfg__find_insn(cfg, tgt);
	if (idx < 0) {
		in->flags |= KINSTR_CFG_I_BAD_TARGET;
		cfg->flags |= KINSTR_CFG_F_BAD_TARGET;
		t->exit |= ALL;
		return;
	}
	in->target_insn = (uint32_t)idx;
	cfg->insns[idx].flags |= KINSTR_CFG_I_TARGET | KINSTR_CFG_I_LEADER;
	if (is_call) {
		/* asm tricks (call 1f; ...): a ret in here may return to our own call site */
		cfg->flags |= KINSTR_CFG_F_INTERNAL_CALL;
		t->use |= KINSTR_CFG_LIVE_CALL;
	}
}

/* Use/kill/exit terms and flags of every instruction. */
static void classify(struct kinstr_cfg *cfg, const struct kinstr_cfg_opts *opts,
		     struct live_terms *terms)
{
	uint32_t i;

	for (i = 0; i < cfg->ninsns; i++) {
		struct kinstr_cfg_insn *in = &cfg->insns[i];
		struct live_terms *t = &terms[i];

		t->use = in->x.regs_read;
		t->kill = in->x.regs_killed;
		t->exit = 0;
		t->fall = kinstr_x86__falls_through(&in->x);
		if (in->flags & KINSTR_CFG_I_INVALID) {
			t->fall = 0;
			t->exit = ALL;
			continue;
		}
		switch (in->x.flow) {
		case KINSTR_X86_FLOW_JMP:
		case KINSTR_X86_FLOW_JCC:
			resolve_target(cfg, in, opts, t);
			break;
		case KINSTR_X86_FLOW_CALL:
			/* callees clobber the flags; GPRs are not killed (see cfg.h) */
			t->kill = FLAGS_BIT;
			resolve_target(cfg, in, opts, t);
			break;
		case KINSTR_X86_FLOW_CALL_IND:
			cfg->flags |= KINSTR_CFG_F_INDIRECT_CALL;
			t->kill = FLAGS_BIT;
			t->use |= KINSTR_CFG_LIVE_CALL;
			break;
		case KINSTR_X86_FLOW_JMP_IND:
			cfg->flags |= KINSTR_CFG_F_INDIRECT_JMP;
			t->exit = ALL;
			break;
		case KINSTR_X86_FLOW_RET:
			in->flags |= KINSTR_CFG_I_RETURN;
			t->exit = KINSTR_CFG_LIVE_RET;
			break;
		case KINSTR_X86_FLOW_EXIT:
			cfg->flags |= KINSTR_CFG_F_EXIT;
			if (in->x.attr & KINSTR_X86_A_FAR_JMP)	/* where it lands is as unknown */
				cfg->flags |= KINSTR_CFG_F_INDIRECT_JMP;
			t->exit = ALL;
			break;
		case KINSTR_X86_FLOW_INT3:
			t->use = t->kill = 0;
			t->exit = ALL;
			break;
		case KINSTR_X86_FLOW_UD2:
			t->use = t->kill = 0;
			break;
		default:
			break;
		}
	}

	/* with an internal call, a ret may go back into this function */
	if (cfg->flags & KINSTR_CFG_F_INTERNAL_CALL) {
		for (i = 0; i < cfg->ninsns; i++) {
			if (cfg->insns[i].x.flow == KINSTR_X86_FLOW_RET)
				terms[i].exit = ALL;
		}
	}

	/* falling out of the last instruction: into the next function or padding we never saw */
	if (cfg->ninsns) {
		struct kinstr_cfg_insn *last = &cfg->insns[cfg->ninsns - 1];
		struct live_terms *t = &terms[cfg->ninsns - 1];

		if (t->fall) {
			t->fall = 0;
			if (last->x.flow != KINSTR_X86_FLOW_UD2) {
				t->exit |= ALL;
				cfg->flags |= KINSTR_CFG_F_FALLS_OFF_END;
			}
		}
	}
}

/* Index of the instruction that contains addr (inside the function). */
static uint32_t containing_insn(const struct kinstr_cfg *cfg, uint64_t addr)
{
	uint32_t lo = 0, hi = cfg->ninsns;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cfg->insns[mid].x.addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct extra_edge *x = a, *y = b;

	return x->from_insn < y->from_insn ? -1 : x->from_insn > y->from_insn;
}

/* Resolve opts->edges: targets, leaders, and what leaves the function through them. */
static void add_edges(struct kinstr_cfg *cfg, const struct kinstr_cfg_opts *opts,
		      struct live_terms *terms)
{
	size_t k, nr = KINSTR_OPTS_HAS(opts, nr_edges) && opts->edges ? opts->nr_edges : 0;
	uint32_t i;

	cfg->nedges = 0;
	for (k = 0; k < nr; k++) {
		const struct kinstr_cfg_edge *e = &opts->edges[k];
		struct extra_edge *x = &cfg->edges[cfg->nedges];
		int idx;

		if (!inside(cfg, e->from))
			continue;
		x->from_insn = containing_insn(cfg, e->from);
		x->to = e->to;
		x->to_insn = KINSTR_CFG_NONE;
		cfg->insns[x->from_insn].flags |= KINSTR_CFG_I_EXTRA_EDGE;
		cfg->nedges++;
		if (!inside(cfg, e->to)) {
			if (opts->return_thunk && e->to == opts->return_thunk)
				terms[x->from_insn].exit |= KINSTR_CFG_LIVE_RET;
			else
				terms[x->from_insn].exit |= entry_live(opts, e->to, 0);
			continue;
		}
		idx = kinstr_cfg__find_insn(cfg, e->to);
		if (idx < 0) {
			cfg->flags |= KINSTR_CFG_F_BAD_TARGET;
			cfg->insns[x->from_insn].flags |= KINSTR_CFG_I_BAD_TARGET;
			terms[x->from_insn].exit |= ALL;
			continue;
		}
		x->to_insn = (uint32_t)idx;
		cfg->insns[idx].flags |= KINSTR_CFG_I_TARGET | KINSTR_CFG_I_LEADER;
	}
	qsort(cfg->edges, cfg->nedges, sizeof(cfg->edges[0]), cmp_edge);
	/* terms[].edge_first and edge_cnt start zeroed, as the whole allocation does */
	for (i = 0; i < cfg->nedges; i++) {
		struct live_terms *t = &terms[cfg->edges[i].from_insn];

		if (!t->edge_cnt)
			t->edge_first = i;
		t->edge_cnt++;
	}
}

static int is_pad(const struct kinstr_cfg_insn *in)
{
	if (in->flags & (KINSTR_CFG_I_TARGET | KINSTR_CFG_I_INVALID))
		return 0;
	return in->x.flow == KINSTR_X86_FLOW_INT3 || in->x.flow == KINSTR_X86_FLOW_UD2 ||
	       (in->x.attr & KINSTR_X86_A_NOP);
}

static void mark_padding(struct kinstr_cfg *cfg)
{
	uint32_t i = cfg->ninsns;

	while (i > 0 && is_pad(&cfg->insns[i - 1]))
		i--;
	/* a function made only of int3/nop keeps its first instruction as code */
	if (i == 0)
		i = 1;
	/* the padding starts a block of its own */
	if (i < cfg->ninsns)
		cfg->insns[i].flags |= KINSTR_CFG_I_LEADER;
	for (; i < cfg->ninsns; i++)
		cfg->insns[i].flags |= KINSTR_CFG_I_PADDING;
}

/*
 * Round-robin backward iteration to the fixpoint (from the zeroed live sets); functions are
 * small. One sweep is exact when no instruction reads the live set of itself or of one before
 * it (no loop, no backward edge): everything it reads is final already.
 */
static void solve_liveness(struct kinstr_cfg *cfg, const struct live_terms *terms)
{
	uint32_t i, k, n = cfg->ninsns;
	int changed, back;

	do {
		changed = 0;
		back = 0;
		for (i = n; i-- > 0;) {
			struct kinstr_cfg_insn *in = &cfg->insns[i];
			const struct live_terms *t = &terms[i];
			uint32_t out = t->exit, lin;

			if (t->fall)
				out |= cfg->insns[i + 1].live_in;
			if (in->target_insn != KINSTR_CFG_NONE) {
				out |= cfg->insns[in->target_insn].live_in;
				back |= in->target_insn <= i;
			}
			for (k = t->edge_first; k < t->edge_first + t->edge_cnt; k++) {
				if (cfg->edges[k].to_insn != KINSTR_CFG_NONE) {
					out |= cfg->insns[cfg->edges[k].to_insn].live_in;
					back |= cfg->edges[k].to_insn <= i;
				}
			}
			out |= RSP_BIT;
			lin = t->use | (out & ~t->kill) | RSP_BIT;
			if (out != in->live_out || lin != in->live_in) {
				in->live_out = out;
				in->live_in = lin;
				changed = 1;
			}
		}
	} while (changed && back);
}

/* Does control leave the straight line after this instruction? Calls stay inside blocks. */
static int ends_block(const struct kinstr_cfg_insn *in)
{
	if (in->flags & (KINSTR_CFG_I_INVALID | KINSTR_CFG_I_EXTRA_EDGE))
		return 1;
	switch (in->x.flow) {
	case KINSTR_X86_FLOW_NEXT:
	case KINSTR_X86_FLOW_CALL_IND:
		return 0;
#ifdef KINSTR_PLANT_ENDS_BLOCK	/* never on: tests/unit/test_fuzz.sh's planted bug, which the fuzz oracle must catch */
	case KINSTR_X86_FLOW_UD2:
		return 0;
#endif
	case KINSTR_X86_FLOW_CALL:
		return in->target_insn != KINSTR_CFG_NONE;
	default:
		return 1;
	}
}

/* Trailing padding, or any run of int3, is one block rather than one per int3. */
static int new_block_after(const struct kinstr_cfg_insn *prev, const struct kinstr_cfg_insn *in)
{
	if ((prev->flags & KINSTR_CFG_I_PADDING) && (in->flags & KINSTR_CFG_I_PADDING))
		return 0;
	if (prev->x.flow == KINSTR_X86_FLOW_INT3 && in->x.flow == KINSTR_X86_FLOW_INT3 &&
	    !(prev->flags & KINSTR_CFG_I_INVALID) && !(in->flags & KINSTR_CFG_I_INVALID))
		return 0;
	return ends_block(prev);
}

static uint32_t block_exits(const struct kinstr_cfg *cfg, uint32_t last, const struct live_terms *t)
{
	const struct kinstr_cfg_insn *in = &cfg->insns[last];
	uint32_t e = 0, k;

	if (in->flags & KINSTR_CFG_I_RETURN)
		e |= KINSTR_CFG_EXIT_RETURN;
	if (in->flags & KINSTR_CFG_I_TAIL_CALL)
		e |= KINSTR_CFG_EXIT_TAIL_CALL;
	if (in->flags & (KINSTR_CFG_I_INVALID | KINSTR_CFG_I_BAD_TARGET))
		e |= KINSTR_CFG_EXIT_UNKNOWN;
	for (k = t->edge_first; k < t->edge_first + t->edge_cnt; k++) {
		const struct extra_edge *x = &cfg->edges[k];

		if (x->to_insn != KINSTR_CFG_NONE || inside(cfg, x->to))
			continue;
		if (cfg->return_thunk && x->to == cfg->return_thunk)
			e |= KINSTR_CFG_EXIT_RETURN;
		else
			e |= KINSTR_CFG_EXIT_TAIL_CALL;
	}
	switch (in->x.flow) {
	case KINSTR_X86_FLOW_JMP_IND:
	case KINSTR_X86_FLOW_EXIT:
	case KINSTR_X86_FLOW_INT3:
		e |= KINSTR_CFG_EXIT_UNKNOWN;
		break;
	case KINSTR_X86_FLOW_UD2:
		if (!t->fall)
			e |= KINSTR_CFG_EXIT_TRAP;
		break;
	default:
		if (last == cfg->ninsns - 1 && kinstr_x86__falls_through(&in->x))
			e |= KINSTR_CFG_EXIT_UNKNOWN;
		break;
	}
	return e;
}

static void build_blocks(struct kinstr_cfg *cfg, const struct live_terms *terms)
{
	struct kinstr_cfg_block *b = NULL;
	uint32_t i;

	cfg->nblocks = 0;
	for (i = 0; i < cfg->ninsns; i++) {
		struct kinstr_cfg_insn *in = &cfg->insns[i];

		if (i == 0 || (in->flags & KINSTR_CFG_I_LEADER) ||
		    new_block_after(&cfg->insns[i - 1], in)) {
			in->flags |= KINSTR_CFG_I_LEADER;
			b = &cfg->blocks[cfg->nblocks++];
			b->start = in->x.addr;
			b->first = i;
			b->count = 0;
			b->succ[0] = b->succ[1] = KINSTR_CFG_NONE;
			b->exits = 0;
		}
		b->count++;
		b->end = in->x.addr + in->x.len;
		in->block = cfg->nblocks - 1;
	}

	/* every target and every fall-through is a leader now, so blocks of later insns are known */
	for (i = 0; i < cfg->nblocks; i++) {
		uint32_t last = cfg->blocks[i].first + cfg->blocks[i].count - 1, n = 0;
		const struct kinstr_cfg_insn *in = &cfg->insns[last];

		b = &cfg->blocks[i];
		if (terms[last].fall)
			b->succ[n++] = cfg->insns[last + 1].block;
		if (in->target_insn != KINSTR_CFG_NONE)
			b->succ[n++] = cfg->insns[in->target_insn].block;
		b->exits = block_exits(cfg, last, &terms[last]);
	}
}

/* How many more instructions the linear sweep will produce from off on. */
static size_t count_insns(struct sweep *sw, size_t off)
{
	struct kinstr_x86_insn x;
	size_t n = 0;
	int err;

	while (off < sw->size) {
		/* an int3 is one byte, decodable or not */
		if (sw->code[off] == 0xcc)
			off++;
		else
			off += sweep_one(sw, off, &x, &err);
		n++;
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The sorted target list kinstr_cfg__has_target_in() searches. */
static void collect_targets(struct kinstr_cfg *cfg)
{
	uint32_t i, n = 0;

	for (i = 0; i < cfg->ninsns; i++) {
		const struct kinstr_x86_insn *x = &cfg->insns[i].x;

		if (x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC ||
		    x->flow == KINSTR_X86_FLOW_CALL)
			cfg->targets[n++] = x->target;
	}
	for (i = 0; i < cfg->nedges; i++)
		cfg->targets[n++] = cfg->edges[i].to;
	qsort(cfg->targets, n, sizeof(cfg->targets[0]), cmp_u64);
	cfg->ntargets = n;
}

/* Mark instruction i after the sweep produced it with error err. */
static void swept(struct kinstr_cfg *cfg, uint32_t i, int err)
{
	struct kinstr_cfg_insn *in = &cfg->insns[i];

	in->target_insn = KINSTR_CFG_NONE;
	if (err) {
		in->flags |= KINSTR_CFG_I_INVALID;
		cfg->flags |= KINSTR_CFG_F_INVALID;
		if (err == -ENODATA)
			cfg->flags |= KINSTR_CFG_F_TRUNCATED;
	}
}

struct kinstr_cfg *kinstr_cfg__new(const void *code, size_t size, uint64_t start,
				   const struct kinstr_cfg_opts *opts)
{
	struct kinstr_x86_insn buf[SWEEP_BUF];
	struct sweep sw = { .code = code, .size = size, .start = start };
	int buf_err[SWEEP_BUF];
	struct live_terms *terms;
	struct kinstr_cfg *cfg;
	size_t n, nbuf, off, buf_end, bytes, nr_edges;
	uint32_t i;
	int err;

	if (!code || !size || start + size < start || !KINSTR_OPTS_VALID(opts) ||
	    (opts && !KINSTR_OPTS_HAS(opts, return_thunk))) {
		errno = EINVAL;
		return NULL;
	}
	for (nbuf = 0, off = 0; off < size && nbuf < SWEEP_BUF; nbuf++) {
		off += sweep_one(&sw, off, &buf[nbuf], &err);
		buf_err[nbuf] = err;
	}
	buf_end = off;
	n = nbuf + count_insns(&sw, buf_end);
	if (n > INT32_MAX) {
		errno = E2BIG;
		return NULL;
	}
	nr_edges = KINSTR_OPTS_HAS(opts, nr_edges) && opts->edges ? opts->nr_edges : 0;
	if (nr_edges > INT32_MAX) {
		errno = E2BIG;
		return NULL;
	}
	/*
	 * The one allocation: header, extra edges (first, for their alignment), branch targets,
	 * instructions, blocks (at most one per instruction), dataflow terms.
	 */
	bytes = sizeof(*cfg) + nr_edges * (sizeof(cfg->edges[0]) + sizeof(cfg->targets[0])) +
		n * (sizeof(cfg->targets[0]) + sizeof(cfg->insns[0]) + sizeof(cfg->blocks[0]) +
		     sizeof(*terms));
	cfg = kinstr__zalloc(bytes);
	if (!cfg)
		return NULL;
	cfg->alloc_size = bytes;
	cfg->start = start;
	cfg->size = size;
	cfg->return_thunk = opts ? opts->return_thunk : 0;
	cfg->ninsns = (uint32_t)n;
	cfg->edges = (struct extra_edge *)(cfg + 1);
	cfg->targets = (uint64_t *)(cfg->edges + nr_edges);
	cfg->insns = (struct kinstr_cfg_insn *)(cfg->targets + nr_edges + n);
	cfg->blocks = (struct kinstr_cfg_block *)(cfg->insns + n);
	terms = (struct live_terms *)(cfg->blocks + n);

	for (i = 0; i < nbuf; i++) {
		cfg->insns[i].x = buf[i];
		swept(cfg, i, buf_err[i]);
	}
	for (off = buf_end; i < n; i++) {
		off += sweep_one(&sw, off, &cfg->insns[i].x, &err);
		swept(cfg, i, err);
	}

	classify(cfg, opts, terms);
	add_edges(cfg, opts, terms);
	collect_targets(cfg);
	mark_padding(cfg);
	solve_liveness(cfg, terms);
	build_blocks(cfg, terms);
	return cfg;
}

void kinstr_cfg__free(struct kinstr_cfg *cfg)
{
	if (cfg)
		kinstr__zfree(cfg, cfg->alloc_size);
}

uint64_t kinstr_cfg__start(const struct kinstr_cfg *cfg)
{
	return cfg->start;
}

size_t kinstr_cfg__size(const struct kinstr_cfg *cfg)
{
	return cfg->size;
}

uint32_t kinstr_cfg__flags(const struct kinstr_cfg *cfg)
{
	return cfg->flags;
}

size_t kinstr_cfg__insn_cnt(const struct kinstr_cfg *cfg)
{
	return cfg->ninsns;
}

const struct kinstr_cfg_insn *kinstr_cfg__insn(const struct kinstr_cfg *cfg, size_t idx)
{
	return idx < cfg->ninsns ? &cfg->insns[idx] : NULL;
}

size_t kinstr_cfg__block_cnt(const struct kinstr_cfg *cfg)
{
	return cfg->nblocks;
}

const struct kinstr_cfg_block *kinstr_cfg__block(const struct kinstr_cfg *cfg, size_t idx)
{
	return idx < cfg->nblocks ? &cfg->blocks[idx] : NULL;
}

int kinstr_cfg__has_target_in(const struct kinstr_cfg *cfg, uint64_t lo, uint64_t hi)
{
	uint32_t l = 0, h = cfg->ntargets;

	while (l < h) {		/* first target above lo */
		uint32_t mid = l + (h - l) / 2;

		if (cfg->targets[mid] <= lo)
			l = mid + 1;
		else
			h = mid;
	}
	return l < cfg->ntargets && cfg->targets[l] < hi;
}
