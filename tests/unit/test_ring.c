// SPDX-License-Identifier: GPL-2.0
/*
 * The ring buffer (ring/ring.c) on the host: unit cases, then a multi-threaded stress test. Each writer
 * thread is a "CPU" owning one buffer; SIGUSR1 (sent by a kicker thread at a high rate, and raised by the
 * writers themselves between a reserve and its commit) plays the interrupts that nest writers on the same
 * buffer; reader threads get/put sub-buffers concurrently. Every record carries (writer id, sequence,
 * timestamp, checksum). The readers check that no record is corrupted, that each writer's sequence grows in
 * buffer order, that timestamps never go back within a buffer, and at the end that
 *	records read + records lost (all causes) == records attempted, exactly.
 * KR_STRESS_MS sets each stress run's length (default 400 ms). Also built under TSan and ASan/UBSan by
 * test_ring_sanitizers.sh.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../ring/ring.h"
#include "check.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t fake_now;
static uint64_t fake_clock(void)
{
	return ++fake_now;
}

#define HDR KR_SUBBUF_HDR_SIZE

static void *xalloc(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);

	if (!p)
		abort();
	memset(p, 0x5a, n);
	return p;
}

/* ---------------- unit cases ---------------- */

/* The mmap'ed header is an ABI: offsets never change. */
static void t_abi_layout(void)
{
	CHECK(sizeof(struct kr_subbuf_hdr) == 80, "size %zu", sizeof(struct kr_subbuf_hdr));
	CHECK(offsetof(struct kr_subbuf_hdr, cpu) == 8 && offsetof(struct kr_subbuf_hdr, seq) == 16,
	      "cpu at %zu, seq at %zu", offsetof(struct kr_subbuf_hdr, cpu), offsetof(struct kr_subbuf_hdr, seq));
	CHECK(offsetof(struct kr_subbuf_hdr, ts_begin) == 24 && offsetof(struct kr_subbuf_hdr, ts_end) == 32,
	      "ts at %zu", offsetof(struct kr_subbuf_hdr, ts_begin));
	CHECK(offsetof(struct kr_subbuf_hdr, data_size) == 40 && offsetof(struct kr_subbuf_hdr, records) == 44,
	      "data_size at %zu", offsetof(struct kr_subbuf_hdr, data_size));
	CHECK(offsetof(struct kr_subbuf_hdr, lost_full) == 48 && offsetof(struct kr_subbuf_hdr, lost_nest) == 72,
	      "lost at %zu", offsetof(struct kr_subbuf_hdr, lost_full));
	CHECK(KR_RECORD_SPAN(4u) == 8 && KR_RECORD_SPAN(8u) == 8 && KR_RECORD_SPAN(9u) == 16, "record span");
}

static void t_bad_configs(void)
{
	static const struct kr_config bad[] = {
		{ 0, 1000, 4, KR_MODE_DISCARD },			/* sub-buffer not a power of two */
		{ 0, 128, 4, KR_MODE_DISCARD },				/* sub-buffer too small */
		{ 0, KR_MAX_SUBBUF_SIZE * 2u, 2, KR_MODE_DISCARD },	/* too big */
		{ 0, 4096, 3, KR_MODE_DISCARD },			/* count not a power of two */
		{ 0, 4096, 1, KR_MODE_OVERWRITE },			/* one sub-buffer */
		{ 0, 4096, 0, KR_MODE_OVERWRITE },			/* no count, no size */
		{ 0, 4096, KR_MAX_SUBBUFS * 2, KR_MODE_DISCARD },	/* too many */
		{ 0, 4096, 4, 7 },					/* mode */
		{ 8192, 4096, 4, KR_MODE_DISCARD },			/* size disagrees */
	};
	static char mem[8 * 4096] __attribute__((aligned(64)));
	static struct kr_buf b;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(kr_buf_mem_size(&bad[i]) == 0, "config %zu: mem size %zu", i, kr_buf_mem_size(&bad[i]));
		CHECK(kr_buf_init(&b, &bad[i], mem, 0) == -EINVAL, "config %zu accepted", i);
	}
	struct kr_config ok = { 16384, 4096, 0, KR_MODE_DISCARD };
	CHECK(kr_buf_mem_size(&ok) == 5 * 4096, "mem size %zu", kr_buf_mem_size(&ok));
	CHECK(kr_buf_init(&b, &ok, mem, 0) == 0, "good config refused");
	CHECK(kr_buf_init(&b, &ok, mem + 1, 0) == -EINVAL, "misaligned memory accepted");
	CHECK(kr_buf_init(&b, &ok, NULL, 0) == -EINVAL, "no memory accepted");
}

