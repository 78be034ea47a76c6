// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Latency between two points (include/kinstr/span.h). The CPUs' buffers are read one after the
 * other, so a stop on one CPU may be read before the start on another that came first: records
 * wait (bounded) until they are settled, then pair in time order against a table of each key's
 * open start. Everything settles at the drain; kinstr_spanner__settle settles earlier what is
 * older than the newest record read (or the clock's now) less a margin, after a flush, for a view
 * while it runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/record.h>
#include <kinstr/span.h>

struct srec {
	uint64_t ts, key;
	uint64_t seq;		/* arrival order: ties keep a CPU's own order */
	uint32_t is_b;
	char comm[16];
};

/* A key's state: its open start, and its row once it has paired. */
struct kstate {
	uint64_t key, open_ts;
	size_t row;		/* SIZE_MAX: none yet */
	uint8_t used, open;
};

struct kinstr_spanner {
	struct kinstr_trace *t;
	struct kinstr_dev *dev;		/* the module's spans: read whole at each settle and the drain */
	unsigned int nr_cpus;
	uint32_t dev_rows;		/* rows per CPU there */
	uint64_t lost_added;
	const struct kinstr_trace_event *ev;
	unsigned int na, nev, key;
	size_t max;
	struct srec *recs;		/* read, not settled */
	size_t n, cap;
	uint64_t seq, newest;
	struct kstate *tab;		/* open addressing, a power of two */
	size_t tab_cap, tab_n;
	struct kinstr_span_result res;
	struct kinstr_span_row *rows;
	size_t nrows, rows_cap;
	int drained, err;
};

unsigned int kinstr_span__bucket(uint64_t ns)
{
	unsigned int b = 0;

	while (ns) {
		b++;
		ns >>= 1;
	}
	return b < KINSTR_SPAN_HIST ? b : KINSTR_SPAN_HIST - 1;
}

struct kinstr_spanner *kinstr_spanner__new(struct kinstr_trace *t, const struct kinstr_trace_event *ev,
					   unsigned int na, unsigned int nev, unsigned int key, size_t max_records)
{
	struct kinstr_spanner *s;
	unsigned int i;

	if (!ev || !na || na >= nev ||
	    (key != KINSTR_TALLY_TID && key != KINSTR_TALLY_PID && key != KINSTR_TALLY_VALUE)) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; key == KINSTR_TALLY_VALUE && i < nev; i++)
		if (!ev[i].nvals || ev[i].vals[0].v.kind == KINSTR_VAL_STR) {
			errno = EINVAL;	/* every point needs a number to key on */
			return NULL;
		}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->t = t;
	s->ev = ev;
	s->na = na;
	s->nev = nev;
	s->key = key;
	s->max = max_records ? max_records : 4u << 20;
	return s;
}

