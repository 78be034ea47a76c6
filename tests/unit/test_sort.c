// SPDX-License-Identifier: GPL-2.0
/*
 * The view's sort (lib/kernel/view.c, kview_sort): the same order as a stable sort, equal keys kept
 * in their order, for the shapes the view sorts (in order, one long sorted prefix and a tail, many
 * runs, reversed) and every element size it copies inline or not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kernel/kernel_priv.h"
#include "check.h"

struct e16 {
	uint64_t key, idx;	/* idx: the original position, compared by the reference only */
};

struct e24 {
	uint64_t key, idx, pad;
};

struct e12 {
	uint32_t key, idx, pad;
};

static int cmp16(const void *a, const void *b)
{
	const struct e16 *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int ref16(const void *a, const void *b)
{
	const struct e16 *x = a, *y = b;

	return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

static int cmp24(const void *a, const void *b)
{
	const struct e24 *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int ref24(const void *a, const void *b)
{
	const struct e24 *x = a, *y = b;

	return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

static int cmp12(const void *a, const void *b)
{
	const struct e12 *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int ref12(const void *a, const void *b)
{
	const struct e12 *x = a, *y = b;

	return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

enum shape { SORTED, PREFIX_TAIL, RUNS, REVERSED, SEGMENTS, RANDOM, NSHAPES };

static const char *shape_name[] = { "sorted", "prefix+tail", "runs", "reversed", "segments", "random" };

/* Keys of shape s, few distinct values so that many are equal. */
static void keys(uint64_t *k, size_t n, enum shape s, unsigned int seed)
{
	size_t i;

	srand(seed);
	for (i = 0; i < n; i++) {
		switch (s) {
		case SORTED:
			k[i] = i / 3;
			break;
		case PREFIX_TAIL:
			k[i] = i < n * 3 / 4 ? i / 2 : (uint64_t)rand() % (n / 2 + 1);
			break;
		case RUNS:
			k[i] = (i % 97) / 2 + (uint64_t)(rand() % 3);
			break;
		case REVERSED:
			k[i] = (n - i) / 4;
			break;
		case SEGMENTS:	/* as the view's reservations: sorted passes, one shuffled table, short ones */
			if (i < n / 3)
				k[i] = i * 3;
			else if (i < n / 2)
				k[i] = (uint64_t)rand() % n;
			else if (i < n * 9 / 10)
				k[i] = (i - n / 2) * 2;
			else
				k[i] = (uint64_t)rand() % 5 == 0 ? (uint64_t)rand() % n : i;
			break;
		default:
			k[i] = (uint64_t)rand() % 50;
		}
	}
}

#define SORT_CASE(T, CMP, REF)                                                                         \
	do {                                                                                           \
		T *a = calloc(n ? n : 1, sizeof(T)), *b = calloc(n ? n : 1, sizeof(T));               \
		size_t i;                                                                              \
		for (i = 0; i < n; i++) {                                                              \
			a[i].key = k[i];                                                               \
			a[i].idx = i;                                                                  \
		}                                                                                      \
		memcpy(b, a, n * sizeof(T));                                                           \
		CHECK(kview_sort(a, n, sizeof(T), CMP) == 0, "kview_sort failed");                     \
		qsort(b, n, sizeof(T), REF);                                                           \
		for (i = 0; i < n && a[i].key == b[i].key && a[i].idx == b[i].idx; i++)                \
			;                                                                              \
		CHECK(i == n, "%s, %zu elements of %zu bytes: element %zu is key %llu from %llu, a stable "   \
		      "sort has key %llu from %llu", shape_name[s], n, sizeof(T), i,                   \
		      (unsigned long long)a[i].key, (unsigned long long)a[i].idx,                      \
		      (unsigned long long)b[i].key, (unsigned long long)b[i].idx);                     \
		free(a);                                                                               \
		free(b);                                                                               \
	} while (0)

static void t_stable_like_reference(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 7, 31, 32, 33, 64, 1000, 4097, 50000, 300000 };
	size_t z;
	int s;

	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		size_t n = sizes[z];
		uint64_t *k = calloc(n ? n : 1, sizeof(*k));

		for (s = 0; s < NSHAPES; s++) {
			keys(k, n, (enum shape)s, 7u * (unsigned int)n + (unsigned int)s);
			SORT_CASE(struct e16, cmp16, ref16);
			SORT_CASE(struct e24, cmp24, ref24);
			SORT_CASE(struct e12, cmp12, ref12);
		}
		free(k);
	}
}

/* A sorted array is left as it is: nothing is allocated or moved (the common case of kallsyms). */
static void t_sorted_untouched(void)
{
	struct e16 a[5] = { { 1, 0 }, { 1, 1 }, { 2, 2 }, { 3, 3 }, { 3, 4 } }, b[5];

	memcpy(b, a, sizeof(a));
	CHECK(kview_sort(a, 5, sizeof(a[0]), cmp16) == 0 && !memcmp(a, b, sizeof(a)), "a sorted array changed");
}

int main(void)
{
	RUN(t_stable_like_reference);
	RUN(t_sorted_untouched);
	return check_done();
}
