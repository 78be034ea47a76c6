// SPDX-License-Identifier: GPL-2.0
/*
 * Hits by key (lib/results/tally.c) from sub-buffers of records as the module writes them: by comm, by
 * pid and by an integer value, each hit in its probe's row for its key; rows by probe, then most
 * hits first; past the table's bound a hit is overflow, not a row; a damaged record refuses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <ring/ring_abi.h>
#include <kinstr/tally.h>
#include "check.h"
#include "trace_recs.h"

/* a record of event ev (pid, tid, comm, one value if val_n) */
static void rec(struct kr_subbuf_hdr *h, unsigned int ev, uint32_t pid, const char *comm, int val_n, uint64_t val)
{
	trec_add(h, ev, 0, pid, comm, val_n, val);
}

static struct kr_subbuf_hdr *hdr(void)
{
	return trec_hdr();
}

static void events(struct kinstr_trace_event *ev)
{
	memset(ev, 0, 2 * sizeof(*ev));
	strcpy(ev[0].name, "__x64_sys_getppid");
	strcpy(ev[1].name, "vfs_read");
	ev[1].nvals = 1;
	strcpy(ev[1].vals[0].name, "count");
	ev[1].vals[0].v.kind = KINSTR_VAL_REG;
	ev[1].vals[0].type = KINSTR_CTF_U64;
}

static void t_by_comm_pid_value(void)
{
	struct kinstr_trace_event ev[2];
	struct kr_subbuf_hdr *h;
	const struct kinstr_tally_row *r;
	struct kinstr_tally *ta;
	int i;

	events(ev);
	/* by comm: prog_a 3 hits of getppid, prog_b 5, and 2 of vfs_read under prog_a */
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_COMM, 0);
	CHECK(ta != NULL, "new");
	if (!ta)
		return;
	h = hdr();
	for (i = 0; i < 3; i++)
		rec(h, 0, 100, "prog_a", 0, 0);
	for (i = 0; i < 5; i++)
		rec(h, 0, 200 + (unsigned int)i, "prog_b", 0, 0);	/* five threads of one name */
	rec(h, 1, 100, "prog_a", 1, 4096);
	rec(h, 1, 100, "prog_a", 1, 1);
	CHECK(kinstr_tally__subbuf(ta, 0, h, trec_data()) == 0, "subbuf");
	CHECK(kinstr_tally__drain(ta) == 0, "drain");
	CHECK(kinstr_tally__row_cnt(ta) == 3, "%zu rows", kinstr_tally__row_cnt(ta));
	r = kinstr_tally__row(ta, 0);
	CHECK(r && r->event == 0 && !strcmp(r->comm, "prog_b") && r->hits == 5, "row 0: %s %llu", r ? r->comm : "-",
	      r ? (unsigned long long)r->hits : 0);
	r = kinstr_tally__row(ta, 1);
	CHECK(r && r->event == 0 && !strcmp(r->comm, "prog_a") && r->hits == 3, "row 1");
	r = kinstr_tally__row(ta, 2);
	CHECK(r && r->event == 1 && !strcmp(r->comm, "prog_a") && r->hits == 2, "row 2");
	CHECK(kinstr_tally__consume(ta) == -EINVAL, "consumed after the drain");
	kinstr_tally__free(ta);

	/* by pid: the five threads of prog_b are five processes here */
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_PID, 0);
	CHECK(ta && kinstr_tally__subbuf(ta, 1, h, trec_data()) == 0 && kinstr_tally__drain(ta) == 0, "by pid");
	CHECK(ta && kinstr_tally__row_cnt(ta) == 7, "%zu rows by pid", ta ? kinstr_tally__row_cnt(ta) : 0);
	r = ta ? kinstr_tally__row(ta, 0) : NULL;
	CHECK(r && r->key == 100 && r->hits == 3, "the top row by pid");
	kinstr_tally__free(ta);

	/* by value: vfs_read's count, 4096 and 1 once each; getppid has no value: refused */
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_VALUE, 0);
	h = hdr();
	rec(h, 1, 100, "prog_a", 1, 4096);
	rec(h, 1, 100, "prog_a", 1, 4096);
	rec(h, 1, 100, "prog_a", 1, 1);
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == 0 && kinstr_tally__drain(ta) == 0, "by value");
	r = ta ? kinstr_tally__row(ta, 0) : NULL;
	CHECK(r && r->key == 4096 && r->hits == 2, "the top row by value");
	r = ta ? kinstr_tally__row(ta, 1) : NULL;
	CHECK(r && r->key == 1 && r->hits == 1, "the second row by value");
	kinstr_tally__free(ta);
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_VALUE, 0);
	h = hdr();
	rec(h, 0, 100, "prog_a", 0, 0);
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == -EINVAL, "a probe with no value taken by value");
	kinstr_tally__free(ta);
}

