// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Hits by kernel stack (include/kinstr/stacks.h): the built-in program's maps, read and symbolized. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kinstr/bpf.h>
#include <kinstr/kernel.h>
#include <kinstr/probe.h>
#include <kinstr/stacks.h>

/* lib/bpf/stack_obj.S: lib/bpf/stack.bpf.o's bytes */
extern const char kinstr_stack_bpf_obj[], kinstr_stack_bpf_obj_end[];

struct kinstr_stacks {
	struct kinstr_bpf_obj *o;
};

struct stack_key {
	uint32_t probe;
	int32_t stack;
};

struct kinstr_stacks *kinstr_stacks__new(struct kinstr_why *why)
{
	struct kinstr_stacks *s = calloc(1, sizeof(*s));
	char *log = NULL;

	if (!s) {
		kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		return NULL;
	}
	s->o = kinstr_bpf_obj__open_mem(kinstr_stack_bpf_obj, (size_t)(kinstr_stack_bpf_obj_end - kinstr_stack_bpf_obj),
					"kinstr_stack", NULL, why, &log);
	free(log);
	if (!s->o) {
		int e = errno;

		free(s);
		errno = e;
		return NULL;
	}
	return s;
}

void kinstr_stacks__free(struct kinstr_stacks *s)
{
	if (!s)
		return;
	kinstr_bpf_obj__close(s->o);
	free(s);
}

int kinstr_stacks__attach(struct kinstr_stacks *s, struct kinstr_probeset *ps)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < kinstr_probeset__cnt(ps) && !ret; i++)
		ret = kinstr_probeset__set_bpf(ps, i, kinstr_bpf_obj__prog_fd(s->o), i);
	return ret;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct kinstr_stack_row *a = x, *b = y;

	if (a->hits != b->hits)
		return a->hits > b->hits ? -1 : 1;
	return a->probe < b->probe ? -1 : a->probe > b->probe;
}

int kinstr_stacks__read(struct kinstr_stacks *s, struct kinstr_stack_row **rowsp, uint64_t *lost)
{
	int cfd = kinstr_bpf_obj__map_fd(s->o, "counts"), sfd = kinstr_bpf_obj__map_fd(s->o, "stacks");
	int lfd = kinstr_bpf_obj__map_fd(s->o, "lost"), ncpu = libbpf_num_possible_cpus(), c;
	struct kinstr_stack_row *rows = NULL;
	struct stack_key key, next, *prev = NULL;
	size_t n = 0, cap = 0;
	uint64_t *pc;
	uint32_t w;

	*rowsp = NULL;
	*lost = 0;
	if (cfd < 0 || sfd < 0 || lfd < 0 || ncpu < 1)
		return -EINVAL;
	pc = calloc((size_t)ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	for (w = 0; w < 2; w++)
		if (!bpf_map_lookup_elem(lfd, &w, pc))
			for (c = 0; c < ncpu; c++)
				*lost += pc[c];
	free(pc);
	while (bpf_map_get_next_key(cfd, prev, &next) == 0) {
		struct kinstr_stack_row *r;
		uint64_t hits;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(cfd, &key, &hits))
			continue;
		if (n == cap) {
			struct kinstr_stack_row *nr = realloc(rows, (cap = cap ? cap * 2 : 64) * sizeof(*rows));

			if (!nr) {
				free(rows);
				return -ENOMEM;
			}
			rows = nr;
		}
		r = &rows[n];
		memset(r, 0, sizeof(*r));
		r->probe = key.probe;
		r->hits = hits;
		if (bpf_map_lookup_elem(sfd, &key.stack, r->ips)) {
			*lost += hits;	/* the stack went (a collision replaced it) */
			continue;
		}
		while (r->depth < KINSTR_STACK_MAX_DEPTH && r->ips[r->depth])
			r->depth++;
		n++;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_rows);
	*rowsp = rows;
	return (int)n;
}

const char *kinstr_stacks__sym(const struct kinstr_kernel *k, uint64_t ip, char *buf, size_t len)
{
	const struct kinstr_func *f = kinstr_kernel__func_at(k, ip);

	if (f)
		snprintf(buf, len, "%s+0x%llx", f->name, (unsigned long long)(ip - f->addr));
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)ip);
	return buf;
}
