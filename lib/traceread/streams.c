// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Reader of the CTF 1.8 traces lib/trace/ctf.c writes: the trace directory opened, every packet of every
 * stream checked when it is (metadata.c parses the metadata); events decoded by
 * kinstr_ctf_reader__next(), which never reads past a packet's content.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_read.h>
#include "lib/trace/ctf_priv.h"
#include "lib/traceread/ctf_read_priv.h"

/* ---- streams ---- */

struct pkt {
	uint64_t ts_begin, ts_end, content, size, seq, discarded;
	uint32_t cpu;
};

static void read_pkt(const uint8_t *p, struct pkt *k)
{
	k->ts_begin = ctf_get_le(p, 8);
	k->ts_end = ctf_get_le(p + 8, 8);
	k->content = ctf_get_le(p + 16, 8);
	k->size = ctf_get_le(p + 24, 8);
	k->seq = ctf_get_le(p + 32, 8);
	k->discarded = ctf_get_le(p + 40, 8);
	k->cpu = ctf_get_le(p + 48, 4);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* The trace's clock expresses ts as signed 64-bit ns from the epoch (as babeltrace2 does). */
static bool clock_fits(const struct kinstr_ctf_reader *r, uint64_t ts)
{
	int64_t t;

	return ts <= INT64_MAX && !__builtin_add_overflow((int64_t)ts, r->clock_offset, &t);
}

/*
 * Every packet of a stream file against the metadata (magic, uuid, stream id, sizes), its own
 * CRC-32 (which covers the events and the padding), and its neighbours: sequence numbers from 0
 * with no gap, time never going back, one CPU (the file's), a discarded count that only grows.
 */
static int check_stream(struct kinstr_ctf_reader *r, struct rstream *s, struct kinstr_why *why)
{
	const char *d = r->dir, *f = s->info.file;
	const unsigned int ps = CTF_PKT_START;
	unsigned int file_cpu = (unsigned int)strtoul(f + 7, NULL, 10);
	uint64_t prev_end = 0, prev_discarded = 0;
	size_t off = 0;

	if (!s->size)
		return kinstr_why__fail(why, -EBADMSG, "%s/%s: empty stream file (kinstr writes a stream file only with packets)",
			    d, f);
	while (off < s->size) {
		size_t left = s->size - off;
		const uint8_t *p = s->map + off;
		size_t tail = 0;
		struct pkt k;

		if (left < ps)
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: truncated packet header at offset %zu (%zu bytes left)",
				    d, f, off, left);
		if (ctf_get_le(p, 4) != CTF_MAGIC)
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: bad packet magic 0x%08x at offset %zu", d, f,
				    (unsigned int)ctf_get_le(p, 4), off);
		if (memcmp(p + 4, r->uuid, 16))
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: packet at offset %zu belongs to another trace (uuid)",
				    d, f, off);
		if (ctf_get_le(p + 20, 4) != 0)
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: unknown stream id %u at offset %zu", d, f,
				    (unsigned int)ctf_get_le(p + 20, 4), off);
		read_pkt(p + CTF_HDR_SIZE, &k);
		if (k.size % 64 || k.size / 8 < ps || k.content % 8 || k.content / 8 < ps)
			return kinstr_why__fail(why, -EBADMSG,
				    "%s/%s: bad packet sizes at offset %zu (content_size %llu, packet_size %llu bits)",
				    d, f, off, (unsigned long long)k.content, (unsigned long long)k.size);
		if (k.content > k.size)
			return kinstr_why__fail(why, -EBADMSG,
				    "%s/%s: content_size %llu exceeds packet_size %llu bits at offset %zu", d, f,
				    (unsigned long long)k.content, (unsigned long long)k.size, off);
		if (k.size / 8 > left)
			return kinstr_why__fail(why, -EBADMSG,
				    "%s/%s: truncated packet at offset %zu (packet_size says %llu bytes, %zu left)", d, f,
				    off, (unsigned long long)(k.size / 8), left);
		if (r->crc) {
			uint32_t want, got;

			if (k.size / 8 - k.content / 8 < CTF_CRC_SIZE)
				return kinstr_why__fail(why, -EBADMSG,
					    "%s/%s: packet at offset %zu has no room for its CRC-32 after its content", d, f, off);
			tail = CTF_CRC_SIZE;
			want = (uint32_t)ctf_get_le(p + k.size / 8 - CTF_CRC_SIZE, CTF_CRC_SIZE);
			got = ctf_packet_crc(p, k.size / 8);
			if (got != want)
				return kinstr_why__fail(why, -EBADMSG,
					    "%s/%s: packet at offset %zu is damaged (its CRC-32 is 0x%08x, its last 4 bytes say 0x%08x)",
					    d, f, off, got, want);
		}
		if (!all_zero(p + k.content / 8, k.size / 8 - k.content / 8 - tail))
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: packet at offset %zu has non-zero padding after its content",
				    d, f, off);
		if (k.seq != s->info.packets)
			return kinstr_why__fail(why, -EBADMSG,
				    "%s/%s: packet at offset %zu has packet_seq_num %llu, not %llu (a packet missing or repeated)",
				    d, f, off, (unsigned long long)k.seq, (unsigned long long)s->info.packets);
		if (k.ts_end < k.ts_begin || k.ts_begin < prev_end)
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: packet at offset %zu goes back in time", d, f, off);
		if (!clock_fits(r, k.ts_end))
			return kinstr_why__fail(why, -EBADMSG,
				    "%s/%s: packet at offset %zu ends at %llu ns, past what its clock (offset %lld ns) can express",
				    d, f, off, (unsigned long long)k.ts_end, (long long)r->clock_offset);
		if (k.cpu != file_cpu)
			return kinstr_why__fail(why, -EBADMSG, "%s/%s: packet at offset %zu is of cpu %u, not %u", d, f, off,
				    k.cpu, file_cpu);
		if (k.discarded < prev_discarded)
			return kinstr_why__fail(why, -EBADMSG,
				    "%s/%s: packet at offset %zu counts %llu events discarded, fewer than the %llu before it",
				    d, f, off, (unsigned long long)k.discarded, (unsigned long long)prev_discarded);
		if (!s->info.packets)
			s->info.ts_begin = k.ts_begin;
		s->info.cpu = k.cpu;
		s->info.packets++;
		s->info.events_discarded = prev_discarded = k.discarded;
		s->info.ts_end = prev_end = k.ts_end;
		off += k.size / 8;
	}
	return 0;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct rstream *x = a, *y = b;
	unsigned int cx = (unsigned int)strtoul(x->info.file + 7, NULL, 10);
	unsigned int cy = (unsigned int)strtoul(y->info.file + 7, NULL, 10);

	return cx < cy ? -1 : cx > cy;
}

