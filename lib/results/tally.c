// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Hits counted by key, from the module's tally or the trace buffers (include/kinstr/tally.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uapi/linux/kinstr.h>
#include <ring/ring_abi.h>
#include <kinstr/record.h>
#include <kinstr/tally.h>

struct kinstr_tally {
	struct kinstr_trace *t;
	struct kinstr_dev *dev;		/* the module's tally: read once drained */
	unsigned int nr_cpus;
	uint32_t entries, key_size;	/* of the module's tables */
	const struct kinstr_trace_event *ev;
	unsigned int nev, key;
	size_t max_keys;
	struct kinstr_tally_row *rows;	/* open addressing, cap entries; hits 0: free */
	size_t cap, n;
	uint64_t overflow, lost;
	int err;			/* a record that did not decode */
};

static const char *const key_names[KINSTR_TALLY_NR_KEYS] = { "comm", "pid", "tid", "value" };

int kinstr_tally_key__parse(const char *s)
{
	unsigned int i;

	for (i = 0; s && i < KINSTR_TALLY_NR_KEYS; i++)
		if (!strcmp(s, key_names[i]))
			return (int)i;
	return -1;
}

const char *kinstr_tally_key__str(unsigned int key)
{
	return key < KINSTR_TALLY_NR_KEYS ? key_names[key] : "?";
}

struct kinstr_tally *kinstr_tally__new(struct kinstr_trace *t, const struct kinstr_trace_event *ev, unsigned int nev,
				       unsigned int key, size_t max_keys)
{
	struct kinstr_tally *ta;

	if (!ev || !nev || key >= KINSTR_TALLY_NR_KEYS) {
		errno = EINVAL;
		return NULL;
	}
	ta = calloc(1, sizeof(*ta));
	if (!ta)
		return NULL;
	ta->t = t;
	ta->ev = ev;
	ta->nev = nev;
	ta->key = key;
	ta->max_keys = max_keys ? max_keys : 65536;
	for (ta->cap = 64; ta->cap < 2 * ta->max_keys; ta->cap *= 2)
		;
	ta->rows = calloc(ta->cap, sizeof(*ta->rows));
	if (!ta->rows) {
		free(ta);
		return NULL;
	}
	return ta;
}

/* The module's table entries per CPU: room for max_keys keys at half load, in about 16 MiB over all CPUs. */
static uint32_t dev_entries(size_t max_keys, uint32_t stride, unsigned int nr_cpus)
{
	uint64_t want = 2 * (uint64_t)max_keys, budget = (16ull << 20) / ((uint64_t)stride * (nr_cpus ? nr_cpus : 1));
	uint32_t e = KINSTR_TALLY_MIN_ENTRIES;

	while ((uint64_t)e * 2 <= want && (uint64_t)e * 2 <= budget && e * 2 <= KINSTR_TALLY_MAX_ENTRIES)
		e *= 2;
	return e;
}

struct kinstr_tally *kinstr_tally__new_dev(struct kinstr_dev *dev, const struct kinstr_trace_event *ev,
					   unsigned int nev, unsigned int key, size_t max_keys)
{
	static const uint32_t by[KINSTR_TALLY_NR_KEYS] = {
		[KINSTR_TALLY_COMM] = KINSTR_TALLY_BY_COMM, [KINSTR_TALLY_PID] = KINSTR_TALLY_BY_PID,
		[KINSTR_TALLY_TID] = KINSTR_TALLY_BY_TID, [KINSTR_TALLY_VALUE] = KINSTR_TALLY_BY_VALUE,
	};
	struct kinstr_tally_create tc = { .size = sizeof(tc) };
	struct kinstr_tally *ta;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int i;
	int err;

	if (!dev) {
		errno = EINVAL;
		return NULL;
	}
	ta = kinstr_tally__new(NULL, ev, nev, key, max_keys);
	if (!ta)
		return NULL;
	tc.by = by[key];
	for (i = 0; key == KINSTR_TALLY_VALUE && i < nev; i++) {
		const struct kinstr_trace_val *v = &ev[i].vals[0].v;
		uint32_t b = v->kind == KINSTR_VAL_STR ? (v->size + 7u) & ~7u : 8;

		if (!ev[i].nvals) {
			kinstr_tally__free(ta);
			errno = EINVAL;
			return NULL;
		}
		tc.key_size = b > tc.key_size ? b : tc.key_size;
	}
	tc.entries = dev_entries(ta->max_keys, 8 + sizeof(struct kinstr_tally_ent) + tc.key_size, ncpu > 0 ? (unsigned int)ncpu : 1);
	if (kinstr_dev__ioctl(dev, KINSTR_IOC_TALLY_CREATE, &tc) < 0) {
		err = errno;
		kinstr_tally__free(ta);
		errno = err;
		return NULL;
	}
	ta->dev = dev;
	ta->nr_cpus = tc.nr_cpus;
	ta->entries = tc.entries;
	ta->key_size = tc.key_size;
	return ta;
}

