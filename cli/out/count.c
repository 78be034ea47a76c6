// SPDX-License-Identifier: GPL-2.0
/* What kinstr count prints: the table (live or at the end), JSON, the plan of --dry-run, --by's rows and stacks. */
#include <stdio.h>

#include <kinstr/bpf.h>
#include <kinstr/probe.h>
#include <kinstr/stacks.h>
#include <kinstr/tally.h>
#include <kinstr/trace.h>
#include "cli/cli.h"

static void probe_name(const struct kinstr_probe_info *p, char *buf, size_t size)
{
	/* its entry: nothing runs before it but the ENDBR, if any */
	if (p->addr == p->func->addr + p->func->endbr)
		snprintf(buf, size, "%s", p->func->name);
	else
		snprintf(buf, size, "%s+0x%llx", p->func->name, (unsigned long long)(p->addr - p->func->addr));
}

/*
 * How a counting probe counts: inline in its slot (flags dead at the site), inline between
 * pushfq and popfq (flags live), or through a stub call (a module before ABI 0.8).
 */
static const char *cli_count__how(const struct kinstr_probe_info *p)
{
	return !p->inline_count ? "stub" : p->saves_flags ? "pushf" : "inline";
}

void cli_count__table(const struct kinstr_probeset *ps, const uint64_t *hits, const uint64_t *prev,
			double dt, bool rates)
{
	size_t i;

	printf("%-44s %-6s %-6s %14s%s\n", "PROBE", "CLASS", "ACTION", "HITS", rates ? "         HITS/S" : "");
	for (i = 0; i < kinstr_probeset__cnt(ps); i++) {
		const struct kinstr_probe_info *p = kinstr_probeset__info(ps, i);
		char name[160];

		probe_name(p, name, sizeof(name));
		printf("%-44s %-6s %-6s %14llu", name, kinstr_probe_kind__str(p->kind),
		       cli_count__how(p), (unsigned long long)hits[i]);
		if (rates)
			printf(" %14.0f", dt > 0 ? (hits[i] - prev[i]) / dt : 0.0);
		printf("\n");
	}
	fflush(stdout);
}

void cli_count__json(const struct kinstr_probeset *ps, const uint64_t *hits, const uint64_t *filtered, double secs,
		     int status)
{
	size_t i;

	printf("{\"seconds\":%.3f,", secs);
	if (status >= 0)
		printf("\"command_status\":%d,", status);
	printf("\"probes\":[");
	for (i = 0; i < kinstr_probeset__cnt(ps); i++) {
		const struct kinstr_probe_info *p = kinstr_probeset__info(ps, i);
		char name[160];

		probe_name(p, name, sizeof(name));
		printf("%s{\"probe\":", i ? "," : "");
		cli_json_str(name);
		printf(",\"addr\":\"0x%llx\",\"class\":\"%s\",\"action\":\"%s\",\"hits\":%llu",
		       (unsigned long long)p->addr, kinstr_probe_kind__str(p->kind),
		       cli_count__how(p), (unsigned long long)hits[i]);
		if (filtered)
			printf(",\"filtered\":%llu", (unsigned long long)filtered[i]);
		printf("}");
	}
	printf("]}\n");
}

void cli_count__plan(const struct kinstr_probeset *ps, const struct kinstr_kernel *k)
{
	size_t i, j;

	printf("%-44s %-6s %-18s %s\n", "PROBE", "CLASS", "ADDRESS", "DISPLACED BYTES");
	for (i = 0; i < kinstr_probeset__cnt(ps); i++) {
		const struct kinstr_probe_info *p = kinstr_probeset__info(ps, i);
		const unsigned char *b = kinstr_kernel__text(k, p->addr, p->displaced_len);
		char name[160];

		probe_name(p, name, sizeof(name));
		printf("%-44s %-6s 0x%016llx ", name, kinstr_probe_kind__str(p->kind),
		       (unsigned long long)p->addr);
		for (j = 0; b && j < p->displaced_len; j++)
			printf("%02x ", b[j]);
		printf("\n");
	}
	printf("dry run: %zu probes, nothing patched\n", kinstr_probeset__cnt(ps));
}


