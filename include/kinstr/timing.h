/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What timers measured, read into results a tool prints (lib/results/timing.c): call sites summed by
 * callee, the paths of nested timed calls merged over CPUs with each one's own time (folded
 * stacks), and the keys a table sorts by.
 */
#ifndef KINSTR_TIMING_H
#define KINSTR_TIMING_H

#include <stdbool.h>
#include <stdint.h>
#include <kinstr/plan.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Time in calls to one callee (NULL: indirect calls together). */
struct kinstr_callee_time {
	const struct kinstr_func *callee;
	uint64_t calls, wall_ns;
	bool switches;		/* the callee switches threads: wall_ns is time switched out */
};
/*
 * sites[n] (kinstr_plan__time_calls') summed by callee with their timers' stats st, most time
 * first, into rows[n]: how many rows; *untimed gets the sites that could not be timed.
 */
unsigned int kinstr_timing__by_callee(const struct kinstr_callsite *sites, unsigned int n,
				      const struct kinstr_timer_stats *st, struct kinstr_callee_time *rows,
				      unsigned int *untimed);

/* A path of nested timed calls (outermost first) with its own wall time (less its children's). */
struct kinstr_folded {
	struct kinstr_timer_path p;
	uint64_t self_ns;
};
/*
 * Every CPU's paths (KINSTR_TIMERS_F_PATHS) merged, in path order, into *out (malloc'ed; free
 * it), *n of them; *dropped and *truncated summed. 0 or -errno.
 */
int kinstr_timing__folded(struct kinstr_dev *dev, struct kinstr_folded **out, size_t *n, uint64_t *dropped,
			  uint64_t *truncated);

/*
 * Every CPU's rows per (timer, key) (KINSTR_TIMERS_F_BY_*, by_comm: keyed by the comm, else by
 * kinstr_timer_by_row.id) merged into *out (malloc'ed; free it), *n of them, by timer, then most
 * wall time first; *dropped summed. 0 or -errno.
 */
int kinstr_timing__by(struct kinstr_dev *dev, bool by_comm, struct kinstr_timer_by_row **out, size_t *n,
		      uint64_t *dropped);

/* The key a table sorts by: "wall", "oncpu", "calls", "mean" or "max" (else wall). */
uint64_t kinstr_timing__key(const struct kinstr_timer_stats *s, const char *key);
bool kinstr_timing__key_known(const char *key);

#ifdef __cplusplus
}
#endif
#endif