void kinstr_tally__free(struct kinstr_tally *ta)
{
	size_t i, n;

	if (!ta)
		return;
	n = ta->cap ? ta->cap : ta->n;	/* the table, or the sorted list it became */
	for (i = 0; i < n; i++)
		free((char *)ta->rows[i].str);
	free(ta->rows);
	free(ta);
}

static uint64_t hash(unsigned int event, uint64_t key, const char *s)
{
	uint64_t h = 1469598103934665603ull ^ event;	/* FNV-1a over the event, the number, the name */
	int i;

	for (i = 0; i < 8; i++)
		h = (h ^ ((key >> (8 * i)) & 0xff)) * 1099511628211ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/*
 * One hit of event under its key: the number key, the comm when by_comm, or the whole string str
 * (a string value; str_max: the characters the probe records at most). comm is the task's.
 */
static void add(struct kinstr_tally *ta, unsigned int event, uint64_t key, const char *comm, bool by_comm,
		const char *str, size_t str_max, uint64_t hits, bool several)
{
	char name[16] = { 0 };
	size_t i, l = strnlen(comm, sizeof(name) - 1);

	memcpy(name, comm, l);
	if (by_comm || str)
		key = 0;
	for (i = hash(event, key, str ? str : by_comm ? name : "") & (ta->cap - 1);; i = (i + 1) & (ta->cap - 1)) {
		struct kinstr_tally_row *r = &ta->rows[i];

		if (!r->hits) {
			if (ta->n == ta->max_keys) {
				ta->overflow += hits;
				return;
			}
			*r = (struct kinstr_tally_row){ .event = event, .key = key, .hits = hits,
							.comm_several = several };
			if (str) {
				r->str = strdup(str);
				if (!r->str) {	/* no row without its key: counted short, as past the rows */
					r->hits = 0;
					ta->overflow += hits;
					return;
				}
				r->str_full = strlen(str) >= str_max;
			}
			memcpy(r->comm, name, sizeof(name));
			ta->n++;
			return;
		}
		if (r->event == event && r->key == key && (str ? r->str && !strcmp(r->str, str) :
							   !r->str && (!by_comm || !strcmp(r->comm, name)))) {
			r->hits += hits;
			if (ta->key == KINSTR_TALLY_VALUE && (several || strcmp(r->comm, name)))
				r->comm_several = true;
			memcpy(r->comm, name, sizeof(name));	/* a process's or thread's latest name */
			return;
		}
	}
}

static int tally_one(void *ctx, const struct kinstr_trace_rec *r)
{
	struct kinstr_tally *ta = ctx;
	union kinstr_ctf_value vals[3 + KINSTR_TRACE_MAX_VALS];
	const struct kinstr_trace_event *e;
	char sbuf[KINSTR_TRACE_STR_MAX + 1];
	const char *str = NULL;
	size_t str_max = 0;
	uint64_t key = 0;

	if (r->event >= ta->nev || kinstr_trace_event__values(e = &ta->ev[r->event], r, vals))
		return -EBADMSG;
	switch (ta->key) {
	case KINSTR_TALLY_PID: key = r->pid; break;
	case KINSTR_TALLY_TID: key = r->tid; break;
	case KINSTR_TALLY_VALUE:
		if (!e->nvals)
			return -EINVAL;
		if (e->vals[0].v.kind == KINSTR_VAL_STR) {
			/* a string value: keyed whole, bounded by its slot (a damaged record has no NUL) */
			size_t l = strnlen(vals[3].str, e->vals[0].v.size);

			memcpy(sbuf, vals[3].str, l);
			sbuf[l] = 0;
			str = sbuf;
			str_max = e->vals[0].v.size - 1u;
		} else {
			key = vals[3].u;
		}
		break;
	default: break;
	}
	add(ta, r->event, key, r->comm, ta->key == KINSTR_TALLY_COMM, str, str_max, 1, false);
	return 0;
}

int kinstr_tally__subbuf(void *ctx, unsigned int cpu, const struct kr_subbuf_hdr *h, const unsigned char *recs)
{
	struct kinstr_tally *ta = ctx;
	int ret;

	(void)cpu;
	ret = kinstr_trace_recs__each(h, recs, tally_one, ta);
	return ret ? (ta->err = ret) : 0;
}

int kinstr_tally__consume(struct kinstr_tally *ta)
{
	int ret;

	if (!ta->cap)
		return -EINVAL;	/* drained */
	ret = ta->t ? kinstr_trace__consume(ta->t, kinstr_tally__subbuf, ta) : 0;

	return ret < 0 ? ret : ta->err;
}

static int cmp_row(const void *a, const void *b)
{
	const struct kinstr_tally_row *x = a, *y = b;

	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->str || y->str)
		return !x->str ? -1 : !y->str ? 1 : strcmp(x->str, y->str);
	return strcmp(x->comm, y->comm);
}

