// SPDX-License-Identifier: GPL-2.0
/*
 * A corpus of corrupted CTF traces for tests/unit/test_report_sanitizers.sh:
 *
 *   ctf_corpus OUT N SEED
 *
 * writes a valid trace with lib/trace/ctf.c into OUT/base (three CPUs, integer, signed, hex, char[16]
 * and string fields, compact and extended event headers, discarded counts), then N mutated copies
 * OUT/case_00000 ... each with one to three mutations of its metadata or stream files: a
 * truncation, bit flips, a packet header/context field overwritten with an edge value, a run of
 * bytes set to 0x00/0xff, a metadata number (any, or one of the clock's) replaced by an extreme
 * one, a metadata line dropped.
 * Deterministic for a given SEED. Prints "N cases in OUT".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kinstr/ctf.h>

#define NCPU 3
#define PKT_CTX 24	/* packet header size: magic, uuid, stream_id; then the context */

static uint64_t seed;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

struct file {
	char name[32];
	unsigned char *buf;
	size_t len;
};

static struct file files[NCPU + 1];	/* metadata, stream_0 .. */
static unsigned int nfiles;

static int write_base(const char *dir)
{
	static const struct kinstr_ctf_field f_a[] = {
		{ .name = "pid", .type = KINSTR_CTF_U32 }, { .name = "tid", .type = KINSTR_CTF_U32 },
		{ .name = "comm", .type = KINSTR_CTF_CHARS, .len = 16 },
		{ .name = "count", .type = KINSTR_CTF_U64 }, { .name = "ret", .type = KINSTR_CTF_S64 },
		{ .name = "ptr", .type = KINSTR_CTF_U64, .hex = true }, { .name = "small", .type = KINSTR_CTF_S8 },
	};
	static const struct kinstr_ctf_field f_b[] = {
		{ .name = "pid", .type = KINSTR_CTF_U32 }, { .name = "name", .type = KINSTR_CTF_STRING },
		{ .name = "w", .type = KINSTR_CTF_U16 }, { .name = "x", .type = KINSTR_CTF_S32 },
	};
	struct kinstr_ctf_env env[] = { { "kinstr_probes", "vfs_read(count) vfs_read%return" },
					{ "kinstr_mode", "discard" } };
	struct kinstr_ctf_opts o = { .sz = sizeof(o), .clock_offset_ns = 1700000000000000000ll, .env = env,
				     .env_cnt = 2, .hostname = "corpus", .release = "6.1.0-test", .packet_align = 256 };
	struct kinstr_ctf *w = kinstr_ctf__create(dir, &o);
	uint64_t ts[NCPU] = { 1000, 2000, 3000 }, lost[NCPU] = { 0 };
	unsigned int c, p, i, nc;
	int ids[34];

	if (!w)
		return -errno;
	ids[0] = kinstr_ctf__add_class(w, "vfs_read", f_a, 7);
	ids[1] = kinstr_ctf__add_class(w, "vfs_read%return", f_b, 4);
	for (nc = 2; nc < 34; nc++) {	/* ids past 30 take the extended header */
		char name[32];

		snprintf(name, sizeof(name), "filler_%u", nc);
		ids[nc] = kinstr_ctf__add_class(w, name, f_b, 1);
	}
	for (i = 0; i < nc; i++)
		if (ids[i] != (int)i)
			return -EINVAL;
	for (p = 0; p < 4; p++) {
		for (c = 0; c < NCPU; c++) {
			if (kinstr_ctf__packet_begin(w, c, ts[c]))
				return -EIO;
			for (i = 0; i < 12; i++) {
				union kinstr_ctf_value v[7];
				unsigned int id = (unsigned int)(rnd() % 5 == 0 ? 2 + rnd() % 32 : rnd() % 2);
				char s[40];

				ts[c] += rnd() % 7 == 0 ? (1ull << 28) + rnd() % 1000 : 1 + rnd() % 5000;
				memset(v, 0, sizeof(v));
				v[0].u = 100 + c;
				if (id == 0) {
					v[1].u = 200 + c;
					v[2].str = "corpus-comm";
					v[3].u = rnd();
					v[4].s = -(int64_t)(rnd() % 1000);
					v[5].u = 0xffff888000000000ull + rnd() % 4096;
					v[6].s = -5;
				} else {
					snprintf(s, sizeof(s), "name-%llu", (unsigned long long)(rnd() % 100000));
					v[1].str = s;
					v[2].u = rnd() & 0xffff;
					v[3].s = -(int64_t)(rnd() & 0x7fffffff);
				}
				if (kinstr_ctf__event(w, c, id, ts[c], v))
					return -EIO;
			}
			lost[c] += rnd() % 3;
			ts[c] += 10;
			if (kinstr_ctf__packet_end(w, c, ts[c], lost[c]))
				return -EIO;
		}
	}
	return kinstr_ctf__close(w);
}

