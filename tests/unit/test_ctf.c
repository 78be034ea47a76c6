// SPDX-License-Identifier: GPL-2.0
/*
 * The CTF writer and reader (lib/trace/ctf.c, lib/traceread/metadata.c, streams.c) and `kinstr report`: traces with every
 * field type, several CPUs, many packets, compact and extended event headers and lost events
 * are read back by babeltrace2 (the real consumer) and by our reader, exactly; damaged traces
 * give clear errors and never a crash. Runs from the repository's top directory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_read.h>
#include <kinstr/report.h>
#include "check.h"

#define OFFSET_NS	1700000000123456789ll
#define HOST		"testhost"
#define NCPU		3
#define MAXV		8

static const unsigned int cpus[NCPU] = { 0, 1, 3 };	/* CPU 2 wrote nothing */
static char tmp[256];

static const struct kinstr_ctf_field f_switch[] = {
	{ .name = "prev_pid", .type = KINSTR_CTF_S32 },
	{ .name = "next_pid", .type = KINSTR_CTF_S32 },
	{ .name = "prev_comm", .type = KINSTR_CTF_CHARS, .len = 16 },
	{ .name = "prev_state", .type = KINSTR_CTF_U64, .hex = true },
	{ .name = "prio", .type = KINSTR_CTF_U8 },
};
static const struct kinstr_ctf_field f_sys[] = {
	{ .name = "nr", .type = KINSTR_CTF_U16 },
	{ .name = "a0", .type = KINSTR_CTF_U64, .hex = true },
	{ .name = "a1", .type = KINSTR_CTF_S64 },
	{ .name = "a2", .type = KINSTR_CTF_S8 },
	{ .name = "a3", .type = KINSTR_CTF_S16 },
	{ .name = "a4", .type = KINSTR_CTF_U32 },
	{ .name = "a5", .type = KINSTR_CTF_U32, .hex = true },
	{ .name = "path", .type = KINSTR_CTF_STRING },
};
static const struct kinstr_ctf_field f_late[] = {
	{ .name = "v", .type = KINSTR_CTF_U32 },
	{ .name = "tag", .type = KINSTR_CTF_CHARS, .len = 4 },
};

/*
 * No empty string: babeltrace2 2.0.x prints an empty string or char[] field as the value the
 * previous event had there (fixed upstream later); t_api_errors checks empty ones with our reader.
 */
static const char *const strs[] = { "-", "bash", "kworker/0:1H-kb", "systemd-journal", "/etc/pa\"ss",
				     "h\xc3\xa9llo w\xc3\xb6rld", "a-very-long-command-name", "x" };

struct ev {
	unsigned int cls, cpu, seq;
	uint64_t ts;
	unsigned int nv;
	union kinstr_ctf_value v[MAXV];
};

struct trace {
	struct ev *ev;
	size_t n;
	unsigned int nclasses;
	unsigned int id_switch, id_sys, id_tick, id_late;
	uint64_t discarded[NCPU], packets[NCPU], count[NCPU];
	uint64_t per_class[64];
};

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			buf = realloc(buf, cap);
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

static void fill_values(struct trace *t, struct ev *e)
{
	if (e->cls == t->id_switch) {
		e->nv = 5;
		e->v[0].s = (int32_t)rnd();
		e->v[1].s = (int32_t)(rnd() % 100000);
		e->v[2].str = strs[rnd() % 8];
		e->v[3].u = rnd();
		e->v[4].u = (uint8_t)rnd();
	} else if (e->cls == t->id_sys) {
		e->nv = 8;
		e->v[0].u = (uint16_t)rnd();
		e->v[1].u = rnd() % 7 ? rnd() : 0;
		e->v[2].s = rnd() % 5 ? (int64_t)rnd() : INT64_MIN;
		e->v[3].s = (int8_t)rnd();
		e->v[4].s = (int16_t)rnd();
		e->v[5].u = (uint32_t)rnd();
		e->v[6].u = rnd() % 3 ? (uint32_t)rnd() : 0;
		e->v[7].str = strs[rnd() % 8];
	} else if (e->cls == t->id_late) {
		e->nv = 2;
		e->v[0].u = rnd() % 4 ? (uint32_t)rnd() : UINT32_MAX;
		e->v[1].str = strs[rnd() % 8];
	} else {
		e->nv = 0;
	}
}

/*
 * Timestamps are unique over the whole trace (every delta is a non-zero multiple of 4 and the
 * k-th CPU starts at 1000 + k), so babeltrace2's time order is known.
 */
