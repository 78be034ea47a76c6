/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Reading the CTF traces kinstr wrote (ctf.h has the format's types and the writer): every packet
 * validated when the trace is opened, the events iterated stream by stream (CPU by CPU in ascending
 * order, each in file order).
 */
#ifndef KINSTR_CTF_READ_H
#define KINSTR_CTF_READ_H

#include <kinstr/ctf.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_ctf_reader;

struct kinstr_ctf_class {
	const char *name;
	unsigned int id;
	const struct kinstr_ctf_field *fields;
	unsigned int nfields;
};

struct kinstr_ctf_stream_info {
	const char *file;		/* "stream_1" */
	unsigned int cpu;		/* cpu_id of its packets */
	uint64_t packets;
	uint64_t events_discarded;	/* the last packet's running total */
	uint64_t ts_begin, ts_end;	/* first packet's begin, last packet's end */
};

struct kinstr_ctf_event {
	unsigned int class_id;
	unsigned int cpu;
	unsigned int stream;	/* index for kinstr_ctf_reader__stream() */
	uint64_t ts;
	/* one per field of the class; strings are NUL-terminated and valid until the next call */
	const union kinstr_ctf_value *values;
	unsigned int nvalues;
};

/*
 * Open the trace in dir: parse its metadata and check every packet's header and context against
 * the file sizes. NULL with errno on failure, and why: a sentence naming the file and offset
 * (e.g. "t/stream_1: truncated packet at offset 8192 (packet_size says 4096 bytes, 1200 left)").
 */
struct kinstr_ctf_reader *kinstr_ctf_reader__open(const char *dir, struct kinstr_why *why);
void kinstr_ctf_reader__close(struct kinstr_ctf_reader *r);

/* 1 and *ev filled, 0 at the end, or a negative errno and why (-EBADMSG for a malformed
 * event). */
int kinstr_ctf_reader__next(struct kinstr_ctf_reader *r, struct kinstr_ctf_event *ev, struct kinstr_why *why);

unsigned int kinstr_ctf_reader__class_cnt(const struct kinstr_ctf_reader *r);
const struct kinstr_ctf_class *kinstr_ctf_reader__class(const struct kinstr_ctf_reader *r, unsigned int id);
unsigned int kinstr_ctf_reader__stream_cnt(const struct kinstr_ctf_reader *r);
const struct kinstr_ctf_stream_info *kinstr_ctf_reader__stream(const struct kinstr_ctf_reader *r, unsigned int i);
/* An env entry's value as written (integers as decimal text), or NULL. */
const char *kinstr_ctf_reader__env(const struct kinstr_ctf_reader *r, const char *key);
/* The trace's uuid (36 characters), clock name, and the clock's offset from realtime in ns. */
const char *kinstr_ctf_reader__uuid(const struct kinstr_ctf_reader *r);
const char *kinstr_ctf_reader__clock_name(const struct kinstr_ctf_reader *r);
int64_t kinstr_ctf_reader__clock_offset_ns(const struct kinstr_ctf_reader *r);

#ifdef __cplusplus
}
#endif
#endif
