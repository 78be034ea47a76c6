/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The recorder: the trace channel's sub-buffers (kinstr_trace__consume) into a CTF trace
 * (kinstr_ctf), one packet per sub-buffer, every loss carried into the packets' discarded-event
 * counts so that readers (babeltrace2, kinstr report) see it, and a cap on the trace's size
 * whose cut events are counted as lost, never silent.
 */
#ifndef KINSTR_RECORD_H
#define KINSTR_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/ctf.h>
#include <kinstr/event.h>
#include <kinstr/relayd.h>
#include <kinstr/trace.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_recorder_opts {
	size_t sz;
	uint64_t max_size;		/* the trace's bytes at most (0: no cap) */
	/* Each event written (live printing); vals[0..2] pid, tid, comm, then the values. */
	void (*on_event)(void *ctx, const struct kinstr_trace_event *e, unsigned int cpu,
			 const struct kinstr_trace_rec *r, const union kinstr_ctf_value *vals);
	/* Asked after each sub-buffer: stop reading now (a deadline, a signal)? Not while draining. */
	bool (*should_stop)(void *ctx);
	void *ctx;
};

/*
 * A record's values as event e declares them: vals[0..2] pid, tid, comm, then e's values (at
 * most 3 + KINSTR_TRACE_MAX_VALS; strings point into r). 0, or -EBADMSG (r is short).
 */
int kinstr_trace_event__values(const struct kinstr_trace_event *e, const struct kinstr_trace_rec *r,
				union kinstr_ctf_value *vals);

/*
 * Each record of a sub-buffer in turn, its length checked against the sub-buffer first: fn's
 * first non-zero return, or 0; -EBADMSG for a record that does not fit.
 */
int kinstr_trace_recs__each(const struct kr_subbuf_hdr *h, const unsigned char *recs,
			    int (*fn)(void *ctx, const struct kinstr_trace_rec *r), void *ctx);

/* Room the end needs per CPU: two empty packets (losses after the last one). */
#define KINSTR_RECORD_END_RESERVE 8192

struct kinstr_recorder;
/*
 * A recorder of the events ev[nev] (kept by the caller for the recorder's life) into w for
 * nr_cpus streams; it adds the event classes to w. NULL with errno: EINVAL (opts), ENOSPC
 * (max_size leaves no room for the end's packets), or the class's error.
 */
struct kinstr_recorder *kinstr_recorder__new(struct kinstr_ctf *w, unsigned int nr_cpus,
					     struct kinstr_trace_event *ev, unsigned int nev,
					     const struct kinstr_recorder_opts *opts);
void kinstr_recorder__free(struct kinstr_recorder *rec);

#define KINSTR_RECORD_STOP 1	/* kinstr_recorder__subbuf's "stop reading now" */
/*
 * A kinstr_trace_subbuf_fn (ctx: the recorder): one sub-buffer into a packet of cpu's stream.
 * 0, KINSTR_RECORD_STOP, or -errno (-EBADMSG: a record does not parse).
 */
int kinstr_recorder__subbuf(void *rec, unsigned int cpu, const struct kr_subbuf_hdr *h, const unsigned char *recs);
/*
 * Before any sub-buffer: an empty packet at ts - cpu on every CPU's stream, so that every stream has one
 * from the start (a live viewer of a relay waits for one on each before it shows any). ts must be
 * before every record's. 0 or -errno.
 */
int kinstr_recorder__begin(struct kinstr_recorder *rec, uint64_t ts);
/* From now on never ask should_stop: what the buffers hold is read to the end. */
void kinstr_recorder__drain(struct kinstr_recorder *rec);
/* Did the cap cut the trace? *first (if not NULL) is true the first time it says so to a first. */
bool kinstr_recorder__capped(struct kinstr_recorder *rec, bool *first);

struct kinstr_rec_cpu {
	uint64_t recorded;		/* events written */
	uint64_t lost;			/* every loss: the channel's and the cap's */
	uint64_t cut;			/* of those, left out by the cap */
};
/*
 * After the last sub-buffer: cpu's losses since its last packet (st: the channel's totals for
 * it) written as an empty packet at now_ns (or at the last packet's end), and its totals.
 */
