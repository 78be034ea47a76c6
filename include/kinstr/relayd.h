/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Live streaming of a CTF trace to an lttng-relayd (LTTng's relay daemon, lttng-tools 2.11 and
 * later), as LTTng's consumer daemon does: babeltrace2's lttng-live source
 * (net://HOST/host/HOSTNAME/SESSION) reads the events while they are recorded, and the relay writes
 * the trace into its output folder (HOSTNAME/SESSION[-DATE]/kernel/). docs/relayd.md describes the
 * exchange.
 *
 *	r = kinstr_relayd__open("127.0.0.1", &opts, &why);	connect, create the session and streams
 *	ctf opts.sink = { kinstr_relayd__sink_metadata, kinstr_relayd__sink_packet, r }
 *	... packets of each stream (with their index); kinstr_relayd__streams_sent(r) once
 *	kinstr_relayd__beacon(r, stream, ts)	a stream with nothing new up to ts (live viewers go on)
 *	kinstr_relayd__close(r, &why);		wait until the relay wrote everything, close the streams
 *	kinstr_relayd__free(r);
 *
 * Every call returns 0 or a negative errno; after the first failure (the relay went away, refused
 * a command) every later call fails with the same errno, and kinstr_relayd__error says what
 * happened, naming the relay.
 */
#ifndef KINSTR_RELAYD_H
#define KINSTR_RELAYD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/ctf.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KINSTR_RELAYD_CONTROL_PORT	5342	/* lttng-relayd's defaults; its data port is 5343 */

/*
 * "HOST[:PORT[:DATAPORT]]" (an IPv6 HOST in brackets: "[::1]:5342"): host (NUL-terminated, at
 * most hostsz - 1 bytes), the control port (default 5342) and the data port (default: the
 * control port + 1). 0, or -EINVAL.
 */
int kinstr_relayd__parse_addr(const char *addr, char *host, size_t hostsz, uint16_t *control, uint16_t *data);

struct kinstr_relayd_opts {
	size_t sz;			/* sizeof(struct kinstr_relayd_opts) */
	const char *session;		/* the session's name (NULL: kinstr-YYYYmmdd-HHMMSS) */
	const char *hostname;		/* the host the relay files it under (NULL: uname's nodename) */
	unsigned int nr_streams;	/* data streams (one per CPU, named stream_N); at least 1 */
	uint32_t live_timer_us;		/* the session's live timer (0: 1 s); beacons should come as often */
	int timeout_ms;			/* a send or reply that takes longer fails (0: 10 s) */
};

struct kinstr_relayd;

/*
 * Connect to the relay at addr (kinstr_relayd__parse_addr), agree on the protocol (2.11 or later),
 * create the live session, its trace chunk, the metadata stream and nr_streams data streams. NULL
 * with errno and why (naming the relay) on failure: ECONNREFUSED (no relay listens), EPROTO (it
 * speaks an older protocol or refused a command), ...
 */
struct kinstr_relayd *kinstr_relayd__open(const char *addr, const struct kinstr_relayd_opts *opts,
					  struct kinstr_why *why);

/* The session's name, the host it is filed under, and the folder the relay writes (relative to its
 * output folder, as it replied). */
const char *kinstr_relayd__session(const struct kinstr_relayd *r);
const char *kinstr_relayd__hostname(const struct kinstr_relayd *r);
const char *kinstr_relayd__output_path(const struct kinstr_relayd *r);
/* "HOST:PORT" of the control connection; HOST alone (IPv6 in brackets). */
const char *kinstr_relayd__addr(const struct kinstr_relayd *r);
const char *kinstr_relayd__host(const struct kinstr_relayd *r);

/* Append metadata text to the metadata stream. */
int kinstr_relayd__metadata(struct kinstr_relayd *r, const char *text, size_t len);
/* One whole packet of a data stream (p->cpu is the stream's number), then its index. */
int kinstr_relayd__packet(struct kinstr_relayd *r, const struct kinstr_ctf_packet *p);
/* Every stream is announced: the relay shows the session's streams to live viewers. Once. */
int kinstr_relayd__streams_sent(struct kinstr_relayd *r);
/*
 * A live beacon: stream has no event before ts (ns of the trace's clock) besides those it sent.
 * Only after the stream's first packet (the relay ignores it before).
 */
int kinstr_relayd__beacon(struct kinstr_relayd *r, unsigned int stream, uint64_t ts);
/* Packets sent to a stream so far. */
uint64_t kinstr_relayd__packets(const struct kinstr_relayd *r, unsigned int stream);

/*
 * Wait (up to the timeout) until the relay has written every packet and index sent, then close
 * the streams and the trace chunk. 0, or -errno and why.
 */
int kinstr_relayd__close(struct kinstr_relayd *r, struct kinstr_why *why);
/* The first failure's sentence ("" when none). */
const char *kinstr_relayd__error(const struct kinstr_relayd *r);
/* Close the connections (the relay ends the session) and free r. */
void kinstr_relayd__free(struct kinstr_relayd *r);

/* kinstr_ctf_sink callbacks (ctx: the struct kinstr_relayd). */
int kinstr_relayd__sink_metadata(void *ctx, const char *text, size_t len);
int kinstr_relayd__sink_packet(void *ctx, const struct kinstr_ctf_packet *p);

#ifdef __cplusplus
}
#endif
#endif
