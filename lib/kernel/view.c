// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The kernel's code as analysis sees it: functions, live text, reservations. Built from the
 * running kernel (live.c, reserve.c) or loaded from a snapshot (snapshot.c); everything after
 * loading is shared: the structure's helpers and its queries, here.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <bpf/btf.h>
#include <kinstr/kernel.h>
#include "rules/entry.h"
#include "rules/symbols.h"
#include "lib/kernel/kernel_priv.h"

/* Room for one more element in *arr (n in use, *cap allocated, doubling from first): 0 or -ENOMEM. */
int kview_grow(void **arr, size_t n, size_t *cap, size_t first, size_t elem)
{
	size_t c = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* One element of size bytes: the sizes the view sorts copied inline, not through memcpy()'s call. */
static inline void copy_elem(char *dst, const char *src, size_t size)
{
	switch (size) {
	case 16:
		memcpy(dst, src, 16);
		break;
	case 24:
		memcpy(dst, src, 24);
		break;
	case 32:
		memcpy(dst, src, 32);
		break;
	case 40:
		memcpy(dst, src, 40);
		break;
	default:
		memcpy(dst, src, size);
	}
}

struct sorter {
	char *a, *tmp;
	size_t size;
	int (*cmp)(const void *, const void *);
};

#define AT(s, i) ((s)->a + (i) * (s)->size)

/*
 * Merge the adjacent sorted runs [lo, mid) and [mid, hi), stably. What already lies in place is
 * left there: the left run's elements up to the first after a[mid], the right run's from the first
 * not before a[mid - 1] (found by binary search); only the rest goes through tmp.
 */
static void merge_at(const struct sorter *s, size_t lo, size_t mid, size_t hi)
{
	size_t l, r, o, x, y, m;

	if (s->cmp(AT(s, mid - 1), AT(s, mid)) <= 0)
		return;
	for (x = lo, y = mid; x < y;) {	/* the first of the left run after a[mid] */
		m = x + (y - x) / 2;
		if (s->cmp(AT(s, m), AT(s, mid)) <= 0)
			x = m + 1;
		else
			y = m;
	}
	lo = x;
	for (x = mid, y = hi; x < y;) {	/* the first of the right run not before a[mid - 1] */
		m = x + (y - x) / 2;
		if (s->cmp(AT(s, m), AT(s, mid - 1)) < 0)
			x = m + 1;
		else
			y = m;
	}
	hi = x;
	memcpy(s->tmp, AT(s, lo), (mid - lo) * s->size);
	for (l = 0, r = mid, o = lo; l < mid - lo && r < hi; o++) {
		if (s->cmp(s->tmp + l * s->size, AT(s, r)) <= 0)
			copy_elem(AT(s, o), s->tmp + l++ * s->size, s->size);
		else
			copy_elem(AT(s, o), AT(s, r++), s->size);
	}
	memcpy(AT(s, o), s->tmp + l * s->size, (mid - lo - l) * s->size);
}

#define MIN_RUN 32

/*
 * A stable sort of n elements of size bytes: a natural merge sort (as Timsort: runs found as they
 * are, short ones extended by binary insertion, merged so that a long run is copied a few times,
 * not once per pass). What the view sorts comes mostly in long ordered runs (kallsyms in address
 * order, one table or one pass over the functions at a time), where qsort() took log2(n) passes of
 * indirect calls (0.1 s of every start under TCG). Stable, as glibc's qsort() (a merge sort) is:
 * the order of equal elements, and so the view, is the same.
 */
int kview_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	struct sorter s = { .a = base, .size = size, .cmp = cmp };
	size_t runs[128][2], nr = 0, i, j, end;
	char *hold;

	for (i = 1; i < n && cmp(AT(&s, i - 1), AT(&s, i)) <= 0; i++)
		;
	if (i >= n)
		return 0;	/* in order already: nothing moves */
	s.tmp = malloc(n * size + size);
	if (!s.tmp)
		return -ENOMEM;
	hold = s.tmp + n * size;
	for (i = 0; i < n; i = end) {
		for (end = i + 1; end < n && cmp(AT(&s, end - 1), AT(&s, end)) <= 0; end++)
			;
		/* a short run: extended to MIN_RUN by binary insertion (after its equals: stable) */
		for (; end < n && end - i < MIN_RUN; end++) {
			size_t x = i, y = end, m;

			while (x < y) {
				m = x + (y - x) / 2;
				if (cmp(AT(&s, m), AT(&s, end)) <= 0)
					x = m + 1;
				else
					y = m;
			}
			if (x == end)
				continue;
			memcpy(hold, AT(&s, end), size);
			memmove(AT(&s, x + 1), AT(&s, x), (end - x) * size);
			memcpy(AT(&s, x), hold, size);
		}
		if (nr == sizeof(runs) / sizeof(runs[0])) {	/* never, by the rule below: kept bounded anyway */
			merge_at(&s, runs[nr - 2][0], runs[nr - 2][1], runs[nr - 1][1]);
			runs[nr - 2][1] = runs[nr - 1][1];
			nr--;
		}
		runs[nr][0] = i;
		runs[nr++][1] = end;
		/* keep run lengths decreasing like Fibonacci numbers down the stack (Timsort's rule) */
		while (nr > 1) {
#define LEN(k) (runs[k][1] - runs[k][0])
			size_t k = nr - 2;

			if ((nr >= 3 && LEN(nr - 3) <= LEN(nr - 2) + LEN(nr - 1)) ||
			    (nr >= 4 && LEN(nr - 4) <= LEN(nr - 3) + LEN(nr - 2))) {
				if (LEN(nr - 3) < LEN(nr - 1))
					k = nr - 3;
			} else if (LEN(nr - 2) > LEN(nr - 1)) {
				break;
			}
#undef LEN
			merge_at(&s, runs[k][0], runs[k][1], runs[k + 1][1]);
			runs[k][1] = runs[k + 1][1];
			for (j = k + 1; j + 1 < nr; j++) {
				runs[j][0] = runs[j + 1][0];
				runs[j][1] = runs[j + 1][1];
			}
			nr--;
		}
	}
	while (nr > 1) {
		merge_at(&s, runs[nr - 2][0], runs[nr - 2][1], runs[nr - 1][1]);
		runs[nr - 2][1] = runs[nr - 1][1];
		nr--;
	}
	free(s.tmp);
	return 0;
}

