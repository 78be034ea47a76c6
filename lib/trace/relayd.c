// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * An lttng-relayd client (include/kinstr/relayd.h): the relay protocol of lttng-tools 2.11 and
 * later, as its consumer daemon speaks it, written from the protocol's description (docs/relayd.md).
 *
 * Two TCP connections. The control one carries commands, each a header (u64 circuit id, u64
 * payload size, u32 command, u32 command version) and a payload, most answered by a reply. The data
 * one carries packets, each after a header (u64 circuit id, u64 relay stream id, u64 per-stream
 * sequence number, u32 size, u32 padding size). Every integer is big-endian; structs are packed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <kinstr/relayd.h>
#include "lib/opts.h"

/* The commands this client sends (lttng-tools' enum lttcomm_relayd_command). */
enum {
	CMD_ADD_STREAM = 1,
	CMD_CREATE_SESSION = 2,
	CMD_VERSION = 5,
	CMD_SEND_METADATA = 6,
	CMD_CLOSE_STREAM = 7,
	CMD_DATA_PENDING = 8,
	CMD_SEND_INDEX = 13,
	CMD_STREAMS_SENT = 16,
	CMD_ROTATE_STREAMS = 18,
	CMD_CREATE_TRACE_CHUNK = 19,
};

#define PROTO_MAJOR	2
#define PROTO_MINOR	11	/* trace chunks, sized names; the relay adapts to the lower of its own and ours */
#define REPLY_OK	10	/* LTTNG_OK */
#define HDR_SIZE	24
#define DATA_HDR_SIZE	32
#define INDEX_SIZE	80	/* CTF index 1.1: ten u64 */
#define CHUNK_ID	0

struct rstream {
	uint64_t handle;	/* the relay's id */
	uint64_t next_seq;	/* net_seq_num of the next packet */
};

struct kinstr_relayd {
	int ctrl, data;
	int timeout_ms;
	int err;			/* the first failure's -errno: every later call returns it */
	bool sent;			/* streams_sent done */
	uint32_t minor;
	char addr[128];			/* HOST:PORT */
	char host[128];
	char session[256], hostname[256], output_path[4096];
	char errmsg[512];
	uint64_t session_id;
	struct rstream meta;
	unsigned int nr_streams;
	struct rstream *streams;
};

static void put_be(uint8_t *p, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

int kinstr_relayd__parse_addr(const char *addr, char *host, size_t hostsz, uint16_t *control, uint16_t *data)
{
	const char *h = addr, *rest;
	size_t hl;
	unsigned long c = KINSTR_RELAYD_CONTROL_PORT, d = 0;
	char *end;

	if (!addr || !*addr || !host || !hostsz)
		return -EINVAL;
	if (*addr == '[') {
		rest = strchr(addr, ']');
		if (!rest)
			return -EINVAL;
		h = addr + 1;
		hl = rest - h;
		rest++;
		if (*rest && *rest != ':')
			return -EINVAL;
	} else {
		rest = strchr(addr, ':');
		if (!rest)
			rest = addr + strlen(addr);
		hl = rest - h;
	}
	if (!hl || hl >= hostsz)
		return -EINVAL;
	if (*rest == ':') {
		errno = 0;
		c = strtoul(rest + 1, &end, 10);
		if (end == rest + 1 || errno || !c || c > 65535)
			return -EINVAL;
		rest = end;
		if (*rest == ':') {
			d = strtoul(rest + 1, &end, 10);
			if (end == rest + 1 || errno || !d || d > 65535)
				return -EINVAL;
			rest = end;
		}
		if (*rest)
			return -EINVAL;
	}
	if (!d) {
		if (c == 65535)
			return -EINVAL;
		d = c + 1;
	}
	memcpy(host, h, hl);
	host[hl] = 0;
	if (control)
		*control = (uint16_t)c;
	if (data)
		*data = (uint16_t)d;
	return 0;
}

/* The first failure: kept (errno and sentence), returned by every later call. */
static int fail(struct kinstr_relayd *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct kinstr_relayd *r, int err, const char *fmt, ...)
{
	char what[360];
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->errmsg, sizeof(r->errmsg), "lttng-relayd at %s: %s", r->addr, what);
	return r->err = err;
}