static int load(const char *dir)
{
	unsigned int i;

	for (i = 0; i <= NCPU; i++) {
		char path[512];
		struct stat st;
		int fd;

		if (i == 0)
			snprintf(files[i].name, sizeof(files[i].name), "metadata");
		else
			snprintf(files[i].name, sizeof(files[i].name), "stream_%u", i - 1);
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		fd = open(path, O_RDONLY);
		if (fd < 0 || fstat(fd, &st))
			return -errno;
		files[i].len = (size_t)st.st_size;
		files[i].buf = malloc(files[i].len + 1);
		if (!files[i].buf || read(fd, files[i].buf, files[i].len) != (ssize_t)files[i].len)
			return -EIO;
		close(fd);
	}
	nfiles = NCPU + 1;
	return 0;
}

static const uint64_t edges[] = {
	0, 1, 2, 7, 8, 0x7f, 0x80, 0xff, 0x100, 0xfff, 0x1000, 0xffff, 0x10000, 0x7fffffff, 0x80000000,
	0xffffffff, 0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xfffffffffffffff8ull,
	0xffffffffffffffffull,
};

static uint64_t edge(void)
{
	return rnd() % 4 == 0 ? rnd() : edges[rnd() % (sizeof(edges) / sizeof(edges[0]))];
}

/* Replace a random number of the metadata text (or the one after key, if it has one) with an extreme one. */
static void meta_number(unsigned char **buf, size_t *len, const char *key)
{
	static const char *const repl[] = {
		"0", "1", "-1", "4294967295", "4294967296", "18446744073709551615", "18446744073709551616",
		"9223372036854775807", "-9223372036854775808", "99999999999999999999999", "0x7fffffffffffffff",
		"65536", "4097", "64", "65", "3", "-4611686018427387904", "4611686018427387904",
	};
	size_t i, starts[4096], n = 0, s, e, rl;
	const char *r = repl[rnd() % (sizeof(repl) / sizeof(repl[0]))];
	unsigned char *nb;

	for (i = 0; i < *len && n < 4096; i++)
		if ((*buf)[i] >= '0' && (*buf)[i] <= '9' && (i == 0 || !((*buf)[i - 1] >= '0' && (*buf)[i - 1] <= '9')))
			starts[n++] = i;
	if (!n)
		return;
	s = starts[rnd() % n];
	if (key) {	/* the clock's fields: offset_s * 1e9 + offset must be range-checked first */
		const unsigned char *k = memmem(*buf, *len, key, strlen(key));

		if (!k)
			return;
		s = (size_t)(k - *buf) + strlen(key);
		if ((*buf)[s] == '-')	/* a sign is part of the number */
			s++;
	}
	for (e = s; e < *len && (*buf)[e] >= '0' && (*buf)[e] <= '9'; e++)
		;
	rl = strlen(r);
	nb = malloc(*len - (e - s) + rl + 1);
	if (!nb)
		return;
	memcpy(nb, *buf, s);
	memcpy(nb + s, r, rl);
	memcpy(nb + s + rl, *buf + e, *len - e);
	free(*buf);
	*len = *len - (e - s) + rl;
	*buf = nb;
}

static void meta_drop_line(unsigned char *buf, size_t *len)
{
	size_t i, n = 0, s, e;

	for (i = 0; i < *len; i++)
		n += buf[i] == '\n';
	if (!n)
		return;
	n = rnd() % n;
	for (s = 0; s < *len && n; s++)
		n -= buf[s] == '\n';
	for (e = s; e < *len && buf[e] != '\n'; e++)
		;
	if (e < *len)
		e++;
	memmove(buf + s, buf + e, *len - e);
	*len -= e - s;
}

