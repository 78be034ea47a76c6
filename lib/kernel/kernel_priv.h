/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The kernel view's insides, shared by the files of lib/kernel/ that build and query it (view.c: the
 * structure and its queries; live.c: reading the running kernel; reserve.c: the reservations read from
 * it; snapshot.c: the file format). Nothing outside lib/kernel/ includes this.
 */
#ifndef KINSTR_LIB_KERNEL_PRIV_H
#define KINSTR_LIB_KERNEL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kinstr/kernel.h>

struct text_chunk {
	unsigned long long addr;
	size_t len;
	unsigned char *bytes;
};

/* A live module whose core text the view holds. */
struct kmod_text {
	struct kinstr_module_info mi;
	bool keep;			/* live, text readable */
	const char *kname;		/* a copy of its name in the view's names, compared by pointer first */
};

struct kinstr_kernel {
	char release[65];
	struct kinstr_layout layout;
	unsigned long long return_thunk;	/* a jmp there is a return */
	/* where a relocated bare ret jumps (0: it stays a bare ret), as the module reports */
	unsigned long long ret_to;
	unsigned long long ret_flags;		/* KINSTR_DEBUG_RET_* */
	/* the per-CPU address of the running task's pointer (kallsyms), 0 when unknown */
	unsigned long long current_task;

	struct kinstr_func *funcs;	/* sorted by addr */
	size_t nfuncs;
	/* what other kinstr sessions held when the view was read (KINSTR_IOC_HELD) */
	struct kinstr_held_range *held;
	size_t nheld;
	/* by name: a hash table of each name's first function, then the next of that name by addr */
	uint32_t *name_head;		/* name_slots entries: index + 1 into funcs, 0 empty */
	uint32_t *name_next;		/* per function: the next of that name, NAME_NONE after the last */
	size_t name_slots;		/* a power of 2, at least twice nfuncs */
	char *names;			/* one allocation for every name */
	size_t names_len;

	struct kinstr_reserved *res;	/* sorted by addr */
	unsigned long long *res_maxend;	/* max end of res[0..i] */
	size_t nres, res_cap;

	struct text_chunk *chunks;	/* sorted by addr, disjoint */
	size_t nchunks;

	struct kinstr_cfg_edge *edges;	/* sorted by from */
	size_t nedges, edges_cap;

	struct kmod_text *mods;		/* live view only */
	size_t nmods;
	size_t mod_last;		/* the module find_mod() found last */

	/* live view only: each jump label's key and branch bit, each static call's key and tail bit */
	struct site_fact *facts;	/* sorted by site after open */
	size_t nfacts, facts_cap;
	struct sck *scks;		/* static call keys (__SCK__<name>), sorted by addr */
	size_t nscks, scks_cap;
};

struct site_fact {
	unsigned long long site, key;	/* key: its low flag bits cleared */
	unsigned int reason;		/* KINSTR_R_JUMP_LABEL or KINSTR_R_STATIC_CALL */
	unsigned int flags;		/* jump_entry: bit 0 branch; static_call_site: bit 0 tail */
};

struct sck {
	unsigned long long addr;
	char name[120];			/* after __SCK__ */
};


#define NAME_NONE UINT32_MAX

/* view.c: the structure's helpers, shared by its builders */
int kview_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
int kview_grow(void **arr, size_t n, size_t *cap, size_t first, size_t elem);
int kview_fact_add(struct kinstr_kernel *k, unsigned long long site, unsigned long long key, unsigned int reason);
int kview_cmp_fact(const void *a, const void *b);
int kview_cmp_sck(const void *a, const void *b);
int kview_edge_add(struct kinstr_kernel *k, unsigned long long from, unsigned long long to);
int kview_cmp_func_addr(const void *a, const void *b);
int kview_cmp_chunk(const void *a, const void *b);
int kview_cmp_res(const void *a, const void *b);
int kview_res_add(struct kinstr_kernel *k, unsigned long long addr, unsigned long long len,
		   unsigned int reason);
int kview_index_names(struct kinstr_kernel *k);
uint32_t kview_first_named(const struct kinstr_kernel *k, const char *name);
int kview_finish(struct kinstr_kernel *k);
struct kinstr_kernel *kview_fail(struct kinstr_kernel *k, int err);
const struct kinstr_func *kview_find_first(const struct kinstr_kernel *k, const char *name);
char *kview_read_file(const char *path, size_t *lenp);
int kview_mark_endbr(struct kinstr_kernel *k, bool reserve);

/* reserve.c: the reservations of the running kernel, each read into the view being built */
int kview_add_ftrace(struct kinstr_kernel *k, struct kinstr_dev *dev);
int kview_add_stray_ftrace(struct kinstr_kernel *k, struct kinstr_dev *dev);
int kview_add_die_notifiers(struct kinstr_kernel *k, struct kinstr_dev *dev);
int kview_add_blacklist(struct kinstr_kernel *k);
int kview_add_kprobes(struct kinstr_kernel *k);
int kview_add_hit_path(struct kinstr_kernel *k, struct kinstr_dev *dev);
int kview_add_held(struct kinstr_kernel *k, struct kinstr_dev *dev);
int kview_add_symbol_rules(struct kinstr_kernel *k);
int kview_add_span(struct kinstr_kernel *k, const struct kinstr_span64 *s, unsigned int reason);

#endif
