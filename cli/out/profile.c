// SPDX-License-Identifier: GPL-2.0
/* What kinstr profile prints: the table (with histograms and callees), JSON, folded stacks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/timing.h>
#include "cli/cli.h"

/* the table's sort, for qsort */
static const char *sort_key;
static const struct kinstr_timer_stats *sort_stats;

static int cmp_rows(const void *a, const void *b)
{
	uint64_t ka = kinstr_timing__key(&sort_stats[*(const unsigned int *)a], sort_key);
	uint64_t kb = kinstr_timing__key(&sort_stats[*(const unsigned int *)b], sort_key);

	return ka < kb ? 1 : ka > kb ? -1 : (int)(*(const unsigned int *)a - *(const unsigned int *)b);
}

static double us(uint64_t ns)
{
	return ns / 1000.0;
}

/* Where f's time goes: its callees' shares (call sites timed), then its own. */
static void print_calls(const struct cli_pfunc *p, const struct kinstr_timer_stats *st, uint64_t total)
{
	struct kinstr_callee_time rows[CLI_MAX_CALLS];
	uint64_t in_calls = 0;
	unsigned int n, i, untimed;

	n = kinstr_timing__by_callee(p->sites, p->nsites, st, rows, &untimed);
	for (i = 0; i < n; i++) {
		in_calls += rows[i].wall_ns;
		if (!rows[i].calls)
			continue;
		printf("    %-32s %10llu %12.3f  %5.1f%%%s\n", rows[i].callee ? rows[i].callee->name : "(indirect calls)",
		       (unsigned long long)rows[i].calls, rows[i].wall_ns / 1e6,
		       total ? 100.0 * rows[i].wall_ns / total : 0.0,
		       rows[i].switches ? "  (switched out: it switches threads)" : "");
	}
	printf("    %-32s %10s %12.3f  %5.1f%%%s\n", "[self]", "", (total > in_calls ? total - in_calls : 0) / 1e6,
	       total ? 100.0 * (total > in_calls ? total - in_calls : 0) / total : 0.0,
	       untimed ? "  (includes calls that could not be timed)" : "");
}

void cli_profile__table(const struct cli_pfunc *pf, unsigned int n, const struct kinstr_timer_stats *st, bool hist,
			bool show_calls, const char *key)
{
	unsigned int *order = calloc(n, sizeof(*order)), i, b;

	if (!order)
		return;
	for (i = 0; i < n; i++)
		order[i] = i;
	sort_stats = st;
	sort_key = key;
	qsort(order, n, sizeof(*order), cmp_rows);
	if (show_calls)
		printf("(under each function: its callees' share of its wall time, then its own)\n");
	printf("%-36s %10s %12s %12s %10s %10s %10s\n", "FUNCTION", "CALLS", "WALL ms", "ONCPU ms", "MIN us", "MEAN us",
	       "MAX us");
	for (i = 0; i < n; i++) {
		const struct kinstr_timer_stats *s = &st[order[i]];
		uint64_t timed = s->calls - s->recursive;

		printf("%-36s %10llu %12.3f %12.3f %10.1f %10.1f %10.1f\n", pf[order[i]].f->name,
		       (unsigned long long)s->calls, s->wall_ns / 1e6, s->oncpu_ns / 1e6,
		       timed ? us(s->wall_min) : 0.0, timed ? us(s->wall_ns / timed) : 0.0, us(s->wall_max));
		if (show_calls && timed)
			print_calls(&pf[order[i]], st, s->wall_ns);
		if (!hist || !timed)
			continue;
		for (b = 0; b < KINSTR_TIMER_HIST; b++) {
			uint64_t max = 0;
			unsigned int j, bar;

			if (!s->hist[b])
				continue;
			for (j = 0; j < KINSTR_TIMER_HIST; j++)
				if (s->hist[j] > max)
					max = s->hist[j];
			bar = (unsigned int)(40 * s->hist[b] / max);
			printf("    [%8.1f us, %8.1f us) %10llu %.*s\n", b ? (1ull << b) / 1000.0 : 0.0,
			       (1ull << (b + 1)) / 1000.0, (unsigned long long)s->hist[b], (int)(bar ? bar : 1),
			       "****************************************");
		}
	}
	fflush(stdout);
	free(order);
}

