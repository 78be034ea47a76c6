// SPDX-License-Identifier: GPL-2.0
/*
 * Code positioning (lib/cache/layout.c): the Pettis–Hansen order of small graphs worked by hand
 * and the taken branches it predicts; then every function of the shipped snapshots of live
 * kernels (tests/data/sample-*.snap) laid out by made-up edge counts and read back with Zydis,
 * independently of the library: the counterparts tile the copy; a jcc's counterpart is the
 * original's condition aimed at the target's counterpart, or the inverted one aimed at the next
 * instruction's; where a counterpart runs on (a jcc's other way, an instruction that falls
 * through), it reaches the counterpart of the original's next instruction (or the jcc's
 * target), by a jmp or by what follows it in the copy; a dropped jmp's target follows it.
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <kinstr/cache.h>
#include <kinstr/kernel.h>
#include <kinstr/layout.h>
#include "check.h"

#define N KINSTR_LAYOUT_NONE

/*
 * B0: jcc to B2 (taken 90 times) else B1 (10); B1: jmp B3; B2 falls into B3; B3 returns. The
 * hot path B0 B2 B3 falls through with B0's jcc inverted; B1 goes after, with a jmp back to B3.
 */
static void t_diamond(void)
{
	struct kinstr_layout_block b[] = {
		{ .end = KINSTR_LAYOUT_JCC, .fall = 1, .taken = 2, .count = 100, .fall_count = 10, .taken_count = 90 },
		{ .end = KINSTR_LAYOUT_JMP, .fall = N, .taken = 3, .count = 10, .taken_count = 10 },
		{ .end = KINSTR_LAYOUT_FALLS, .fall = 3, .taken = N, .count = 90, .fall_count = 90 },
		{ .end = KINSTR_LAYOUT_LEAVES, .fall = N, .taken = N, .count = 100 },
	};
	uint32_t o[4], want[] = { 0, 2, 3, 1 };

	CHECK(kinstr_layout__order(b, 4, 0, o) == 0, "order failed");
	CHECK(!memcmp(o, want, sizeof(want)), "order %u %u %u %u", o[0], o[1], o[2], o[3]);
	/* before: B0's jcc taken 90, B1's jmp 10; after: the inverted jcc taken 10, B1's jmp 10 */
	CHECK(kinstr_layout__taken(b, 4, NULL) == 100, "before: %llu", (unsigned long long)kinstr_layout__taken(b, 4, NULL));
	CHECK(kinstr_layout__taken(b, 4, o) == 20, "after: %llu", (unsigned long long)kinstr_layout__taken(b, 4, o));
}

/*
 * A loop: B0 falls into B1 (the header); B1: jcc to B3 (exit, 1) else B2 (99); B2: jcc back to
 * B1 (98) else B4 (1, cold path); B3 returns; B4: jmp B1. The back edge B2->B1 cannot join B1
 * after B2 (B1 heads no chain once B0 falls into it), so B0 B1 B2 fall through; B4 never ran
 * and goes last, B3 between.
 */
static void t_loop(void)
{
	struct kinstr_layout_block b[] = {
		{ .end = KINSTR_LAYOUT_FALLS, .fall = 1, .taken = N, .count = 1, .fall_count = 1 },
		{ .end = KINSTR_LAYOUT_JCC, .fall = 2, .taken = 3, .count = 100, .fall_count = 99, .taken_count = 1 },
		{ .end = KINSTR_LAYOUT_JCC, .fall = 4, .taken = 1, .count = 99, .fall_count = 0, .taken_count = 99 },
		{ .end = KINSTR_LAYOUT_LEAVES, .fall = N, .taken = N, .count = 1 },
		{ .end = KINSTR_LAYOUT_JMP, .fall = N, .taken = 1, .count = 0 },
	};
	uint32_t o[5], want[] = { 0, 1, 2, 3, 4 };

	CHECK(kinstr_layout__order(b, 5, 0, o) == 0, "order failed");
	CHECK(!memcmp(o, want, sizeof(want)), "order %u %u %u %u %u", o[0], o[1], o[2], o[3], o[4]);
	CHECK(kinstr_layout__taken(b, 5, o) == 100, "taken %llu", (unsigned long long)kinstr_layout__taken(b, 5, o));
}