struct small {
	struct kr_buf b;
	char *mem;
};

static void small_init(struct small *s, uint32_t sb, uint32_t n, uint32_t mode)
{
	struct kr_config c = { 0, sb, n, mode };

	s->mem = xalloc(kr_buf_mem_size(&c));
	if (kr_buf_init(&s->b, &c, s->mem, 3))
		abort();
}

/* Reserve+fill+commit a record whose payload after the length word is one u32 tag. */
static int put_tagged(struct kr_buf *b, uint32_t len, uint32_t tag)
{
	struct kr_reserve_ctx c;
	int r = kr_reserve(b, &c, len, fake_clock);

	if (r)
		return r;
	if (len >= 8)
		memcpy((char *)c.data + 4, &tag, 4);
	kr_commit(b, &c);
	return 0;
}

/* Drain a buffer: tags of all records in order into out (max n), returns the count or -1 on bad layout. */
static int drain_tags(struct kr_buf *b, uint32_t *out, int max, int *subbufs)
{
	uint64_t seq;
	uint32_t phys;
	int k = 0;

	*subbufs = 0;
	while (kr_get_subbuf(b, &seq, &phys) == 0) {
		const char *base = kr_subbuf_addr(b, phys);
		const struct kr_subbuf_hdr *h = (const void *)base;
		uint32_t off, len, recs = 0;

		if (h->magic != KR_SUBBUF_MAGIC || h->seq != seq || h->data_size > h->subbuf_size - HDR)
			return -1;
		for (off = 0; off < h->data_size; off += KR_RECORD_SPAN(len)) {
			memcpy(&len, base + HDR + off, 4);
			if (len < 4 || off + KR_RECORD_SPAN(len) > h->data_size)
				return -1;
			if (len >= 8 && k < max)
				memcpy(&out[k], base + HDR + off + 4, 4);
			k++;
			recs++;
		}
		if (recs != h->records)
			return -1;
		(*subbufs)++;
		if (kr_put_subbuf(b, seq))
			return -1;
	}
	return k;
}

static void t_too_big(void)
{
	struct small s;
	struct kr_lost l;
	uint32_t tags[4];
	int n, sbs;

	small_init(&s, 256, 2, KR_MODE_DISCARD);
	CHECK(put_tagged(&s.b, 256 - HDR + 1, 1) == -E2BIG, "record over a sub-buffer accepted");
	CHECK(put_tagged(&s.b, 100000, 1) == -E2BIG, "huge record accepted");
	CHECK(put_tagged(&s.b, 0xffffffffu, 1) == -E2BIG, "len 2^32-1 accepted");
	CHECK(put_tagged(&s.b, 3, 1) == -EINVAL, "record shorter than its length word accepted");
	CHECK(put_tagged(&s.b, 256 - HDR, 7) == 0, "record filling a sub-buffer exactly refused");
	kr_lost(&s.b, &l);
	CHECK(l.big == 3 && l.full == 0 && l.nest == 0 && l.records == 1, "lost big %lu full %lu nest %lu rec %lu",
	      (unsigned long)l.big, (unsigned long)l.full, (unsigned long)l.nest, (unsigned long)l.records);
	/* Filled exactly: delivered without a switch. */
	n = drain_tags(&s.b, tags, 4, &sbs);
	CHECK(n == 1 && sbs == 1 && tags[0] == 7, "read %d records in %d sub-buffers", n, sbs);
	free(s.mem);
}

