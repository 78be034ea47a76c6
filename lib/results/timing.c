// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* What timers measured, as results (include/kinstr/timing.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/timing.h>

static int cmp_callee(const void *a, const void *b)
{
	const struct kinstr_callee_time *x = a, *y = b;

	return x->wall_ns < y->wall_ns ? 1 : x->wall_ns > y->wall_ns ? -1 : 0;
}

unsigned int kinstr_timing__by_callee(const struct kinstr_callsite *sites, unsigned int n,
				      const struct kinstr_timer_stats *st, struct kinstr_callee_time *rows,
				      unsigned int *untimed)
{
	unsigned int i, j, nr = 0;

	*untimed = 0;
	for (i = 0; i < n; i++) {
		const struct kinstr_callsite *s = &sites[i];

		if (!s->timed) {
			++*untimed;
			continue;
		}
		for (j = 0; j < nr && rows[j].callee != s->callee; j++)
			;
		if (j == nr)
			rows[nr++] = (struct kinstr_callee_time){ s->callee, 0, 0, s->switches };
		rows[j].calls += st[s->timer].calls;
		rows[j].wall_ns += st[s->timer].wall_ns;
	}
	qsort(rows, nr, sizeof(*rows), cmp_callee);
	return nr;
}

static int cmp_path(const void *a, const void *b)
{
	const struct kinstr_timer_path *x = a, *y = b;
	uint32_t i;

	for (i = 0; i < x->depth && i < y->depth; i++)
		if (x->timers[i] != y->timers[i])
			return x->timers[i] < y->timers[i] ? -1 : 1;
	return (int)x->depth - (int)y->depth;
}

int kinstr_timing__folded(struct kinstr_dev *dev, struct kinstr_folded **out, size_t *n, uint64_t *dropped,
			  uint64_t *truncated)
{
	uint32_t cap = KINSTR_TIMER_PATHS_MAX, found, i;
	struct kinstr_timer_path *buf = calloc(cap, sizeof(*buf));
	struct kinstr_folded *all = NULL;
	uint64_t d, t;
	size_t m = 0, j, k;
	unsigned int cpu;
	int ret = 0;

	*out = NULL;
	*n = 0;
	*dropped = *truncated = 0;
	if (!buf)
		return -ENOMEM;
	for (cpu = 0;; cpu++) {
		struct kinstr_folded *g;

		ret = kinstr_timers__paths(dev, cpu, buf, cap, &found, &d, &t);
		if (ret == -EINVAL) {	/* past the last CPU */
			ret = 0;
			break;
		}
		if (ret)
			goto fail;
		*dropped += d;
		*truncated += t;
		g = realloc(all, (m + found + 1) * sizeof(*all));
		if (!g) {
			ret = -ENOMEM;
			goto fail;
		}
		all = g;
		for (i = 0; i < found; i++)
			all[m++].p = buf[i];
	}
	free(buf);
	if (!m) {
		free(all);
		return 0;
	}
	qsort(all, m, sizeof(*all), cmp_path);
	/* merge equal paths (other CPUs, or duplicates) */
	for (k = 1, j = 0; k < m; k++) {
		if (!cmp_path(&all[k].p, &all[j].p)) {
			all[j].p.calls += all[k].p.calls;
			all[j].p.wall_ns += all[k].p.wall_ns;
			all[j].p.oncpu_ns += all[k].p.oncpu_ns;
		} else {
			all[++j] = all[k];
		}
	}
	m = j + 1;
	for (k = 0; k < m; k++)
		all[k].self_ns = all[k].p.wall_ns;
	/* a child path is its parent's path and one more timer: in sorted order, after it */
	for (k = 0; k < m; k++)
		for (j = k + 1; j < m && all[j].p.depth > all[k].p.depth &&
		     !memcmp(all[j].p.timers, all[k].p.timers, all[k].p.depth * sizeof(uint32_t)); j++)
			if (all[j].p.depth == all[k].p.depth + 1)
				all[k].self_ns -= all[k].self_ns >= all[j].p.wall_ns ? all[j].p.wall_ns : all[k].self_ns;
	*out = all;
	*n = m;
	return 0;
fail:
	free(buf);
	free(all);
	return ret;
}

