// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Entry and %return events of a trace paired into calls (include/kinstr/ctf.h, kinstr_call_pairs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_pairs.h>
#include <kinstr/ctf_read.h>

struct pev {
	uint64_t ts;
	int64_t tid;
	uint32_t fn;		/* index into lat[] */
	bool ret;
};

struct kinstr_call_pairs {
	unsigned int nclasses;
	int32_t *fn_of;		/* class -> function, -1: not a paired class */
	bool *is_ret;
	unsigned int *tid_field;
	struct kinstr_call_latency *lat;
	size_t nlat;
	struct pev *ev;
	size_t n, cap;
};

static int field_index(const struct kinstr_ctf_class *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].name, name))
			return (int)i;
	return -1;
}

struct kinstr_call_pairs *kinstr_call_pairs__new(const struct kinstr_ctf_reader *r)
{
	struct kinstr_call_pairs *p = calloc(1, sizeof(*p));
	unsigned int i, j;

	if (!p)
		return NULL;
	p->nclasses = kinstr_ctf_reader__class_cnt(r);
	p->fn_of = calloc(p->nclasses + 1, sizeof(*p->fn_of));
	p->is_ret = calloc(p->nclasses + 1, sizeof(*p->is_ret));
	p->tid_field = calloc(p->nclasses + 1, sizeof(*p->tid_field));
	p->lat = calloc(p->nclasses + 1, sizeof(*p->lat));
	if (!p->fn_of || !p->is_ret || !p->tid_field || !p->lat) {
		kinstr_call_pairs__free(p);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < p->nclasses; i++)
		p->fn_of[i] = -1;
	for (i = 0; i < p->nclasses; i++) {
		const struct kinstr_ctf_class *e = kinstr_ctf_reader__class(r, i);
		size_t len = e ? strlen(e->name) : 0;

		if (!e || field_index(e, "tid") < 0)
			continue;
		for (j = 0; j < p->nclasses; j++) {
			const struct kinstr_ctf_class *x = kinstr_ctf_reader__class(r, j);

			if (x && !strncmp(x->name, e->name, len) && !strcmp(x->name + len, "%return") &&
			    field_index(x, "tid") >= 0) {
				p->lat[p->nlat] = (struct kinstr_call_latency){ .function = e->name, .min_ns = UINT64_MAX };
				p->fn_of[i] = p->fn_of[j] = (int32_t)p->nlat++;
				p->is_ret[j] = true;
				p->tid_field[i] = (unsigned int)field_index(e, "tid");
				p->tid_field[j] = (unsigned int)field_index(x, "tid");
			}
		}
	}
	return p;
}

int kinstr_call_pairs__add(struct kinstr_call_pairs *p, const struct kinstr_ctf_event *ev)
{
	if (ev->class_id >= p->nclasses || p->fn_of[ev->class_id] < 0)
		return 0;
	if (p->n == p->cap) {
		struct pev *ne = realloc(p->ev, (p->cap = p->cap ? p->cap * 2 : 1024) * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		p->ev = ne;
	}
	p->ev[p->n++] = (struct pev){ .ts = ev->ts, .tid = ev->values[p->tid_field[ev->class_id]].s,
				      .fn = (uint32_t)p->fn_of[ev->class_id], .ret = p->is_ret[ev->class_id] };
	return 0;
}

static int by_key_then_time(const void *x, const void *y)
{
	const struct pev *a = x, *b = y;

	if (a->fn != b->fn)
		return a->fn < b->fn ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (int)a->ret - (int)b->ret;	/* an entry before a return at the same ns */
}

int kinstr_call_pairs__finish(struct kinstr_call_pairs *p)
{
	uint64_t *stack = NULL;
	size_t i = 0, depth, cap = 0;

	if (p->n)
		qsort(p->ev, p->n, sizeof(*p->ev), by_key_then_time);
	while (i < p->n) {
		struct kinstr_call_latency *l = &p->lat[p->ev[i].fn];
		size_t j = i;

		depth = 0;
		for (; j < p->n && p->ev[j].fn == p->ev[i].fn && p->ev[j].tid == p->ev[i].tid; j++) {
			if (!p->ev[j].ret) {
				if (depth == cap) {
					uint64_t *ns = realloc(stack, (cap = cap ? cap * 2 : 64) * sizeof(*ns));

					if (!ns) {
						free(stack);
						return -ENOMEM;
					}
					stack = ns;
				}
				stack[depth++] = p->ev[j].ts;
			} else if (!depth) {
				l->unmatched_returns++;
			} else {
				uint64_t d = p->ev[j].ts - stack[--depth];

				l->calls++;
				l->sum_ns += d;
				l->min_ns = d < l->min_ns ? d : l->min_ns;
				l->max_ns = d > l->max_ns ? d : l->max_ns;
			}
		}
		l->unmatched_entries += depth;
		i = j;
	}
	for (i = 0; i < p->nlat; i++)
		if (!p->lat[i].calls)
			p->lat[i].min_ns = 0;
	free(stack);
	return 0;
}

size_t kinstr_call_pairs__cnt(const struct kinstr_call_pairs *p)
{
	return p->nlat;
}

const struct kinstr_call_latency *kinstr_call_pairs__get(const struct kinstr_call_pairs *p, size_t i)
{
	return i < p->nlat ? &p->lat[i] : NULL;
}

void kinstr_call_pairs__free(struct kinstr_call_pairs *p)
{
	if (!p)
		return;
	free(p->fn_of);
	free(p->is_ret);
	free(p->tid_field);
	free(p->lat);
	free(p->ev);
	free(p);
}