static int make_trace(const char *dir, struct trace *t, unsigned int rounds)
{
	struct kinstr_ctf_opts o = { .sz = sizeof(o), .clock_offset_ns = OFFSET_NS, .hostname = HOST,
				     .release = "6.1.0-test", .packet_align = 512 };
	struct kinstr_ctf_env env[] = { { "probe_spec", "vfs_*" }, { "kinstr_cmdline", "kinstr trace -o t" } };
	uint64_t ts[NCPU];
	struct kinstr_ctf *w;
	unsigned int r, c, i, k;
	size_t cap = 4096;
	int ret;

	memset(t, 0, sizeof(*t));
	o.env = env;
	o.env_cnt = 2;
	w = kinstr_ctf__create(dir, &o);
	if (!w)
		return -errno;
	t->id_switch = kinstr_ctf__add_class(w, "sched_switch", f_switch, 5);
	t->id_sys = kinstr_ctf__add_class(w, "syscall_entry", f_sys, 8);
	t->id_tick = kinstr_ctf__add_class(w, "tick", NULL, 0);
	for (i = 3; i < 33; i++) {	/* classes 31 and up need the extended header */
		char name[32];

		snprintf(name, sizeof(name), "filler_%u", i);
		if (kinstr_ctf__add_class(w, name, NULL, 0) != (int)i)
			return -EINVAL;
	}
	t->id_late = kinstr_ctf__add_class(w, "late", f_late, 2);
	t->nclasses = t->id_late + 1;
	if (t->id_switch != 0 || t->id_sys != 1 || t->id_tick != 2 || t->id_late != 33)
		return -EINVAL;
	t->ev = malloc(cap * sizeof(*t->ev));
	for (c = 0; c < NCPU; c++)
		ts[c] = 1000 + c;
	for (r = 0; r < rounds; r++) {
		for (c = 0; c < NCPU; c++) {
			unsigned int n = rnd() % 40;
			uint64_t begin = ts[c];

			ret = kinstr_ctf__packet_begin(w, cpus[c], begin);
			if (ret)
				return ret;
			for (i = 0; i < n; i++) {
				struct ev *e;
				uint64_t pick = rnd() % 20, d;

				if (pick < 12)
					d = rnd() % 4000;
				else if (pick < 15)
					d = (1ull << 27) - 1 - rnd() % 4000;	/* compact, near the limit */
				else if (pick < 16)
					d = 1ull << 27;				/* the first extended delta */
				else if (pick < 19)
					d = (1ull << 27) + rnd() % (1ull << 34);
				else
					d = 4;
				d &= ~3ull;
				if (t->n == cap) {
					cap *= 2;
					t->ev = realloc(t->ev, cap * sizeof(*t->ev));
				}
				e = &t->ev[t->n];
				memset(e, 0, sizeof(*e));
				ts[c] += d ? d : 4;
				e->ts = ts[c];
				e->cpu = cpus[c];
				e->seq = t->n;
				k = rnd() % 10;
				e->cls = k < 4 ? t->id_switch : k < 7 ? t->id_sys : k < 8 ? t->id_tick :
					 k < 9 ? t->id_late : 3 + rnd() % 30;
				fill_values(t, e);
				ret = kinstr_ctf__event(w, cpus[c], e->cls, e->ts, e->v);
				if (ret)
					return ret;
				t->per_class[e->cls]++;
				t->count[c]++;
				t->n++;
			}
			ts[c] += 4 * (rnd() % 1000);
			if (r && rnd() % 3 == 0)
				t->discarded[c] += 1 + rnd() % 50;
			ret = kinstr_ctf__packet_end(w, cpus[c], ts[c], t->discarded[c]);
			if (ret)
				return ret;
			t->packets[c]++;
			ts[c] += 4 * (1 + rnd() % 100);
		}
	}
	return kinstr_ctf__close(w);
}

