// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A trace's time line for kinstr report --html (include/kinstr/report.h): every event counted per
 * CPU and per class in a first pass, then at most max of them (every step-th in the reader's order)
 * written as [cpu, class, ns since the trace's begin] for the page to draw.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_read.h>
#include <kinstr/report.h>

#define MAX_CPUS 8192

struct tl_count {
	uint64_t events, lost;
	bool seen;
};

static void put_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == '<')	/* '<': the text goes inside <script> */
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* One pass over the events: per CPU and per class counted, and the time bounds. 0 or -errno. */
static int count_pass(const char *dir, struct tl_count *cpu, uint64_t *per_class, unsigned int nclass,
		      uint64_t *total, uint64_t *t0, uint64_t *t1, struct kinstr_why *why)
{
	struct kinstr_ctf_reader *r = kinstr_ctf_reader__open(dir, why);
	struct kinstr_ctf_event ev;
	int ret;

	if (!r)
		return -errno;
	*total = 0;
	while ((ret = kinstr_ctf_reader__next(r, &ev, why)) == 1) {
		if (ev.cpu >= MAX_CPUS || ev.class_id >= nclass) {
			ret = kinstr_why__fail(why, -EBADMSG, "%s: an event of CPU %u, class %u: out of range", dir, ev.cpu,
					       ev.class_id);
			break;
		}
		cpu[ev.cpu].events++;
		cpu[ev.cpu].seen = true;
		per_class[ev.class_id]++;
		if (!*total || ev.ts < *t0)
			*t0 = ev.ts;
		if (!*total || ev.ts > *t1)
			*t1 = ev.ts;
		++*total;
	}
	kinstr_ctf_reader__close(r);
	return ret < 0 ? ret : 0;
}

int kinstr_report__trace_json(FILE *out, const char *dir, const char *name, size_t max, struct kinstr_why *why)
{
	struct kinstr_ctf_reader *r = kinstr_ctf_reader__open(dir, why);
	struct tl_count *cpu = NULL;
	uint64_t *per_class = NULL, total = 0, t0 = 0, t1 = 0, step, i = 0, shown = 0;
	struct kinstr_ctf_event ev;
	unsigned int c, nclass, s;
	const char *clock;
	int ret;

	if (!r)
		return -errno;
	nclass = kinstr_ctf_reader__class_cnt(r);
	cpu = calloc(MAX_CPUS, sizeof(*cpu));
	per_class = calloc(nclass ? nclass : 1, sizeof(*per_class));
	if (!cpu || !per_class) {
		ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	for (s = 0; s < kinstr_ctf_reader__stream_cnt(r); s++) {
		const struct kinstr_ctf_stream_info *si = kinstr_ctf_reader__stream(r, s);

		if (si->cpu < MAX_CPUS) {
			cpu[si->cpu].lost += si->events_discarded;
			cpu[si->cpu].seen = true;
		}
	}
	ret = count_pass(dir, cpu, per_class, nclass, &total, &t0, &t1, why);
	if (ret)
		goto out;
	max = max ? max : KINSTR_REPORT_TRACE_MAX;
	step = total > max ? (total + max - 1) / max : 1;
	clock = kinstr_ctf_reader__clock_name(r);
	fputs("{\"timeline\":{\"trace\":", out);
	put_str(out, name);
	fputs(",\"clock\":", out);
	put_str(out, clock ? clock : "");
	fprintf(out, ",\"begin_ns\":%llu,\"end_ns\":%llu,\"events\":%llu,\"step\":%llu,\"classes\":[",
		(unsigned long long)t0, (unsigned long long)t1, (unsigned long long)total, (unsigned long long)step);
	for (c = 0; c < nclass; c++) {	/* indexed by id: an id the metadata skips gets a name too */
		const struct kinstr_ctf_class *k = kinstr_ctf_reader__class(r, c);
		char unnamed[32];

		snprintf(unnamed, sizeof(unnamed), "(class %u)", c);
		fprintf(out, "%s{\"name\":", c ? "," : "");
		put_str(out, k && k->name ? k->name : unnamed);
		fprintf(out, ",\"events\":%llu}", (unsigned long long)per_class[c]);
	}
	fputs("],\"cpus\":[", out);
	for (c = 0, s = 0; c < MAX_CPUS; c++)
		if (cpu[c].seen)
			fprintf(out, "%s{\"cpu\":%u,\"events\":%llu,\"lost\":%llu}", s++ ? "," : "", c,
				(unsigned long long)cpu[c].events, (unsigned long long)cpu[c].lost);
	fputs("],\"ev\":[", out);
	while ((ret = kinstr_ctf_reader__next(r, &ev, why)) == 1) {
		if (i++ % step)
			continue;
		fprintf(out, "%s[%u,%u,%llu]", shown++ ? "," : "", ev.cpu, ev.class_id, (unsigned long long)(ev.ts - t0));
	}
	if (ret < 0)
		goto out;
	fprintf(out, "],\"shown\":%llu}}\n", (unsigned long long)shown);
	ret = ferror(out) ? kinstr_why__fail(why, -EIO, "%s", strerror(EIO)) : 0;
out:
	kinstr_ctf_reader__close(r);
	free(cpu);
	free(per_class);
	return ret;
}
