// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Latency between two points (include/kinstr/span.h). The records are kept (bounded) until the
 * end: the CPUs' buffers are read one after the other, so a stop on one CPU may be read before
 * the start on another that came first; sorted by key and time, each key's hits pair in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/record.h>
#include <kinstr/span.h>

struct srec {
	uint64_t ts, key;
	uint64_t seq;		/* arrival order: ties keep a CPU's own order */
	uint32_t is_b;
	char comm[16];
};

struct kinstr_spanner {
	struct kinstr_trace *t;
	const struct kinstr_trace_event *ev;
	unsigned int na, nev, key;
	size_t max;
	struct srec *recs;
	size_t n, cap;
	uint64_t seq;
	struct kinstr_span_result res;
	struct kinstr_span_row *rows;
	size_t nrows;
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

void kinstr_spanner__free(struct kinstr_spanner *s)
{
	if (!s)
		return;
	free(s->recs);
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

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
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

int kinstr_spanner__drain(struct kinstr_spanner *s)
{
	size_t i, j;
	int ret;

	if (s->t)
		kinstr_trace__flush(s->t);
	ret = kinstr_spanner__consume(s);
	if (ret)
		return ret;
	s->drained = 1;
	s->res.lost = s->t ? kinstr_trace__lost(s->t) : 0;
	qsort(s->recs, s->n, sizeof(*s->recs), cmp_rec);
	s->rows = calloc(s->n ? s->n : 1, sizeof(*s->rows));
	if (!s->rows)
		return -ENOMEM;
	for (i = 0; i < s->n; i = j) {	/* each key's hits in time order */
		struct kinstr_span_row *row = &s->rows[s->nrows];
		const struct srec *open = NULL;

		memset(row, 0, sizeof(*row));
		row->key = s->recs[i].key;
		for (j = i; j < s->n && s->recs[j].key == row->key; j++) {
			const struct srec *x = &s->recs[j];

			if (!x->is_b) {
				s->res.unmatched_starts += open != NULL;	/* replaced */
				open = x;
				continue;
			}
			if (!open) {
				s->res.unmatched_stops++;
				continue;
			}
			add(&row->st, x->ts - open->ts);
			add(&s->res.total, x->ts - open->ts);
			memcpy(row->comm, x->comm, sizeof(row->comm));
			open = NULL;
		}
		s->res.unmatched_starts += open != NULL;	/* still open at the end */
		if (row->st.count)
			s->nrows++;
	}
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