void cli_profile__by_table(const struct cli_pfunc *pf, unsigned int n, const struct cli_profile_by *by)
{
	bool comm = !strcmp(by->key, "comm");
	size_t i;

	printf("\n%-36s %-16s%s %10s %12s %12s %10s %10s %10s\n", "FUNCTION", comm ? "COMM" : by->key[0] == 'p' ?
	       "PID" : "TID", comm ? "" : " COMM            ", "CALLS", "WALL ms", "ONCPU ms", "MIN us", "MEAN us",
	       "MAX us");
	for (i = 0; i < by->n; i++) {
		const struct kinstr_timer_by_row *r = &by->rows[i];
		char id[24];

		if (r->timer >= n)
			continue;	/* a call site's timer (--calls) */
		snprintf(id, sizeof(id), "%u", r->id);
		printf("%-36s %-16.16s", pf[r->timer].f->name, comm ? r->comm : id);
		if (!comm)
			printf(" %-16.16s", r->comm);
		printf(" %10llu %12.3f %12.3f %10.1f %10.1f %10.1f\n", (unsigned long long)r->calls, r->wall_ns / 1e6,
		       r->oncpu_ns / 1e6, us(r->wall_min), r->calls ? us(r->wall_ns / r->calls) : 0.0, us(r->wall_max));
	}
	if (by->dropped)
		fprintf(stderr, "kinstr: %llu timed calls found no row of --by's %u per CPU: the rows above are short "
			"by that many\n", (unsigned long long)by->dropped, KINSTR_TIMER_BY_MAX);
	fflush(stdout);
}

static void by_json(const struct cli_pfunc *pf, unsigned int n, const struct cli_profile_by *by)
{
	bool comm = !strcmp(by->key, "comm"), first = true;
	size_t i;

	printf(",\"by\":{\"key\":\"%s\",\"dropped\":%llu,\"rows\":[", by->key, (unsigned long long)by->dropped);
	for (i = 0; i < by->n; i++) {
		const struct kinstr_timer_by_row *r = &by->rows[i];
		char c[17];

		if (r->timer >= n)
			continue;
		memcpy(c, r->comm, 16);
		c[16] = 0;
		printf("%s{\"function\":", first ? "" : ",");
		first = false;
		cli_json_str(pf[r->timer].f->name);
		if (!comm)
			printf(",\"%s\":%u", by->key, r->id);
		printf(",\"comm\":");
		cli_json_str(c);
		printf(",\"calls\":%llu,\"wall_ns\":%llu,\"oncpu_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu}",
		       (unsigned long long)r->calls, (unsigned long long)r->wall_ns, (unsigned long long)r->oncpu_ns,
		       (unsigned long long)r->wall_min, (unsigned long long)r->wall_max);
	}
	printf("]}");
}

