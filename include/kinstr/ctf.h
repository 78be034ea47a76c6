/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Traces in CTF 1.8 (what Debian 12's babeltrace2 2.0.4 reads): a directory holding a plain-text
 * `metadata` file and one stream file per CPU (`stream_<cpu>`). docs/design.md, "Trace format",
 * describes the layout.
 *
 * Writer: create the trace, add the event classes, then write packets per CPU:
 *
 *	w = kinstr_ctf__create("t", &opts);
 *	id = kinstr_ctf__add_class(w, "open", fields, 3);
 *	kinstr_ctf__packet_begin(w, cpu, ts_begin);
 *	kinstr_ctf__event(w, cpu, id, ts, values);	(no allocation once the packet buffer grew)
 *	kinstr_ctf__packet_end(w, cpu, ts_end, discarded_total);
 *	kinstr_ctf__close(w);
 *
 * The metadata file is written (atomically) when the first packet begins, so a writer killed
 * later leaves a readable trace of the packets it completed. Timestamps are u64 nanoseconds of
 * the trace's clock; within a CPU they must not go backwards.
 *
 * The reader is ctf_read.h's; calls paired from a trace, ctf_pairs.h's.
 */
#ifndef KINSTR_CTF_H
#define KINSTR_CTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kinstr_ctf_type {
	KINSTR_CTF_U8, KINSTR_CTF_U16, KINSTR_CTF_U32, KINSTR_CTF_U64,
	KINSTR_CTF_S8, KINSTR_CTF_S16, KINSTR_CTF_S32, KINSTR_CTF_S64,
	KINSTR_CTF_CHARS,	/* char[len] shown as a UTF-8 string (e.g. comm[16]); NUL-padded */
	KINSTR_CTF_STRING,	/* NUL-terminated string */
};

struct kinstr_ctf_field {
	const char *name;	/* a C identifier */
	enum kinstr_ctf_type type;
	unsigned int len;	/* KINSTR_CTF_CHARS: bytes (1..4096); otherwise 0 */
	bool hex;		/* integers: display in base 16 */
};

/* One field's value: u for unsigned, s for signed integers, str for CHARS and STRING. */
union kinstr_ctf_value {
	uint64_t u;
	int64_t s;
	const char *str;	/* CHARS: up to len bytes are copied, stopping at a NUL */
};

struct kinstr_ctf_env {
	const char *key;	/* a C identifier */
	const char *value;
};

/* A packet as it is written (struct kinstr_ctf_sink): its bytes and its packet context's values. */
struct kinstr_ctf_packet {
	unsigned int cpu;		/* the stream's */
	const uint8_t *data;		/* the whole packet, padding included */
	size_t size;			/* bytes */
	size_t content_size;		/* bytes before the padding */
	uint64_t ts_begin, ts_end;
	uint64_t events_discarded;	/* the CPU's running total */
	uint64_t seq;			/* packet_seq_num, 0, 1, ... per stream */
	uint32_t stream_class_id;	/* the packet header's stream_id */
};

/*
 * Where else the trace goes besides (or instead of) the folder: the metadata text once (when the
 * first packet begins, or at close), then every packet as it ends. A non-zero return fails the call
 * that wrote (and close, as the first error).
 */
struct kinstr_ctf_sink {
	int (*metadata)(void *ctx, const char *text, size_t len);
	int (*packet)(void *ctx, const struct kinstr_ctf_packet *p);
	void *ctx;
};

struct kinstr_ctf_opts {
	size_t sz;			/* sizeof(struct kinstr_ctf_opts) */
	const char *clock_name;		/* default "monotonic" */
	const char *clock_description;	/* default "CLOCK_MONOTONIC" */
	/* realtime = clock_offset_ns + ts; 0: measured now (CLOCK_REALTIME - CLOCK_MONOTONIC) */
	int64_t clock_offset_ns;
	/* uname fields and hostname for the env block; NULL: from uname(2) */
	const char *sysname, *release, *version, *hostname;
	const struct kinstr_ctf_env *env;	/* extra env entries */
	size_t env_cnt;
	/* packets are padded to a multiple of this many bytes (a power of two >= 8); 0: 4096 */
	size_t packet_align;
	/* also hand the metadata and every packet to sink (kept by the caller); with a sink, the
	 * folder may be NULL: no file is written */
	const struct kinstr_ctf_sink *sink;
};

struct kinstr_ctf;

/*
 * Create the trace directory dir (it must not exist, or be empty; NULL with opts->sink: no
 * folder). NULL with errno on failure: EEXIST when dir holds files, EINVAL for bad opts.
 */
struct kinstr_ctf *kinstr_ctf__create(const char *dir, const struct kinstr_ctf_opts *opts);

/*
 * Add an event class before the first packet. Returns its id (0, 1, ... in order), or -EINVAL
 * (bad name, field name or type), -EBUSY (packets already written), -ENOMEM.
 */
int kinstr_ctf__add_class(struct kinstr_ctf *w, const char *name, const struct kinstr_ctf_field *fields,
			  unsigned int nfields);

/* Start a packet on cpu (< 65536). -EBUSY when one is open there, -ERANGE when ts_begin is before
 * the previous packet's end on that CPU, -errno from writing the metadata or creating the file. */
int kinstr_ctf__packet_begin(struct kinstr_ctf *w, unsigned int cpu, uint64_t ts_begin);

/* Append an event (values[] has one entry per field of the class) to cpu's open packet.
 * -EINVAL without an open packet or for an unknown class, -ERANGE when ts goes backwards. */
int kinstr_ctf__event(struct kinstr_ctf *w, unsigned int cpu, unsigned int class_id, uint64_t ts,
		      const union kinstr_ctf_value *values);

/* End cpu's packet and write it. events_discarded is the CPU's running total of lost events. */
int kinstr_ctf__packet_end(struct kinstr_ctf *w, unsigned int cpu, uint64_t ts_end, uint64_t events_discarded);

/* The bytes cpu's open packet would take in its file if it ended now (padding included); 0: none open. */
size_t kinstr_ctf__packet_size(const struct kinstr_ctf *w, unsigned int cpu);

/* Drop cpu's open packet unwritten (e.g. a size cap reached); -EINVAL without one. */
int kinstr_ctf__packet_cancel(struct kinstr_ctf *w, unsigned int cpu);

/* End open packets (at their last timestamp), write the metadata if no packet did, free w.
 * Returns the first error met (w is freed anyway). */
int kinstr_ctf__close(struct kinstr_ctf *w);

#ifdef __cplusplus
}
#endif
#endif
