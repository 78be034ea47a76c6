// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Snapshots: the view saved to a gzip file (kinstr snapshot) and read back, for analysis away from
 * the machine and the host tests.
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

/* ---- snapshots -------------------------------------------------------------------------------- */

#define SNAP_MAGIC "KINSNAP3"	/* 3: where returns go (KINSNAP2 still read) */
#define SNAP_MAGIC2 "KINSNAP2"

static int put(gzFile f, const void *p, size_t n)
{
	return n && gzwrite(f, p, n) != (int)n ? -EIO : 0;
}

static int put_u32(gzFile f, uint32_t v)
{
	return put(f, &v, 4);
}

static int put_u64(gzFile f, uint64_t v)
{
	return put(f, &v, 8);
}

static bool in_glob(const struct kinstr_func *f, const char *glob)
{
	return !glob || kinstr__glob_match(glob, f->name);
}

/* Does the reservation overlap a function that the glob keeps? (spans cover many functions) */
static bool res_in_glob(const struct kinstr_kernel *k, const struct kinstr_reserved *e,
			const char *glob)
{
	unsigned long long end = e->addr + e->len;
	size_t lo = 0, hi = k->nfuncs;

	while (lo < hi) {	/* first function starting at or after e->addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->funcs[mid].addr < e->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && k->funcs[lo - 1].addr + k->funcs[lo - 1].size > e->addr && in_glob(&k->funcs[lo - 1], glob))
		return true;
	for (; lo < k->nfuncs && k->funcs[lo].addr < end; lo++)
		if (in_glob(&k->funcs[lo], glob))
			return true;
	return false;
}

int kinstr_kernel__save(const struct kinstr_kernel *k, const char *path, const char *glob)
{
	gzFile f = gzopen(path, "wb6");
	uint32_t nf = 0, nr = 0;
	size_t i, r;
	int err = 0;

	if (!f)
		return -(errno ? errno : EIO);
	for (i = 0; i < k->nfuncs; i++)
		nf += in_glob(&k->funcs[i], glob);
	err = put(f, SNAP_MAGIC, 8);
	err = err ?: put(f, k->release, sizeof(k->release));
	err = err ?: put(f, &k->layout, sizeof(k->layout));
	err = err ?: put_u64(f, k->return_thunk);
	err = err ?: put_u64(f, k->ret_to);
	err = err ?: put_u64(f, k->ret_flags);
	err = err ?: put_u32(f, nf);
	for (i = 0; i < k->nfuncs && !err; i++) {
		const struct kinstr_func *fn = &k->funcs[i];
		const unsigned char *text;
		uint16_t nl = strlen(fn->name);

		if (!in_glob(fn, glob))
			continue;
		text = kinstr_kernel__text(k, fn->addr, fn->size);
		err = put_u64(f, fn->addr);
		err = err ?: put_u32(f, fn->size);
		err = err ?: put(f, &fn->type, 1);
		err = err ?: put(f, &nl, 2);
		err = err ?: put(f, fn->name, nl);
		err = err ?: put_u32(f, text ? fn->size : 0);
		err = err ?: put(f, text, text ? fn->size : 0);
	}
	/* reservations: all of them for a whole-kernel snapshot, else those inside a kept function */
	for (r = 0; r < k->nres; r++)
		nr += !glob || res_in_glob(k, &k->res[r], glob);
	err = err ?: put_u32(f, nr);
	for (r = 0; r < k->nres && !err; r++) {
		if (glob && !res_in_glob(k, &k->res[r], glob))
			continue;
		err = put_u64(f, k->res[r].addr);
		err = err ?: put_u32(f, k->res[r].len);
		err = err ?: put_u32(f, k->res[r].reason);
	}
	nr = 0;
	for (r = 0; r < k->nedges; r++) {
		const struct kinstr_func *fn = kinstr_kernel__func_at(k, k->edges[r].from);

		nr += !glob || (fn && in_glob(fn, glob));
	}
	err = err ?: put_u32(f, nr);
	for (r = 0; r < k->nedges && !err; r++) {
		const struct kinstr_func *fn = kinstr_kernel__func_at(k, k->edges[r].from);

		if (glob && !(fn && in_glob(fn, glob)))
			continue;
		err = put_u64(f, k->edges[r].from);
		err = err ?: put_u64(f, k->edges[r].to);
	}
	if (gzclose(f) != Z_OK && !err)
		err = -EIO;
	return err;
}

static int get(gzFile f, void *p, size_t n)
{
	return n && gzread(f, p, n) != (int)n ? -EINVAL : 0;
}

struct kinstr_kernel *kinstr_kernel__open_snapshot(const char *path)
{
	struct kinstr_kernel *k = calloc(1, sizeof(*k));
	char magic[8];
	uint32_t nf, nr, i;
	size_t nl_total = 0;
	gzFile f;
	int err;

	if (!k)
		return kview_fail(k, ENOMEM);
	f = gzopen(path, "rb");
	if (!f)
		return kview_fail(k, errno ? errno : EIO);
	err = get(f, magic, 8);
	if (!err && memcmp(magic, SNAP_MAGIC, 8) && memcmp(magic, SNAP_MAGIC2, 8))
		err = -EINVAL;
	err = err ?: get(f, k->release, sizeof(k->release));
	err = err ?: get(f, &k->layout, sizeof(k->layout));
	err = err ?: get(f, &k->return_thunk, 8);
	k->ret_to = k->return_thunk;
	if (!err && !memcmp(magic, SNAP_MAGIC, 8)) {
		err = get(f, &k->ret_to, 8);
		err = err ?: get(f, &k->ret_flags, 8);
	}
	err = err ?: get(f, &nf, 4);
	if (!err && nf > (1u << 24))
		err = -EINVAL;
	if (!err) {
		k->funcs = calloc(nf + 1, sizeof(*k->funcs));
		k->chunks = calloc(nf + 1, sizeof(*k->chunks));
		if (!k->funcs || !k->chunks)
			err = -ENOMEM;
	}
	for (i = 0; i < nf && !err; i++) {
		struct kinstr_func *fn = &k->funcs[i];
		uint16_t nl;
		uint32_t tl;

		err = get(f, &fn->addr, 8);
		err = err ?: get(f, &fn->size, 4);
		err = err ?: get(f, &fn->type, 1);
		err = err ?: get(f, &nl, 2);
		if (!err && nl_total + nl + 1 > k->names_len) {
			size_t cap = (k->names_len + nl + 1) * 2;
			char *p = realloc(k->names, cap);

			if (!p)
				err = -ENOMEM;
			else
				k->names = p, k->names_len = cap;
		}
		err = err ?: get(f, k->names + nl_total, nl);
		if (err)
			break;
		k->names[nl_total + nl] = 0;
		fn->name = (const char *)(uintptr_t)nl_total;
		nl_total += nl + 1;
		err = get(f, &tl, 4);
		if (!err && tl) {
			if (tl != fn->size || tl > (64u << 20)) {
				err = -EINVAL;
				break;
			}
			k->chunks[k->nchunks].addr = fn->addr;
			k->chunks[k->nchunks].len = tl;
			k->chunks[k->nchunks].bytes = malloc(tl);
			if (!k->chunks[k->nchunks].bytes) {
				err = -ENOMEM;
				break;
			}
			err = get(f, k->chunks[k->nchunks++].bytes, tl);
		}
	}
	k->nfuncs = nf;
	for (i = 0; i < nf && !err; i++)
		k->funcs[i].name = k->names + (uintptr_t)k->funcs[i].name;
	err = err ?: get(f, &nr, 4);
	for (i = 0; i < nr && !err; i++) {
		uint64_t a;
		uint32_t l, r;

		err = get(f, &a, 8);
		err = err ?: get(f, &l, 4);
		err = err ?: get(f, &r, 4);
		if (!err && r >= KINSTR_R_NR)
			err = -EINVAL;
		err = err ?: kview_res_add(k, a, l, r);
	}
	err = err ?: get(f, &nr, 4);
	for (i = 0; i < nr && !err; i++) {
		uint64_t from, to;

		err = get(f, &from, 8);
		err = err ?: get(f, &to, 8);
		err = err ?: kview_edge_add(k, from, to);
	}
	gzclose(f);
	if (err) {
		k->nfuncs = 0;	/* names were not all rebased */
		return kview_fail(k, err);
	}
	/* aliases share one text chunk: keep the first of each address */
	qsort(k->chunks, k->nchunks, sizeof(*k->chunks), kview_cmp_chunk);
	{
		size_t a, b;

		for (a = b = 0; a < k->nchunks; a++) {
			if (b && k->chunks[b - 1].addr + k->chunks[b - 1].len > k->chunks[a].addr) {
				free(k->chunks[a].bytes);
				continue;
			}
			k->chunks[b++] = k->chunks[a];
		}
		k->nchunks = b;
	}
	qsort(k->funcs, k->nfuncs, sizeof(*k->funcs), kview_cmp_func_addr);
	err = kview_mark_endbr(k, false);
	err = err ?: kview_finish(k);
	return err ? kview_fail(k, err) : k;
}
