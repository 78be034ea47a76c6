/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Calls paired from a trace (kinstr report): entries and returns of the same function matched.
 */
#ifndef KINSTR_CTF_PAIRS_H
#define KINSTR_CTF_PAIRS_H

#include <kinstr/ctf_read.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Calls paired from a trace (kinstr report): for each probe NAME traced with NAME%return too, its
 * events matched per thread (the tid field) in time order across CPUs, nested calls on a stack;
 * per function the calls, min/mean/max from entry to return, and the events left unpaired.
 */
struct kinstr_call_pairs;
struct kinstr_call_latency {
	const char *function;		/* NAME (the entry's class name) */
	uint64_t calls, min_ns, max_ns, sum_ns;
	uint64_t unmatched_entries, unmatched_returns;
};
/* NULL with errno (ENOMEM); a trace without such pairs gives an empty result. */
struct kinstr_call_pairs *kinstr_call_pairs__new(const struct kinstr_ctf_reader *r);
/* Each event as read (any order of CPUs): 0 or -ENOMEM. */
int kinstr_call_pairs__add(struct kinstr_call_pairs *p, const struct kinstr_ctf_event *ev);
/* After the last event: sort and pair. 0 or -ENOMEM. */
int kinstr_call_pairs__finish(struct kinstr_call_pairs *p);
size_t kinstr_call_pairs__cnt(const struct kinstr_call_pairs *p);
const struct kinstr_call_latency *kinstr_call_pairs__get(const struct kinstr_call_pairs *p, size_t i);
void kinstr_call_pairs__free(struct kinstr_call_pairs *p);

#ifdef __cplusplus
}
#endif
#endif
