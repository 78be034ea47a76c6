// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder (lib/trace/record.c): synthetic trace sub-buffers, as the module's ring delivers them,
 * into a CTF trace, read back with the CTF reader (and with babeltrace2 by the VM tests): each
 * event with its values narrowed to their types, every loss in the packets' discarded counts
 * (before a CPU's first packet and after its last), the size cap counted as lost, bad records
 * refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/ctf_read.h>
#include <kinstr/record.h>
#include "check.h"

static unsigned char buf[8192];

/* A sub-buffer of cpu: n records of event ev (value v, then a 16-byte string if str). */
static const struct kr_subbuf_hdr *subbuf(unsigned int cpu, unsigned int n, unsigned int ev, uint64_t v, bool str,
					  uint64_t lost_full, uint64_t ts)
{
	struct kr_subbuf_hdr *h = (void *)buf;
	unsigned char *p = buf + sizeof(*h);
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	h->magic = KR_SUBBUF_MAGIC;
	h->cpu = cpu;
	h->ts_begin = ts;
	h->ts_end = ts + 1000;
	h->lost_full = lost_full;
	for (i = 0; i < n; i++) {
		struct kinstr_trace_rec *r = (void *)p;

		r->len = sizeof(*r) + 8 + (str ? 16 : 0);
		r->event = (uint16_t)ev;
		r->pid = 100 + i;
		r->tid = 200 + i;
		r->ts = ts + 10 * (i + 1);
		snprintf(r->comm, sizeof(r->comm), "proc%u", i);
		memcpy(r + 1, &v, 8);
		if (str)
			snprintf((char *)(r + 1) + 8, 16, "s%u", i);
		p += KR_RECORD_SPAN(r->len);
	}
	h->data_size = (uint32_t)(p - buf - sizeof(*h));
	h->records = n;
	return h;
}

static const unsigned char *recs(void)
{
	return buf + sizeof(struct kr_subbuf_hdr);
}

static struct kinstr_trace_event ev[2];

static struct kinstr_ctf *writer(const char *dir)
{
	struct kinstr_ctf_opts o = { .sz = sizeof(o) };
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return NULL;
	memset(ev, 0, sizeof(ev));
	snprintf(ev[0].name, sizeof(ev[0].name), "vfs_read");
	ev[0].nvals = 1;
	snprintf(ev[0].vals[0].name, sizeof(ev[0].vals[0].name), "count");
	ev[0].vals[0].v.kind = KINSTR_VAL_REG;
	ev[0].vals[0].type = KINSTR_CTF_U32;
	snprintf(ev[1].name, sizeof(ev[1].name), "vfs_write%%return");
	ev[1].nvals = 2;
	snprintf(ev[1].vals[0].name, sizeof(ev[1].vals[0].name), "ret");
	ev[1].vals[0].v.kind = KINSTR_VAL_REG;
	ev[1].vals[0].type = KINSTR_CTF_S16;
	snprintf(ev[1].vals[1].name, sizeof(ev[1].vals[1].name), "name");
	ev[1].vals[1].v.kind = KINSTR_VAL_STR;
	ev[1].vals[1].v.size = 16;
	ev[1].vals[1].type = KINSTR_CTF_STRING;
	return kinstr_ctf__create(dir, &o);
}

static void t_events_and_losses(void)
{
	const char *dir = "build/tests/unit/record.ctf";
	struct kinstr_ctf *w = writer(dir);
	struct kinstr_recorder_opts o = { .sz = sizeof(o) };
	struct kinstr_recorder *rec = w ? kinstr_recorder__new(w, 2, ev, 2, &o) : NULL;
	struct kinstr_trace_stats st0 = { 0 }, st1 = { 0 };
	struct kinstr_rec_cpu c0, c1;
	struct kinstr_ctf_reader *rd;
	struct kinstr_ctf_event e;
	struct kinstr_why why;
	unsigned int n[2] = { 0 }, i;
	uint64_t disc[2] = { 0 };
	const struct kr_subbuf_hdr *h;
	bool narrowed = true, strings = true;

	CHECK(rec, "no recorder: %s", strerror(errno));
	if (!rec)
		return;
	/* cpu 0: 3 events whose value is wider than its u32 field */
	h = subbuf(0, 3, 0, 0x100000005ull, false, 0, 1000);
	CHECK(kinstr_recorder__subbuf(rec, 0, h, recs()) == 0, "cpu 0");
	/* cpu 1: 5 lost before its first packet, then 2 events of the other class */
	h = subbuf(1, 2, 1, (uint64_t)-2, true, 5, 2000);
	CHECK(kinstr_recorder__subbuf(rec, 1, h, recs()) == 0, "cpu 1");
	/* records that do not parse: refused, nothing written */
	h = subbuf(0, 1, 7, 1, false, 0, 3000);
	CHECK(kinstr_recorder__subbuf(rec, 0, h, recs()) == -EBADMSG, "an unknown event accepted");
	h = subbuf(0, 1, 0, 1, false, 0, 3000);
	((struct kinstr_trace_rec *)recs())->len = 4;
	CHECK(kinstr_recorder__subbuf(rec, 0, h, recs()) == -EBADMSG, "a short record accepted");
	CHECK(kinstr_recorder__subbuf(rec, 2, h, recs()) == -EINVAL, "a CPU past the last accepted");
	/* after the last sub-buffer: cpu 1 lost 3 more, cpu 0 none */
	st1.lost_full = 8;
	CHECK(kinstr_recorder__finish_cpu(rec, 0, &st0, 9000, &c0) == 0 && c0.recorded == 3 && c0.lost == 0,
	      "cpu 0: %llu recorded, %llu lost", (unsigned long long)c0.recorded, (unsigned long long)c0.lost);
	CHECK(kinstr_recorder__finish_cpu(rec, 1, &st1, 9000, &c1) == 0 && c1.recorded == 2 && c1.lost == 8,
	      "cpu 1: %llu recorded, %llu lost", (unsigned long long)c1.recorded, (unsigned long long)c1.lost);
	CHECK(ev[0].count == 3 && ev[1].count == 2, "counts %llu %llu", (unsigned long long)ev[0].count,
	      (unsigned long long)ev[1].count);
	kinstr_recorder__free(rec);
	CHECK(kinstr_ctf__close(w) == 0, "close");
	rd = kinstr_ctf_reader__open(dir, &why);
	CHECK(rd, "%s", why.msg);
	if (!rd)
		return;
	while (kinstr_ctf_reader__next(rd, &e, &why) == 1) {
		n[e.class_id & 1]++;
		if (e.class_id == (unsigned int)ev[0].class_id)
			narrowed &= e.values[3].u == 5 && e.values[0].u >= 100;
		else
			strings &= (int64_t)e.values[3].s == -2 && e.values[4].str[0] == 's';
	}
	for (i = 0; i < kinstr_ctf_reader__stream_cnt(rd); i++)
		disc[kinstr_ctf_reader__stream(rd, i)->cpu & 1] = kinstr_ctf_reader__stream(rd, i)->events_discarded;
	CHECK(n[ev[0].class_id & 1] == 3 && n[ev[1].class_id & 1] == 2, "read %u and %u events", n[0], n[1]);
	CHECK(narrowed, "a u32 value not narrowed");
	CHECK(strings, "an s16 or string value wrong");
	CHECK(disc[0] == 0 && disc[1] == 8, "discarded %llu and %llu", (unsigned long long)disc[0],
	      (unsigned long long)disc[1]);
	kinstr_ctf_reader__close(rd);
}

/* The real consumer reads the first case's trace the same way. */
static void t_babeltrace2(void)
{
	FILE *f = popen("babeltrace2 build/tests/unit/record.ctf 2>&1", "r");
	char line[1024];
	unsigned int reads = 0, writes = 0, five = 0, three = 0;

	CHECK(f, "cannot run babeltrace2");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		reads += strstr(line, " vfs_read: ") && strstr(line, "count = 5 }");
		writes += strstr(line, " vfs_write%return: ") && strstr(line, "ret = -2, name = \"s");
		five += strstr(line, "discarded 5 events") != NULL;
		three += strstr(line, "discarded 3 events") != NULL;
	}
	CHECK(pclose(f) == 0, "babeltrace2 failed");
	CHECK(reads == 3 && writes == 2 && five == 1 && three == 1, "%u reads, %u writes, discarded 5: %u, 3: %u",
	      reads, writes, five, three);
}