/* A number key as a trace record of it reads (its type's width and sign), by the trace's own decoding. */
static uint64_t dev_number(const struct kinstr_trace_event *ev, const unsigned char *k)
{
	struct {
		struct kinstr_trace_rec r;
		unsigned char v[8];
	} rec = { .r = { .len = sizeof(rec) } };
	union kinstr_ctf_value vals[4];
	struct kinstr_trace_event one = *ev;

	one.nvals = 1;
	memcpy(rec.v, k, 8);
	return kinstr_trace_event__values(&one, &rec.r, vals) ? 0 : vals[3].u;
}

/* One entry of the module's tally into the rows. */
static int dev_one(struct kinstr_tally *ta, const struct kinstr_tally_ent *e, const unsigned char *k)
{
	char comm[17], sbuf[KINSTR_TRACE_STR_MAX + 1];
	const struct kinstr_trace_val *v;
	uint64_t key = 0;

	if (e->event >= ta->nev)
		return -EBADMSG;
	memcpy(comm, e->comm, 16);
	comm[16] = 0;
	switch (ta->key) {
	case KINSTR_TALLY_PID:
	case KINSTR_TALLY_TID:
		key = e->id;
		break;
	case KINSTR_TALLY_VALUE:
		v = &ta->ev[e->event].vals[0].v;
		if (v->kind == KINSTR_VAL_STR) {
			size_t l = strnlen((const char *)k, v->size);

			memcpy(sbuf, k, l);
			sbuf[l] = 0;
			add(ta, e->event, 0, comm, false, sbuf, v->size - 1u, e->hits,
			    e->flags & KINSTR_TALLY_E_SEVERAL);
			return 0;
		}
		key = dev_number(&ta->ev[e->event], k);
		break;
	default:
		break;
	}
	add(ta, e->event, key, comm, ta->key == KINSTR_TALLY_COMM, NULL, 0, e->hits,
	    e->flags & KINSTR_TALLY_E_SEVERAL);
	return 0;
}

/* Every CPU's table of the module's tally into the rows, and its overflow. */
static int dev_drain(struct kinstr_tally *ta)
{
	size_t stride = sizeof(struct kinstr_tally_ent) + ta->key_size;
	unsigned char *buf = malloc((size_t)ta->entries * stride);
	unsigned int cpu;
	uint32_t j;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (cpu = 0; !ret && cpu < ta->nr_cpus; cpu++) {
		struct kinstr_tally_read rd = { .size = sizeof(rd), .cpu = cpu, .count = ta->entries,
						.ents = (uintptr_t)buf };

		if (kinstr_dev__ioctl(ta->dev, KINSTR_IOC_TALLY_READ, &rd) < 0) {
			ret = -errno;
			break;
		}
		ta->overflow += rd.overflow;
		for (j = 0; !ret && j < rd.found && j < rd.count; j++)
			ret = dev_one(ta, (const struct kinstr_tally_ent *)(buf + j * stride),
				      buf + j * stride + sizeof(struct kinstr_tally_ent));
	}
	free(buf);
	return ret;
}

int kinstr_tally__drain(struct kinstr_tally *ta)
{
	size_t i, n = 0;
	int ret;

	if (ta->dev && ta->cap && (ret = dev_drain(ta)))
		return ret;
	if (ta->t)
		kinstr_trace__flush(ta->t);
	ret = kinstr_tally__consume(ta);
	if (ret)
		return ret;
	ta->lost = ta->t ? kinstr_trace__lost(ta->t) : 0;
	for (i = 0; i < ta->cap; i++)	/* the rows together, sorted */
		if (ta->rows[i].hits)
			ta->rows[n++] = ta->rows[i];
	memset(ta->rows + n, 0, (ta->cap - n) * sizeof(*ta->rows));
	qsort(ta->rows, n, sizeof(*ta->rows), cmp_row);
	ta->cap = 0;	/* no more adding: the table is a sorted list now */
	return 0;
}

size_t kinstr_tally__row_cnt(const struct kinstr_tally *ta)
{
	return ta->cap ? 0 : ta->n;
}

const struct kinstr_tally_row *kinstr_tally__row(const struct kinstr_tally *ta, size_t i)
{
	return !ta->cap && i < ta->n ? &ta->rows[i] : NULL;
}

uint64_t kinstr_tally__overflow(const struct kinstr_tally *ta)
{
	return ta->overflow;
}

uint64_t kinstr_tally__lost(const struct kinstr_tally *ta)
{
	return ta->lost;
}

void kinstr_tally__add_lost(struct kinstr_tally *ta, uint64_t n)
{
	ta->lost += n;
}