static bool stream_name(const char *n)
{
	const char *p = n + 7;

	if (strncmp(n, "stream_", 7) || !*p || strlen(p) > 5 || (*p == '0' && p[1]))
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return strtoul(n + 7, NULL, 10) < MAX_STREAMS;
}

static int map_file(int dirfd, const char *name, const uint8_t **map, size_t *size)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC), ret = 0;

	*map = NULL;
	*size = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
	} else if (st.st_size > 0) {
		void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED)
			ret = -errno;
		else {
			*map = m;
			*size = st.st_size;
		}
	}
	close(fd);
	return ret;
}

void kinstr_ctf_reader__close(struct kinstr_ctf_reader *r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->nclasses; i++) {
		free((char *)r->classes[i].c.name);
		cr_free_fields((struct kinstr_ctf_field *)r->classes[i].c.fields, r->classes[i].c.nfields);
	}
	for (i = 0; i < r->nstreams; i++) {
		if (r->streams[i].map)
			munmap((void *)r->streams[i].map, r->streams[i].size);
		free((char *)r->streams[i].info.file);
	}
	for (i = 0; i < r->nenv; i++)
		free(r->env[i]);
	free(r->env);
	free(r->classes);
	free(r->streams);
	free(r->values);
	free(r->scratch);
	free(r->clock_name);
	free(r->dir);
	free(r);
}