static void mutate(unsigned char **buf, size_t *len, bool meta)
{
	static const char *const clock_keys[] = { "offset_s = ", "offset = ", "freq = " };
	unsigned int m = (unsigned int)(rnd() % (meta ? 7 : 5)), i, n;
	size_t off;

	if (!*len)
		return;
	switch (m) {
	case 0:	/* truncate */
		*len = rnd() % *len;
		break;
	case 1:	/* bit flips */
		for (i = 0, n = 1 + rnd() % 8; i < n; i++)
			(*buf)[rnd() % *len] ^= (unsigned char)(1u << (rnd() % 8));
		break;
	case 2:	/* a run of 0x00 or 0xff */
		off = rnd() % *len;
		n = (unsigned int)(1 + rnd() % 16);
		memset(*buf + off, rnd() % 2 ? 0xff : 0, off + n > *len ? *len - off : n);
		break;
	case 3:	/* stream: a packet header/context field; metadata: a number */
		if (meta) {
			meta_number(buf, len, NULL);
		} else {
			/* packets are 256-byte aligned here: pick one, then one of its 8-byte fields */
			size_t pkt = (rnd() % (*len / 256 + 1)) * 256, f = rnd() % 8;
			uint64_t v = edge();

			off = f == 0 ? pkt + 20 : pkt + PKT_CTX + (f - 1) * 8;	/* stream_id, then the context */
			if (rnd() % 2 && off + 8 <= *len) {
				uint64_t old;

				memcpy(&old, *buf + off, 8);
				v = rnd() % 2 ? old + (rnd() % 17) - 8 : old * 8;	/* near the truth: bits vs bytes */
			}
			for (i = 0; i < 8 && off + i < *len; i++)
				(*buf)[off + i] = (unsigned char)(v >> (8 * i));
		}
		break;
	case 4:	/* a random 1, 2, 4 or 8-byte field anywhere */
		off = rnd() % *len;
		n = 1u << (rnd() % 4);
		{
			uint64_t v = edge();

			for (i = 0; i < n && off + i < *len; i++)
				(*buf)[off + i] = (unsigned char)(v >> (8 * i));
		}
		break;
	case 5:
		meta_drop_line(*buf, len);
		break;
	case 6:
		meta_number(buf, len, clock_keys[rnd() % 3]);
		break;
	}
}

static int write_case(const char *dir)
{
	unsigned char *copy[NCPU + 1];
	size_t len[NCPU + 1];
	unsigned int i, n = 1 + (unsigned int)(rnd() % 3);
	int ret = 0;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (i = 0; i < nfiles; i++) {
		copy[i] = malloc(files[i].len + 1);
		if (!copy[i])
			return -ENOMEM;
		memcpy(copy[i], files[i].buf, files[i].len);
		len[i] = files[i].len;
	}
	while (n--) {
		/* the metadata a third of the time, else a stream */
		i = rnd() % 3 == 0 ? 0 : 1 + (unsigned int)(rnd() % NCPU);
		mutate(&copy[i], &len[i], i == 0);
	}
	for (i = 0; i < nfiles; i++) {
		char path[512];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, copy[i], len[i]) != (ssize_t)len[i])
			ret = -EIO;
		if (fd >= 0)
			close(fd);
		free(copy[i]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	char path[512];
	unsigned long n, i;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: ctf_corpus OUT N SEED\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	seed = strtoull(argv[3], NULL, 0) | 1;
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/base", argv[1]);
	ret = write_base(path);
	if (!ret)
		ret = load(path);
	if (ret) {
		fprintf(stderr, "ctf_corpus: cannot write the base trace %s: %s\n", path, strerror(-ret));
		return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/case_%05lu", argv[1], i);
		ret = write_case(path);
		if (ret) {
			fprintf(stderr, "ctf_corpus: %s: %s\n", path, strerror(-ret));
			return 1;
		}
	}
	printf("%lu cases in %s\n", n, argv[1]);
	return 0;
}