void cli_profile__json(const struct cli_pfunc *pf, unsigned int n, const struct kinstr_timer_stats *st, double secs,
		       int status, bool show_calls, const struct cli_profile_by *by)
{
	unsigned int i, b;

	printf("{\"seconds\":%.3f,", secs);
	if (status >= 0)
		printf("\"command_status\":%d,", status);
	printf("\"functions\":[");
	for (i = 0; i < n; i++) {
		const struct kinstr_timer_stats *s = &st[i];
		uint64_t timed = s->calls - s->recursive;

		printf("%s{\"function\":", i ? "," : "");
		cli_json_str(pf[i].f->name);
		printf(",\"exits\":%u,\"calls\":%llu,\"starts\":%llu,\"unmatched\":%llu,\"recursive\":%llu,"
		       "\"dropped\":%llu,\"wall_ns\":%llu,\"oncpu_ns\":%llu,\"min_ns\":%llu,\"mean_ns\":%llu,"
		       "\"max_ns\":%llu,\"hist_log2_ns\":[", pf[i].exits, (unsigned long long)s->calls,
		       (unsigned long long)s->starts, (unsigned long long)s->unmatched,
		       (unsigned long long)s->recursive, (unsigned long long)s->dropped,
		       (unsigned long long)s->wall_ns, (unsigned long long)s->oncpu_ns,
		       (unsigned long long)(timed ? s->wall_min : 0), (unsigned long long)(timed ? s->wall_ns / timed : 0),
		       (unsigned long long)s->wall_max);
		for (b = 0; b < KINSTR_TIMER_HIST; b++)
			printf("%s%llu", b ? "," : "", (unsigned long long)s->hist[b]);
		printf("]");
		if (show_calls) {
			struct kinstr_callee_time rows[CLI_MAX_CALLS];
			unsigned int nr, r, untimed;
			uint64_t in_calls = 0;

			nr = kinstr_timing__by_callee(pf[i].sites, pf[i].nsites, st, rows, &untimed);
			printf(",\"untimed_call_sites\":%u,\"callees\":[", untimed);
			for (r = 0; r < nr; r++) {
				printf("%s{\"callee\":", r ? "," : "");
				cli_json_str(rows[r].callee ? rows[r].callee->name : "(indirect calls)");
				printf(",\"calls\":%llu,\"wall_ns\":%llu,\"switches_threads\":%s}",
				       (unsigned long long)rows[r].calls, (unsigned long long)rows[r].wall_ns,
				       rows[r].switches ? "true" : "false");
				in_calls += rows[r].wall_ns;
			}
			printf("],\"self_ns\":%llu", (unsigned long long)(s->wall_ns > in_calls ? s->wall_ns - in_calls : 0));
		}
		printf("}");
	}
	printf("]");
	if (by)
		by_json(pf, n, by);
	printf("}\n");
}

int cli_profile__folded(struct kinstr_dev *dev, const struct cli_pfunc *pf, unsigned int n)
{
	struct kinstr_folded *all;
	uint64_t dropped, truncated;
	size_t m, i;
	uint32_t j;
	int ret = kinstr_timing__folded(dev, &all, &m, &dropped, &truncated);

	if (ret) {
		cli_err("cannot read the paths: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < m; i++) {
		if (all[i].self_ns < 1000)
			continue;
		for (j = 0; j < all[i].p.depth; j++)
			printf("%s%s", j ? ";" : "", all[i].p.timers[j] < n ? pf[all[i].p.timers[j]].f->name : "?");
		printf(" %llu\n", (unsigned long long)(all[i].self_ns / 1000));
	}
	if (dropped || truncated)
		fprintf(stderr, "kinstr: %llu calls not in a path (table full), %llu paths cut at %d functions\n",
			(unsigned long long)dropped, (unsigned long long)truncated, KINSTR_TIMER_PATH_DEPTH);
	free(all);
	return 0;
}

void cli_profile__live(void *ctx, double dt)
{
	struct cli_profile_live *lc = ctx;

	if (kinstr_timers__read(lc->dev, 0, lc->ntimers, lc->st) == 0) {
		printf("\033[H\033[2J");
		cli_profile__table(lc->pf, lc->n, lc->st, false, lc->calls, lc->key);
	}
}

void cli_profile__installed(const struct kinstr_probeset *ps, unsigned int n, bool ends)
{
	size_t np = kinstr_probeset__cnt(ps), kinds[4] = { 0 }, j;

	for (j = 0; j < np; j++)
		kinds[kinstr_probeset__info(ps, j)->kind & 3]++;
	fprintf(stderr, "kinstr: timing %u functions with %zu probes (%zu jump, %zu trap, %zu ftrace)%s\n", n, np,
		kinds[KINSTR_PROBE_JUMP], kinds[KINSTR_PROBE_TRAP], kinds[KINSTR_PROBE_FTRACE],
		ends ? "" : "; Ctrl-C to stop");
}
