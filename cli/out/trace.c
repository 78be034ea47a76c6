// SPDX-License-Identifier: GPL-2.0
/* What kinstr trace prints besides the trace: --live events, the cap, each CPU's totals. */
#include <stdio.h>

#include <kinstr/record.h>
#include "cli/cli.h"

/* --live: each event as it is written */
void cli_trace__event(void *ctx, const struct kinstr_trace_event *e, unsigned int cpu, const struct kinstr_trace_rec *r,
			const union kinstr_ctf_value *vals)
{
	unsigned int i;

	printf("[%llu.%09llu] cpu %u %.16s %u/%u %s:", (unsigned long long)(r->ts / 1000000000),
	       (unsigned long long)(r->ts % 1000000000), cpu, r->comm, r->pid, r->tid, e->name);
	for (i = 0; i < e->nvals; i++) {
		const struct kinstr_value *t = &e->vals[i];

		if (t->type == KINSTR_CTF_STRING)
			printf(" %s=\"%s\"", t->name, vals[3 + i].str);
		else if (t->hex)
			printf(" %s=0x%llx", t->name, (unsigned long long)vals[3 + i].u);
		else if (t->type >= KINSTR_CTF_S8 && t->type <= KINSTR_CTF_S64)
			printf(" %s=%lld", t->name, (long long)vals[3 + i].s);
		else
			printf(" %s=%llu", t->name, (unsigned long long)vals[3 + i].u);
	}
	printf("\n");
}

void cli_trace__capped(struct kinstr_recording *rec)
{
	bool first;

	if (kinstr_recording__capped(rec, &first) && first)
		fprintf(stderr, "kinstr: the trace reached --max-size (%llu bytes): later events are counted as lost\n",
			(unsigned long long)kinstr_recording__max_size(rec));
}

void cli_trace__summary(const struct kinstr_rec_cpu *cpus, const struct kinstr_trace_stats *st, unsigned int nr_cpus,
			const char *dir, uint64_t missed)
{
	uint64_t total_rec = 0, total_lost = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (cpus[cpu].recorded || cpus[cpu].lost) {
			char cut[64] = "";

			if (cpus[cpu].cut)
				snprintf(cut, sizeof(cut), ", over --max-size %llu", (unsigned long long)cpus[cpu].cut);
			fprintf(stderr, "kinstr: cpu %u: %llu events recorded, %llu lost (full %llu, overwritten %llu, "
				"too big %llu, nested %llu%s)\n", cpu, (unsigned long long)cpus[cpu].recorded,
				(unsigned long long)cpus[cpu].lost, (unsigned long long)st[cpu].lost_full,
				(unsigned long long)st[cpu].lost_wrap, (unsigned long long)st[cpu].lost_big,
				(unsigned long long)st[cpu].lost_nest, cut);
		}
		total_rec += cpus[cpu].recorded;
		total_lost += cpus[cpu].lost;
	}
	fprintf(stderr, "kinstr: %llu events recorded, %llu lost, in %s\n", (unsigned long long)total_rec,
		(unsigned long long)total_lost, dir);
	if (missed)
		fprintf(stderr, "kinstr: %llu hits not recorded: recursion (a probe hit inside kinstr's own "
			"tracer, e.g. in the clock it reads)\n", (unsigned long long)missed);
}
