// SPDX-License-Identifier: GPL-2.0
/* What kinstr span prints: per key and in total, count, min, mean, max, and the histogram; or JSON. */
#include <stdio.h>
#include <string.h>

#include <kinstr/span.h>
#include <kinstr/tally.h>
#include "cli/cli.h"

static void stats_json(const struct kinstr_span_stats *st)
{
	unsigned int b, first = 1;

	printf("\"count\":%llu,\"min_ns\":%llu,\"mean_ns\":%.1f,\"max_ns\":%llu,\"hist\":{", (unsigned long long)st->count,
	       (unsigned long long)st->min, st->count ? (double)st->sum / (double)st->count : 0.0,
	       (unsigned long long)st->max);
	for (b = 0; b < KINSTR_SPAN_HIST; b++)
		if (st->hist[b]) {
			printf("%s\"%llu\":%llu", first ? "" : ",", b ? 1ull << (b - 1) : 0ull, (unsigned long long)st->hist[b]);
			first = 0;
		}
	printf("}");
}

static void hist_print(const struct kinstr_span_stats *st)
{
	uint64_t most = 0;
	unsigned int b, lo = KINSTR_SPAN_HIST, hi = 0;

	for (b = 0; b < KINSTR_SPAN_HIST; b++)
		if (st->hist[b]) {
			most = st->hist[b] > most ? st->hist[b] : most;
			lo = b < lo ? b : lo;
			hi = b;
		}
	for (b = lo; b <= hi && most; b++) {
		char bar[41];
		unsigned int w = (unsigned int)(40 * st->hist[b] / most);

		memset(bar, '@', w);
		bar[w] = 0;
		printf("  [%llu, %llu) ns %12llu |%-40s|\n", b ? 1ull << (b - 1) : 0ull, 1ull << b,
		       (unsigned long long)st->hist[b], bar);
	}
}

void cli_span__print(const struct kinstr_spanner *s, const char *a, const char *b, unsigned int key, bool hist,
		     bool json, double secs, int status, uint64_t filtered)
{
	const struct kinstr_span_result *r = kinstr_spanner__result(s);
	size_t i, n = kinstr_spanner__row_cnt(s);

	if (json) {
		printf("{\"from\":");
		cli_json_str(a);
		printf(",\"to\":");
		cli_json_str(b);
		printf(",\"key\":\"%s\",\"seconds\":%.3f,\"total\":{", kinstr_tally_key__str(key), secs);
		stats_json(&r->total);
		printf("},\"keys\":[");
		for (i = 0; i < n; i++) {
			const struct kinstr_span_row *row = kinstr_spanner__row(s, i);

			printf("%s{\"%s\":%llu,\"comm\":", i ? "," : "", kinstr_tally_key__str(key),
			       (unsigned long long)row->key);
			cli_json_str(row->comm);
			printf(",");
			stats_json(&row->st);
			printf("}");
		}
		printf("],\"unmatched_starts\":%llu,\"unmatched_stops\":%llu,\"lost\":%llu,\"overflow\":%llu,"
		       "\"filtered\":%llu,\"status\":%d}\n",
		       (unsigned long long)r->unmatched_starts, (unsigned long long)r->unmatched_stops,
		       (unsigned long long)r->lost, (unsigned long long)r->overflow, (unsigned long long)filtered, status);
		return;
	}
	printf("%s -> %s, by %s\n", a, b, kinstr_tally_key__str(key));
	printf("%-20s %-16s %10s %12s %14s %12s\n", key == KINSTR_TALLY_VALUE ? "VALUE" : key == KINSTR_TALLY_PID ? "PID" : "TID",
	       "COMM", "COUNT", "MIN ns", "MEAN ns", "MAX ns");
	for (i = 0; i < n; i++) {
		const struct kinstr_span_row *row = kinstr_spanner__row(s, i);
		char k[24];

		snprintf(k, sizeof(k), key == KINSTR_TALLY_VALUE ? "0x%llx" : "%llu", (unsigned long long)row->key);
		printf("%-20s %-16s %10llu %12llu %14.1f %12llu\n", k, row->comm, (unsigned long long)row->st.count,
		       (unsigned long long)row->st.min, (double)row->st.sum / (double)row->st.count,
		       (unsigned long long)row->st.max);
	}
	printf("total: %llu spans, min %llu ns, mean %.1f ns, max %llu ns; unmatched: %llu starts, %llu stops; "
	       "lost %llu, overflow %llu\n", (unsigned long long)r->total.count, (unsigned long long)r->total.min,
	       r->total.count ? (double)r->total.sum / (double)r->total.count : 0.0, (unsigned long long)r->total.max,
	       (unsigned long long)r->unmatched_starts, (unsigned long long)r->unmatched_stops,
	       (unsigned long long)r->lost, (unsigned long long)r->overflow);
	if (filtered)
		printf("filtered: %llu hits the predicates rejected (no start, no stop)\n", (unsigned long long)filtered);
	if (hist)
		hist_print(&r->total);
}
