/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Hits counted by key (kinstr count --by): each hit is added to its probe's row for the hit's
 * key: the comm, the process, the thread, or the spec's first value. Two sources:
 *   - the module's tally (kinstr_tally__new_dev; KINSTR_FEAT_TALLY): tally probes
 *     (kinstr_probeset__set_tally) count in tables per CPU in kinstr.ko, read once the probes
 *     are out; a hit costs a table update and nothing can be lost on the way;
 *   - the trace buffers (kinstr_tally__new): trace probes record each hit (pid, tid, comm and the
 *     spec's values, as for kinstr trace) and the tally reads the records as they come; a hit
 *     the buffers had no room for (or that nested too deep) is counted as lost.
 * Nothing is written to disk. The table is bounded: a hit whose key would be a row past max_keys
 * (or that found no room in the module's table of its CPU) is counted as overflow: the rows plus
 * overflow and lost are every hit.
 */
#ifndef KINSTR_TALLY_H
#define KINSTR_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/kinstr.h>
#include <kinstr/event.h>
#include <kinstr/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kinstr_tally_key {
	KINSTR_TALLY_COMM,	/* the task's comm */
	KINSTR_TALLY_PID,	/* its process (thread group id) */
	KINSTR_TALLY_TID,	/* its thread */
	KINSTR_TALLY_VALUE,	/* the spec's first value (SPEC(VALUE)) */
	KINSTR_TALLY_NR_KEYS
};

/* "comm", "pid", "tid", "value": the names --by takes; -1 for another. */
int kinstr_tally_key__parse(const char *s);
const char *kinstr_tally_key__str(unsigned int key);

struct kinstr_tally_row {
	unsigned int event;	/* the probe's trace event (an index of the events given) */
	uint64_t key;		/* PID, TID, VALUE: the number */
	char comm[16];		/* COMM: the name (also kept for the others: the last hit's) */
	/* VALUE: hits under more than one comm (comm is then only the last hit's) */
	bool comm_several;
	uint64_t hits;
	/*
	 * VALUE of a string: the whole string as recorded (the key), owned by the tally; NULL for
	 * the other keys. The probe records at most the spec's string[N] - 1 characters: str_full
	 * says the string filled them, so the string in memory may have been longer (strings that
	 * differ only past them share the row).
	 */
	const char *str;
	bool str_full;
};

struct kinstr_tally;

/*
 * Over events ev[nev] (kinstr_plan__add_trace's, kept by the caller) of the trace channel t
 * (kinstr_trace__create(); the tally does not own it; NULL: only what kinstr_tally__subbuf is
 * given). max_keys 0: 65536 rows.
 */
struct kinstr_tally *kinstr_tally__new(struct kinstr_trace *t, const struct kinstr_trace_event *ev, unsigned int nev,
				       unsigned int key, size_t max_keys);
/*
 * Over events ev[nev] (kept by the caller), the module's tally of dev (created here: one per
 * device; its tables are sized for max_keys, 0: 65536 rows, within about 16 MiB). By value,
 * each event must have a value. NULL with errno (EEXIST: the device has one; EINVAL).
 */
struct kinstr_tally *kinstr_tally__new_dev(struct kinstr_dev *dev, const struct kinstr_trace_event *ev,
					   unsigned int nev, unsigned int key, size_t max_keys);
void kinstr_tally__free(struct kinstr_tally *ta);
/* Read what the buffers hold now. 0 or -errno. */
int kinstr_tally__consume(struct kinstr_tally *ta);
/* One sub-buffer's records (a kinstr_trace_subbuf_fn, ctx the tally): 0, or -EBADMSG, -EINVAL. */
int kinstr_tally__subbuf(void *ta, unsigned int cpu, const struct kr_subbuf_hdr *h, const unsigned char *recs);
/* After the probes are out and quiescent: the rest, then the losses. 0 or -errno. */
int kinstr_tally__drain(struct kinstr_tally *ta);
/* The rows, by event then by hits (most first): valid once drained. */
size_t kinstr_tally__row_cnt(const struct kinstr_tally *ta);
const struct kinstr_tally_row *kinstr_tally__row(const struct kinstr_tally *ta, size_t i);
uint64_t kinstr_tally__overflow(const struct kinstr_tally *ta);	/* hits past max_keys rows */
uint64_t kinstr_tally__lost(const struct kinstr_tally *ta);		/* hits the buffers lost */
/* n more hits not counted on the way (e.g. the probes' recursion guard skipped them): in lost. */
void kinstr_tally__add_lost(struct kinstr_tally *ta, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
