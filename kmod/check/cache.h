/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The code cache's check (cache.c): a cache image and its map, proven against the live text and
 * the kernel's tables before any splice leads into it. patch/install.c calls it; it calls verify.c's
 * decoder helpers, policy.c and ksym.c, never back.
 */
#ifndef KINSTR_CACHE_H
#define KINSTR_CACHE_H

#include <linux/types.h>
#include <uapi/linux/kinstr.h>

struct kinstr_probe;
struct kinstr_verdict;

struct kinstr_cache_check {
	const u8 *bytes;		/* the image, as it will run at base */
	u64 len;
	unsigned long base;
	const struct kinstr_cache_map *map;
	u32 nmap;
	bool laid;			/* KINSTR_CACHE_IMAGE_LAID: every function re-laid */
	u32 ncounters;
	const u64 *chunks;		/* the counters' __percpu chunks */
	u32 ntimers;			/* the session's timers (KINSTR_CACHE_M_TIMER) */
	struct kinstr_timers *timers;
	unsigned long timer_fn[2];	/* what a timer's start and stop call (actions/hit.c) */
};

/* A copied function's code in the original: [start, end). */
struct kinstr_cache_range {
	unsigned long start, end;
};

/*
 * Prove the image against the live text with the probes of req[0, nreq) whose bit is set in
 * entries (their action enters the cache: KINSTR_ACTION_ENTER) as its entry points. 0, or -errno
 * with v the refusal and *at the map entry it is about.
 */
int kinstr_cache_check(const struct kinstr_cache_check *c, const struct kinstr_probe *req,
		       const unsigned long *entries, u32 nreq, struct kinstr_verdict *v, u32 *at);
/*
 * laid.c: do map[f0, f1)'s counterparts tile the image from start on, in some order? 0 (*end:
 * where the last ends), 1 (a gap or an overlap), -ENOMEM.
 */
int kinstr_laid_tiles(const struct kinstr_cache_map *map, u32 f0, u32 f1, u64 start, u64 *end);
/* The copied functions' ranges into r (NULL: only count them); how many. */
int kinstr_cache_functions(const struct kinstr_cache_check *c, struct kinstr_cache_range *r);

#endif