#undef AT

int kview_fact_add(struct kinstr_kernel *k, unsigned long long site, unsigned long long key, unsigned int reason)
{
	if (kview_grow((void **)&k->facts, k->nfacts, &k->facts_cap, 4096, sizeof(*k->facts)))
		return -ENOMEM;
	k->facts[k->nfacts++] = (struct site_fact){ site, key & ~3ull, reason, (unsigned int)(key & 3) };
	return 0;
}

int kview_cmp_fact(const void *a, const void *b)
{
	const struct site_fact *x = a, *y = b;

	return x->site < y->site ? -1 : x->site > y->site;
}

int kview_cmp_sck(const void *a, const void *b)
{
	const struct sck *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The first of n elements (sorted by a 64-bit key at their start) whose key is >= key. */
static size_t lower_bound(const void *base, size_t n, size_t elem, unsigned long long key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		unsigned long long v;

		memcpy(&v, (const char *)base + mid * elem, sizeof(v));
		if (v < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct site_fact *fact_at(const struct kinstr_kernel *k, unsigned long long site, unsigned int reason)
{
	size_t lo = lower_bound(k->facts, k->nfacts, sizeof(*k->facts), site);

	for (; lo < k->nfacts && k->facts[lo].site == site; lo++)
		if (k->facts[lo].reason == reason)
			return &k->facts[lo];
	return NULL;
}

int kinstr_kernel__jump_label(const struct kinstr_kernel *k, unsigned long long site, unsigned long long *key,
			      int *branch)
{
	const struct site_fact *f = fact_at(k, site, KINSTR_R_JUMP_LABEL);

	if (!f)
		return -ENOENT;
	*key = f->key;
	*branch = f->flags & 1;
	return 0;
}

int kinstr_kernel__static_call(const struct kinstr_kernel *k, unsigned long long site, unsigned long long *tramp,
			       int *tail)
{
	const struct site_fact *f = fact_at(k, site, KINSTR_R_STATIC_CALL);
	const struct kinstr_func *t;
	char name[160];
	size_t lo;

	if (!f)
		return -ENOENT;
	lo = lower_bound(k->scks, k->nscks, sizeof(*k->scks), f->key);
	if (lo == k->nscks || k->scks[lo].addr != f->key)
		return -ENOENT;
	/* the key __SCK__<name> has the trampoline __SCT__<name>, which static_call_update() keeps current */
	snprintf(name, sizeof(name), "__SCT__%s", k->scks[lo].name);
	t = kinstr_kernel__find_func(k, name);
	if (!t)
		return -ENOENT;
	*tramp = t->addr;
	*tail = f->flags & 1;
	return 0;
}

int kview_edge_add(struct kinstr_kernel *k, unsigned long long from, unsigned long long to)
{
	if (kview_grow((void **)&k->edges, k->nedges, &k->edges_cap, 4096, sizeof(*k->edges)))
		return -ENOMEM;
	k->edges[k->nedges++] = (struct kinstr_cfg_edge){ from, to };
	return 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct kinstr_cfg_edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

size_t kinstr_kernel__edges(const struct kinstr_kernel *k, unsigned long long start,
			    unsigned long long end, const struct kinstr_cfg_edge **edges)
{
	size_t lo = lower_bound(k->edges, k->nedges, sizeof(*k->edges), start), first = lo;

	while (lo < k->nedges && k->edges[lo].from < end)
		lo++;
	*edges = k->edges ? k->edges + first : NULL;
	return lo - first;
}

/* ---- shared helpers ---------------------------------------------------------------------- */

int kview_cmp_func_addr(const void *a, const void *b)
{
	const struct kinstr_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

int kview_cmp_chunk(const void *a, const void *b)
{
	const struct text_chunk *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int kview_cmp_res(const void *a, const void *b)
{
	const struct kinstr_reserved *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

int kview_res_add(struct kinstr_kernel *k, unsigned long long addr, unsigned long long len,
		   unsigned int reason)
{
	if (!len)
		return 0;
	if (k->nres == k->res_cap) {
		size_t cap = k->res_cap ? k->res_cap * 2 : 4096;
		void *p = realloc(k->res, cap * sizeof(*k->res));

		if (!p)
			return -ENOMEM;
		k->res = p;
		k->res_cap = cap;
	}
	k->res[k->nres++] = (struct kinstr_reserved){ addr, len > UINT32_MAX ? UINT32_MAX : len, reason };
	return 0;
}

#define NAME_NONE UINT32_MAX

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* The slot that holds name's chain, or the empty one where it would go. */
static size_t name_slot(const struct kinstr_kernel *k, const char *name)
{
	size_t m = k->name_slots - 1, i = name_hash(name) & m;

	while (k->name_head[i] && strcmp(k->funcs[k->name_head[i] - 1].name, name))
		i = (i + 1) & m;
	return i;
}

/*
 * Index the functions by name: one pass in address order, so each name's chain is in address
 * order too (sorting the names took 0.2 s of every start under TCG).
 */
int kview_index_names(struct kinstr_kernel *k)
{
	uint32_t *tail;
	size_t i;

	free(k->name_head);
	free(k->name_next);
	for (k->name_slots = 1024; k->name_slots < 2 * k->nfuncs; k->name_slots *= 2)
		;
	k->name_head = calloc(k->name_slots, sizeof(*k->name_head));
	k->name_next = calloc(k->nfuncs + 1, sizeof(*k->name_next));
	tail = calloc(k->nfuncs + 1, sizeof(*tail));	/* per chain head: its last function */
	if (!k->name_head || !k->name_next || !tail || k->nfuncs >= NAME_NONE) {
		free(tail);
		free(k->name_head);
		free(k->name_next);
		k->name_head = k->name_next = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < k->nfuncs; i++) {
		size_t s = name_slot(k, k->funcs[i].name);

		k->name_next[i] = NAME_NONE;
		if (!k->name_head[s]) {
			k->name_head[s] = (uint32_t)i + 1;
			tail[i] = (uint32_t)i;
		} else {
			uint32_t h = k->name_head[s] - 1;

			k->name_next[tail[h]] = (uint32_t)i;
			tail[h] = (uint32_t)i;
		}
	}
	free(tail);
	return 0;
}

/* The first function named name in address order (NAME_NONE if none); name_next[] goes on. */
uint32_t kview_first_named(const struct kinstr_kernel *k, const char *name)
{
	size_t s;

	if (!k->name_head)
		return NAME_NONE;
	s = name_slot(k, name);
	return k->name_head[s] ? k->name_head[s] - 1 : NAME_NONE;
}

/* Sort and deduplicate the reservations, index functions by name: the view is then complete. */
int kview_finish(struct kinstr_kernel *k)
{
	size_t i, j;

	if (kview_sort(k->res, k->nres, sizeof(*k->res), kview_cmp_res))
		return -ENOMEM;
	for (i = j = 0; i < k->nres; i++)
		if (!j || kview_cmp_res(&k->res[j - 1], &k->res[i]))
			k->res[j++] = k->res[i];
	k->nres = j;
	if (kview_sort(k->edges, k->nedges, sizeof(*k->edges), cmp_edge))
		return -ENOMEM;
	k->res_maxend = calloc(k->nres + 1, sizeof(*k->res_maxend));
	if (!k->res_maxend)
		return -ENOMEM;
	for (i = 0; i < k->nres; i++) {
		unsigned long long end = k->res[i].addr + k->res[i].len;

		k->res_maxend[i] = i && k->res_maxend[i - 1] > end ? k->res_maxend[i - 1] : end;
	}

	return k->name_head ? 0 : kview_index_names(k);	/* the functions are fixed once indexed */
}

void kinstr_kernel__close(struct kinstr_kernel *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nchunks; i++)
		free(k->chunks[i].bytes);
	free(k->chunks);
	free(k->funcs);
	free(k->held);
	free(k->name_head);
	free(k->name_next);
	free(k->names);
	free(k->res);
	free(k->res_maxend);
	free(k->edges);
	free(k->mods);
	free(k->facts);
	free(k->scks);
	free(k);
}

struct kinstr_kernel *kview_fail(struct kinstr_kernel *k, int err)
{
	kinstr_kernel__close(k);
	errno = err < 0 ? -err : err;
	return NULL;
}

/* ---- queries --------------------------------------------------------------------------- */

const char *kinstr_kernel__release(const struct kinstr_kernel *k)
{
	return k->release;
}

const struct kinstr_layout *kinstr_kernel__layout(const struct kinstr_kernel *k)
{
	return &k->layout;
}

unsigned long long kinstr_kernel__current_task(const struct kinstr_kernel *k)
{
	return k->current_task;
}

unsigned long long kinstr_kernel__return_thunk(const struct kinstr_kernel *k)
{
	return k->return_thunk;
}

size_t kinstr_kernel__func_cnt(const struct kinstr_kernel *k)
{
	return k->nfuncs;
}

const struct kinstr_func *kinstr_kernel__func(const struct kinstr_kernel *k, size_t i)
{
	return i < k->nfuncs ? &k->funcs[i] : NULL;
}

/* The first function of that name in address order, ambiguous or not (internal use). */
const struct kinstr_func *kview_find_first(const struct kinstr_kernel *k, const char *name)
{
	uint32_t i = kview_first_named(k, name);

	return i != NAME_NONE ? &k->funcs[i] : NULL;
}

size_t kinstr_kernel__lookup(const struct kinstr_kernel *k, const char *name, const struct kinstr_func **out,
			     size_t max)
{
	const char *at = strchr(name, '@');
	unsigned long long addr = 0;
	char base[512];
	uint32_t i, prev;
	size_t n = 0;

	if (at) {
		char *end;

		if ((size_t)(at - name) >= sizeof(base) || !at[1] || at[1] == '-')
			return 0;
		memcpy(base, name, at - name);
		base[at - name] = 0;
		errno = 0;
		addr = strtoull(at + 1, &end, 16);
		if (errno || *end)
			return 0;
		name = base;
	}
	for (i = kview_first_named(k, name), prev = NAME_NONE; i != NAME_NONE; prev = i, i = k->name_next[i]) {
		const struct kinstr_func *f = &k->funcs[i];

		/* another address; or the same function listed twice (a chain is in address order) */
		if ((at && f->addr != addr) || (prev != NAME_NONE && k->funcs[prev].addr == f->addr))
			continue;
		if (out && n < max)
			out[n] = f;
		n++;
	}
	return n;
}

const struct kinstr_func *kinstr_kernel__find_func(const struct kinstr_kernel *k, const char *name)
{
	const struct kinstr_func *f[2];
	size_t n = kinstr_kernel__lookup(k, name, f, 2);

	if (n == 1)
		return f[0];
	errno = n ? ENOTUNIQ : ENOENT;
	return NULL;
}

bool kinstr_kernel__name_unique(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	return kinstr_kernel__lookup(k, f->name, NULL, 0) <= 1;
}

const struct kinstr_func *kinstr_kernel__func_at(const struct kinstr_kernel *k, unsigned long long addr)
{
	size_t lo = 0, hi = k->nfuncs;

	while (lo < hi) {	/* first function starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr - k->funcs[lo - 1].addr < k->funcs[lo - 1].size)
		return &k->funcs[lo - 1];
	return NULL;
}

const unsigned char *kinstr_kernel__text(const struct kinstr_kernel *k, unsigned long long addr,
					 size_t len)
{
	size_t lo = 0, hi = k->nchunks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->chunks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct text_chunk *c = &k->chunks[lo - 1];

		if (addr - c->addr <= c->len && len <= c->len - (addr - c->addr))
			return c->bytes + (addr - c->addr);
	}
	errno = ERANGE;
	return NULL;
}

unsigned int kinstr_kernel__reserved(const struct kinstr_kernel *k, unsigned long long addr,
				     unsigned int len)
{
	unsigned long long end = addr + len;
	size_t lo = 0, hi = k->nres;
	unsigned int r = 0;

	while (lo < hi) {	/* first reservation starting at or after end */
		size_t mid = lo + (hi - lo) / 2;

		if (k->res[mid].addr < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back while something that starts earlier can still reach addr */
	while (lo > 0 && k->res_maxend[lo - 1] > addr) {
		const struct kinstr_reserved *e = &k->res[--lo];

		if (e->addr + e->len > addr)
			r |= 1u << e->reason;
	}
	return r;
}

size_t kinstr_kernel__reserved_cnt(const struct kinstr_kernel *k)
{
	return k->nres;
}

const struct kinstr_reserved *kinstr_kernel__reserved_at(const struct kinstr_kernel *k, size_t i)
{
	return i < k->nres ? &k->res[i] : NULL;
}

int kinstr_kernel__held_by(const struct kinstr_kernel *k, unsigned long long addr, unsigned long long len)
{
	size_t i;

	for (i = 0; k && i < k->nheld; i++)
		if (k->held[i].kind != KINSTR_HELD_FTRACE && addr < k->held[i].addr + k->held[i].len &&
		    addr + len > k->held[i].addr)
			return (int)k->held[i].pid;
	return 0;
}

int kinstr_kernel__ret_relocation(const struct kinstr_kernel *k, unsigned long long *to)
{
	*to = k->ret_to;
	if (k->ret_flags & KINSTR_DEBUG_RET_ITS)
		return -EPERM;
	return k->ret_to || (k->ret_flags & KINSTR_DEBUG_RET_BARE) ? 0 : -ENOENT;
}

char *kview_read_file(const char *path, size_t *lenp)
{
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap + 1);
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f || !buf) {
		int err = errno ? errno : ENOMEM;

		if (f)
			fclose(f);
		free(buf);
		errno = err;
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *p = realloc(buf, cap * 2 + 1);

			if (!p) {
				fclose(f);
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = p;
			cap *= 2;
		}
	}
	fclose(f);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}

/*
 * Each function's ENDBR (rules/entry.h), which its fentry NOP follows; reserved (reserve) when
 * the view is made from the live kernel (a snapshot holds its reservations already).
 */
int kview_mark_endbr(struct kinstr_kernel *k, bool reserve)
{
	size_t i;
	int err = 0;

	for (i = 0; i < k->nfuncs && !err; i++) {
		struct kinstr_func *f = &k->funcs[i];
		const unsigned char *b = f->size >= KINSTR_ENDBR_LEN ? kinstr_kernel__text(k, f->addr, KINSTR_ENDBR_LEN) : NULL;

		f->endbr = b && !kinstr_rule_cfi_symbol(f->name) ?
			   (unsigned char)kinstr_entry_endbr_len(b) : 0;
		if (f->endbr && reserve && (i == 0 || k->funcs[i - 1].addr != f->addr))
			err = kview_res_add(k, f->addr, f->endbr, KINSTR_R_ENDBR);
	}
	return err;
}