static int by_ts(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int by_cpu_seq(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const struct kinstr_ctf_field *fields_of(const struct trace *t, unsigned int cls, unsigned int *n)
{
	if (cls == t->id_switch)
		return *n = 5, f_switch;
	if (cls == t->id_sys)
		return *n = 8, f_sys;
	if (cls == t->id_late)
		return *n = 2, f_late;
	*n = 0;
	return NULL;
}

static const char *class_name(const struct trace *t, unsigned int cls, char *buf)
{
	if (cls == t->id_switch)
		return "sched_switch";
	if (cls == t->id_sys)
		return "syscall_entry";
	if (cls == t->id_tick)
		return "tick";
	if (cls == t->id_late)
		return "late";
	sprintf(buf, "filler_%u", cls);
	return buf;
}

/* babeltrace2 --clock-cycles --no-delta's line for e */
static void bt_line(const struct trace *t, const struct ev *e, char *out, size_t size)
{
	const struct kinstr_ctf_field *f;
	unsigned int n, i;
	char nb[32];
	int o;

	f = fields_of(t, e->cls, &n);
	o = snprintf(out, size, "[%020" PRIu64 "] " HOST " %s: { cpu_id = %u }, {", e->ts,
		     class_name(t, e->cls, nb), e->cpu);
	for (i = 0; i < n; i++) {
		o += snprintf(out + o, size - o, "%s %s = ", i ? "," : "", f[i].name);
		if (f[i].type == KINSTR_CTF_STRING || f[i].type == KINSTR_CTF_CHARS) {
			size_t len = f[i].type == KINSTR_CTF_CHARS ? strnlen(e->v[i].str, f[i].len) : strlen(e->v[i].str);
			const char *s = e->v[i].str;

			out[o++] = '"';
			for (; len; len--, s++) {
				if (*s == '"')
					out[o++] = '\\';
				out[o++] = *s;
			}
			out[o++] = '"';
			out[o] = 0;
		} else if (f[i].hex) {
			o += snprintf(out + o, size - o, "0x%" PRIX64, e->v[i].u);
		} else if (f[i].type >= KINSTR_CTF_S8) {
			o += snprintf(out + o, size - o, "%" PRId64, e->v[i].s);
		} else {
			o += snprintf(out + o, size - o, "%" PRIu64, e->v[i].u);
		}
	}
	snprintf(out + o, size - o, " }");
}

static struct trace tr;
static char tdir[300];
static int made = -1;

static void t_write(void)
{
	unsigned int c;
	uint64_t total = 0;

	snprintf(tdir, sizeof(tdir), "%s/t", tmp);
	made = make_trace(tdir, &tr, 60);
	CHECK(made == 0, "make_trace: %s", strerror(-made));
	for (c = 0; c < NCPU; c++)
		total += tr.count[c];
	CHECK(total == tr.n && tr.n > 1000, "%zu events", tr.n);
	CHECK(access("/nonexistent", F_OK) != 0, "sanity");
	{
		char p[400];

		snprintf(p, sizeof(p), "%s/stream_2", tdir);
		CHECK(access(p, F_OK) != 0, "a stream file for a CPU that wrote nothing");
		snprintf(p, sizeof(p), "%s/.metadata.tmp", tdir);
		CHECK(access(p, F_OK) != 0, "the temporary metadata file is left");
	}
}

static void t_babeltrace2(void)
{
	char out[400], errf[400], want[4096];
	char *text, *errtext, *p, *save = NULL;
	uint64_t discarded = 0, want_discarded = 0;
	size_t n = 0;
	int rc;
	unsigned int c;

	if (made)
		SKIP("no trace");
	if (access("/usr/bin/babeltrace2", X_OK))
		SKIP("babeltrace2 not installed (Debian package babeltrace2)");
	snprintf(out, sizeof(out), "%s/bt.out", tmp);
	snprintf(errf, sizeof(errf), "%s/bt.err", tmp);
	rc = sh("babeltrace2 --clock-cycles --no-delta %s >%s 2>%s", tdir, out, errf);
	CHECK(rc == 0, "babeltrace2 exit %d", rc);
	text = slurp(out, NULL);
	errtext = slurp(errf, NULL);
	CHECK(text && errtext, "no output");
	if (!text || !errtext)
		return;
	qsort(tr.ev, tr.n, sizeof(*tr.ev), by_ts);
	for (p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save), n++) {
		if (n >= tr.n) {
			CHECK(0, "extra line %s", p);
			break;
		}
		bt_line(&tr, &tr.ev[n], want, sizeof(want));
		if (strcmp(p, want)) {
			CHECK(0, "event %zu:\n  got  %s\n  want %s", n, p, want);
			break;
		}
	}
	CHECK(n == tr.n, "babeltrace2 printed %zu events, %zu written", n, tr.n);
	/* stderr: only the discarded-events warnings, adding up to the final totals */
	save = NULL;
	for (p = strtok_r(errtext, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		unsigned long long k;

		if (sscanf(p, "WARNING: Tracer discarded %llu events between", &k) == 1)
			discarded += k;
		else
			CHECK(0, "babeltrace2 stderr: %s", p);
	}
	for (c = 0; c < NCPU; c++)
		want_discarded += tr.discarded[c];
	CHECK(discarded == want_discarded && want_discarded > 0, "babeltrace2 saw %" PRIu64 " discarded, wrote %" PRIu64,
	      discarded, want_discarded);
	free(text);
	free(errtext);
	/* the details sink agrees on the clock and the environment */
	rc = sh("babeltrace2 -c sink.text.details %s 2>&1 | grep -q 'Origin is Unix epoch: Yes'", tdir);
	CHECK(rc == 0, "the clock's origin is not the Unix epoch");
	rc = sh("babeltrace2 -c sink.text.details %s 2>&1 | grep -q 'probe_spec: vfs_\\*'", tdir);
	CHECK(rc == 0, "the caller's env entry is missing");
}

static void t_reader(void)
{
	struct kinstr_why why;
	char nb[32];
	struct kinstr_ctf_reader *r;
	struct kinstr_ctf_event ev;
	size_t n = 0;
	unsigned int c, i;
	int ret;

	if (made)
		SKIP("no trace");
	qsort(tr.ev, tr.n, sizeof(*tr.ev), by_cpu_seq);
	r = kinstr_ctf_reader__open(tdir, &why);
	CHECK(r, "open: %s", why.msg);
	if (!r)
		return;
	CHECK(kinstr_ctf_reader__class_cnt(r) == tr.nclasses, "%u classes", kinstr_ctf_reader__class_cnt(r));
	for (i = 0; i < tr.nclasses; i++) {
		const struct kinstr_ctf_class *k = kinstr_ctf_reader__class(r, i);
		const struct kinstr_ctf_field *f;
		unsigned int nf, j;

		f = fields_of(&tr, i, &nf);
		CHECK(k && !strcmp(k->name, class_name(&tr, i, nb)) && k->nfields == nf, "class %u", i);
		for (j = 0; k && j < nf && j < k->nfields; j++)
			CHECK(!strcmp(k->fields[j].name, f[j].name) && k->fields[j].type == f[j].type &&
			      k->fields[j].len == f[j].len && k->fields[j].hex == f[j].hex, "class %u field %u", i, j);
	}
	CHECK(kinstr_ctf_reader__stream_cnt(r) == NCPU, "%u streams", kinstr_ctf_reader__stream_cnt(r));
	for (c = 0; c < NCPU && c < kinstr_ctf_reader__stream_cnt(r); c++) {
		const struct kinstr_ctf_stream_info *s = kinstr_ctf_reader__stream(r, c);

		CHECK(s->cpu == cpus[c] && s->packets == tr.packets[c] && s->events_discarded == tr.discarded[c],
		      "stream %u: cpu %u packets %" PRIu64 " discarded %" PRIu64, c, s->cpu, s->packets,
		      s->events_discarded);
	}
	CHECK(kinstr_ctf_reader__clock_offset_ns(r) == OFFSET_NS, "clock offset %" PRId64,
	      kinstr_ctf_reader__clock_offset_ns(r));
	CHECK(!strcmp(kinstr_ctf_reader__clock_name(r), "monotonic"), "clock %s", kinstr_ctf_reader__clock_name(r));
	CHECK(kinstr_ctf_reader__env(r, "hostname") && !strcmp(kinstr_ctf_reader__env(r, "hostname"), HOST), "hostname");
	CHECK(kinstr_ctf_reader__env(r, "kinstr_cmdline") &&
	      !strcmp(kinstr_ctf_reader__env(r, "kinstr_cmdline"), "kinstr trace -o t"), "env");
	CHECK(kinstr_ctf_reader__env(r, "domain") && !strcmp(kinstr_ctf_reader__env(r, "domain"), "kernel"), "domain");
	while ((ret = kinstr_ctf_reader__next(r, &ev, &why)) == 1) {
		const struct ev *e = &tr.ev[n];
		const struct kinstr_ctf_field *f;
		unsigned int nf, j;

		if (n >= tr.n) {
			CHECK(0, "more events than written");
			break;
		}
		f = fields_of(&tr, e->cls, &nf);
		if (ev.class_id != e->cls || ev.cpu != e->cpu || ev.ts != e->ts || ev.nvalues != nf) {
			CHECK(0, "event %zu: class %u cpu %u ts %" PRIu64 ", wrote class %u cpu %u ts %" PRIu64, n,
			      ev.class_id, ev.cpu, ev.ts, e->cls, e->cpu, e->ts);
			break;
		}
		for (j = 0; j < nf; j++) {
			bool same = f[j].type == KINSTR_CTF_STRING ? !strcmp(ev.values[j].str, e->v[j].str) :
				    f[j].type == KINSTR_CTF_CHARS ? strlen(ev.values[j].str) ==
					strnlen(e->v[j].str, f[j].len) && !strncmp(ev.values[j].str, e->v[j].str, f[j].len) :
				    ev.values[j].u == e->v[j].u;

			CHECK(same, "event %zu field %s", n, f[j].name);
		}
		n++;
	}
	CHECK(ret == 0, "next: %s", why.msg);
	CHECK(n == tr.n, "read %zu events, wrote %zu", n, tr.n);
	kinstr_ctf_reader__close(r);
}

static void t_headers(void)
{
	/* the writer picks compact headers when it can, extended when it must, and wraps right */
	struct kinstr_ctf_opts o = { .sz = sizeof(o), .clock_offset_ns = 1, .packet_align = 8, .hostname = HOST };
	const uint64_t ts[] = { (1ull << 27) - 10, (1ull << 27) + 5, (2ull << 27) + 4, (3ull << 27) + 4, 5ull << 40 };
	struct kinstr_why why;
	char dir[300], path[400];
	struct kinstr_ctf_reader *r;
	struct kinstr_ctf_event ev;
	struct kinstr_ctf *w;
	uint8_t *b;
	size_t len, i;

	snprintf(dir, sizeof(dir), "%s/h", tmp);
	w = kinstr_ctf__create(dir, &o);
	CHECK(w, "create: %s", strerror(errno));
	if (!w)
		return;
	CHECK(kinstr_ctf__add_class(w, "e", NULL, 0) == 0, "add_class");
	CHECK(kinstr_ctf__packet_begin(w, 0, 100) == 0, "packet_begin");
	CHECK(kinstr_ctf__add_class(w, "too_late", NULL, 0) == -EBUSY, "add_class after a packet");
	for (i = 0; i < 5; i++)
		CHECK(kinstr_ctf__event(w, 0, 0, ts[i], NULL) == 0, "event %zu", i);
	CHECK(kinstr_ctf__event(w, 0, 0, 7, NULL) == -ERANGE, "time went backwards");
	CHECK(kinstr_ctf__event(w, 0, 1, ts[4], NULL) == -EINVAL, "unknown class");
	CHECK(kinstr_ctf__event(w, 1, 0, ts[4], NULL) == -EINVAL, "no packet on cpu 1");
	CHECK(kinstr_ctf__packet_begin(w, 0, 100) == -EBUSY, "packet inside a packet");
	CHECK(kinstr_ctf__packet_end(w, 0, 3, 0) == -ERANGE, "packet ends before its last event");
	CHECK(kinstr_ctf__packet_end(w, 0, ts[4], 0) == 0, "packet_end");
	CHECK(kinstr_ctf__packet_begin(w, 0, 99) == -ERANGE, "packet begins before the previous one ended");
	CHECK(kinstr_ctf__close(w) == 0, "close");
	snprintf(path, sizeof(path), "%s/stream_0", dir);
	b = (uint8_t *)slurp(path, &len);
	/* 76 bytes of header and context; compact (4 bytes) x3, extended (13) x2; padded to 8 */
	CHECK(b && len == 120, "stream is %zu bytes", len);
	if (b && len == 120) {
		CHECK(b[76] == (((1u << 27) - 10) & 7) << 5, "first event: compact");
		CHECK((b[80] & 31) == 0 && (b[84] & 31) == 0, "second and third: compact (the third wraps)");
		CHECK(b[88] == 31 && b[101] == 31, "fourth (delta 2^27) and fifth: extended");
		CHECK(b[76 - 52 + 16] == 114 * 8 % 256 && b[76 - 52 + 24] == (120 * 8) % 256, "content/packet size");
	}
	free(b);
	r = kinstr_ctf_reader__open(dir, &why);
	CHECK(r, "open: %s", why.msg);
	for (i = 0; r && kinstr_ctf_reader__next(r, &ev, &why) == 1; i++)
		CHECK(i < 5 && ev.ts == ts[i], "event %zu ts %" PRIu64, i, ev.ts);
	CHECK(i == 5, "%zu events", i);
	kinstr_ctf_reader__close(r);
	if (!access("/usr/bin/babeltrace2", X_OK)) {
		char cmd[1200], *out;

		snprintf(path, sizeof(path), "%s/h.out", tmp);
		snprintf(cmd, sizeof(cmd), "babeltrace2 --clock-cycles --no-delta %s >%s 2>&1", dir, path);
		CHECK(system(cmd) == 0, "babeltrace2 failed");
		out = slurp(path, NULL);
		CHECK(out && !strcmp(out, "[00000000000134217718] " HOST " e: { cpu_id = 0 }, { }\n[00000000000134217733] " HOST " e: { cpu_id = 0 }, { }\n"
				   "[00000000000268435460] " HOST " e: { cpu_id = 0 }, { }\n[00000000000402653188] " HOST " e: { cpu_id = 0 }, { }\n"
				   "[00000005497558138880] " HOST " e: { cpu_id = 0 }, { }\n"), "babeltrace2 printed:\n%s", out);
		free(out);
	}
}

static void t_api_errors(void)
{
	struct kinstr_ctf_opts o = { .sz = sizeof(o), .clock_offset_ns = 1 };
	struct kinstr_ctf_field bad[] = { { .name = "1x", .type = KINSTR_CTF_U8 } }, dup[] = { { .name = "a", .type = KINSTR_CTF_U8 }, { .name = "a", .type = KINSTR_CTF_U8 } };
	struct kinstr_ctf_field nolen[] = { { .name = "c", .type = KINSTR_CTF_CHARS } };
	struct kinstr_ctf_field chars[] = { { .name = "c", .type = KINSTR_CTF_CHARS, .len = 3 },
					    { .name = "s", .type = KINSTR_CTF_STRING } };
	struct kinstr_ctf_env env = { "hostname", "x" };
	struct kinstr_why why;
	char dir[300];
	struct kinstr_ctf_reader *r;
	struct kinstr_ctf_event ev;
	struct kinstr_ctf *w;

	errno = 0;
	CHECK(!kinstr_ctf__create(tdir, &o) && errno == EEXIST, "create in a full directory: %s", strerror(errno));
	snprintf(dir, sizeof(dir), "%s/e", tmp);
	mkdir(dir, 0755);	/* an empty directory is fine */
	o.env = &env;
	o.env_cnt = 1;
	CHECK(!kinstr_ctf__create(dir, &o) && errno == EINVAL, "an env key kinstr writes itself");
	o.env_cnt = 0;
	o.packet_align = 12;
	CHECK(!kinstr_ctf__create(dir, &o) && errno == EINVAL, "packet_align 12");
	o.packet_align = 0;
	w = kinstr_ctf__create(dir, &o);
	CHECK(w, "create in an empty directory: %s", strerror(errno));
	if (!w)
		return;
	CHECK(kinstr_ctf__add_class(w, "x", bad, 1) == -EINVAL, "field name 1x");
	CHECK(kinstr_ctf__add_class(w, "x", dup, 2) == -EINVAL, "two fields named a");
	CHECK(kinstr_ctf__add_class(w, "x", nolen, 1) == -EINVAL, "char array without a length");
	CHECK(kinstr_ctf__add_class(w, "a \"quoted\" name", NULL, 0) == -EINVAL, "quote in a class name");
	CHECK(kinstr_ctf__add_class(w, "ok", dup, 1) == 0, "a good class");
	CHECK(kinstr_ctf__add_class(w, "chars", chars, 2) == 1, "a char[3] class");
	CHECK(kinstr_ctf__packet_begin(w, 70000, 0) == -EINVAL, "cpu 70000");
	/* the metadata is there from the first packet on: a killed writer leaves a readable trace */
	CHECK(kinstr_ctf__packet_begin(w, 2, 10) == 0, "packet_begin");
	r = kinstr_ctf_reader__open(dir, &why);
	CHECK(r, "mid-way open: %s", why.msg);
	CHECK(r && kinstr_ctf_reader__next(r, &ev, &why) == 0, "an open packet is not in the file yet");
	kinstr_ctf_reader__close(r);
	/* close ends the open packet */
	CHECK(kinstr_ctf__event(w, 2, 0, 20, (union kinstr_ctf_value[]){ { .u = 7 } }) == 0, "event");
	CHECK(kinstr_ctf__event(w, 2, 1, 21, (union kinstr_ctf_value[]){ { .str = "" }, { .str = "" } }) == 0,
	      "empty strings");
	CHECK(kinstr_ctf__event(w, 2, 1, 22, (union kinstr_ctf_value[]){ { .str = "abcdef" }, { .str = NULL } }) == 0,
	      "long char[3], NULL string");
	CHECK(kinstr_ctf__close(w) == 0, "close");
	r = kinstr_ctf_reader__open(dir, &why);
	CHECK(r && kinstr_ctf_reader__next(r, &ev, &why) == 1 && ev.ts == 20 && ev.cpu == 2 &&
	      ev.values[0].u == 7, "the event of the packet close ended");
	CHECK(r && kinstr_ctf_reader__next(r, &ev, &why) == 1 && !strcmp(ev.values[0].str, "") &&
	      !strcmp(ev.values[1].str, ""), "empty");
	CHECK(r && kinstr_ctf_reader__next(r, &ev, &why) == 1 && !strcmp(ev.values[0].str, "abc") &&
	      !strcmp(ev.values[1].str, ""), "cut");
	CHECK(r && kinstr_ctf_reader__next(r, &ev, &why) == 0, "end");
	kinstr_ctf_reader__close(r);
}

static int run_capture(const char *cmd, char **out, char **errout)
{
	char o[400], e[400];
	int rc;

	snprintf(o, sizeof(o), "%s/cmd.out", tmp);
	snprintf(e, sizeof(e), "%s/cmd.err", tmp);
	rc = sh("%s >%s 2>%s", cmd, o, e);
	*out = slurp(o, NULL);
	*errout = slurp(e, NULL);
	return rc;
}

static void t_report(void)
{
	char cmd[600], want[300], *out = NULL, *err = NULL;
	uint64_t total = 0, lost = 0, first = UINT64_MAX, last = 0;
	unsigned int c;
	size_t i;
	int rc;

	if (made)
		SKIP("no trace");
	if (access("build/kinstr", X_OK))
		SKIP("build/kinstr not built");
	for (i = 0; i < tr.n; i++) {
		first = tr.ev[i].ts < first ? tr.ev[i].ts : first;
		last = tr.ev[i].ts > last ? tr.ev[i].ts : last;
	}
	for (c = 0; c < NCPU; c++) {
		total += tr.count[c];
		lost += tr.discarded[c];
	}
	snprintf(cmd, sizeof(cmd), "build/kinstr report --json %s", tdir);
	rc = run_capture(cmd, &out, &err);
	CHECK(rc == 0 && out && err && !*err, "exit %d, stderr %s", rc, err);
	if (rc || !out)
		goto text;
	snprintf(want, sizeof(want), "\"events\":%" PRIu64 ",\"events_lost\":%" PRIu64 ",\"first_ns\":%" PRIu64
		 ",\"last_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64, total, lost, first, last, last - first);
	CHECK(strstr(out, want), "no '%s' in %s", want, out);
	snprintf(want, sizeof(want), "{\"probe\":\"sched_switch\",\"id\":0,\"events\":%" PRIu64 "}", tr.per_class[0]);
	CHECK(strstr(out, want), "no '%s' in %s", want, out);
	snprintf(want, sizeof(want), "{\"probe\":\"late\",\"id\":33,\"events\":%" PRIu64 "}", tr.per_class[33]);
	CHECK(strstr(out, want), "no '%s' in %s", want, out);
	for (c = 0; c < NCPU; c++) {
		snprintf(want, sizeof(want), "{\"cpu\":%u,\"file\":\"stream_%u\",\"packets\":%" PRIu64 ",\"events\":%" PRIu64
			 ",\"events_lost\":%" PRIu64 "}", cpus[c], cpus[c], tr.packets[c], tr.count[c], tr.discarded[c]);
		CHECK(strstr(out, want), "no '%s' in %s", want, out);
	}
	CHECK(strstr(out, "\"clock_offset_ns\":1700000000123456789"), "clock offset");
	if (!access("/usr/bin/python3", X_OK)) {
		snprintf(cmd, sizeof(cmd), "build/kinstr report --json %s | python3 -c 'import json,sys; json.load(sys.stdin)'",
			 tdir);
		CHECK(sh("%s", cmd) == 0, "--json output is not one JSON object");
	}
text:
	free(out);
	free(err);
	snprintf(cmd, sizeof(cmd), "build/kinstr report %s", tdir);
	rc = run_capture(cmd, &out, &err);
	CHECK(rc == 0 && out, "exit %d: %s", rc, err);
	snprintf(want, sizeof(want), "events:      %" PRIu64 "\nevents lost: %" PRIu64 "\n", total, lost);
	CHECK(out && strstr(out, want), "no '%s' in %s", want, out);
	CHECK(out && strstr(out, "realtime 1700000000.1234"), "realtime: %s", out);
	free(out);
	free(err);
	rc = run_capture("build/kinstr report --help", &out, &err);
	CHECK(rc == 0 && out && strstr(out, "usage: kinstr report [--json] DIR"), "--help");
	free(out);
	free(err);
}

/* The HTML report's time line of the trace: exact counts per CPU and class, at most max events drawn. */
static void t_timeline(void)
{
	size_t maxes[] = { 0, 7 }, m, len = 0, shown;
	uint64_t total = 0, step;
	struct kinstr_why why;
	char want[300], *out = NULL;
	unsigned int c;
	FILE *f;
	int r;

	if (made)
		SKIP("no trace");
	for (c = 0; c < NCPU; c++)
		total += tr.count[c];
	for (m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		f = open_memstream(&out, &len);
		r = kinstr_report__trace_json(f, tdir, "t", maxes[m], &why);
		fclose(f);
		CHECK(r == 0, "max %zu: %d %s", maxes[m], r, why.msg);
		step = maxes[m] && total > maxes[m] ? (total + maxes[m] - 1) / maxes[m] : 1;
		shown = (size_t)((total + step - 1) / step);
		snprintf(want, sizeof(want), "\"events\":%" PRIu64 ",\"step\":%" PRIu64 ",", total, step);
		CHECK(strstr(out, want), "no '%s' in %.300s", want, out);
		snprintf(want, sizeof(want), "],\"shown\":%zu}}", shown);
		CHECK(strstr(out, want), "max %zu: no '%s'", maxes[m], want);
		CHECK(!maxes[m] || shown <= maxes[m], "%zu shown of at most %zu", shown, maxes[m]);
		for (c = 0; c < NCPU; c++) {
			snprintf(want, sizeof(want), "{\"cpu\":%u,\"events\":%" PRIu64 ",\"lost\":%" PRIu64 "}", cpus[c],
				 tr.count[c], tr.discarded[c]);
			CHECK(strstr(out, want), "no '%s'", want);
		}
		CHECK(!strstr(out, "{\"cpu\":2,"), "CPU 2 wrote nothing, yet has a lane");
		snprintf(want, sizeof(want), "{\"name\":\"sched_switch\",\"events\":%" PRIu64 "}", tr.per_class[0]);
		CHECK(strstr(out, want), "no '%s'", want);
		CHECK(!strchr(out, '<'), "a '<' inside what goes in <script>");
		free(out);
		out = NULL;
	}
	f = open_memstream(&out, &len);
	r = kinstr_report__trace_json(f, "/nonexistent-kinstr-trace", "t", 0, &why);
	fclose(f);
	CHECK(r < 0 && strstr(why.msg, "/nonexistent-kinstr-trace"), "a missing trace: %d '%s'", r, why.msg);
	free(out);
}

/* A copy of the trace in tmp/NAME. */
static void copy_trace(const char *name, char *dir, size_t size)
{
	snprintf(dir, size, "%s/%s", tmp, name);
	sh("rm -rf %s && cp -r %s %s", dir, tdir, dir);
}

static void expect_report_error(const char *dir, const char *want)
{
	char cmd[600], *out = NULL, *err = NULL;
	int rc;

	snprintf(cmd, sizeof(cmd), "build/kinstr report %s", dir);
	rc = run_capture(cmd, &out, &err);
	CHECK(rc == 1 && err && !strncmp(err, "kinstr: ", 8) && strstr(err, want),
	      "exit %d, stderr '%s', want '%s'", rc, err ? err : "", want);
	free(out);
	free(err);
}

static void t_report_errors(void)
{
	char dir[400], path[500], want[1024];
	struct stat st;
	size_t len;
	char *m;

	if (made)
		SKIP("no trace");
	if (access("build/kinstr", X_OK))
		SKIP("build/kinstr not built");
	copy_trace("trunc", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/stream_1", dir);
	stat(path, &st);
	/* cut the last packet short: at least one 512-byte packet is cut */
	CHECK(truncate(path, st.st_size - 300) == 0, "truncate");
	expect_report_error(dir, "stream_1: truncated packet at offset");
	snprintf(want, sizeof(want), "%s/stream_1: truncated packet at offset", dir);
	expect_report_error(dir, want);
	CHECK(truncate(path, 30) == 0, "truncate");
	expect_report_error(dir, "stream_1: truncated packet header at offset 0 (30 bytes left)");

	copy_trace("nometa", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/metadata", dir);
	unlink(path);
	snprintf(want, sizeof(want), "%s: no metadata", dir);
	expect_report_error(dir, want);

	copy_trace("badmeta", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/metadata", dir);
	m = slurp(path, &len);
	if (m) {
		char *p = strstr(m, "minor = 8;");

		if (p)
			p[8] = '9';
		spit(path, m, len);
		snprintf(want, sizeof(want), "%s/metadata: not a CTF 1.8 trace kinstr can read", dir);
		expect_report_error(dir, want);
		spit(path, "hello\n", 6);
		expect_report_error(dir, want);
		spit(path, m, len / 2);
		expect_report_error(dir, want);
		free(m);
	}

	copy_trace("badmagic", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/stream_3", dir);
	m = slurp(path, &len);
	if (m && len > 1024) {
		size_t off = (m[48] & 0xff) / 8 + (m[49] & 0xff) * 32 + (m[50] & 0xff) * 8192;	/* packet_size */

		m[off] ^= 0xff;
		spit(path, m, len);
		snprintf(want, sizeof(want), "stream_3: bad packet magic 0xc1fc1f3e at offset %zu", off);
		expect_report_error(dir, want);
	}
	free(m);
	expect_report_error("/nonexistent-trace", "/nonexistent-trace: No such file or directory");
}

/* Feed damaged copies to the reader: it must end with an error or cleanly, never crash. */
static void t_fuzz(void)
{
	struct kinstr_why why;
	char dir[400], path[500], *meta, *stream;
	size_t mlen, slen, iter;
	unsigned int ok = 0, failed = 0;

	if (made)
		SKIP("no trace");
	copy_trace("fuzz", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/metadata", tdir);
	meta = slurp(path, &mlen);
	snprintf(path, sizeof(path), "%s/stream_0", tdir);
	stream = slurp(path, &slen);
	CHECK(meta && stream && slen > 2048, "inputs");
	if (!meta || !stream || slen <= 2048)
		return;
	for (iter = 0; iter < 3000; iter++) {
		char *m = malloc(mlen + 1), *s = malloc(slen + 1);
		size_t ml = mlen, sl = slen, k, n;
		struct kinstr_ctf_reader *r;
		struct kinstr_ctf_event ev;
		int ret;

		memcpy(m, meta, mlen);
		memcpy(s, stream, slen);
		switch (iter % 6) {
		case 0: sl = rnd() % slen; break;				/* truncated stream */
		case 1: ml = rnd() % mlen; break;				/* truncated metadata */
		case 2: m[rnd() % mlen] = " {};=:\"_0a9x[]<>/*"[rnd() % 18]; break;	/* metadata token damage */
		default:							/* stream byte damage */
			n = 1 + rnd() % 8;
			for (k = 0; k < n; k++) {
				size_t at = iter % 6 == 3 ? rnd() % 1024 : rnd() % slen;

				s[at] = rnd() % 4 ? (char)rnd() : (char)(s[at] ^ (1 << (rnd() % 8)));
			}
		}
		snprintf(path, sizeof(path), "%s/metadata", dir);
		spit(path, m, ml);
		snprintf(path, sizeof(path), "%s/stream_0", dir);
		spit(path, s, sl);
		r = kinstr_ctf_reader__open(dir, &why);
		if (!r) {
			CHECK(why.msg[0] && strstr(why.msg, dir), "iteration %zu: error without a message naming the trace", iter);
			failed++;
		} else {
			while ((ret = kinstr_ctf_reader__next(r, &ev, &why)) == 1)
				;
			CHECK(ret == 0 || (why.msg[0] && strstr(why.msg, dir)), "iteration %zu: error without a message", iter);
			ret ? failed++ : ok++;
			kinstr_ctf_reader__close(r);
		}
		free(m);
		free(s);
	}
	CHECK(failed > 100 && ok > 10, "%u damaged copies refused, %u read", failed, ok);
	free(meta);
	free(stream);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(tmp, sizeof(tmp), "%s/kinstr-ctf-XXXXXX", base);
	if (!mkdtemp(tmp)) {
		printf("FAIL mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(t_write);
	RUN(t_babeltrace2);
	RUN(t_reader);
	RUN(t_headers);
	RUN(t_api_errors);
	RUN(t_report);
	RUN(t_timeline);
	RUN(t_report_errors);
	RUN(t_fuzz);
	if (!check_failed_total)
		sh("rm -rf %s", tmp);
	else
		printf("# trace files kept in %s\n", tmp);
	return check_done();
}
