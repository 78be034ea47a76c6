/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timers in a code cache (cache_timer.c; KINSTR_CACHE_M_TIMER): the call sequence's check, for
 * cache.c, and the timer set's address written into it once checked, for patch/install.c.
 */
#ifndef KINSTR_CACHE_TIMER_H
#define KINSTR_CACHE_TIMER_H

#include <linux/types.h>
#include <uapi/linux/kinstr.h>

struct kinstr_cache_check;
struct kinstr_timers;

/* The start's bytes before everything of map entry m (a function's first, timed): 0 or the sequence's. */
unsigned int kinstr_cache_timer_start_len(const struct kinstr_cache_map *m);
/*
 * Is b (at address at) the timer sequence calling c's start (or stop) function on a timer below
 * c's count, its set's address still 0? Its timer into *timer.
 */
bool kinstr_cache_timer_ok(const struct kinstr_cache_check *c, const u8 *b, unsigned long at, bool start, u32 *timer);
/* Write t's address into every timer sequence of the checked image c, as copied to cache. */
void kinstr_cache_timer_link(const struct kinstr_cache_check *c, u8 *cache, struct kinstr_timers *t);
/* Does c hold a timer? */
bool kinstr_cache_timed(const struct kinstr_cache_check *c);

#endif