struct kinstr_spanner *kinstr_spanner__new_dev(struct kinstr_dev *dev, const struct kinstr_trace_event *ev,
					       unsigned int na, unsigned int nev, unsigned int key, bool local_clock)
{
	struct kinstr_span_create sc = { .size = sizeof(sc), .flags = local_clock ? KINSTR_SPAN_F_LOCAL_CLOCK : 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct kinstr_spanner *s;
	uint32_t rows = 64;
	int err;

	if (!dev) {
		errno = EINVAL;
		return NULL;
	}
	s = kinstr_spanner__new(NULL, ev, na, nev, key, 0);
	if (!s)
		return NULL;
	sc.by = key == KINSTR_TALLY_TID ? KINSTR_SPAN_BY_TID : key == KINSTR_TALLY_PID ? KINSTR_SPAN_BY_PID :
		KINSTR_SPAN_BY_VALUE;
	/* rows per CPU: 16,384 keys at half load, within about 32 MiB over all CPUs (560 bytes a row) */
	while (rows < 32768 && (uint64_t)rows * 2 * 584 * (uint64_t)(ncpu > 0 ? ncpu : 1) <= (32ull << 20))
		rows *= 2;
	sc.rows = rows;
	sc.starts = 65536;
	if (kinstr_dev__ioctl(dev, KINSTR_IOC_SPAN_CREATE, &sc) < 0) {
		err = errno;
		kinstr_spanner__free(s);
		errno = err;
		return NULL;
	}
	s->dev = dev;
	s->nr_cpus = sc.nr_cpus;
	s->dev_rows = sc.rows;
	return s;
}

void kinstr_spanner__add_lost(struct kinstr_spanner *s, uint64_t n)
{
	s->lost_added += n;
	s->res.lost += n;
}

void kinstr_spanner__free(struct kinstr_spanner *s)
{
	if (!s)
		return;
	free(s->recs);
	free(s->tab);
	free(s->rows);
	free(s);
}

static int span_one(void *ctx, const struct kinstr_trace_rec *r)
{
	struct kinstr_spanner *s = ctx;
	union kinstr_ctf_value vals[3 + KINSTR_TRACE_MAX_VALS];
	struct srec *x;

	if (r->event >= s->nev || kinstr_trace_event__values(&s->ev[r->event], r, vals))
		return -EBADMSG;
	if (s->n == s->max) {
		s->res.overflow++;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct srec *g;

		cap = cap < s->max ? cap : s->max;
		g = realloc(s->recs, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		s->recs = g;
		s->cap = cap;
	}
	x = &s->recs[s->n++];
	x->ts = r->ts;
	s->newest = r->ts > s->newest ? r->ts : s->newest;
	x->key = s->key == KINSTR_TALLY_TID ? r->tid : s->key == KINSTR_TALLY_PID ? r->pid : vals[3].u;
	x->seq = s->seq++;
	x->is_b = r->event >= s->na;
	memcpy(x->comm, r->comm, sizeof(x->comm));
	x->comm[sizeof(x->comm) - 1] = 0;
	return 0;
}

int kinstr_spanner__subbuf(void *ctx, unsigned int cpu, const struct kr_subbuf_hdr *h, const unsigned char *recs)
{
	struct kinstr_spanner *s = ctx;
	int ret;

	(void)cpu;
	ret = kinstr_trace_recs__each(h, recs, span_one, s);
	return ret ? (s->err = ret) : 0;
}

int kinstr_spanner__consume(struct kinstr_spanner *s)
{
	int ret;

	if (s->drained)
		return -EINVAL;
	ret = s->t ? kinstr_trace__consume(s->t, kinstr_spanner__subbuf, s) : 0;
	return ret < 0 ? ret : s->err;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct srec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_row(const void *a, const void *b)
{
	const struct kinstr_span_row *x = a, *y = b;

	if (x->st.count != y->st.count)
		return x->st.count > y->st.count ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void add(struct kinstr_span_stats *st, uint64_t d)
{
	if (!st->count || d < st->min)
		st->min = d;
	if (d > st->max)
		st->max = d;
	st->count++;
	st->sum += d;
	st->hist[kinstr_span__bucket(d)]++;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;	/* a 64-bit mix: pointers and tids spread over the table */
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int tab_grow(struct kinstr_spanner *s)
{
	size_t cap = s->tab_cap ? 2 * s->tab_cap : 1024, i, j;
	struct kstate *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->tab_cap; i++) {
		if (!s->tab[i].used)
			continue;
		for (j = slot_of(s->tab[i].key, cap); t[j].used; j = (j + 1) & (cap - 1))
			;
		t[j] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->tab_cap = cap;
	return 0;
}

/* key's state, added if new; NULL: no memory */
static struct kstate *state_of(struct kinstr_spanner *s, uint64_t key)
{
	size_t j;

	if (2 * (s->tab_n + 1) > s->tab_cap && tab_grow(s))
		return NULL;
	for (j = slot_of(key, s->tab_cap); s->tab[j].used; j = (j + 1) & (s->tab_cap - 1))
		if (s->tab[j].key == key)
			return &s->tab[j];
	s->tab[j] = (struct kstate){ .key = key, .row = SIZE_MAX, .used = 1 };
	s->tab_n++;
	return &s->tab[j];
}

/* k's row, added if it has none; NULL: no memory */
static struct kinstr_span_row *row_of(struct kinstr_spanner *s, struct kstate *k)
{
	if (k->row == SIZE_MAX) {
		if (s->nrows == s->rows_cap) {
			size_t cap = s->rows_cap ? 2 * s->rows_cap : 256;
			struct kinstr_span_row *g = realloc(s->rows, cap * sizeof(*g));

			if (!g)
				return NULL;
			s->rows = g;
			s->rows_cap = cap;
		}
		k->row = s->nrows++;
		memset(&s->rows[k->row], 0, sizeof(s->rows[k->row]));
		s->rows[k->row].key = k->key;
	}
	return &s->rows[k->row];
}

static int pair(struct kinstr_spanner *s, const struct srec *x)
{
	struct kstate *k = state_of(s, x->key);
	struct kinstr_span_row *row;

	if (!k)
		return -ENOMEM;
	if (!x->is_b) {
		s->res.unmatched_starts += k->open;	/* replaced */
		k->open = 1;
		k->open_ts = x->ts;
		return 0;
	}
	if (!k->open) {
		s->res.unmatched_stops++;
		return 0;
	}
	k->open = 0;
	row = row_of(s, k);
	if (!row)
		return -ENOMEM;
	add(&row->st, x->ts - k->open_ts);
	add(&s->res.total, x->ts - k->open_ts);
	memcpy(row->comm, x->comm, sizeof(row->comm));
	return 0;
}

/* Pair every record read with ts <= upto, in time order; the rest waits. */
static int settle_upto(struct kinstr_spanner *s, uint64_t upto)
{
	size_t i;
	int ret;

	qsort(s->recs, s->n, sizeof(*s->recs), cmp_rec);
	for (i = 0; i < s->n && s->recs[i].ts <= upto; i++)
		if ((ret = pair(s, &s->recs[i])))
			return ret;
	memmove(s->recs, s->recs + i, (s->n - i) * sizeof(*s->recs));
	s->n -= i;
	return 0;
}

static void stats_merge(struct kinstr_span_stats *to, const struct kinstr_span_stats_k *from)
{
	unsigned int b;

	if (!from->count)
		return;
	if (!to->count || from->min < to->min)
		to->min = from->min;
	if (from->max > to->max)
		to->max = from->max;
	to->count += from->count;
	to->sum += from->sum;
	for (b = 0; b < KINSTR_SPAN_HIST; b++)
		to->hist[b] += from->hist[b];
}

/*
 * Every CPU's rows and totals of the module's spans, read anew into the result and the rows
 * (at_end: the starts still open count as unmatched). 0 or -errno.
 */
static int dev_read(struct kinstr_spanner *s, bool at_end)
{
	struct kinstr_span_row_k *buf = calloc(s->dev_rows, sizeof(*buf));
	struct kinstr_span_stats_k tot;
	uint64_t open = 0;
	unsigned int cpu;
	uint32_t j;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memset(&s->res, 0, sizeof(s->res));
	s->res.lost = s->lost_added;
	s->nrows = 0;
	if (s->tab)
		memset(s->tab, 0, s->tab_cap * sizeof(*s->tab));
	s->tab_n = 0;
	for (cpu = 0; !ret && cpu < s->nr_cpus; cpu++) {
		struct kinstr_span_read rd = { .size = sizeof(rd), .cpu = cpu, .count = s->dev_rows,
					       .rows = (uintptr_t)buf, .total = (uintptr_t)&tot };

		if (kinstr_dev__ioctl(s->dev, KINSTR_IOC_SPAN_READ, &rd) < 0) {
			ret = -errno;
			break;
		}
		s->res.unmatched_starts += rd.replaced;
		s->res.unmatched_stops += rd.unmatched_stops;
		s->res.overflow += rd.overflow;
		open = rd.open;
		stats_merge(&s->res.total, &tot);
		for (j = 0; j < rd.found && j < rd.count; j++) {
			struct kstate *k = state_of(s, buf[j].key);
			struct kinstr_span_row *row = k ? row_of(s, k) : NULL;

			if (!row) {
				ret = -ENOMEM;
				break;
			}
			stats_merge(&row->st, &buf[j].st);
			memcpy(row->comm, buf[j].comm, sizeof(row->comm));
			row->comm[sizeof(row->comm) - 1] = 0;
		}
	}
	if (at_end)
		s->res.unmatched_starts += open;
	free(buf);
	return ret;
}

int kinstr_spanner__settle(struct kinstr_spanner *s, uint64_t margin_ns)
{
	uint64_t now;
	int ret;

	if (s->drained)
		return -EINVAL;
	if (s->dev)
		return dev_read(s, false);
	if (s->t && (ret = kinstr_trace__flush(s->t)))
		return ret;
	ret = kinstr_spanner__consume(s);
	if (ret)
		return ret;
	s->res.lost = s->t ? kinstr_trace__lost(s->t) : 0;
	/* the clock's now as well: on a quiet machine the last hits settle without newer ones */
	now = s->t ? kinstr_trace__now(s->t) : 0;
	now = now > s->newest ? now : s->newest;
	if (now <= margin_ns)
		return 0;
	return settle_upto(s, now - margin_ns);
}

int kinstr_spanner__drain(struct kinstr_spanner *s)
{
	size_t i;
	int ret;

	if (s->dev) {
		ret = dev_read(s, true);
		if (ret)
			return ret;
		s->drained = 1;
		if (s->nrows)
			qsort(s->rows, s->nrows, sizeof(*s->rows), cmp_row);
		return 0;
	}
	if (s->t)
		kinstr_trace__flush(s->t);
	ret = kinstr_spanner__consume(s);
	if (ret)
		return ret;
	s->drained = 1;
	s->res.lost = s->t ? kinstr_trace__lost(s->t) : 0;
	ret = settle_upto(s, UINT64_MAX);
	if (ret)
		return ret;
	for (i = 0; i < s->tab_cap; i++)
		s->res.unmatched_starts += s->tab[i].used && s->tab[i].open;	/* still open at the end */
	if (s->nrows)
		qsort(s->rows, s->nrows, sizeof(*s->rows), cmp_row);
	free(s->recs);
	s->recs = NULL;
	s->n = s->cap = 0;
	return 0;
}

const struct kinstr_span_result *kinstr_spanner__result(const struct kinstr_spanner *s)
{
	return &s->res;
}

size_t kinstr_spanner__row_cnt(const struct kinstr_spanner *s)
{
	return s->drained ? s->nrows : 0;
}

const struct kinstr_span_row *kinstr_spanner__row(const struct kinstr_spanner *s, size_t i)
{
	return s->drained && i < s->nrows ? &s->rows[i] : NULL;
}
