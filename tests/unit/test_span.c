// SPDX-License-Identifier: GPL-2.0
/*
 * Latency between two points (lib/results/span.c) from sub-buffers of records: each stop pairs with its
 * key's last start in time order, whatever order the CPUs' buffers are read in; threads never
 * pair with each other; a start replaced or left open and a stop with no start are counted; a
 * pointer key pairs across CPUs; the histogram's buckets; the bound counts overflow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/span.h>
#include "check.h"
#include "trace_recs.h"

/* event 0: A (FUNC), event 1: B (FUNC%return); with values for the key "value" */
static void events(struct kinstr_trace_event *ev, int with_value)
{
	int i;

	memset(ev, 0, 2 * sizeof(*ev));
	strcpy(ev[0].name, "kinstr_test_inner");
	strcpy(ev[1].name, "kinstr_test_inner%return");
	for (i = 0; with_value && i < 2; i++) {
		ev[i].nvals = 1;
		strcpy(ev[i].vals[0].name, "p");
		ev[i].vals[0].v.kind = KINSTR_VAL_REG;
		ev[i].vals[0].type = KINSTR_CTF_U64;
	}
}

static void t_pairs_by_thread(void)
{
	struct kinstr_trace_event ev[2];
	struct kinstr_spanner *s;
	const struct kinstr_span_result *r;
	const struct kinstr_span_row *row;
	struct kr_subbuf_hdr *h;

	events(ev, 0);
	s = kinstr_spanner__new(NULL, ev, 1, 2, KINSTR_TALLY_TID, 0);
	CHECK(s != NULL, "new");
	if (!s)
		return;
	/* cpu 1's buffer read first: the stops, then a stop with no start (tid 31) */
	h = trec_hdr();
	trec_add(h, 1, 300, 10, "a", 0, 0);	/* tid 11 */
	trec_add(h, 1, 450, 20, "b", 0, 0);	/* tid 21 */
	trec_add(h, 1, 460, 30, "c", 0, 0);	/* tid 31: no start */
	CHECK(kinstr_spanner__subbuf(s, 1, h, trec_data()) == 0, "cpu 1");
	/* cpu 0: the starts; tid 11 starts twice before its stop (the first is replaced), tid 21 once more at the end */
	h = trec_hdr();
	trec_add(h, 0, 50, 10, "a", 0, 0);
	trec_add(h, 0, 100, 10, "a", 0, 0);
	trec_add(h, 0, 150, 20, "b", 0, 0);
	trec_add(h, 0, 900, 20, "b", 0, 0);
	CHECK(kinstr_spanner__subbuf(s, 0, h, trec_data()) == 0, "cpu 0");
	CHECK(kinstr_spanner__drain(s) == 0, "drain");
	r = kinstr_spanner__result(s);
	CHECK(r->total.count == 2 && r->total.min == 200 && r->total.max == 300 && r->total.sum == 500,
	      "total %llu spans, min %llu max %llu", (unsigned long long)r->total.count, (unsigned long long)r->total.min,
	      (unsigned long long)r->total.max);
	CHECK(r->unmatched_starts == 2 && r->unmatched_stops == 1, "unmatched %llu starts %llu stops",
	      (unsigned long long)r->unmatched_starts, (unsigned long long)r->unmatched_stops);
	CHECK(kinstr_spanner__row_cnt(s) == 2, "%zu rows", kinstr_spanner__row_cnt(s));
	row = kinstr_spanner__row(s, 0);
	CHECK(row && row->st.count == 1, "row 0");
	row = kinstr_spanner__row(s, 1);
	CHECK(row && row->st.count == 1, "row 1");
	/* 200 ns is in [128, 256): bucket 8; 300 in [256, 512): bucket 9 */
	CHECK(r->total.hist[8] == 1 && r->total.hist[9] == 1, "histogram");
	CHECK(kinstr_span__bucket(0) == 0 && kinstr_span__bucket(1) == 1 && kinstr_span__bucket(1000000) == 20, "buckets");
	kinstr_spanner__free(s);
}