/* Blocks that never ran go after every hot chain, in their original order, their fall-throughs kept. */
static void t_cold_last(void)
{
	struct kinstr_layout_block b[] = {
		{ .end = KINSTR_LAYOUT_JCC, .fall = 1, .taken = 3, .count = 5, .fall_count = 0, .taken_count = 5 },
		{ .end = KINSTR_LAYOUT_FALLS, .fall = 2, .taken = N, .count = 0 },
		{ .end = KINSTR_LAYOUT_LEAVES, .fall = N, .taken = N, .count = 0 },
		{ .end = KINSTR_LAYOUT_LEAVES, .fall = N, .taken = N, .count = 5 },
	};
	uint32_t o[4], want[] = { 0, 3, 1, 2 };

	CHECK(kinstr_layout__order(b, 4, 0, o) == 0, "order failed");
	CHECK(!memcmp(o, want, sizeof(want)), "order %u %u %u %u", o[0], o[1], o[2], o[3]);
	CHECK(kinstr_layout__taken(b, 4, NULL) == 5 && kinstr_layout__taken(b, 4, o) == 0, "taken %llu -> %llu",
	      (unsigned long long)kinstr_layout__taken(b, 4, NULL), (unsigned long long)kinstr_layout__taken(b, 4, o));
}

static void t_bad_input(void)
{
	struct kinstr_layout_block b[] = { { .end = KINSTR_LAYOUT_FALLS, .fall = 7, .taken = N } };
	uint32_t o[1];

	CHECK(kinstr_layout__order(b, 1, 0, o) == -EINVAL, "a successor out of range accepted");
	CHECK(kinstr_layout__order(b, 1, 1, o) == -EINVAL, "an entry out of range accepted");
}

static ZydisDecoder zdec;

struct walk {
	size_t funcs, laid, inverted, added, dropped, shortb, failures;
};

#define FAIL(...) do { if (w->failures++ < 20) CHECK(0, __VA_ARGS__); return; } while (0)

/* Decode at copy address a of c: the instruction, its relative target (0: none). */
static int at_copy(const struct kinstr_cache_fn *c, uint64_t a, ZydisDecodedInstruction *zi, uint64_t *target)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t base = kinstr_cache_fn__copy_addr(c);
	ZyanU64 t = 0;

	if (a < base || a >= base + kinstr_cache_fn__size(c) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zdec, kinstr_cache_fn__bytes(c) + (a - base),
						 kinstr_cache_fn__size(c) - (a - base), zi, ops)))
		return -1;
	*target = 0;
	if (zi->operand_count_visible && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[0].imm.is_relative &&
	    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, &ops[0], a, &t)))
		*target = t;
	return 0;
}

static int find(const struct kinstr_cache_fn *c, uint64_t addr)
{
	size_t i;

	for (i = 0; i < kinstr_cache_fn__insn_cnt(c); i++)
		if (kinstr_cache_fn__insn(c, i)->addr == addr)
			return (int)i;
	return -1;
}

/* Where control entering the original's address a lands in the copy: its counterpart (a outside: a). */
static uint64_t land(const struct kinstr_cache_fn *c, uint64_t a)
{
	int j = find(c, a);

	return j < 0 ? a : kinstr_cache_fn__insn(c, (size_t)j)->copy;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > x[0]) - (y[1] > y[0]);
}

/* The jcc condition of a Zydis jcc mnemonic, as the low nibble of its opcode; -1 if not a jcc. */
static int cond_of(ZydisMnemonic m)
{
	static const ZydisMnemonic cc[16] = { ZYDIS_MNEMONIC_JO, ZYDIS_MNEMONIC_JNO, ZYDIS_MNEMONIC_JB, ZYDIS_MNEMONIC_JNB,
					      ZYDIS_MNEMONIC_JZ, ZYDIS_MNEMONIC_JNZ, ZYDIS_MNEMONIC_JBE, ZYDIS_MNEMONIC_JNBE,
					      ZYDIS_MNEMONIC_JS, ZYDIS_MNEMONIC_JNS, ZYDIS_MNEMONIC_JP, ZYDIS_MNEMONIC_JNP,
					      ZYDIS_MNEMONIC_JL, ZYDIS_MNEMONIC_JNL, ZYDIS_MNEMONIC_JLE, ZYDIS_MNEMONIC_JNLE };
	int i;

	for (i = 0; i < 16; i++)
		if (cc[i] == m)
			return i;
	return -1;
}

/* After a counterpart's form at a (end of the counterpart: e), control runs on to want. */
static int runs_on(const struct kinstr_cache_fn *c, uint64_t a, uint64_t e, uint64_t want)
{
	ZydisDecodedInstruction zi;
	uint64_t t;

	if (a == e)
		return want == e;
	return !at_copy(c, a, &zi, &t) && zi.mnemonic == ZYDIS_MNEMONIC_JMP && a + zi.length == e && t == want;
}