static void t_bounds(void)
{
	struct kinstr_trace_event ev[2];
	struct kr_subbuf_hdr *h;
	struct kinstr_tally *ta;
	unsigned int i;

	events(ev);
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_PID, 4);
	h = hdr();
	for (i = 0; i < 10; i++)
		rec(h, 0, i, "p", 0, 0);
	rec(h, 0, 0, "p", 0, 0);	/* a row that exists still counts */
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == 0 && kinstr_tally__drain(ta) == 0, "bounded");
	CHECK(ta && kinstr_tally__row_cnt(ta) == 4 && kinstr_tally__overflow(ta) == 6, "%zu rows, %llu overflow",
	      ta ? kinstr_tally__row_cnt(ta) : 0, ta ? (unsigned long long)kinstr_tally__overflow(ta) : 0);
	CHECK(ta && kinstr_tally__row(ta, 0)->key == 0 && kinstr_tally__row(ta, 0)->hits == 2, "the row of pid 0");
	kinstr_tally__free(ta);
	/* damage: an event the tally was not given, a record longer than the sub-buffer */
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_COMM, 0);
	h = hdr();
	rec(h, 7, 1, "p", 0, 0);
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == -EBADMSG, "an unknown event taken");
	kinstr_tally__free(ta);
	ta = kinstr_tally__new(NULL, ev, 2, KINSTR_TALLY_COMM, 0);
	h = hdr();
	rec(h, 0, 1, "p", 0, 0);
	((struct kinstr_trace_rec *)trec_data())->len = 4000;
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == -EBADMSG, "a record past the sub-buffer taken");
	kinstr_tally__free(ta);
	CHECK(kinstr_tally_key__parse("comm") == KINSTR_TALLY_COMM && kinstr_tally_key__parse("value") == KINSTR_TALLY_VALUE &&
	      kinstr_tally_key__parse("stack") == -1, "key names");
}

/* a record of event ev whose one value is a string slot of size bytes holding s (cut at size, no NUL then) */
static void rec_str(struct kr_subbuf_hdr *h, unsigned int ev, uint32_t pid, const char *comm, const char *s,
		    unsigned int size)
{
	unsigned int slot = (size + 7u) & ~7u;
	struct kinstr_trace_rec *r = trec_add(h, ev, 0, pid, comm, 0, 0);
	size_t l = strlen(s) < slot ? strlen(s) : slot;

	h->data_size -= KR_RECORD_SPAN(r->len);
	r->len += slot;
	memset(r + 1, 0, slot);
	memcpy(r + 1, s, l);
	h->data_size += KR_RECORD_SPAN(r->len);
}

/*
 * By a string value: keyed whole, not by its first 15 characters (issue 30: every library under
 * /lib/x86_64-linux-gnu/ was one row, its COMM column the value again); the comm kept apart; a
 * string that fills string[N] marked full; a slot with no NUL (damage) read only to its end.
 */
static void t_by_string(void)
{
	static const char *const paths[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libselinux.so.1",
					     "/lib/x86_64-linux-gnu/libc.so.6", "/etc/ld.so.cache" };
	struct kinstr_trace_event ev[1];
	struct kr_subbuf_hdr *h;
	const struct kinstr_tally_row *r;
	struct kinstr_tally *ta;
	char full[64];
	size_t i;

	memset(ev, 0, sizeof(ev));
	strcpy(ev[0].name, "do_filp_open");
	ev[0].nvals = 1;
	strcpy(ev[0].vals[0].name, "path");
	ev[0].vals[0].v.kind = KINSTR_VAL_STR;
	ev[0].vals[0].v.size = 64;
	ev[0].vals[0].type = KINSTR_CTF_STRING;
	ta = kinstr_tally__new(NULL, ev, 1, KINSTR_TALLY_VALUE, 0);
	h = hdr();
	for (i = 0; i < 4; i++)
		rec_str(h, 0, 100, "ls", paths[i], 64);
	memset(full, 'x', sizeof(full));
	memcpy(full, "/very/long/", 11);
	full[63] = 0;				/* 63 characters: filled string[64] */
	rec_str(h, 0, 101, "cat", full, 64);
	full[63] = 'y';				/* no NUL in the slot: damage, read to the slot's end */
	rec_str(h, 0, 101, "cat", full, 64);
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == 0 && kinstr_tally__drain(ta) == 0, "by string");
	CHECK(ta && kinstr_tally__row_cnt(ta) == 5, "%zu rows (4 strings and the damaged one apart)",
	      ta ? kinstr_tally__row_cnt(ta) : 0);
	r = ta ? kinstr_tally__row(ta, 0) : NULL;
	CHECK(r && r->str && !strcmp(r->str, paths[0]) && r->hits == 2 && !strcmp(r->comm, "ls") && !r->str_full &&
	      !r->comm_several, "the top row: %s %llu comm %s", r && r->str ? r->str : "-",
	      r ? (unsigned long long)r->hits : 0, r ? r->comm : "-");
	for (i = 1; ta && i < kinstr_tally__row_cnt(ta); i++) {
		r = kinstr_tally__row(ta, i);
		CHECK(r->hits == 1 && r->str, "row %zu", i);
		if (r->str && !strncmp(r->str, "/very/", 6))
			CHECK(r->str_full && !strcmp(r->comm, "cat") && strlen(r->str) >= 63, "row %zu full: %zu chars", i,
			      strlen(r->str));
		else
			CHECK(!r->str_full && !strcmp(r->comm, "ls") && !r->comm_several, "row %zu: %s", i,
			      r->str ? r->str : "-");
	}
	kinstr_tally__free(ta);
	/* a value two commands hit: their row says so (a shell, then the ls it became, open ld.so.cache) */
	ta = kinstr_tally__new(NULL, ev, 1, KINSTR_TALLY_VALUE, 0);
	h = hdr();
	rec_str(h, 0, 100, "sh", paths[3], 64);
	rec_str(h, 0, 100, "ls", paths[3], 64);
	rec_str(h, 0, 100, "ls", paths[0], 64);
	CHECK(ta && kinstr_tally__subbuf(ta, 0, h, trec_data()) == 0 && kinstr_tally__drain(ta) == 0, "two comms");
	for (i = 0; ta && i < kinstr_tally__row_cnt(ta); i++) {
		r = kinstr_tally__row(ta, i);
		CHECK(r->comm_several == !strcmp(r->str, paths[3]), "%s: comm_several %d", r->str, r->comm_several);
	}
	kinstr_tally__free(ta);
}

int main(void)
{
	RUN(t_by_comm_pid_value);
	RUN(t_by_string);
	RUN(t_bounds);
	return check_done();
}
