// SPDX-License-Identifier: GPL-2.0
/*
 * Install and remove probes on hot functions in many batches while the caller runs a workload:
 *   storm BATCHES PROBES_PER_BATCH FUNC...
 * Even batches install asynchronously (INSTALL returns with the int3s in; most are removed
 * before the module's worker writes their jumps), odd ones wait for the jumps.
 * Prints the totals, the time per batch, and vmalloc/percpu memory before and after (from
 * /proc/meminfo); exits 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kinstr/probe.h>

static long meminfo(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

struct cand {
	const struct kinstr_func *f;
	unsigned long long addr;
};

int main(int argc, char **argv)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	int batches = argc > 2 ? atoi(argv[1]) : 0, per = argc > 2 ? atoi(argv[2]) : 0, b, a;
	long vm0 = meminfo("VmallocUsed"), pc0 = meminfo("Percpu"), installs = 0, hits_seen = 0;
	struct cand *c = NULL;
	size_t n = 0, cap = 0;
	struct timespec t0, t1;
	struct kinstr_why why;

	if (!k || batches <= 0 || per <= 0 || argc < 4) {
		fprintf(stderr, "usage: storm BATCHES PROBES FUNC... (with /dev/kinstr)\n");
		return 1;
	}
	for (a = 3; a < argc; a++) {
		const struct kinstr_func *f = kinstr_kernel__find_func(k, argv[a]);
		struct kinstr_fn *fn = f ? kinstr_fn__analyze(k, f) : NULL;
		unsigned long long end = 0;
		size_t i;

		for (i = 0; fn && i < kinstr_fn__site_cnt(fn); i++) {
			const struct kinstr_site *s = kinstr_fn__site(fn, i);

			if (s->cls != KINSTR_SITE_JUMP || s->addr < end)
				continue;
			end = s->addr + s->displaced_len;
			if (n == cap)
				c = realloc(c, (cap = cap ? cap * 2 : 256) * sizeof(*c));
			c[n++] = (struct cand){ f, s->addr };
		}
		kinstr_fn__free(fn);
	}
	if ((size_t)per > n) {
		fprintf(stderr, "storm: only %zu candidate sites\n", n);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (b = 0; b < batches; b++) {
		struct kinstr_probeset *ps = kinstr_probeset__new(dev, k);
		uint64_t hits[4096];
		int j;

		/* even batches return with int3s in (often removed before their jumps land), odd ones wait */
		kinstr_probeset__set_async(ps, b % 2 == 0);
		for (j = 0; j < per; j++) {
			const struct cand *x = &c[((size_t)b * per + j) % n];

			if (kinstr_probeset__add(ps, x->f, x->addr, &why)) {
				fprintf(stderr, "storm: batch %d: %s\n", b, why.msg);
				return 1;
			}
		}
		if (kinstr_probeset__install(ps, &why)) {
			fprintf(stderr, "storm: batch %d: %s\n", b, why.msg);
			return 1;
		}
		installs += per;
		if (kinstr_probeset__counts(ps, hits) == 0)
			for (j = 0; j < per; j++)
				hits_seen += hits[j] > 0;
		if (kinstr_probeset__remove(ps)) {
			fprintf(stderr, "storm: batch %d: remove failed\n", b);
			return 1;
		}
		kinstr_probeset__free(ps);
	}
	/* the last removals' slots are freed by the module's worker: wait for it */
	if (kinstr_dev__sync(dev)) {
		fprintf(stderr, "storm: KINSTR_IOC_SYNC failed\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	{
		double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		long vm1 = meminfo("VmallocUsed"), pc1 = meminfo("Percpu");

		printf("%ld installs and %ld removals in %d batches of %d over %zu sites, %.1f s (%.0f ms/batch), "
		       "%ld probes saw hits\n", installs, installs, batches, per, n, secs, secs * 1000 / batches,
		       hits_seen);
		printf("vmalloc %ld kB -> %ld kB, percpu %ld kB -> %ld kB\n", vm0, vm1, pc0, pc1);
		printf("leak %s\n", vm1 - vm0 < 1024 && pc1 - pc0 < 256 ? "none" : "SUSPECTED");
	}
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	free(c);
	return 0;
}
