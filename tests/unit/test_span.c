// SPDX-License-Identifier: GPL-2.0
/*
 * Latency between two points (lib/span.c) from sub-buffers of records: each stop pairs with its
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

int main(void)
{
	RUN(t_pairs_by_thread);
	RUN(t_pairs_by_value);
	return check_done();
}