struct kinstr_ctf_reader *kinstr_ctf_reader__open(const char *dir, struct kinstr_why *why)
{
	struct kinstr_ctf_reader *r;
	const uint8_t *meta = NULL;
	const char *crc;
	size_t meta_size = 0, scratch = 1;
	unsigned int i, maxf = 1, j;
	char path[4096];
	struct dirent *e;
	DIR *d = NULL;
	int dirfd = -1, ret;

	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(dir))) {
		ret = kinstr_why__fail(why, -ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = kinstr_why__fail(why, -errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	ret = map_file(dirfd, "metadata", &meta, &meta_size);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (ret == -ENOENT) {
		ret = kinstr_why__fail(why, ret, "%s: no metadata", dir);
		goto out;
	}
	if (ret) {
		ret = kinstr_why__fail(why, ret, "%s: %s", path, strerror(-ret));
		goto out;
	}
	if (meta_size > MAX_METADATA) {
		ret = kinstr_why__fail(why, -EFBIG, "%s: metadata larger than %u MiB", path, MAX_METADATA >> 20);
		goto out;
	}
	ret = cr_parse_metadata(r, (const char *)meta, meta_size, path, why);
	if (ret)
		goto out;
	crc = kinstr_ctf_reader__env(r, CTF_CRC_ENV);
	if (crc && strcmp(crc, CTF_CRC_TAIL)) {
		ret = kinstr_why__fail(why, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read: env %s = \"%.40s\" is no check it knows",
			   path, CTF_CRC_ENV, crc);
		goto out;
	}
	r->crc = crc;
	for (i = 0; i < r->nclasses; i++) {
		size_t chars = 0;

		for (j = 0; j < r->classes[i].c.nfields; j++)
			if (r->classes[i].c.fields[j].type == KINSTR_CTF_CHARS)
				chars += r->classes[i].c.fields[j].len + 1;
		if (r->classes[i].c.nfields > maxf)
			maxf = r->classes[i].c.nfields;
		if (chars > scratch)
			scratch = chars;
	}
	r->values = calloc(maxf, sizeof(*r->values));
	r->scratch = malloc(scratch);
	if (!r->values || !r->scratch) {
		ret = kinstr_why__fail(why, -ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	d = fdopendir(fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
	if (!d) {
		ret = kinstr_why__fail(why, -errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		struct rstream *ns, *s;

		if (!stream_name(e->d_name))
			continue;
		ns = realloc(r->streams, (r->nstreams + 1) * sizeof(*ns));
		if (!ns) {
			ret = kinstr_why__fail(why, -ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		r->streams = ns;
		s = &ns[r->nstreams];
		memset(s, 0, sizeof(*s));
		s->info.file = strdup(e->d_name);
		r->nstreams++;
		if (!s->info.file) {
			ret = kinstr_why__fail(why, -ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		s->info.cpu = strtoul(e->d_name + 7, NULL, 10);
		ret = map_file(dirfd, e->d_name, &s->map, &s->size);
		if (ret) {
			ret = kinstr_why__fail(why, ret, "%s/%s: %s", dir, e->d_name, strerror(-ret));
			goto out;
		}
	}
	if (r->nstreams)
		qsort(r->streams, r->nstreams, sizeof(*r->streams), cmp_stream);
	for (i = 0; i < r->nstreams; i++) {
		ret = check_stream(r, &r->streams[i], why);
		if (ret)
			goto out;
		for (j = 0; j < i; j++)
			if (r->streams[j].info.cpu == r->streams[i].info.cpu) {
				ret = kinstr_why__fail(why, -EBADMSG, "%s: %s and %s both hold cpu %u", dir,
					   r->streams[j].info.file, r->streams[i].info.file, r->streams[i].info.cpu);
				goto out;
			}
	}
out:
	if (d)
		closedir(d);
	if (meta)
		munmap((void *)meta, meta_size);
	if (dirfd >= 0)
		close(dirfd);
	if (ret) {
		kinstr_ctf_reader__close(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

/* ---- events ---- */

int kinstr_ctf_reader__next(struct kinstr_ctf_reader *r, struct kinstr_ctf_event *ev, struct kinstr_why *why)
{
	const struct rstream *s;
	const struct rclass *c;
	const uint8_t *p, *end;
	size_t at;
	char *scratch;
	unsigned int id, i;
	uint64_t ts;

	if (!r || !ev)
		return kinstr_why__fail(why, -EINVAL, "%s", strerror(EINVAL));
	if (r->failed)
		return kinstr_why__fail(why, -EBADMSG, "%s: an earlier error ended the reading", r->dir);
	for (;;) {
		if (r->cur >= r->nstreams)
			return 0;
		s = &r->streams[r->cur];
		if (r->in_pkt && r->pos < r->end)
			break;
		if (r->in_pkt) {
			/* next packet (check_stream() validated every header and size) */
			r->pkt += ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE + 24, 8) / 8;
			r->in_pkt = false;
		}
		if (r->pkt >= s->size) {
			r->cur++;
			r->pkt = 0;
			continue;
		}
		r->pos = r->pkt + CTF_PKT_START;
		r->end = r->pkt + ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE + 16, 8) / 8;
		r->clock = r->pkt_begin = ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE, 8);
		r->pkt_end = ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE + 8, 8);
		r->in_pkt = true;
	}
	at = r->pos;
	p = s->map + r->pos;
	end = s->map + r->end;
	if (end - p < 4)
		goto past;
	id = p[0] & 31;
	if (id == CTF_EXTENDED_ID) {
		if (end - p < 13)
			goto past;
		id = ctf_get_le(p + 1, 4);
		ts = ctf_get_le(p + 5, 8);
		p += 13;
	} else {
		uint64_t mask = (1ull << CTF_COMPACT_TS_BITS) - 1, low = ctf_get_le(p, 4) >> 5;

		ts = (r->clock & ~mask) | low;
		if (low < (r->clock & mask))
			ts += 1ull << CTF_COMPACT_TS_BITS;
		p += 4;
	}
	if (ts < r->clock || ts > r->pkt_end) {
		r->failed = true;
		return kinstr_why__fail(why, -EBADMSG,
			    "%s/%s: event at offset %zu has timestamp %llu, outside its packet's %llu..%llu or before the event ahead of it",
			    r->dir, s->info.file, at, (unsigned long long)ts, (unsigned long long)r->pkt_begin,
			    (unsigned long long)r->pkt_end);
	}
	if (id >= r->nclasses || !r->classes[id].defined) {
		r->failed = true;
		return kinstr_why__fail(why, -EBADMSG, "%s/%s: unknown event class id %u at offset %zu", r->dir,
			    s->info.file, id, at);
	}
	c = &r->classes[id];
	scratch = r->scratch;
	for (i = 0; i < c->c.nfields; i++) {
		const struct kinstr_ctf_field *f = &c->c.fields[i];

		if (f->type == KINSTR_CTF_STRING) {
			const uint8_t *nul = memchr(p, 0, end - p);

			if (!nul)
				goto past;
			r->values[i].str = (const char *)p;
			p = nul + 1;
		} else if (f->type == KINSTR_CTF_CHARS) {
			if ((size_t)(end - p) < f->len)
				goto past;
			memcpy(scratch, p, f->len);
			scratch[f->len] = 0;
			r->values[i].str = scratch;
			scratch += f->len + 1;
			p += f->len;
		} else {
			unsigned int n = ctf_int_bytes(f->type);
			uint64_t v;

			if ((size_t)(end - p) < n)
				goto past;
			v = ctf_get_le(p, n);
			if (f->type >= KINSTR_CTF_S8 && n < 8 && (v >> (8 * n - 1)) & 1)
				v |= ~0ull << (8 * n);
			r->values[i].u = v;
			p += n;
		}
	}
	r->pos = p - s->map;
	r->clock = ts;
	ev->class_id = id;
	ev->cpu = s->info.cpu;
	ev->stream = r->cur;
	ev->ts = ts;
	ev->values = r->values;
	ev->nvalues = c->c.nfields;
	return 1;
past:
	r->failed = true;
	return kinstr_why__fail(why, -EBADMSG, "%s/%s: event at offset %zu runs past the packet's content (ends at %zu)",
		    r->dir, s->info.file, at, r->end);
}

unsigned int kinstr_ctf_reader__class_cnt(const struct kinstr_ctf_reader *r)
{
	return r->nclasses;
}

const struct kinstr_ctf_class *kinstr_ctf_reader__class(const struct kinstr_ctf_reader *r, unsigned int id)
{
	return id < r->nclasses && r->classes[id].defined ? &r->classes[id].c : NULL;
}

unsigned int kinstr_ctf_reader__stream_cnt(const struct kinstr_ctf_reader *r)
{
	return r->nstreams;
}

const struct kinstr_ctf_stream_info *kinstr_ctf_reader__stream(const struct kinstr_ctf_reader *r, unsigned int i)
{
	return i < r->nstreams ? &r->streams[i].info : NULL;
}

const char *kinstr_ctf_reader__env(const struct kinstr_ctf_reader *r, const char *key)
{
	size_t i;

	for (i = 0; i + 1 < r->nenv; i += 2)
		if (!strcmp(r->env[i], key))
			return r->env[i + 1];
	return NULL;
}

const char *kinstr_ctf_reader__uuid(const struct kinstr_ctf_reader *r)
{
	return r->uuid_text;
}

const char *kinstr_ctf_reader__clock_name(const struct kinstr_ctf_reader *r)
{
	return r->clock_name;
}

int64_t kinstr_ctf_reader__clock_offset_ns(const struct kinstr_ctf_reader *r)
{
	return r->clock_offset;
}