static void t_nest_limit(void)
{
	struct small s;
	struct kr_reserve_ctx c[KR_MAX_NEST + 1];
	struct kr_lost l;
	uint32_t tags[8];
	int i, n, sbs;

	small_init(&s, 4096, 2, KR_MODE_DISCARD);
	for (i = 0; i < KR_MAX_NEST; i++) {
		CHECK(kr_reserve(&s.b, &c[i], 8, fake_clock) == 0, "level %d refused", i);
		memcpy((char *)c[i].data + 4, &i, 4);
	}
	CHECK(kr_reserve(&s.b, &c[KR_MAX_NEST], 8, fake_clock) == -EBUSY, "level %d accepted", KR_MAX_NEST);
	/* Commits out of order: the innermost first, as nested writers do, but also a middle one. */
	kr_commit(&s.b, &c[3]);
	kr_commit(&s.b, &c[1]);
	kr_commit(&s.b, &c[2]);
	CHECK(put_tagged(&s.b, 8, 4) == 0, "reserve while one is still open refused");
	n = drain_tags(&s.b, tags, 8, &sbs);
	CHECK(n == 0, "sub-buffer delivered with an uncommitted record (%d records)", n);
	kr_commit(&s.b, &c[0]);
	kr_switch(&s.b, fake_clock);
	n = drain_tags(&s.b, tags, 8, &sbs);
	CHECK(n == 5 && sbs == 1, "read %d records in %d sub-buffers", n, sbs);
	for (i = 0; i < n && i < 5; i++)
		CHECK(tags[i] == (uint32_t)i, "record %d has tag %u", i, tags[i]);
	kr_lost(&s.b, &l);
	CHECK(l.nest == 1 && l.records == 5, "lost nest %lu, records %lu", (unsigned long)l.nest,
	      (unsigned long)l.records);
	free(s.mem);
}

/* Discard: with no reader, only num_subbufs sub-buffers fill; the rest is lost_full, and the reader gets
 * the oldest records. */
static void t_discard_full(void)
{
	struct small s;
	struct kr_lost l;
	static uint32_t tags[4096];
	int i, n, sbs, ok = 0;

	small_init(&s, 256, 4, KR_MODE_DISCARD);
	for (i = 0; i < 1000; i++)
		ok += put_tagged(&s.b, 40, (uint32_t)i) == 0;
	kr_switch(&s.b, fake_clock);
	kr_lost(&s.b, &l);
	/* 256-byte sub-buffers hold 4 records of 40 (span 40) after the 80-byte header: 4 * 4 = 16. */
	CHECK(ok == 16 && l.full == 1000 - 16, "%d written, %lu lost full", ok, (unsigned long)l.full);
	n = drain_tags(&s.b, tags, 4096, &sbs);
	CHECK(n == 16 && sbs == 4, "read %d in %d", n, sbs);
	for (i = 0; i < n && i < 16; i++)
		CHECK(tags[i] == (uint32_t)i, "record %d has tag %u", i, tags[i]);
	/* Space again once read. */
	CHECK(put_tagged(&s.b, 40, 5000) == 0, "no space after the reader caught up");
	free(s.mem);
}

/* Overwrite: with no reader the newest num_subbufs sub-buffers survive; the rest is lost_wrap. */
static void t_overwrite_wrap(void)
{
	struct small s;
	struct kr_lost l;
	static uint32_t tags[4096];
	int i, n, sbs;

	small_init(&s, 256, 4, KR_MODE_OVERWRITE);
	for (i = 0; i < 1000; i++)
		CHECK(put_tagged(&s.b, 40, (uint32_t)i) == 0, "record %d refused", i);
	kr_switch(&s.b, fake_clock);
	kr_lost(&s.b, &l);
	n = drain_tags(&s.b, tags, 4096, &sbs);
	CHECK(l.full == 0 && (uint64_t)n + l.wrap == 1000, "read %d + lost wrap %lu != 1000", n,
	      (unsigned long)l.wrap);
	CHECK(sbs == 4 && n == 16 - 4 + (1000 % 4 ? 1000 % 4 : 4), "read %d in %d", n, sbs);
	for (i = 0; i < n && i < 4096; i++)
		CHECK(tags[i] == (uint32_t)(1000 - n + i), "record %d has tag %u", i, tags[i]);
	free(s.mem);
}

