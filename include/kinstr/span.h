/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Latency between two points (kinstr span A B). Two sources:
 *   - the module's spans (kinstr_spanner__new_dev; KINSTR_FEAT_SPAN): span probes at A and B
 *     (kinstr_probeset__set_span) pair each stop with its key's open start in kinstr.ko and add
 *     the interval to the key's row there; the spanner reads the rows (any time: settle, drain);
 *   - the trace buffers (kinstr_spanner__new): trace probes at A and at B record each hit (time,
 * pid, tid, comm, the spec's values) into the per-CPU ring buffers; the span reads them as they
 * come, and once they are settled (the probes out, or for a live view older than a margin) puts
 * every CPU's records in time order and pairs each hit of B with the last unpaired hit of A of
 * the same key: the thread (default), the process, or
 * each point's first value (e.g. a pointer handed from A on one CPU to B on another). Per key
 * and in total: count, min/mean/max and a log2 histogram of the intervals; starts with no stop,
 * stops with no start and starts replaced by a later one are counted, never dropped, as are
 * records past the bound (overflow) and those the buffers had no room for (lost).
 */
#ifndef KINSTR_SPAN_H
#define KINSTR_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ring/ring_abi.h>
#include <kinstr/event.h>
#include <kinstr/tally.h>
#include <kinstr/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* KINSTR_SPAN_HIST buckets (the module's, uapi/linux/kinstr.h): bucket i: [2^(i-1), 2^i) ns; bucket 0: 0 */

struct kinstr_span_stats {
	uint64_t count, min, max, sum;	/* ns */
	uint64_t hist[KINSTR_SPAN_HIST];
};

struct kinstr_span_row {
	uint64_t key;			/* TID, PID, VALUE */
	char comm[16];			/* the stop's task */
	struct kinstr_span_stats st;
};

struct kinstr_span_result {
	struct kinstr_span_stats total;
	uint64_t unmatched_starts;	/* open at the end, or replaced by a later start of the key */
	uint64_t unmatched_stops;	/* a stop with no start of its key before it */
	uint64_t overflow;		/* records past the bound, starts past the table's */
	uint64_t lost;			/* records the buffers had no room for */
};

struct kinstr_spanner;

/*
 * Events ev[0, na) are A's, ev[na, nev) B's (kinstr_plan__add_trace's, kept by the caller), on
 * channel t (NULL: only what kinstr_spanner__subbuf is given); key KINSTR_TALLY_TID, _PID or
 * _VALUE (then every event has a value: its first); max_records 0: 4 M (48 bytes each).
 */
struct kinstr_spanner *kinstr_spanner__new(struct kinstr_trace *t, const struct kinstr_trace_event *ev,
					   unsigned int na, unsigned int nev, unsigned int key, size_t max_records);
/*
 * The same over the module's spans of dev (created here: one per device), A's probes made span
 * starts and B's stops by the caller (kinstr_probeset__set_span); local_clock: local_clock(), not
 * CLOCK_MONOTONIC. Value keys must be numbers. NULL with errno (EEXIST: the device has spans).
 */
struct kinstr_spanner *kinstr_spanner__new_dev(struct kinstr_dev *dev, const struct kinstr_trace_event *ev,
					       unsigned int na, unsigned int nev, unsigned int key, bool local_clock);
/* n more stops or starts not taken on the way (the probes' recursion guard skipped them): in lost. */
void kinstr_spanner__add_lost(struct kinstr_spanner *s, uint64_t n);
void kinstr_spanner__free(struct kinstr_spanner *s);
int kinstr_spanner__subbuf(void *s, unsigned int cpu, const struct kr_subbuf_hdr *h, const unsigned char *recs);
int kinstr_spanner__consume(struct kinstr_spanner *s);
/*
 * While it runs (a live view: kinstr span --metrics): flush the channel, read what it holds, and
 * pair every record older than the newest read, or the records' clock now, less margin_ns (by
 * then every CPU's record of that time is in: a probe's write takes far less); the result's
 * totals and unmatched stops count those, the drain adds the rest. 0 or -errno.
 */
int kinstr_spanner__settle(struct kinstr_spanner *s, uint64_t margin_ns);
/* After the probes are out and quiescent: the rest, the pairing, the losses. 0 or -errno. */
int kinstr_spanner__drain(struct kinstr_spanner *s);
const struct kinstr_span_result *kinstr_spanner__result(const struct kinstr_spanner *s);
/* Per key, most intervals first (valid once drained). */
size_t kinstr_spanner__row_cnt(const struct kinstr_spanner *s);
const struct kinstr_span_row *kinstr_spanner__row(const struct kinstr_spanner *s, size_t i);
/* Bucket of an interval: 0 for 0, else 1 + floor(log2(ns)). */
unsigned int kinstr_span__bucket(uint64_t ns);

#ifdef __cplusplus
}
#endif
#endif
