// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * CTF 1.8 trace writer: metadata text plus one stream file per CPU. Each CPU's packet is built
 * in a buffer that only grows, and written whole (header, context, events, zero padding) when it
 * ends. Every field is byte-aligned and little-endian; the event header is LTTng's compact/
 * extended one. docs/design.md, "Trace format", has the layout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <kinstr/ctf.h>
#include <kinstr/kinstr.h>
#include "lib/trace/ctf_priv.h"
#include "lib/opts.h"

struct wclass {
	char *name;
	struct kinstr_ctf_field *fields;
	unsigned int nfields;
	size_t fixed;		/* bytes of the fixed-size fields */
};

struct wstream {
	int fd;
	unsigned int cpu;
	bool open;		/* a packet is being built */
	bool started;		/* a packet was written */
	uint8_t *buf;
	size_t len, cap;
	uint64_t ts_begin, last_ts, prev_end, seq, discarded;
};

struct kinstr_ctf {
	int dirfd;
	int err;			/* first write error, reported by close */
	bool meta_done;
	size_t align;
	int64_t clock_offset;
	char *clock_name, *clock_desc;
	char *env_text;			/* the env block's body */
	uint8_t uuid[16];
	uint8_t clock_uuid[16];
	struct wclass *classes;
	unsigned int nclasses;
	struct wstream **streams;	/* by cpu */
	unsigned int nstreams;
	struct kinstr_ctf_sink sink;	/* .metadata/.packet NULL: none */
};

static void uuid_str(const uint8_t *u, char *out)
{
	static const char hx[] = "0123456789abcdef";
	int i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hx[u[i] >> 4];
		out[o++] = hx[u[i] & 15];
	}
	out[o] = 0;
}