static void t_reader_api(void)
{
	struct small s;
	uint64_t seq, seq2;
	uint32_t phys, phys2;

	small_init(&s, 4096, 2, KR_MODE_OVERWRITE);
	CHECK(kr_get_subbuf(&s.b, &seq, &phys) == -EAGAIN, "sub-buffer from an empty buffer");
	kr_switch(&s.b, fake_clock);
	CHECK(kr_get_subbuf(&s.b, &seq, &phys) == -EAGAIN, "switch with nothing open delivered something");
	put_tagged(&s.b, 8, 1);
	CHECK(kr_get_subbuf(&s.b, &seq, &phys) == -EAGAIN, "open sub-buffer delivered");
	kr_switch(&s.b, fake_clock);
	CHECK(kr_get_subbuf(&s.b, &seq, &phys) == 0 && seq == 0, "flushed sub-buffer not delivered");
	CHECK(phys <= 2 && kr_subbuf_addr(&s.b, phys) != NULL, "phys %u", phys);
	CHECK(kr_get_subbuf(&s.b, &seq2, &phys2) == -EBUSY, "two held at once");
	CHECK(kr_put_subbuf(&s.b, seq + 1) == -EINVAL, "put of a seq not held");
	CHECK(kr_put_subbuf(&s.b, seq) == 0, "put refused");
	CHECK(kr_put_subbuf(&s.b, seq) == -EINVAL, "double put");
	CHECK(kr_subbuf_addr(&s.b, 3) == NULL, "address of phys 3 of 2+1");
	free(s.mem);
}

/* ---------------- stress ---------------- */

#define MAX_WRITERS	16
#define DEPTHS		8	/* writer id = buffer * DEPTHS + nesting depth of the emitting context */
#define REC_MIN		32

struct trec {
	uint32_t size;		/* written by the ring */
	uint32_t wid;
	uint64_t seq;
	uint64_t ts;
	uint32_t csum;
	uint32_t fill_len;
	/* fill bytes */
};

static __thread int my_depth;

struct writer {
	struct kr_buf buf;
	char *mem;
	int id;
	pthread_t tid;
	uint64_t attempts;	/* reserve calls: thread and its handlers (atomic: read by main at the end) */
	uint64_t seq[DEPTHS];
	uint64_t rng;
	/* reader side (only the buffer's reader thread) */
	uint64_t r_records, r_subbufs;
	int64_t r_last_sb;
	uint64_t r_last_ts;
	int64_t r_last_seq[DEPTHS];
};

static struct stress {
	int nw, nr;
	uint32_t sb, mode, max_len;
	struct writer w[MAX_WRITERS];
	int stop_writers, stop_kicker, flushed;	/* __atomic */
	pthread_mutex_t err_lock;
	char err[512];
	int nerr;
	uint64_t handler_runs;
	struct timespec reader_delay;
} S;

static __thread struct writer *my_w;


static void stress_error(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&S.err_lock);
	if (!S.nerr++) {
		va_start(ap, fmt);
		vsnprintf(S.err, sizeof(S.err), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&S.err_lock);
}

static uint32_t rnd(struct writer *w)
{
	/* xorshift64; handlers share it with the code they interrupt, which only makes it more random */
	uint64_t x = w->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	w->rng = x;
	return (uint32_t)(x >> 16);
}