/* kinstr attach: each probe's hits, those its program did not run for (guards), then the maps. */
void cli_attach__print(const struct kinstr_probeset *ps, const uint64_t *hits, const uint64_t *missed,
		       const struct kinstr_bpf_obj *o, bool json, double secs, int status)
{
	size_t i;

	if (json) {
		printf("{\"program\":");
		cli_json_str(kinstr_bpf_obj__prog_name(o));
		printf(",\"seconds\":%.3f,", secs);
		if (status >= 0)
			printf("\"command_status\":%d,", status);
		printf("\"probes\":[");
	} else {
		printf("%-44s %-6s %14s %12s\n", "PROBE", "CLASS", "HITS", "NOT RUN");
	}
	for (i = 0; i < kinstr_probeset__cnt(ps); i++) {
		const struct kinstr_probe_info *p = kinstr_probeset__info(ps, i);
		char name[160];

		probe_name(p, name, sizeof(name));
		if (json) {
			printf("%s{\"probe\":", i ? "," : "");
			cli_json_str(name);
			printf(",\"addr\":\"0x%llx\",\"class\":\"%s\",\"hits\":%llu,\"not_run\":%llu}",
			       (unsigned long long)p->addr, kinstr_probe_kind__str(p->kind), (unsigned long long)hits[i],
			       (unsigned long long)missed[i]);
		} else {
			printf("%-44s %-6s %14llu %12llu\n", name, kinstr_probe_kind__str(p->kind),
			       (unsigned long long)hits[i], (unsigned long long)missed[i]);
		}
	}
	if (json) {
		printf("],\"maps\":");
		fflush(stdout);
		kinstr_bpf_obj__print_maps(o, stdout, true);
		printf("}\n");
	} else {
		printf("\n");
		kinstr_bpf_obj__print_maps(o, stdout, false);
	}
	fflush(stdout);
}

void cli_count__by_print(const struct kinstr_tally *ta, const struct kinstr_trace_event *ev, unsigned int key,
			 bool json, double secs, int status, uint64_t filtered)
{
	size_t i, n = kinstr_tally__row_cnt(ta);

	if (json) {
		printf("{\"by\":\"%s\",\"seconds\":%.3f,\"rows\":[", kinstr_tally_key__str(key), secs);
		for (i = 0; i < n; i++) {
			const struct kinstr_tally_row *r = kinstr_tally__row(ta, i);
			bool str = key == KINSTR_TALLY_VALUE && ev[r->event].vals[0].v.kind == KINSTR_VAL_STR;

			printf("%s{\"probe\":", i ? "," : "");
			cli_json_str(ev[r->event].name);
			if (str) {
				printf(",\"value\":");
				cli_json_str(r->str ? r->str : "");
				printf(",\"value_full\":%s,\"comm\":", r->str_full ? "true" : "false");
				cli_json_str(r->comm);
				printf(",\"comm_several\":%s", r->comm_several ? "true" : "false");
			} else if (key != KINSTR_TALLY_COMM) {
				printf(",\"%s\":%llu,\"comm\":", kinstr_tally_key__str(key), (unsigned long long)r->key);
				cli_json_str(r->comm);
				if (key == KINSTR_TALLY_VALUE)
					printf(",\"comm_several\":%s", r->comm_several ? "true" : "false");
			} else {
				printf(",\"comm\":");
				cli_json_str(r->comm);
			}
			printf(",\"hits\":%llu}", (unsigned long long)r->hits);
		}
		printf("],\"lost\":%llu,\"overflow\":%llu,\"filtered\":%llu,\"status\":%d}\n",
		       (unsigned long long)kinstr_tally__lost(ta), (unsigned long long)kinstr_tally__overflow(ta),
		       (unsigned long long)filtered, status);
		return;
	}
	static const char *const head[KINSTR_TALLY_NR_KEYS] = { "COMM", "PID", "TID", "VALUE" };
	size_t full = 0;

	for (i = 0; i < n; i++)
		if (kinstr_tally__row(ta, i)->str) {
			/* strings last and whole: no column is wide enough for a path */
			printf("%-40s %-16s %12s  %s\n", "PROBE", "COMM", "HITS", "VALUE");
			break;
		}
	if (i == n)
		printf("%-40s %-20s %-16s %12s\n", "PROBE", head[key], key == KINSTR_TALLY_COMM ? "" : "COMM", "HITS");
	for (i = 0; i < n; i++) {
		const struct kinstr_tally_row *r = kinstr_tally__row(ta, i);
		char k[64];

		if (r->str) {
			printf("%-40s %-16s %12llu  %s%s\n", ev[r->event].name, r->comm_several ? "(several)" : r->comm,
			       (unsigned long long)r->hits,
			       r->str, r->str_full ? " [full]" : "");
			full += r->str_full;
			continue;
		}
		if (key == KINSTR_TALLY_COMM)
			snprintf(k, sizeof(k), "%s", r->comm);
		else if (key == KINSTR_TALLY_VALUE)
			snprintf(k, sizeof(k), "%llu (0x%llx)", (unsigned long long)r->key, (unsigned long long)r->key);
		else
			snprintf(k, sizeof(k), "%llu", (unsigned long long)r->key);
		printf("%-40s %-20s %-16s %12llu\n", ev[r->event].name, k, key == KINSTR_TALLY_COMM ? "" :
		       r->comm_several ? "(several)" : r->comm, (unsigned long long)r->hits);
	}
	if (full)
		fprintf(stderr, "kinstr: %zu values [full]: they filled the string's bound (string[N] records N - 1 "
			"characters, at most string[%d]); longer strings are cut there and share a row\n", full,
			KINSTR_TRACE_STR_MAX);
	if (filtered)
		fprintf(stderr, "kinstr: %llu hits filtered out by the predicates\n", (unsigned long long)filtered);
	if (kinstr_tally__lost(ta) || kinstr_tally__overflow(ta))
		fprintf(stderr, "kinstr: %llu hits not counted (a probe inside kinstr's own action), %llu past the "
			"tables' rows: the counts above are short by that many\n", (unsigned long long)kinstr_tally__lost(ta),
			(unsigned long long)kinstr_tally__overflow(ta));
}

