/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A trace channel on a kinstr device: the module's per-CPU ring buffers (ring/ring_abi.h),
 * mapped read-only, and the reader's side: take each delivered sub-buffer, hand it to a
 * callback, give it back. Trace probes (kinstr_probeset__set_trace) on the same device write
 * into it.
 */
#ifndef KINSTR_TRACE_H
#define KINSTR_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uapi/linux/kinstr.h>
#include <ring/ring_abi.h>
#include <kinstr/kinstr.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_trace;

struct kinstr_trace_opts {
	size_t sz;			/* sizeof(struct kinstr_trace_opts) */
	uint32_t subbuf_size;		/* bytes, a power of two >= 4096; 0: 64 KiB */
	uint32_t num_subbufs;		/* a power of two >= 2; 0: 16 */
	bool overwrite;			/* flight recorder: overwrite the oldest sub-buffers */
	bool local_clock;		/* stamp with local_clock(), not CLOCK_MONOTONIC (uapi header) */
};

/*
 * A per-CPU buffer of about `buffer` bytes in sub-buffers of subbuf bytes: subbuf_size and the
 * largest power-of-two num_subbufs that fits. -EDOM: subbuf is not a power of two of at least
 * 4 KiB; -ERANGE: not 2 to 256 sub-buffers.
 */
int kinstr_trace_opts__geometry(struct kinstr_trace_opts *o, uint64_t buffer, uint32_t subbuf);

/* NULL with errno on failure (EEXIST: the device has a channel already). */
struct kinstr_trace *kinstr_trace__create(struct kinstr_dev *dev, const struct kinstr_trace_opts *opts);
void kinstr_trace__free(struct kinstr_trace *t);
unsigned int kinstr_trace__nr_cpus(const struct kinstr_trace *t);
/* CLOCK_REALTIME - the records' clock, in ns, as the module read them side by side. */
int64_t kinstr_trace__clock_offset(const struct kinstr_trace *t);
/* Now on the records' clock (local: realtime less the offset measured at the start, so it may drift). */
uint64_t kinstr_trace__now(const struct kinstr_trace *t);

/*
 * One delivered sub-buffer of cpu: its header and data_size bytes of records (walk them with
 * KR_RECORD_SPAN; each is a struct kinstr_trace_rec and its values). A non-zero return stops
 * kinstr_trace__consume and is passed up.
 */
typedef int (*kinstr_trace_subbuf_fn)(void *ctx, unsigned int cpu, const struct kr_subbuf_hdr *h,
				      const unsigned char *records);

/*
 * Hand every delivered sub-buffer of every CPU to fn, oldest first per CPU, one CPU's after
 * another's in turn. 0 when none is left, -errno, or fn's non-zero return (a positive one asks to
 * stop: e.g. a deadline passed while a CPU's buffer refills as fast as it is read).
 */
int kinstr_trace__consume(struct kinstr_trace *t, kinstr_trace_subbuf_fn fn, void *ctx);
/* The same, but at most max_per_cpu sub-buffers of each CPU (0: no limit). */
int kinstr_trace__consume_max(struct kinstr_trace *t, kinstr_trace_subbuf_fn fn, void *ctx,
			      unsigned int max_per_cpu);
/* Close every CPU's current sub-buffer so that a partly filled one is delivered. */
int kinstr_trace__flush(struct kinstr_trace *t);
/* Wait up to timeout_ms for the module to say records were written. 1 ready, 0 timeout. */
int kinstr_trace__poll(struct kinstr_trace *t, int timeout_ms);
int kinstr_trace__stats(struct kinstr_trace *t, unsigned int cpu, struct kinstr_trace_stats *st);
/* Every CPU's records lost so far (full, overwritten, too big, nested too deep). */
uint64_t kinstr_trace__lost(struct kinstr_trace *t);

#ifdef __cplusplus
}
#endif
#endif