static uint32_t rec_csum(const struct trec *r, const unsigned char *fill)
{
	uint32_t h = 2166136261u, i;

	h = (h ^ r->wid) * 16777619u;
	h = (h ^ (uint32_t)r->seq) * 16777619u;
	h = (h ^ (uint32_t)(r->seq >> 32)) * 16777619u;
	h = (h ^ (uint32_t)r->ts) * 16777619u;
	h = (h ^ (uint32_t)(r->ts >> 32)) * 16777619u;
	h = (h ^ r->fill_len) * 16777619u;
	for (i = 0; i < r->fill_len; i++)
		h = (h ^ fill[i]) * 16777619u;
	return h;
}

static void emit(struct writer *w, int depth)
{
	struct kr_reserve_ctx c;
	struct trec r;
	uint32_t len, i, x = rnd(w);
	int err;

	if ((x & 255) == 0)
		len = S.sb;				/* too big */
	else
		len = REC_MIN + (x >> 8) % (S.max_len - REC_MIN + 1);
	__atomic_add_fetch(&w->attempts, 1, __ATOMIC_RELAXED);
	r.wid = (uint32_t)(w->id * DEPTHS + depth);
	r.seq = w->seq[depth]++;
	err = kr_reserve(&w->buf, &c, len, now_ns);
	if (err) {
		if (err != -ENOBUFS && err != -E2BIG && err != -EBUSY)
			stress_error("writer %d: kr_reserve(%u) = %d", w->id, len, err);
		return;
	}
	/*
	 * Nest a writer between this reserve and its commit, so commits complete out of order: by a signal
	 * (an interrupt), or by a plain call (what an interrupt at this point does; TSan defers signals raised
	 * inside a handler, so this keeps deep nesting there too).
	 */
	if (depth < 6 && (x = rnd(w) & 15) < 2) {
		if (x)
			raise(SIGUSR1);
		else if (my_depth < DEPTHS - 1) {
			int d = ++my_depth;	/* as the handler does: ids stay unique per nesting level */

			emit(w, d);
			--my_depth;
		}
	}
	if (((uintptr_t)c.data & 7) || c.len != len)
		stress_error("writer %d: misaligned record %p", w->id, c.data);
	r.size = len;
	r.ts = c.ts;
	r.fill_len = len - REC_MIN;
	unsigned char *fill = (unsigned char *)c.data + REC_MIN;
	for (i = 0; i < r.fill_len; i++)
		fill[i] = (unsigned char)(r.seq * 31 + i);
	r.csum = rec_csum(&r, fill);
	memcpy((char *)c.data + 4, (char *)&r + 4, REC_MIN - 4);
	kr_commit(&w->buf, &c);
}

static void on_sigusr1(int sig)
{
	int saved = errno, d;

	(void)sig;
	if (my_w && my_depth < DEPTHS - 1) {
		d = ++my_depth;
		__atomic_add_fetch(&S.handler_runs, 1, __ATOMIC_RELAXED);
		emit(my_w, d);
		if ((rnd(my_w) & 3) == 0)
			emit(my_w, d);
		if ((rnd(my_w) & 511) == 0)
			kr_switch(&my_w->buf, now_ns);	/* a flush that may interrupt writers */
		--my_depth;
	}
	errno = saved;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned long k = 0;

	my_w = w;
	while (!__atomic_load_n(&S.stop_writers, __ATOMIC_RELAXED)) {
		emit(w, 0);
		if ((++k & 1023) == 0)
			kr_switch(&w->buf, now_ns);
	}
	my_w = NULL;
	return NULL;
}

static void *kicker_main(void *arg)
{
	struct timespec d = { 0, 20000 };
	int i;

	(void)arg;
	while (!__atomic_load_n(&S.stop_kicker, __ATOMIC_RELAXED)) {
		for (i = 0; i < S.nw; i++)
			pthread_kill(S.w[i].tid, SIGUSR1);
		nanosleep(&d, NULL);
	}
	return NULL;
}