bool kinstr_timing__key_known(const char *key)
{
	return !strcmp(key, "wall") || !strcmp(key, "oncpu") || !strcmp(key, "calls") || !strcmp(key, "mean") ||
	       !strcmp(key, "max");
}

uint64_t kinstr_timing__key(const struct kinstr_timer_stats *s, const char *key)
{
	if (!strcmp(key, "oncpu"))
		return s->oncpu_ns;
	if (!strcmp(key, "calls"))
		return s->calls;
	if (!strcmp(key, "mean"))
		return s->calls > s->recursive ? s->wall_ns / (s->calls - s->recursive) : 0;
	if (!strcmp(key, "max"))
		return s->wall_max;
	return s->wall_ns;
}

/* By timer, then key (ctx: by comm?): equal rows (other CPUs, or duplicates) side by side. */
static int cmp_by_key(const void *a, const void *b, void *ctx)
{
	const struct kinstr_timer_by_row *x = a, *y = b;

	if (x->timer != y->timer)
		return x->timer < y->timer ? -1 : 1;
	if (*(const bool *)ctx)
		return strncmp(x->comm, y->comm, sizeof(x->comm));
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_by_wall(const void *a, const void *b, void *ctx)
{
	const struct kinstr_timer_by_row *x = a, *y = b;

	if (x->timer != y->timer)
		return x->timer < y->timer ? -1 : 1;
	if (x->wall_ns != y->wall_ns)
		return x->wall_ns > y->wall_ns ? -1 : 1;
	return cmp_by_key(a, b, ctx);
}

int kinstr_timing__by(struct kinstr_dev *dev, bool by_comm, struct kinstr_timer_by_row **out, size_t *n,
		      uint64_t *dropped)
{
	uint32_t cap = KINSTR_TIMER_BY_MAX, found, i;
	struct kinstr_timer_by_row *buf = calloc(cap, sizeof(*buf)), *all = NULL, *g;
	size_t m = 0, j, k;
	unsigned int cpu;
	uint64_t d;
	int ret = 0;

	*out = NULL;
	*n = 0;
	*dropped = 0;
	if (!buf)
		return -ENOMEM;
	for (cpu = 0;; cpu++) {
		ret = kinstr_timers__by(dev, cpu, buf, cap, &found, &d);
		if (ret == -EINVAL) {	/* past the last CPU */
			ret = 0;
			break;
		}
		if (ret)
			goto fail;
		*dropped += d;
		found = found < cap ? found : cap;
		g = realloc(all, (m + found + 1) * sizeof(*all));
		if (!g) {
			ret = -ENOMEM;
			goto fail;
		}
		all = g;
		for (i = 0; i < found; i++)
			all[m++] = buf[i];
	}
	free(buf);
	if (!m) {
		free(all);
		return 0;
	}
	qsort_r(all, m, sizeof(*all), cmp_by_key, &by_comm);
	for (k = 1, j = 0; k < m; k++) {
		if (!cmp_by_key(&all[k], &all[j], &by_comm)) {
			all[j].calls += all[k].calls;
			all[j].wall_ns += all[k].wall_ns;
			all[j].oncpu_ns += all[k].oncpu_ns;
			all[j].wall_min = all[k].wall_min < all[j].wall_min ? all[k].wall_min : all[j].wall_min;
			all[j].wall_max = all[k].wall_max > all[j].wall_max ? all[k].wall_max : all[j].wall_max;
		} else {
			all[++j] = all[k];
		}
	}
	m = j + 1;
	qsort_r(all, m, sizeof(*all), cmp_by_wall, &by_comm);
	*out = all;
	*n = m;
	return 0;
fail:
	free(buf);
	free(all);
	return ret;
}