static unsigned int stops;

static bool stop_now(void *ctx)
{
	return ++stops > 0;
}

static void t_cap_and_stop(void)
{
	const char *dir = "build/tests/unit/record-cap.ctf";
	struct kinstr_ctf *w = writer(dir);
	struct kinstr_recorder_opts o = { .sz = sizeof(o), .max_size = 2 * KINSTR_RECORD_END_RESERVE + 4096 + 1024,
					  .should_stop = stop_now };
	struct kinstr_recorder *rec = w ? kinstr_recorder__new(w, 2, ev, 2, &o) : NULL;
	struct kinstr_trace_stats st = { 0 };
	struct kinstr_rec_cpu c;
	bool first = false;
	int r = 0, i;

	CHECK(rec, "no recorder: %s", strerror(errno));
	if (!rec)
		return;
	/* until the cap: asked to stop after each sub-buffer */
	for (i = 0; i < 40 && !kinstr_recorder__capped(rec, NULL); i++) {
		r = kinstr_recorder__subbuf(rec, 0, subbuf(0, 60, 0, 1, false, 0, 1000 + 2000 * i), recs());
		CHECK(r == KINSTR_RECORD_STOP, "sub-buffer %d: %d", i, r);
	}
	CHECK(kinstr_recorder__capped(rec, &first) && first, "the cap never came (%d sub-buffers)", i);
	CHECK(kinstr_recorder__capped(rec, &first) && !first, "told twice");
	kinstr_recorder__drain(rec);
	r = kinstr_recorder__subbuf(rec, 0, subbuf(0, 10, 0, 1, false, 0, 500000), recs());
	CHECK(r == 0, "draining: %d", r);
	CHECK(kinstr_recorder__finish_cpu(rec, 0, &st, 900000, &c) == 0 && c.cut >= 70 && c.lost == c.cut &&
	      c.recorded + c.cut == 60ull * i + 10, "recorded %llu, cut %llu, lost %llu, sent %d",
	      (unsigned long long)c.recorded, (unsigned long long)c.cut, (unsigned long long)c.lost, 60 * i + 10);
	kinstr_recorder__free(rec);
	CHECK(kinstr_ctf__close(w) == 0, "close");
	/* a cap with no room for the end's packets */
	w = writer(dir);
	o.max_size = 2 * KINSTR_RECORD_END_RESERVE;
	errno = 0;
	CHECK(w && !kinstr_recorder__new(w, 2, ev, 2, &o) && errno == ENOSPC, "no room accepted: %s", strerror(errno));
	if (w)
		kinstr_ctf__close(w);
}