void cli_count__stacks_print(const struct kinstr_probeset *ps, const struct kinstr_kernel *k,
			     const struct kinstr_stack_row *rows, int n, uint64_t lost, bool json, bool folded,
			     double secs, int status)
{
	char sym[192];
	int i;
	uint32_t d;

	if (json)
		printf("{\"by\":\"stack\",\"seconds\":%.3f,\"stacks\":[", secs);
	for (i = 0; i < n; i++) {
		const struct kinstr_stack_row *r = &rows[i];
		const struct kinstr_probe_info *p = kinstr_probeset__info(ps, r->probe);

		if (json) {
			printf("%s{\"probe\":", i ? "," : "");
			cli_json_str(kinstr_stacks__sym(k, p->addr, sym, sizeof(sym)));
			printf(",\"addr\":\"0x%llx\",\"hits\":%llu,\"frames\":[", (unsigned long long)p->addr,
			       (unsigned long long)r->hits);
			for (d = 0; d < r->depth; d++) {
				printf("%s", d ? "," : "");
				cli_json_str(kinstr_stacks__sym(k, r->ips[d], sym, sizeof(sym)));
			}
			printf("]}");
		} else if (folded) {
			for (d = r->depth; d-- > 0;)
				printf("%s%s", kinstr_stacks__sym(k, r->ips[d], sym, sizeof(sym)), d ? ";" : "");
			printf(" %llu\n", (unsigned long long)r->hits);
		} else {
			printf("@[\n");
			for (d = 0; d < r->depth; d++)
				printf("    %s\n", kinstr_stacks__sym(k, r->ips[d], sym, sizeof(sym)));
			printf("]: %llu\n", (unsigned long long)r->hits);
		}
	}
	if (json)
		printf("],\"lost\":%llu,\"status\":%d}\n", (unsigned long long)lost, status);
	if (lost)
		fprintf(stderr, "kinstr: %llu hits lost (no room for their stack): the counts above are short by that many\n",
			(unsigned long long)lost);
}