static void t_pairs_by_value(void)
{
	struct kinstr_trace_event ev[2];
	struct kinstr_spanner *s;
	const struct kinstr_span_result *r;
	struct kr_subbuf_hdr *h;

	events(ev, 0);
	CHECK(kinstr_spanner__new(NULL, ev, 1, 2, KINSTR_TALLY_VALUE, 0) == NULL && errno == EINVAL,
	      "a key by value with no value at the points");
	events(ev, 1);
	s = kinstr_spanner__new(NULL, ev, 1, 2, KINSTR_TALLY_VALUE, 3);
	CHECK(s != NULL, "new");
	if (!s)
		return;
	/* a pointer started on cpu 0 by one thread, stopped on cpu 1 by another */
	h = trec_hdr();
	trec_add(h, 0, 1000, 10, "producer", 1, 0xffff888001234000ull);
	trec_add(h, 0, 1100, 10, "producer", 1, 0xffff888001235000ull);
	CHECK(kinstr_spanner__subbuf(s, 0, h, trec_data()) == 0, "cpu 0");
	h = trec_hdr();
	trec_add(h, 1, 5000, 40, "consumer", 1, 0xffff888001234000ull);
	trec_add(h, 1, 5100, 40, "consumer", 1, 0xffff888001235000ull);	/* past the bound of 3 */
	CHECK(kinstr_spanner__subbuf(s, 1, h, trec_data()) == 0, "cpu 1");
	CHECK(kinstr_spanner__drain(s) == 0, "drain");
	r = kinstr_spanner__result(s);
	CHECK(r->total.count == 1 && r->total.min == 4000 && r->overflow == 1 && r->unmatched_starts == 1,
	      "%llu spans of %llu ns, overflow %llu, open %llu", (unsigned long long)r->total.count,
	      (unsigned long long)r->total.min, (unsigned long long)r->overflow, (unsigned long long)r->unmatched_starts);
	CHECK(kinstr_spanner__row(s, 0) && kinstr_spanner__row(s, 0)->key == 0xffff888001234000ull &&
	      !strcmp(kinstr_spanner__row(s, 0)->comm, "consumer"), "the pointer's row");
	CHECK(kinstr_spanner__consume(s) == -EINVAL, "consumed after the drain");
	kinstr_spanner__free(s);
}

/* Settled while it runs: what is older than the newest record less the margin pairs, the rest waits. */
static void t_settle_while_running(void)
{
	struct kinstr_trace_event ev[2];
	struct kinstr_spanner *s;
	const struct kinstr_span_result *r;
	struct kr_subbuf_hdr *h;

	events(ev, 0);
	s = kinstr_spanner__new(NULL, ev, 1, 2, KINSTR_TALLY_TID, 0);
	CHECK(s != NULL, "new");
	if (!s)
		return;
	h = trec_hdr();
	trec_add(h, 0, 100, 10, "a", 0, 0);
	trec_add(h, 0, 150, 20, "b", 0, 0);
	CHECK(kinstr_spanner__subbuf(s, 0, h, trec_data()) == 0, "cpu 0");
	h = trec_hdr();
	trec_add(h, 1, 300, 10, "a", 1, 0);
	CHECK(kinstr_spanner__subbuf(s, 1, h, trec_data()) == 0, "cpu 1");
	r = kinstr_spanner__result(s);
	CHECK(kinstr_spanner__settle(s, 100) == 0 && r->total.count == 0 && r->unmatched_stops == 0,
	      "the stop at 300 is within the margin of the newest: %llu spans", (unsigned long long)r->total.count);
	CHECK(kinstr_spanner__settle(s, 0) == 0 && r->total.count == 1 && r->total.min == 200,
	      "settled: %llu spans, min %llu", (unsigned long long)r->total.count, (unsigned long long)r->total.min);
	h = trec_hdr();
	trec_add(h, 1, 400, 20, "b", 1, 0);
	trec_add(h, 1, 410, 30, "c", 1, 0);	/* no start */
	CHECK(kinstr_spanner__subbuf(s, 1, h, trec_data()) == 0, "cpu 1 again");
	CHECK(kinstr_spanner__drain(s) == 0, "drain");
	CHECK(r->total.count == 2 && r->total.max == 250 && r->unmatched_stops == 1 && r->unmatched_starts == 0,
	      "%llu spans, max %llu, %llu stops unmatched", (unsigned long long)r->total.count,
	      (unsigned long long)r->total.max, (unsigned long long)r->unmatched_stops);
	CHECK(kinstr_spanner__settle(s, 0) == -EINVAL, "settled after the drain");
	kinstr_spanner__free(s);
}