/* Check one delivered sub-buffer of writer w. */
static void check_subbuf(struct writer *w, uint64_t seq, const char *base)
{
	const struct kr_subbuf_hdr *h = (const void *)base;
	uint32_t off, len, recs = 0;

	if (h->magic != KR_SUBBUF_MAGIC || h->version != KR_SUBBUF_VERSION || h->hdr_size != HDR ||
	    h->cpu != (uint32_t)w->id || h->subbuf_size != S.sb || h->seq != seq) {
		stress_error("buffer %d seq %lu: bad header (magic %#x cpu %u seq %lu)", w->id,
			     (unsigned long)seq, h->magic, h->cpu, (unsigned long)h->seq);
		return;
	}
	if ((int64_t)seq <= w->r_last_sb || (S.mode == KR_MODE_DISCARD && (int64_t)seq != w->r_last_sb + 1))
		stress_error("buffer %d: sub-buffer %lu after %ld", w->id, (unsigned long)seq, (long)w->r_last_sb);
	w->r_last_sb = (int64_t)seq;
	if (h->data_size > S.sb - HDR || h->ts_begin > h->ts_end || h->ts_begin < w->r_last_ts)
		stress_error("buffer %d seq %lu: data_size %u ts %lu..%lu (last %lu)", w->id, (unsigned long)seq,
			     h->data_size, (unsigned long)h->ts_begin, (unsigned long)h->ts_end,
			     (unsigned long)w->r_last_ts);
	for (off = 0; off < h->data_size; off += KR_RECORD_SPAN(len)) {
		struct trec r;
		const unsigned char *fill;

		memcpy(&len, base + HDR + off, 4);
		if (len < REC_MIN || len > S.max_len || off + KR_RECORD_SPAN(len) > h->data_size) {
			stress_error("buffer %d seq %lu off %u: record length %u", w->id, (unsigned long)seq, off, len);
			return;
		}
		memcpy(&r, base + HDR + off, REC_MIN);
		fill = (const unsigned char *)base + HDR + off + REC_MIN;
		if (r.fill_len != len - REC_MIN || rec_csum(&r, fill) != r.csum) {
			stress_error("buffer %d seq %lu off %u: corrupted record", w->id, (unsigned long)seq, off);
			return;
		}
		if (r.wid / DEPTHS != (uint32_t)w->id) {
			stress_error("buffer %d: record of writer %u", w->id, r.wid);
			return;
		}
		if ((int64_t)r.seq <= w->r_last_seq[r.wid % DEPTHS])
			stress_error("buffer %d writer %u: seq %lu after %ld", w->id, r.wid, (unsigned long)r.seq,
				     (long)w->r_last_seq[r.wid % DEPTHS]);
		w->r_last_seq[r.wid % DEPTHS] = (int64_t)r.seq;
		if (r.ts < w->r_last_ts || r.ts < h->ts_begin || r.ts > h->ts_end)
			stress_error("buffer %d: ts %lu after %lu (sub-buffer %lu..%lu)", w->id, (unsigned long)r.ts,
				     (unsigned long)w->r_last_ts, (unsigned long)h->ts_begin, (unsigned long)h->ts_end);
		w->r_last_ts = r.ts;
		recs++;
	}
	if (recs != h->records)
		stress_error("buffer %d seq %lu: %u records, header says %u", w->id, (unsigned long)seq, recs,
			     h->records);
	w->r_records += recs;
	w->r_subbufs++;
}

static void *reader_main(void *arg)
{
	long r = (long)arg;
	struct timespec nap = { 0, 100000 };
	int i, got, flushed;
	uint64_t seq;
	uint32_t phys;

	/* Start late, so the buffers fill (discard) or wrap (overwrite) whatever the writers' speed. */
	nanosleep(&S.reader_delay, NULL);
	for (;;) {
		flushed = __atomic_load_n(&S.flushed, __ATOMIC_ACQUIRE);
		got = 0;
		for (i = (int)r; i < S.nw; i += S.nr) {
			struct writer *w = &S.w[i];
			int e;

			while ((e = kr_get_subbuf(&w->buf, &seq, &phys)) == 0) {
				got++;
				check_subbuf(w, seq, kr_subbuf_addr(&w->buf, phys));
				if (kr_put_subbuf(&w->buf, seq))
					stress_error("buffer %d: put %lu refused", i, (unsigned long)seq);
			}
			if (e != -EAGAIN)
				stress_error("buffer %d: kr_get_subbuf = %d", i, e);
		}
		if (flushed && !got)
			return NULL;	/* writers gone, buffers flushed, nothing left */
		if (!got)
			nanosleep(&nap, NULL);
	}
}