static int send_all(struct kinstr_relayd *r, int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static int recv_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		}
		if (n == 0)
			return -ECONNRESET;	/* the relay closed the connection */
		p += n;
		len -= n;
	}
	return 0;
}

static const char *cmd_name(uint32_t cmd)
{
	switch (cmd) {
	case CMD_ADD_STREAM: return "ADD_STREAM";
	case CMD_CREATE_SESSION: return "CREATE_SESSION";
	case CMD_VERSION: return "VERSION";
	case CMD_SEND_METADATA: return "SEND_METADATA";
	case CMD_CLOSE_STREAM: return "CLOSE_STREAM";
	case CMD_DATA_PENDING: return "DATA_PENDING";
	case CMD_SEND_INDEX: return "SEND_INDEX";
	case CMD_STREAMS_SENT: return "STREAMS_SENT";
	case CMD_ROTATE_STREAMS: return "ROTATE_STREAMS";
	case CMD_CREATE_TRACE_CHUNK: return "CREATE_TRACE_CHUNK";
	}
	return "?";
}

static const char *lost_text(int err)
{
	return err == -ECONNRESET || err == -EPIPE ? "the relay went away (connection closed)" : strerror(-err);
}

/*
 * One command on the control connection: header, payload (pl of pllen bytes, then more of morelen),
 * and reply bytes into reply (replylen; 0: the command has none).
 */
static int command(struct kinstr_relayd *r, uint32_t cmd, const void *pl, size_t pllen, const void *more,
		   size_t morelen, void *reply, size_t replylen)
{
	uint8_t hdr[HDR_SIZE];
	int ret;

	if (r->err)
		return r->err;
	put_be(hdr, 0, 8);
	put_be(hdr + 8, pllen + morelen, 8);
	put_be(hdr + 16, cmd, 4);
	put_be(hdr + 20, 0, 4);
	ret = send_all(r, r->ctrl, hdr, sizeof(hdr));
	if (!ret && pllen)
		ret = send_all(r, r->ctrl, pl, pllen);
	if (!ret && morelen)
		ret = send_all(r, r->ctrl, more, morelen);
	if (ret)
		return fail(r, ret, "sending its %s command: %s", cmd_name(cmd), lost_text(ret));
	if (replylen && (ret = recv_all(r->ctrl, reply, replylen)))
		return fail(r, ret, "no reply to its %s command: %s", cmd_name(cmd),
			    ret == -ETIMEDOUT ? "timed out" : lost_text(ret));
	return 0;
}

/* A command whose reply is a u32 status: 0 for LTTNG_OK. */
static int command_ok(struct kinstr_relayd *r, uint32_t cmd, const void *pl, size_t pllen)
{
	uint8_t reply[4];
	uint32_t code;
	int ret = command(r, cmd, pl, pllen, NULL, 0, reply, sizeof(reply));

	if (ret)
		return ret;
	code = (uint32_t)get_be(reply, 4);
	if (code != REPLY_OK)
		return fail(r, -EPROTO, "it refused the %s command (code %u; see its log)", cmd_name(cmd), code);
	return 0;
}

static int connect_to(struct kinstr_relayd *r, const char *host, uint16_t port, int *fdp)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct timeval tv = { .tv_sec = r->timeout_ms / 1000, .tv_usec = (r->timeout_ms % 1000) * 1000 };
	char ports[8];
	int fd = -1, ret, one = 1;

	snprintf(ports, sizeof(ports), "%u", port);
	ret = getaddrinfo(host, ports, &hints, &res);
	if (ret)
		return fail(r, -EHOSTUNREACH, "cannot resolve %s: %s", host, gai_strerror(ret));
	ret = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(r, ret, "cannot connect to port %u: %s", port, strerror(-ret));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fdp = fd;
	return 0;
}