static void walk(struct walk *w, const struct kinstr_kernel *k, const struct kinstr_func *f,
		 const struct kinstr_cache_fn *c)
{
	size_t n = kinstr_cache_fn__insn_cnt(c), i;
	uint64_t (*r)[2] = calloc(n, sizeof(*r)), end;

	if (!r)
		FAIL("no memory");
	for (i = 0; i < n; i++) {
		r[i][0] = kinstr_cache_fn__insn(c, i)->copy;
		r[i][1] = r[i][0] + kinstr_cache_fn__insn(c, i)->copy_len;
	}
	qsort(r, n, sizeof(*r), cmp_u64);
	for (i = 0, end = kinstr_cache_fn__copy_addr(c); i < n && r[i][0] == end; i++)
		end = r[i][1];
	free(r);
	if (i < n || end != kinstr_cache_fn__copy_addr(c) + kinstr_cache_fn__size(c))
		FAIL("%s: the counterparts do not tile the copy", f->name);
	for (i = 0; i < n; i++) {
		const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, i);
		const unsigned char *tx = kinstr_kernel__text(k, ci->addr, ci->len);
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		ZydisDecodedInstruction zo, zc;
		uint64_t ot = 0, ct, next = ci->addr + ci->len, e = ci->copy + ci->copy_len;
		unsigned int fl = kinstr_cache_fn__laid_block(c, ci->block);
		ZyanU64 t;
		int oc;

		if (!tx || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zdec, tx, ci->len, &zo, ops)))
			FAIL("%s+0x%llx: the original does not decode", f->name, (unsigned long long)(ci->addr - f->addr));
		if (zo.operand_count_visible && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[0].imm.is_relative &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zo, &ops[0], ci->addr, &t)))
			ot = t;
		oc = cond_of(zo.mnemonic);
		if (ci->how == KINSTR_CACHE_RELOC && oc >= 0) {
			if (at_copy(c, ci->copy, &zc, &ct) || cond_of(zc.mnemonic) < 0)
				FAIL("%s+0x%llx: a jcc's counterpart is no jcc", f->name, (unsigned long long)(ci->addr - f->addr));
			if (cond_of(zc.mnemonic) == oc) {
				if (ct != land(c, ot) || !runs_on(c, ci->copy + zc.length, e, land(c, next)))
					FAIL("%s+0x%llx: a jcc's ways do not go where the original's do", f->name,
					     (unsigned long long)(ci->addr - f->addr));
			} else if (cond_of(zc.mnemonic) == (oc ^ 1)) {
				w->inverted++;
				if (find(c, ot) < 0 || ct != land(c, next) || !runs_on(c, ci->copy + zc.length, e, land(c, ot)))
					FAIL("%s+0x%llx: an inverted jcc's ways are not the original's swapped", f->name,
					     (unsigned long long)(ci->addr - f->addr));
			} else {
				FAIL("%s+0x%llx: a jcc's counterpart has another condition", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			}
			w->shortb += zc.length == 2;
			continue;
		}
		if (ci->how == KINSTR_CACHE_RELOC && zo.mnemonic == ZYDIS_MNEMONIC_JMP && ot) {
			if (!ci->copy_len) {
				w->dropped++;
				if (find(c, ot) < 0 || land(c, ot) != ci->copy || !kinstr_cache_fn__insn(c, (size_t)find(c, ot))->copy_len)
					FAIL("%s+0x%llx: a dropped jmp's target does not follow it", f->name,
					     (unsigned long long)(ci->addr - f->addr));
				continue;
			}
			if (at_copy(c, ci->copy, &zc, &ct) || zc.mnemonic != ZYDIS_MNEMONIC_JMP || ct != land(c, ot) ||
			    zc.length != ci->copy_len)
				FAIL("%s+0x%llx: a jmp's counterpart goes elsewhere", f->name, (unsigned long long)(ci->addr - f->addr));
			continue;
		}
		/* an instruction copied as it is, that falls through: its bytes, then it runs on to the next */
		if (ci->how == KINSTR_CACHE_COPY && zo.meta.category != ZYDIS_CATEGORY_RET &&
		    zo.meta.category != ZYDIS_CATEGORY_INTERRUPT && zo.mnemonic != ZYDIS_MNEMONIC_UD2 && i + 1 < n) {
			if (memcmp(kinstr_cache_fn__bytes(c) + (ci->copy - kinstr_cache_fn__copy_addr(c)), tx, ci->len) ||
			    !runs_on(c, ci->copy + ci->len, e, land(c, next)))
				FAIL("%s+0x%llx: a copied instruction does not run on to the next one's counterpart "
				     "(copy +0x%llx, %u bytes, the next's at +0x%llx)", f->name,
				     (unsigned long long)(ci->addr - f->addr), (unsigned long long)(ci->copy - kinstr_cache_fn__copy_addr(c)),
				     ci->copy_len, (unsigned long long)(land(c, next) - kinstr_cache_fn__copy_addr(c)));
			if (ci->copy_len > ci->len)
				w->added++;
		}
		(void)fl;
	}
}