static void t_geometry(void)
{
	struct kinstr_trace_opts o = { .sz = sizeof(o) };

	CHECK(kinstr_trace_opts__geometry(&o, 1 << 20, 64 << 10) == 0 && o.subbuf_size == 64 << 10 &&
	      o.num_subbufs == 16, "1M of 64K: %u x %u", o.num_subbufs, o.subbuf_size);
	CHECK(kinstr_trace_opts__geometry(&o, 1000000, 64 << 10) == 0 && o.num_subbufs == 8,
	      "a power of two that fits: %u", o.num_subbufs);
	CHECK(kinstr_trace_opts__geometry(&o, 1 << 20, 3000) == -EDOM &&
	      kinstr_trace_opts__geometry(&o, 1 << 20, 12288) == -EDOM, "a bad sub-buffer size accepted");
	CHECK(kinstr_trace_opts__geometry(&o, 4096, 4096) == -ERANGE &&
	      kinstr_trace_opts__geometry(&o, 257ull * 4096, 4096) == -ERANGE &&
	      kinstr_trace_opts__geometry(&o, 256ull * 4096, 4096) == 0 && o.num_subbufs == 256,
	      "2 to 256 sub-buffers: %u", o.num_subbufs);
}

int main(void)
{
	RUN(t_events_and_losses);
	RUN(t_babeltrace2);
	RUN(t_cap_and_stop);
	RUN(t_geometry);
	return check_done();
}