int kinstr_recorder__finish_cpu(struct kinstr_recorder *rec, unsigned int cpu, const struct kinstr_trace_stats *st,
				uint64_t now_ns, struct kinstr_rec_cpu *out);

/*
 * A recording (lib/trace/recording.c): the trace channel on a device, the CTF trace in a folder and a
 * recorder between them, run until asked to stop, then drained. Every failure comes back as
 * -errno (or NULL and errno) with the sentence in a struct kinstr_why.
 */
struct kinstr_recording_opts {
	size_t sz;
	const struct kinstr_trace_opts *trace;	/* the channel: geometry, mode, clock (NULL: defaults) */
	uint64_t max_size;		/* 0: min(1 GiB, half the free space of the folder's file system) */
	const struct kinstr_ctf_env *env;	/* the trace's environment, besides the module's own */
	unsigned int env_cnt;
	/* as kinstr_recorder_opts' */
	void (*on_event)(void *ctx, const struct kinstr_trace_event *e, unsigned int cpu,
			 const struct kinstr_trace_rec *r, const union kinstr_ctf_value *vals);
	bool (*should_stop)(void *ctx);
	void *ctx;
	/*
	 * Also (or, with no folder, only) stream the trace live to the lttng-relayd at this address
	 * (HOST[:PORT[:DATAPORT]], include/kinstr/relayd.h), in a session of this name (NULL: the relay
	 * module's default).
	 */
	const char *relayd;
	const char *relayd_session;
};
struct kinstr_recording;
/*
 * Events ev[nev] (the planner's, kept by the caller) of dev's probes into a new trace in dir
 * (NULL: kinstr-trace-YYYYmmdd-HHMMSS in the current folder, kinstr_recording__dir; with
 * opts->relayd, NULL is no folder). NULL with errno and why: EINVAL (opts), ENODEV (no dev), or
 * the channel's, the relay's, the trace's, the recorder's.
 */
struct kinstr_recording *kinstr_recording__new(struct kinstr_dev *dev, const char *dir, struct kinstr_trace_event *ev,
					       unsigned int nev, const struct kinstr_recording_opts *opts,
					       struct kinstr_why *why);
/*
 * Record until should_stop (checked between every two sub-buffers, so that probes that fire as
 * fast as they are read still stop), waiting up to poll_ms for records: 0, or -errno and why. live: a
 * partly filled sub-buffer goes out every second, and stdout is flushed after each read.
 */
int kinstr_recording__run(struct kinstr_recording *rec, bool live, int poll_ms, struct kinstr_why *why);
/*
 * Once the probes are out and every handler finished (kinstr_dev__sync): what the buffers hold,
 * at most a buffer's worth per CPU, then each CPU's losses since its last packet; cpus[] (nr_cpus
 * of them, may be NULL) gets each CPU's totals and st[] the channel's: 0, or -errno and why.
 */
int kinstr_recording__drain(struct kinstr_recording *rec, struct kinstr_rec_cpu *cpus, struct kinstr_trace_stats *st,
			    struct kinstr_why *why);
/* Write the trace's last bytes: 0, or -errno and why. */
int kinstr_recording__close(struct kinstr_recording *rec, struct kinstr_why *why);
void kinstr_recording__free(struct kinstr_recording *rec);
unsigned int kinstr_recording__nr_cpus(const struct kinstr_recording *rec);
const char *kinstr_recording__dir(const struct kinstr_recording *rec);
uint64_t kinstr_recording__max_size(const struct kinstr_recording *rec);
/* The relay it streams to (NULL: none), e.g. for kinstr_relayd__session. */
struct kinstr_relayd *kinstr_recording__relayd(struct kinstr_recording *rec);
/* kinstr_recorder__capped of its recorder. */
bool kinstr_recording__capped(struct kinstr_recording *rec, bool *first);

#ifdef __cplusplus
}
#endif
#endif