/*
 * 3,000 threads on two CPUs (each start on one, its stop on the other, some replaced, some left
 * open, some stops alone), read in rounds: settling after every round ends in exactly what one
 * drain of the same records gives, row for row.
 */
static void t_settle_equals_drain(void)
{
	struct kinstr_trace_event ev[2];
	struct kinstr_spanner *a, *b;
	const struct kinstr_span_result *ra, *rb;
	uint64_t x = 88172645463325252ull;
	unsigned int round, i, cpu;
	size_t k;
	int same = 1;

	events(ev, 0);
	a = kinstr_spanner__new(NULL, ev, 1, 2, KINSTR_TALLY_TID, 0);
	b = kinstr_spanner__new(NULL, ev, 1, 2, KINSTR_TALLY_TID, 0);
	CHECK(a && b, "new");
	if (!a || !b)
		goto out;
	for (round = 0; round < 20; round++) {
		for (cpu = 0; cpu < 2; cpu++) {
			struct kr_subbuf_hdr *h = trec_hdr();
			uint64_t t0 = 1000000ull * round + 10;

			for (i = 0; i < 150; i++) {
				uint32_t tid = (uint32_t)(1000 + round * 150 + i);

				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				/* CPU 0 starts; CPU 1 stops 1..4000 ns later, or (1 in 16) not at all */
				if (cpu == 0) {
					trec_add(h, 0, t0 + i * 1000, tid, "w", 0, 0);
					if (x % 23 == 0)	/* a second start: the first is replaced */
						trec_add(h, 0, t0 + i * 1000 + 1, tid, "w", 0, 0);
				} else if (x % 16) {
					trec_add(h, 1, t0 + i * 1000 + 2 + x % 4000, tid, "w", 1, 0);
				}
				if (cpu == 1 && x % 31 == 0)
					trec_add(h, 1, t0 + i * 1000 + 5000, tid + 500000, "lone", 1, 0);
			}
			CHECK(kinstr_spanner__subbuf(a, cpu, h, trec_data()) == 0, "a");
			CHECK(kinstr_spanner__subbuf(b, cpu, h, trec_data()) == 0, "b");
		}
		CHECK(kinstr_spanner__settle(a, 6000) == 0, "settle");
	}
	CHECK(kinstr_spanner__drain(a) == 0 && kinstr_spanner__drain(b) == 0, "drains");
	ra = kinstr_spanner__result(a);
	rb = kinstr_spanner__result(b);
	CHECK(!memcmp(ra, rb, sizeof(*ra)), "totals: %llu/%llu spans, %llu/%llu open, %llu/%llu lone",
	      (unsigned long long)ra->total.count, (unsigned long long)rb->total.count,
	      (unsigned long long)ra->unmatched_starts, (unsigned long long)rb->unmatched_starts,
	      (unsigned long long)ra->unmatched_stops, (unsigned long long)rb->unmatched_stops);
	CHECK(ra->total.count > 2000 && ra->unmatched_starts > 100 && ra->unmatched_stops > 50,
	      "the mix: %llu spans, %llu open or replaced, %llu lone stops", (unsigned long long)ra->total.count,
	      (unsigned long long)ra->unmatched_starts, (unsigned long long)ra->unmatched_stops);
	CHECK(kinstr_spanner__row_cnt(a) == kinstr_spanner__row_cnt(b), "rows %zu/%zu", kinstr_spanner__row_cnt(a),
	      kinstr_spanner__row_cnt(b));
	for (k = 0; k < kinstr_spanner__row_cnt(a) && k < kinstr_spanner__row_cnt(b); k++)
		same &= !memcmp(kinstr_spanner__row(a, k), kinstr_spanner__row(b, k), sizeof(struct kinstr_span_row));
	CHECK(same, "every row the same");
out:
	kinstr_spanner__free(a);
	kinstr_spanner__free(b);
}

int main(void)
{
	RUN(t_pairs_by_thread);
	RUN(t_pairs_by_value);
	RUN(t_settle_while_running);
	RUN(t_settle_equals_drain);
	return check_done();
}
