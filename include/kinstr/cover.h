/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Coverage through the code cache (kinstr cover, count --every-block): the functions a list of
 * names denotes, their source lines, their copies installed through a cache set (cache.h) and
 * read; with keep, a function whose copy is refused at install is left out and the others are
 * installed again. And one-shot coverage (cover --once): a probe at every block the code cache
 * would count, each taken out at its first hit. The lcov tracefile of a run is
 * kinstr_lcov__write() (lcov.h). A failure is a -errno with a struct kinstr_why (plan.h) whose
 * sentence a tool prints.
 */
#ifndef KINSTR_COVER_H
#define KINSTR_COVER_H

#include <stdbool.h>
#include <stddef.h>
#include <kinstr/cache.h>
#include <kinstr/plan.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_dev;
struct kinstr_lines;

/* A function that is not covered, and why. */
struct kinstr_cover_refusal {
	const struct kinstr_func *f;
	struct kinstr_cache_refusal r;	/* refused when planned: the library's reason (at_install NULL) */
	char *at_install;		/* else refused at install (keep), the reason as libkinstr words it */
	bool by_module;			/* at install: kinstr.ko refused the copy (else libkinstr did) */
};

struct kinstr_cover_opts {
	size_t sz;			/* sizeof(struct kinstr_cover_opts) */
	unsigned int cache_flags;	/* KINSTR_CACHE_F_* of every copy */
	/*
	 * A function whose copy is refused at install (by kinstr.ko, or by libkinstr: more counters
	 * than a chunk, changed since planned) is left out and the others installed again, after
	 * left_out (may be NULL) was told; left_out returning non-zero (e.g. interrupted) makes the
	 * install fail with that refusal instead. Without keep, the install fails.
	 */
	bool keep;
	int (*left_out)(const struct kinstr_func *f, const char *why, void *ctx);
	void *ctx;
};

struct kinstr_cover;

/* Coverage of functions of k through dev (NULL: only naming them). NULL with errno (EINVAL, ENOMEM). */
struct kinstr_cover *kinstr_cover__new(struct kinstr_dev *dev, const struct kinstr_kernel *k,
				       const struct kinstr_cover_opts *opts);
/* Removes what is installed. */
void kinstr_cover__free(struct kinstr_cover *cv);
/*
 * Add the functions name denotes, each function once over every add, in the order named: a name
 * or NAME@ADDR (kinstr_plan__func()); with any of "*?[," in it, a glob or a comma list
 * (kinstr__glob_match()), its functions in the kernel's order. 0; -ENOENT or -ENOTUNIQ with why
 * (nothing added), -ENOMEM, -EBUSY (planned already).
 */
int kinstr_cover__add(struct kinstr_cover *cv, const char *name, struct kinstr_why *why);
size_t kinstr_cover__func_cnt(const struct kinstr_cover *cv);
const struct kinstr_func *kinstr_cover__func(const struct kinstr_cover *cv, size_t i);
/*
 * Source lines for the functions added: from files first (a vmlinux, or NAME.ko for module NAME,
 * '-' in the file's name read as '_'), then from the usual paths (kinstr_lines__add_default())
 * for the core kernel and each module among the functions that has none yet. NULL with why: a
 * file that is no good, *bad (if not NULL) its index ("FILE: no DWARF line table in it", ...),
 * or no memory (*bad left as it was).
 */
struct kinstr_lines *kinstr_cover__lines(const struct kinstr_cover *cv, const char *const *files, size_t nfiles,
					 size_t *bad, struct kinstr_why *why);
/*
 * Plan every function's copy into a cache set; a function whose plan the library refuses is left
 * out and listed (kinstr_cover__refused()). 0; -ENOENT when none is left ("no function left to
 * cover (N refused, the first: WHY)"), or another -errno with why (a function: "NAME: WHY").
 */
int kinstr_cover__plan(struct kinstr_cover *cv, struct kinstr_why *why);
/*
 * Install the planned copies (flags: KINSTR_INSTALL_F_*), with keep as opts say (a function left
 * out is listed with at_install). 0, or -errno with why.
 */
int kinstr_cover__install(struct kinstr_cover *cv, unsigned int flags, struct kinstr_why *why);
/* Read every counter, then take the copies out (their counts stay in the set). 0 or -errno. */
int kinstr_cover__read(struct kinstr_cover *cv);
/* The cache set: as installed, its counts as read (NULL before kinstr_cover__plan()). */
const struct kinstr_cacheset *kinstr_cover__set(const struct kinstr_cover *cv);
/* The functions not covered, in the order found (*n of them; valid until the next call on cv). */
const struct kinstr_cover_refusal *kinstr_cover__refused(const struct kinstr_cover *cv, size_t *n);

/*
 * One-shot coverage of cv's functions: each planned as the code cache would (a refused one is
 * listed), a probe at the first instruction of each of its blocks (a block where none fits stays
 * unprobed); installed, each probe is taken out at the first tick after it was hit, so that what
 * ran costs almost nothing once the hot blocks are out.
 */
struct kinstr_cover_once;

/* NULL with errno (EINVAL: cv has no device, ENOMEM). */
struct kinstr_cover_once *kinstr_cover_once__new(const struct kinstr_cover *cv);
/* Removes what is left in. */
void kinstr_cover_once__free(struct kinstr_cover_once *o);
/* What a one-shot set holds, and after __read() what it did. */
struct kinstr_cover_once_sum {
	size_t funcs;		/* planned (cv's order, the refused left out) */
	size_t refused;		/* refused when planned (kinstr_cover_once__refused()) */
	size_t probes;		/* in all */
	size_t unprobed;	/* blocks where no probe fits */
	size_t disarmed;	/* probes taken out after their first hit */
};
void kinstr_cover_once__sum(const struct kinstr_cover_once *o, struct kinstr_cover_once_sum *s);
/* Planned function i's plan (its blocks) and *f (if not NULL) the function; NULL past the last. */
const struct kinstr_cache_fn *kinstr_cover_once__fn(const struct kinstr_cover_once *o, size_t i,
						    const struct kinstr_func **f);
/* The functions refused, in cv's order (*n of them). */
const struct kinstr_cover_refusal *kinstr_cover_once__refused(const struct kinstr_cover_once *o, size_t *n);
/* 0; -ENOENT with why when no block has a probe, else the install's -errno with why. */
int kinstr_cover_once__install(struct kinstr_cover_once *o, struct kinstr_why *why);
/* Take out the probes hit since the last tick (every 0.1 s, say). A failure is kept for __read(). */
void kinstr_cover_once__tick(struct kinstr_cover_once *o);
/* The last tick, then the final counts: 0, or -errno (a tick's failure first). */
int kinstr_cover_once__read(struct kinstr_cover_once *o);
/* Block b of planned function i after __read(): 1 hit, 0 not hit, -1 no probe there. */
int kinstr_cover_once__hit(const struct kinstr_cover_once *o, size_t i, size_t b);

#ifdef __cplusplus
}
#endif
#endif