static uint64_t stress_nest_total;

static int stress_ms(void)
{
	const char *e = getenv("KR_STRESS_MS");

	return e && atoi(e) > 0 ? atoi(e) : 400;
}

/*
 * One stress run; 1 when it exercised every way its mode has to lose a record (a record too big,
 * a slow reader, at least 100 records read). Its correctness checks hold whatever the timing.
 */
static int stress_once(uint32_t mode, uint32_t sb, uint32_t n, uint32_t max_len, int last)
{
	struct kr_config cfg = { 0, sb, n, mode };
	pthread_t readers[4], kicker;
	struct timespec run;
	struct kr_lost tot = { 0 };
	uint64_t att = 0, read = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i, ms = stress_ms(), covered;

	memset(&S, 0, sizeof(S));
	pthread_mutex_init(&S.err_lock, NULL);
	S.nw = (int)(ncpu < 1 ? 1 : ncpu > MAX_WRITERS - 2 ? MAX_WRITERS - 2 : ncpu) + 2;
	S.nr = 2;
	S.sb = sb;
	S.mode = mode;
	S.max_len = max_len;
	S.reader_delay.tv_sec = ms * 2 / 5 / 1000;
	S.reader_delay.tv_nsec = (ms * 2 / 5 % 1000) * 1000000L;
	for (i = 0; i < S.nw; i++) {
		struct writer *w = &S.w[i];

		w->id = i;
		w->mem = xalloc(kr_buf_mem_size(&cfg));
		w->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) ^ (uint64_t)now_ns();
		w->r_last_sb = -1;
		memset(w->r_last_seq, 0xff, sizeof(w->r_last_seq));
		CHECK(kr_buf_init(&w->buf, &cfg, w->mem, (uint32_t)i) == 0, "init");
	}
	for (i = 0; i < S.nr; i++)
		pthread_create(&readers[i], NULL, reader_main, (void *)(long)i);
	for (i = 0; i < S.nw; i++)
		pthread_create(&S.w[i].tid, NULL, writer_main, &S.w[i]);
	pthread_create(&kicker, NULL, kicker_main, NULL);

	run.tv_sec = ms / 1000;
	run.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&run, NULL);

	__atomic_store_n(&S.stop_kicker, 1, __ATOMIC_RELAXED);
	pthread_join(kicker, NULL);
	__atomic_store_n(&S.stop_writers, 1, __ATOMIC_RELAXED);
	for (i = 0; i < S.nw; i++)
		pthread_join(S.w[i].tid, NULL);
	/* The final flush (the writers are gone, so this thread may act as their CPU). */
	for (i = 0; i < S.nw; i++)
		kr_switch(&S.w[i].buf, now_ns);
	__atomic_store_n(&S.flushed, 1, __ATOMIC_RELEASE);
	for (i = 0; i < S.nr; i++)
		pthread_join(readers[i], NULL);

	CHECK(S.nerr == 0, "%d errors, first: %s", S.nerr, S.err);
	for (i = 0; i < S.nw; i++) {
		struct writer *w = &S.w[i];
		struct kr_lost l;
		uint64_t a = __atomic_load_n(&w->attempts, __ATOMIC_RELAXED), lost;

		kr_lost(&w->buf, &l);
		lost = l.full + l.wrap + l.big + l.nest;
		CHECK(w->r_records + lost == a, "buffer %d: read %lu + lost %lu (full %lu wrap %lu big %lu nest %lu)"
		      " != written %lu", i, (unsigned long)w->r_records, (unsigned long)lost, (unsigned long)l.full,
		      (unsigned long)l.wrap, (unsigned long)l.big, (unsigned long)l.nest, (unsigned long)a);
		CHECK(l.records == w->r_records + l.wrap, "buffer %d: committed %lu != read %lu + wrapped %lu", i,
		      (unsigned long)l.records, (unsigned long)w->r_records, (unsigned long)l.wrap);
		CHECK(mode == KR_MODE_OVERWRITE || l.wrap == 0, "discard mode wrapped %lu", (unsigned long)l.wrap);
		CHECK(kr_get_subbuf(&w->buf, &(uint64_t){ 0 }, &(uint32_t){ 0 }) == -EAGAIN, "left over");
		tot.full += l.full;
		tot.wrap += l.wrap;
		tot.big += l.big;
		tot.nest += l.nest;
		att += a;
		read += w->r_records;
	}
	stress_nest_total += tot.nest;
	covered = tot.big > 0 && (mode == KR_MODE_OVERWRITE ? tot.wrap > 0 : tot.full > 0) && read >= 100;
	/* The runs must have exercised every way to lose a record that their mode has. */
	if (last) {
		CHECK(tot.big > 0, "no lost_big");
		CHECK(mode == KR_MODE_OVERWRITE ? tot.wrap > 0 : tot.full > 0, "nothing lost to a slow reader");
		CHECK(read >= 100, "only %lu records read", (unsigned long)read);
	}
	printf("     %s sb %u x %u, %d writers, %d readers, %d ms: %lu written, %lu read, lost full %lu wrap %lu"
	       " big %lu nest %lu, %lu signal handlers\n", mode == KR_MODE_OVERWRITE ? "overwrite" : "discard",
	       sb, n, S.nw, S.nr, ms, (unsigned long)att, (unsigned long)read, (unsigned long)tot.full,
	       (unsigned long)tot.wrap, (unsigned long)tot.big, (unsigned long)tot.nest,
	       (unsigned long)__atomic_load_n(&S.handler_runs, __ATOMIC_RELAXED));
	for (i = 0; i < S.nw; i++)
		free(S.w[i].mem);
	return covered;
}