static int version(struct kinstr_relayd *r)
{
	uint8_t msg[8], reply[8];
	uint32_t major, minor;
	int ret;

	put_be(msg, PROTO_MAJOR, 4);
	put_be(msg + 4, PROTO_MINOR, 4);
	ret = command(r, CMD_VERSION, msg, sizeof(msg), NULL, 0, reply, sizeof(reply));
	if (ret)
		return ret;
	major = (uint32_t)get_be(reply, 4);
	minor = (uint32_t)get_be(reply + 4, 4);
	if (major != PROTO_MAJOR || minor < PROTO_MINOR)
		return fail(r, -EPROTO, "it speaks the relay protocol %u.%u; kinstr needs %u.%u or later (lttng-tools "
			    "2.11+)", major, minor, PROTO_MAJOR, PROTO_MINOR);
	r->minor = PROTO_MINOR;
	return 0;
}

static int create_session(struct kinstr_relayd *r, uint32_t live_timer_us, bool name_has_time)
{
	size_t nl = strlen(r->session) + 1, hl = strlen(r->hostname) + 1, bl = 1, len = 59 + nl + hl + bl;
	uint8_t *msg = calloc(1, len), uuid[16], reply[16];
	uint32_t code, plen;
	size_t got = 0;
	int ret;

	if (!msg)
		return fail(r, -ENOMEM, "%s", strerror(ENOMEM));
	while (got < sizeof(uuid)) {	/* the "session daemon"'s id: the relay refuses the nil UUID */
		ssize_t n = getrandom(uuid + got, sizeof(uuid) - got, 0);

		if (n > 0)
			got += n;
		else if (errno != EINTR) {
			free(msg);
			return fail(r, -errno, "no random UUID: %s", strerror(errno));
		}
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40;
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
	put_be(msg, nl, 4);
	put_be(msg + 4, hl, 4);
	put_be(msg + 8, bl, 4);		/* an empty base path: the relay names the folder */
	put_be(msg + 12, live_timer_us, 4);
	msg[16] = 0;			/* not a snapshot */
	msg[17] = name_has_time;	/* then the folder is HOSTNAME/SESSION, else HOSTNAME/SESSION-DATE */
	memcpy(msg + 18, uuid, 16);
	put_be(msg + 34, (uint64_t)getpid(), 8);	/* the session's id on our side */
	put_be(msg + 42, (uint64_t)time(NULL), 8);	/* creation time */
	msg[50] = 0;			/* no current trace chunk: one is created next */
	put_be(msg + 51, 0, 8);
	memcpy(msg + 59, r->session, nl);
	memcpy(msg + 59 + nl, r->hostname, hl);
	msg[59 + nl + hl] = 0;
	ret = command(r, CMD_CREATE_SESSION, msg, len, NULL, 0, reply, sizeof(reply));
	free(msg);
	if (ret)
		return ret;
	r->session_id = get_be(reply, 8);
	code = (uint32_t)get_be(reply + 8, 4);
	plen = (uint32_t)get_be(reply + 12, 4);
	if (plen >= sizeof(r->output_path))
		return fail(r, -EPROTO, "its reply to the CREATE_SESSION command is malformed");
	if (plen && (ret = recv_all(r->ctrl, r->output_path, plen)))
		return fail(r, ret, "no reply to its CREATE_SESSION command: %s", lost_text(ret));
	r->output_path[plen] = 0;
	if (code != REPLY_OK)
		return fail(r, -EPROTO, "it refused to create the session \"%s\" of host \"%s\" (code %u; see its log)",
			    r->session, r->hostname, code);
	return 0;
}

static int create_chunk(struct kinstr_relayd *r)
{
	uint8_t msg[20];

	put_be(msg, CHUNK_ID, 8);
	put_be(msg + 8, (uint64_t)time(NULL), 8);
	put_be(msg + 16, 0, 4);		/* no name: the chunk is the session's folder itself */
	return command_ok(r, CMD_CREATE_TRACE_CHUNK, msg, sizeof(msg));
}

static int add_stream(struct kinstr_relayd *r, const char *name, struct rstream *s)
{
	static const char path[] = "kernel";	/* the domain's folder, as LTTng's kernel traces */
	size_t nl = strlen(name) + 1, pl = sizeof(path), len = 32 + nl + pl;
	uint8_t msg[32 + 64 + sizeof(path)], reply[12];
	uint32_t code;
	int ret;

	if (nl > 64)
		return fail(r, -EINVAL, "stream name %s too long", name);
	put_be(msg, nl, 4);
	put_be(msg + 4, pl, 4);
	put_be(msg + 8, 0, 8);		/* tracefile size: no limit */
	put_be(msg + 16, 0, 8);		/* tracefile count */
	put_be(msg + 24, CHUNK_ID, 8);
	memcpy(msg + 32, name, nl);
	memcpy(msg + 32 + nl, path, pl);
	ret = command(r, CMD_ADD_STREAM, msg, len, NULL, 0, reply, sizeof(reply));
	if (ret)
		return ret;
	code = (uint32_t)get_be(reply + 8, 4);
	if (code != REPLY_OK)
		return fail(r, -EPROTO, "it refused to add the stream %s (code %u)", name, code);
	s->handle = get_be(reply, 8);
	s->next_seq = 0;
	return 0;
}

struct kinstr_relayd *kinstr_relayd__open(const char *addr, const struct kinstr_relayd_opts *opts,
					  struct kinstr_why *why)
{
	const char *session = KINSTR_OPTS_GET(opts, session, NULL), *hostname = KINSTR_OPTS_GET(opts, hostname, NULL);
	uint32_t live_us = KINSTR_OPTS_GET(opts, live_timer_us, 0);
	unsigned int i, n = KINSTR_OPTS_GET(opts, nr_streams, 0);
	struct kinstr_relayd *r;
	struct utsname u;
	char host[256];
	uint16_t cport, dport;
	int ret;

	if (!KINSTR_OPTS_VALID(opts) || !n || n > 65536 ||
	    (session && (!*session || strlen(session) >= 255 || strchr(session, '/'))) ||
	    (hostname && (!*hostname || strlen(hostname) >= 64 || strchr(hostname, '/')))) {
		kinstr_why__fail(why, -EINVAL, "bad relay options");
		errno = EINVAL;
		return NULL;
	}
	if (kinstr_relayd__parse_addr(addr, host, sizeof(host), &cport, &dport)) {
		kinstr_why__fail(why, -EINVAL, "%s: not HOST[:PORT[:DATAPORT]]", addr ? addr : "(null)");
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r)
		r->streams = calloc(n, sizeof(*r->streams));
	if (!r || !r->streams) {
		free(r);
		kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	r->ctrl = r->data = -1;
	r->nr_streams = n;
	r->timeout_ms = KINSTR_OPTS_GET(opts, timeout_ms, 0) > 0 ? opts->timeout_ms : 10000;
	snprintf(r->host, sizeof(r->host), strchr(host, ':') ? "[%.100s]" : "%.100s", host);
	snprintf(r->addr, sizeof(r->addr), strchr(host, ':') ? "[%.100s]:%u" : "%.100s:%u", host, cport);
	if (session) {
		snprintf(r->session, sizeof(r->session), "%s", session);
	} else {
		time_t now = time(NULL);

		strftime(r->session, sizeof(r->session), "kinstr-%Y%m%d-%H%M%S", localtime(&now));
	}
	if (!hostname)
		hostname = !uname(&u) && *u.nodename && strcmp(u.nodename, "(none)") ? u.nodename : "localhost";
	snprintf(r->hostname, sizeof(r->hostname), "%.63s", hostname);
	if ((ret = connect_to(r, host, cport, &r->ctrl)) || (ret = connect_to(r, host, dport, &r->data)) ||
	    (ret = version(r)) || (ret = create_session(r, live_us ? live_us : 1000000, !session)) ||
	    (ret = create_chunk(r)) || (ret = add_stream(r, "metadata", &r->meta)))
		goto fail;
	for (i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "stream_%u", i);
		if ((ret = add_stream(r, name, &r->streams[i])))
			goto fail;
	}
	return r;
fail:
	kinstr_why__fail(why, ret, "%s", r->errmsg);
	kinstr_relayd__free(r);
	errno = -ret;
	return NULL;
}

const char *kinstr_relayd__session(const struct kinstr_relayd *r)
{
	return r->session;
}

const char *kinstr_relayd__hostname(const struct kinstr_relayd *r)
{
	return r->hostname;
}

const char *kinstr_relayd__output_path(const struct kinstr_relayd *r)
{
	return r->output_path;
}

const char *kinstr_relayd__addr(const struct kinstr_relayd *r)
{
	return r->addr;
}

const char *kinstr_relayd__host(const struct kinstr_relayd *r)
{
	return r->host;
}

const char *kinstr_relayd__error(const struct kinstr_relayd *r)
{
	return r->errmsg;
}

int kinstr_relayd__metadata(struct kinstr_relayd *r, const char *text, size_t len)
{
	uint8_t pl[12];

	put_be(pl, r->meta.handle, 8);
	put_be(pl + 8, 0, 4);		/* padding */
	return command(r, CMD_SEND_METADATA, pl, sizeof(pl), text, len, NULL, 0);	/* no reply */
}

static int send_index(struct kinstr_relayd *r, struct rstream *s, uint64_t seq, const struct kinstr_ctf_packet *p,
		      uint64_t beacon_ts)
{
	uint8_t msg[INDEX_SIZE];

	put_be(msg, s->handle, 8);
	put_be(msg + 8, seq, 8);
	/* the packet's context, sizes in bits; a beacon has size 0 and says only "nothing until ts" */
	put_be(msg + 16, p ? (uint64_t)p->size * 8 : 0, 8);
	put_be(msg + 24, p ? (uint64_t)p->content_size * 8 : 0, 8);
	put_be(msg + 32, p ? p->ts_begin : 0, 8);
	put_be(msg + 40, p ? p->ts_end : beacon_ts, 8);
	put_be(msg + 48, p ? p->events_discarded : 0, 8);
	put_be(msg + 56, p ? p->stream_class_id : 0, 8);
	put_be(msg + 64, p ? p->cpu : 0, 8);		/* stream instance */
	put_be(msg + 72, p ? p->seq : 0, 8);
	return command_ok(r, CMD_SEND_INDEX, msg, sizeof(msg));
}

int kinstr_relayd__packet(struct kinstr_relayd *r, const struct kinstr_ctf_packet *p)
{
	uint8_t hdr[DATA_HDR_SIZE];
	struct rstream *s;
	int ret;

	if (r->err)
		return r->err;
	if (!p || p->cpu >= r->nr_streams || p->size > UINT32_MAX)
		return -EINVAL;
	s = &r->streams[p->cpu];
	put_be(hdr, 0, 8);
	put_be(hdr + 8, s->handle, 8);
	put_be(hdr + 16, s->next_seq, 8);
	put_be(hdr + 24, p->size, 4);
	put_be(hdr + 28, 0, 4);		/* the packet carries its own padding */
	if ((ret = send_all(r, r->data, hdr, sizeof(hdr))) || (ret = send_all(r, r->data, p->data, p->size)))
		return fail(r, ret, "sending packet %llu of stream %u: %s", (unsigned long long)p->seq, p->cpu,
			    lost_text(ret));
	ret = send_index(r, s, s->next_seq, p, 0);
	if (ret)
		return ret;
	s->next_seq++;
	return 0;
}

int kinstr_relayd__beacon(struct kinstr_relayd *r, unsigned int stream, uint64_t ts)
{
	if (r->err)
		return r->err;
	if (stream >= r->nr_streams)
		return -EINVAL;
	if (!r->streams[stream].next_seq)
		return 0;
	return send_index(r, &r->streams[stream], r->streams[stream].next_seq - 1, NULL, ts);
}

uint64_t kinstr_relayd__packets(const struct kinstr_relayd *r, unsigned int stream)
{
	return stream < r->nr_streams ? r->streams[stream].next_seq : 0;
}

int kinstr_relayd__streams_sent(struct kinstr_relayd *r)
{
	int ret;

	if (r->sent)
		return r->err;
	ret = command_ok(r, CMD_STREAMS_SENT, NULL, 0);
	if (!ret)
		r->sent = true;
	return ret;
}

int kinstr_relayd__sink_metadata(void *ctx, const char *text, size_t len)
{
	return kinstr_relayd__metadata(ctx, text, len);
}

int kinstr_relayd__sink_packet(void *ctx, const struct kinstr_ctf_packet *p)
{
	return kinstr_relayd__packet(ctx, p);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1: the relay has not written stream s's packets up to its last yet; 0: it has; -errno. */
static int pending(struct kinstr_relayd *r, const struct rstream *s)
{
	uint8_t msg[16], reply[4];
	int ret;

	put_be(msg, s->handle, 8);
	put_be(msg + 8, s->next_seq - 1, 8);
	ret = command(r, CMD_DATA_PENDING, msg, sizeof(msg), NULL, 0, reply, sizeof(reply));
	if (ret)
		return ret;
	switch (get_be(reply, 4)) {
	case 0: return 0;
	case 1: return 1;
	}
	return fail(r, -EPROTO, "it does not know stream %llu (DATA_PENDING)", (unsigned long long)s->handle);
}

/*
 * Every stream rotated to no chunk after its last packet, as LTTng ends a session: a live viewer
 * still behind then reads the rest of the chunk after the streams close (else the relay moves it to
 * no chunk with them and it never sees the end).
 */
static int rotate_to_none(struct kinstr_relayd *r)
{
	size_t len = 13 + (size_t)(r->nr_streams + 1) * 16;
	uint8_t *msg = calloc(1, len), *p;
	unsigned int i;
	int ret;

	if (!msg)
		return fail(r, -ENOMEM, "%s", strerror(ENOMEM));
	put_be(msg, r->nr_streams + 1, 4);
	msg[4] = 0;			/* no new chunk */
	p = msg + 13;
	for (i = 0; i < r->nr_streams; i++, p += 16) {
		put_be(p, r->streams[i].handle, 8);
		put_be(p + 8, r->streams[i].next_seq, 8);	/* packet_seq_num of the packet that will not come */
	}
	put_be(p, r->meta.handle, 8);
	put_be(p + 8, 0, 8);		/* ignored for metadata */
	ret = command_ok(r, CMD_ROTATE_STREAMS, msg, len);
	free(msg);
	return ret;
}

static int close_stream(struct kinstr_relayd *r, const struct rstream *s)
{
	uint8_t msg[16];

	put_be(msg, s->handle, 8);
	put_be(msg + 8, s->next_seq - 1, 8);	/* the last packet's (-1: none) */
	return command_ok(r, CMD_CLOSE_STREAM, msg, sizeof(msg));
}

int kinstr_relayd__close(struct kinstr_relayd *r, struct kinstr_why *why)
{
	double deadline = now_s() + r->timeout_ms / 1000.0;
	unsigned int i;
	int ret = r->err;

	/* every packet and index written by the relay (the data connection is read apart) */
	for (i = 0; !ret && i < r->nr_streams; i++) {
		if (!r->streams[i].next_seq)
			continue;
		while ((ret = pending(r, &r->streams[i])) == 1) {
			if (now_s() > deadline) {
				ret = fail(r, -ETIMEDOUT, "it had not written stream %u's packets after %d ms", i,
					   r->timeout_ms);
				break;
			}
			usleep(10000);
		}
	}
	if (!ret)
		ret = rotate_to_none(r);
	for (i = 0; !ret && i < r->nr_streams; i++)
		ret = close_stream(r, &r->streams[i]);
	if (!ret)
		ret = close_stream(r, &r->meta);
	if (ret)
		kinstr_why__fail(why, ret, "%s", r->errmsg);
	return ret;
}

void kinstr_relayd__free(struct kinstr_relayd *r)
{
	if (!r)
		return;
	if (r->data >= 0)
		close(r->data);
	if (r->ctrl >= 0)
		close(r->ctrl);
	free(r->streams);
	free(r);
}
