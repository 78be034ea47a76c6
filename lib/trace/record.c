// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The recorder: trace sub-buffers into CTF packets (include/kinstr/record.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/record.h>
#include "lib/opts.h"

struct rec_cpu {
	uint64_t recorded, last_discarded, last_ts, cut;
	bool has_packet;
};

struct kinstr_recorder {
	struct kinstr_ctf *w;
	unsigned int nr_cpus, nev;
	struct kinstr_trace_event *ev;
	struct kinstr_recorder_opts o;
	uint64_t written;		/* the stream files' bytes so far */
	bool capped, told, draining;
	struct rec_cpu cpu[];
};

struct kinstr_recorder *kinstr_recorder__new(struct kinstr_ctf *w, unsigned int nr_cpus,
					     struct kinstr_trace_event *ev, unsigned int nev,
					     const struct kinstr_recorder_opts *opts)
{
	struct kinstr_recorder *rec;
	unsigned int e, i;

	if (!w || !nr_cpus || (nev && !ev) || !KINSTR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	rec = calloc(1, sizeof(*rec) + nr_cpus * sizeof(rec->cpu[0]));
	if (!rec)
		return NULL;
	rec->w = w;
	rec->nr_cpus = nr_cpus;
	rec->ev = ev;
	rec->nev = nev;
	rec->o.max_size = KINSTR_OPTS_GET(opts, max_size, 0);
	rec->o.on_event = KINSTR_OPTS_GET(opts, on_event, NULL);
	rec->o.should_stop = KINSTR_OPTS_GET(opts, should_stop, NULL);
	rec->o.ctx = KINSTR_OPTS_GET(opts, ctx, NULL);
	if (rec->o.max_size && rec->o.max_size < (uint64_t)nr_cpus * KINSTR_RECORD_END_RESERVE + 4096) {
		free(rec);
		errno = ENOSPC;
		return NULL;
	}
	for (e = 0; e < nev; e++) {
		struct kinstr_ctf_field f[3 + KINSTR_TRACE_MAX_VALS] = {
			{ .name = "pid", .type = KINSTR_CTF_U32 },
			{ .name = "tid", .type = KINSTR_CTF_U32 },
			{ .name = "comm", .type = KINSTR_CTF_CHARS, .len = 16 },
		};

		for (i = 0; i < ev[e].nvals; i++)
			f[3 + i] = (struct kinstr_ctf_field){ .name = ev[e].vals[i].name, .type = ev[e].vals[i].type,
							      .hex = ev[e].vals[i].hex };
		ev[e].class_id = kinstr_ctf__add_class(w, ev[e].name, f, 3 + ev[e].nvals);
		if (ev[e].class_id < 0) {
			errno = -ev[e].class_id;
			free(rec);
			return NULL;
		}
	}
	return rec;
}

void kinstr_recorder__free(struct kinstr_recorder *rec)
{
	free(rec);
}

int kinstr_recorder__begin(struct kinstr_recorder *rec, uint64_t ts)
{
	unsigned int cpu;
	int ret;

	for (cpu = 0; cpu < rec->nr_cpus; cpu++) {
		struct rec_cpu *c = &rec->cpu[cpu];
		/* one ns apart: babeltrace2's lttng-live warns of two streams' identical messages */
		uint64_t t = ts > cpu ? ts - cpu : 0;

		if (c->has_packet)
			continue;
		ret = kinstr_ctf__packet_begin(rec->w, cpu, t);
		if (ret)
			return ret;
		rec->written += kinstr_ctf__packet_size(rec->w, cpu);
		ret = kinstr_ctf__packet_end(rec->w, cpu, t, 0);
		if (ret)
			return ret;
		c->has_packet = true;
		c->last_ts = t;
	}
	return 0;
}

void kinstr_recorder__drain(struct kinstr_recorder *rec)
{
	rec->draining = true;
}

bool kinstr_recorder__capped(struct kinstr_recorder *rec, bool *first)
{
	if (first) {
		*first = rec->capped && !rec->told;
		rec->told |= rec->capped;
	}
	return rec->capped;
}

static int next_step(struct kinstr_recorder *rec)
{
	return !rec->draining && rec->o.should_stop && rec->o.should_stop(rec->o.ctx) ? KINSTR_RECORD_STOP : 0;
}

static uint64_t narrow(const struct kinstr_value *t, uint64_t v)
{
	switch (t->type) {
	case KINSTR_CTF_U8: return (uint8_t)v;
	case KINSTR_CTF_U16: return (uint16_t)v;
	case KINSTR_CTF_U32: return (uint32_t)v;
	case KINSTR_CTF_S8: return (uint64_t)(int64_t)(int8_t)v;
	case KINSTR_CTF_S16: return (uint64_t)(int64_t)(int16_t)v;
	case KINSTR_CTF_S32: return (uint64_t)(int64_t)(int32_t)v;
	default: return v;
	}
}

/* The records of a sub-buffer, checked: n of them, or -EBADMSG. */
int kinstr_trace_recs__each(const struct kr_subbuf_hdr *h, const unsigned char *recs,
			    int (*fn)(void *ctx, const struct kinstr_trace_rec *r), void *ctx)
{
	uint32_t off, len;
	int ret;

	for (off = 0; off + sizeof(struct kinstr_trace_rec) <= h->data_size; off += KR_RECORD_SPAN(len)) {
		const struct kinstr_trace_rec *r = (const void *)(recs + off);

		len = r->len;
		if (len < sizeof(*r) || off + len > h->data_size)
			return -EBADMSG;
		ret = fn ? fn(ctx, r) : 0;
		if (ret)
			return ret;
	}
	return 0;
}

static int count_one(void *ctx, const struct kinstr_trace_rec *r)
{
	(void)r;
	++*(int64_t *)ctx;
	return 0;
}

static int64_t count_records(const struct kr_subbuf_hdr *h, const unsigned char *recs)
{
	int64_t n = 0;
	int ret = kinstr_trace_recs__each(h, recs, count_one, &n);

	return ret ? ret : n;
}

/* One record's values as the CTF writer takes them. */
int kinstr_trace_event__values(const struct kinstr_trace_event *e, const struct kinstr_trace_rec *r,
				union kinstr_ctf_value *vals)
{
	const unsigned char *v = (const unsigned char *)(r + 1), *end = (const unsigned char *)r + r->len;
	unsigned int i;

	vals[0].u = r->pid;
	vals[1].u = r->tid;
	vals[2].str = r->comm;
	for (i = 0; i < e->nvals; i++) {
		const struct kinstr_value *t = &e->vals[i];
		uint64_t x;

		if (t->v.kind == KINSTR_VAL_STR) {
			size_t n = (t->v.size + 7u) & ~7u;

			if (v + n > end)
				return -EBADMSG;
			vals[3 + i].str = (const char *)v;
			v += n;
			continue;
		}
		if (v + 8 > end)
			return -EBADMSG;
		memcpy(&x, v, 8);
		vals[3 + i].u = narrow(t, x);
		v += 8;
	}
	return 0;
}

int kinstr_recorder__subbuf(void *ctx, unsigned int cpu, const struct kr_subbuf_hdr *h, const unsigned char *recs)
{
	struct kinstr_recorder *rec = ctx;
	struct rec_cpu *c;
	uint64_t discarded, nrec = 0;
	uint32_t off, len;
	size_t size;
	int64_t n;
	int ret;

	if (cpu >= rec->nr_cpus)
		return -EINVAL;
	c = &rec->cpu[cpu];
	n = count_records(h, recs);
	if (n < 0)
		return (int)n;
	discarded = h->lost_full + h->lost_wrap + h->lost_big + h->lost_nest + c->cut;
	if (rec->capped) {	/* past the cap: count what is left out, write nothing */
		c->cut += (uint64_t)n;
		return next_step(rec);
	}
	/*
	 * Events lost before the first packet of a CPU (overwrite mode): an empty packet with none
	 * lost goes first, so that readers count them (babeltrace2 counts differences).
	 */
	if (!c->has_packet && discarded) {
		ret = kinstr_ctf__packet_begin(rec->w, cpu, h->ts_begin);
		if (!ret) {
			rec->written += kinstr_ctf__packet_size(rec->w, cpu);
			ret = kinstr_ctf__packet_end(rec->w, cpu, h->ts_begin, 0);
		}
		if (ret)
			return ret;
		c->has_packet = true;
	}
	ret = kinstr_ctf__packet_begin(rec->w, cpu, h->ts_begin);
	if (ret)
		return ret;
	for (off = 0; off + sizeof(struct kinstr_trace_rec) <= h->data_size; off += KR_RECORD_SPAN(len)) {
		const struct kinstr_trace_rec *r = (const void *)(recs + off);
		union kinstr_ctf_value vals[3 + KINSTR_TRACE_MAX_VALS];

		len = r->len;
		if (r->event >= rec->nev || kinstr_trace_event__values(&rec->ev[r->event], r, vals))
			return -EBADMSG;
		ret = kinstr_ctf__event(rec->w, cpu, (unsigned int)rec->ev[r->event].class_id, r->ts, vals);
		if (ret)
			return ret;
		nrec++;
		if (rec->o.on_event)
			rec->o.on_event(rec->o.ctx, &rec->ev[r->event], cpu, r, vals);
	}
	size = kinstr_ctf__packet_size(rec->w, cpu);
	if (rec->o.max_size &&
	    rec->written + size + (uint64_t)rec->nr_cpus * KINSTR_RECORD_END_RESERVE > rec->o.max_size) {
		/* the cap: this packet and all that follow are left out, and counted as lost */
		kinstr_ctf__packet_cancel(rec->w, cpu);
		c->cut += nrec;
		rec->capped = true;
		return next_step(rec);
	}
	for (off = 0; off + sizeof(struct kinstr_trace_rec) <= h->data_size; off += KR_RECORD_SPAN(len)) {
		const struct kinstr_trace_rec *r = (const void *)(recs + off);

		len = r->len;
		rec->ev[r->event].count++;
	}
	c->recorded += nrec;
	c->last_discarded = discarded;
	c->last_ts = h->ts_end;
	c->has_packet = true;
	rec->written += size;
	ret = kinstr_ctf__packet_end(rec->w, cpu, h->ts_end, discarded);
	return ret ? ret : next_step(rec);
}

int kinstr_recorder__finish_cpu(struct kinstr_recorder *rec, unsigned int cpu, const struct kinstr_trace_stats *st,
				uint64_t now_ns, struct kinstr_rec_cpu *out)
{
	struct rec_cpu *c;
	uint64_t lost, ts;

	if (cpu >= rec->nr_cpus)
		return -EINVAL;
	c = &rec->cpu[cpu];
	lost = st->lost_full + st->lost_wrap + st->lost_big + st->lost_nest + c->cut;
	/* losses after the last delivered sub-buffer: an empty packet carries the total */
	if (lost > c->last_discarded) {
		ts = c->has_packet ? c->last_ts : now_ns;
		if (!c->has_packet &&	/* from none lost, as above */
		    (kinstr_ctf__packet_begin(rec->w, cpu, ts) || kinstr_ctf__packet_end(rec->w, cpu, ts, 0)))
			return -EIO;
		if (kinstr_ctf__packet_begin(rec->w, cpu, ts) || kinstr_ctf__packet_end(rec->w, cpu, ts, lost))
			return -EIO;
		c->last_discarded = lost;
		c->has_packet = true;
	}
	out->recorded = c->recorded;
	out->lost = lost;
	out->cut = c->cut;
	return 0;
}