/*
 * Stress runs until one has exercised every way to lose a record (up to 5): on a loaded host a
 * run's writers may get too little CPU to wrap or to draw a record too big, which says nothing
 * about the ring; every run's accounting is checked all the same.
 */
static void stress(uint32_t mode, uint32_t sb, uint32_t n, uint32_t max_len)
{
	int run;

	for (run = 1; run <= 5 && !check_case_failed; run++)
		if (stress_once(mode, sb, n, max_len, run == 5))
			return;
}

static void t_stress_discard_small(void) { stress(KR_MODE_DISCARD, 256, 4, 256 - HDR); }
static void t_stress_discard_large(void) { stress(KR_MODE_DISCARD, 65536, 8, 1500); }
static void t_stress_overwrite_small(void) { stress(KR_MODE_OVERWRITE, 256, 2, 256 - HDR); }
static void t_stress_overwrite_large(void) { stress(KR_MODE_OVERWRITE, 65536, 4, 1500); }

/* Nesting deeper than KR_MAX_NEST happened (and was counted) somewhere in the stress runs. */
static void t_stress_nested_too_deep(void)
{
	CHECK(stress_nest_total > 0, "no record lost to nesting in any stress run");
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sa.sa_flags = SA_NODEFER | SA_RESTART;	/* handlers interrupt handlers: deep nesting */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	RUN(t_abi_layout);
	RUN(t_bad_configs);
	RUN(t_too_big);
	RUN(t_nest_limit);
	RUN(t_discard_full);
	RUN(t_overwrite_wrap);
	RUN(t_reader_api);
	RUN(t_stress_discard_small);
	RUN(t_stress_discard_large);
	RUN(t_stress_overwrite_small);
	RUN(t_stress_overwrite_large);
	RUN(t_stress_nested_too_deep);
	return check_done();
}
