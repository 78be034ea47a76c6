// SPDX-License-Identifier: GPL-2.0
/* What kinstr count prints: the table (live or at the end), JSON, the plan of --dry-run. */
#include <stdio.h>

#include <kinstr/bpf.h>
#include <kinstr/probe.h>
#include "cli.h"

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

void cli_count__json(const struct kinstr_probeset *ps, const uint64_t *hits, double secs, int status)
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
		printf(",\"addr\":\"0x%llx\",\"class\":\"%s\",\"action\":\"%s\",\"hits\":%llu}",
		       (unsigned long long)p->addr, kinstr_probe_kind__str(p->kind),
		       cli_count__how(p), (unsigned long long)hits[i]);
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