/* Made-up counts: a quarter of the edges never ran, the others 1..999 times. */
static uint64_t made_up(uint64_t a, size_t e)
{
	uint64_t h = (a ^ (e * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	h ^= h >> 29;
	return (h & 3) ? 1 + (h >> 8) % 999 : 0;
}

static void t_every_function_laid(void)
{
	glob_t g;
	size_t p;

	ZydisDecoderInit(&zdec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (glob("tests/data/sample-*.snap", 0, NULL, &g) || !g.gl_pathc)
		SKIP("no snapshot in tests/data");
	for (p = 0; p < g.gl_pathc; p++) {
		struct kinstr_kernel *k = kinstr_kernel__open_snapshot(g.gl_pathv[p]);
		struct walk w = { 0 };
		size_t i, better = 0, worse = 0;

		CHECK(k != NULL, "%s: %s", g.gl_pathv[p], strerror(errno));
		if (!k)
			continue;
		for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
			const struct kinstr_func *f = kinstr_kernel__func(k, i);
			uint64_t copy = (f->addr & ~((1ULL << 30) - 1)) + (1ULL << 30) + (i << 12), *ec, before, after;
			struct kinstr_cache_opts o = { .sz = sizeof(o), .flags = KINSTR_CACHE_F_EDGES };
			struct kinstr_cache_fn *plan, *c;
			struct kinstr_layout_block *b;
			uint32_t *order;
			size_t nb, e;

			w.funcs++;
			plan = kinstr_cache_fn__build(k, f, copy, &o, NULL);
			if (!plan)
				continue;
			nb = kinstr_cache_fn__block_cnt(plan);
			ec = calloc(kinstr_cache_fn__edge_cnt(plan) + 1, sizeof(*ec));
			b = calloc(nb, sizeof(*b));
			order = calloc(nb, sizeof(*order));
			CHECK(ec && b && order, "no memory");
			for (e = 0; e < kinstr_cache_fn__edge_cnt(plan); e++)
				ec[e] = made_up(f->addr, e);
			if (kinstr_layout__blocks(k, plan, ec, b, NULL) || kinstr_layout__order(b, nb, 0, order)) {
				if (w.failures++ < 20)
					CHECK(0, "%s: no layout", f->name);
				goto next;
			}
			before = kinstr_layout__taken(b, nb, NULL);
			after = kinstr_layout__taken(b, nb, order);
			better += after < before;
			worse += after > before;
			o = (struct kinstr_cache_opts){ .sz = sizeof(o), .layout = order, .nlayout = nb };
			c = kinstr_cache_fn__build(k, f, copy, &o, NULL);
			if (!c) {
				if (w.failures++ < 20)
					CHECK(0, "%s: a function copied with counters is refused re-laid: %s", f->name,
					      strerror(errno));
				goto next;
			}
			w.laid++;
			CHECK(kinstr_cache_fn__laid(c) && kinstr_cache_fn__block_cnt(c) == nb, "%s: not laid", f->name);
			walk(&w, k, f, c);
			kinstr_cache_fn__free(c);
next:
			free(ec);
			free(b);
			free(order);
			kinstr_cache_fn__free(plan);
		}
		printf("     %s: %zu of %zu functions re-laid; %zu jccs inverted, %zu jmps dropped, %zu jmps added after "
		       "copied instructions, %zu jccs rel8; predicted taken branches fewer in %zu, more in %zu\n",
		       g.gl_pathv[p], w.laid, w.funcs, w.inverted, w.dropped, w.added, w.shortb, better, worse);
		CHECK(w.failures == 0, "%s: %zu copies wrong", g.gl_pathv[p], w.failures);
		CHECK(w.laid * 2 > w.funcs && w.inverted && w.dropped && w.added && w.shortb,
		      "%s: the walk did not reach every kind of change", g.gl_pathv[p]);
		/* never more taken branches than the original order on the counts it was given (it keeps that one) */
		CHECK(worse == 0, "%s: %zu layouts predict more taken branches than the original order", g.gl_pathv[p], worse);
		kinstr_kernel__close(k);
	}
	globfree(&g);
}

int main(void)
{
	RUN(t_diamond);
	RUN(t_loop);
	RUN(t_cold_last);
	RUN(t_bad_input);
	RUN(t_every_function_laid);
	return check_done();
}