static int random_uuid(uint8_t *u)
{
	size_t got = 0;

	while (got < 16) {
		ssize_t n = getrandom(u + got, 16 - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += n;
	}
	u[6] = (u[6] & 0x0f) | 0x40;	/* version 4 */
	u[8] = (u[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	return 0;
}

/* s as a CTF string literal's contents: quotes and backslashes escaped, controls replaced. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			ret = -EEXIST;
			break;
		}
	closedir(d);
	return ret;
}

static char *build_env(const struct kinstr_ctf_opts *o)
{
	struct utsname u;
	char *text = NULL;
	size_t len = 0, i;
	unsigned int maj = 0, min = 0, patch = 0;
	FILE *f;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	sscanf(kinstr__version(), "%u.%u.%u", &maj, &min, &patch);
	fprintf(f, "\tdomain = \"kernel\";\n\ttracer_name = \"kinstr\";\n\t%s = \"%s\";\n", CTF_CRC_ENV, CTF_CRC_TAIL);
	fprintf(f, "\ttracer_major = %u;\n\ttracer_minor = %u;\n\ttracer_patchlevel = %u;\n", maj, min, patch);
	fprintf(f, "\ttracer_version = ");
	put_quoted(f, kinstr__version());
	fprintf(f, ";\n\tsysname = ");
	put_quoted(f, o->sysname ? o->sysname : u.sysname);
	fprintf(f, ";\n\tkernel_release = ");
	put_quoted(f, o->release ? o->release : u.release);
	fprintf(f, ";\n\tkernel_version = ");
	put_quoted(f, o->version ? o->version : u.version);
	fprintf(f, ";\n\thostname = ");
	put_quoted(f, o->hostname ? o->hostname : u.nodename);
	fprintf(f, ";\n");
	for (i = 0; i < o->env_cnt; i++) {
		fprintf(f, "\t%s = ", o->env[i].key);
		put_quoted(f, o->env[i].value);
		fprintf(f, ";\n");
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static const char *reserved_env[] = { "domain", "tracer_name", CTF_CRC_ENV, "tracer_major", "tracer_minor",
	"tracer_patchlevel", "tracer_version", "sysname", "kernel_release", "kernel_version", "hostname" };

struct kinstr_ctf *kinstr_ctf__create(const char *dir, const struct kinstr_ctf_opts *opts)
{
	struct kinstr_ctf_opts o = { 0 };
	struct kinstr_ctf *w;
	size_t i, j;
	int ret;

	if (!KINSTR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (dir ? !*dir : !o.sink) {
		errno = EINVAL;
		return NULL;
	}
	if (o.packet_align == 0)
		o.packet_align = 4096;
	if (o.packet_align < 8 || (o.packet_align & (o.packet_align - 1)) || o.packet_align > (1u << 30) ||
	    (o.clock_name && !ctf_is_ident(o.clock_name)) || (o.env_cnt && !o.env)) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < o.env_cnt; i++) {
		if (!ctf_is_ident(o.env[i].key) || !o.env[i].value) {
			errno = EINVAL;
			return NULL;
		}
		for (j = 0; j < sizeof(reserved_env) / sizeof(reserved_env[0]); j++)
			if (!strcmp(o.env[i].key, reserved_env[j])) {
				errno = EINVAL;
				return NULL;
			}
	}
	if (dir && mkdir(dir, 0755)) {
		if (errno != EEXIST)
			return NULL;
		ret = dir_is_empty(dir);
		if (ret) {
			errno = -ret;
			return NULL;
		}
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->align = o.packet_align;
	if (o.sink)
		w->sink = *o.sink;
	w->dirfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	w->clock_name = strdup(o.clock_name ? o.clock_name : "monotonic");
	w->clock_desc = strdup(o.clock_description ? o.clock_description : "CLOCK_MONOTONIC");
	w->env_text = build_env(&o);
	if ((dir && w->dirfd < 0) || !w->clock_name || !w->clock_desc || !w->env_text)
		goto fail;
	if ((ret = random_uuid(w->uuid)) || (ret = random_uuid(w->clock_uuid))) {
		errno = -ret;
		goto fail;
	}
	if (o.clock_offset_ns) {
		w->clock_offset = o.clock_offset_ns;
	} else {
		struct timespec rt, mono;

		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		w->clock_offset = (int64_t)(rt.tv_sec - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
	}
	return w;
fail:
	ret = errno;
	kinstr_ctf__close(w);
	errno = ret;
	return NULL;
}

static bool class_name_ok(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++, n++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '"' || *s == '\\')
			return false;
	return n <= 255;
}

int kinstr_ctf__add_class(struct kinstr_ctf *w, const char *name, const struct kinstr_ctf_field *fields,
			  unsigned int nfields)
{
	struct wclass *c, *nc;
	unsigned int i, j;

	if (!w || !class_name_ok(name) || (nfields && !fields) || nfields > 1024)
		return -EINVAL;
	if (w->meta_done)
		return -EBUSY;
	if (w->nclasses >= UINT32_MAX / 2)
		return -ENOSPC;
	for (i = 0; i < nfields; i++) {
		const struct kinstr_ctf_field *f = &fields[i];

		if (!ctf_is_ident(f->name) || strlen(f->name) > 128 || (unsigned int)f->type > KINSTR_CTF_STRING ||
		    (f->type == KINSTR_CTF_CHARS ? f->len < 1 || f->len > CTF_MAX_CHARS : f->len != 0))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(fields[j].name, f->name))
				return -EINVAL;
	}
	nc = realloc(w->classes, (w->nclasses + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	w->classes = nc;
	c = &nc[w->nclasses];
	memset(c, 0, sizeof(*c));
	c->name = strdup(name);
	c->fields = calloc(nfields ? nfields : 1, sizeof(*c->fields));
	if (!c->name || !c->fields)
		goto nomem;
	for (i = 0; i < nfields; i++) {
		c->fields[i] = fields[i];
		c->fields[i].name = strdup(fields[i].name);
		if (!c->fields[i].name)
			goto nomem;
		c->nfields++;
		c->fixed += fields[i].type == KINSTR_CTF_CHARS ? fields[i].len : ctf_int_bytes(fields[i].type);
	}
	return w->nclasses++;
nomem:
	for (i = 0; i < c->nfields; i++)
		free((char *)c->fields[i].name);
	free(c->fields);
	free(c->name);
	return -ENOMEM;
}

static void put_field_type(FILE *f, const struct kinstr_ctf_field *fd)
{
	static const char *const size[] = { "8", "16", "32", "64", "8", "16", "32", "64" };

	switch (fd->type) {
	case KINSTR_CTF_CHARS:
		fprintf(f, "\t\tinteger { size = 8; align = 8; signed = 0; encoding = UTF8; base = 10; } _%s[%u];\n",
			fd->name, fd->len);
		break;
	case KINSTR_CTF_STRING:
		fprintf(f, "\t\tstring { encoding = UTF8; } _%s;\n", fd->name);
		break;
	default:
		fprintf(f, "\t\tinteger { size = %s; align = 8; signed = %d; encoding = none; base = %d; } _%s;\n",
			size[fd->type], fd->type >= KINSTR_CTF_S8, fd->hex ? 16 : 10, fd->name);
	}
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

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

static int write_metadata(struct kinstr_ctf *w)
{
	char uuid[37], cuuid[37], *text = NULL;
	size_t len = 0;
	unsigned int i, j;
	int64_t off_s = w->clock_offset / 1000000000, off_ns = w->clock_offset % 1000000000;
	const char *ck = w->clock_name;
	FILE *f;
	int fd, ret;

	if (off_ns < 0) {
		off_ns += 1000000000;
		off_s--;
	}
	uuid_str(w->uuid, uuid);
	uuid_str(w->clock_uuid, cuuid);
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "/* CTF 1.8 */\n\n"
		   "/* Written by kinstr %s. Every field is byte-aligned and little-endian. */\n\n"
		   "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		   "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		   "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		   "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		   "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n"
		   "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
		   "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n\n"
		   "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
		   "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n"
		   "\t\tuint32_t stream_id;\n\t};\n};\n\n",
		kinstr__version(), uuid);
	fprintf(f, "env {\n%s};\n\n", w->env_text);
	fprintf(f, "clock {\n\tname = \"%s\";\n\tuuid = \"%s\";\n\tdescription = ", ck, cuuid);
	put_quoted(f, w->clock_desc);
	fprintf(f, ";\n\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %lld;\n\toffset = %lld;\n"
		   "\tabsolute = true;\n};\n\n", (long long)off_s, (long long)off_ns);
	fprintf(f, "typealias integer { size = 27; align = 1; signed = false; map = clock.%s.value; } "
		   ":= uint27_clock_t;\n"
		   "typealias integer { size = 64; align = 8; signed = false; map = clock.%s.value; } "
		   ":= uint64_clock_t;\n\n", ck, ck);
	fprintf(f, "struct packet_context {\n\tuint64_clock_t timestamp_begin;\n\tuint64_clock_t timestamp_end;\n"
		   "\tuint64_t content_size;\n\tuint64_t packet_size;\n\tuint64_t packet_seq_num;\n"
		   "\tunsigned long events_discarded;\n\tuint32_t cpu_id;\n};\n\n"
		   "struct event_header_compact {\n"
		   "\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
		   "\tvariant <id> {\n"
		   "\t\tstruct {\n\t\t\tuint27_clock_t timestamp;\n\t\t} compact;\n"
		   "\t\tstruct {\n\t\t\tuint32_t id;\n\t\t\tuint64_clock_t timestamp;\n\t\t} extended;\n"
		   "\t} v;\n} align(8);\n\n"
		   "stream {\n\tid = 0;\n\tevent.header := struct event_header_compact;\n"
		   "\tpacket.context := struct packet_context;\n};\n\n");
	for (i = 0; i < w->nclasses; i++) {
		const struct wclass *c = &w->classes[i];

		fprintf(f, "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n",
			c->name, i);
		for (j = 0; j < c->nfields; j++)
			put_field_type(f, &c->fields[j]);
		fprintf(f, "\t};\n};\n\n");
	}
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	if (w->sink.metadata) {
		ret = w->sink.metadata(w->sink.ctx, text, len);
		if (ret || w->dirfd < 0) {
			free(text);
			if (!ret)
				w->meta_done = true;
			return ret;
		}
	}
	fd = openat(w->dirfd, ".metadata.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	ret = write_all(fd, text, len);
	free(text);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(w->dirfd, ".metadata.tmp", w->dirfd, "metadata"))
		ret = -errno;
	if (!ret)
		w->meta_done = true;
	return ret;
}

static int reserve(struct wstream *s, size_t more)
{
	size_t cap;
	uint8_t *nb;

	if (s->len + more <= s->cap)
		return 0;
	cap = s->cap ? s->cap : 8192;
	while (cap < s->len + more)
		cap *= 2;
	nb = realloc(s->buf, cap);
	if (!nb)
		return -ENOMEM;
	s->buf = nb;
	s->cap = cap;
	return 0;
}

int kinstr_ctf__packet_begin(struct kinstr_ctf *w, unsigned int cpu, uint64_t ts_begin)
{
	struct wstream *s;
	int ret;

	if (!w || cpu >= CTF_MAX_CPUS)
		return -EINVAL;
	if (!w->meta_done) {
		ret = write_metadata(w);
		if (ret)
			return w->err = ret;
	}
	if (cpu >= w->nstreams) {
		struct wstream **ns = realloc(w->streams, (cpu + 1) * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		memset(ns + w->nstreams, 0, (cpu + 1 - w->nstreams) * sizeof(*ns));
		w->streams = ns;
		w->nstreams = cpu + 1;
	}
	s = w->streams[cpu];
	if (!s) {
		char name[32];

		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		/* named stream_N once its first packet is in: a reader never sees an empty stream */
		snprintf(name, sizeof(name), ".stream_%u.tmp", cpu);
		s->fd = w->dirfd < 0 ? -1 : openat(w->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (s->fd < 0 && w->dirfd >= 0) {
			ret = -errno;
			free(s);
			return ret;
		}
		s->cpu = cpu;
		w->streams[cpu] = s;
	}
	if (s->open)
		return -EBUSY;
	if (s->started && ts_begin < s->prev_end)
		return -ERANGE;
	ret = reserve(s, CTF_PKT_START);
	if (ret)
		return ret;
	s->len = CTF_PKT_START;	/* header and context are filled in when the packet ends */
	s->ts_begin = s->last_ts = ts_begin;
	s->open = true;
	return 0;
}

static struct wstream *open_stream(struct kinstr_ctf *w, unsigned int cpu)
{
	return w && cpu < w->nstreams && w->streams[cpu] && w->streams[cpu]->open ? w->streams[cpu] : NULL;
}

int kinstr_ctf__event(struct kinstr_ctf *w, unsigned int cpu, unsigned int class_id, uint64_t ts,
		      const union kinstr_ctf_value *values)
{
	struct wstream *s = open_stream(w, cpu);
	const struct wclass *c;
	size_t need, sl[1024];
	unsigned int i;
	uint8_t *p;
	int ret;

	if (!s || class_id >= w->nclasses || (w->classes[class_id].nfields && !values))
		return -EINVAL;
	if (ts < s->last_ts)
		return -ERANGE;
	c = &w->classes[class_id];
	need = 13 + c->fixed;
	for (i = 0; i < c->nfields; i++) {
		if (c->fields[i].type == KINSTR_CTF_STRING) {
			sl[i] = values[i].str ? strlen(values[i].str) : 0;
			need += sl[i] + 1;
		}
	}
	ret = reserve(s, need);
	if (ret)
		return ret;
	p = s->buf + s->len;
	if (class_id <= CTF_COMPACT_MAX_ID && ts - s->last_ts < (1ull << CTF_COMPACT_TS_BITS)) {
		/* 5-bit id then the low 27 bits of ts, packed from the least significant bit */
		ctf_put_le(p, class_id | (ts & ((1u << CTF_COMPACT_TS_BITS) - 1)) << 5, 4);
		p += 4;
	} else {
		*p++ = CTF_EXTENDED_ID;
		ctf_put_le(p, class_id, 4);
		ctf_put_le(p + 4, ts, 8);
		p += 12;
	}
	for (i = 0; i < c->nfields; i++) {
		const struct kinstr_ctf_field *f = &c->fields[i];

		switch (f->type) {
		case KINSTR_CTF_CHARS: {
			size_t n = values[i].str ? strnlen(values[i].str, f->len) : 0;

			memcpy(p, values[i].str, n);
			memset(p + n, 0, f->len - n);
			p += f->len;
			break;
		}
		case KINSTR_CTF_STRING:
			memcpy(p, values[i].str ? values[i].str : "", sl[i] + 1);
			p += sl[i] + 1;
			break;
		default:
			ctf_put_le(p, values[i].u, ctf_int_bytes(f->type));
			p += ctf_int_bytes(f->type);
		}
	}
	s->len = p - s->buf;
	s->last_ts = ts;
	return 0;
}

/* A stream's file from its temporary name to stream_N (or away, when it never got a packet). */
static int stream_rename(struct kinstr_ctf *w, unsigned int cpu, bool drop)
{
	char tmp[32], name[32];

	if (w->dirfd < 0)
		return 0;
	snprintf(tmp, sizeof(tmp), ".stream_%u.tmp", cpu);
	snprintf(name, sizeof(name), "stream_%u", cpu);
	if (drop)
		return unlinkat(w->dirfd, tmp, 0) ? -errno : 0;
	return renameat(w->dirfd, tmp, w->dirfd, name) ? -errno : 0;
}

uint32_t ctf_packet_crc(const uint8_t *pkt, size_t size)
{
	return (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), pkt, size - CTF_CRC_SIZE);
}

int kinstr_ctf__packet_end(struct kinstr_ctf *w, unsigned int cpu, uint64_t ts_end, uint64_t events_discarded)
{
	struct wstream *s = open_stream(w, cpu);
	size_t padded;
	uint8_t *p;
	int ret;

	if (!s)
		return -EINVAL;
	if (ts_end < s->last_ts)
		return -ERANGE;
	/* room for the CRC after the content, in the padding */
	padded = (s->len + CTF_CRC_SIZE + w->align - 1) & ~(w->align - 1);
	ret = reserve(s, padded - s->len);
	if (ret)
		return ret;
	memset(s->buf + s->len, 0, padded - s->len);
	p = s->buf;
	ctf_put_le(p, CTF_MAGIC, 4);
	memcpy(p + 4, w->uuid, 16);
	ctf_put_le(p + 20, 0, 4);	/* stream_id: the one stream class */
	p += CTF_HDR_SIZE;
	ctf_put_le(p, s->ts_begin, 8);
	ctf_put_le(p + 8, ts_end, 8);
	ctf_put_le(p + 16, (uint64_t)s->len * 8, 8);
	ctf_put_le(p + 24, (uint64_t)padded * 8, 8);
	ctf_put_le(p + 32, s->seq, 8);
	ctf_put_le(p + 40, events_discarded, 8);
	ctf_put_le(p + 48, cpu, 4);
	ctf_put_le(s->buf + padded - CTF_CRC_SIZE, ctf_packet_crc(s->buf, padded), CTF_CRC_SIZE);
	s->open = false;
	ret = s->fd >= 0 ? write_all(s->fd, s->buf, padded) : 0;
	if (!ret && w->sink.packet) {
		struct kinstr_ctf_packet pk = {
			.cpu = cpu, .data = s->buf, .size = padded, .content_size = s->len, .ts_begin = s->ts_begin,
			.ts_end = ts_end, .events_discarded = events_discarded, .seq = s->seq, .stream_class_id = 0,
		};

		ret = w->sink.packet(w->sink.ctx, &pk);
	}
	s->len = 0;
	if (!ret && !s->started)
		ret = stream_rename(w, cpu, false);
	if (ret) {
		if (!w->err)
			w->err = ret;
		return ret;
	}
	s->seq++;
	s->started = true;
	s->prev_end = ts_end;
	s->discarded = events_discarded;
	return 0;
}

size_t kinstr_ctf__packet_size(const struct kinstr_ctf *w, unsigned int cpu)
{
	const struct wstream *s = open_stream((struct kinstr_ctf *)w, cpu);

	return s ? (s->len + CTF_CRC_SIZE + w->align - 1) & ~(w->align - 1) : 0;
}

int kinstr_ctf__packet_cancel(struct kinstr_ctf *w, unsigned int cpu)
{
	struct wstream *s = open_stream(w, cpu);

	if (!s)
		return -EINVAL;
	s->open = false;
	s->len = 0;
	s->last_ts = s->started ? s->prev_end : 0;
	return 0;
}

int kinstr_ctf__close(struct kinstr_ctf *w)
{
	unsigned int i;
	int ret;

	if (!w)
		return -EINVAL;
	ret = w->err;
	for (i = 0; i < w->nstreams; i++) {
		struct wstream *s = w->streams[i];

		if (!s)
			continue;
		if (s->open) {
			/* no newer total is known: repeat the last one written */
			int r = kinstr_ctf__packet_end(w, i, s->last_ts, s->discarded);

			if (r && !ret)
				ret = r;
		}
		if (s->fd >= 0 && close(s->fd) && !ret)
			ret = -errno;
		if (!s->started) {
			int r = stream_rename(w, i, true);

			if (r && !ret)
				ret = r;
		}
		free(s->buf);
		free(s);
	}
	if (!w->meta_done && (w->dirfd >= 0 || w->sink.metadata) && w->env_text && !ret)
		ret = write_metadata(w);
	for (i = 0; i < w->nclasses; i++) {
		unsigned int j;

		for (j = 0; j < w->classes[i].nfields; j++)
			free((char *)w->classes[i].fields[j].name);
		free(w->classes[i].fields);
		free(w->classes[i].name);
	}
	free(w->classes);
	free(w->streams);
	free(w->clock_name);
	free(w->clock_desc);
	free(w->env_text);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w);
	return ret;
}
