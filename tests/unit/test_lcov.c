// SPDX-License-Identifier: GPL-2.0
/*
 * Block coverage as an lcov tracefile (lib/results/lcov.c), checked by its real consumer: the copies of
 * every function of the 6.1 snapshot that the code cache takes, with made-up block counts (some
 * zero), written with their listings and rendered by Debian's genhtml, which must say nothing but
 * its summary, and whose line and function totals must be the blocks and functions we counted.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/cache.h>
#include <kinstr/lcov.h>
#include "check.h"

static void t_genhtml_renders(void)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o), .counters = 0x2a8c0 };
	char dir[] = "/tmp/kinstr-lcov-XXXXXX", path[256], cmd[1024], line[512];
	size_t i, fns = 0, fns_hit = 0, lines = 0, lines_hit = 0;
	unsigned long lh = 0, lf = 0, fh = 0, ff = 0;
	struct kinstr_kernel *k;
	int warnings = 0, rc;
	FILE *info, *out;

	if (system("command -v genhtml >/dev/null 2>&1"))
		SKIP("genhtml is not installed (scripts/setup installs lcov)");
	k = kinstr_kernel__open_snapshot("tests/data/sample-6.1.0-57-amd64.snap");
	CHECK(k != NULL, "snapshot: %s", strerror(errno));
	if (!k || !mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/cover.info", dir);
	info = fopen(path, "w");
	CHECK(info != NULL, "%s: %s", path, strerror(errno));
	for (i = 0; info && i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_cache_fn *c = kinstr_cache_fn__build(k, f, (f->addr & ~((1ULL << 30) - 1)) + (1ULL << 30), &o, NULL);
		uint64_t counts[4096];
		size_t b, nb;

		if (!c)
			continue;
		nb = kinstr_cache_fn__block_cnt(c);
		for (b = 0; b < nb && b < 4096; b++)
			counts[b] = (b + i) % 3 ? (b + 1) * 7 : 0;
		if (nb <= 4096) {
			CHECK(kinstr_lcov__write_fn(info, dir, k, f, c, counts, NULL) == 0, "%s: not written", f->name);
			fns++;
			fns_hit += counts[0] != 0;
			lines += nb;
			for (b = 0; b < nb; b++)
				lines_hit += counts[b] != 0;
		}
		kinstr_cache_fn__free(c);
	}
	if (info)
		fclose(info);
	snprintf(cmd, sizeof(cmd), "genhtml -o %s/html %s/cover.info 2>&1", dir, dir);
	out = popen(cmd, "r");
	while (out && fgets(line, sizeof(line), out)) {
		if (strstr(line, "WARNING") || strstr(line, "ERROR") || strstr(line, "genhtml: "))
			if (warnings++ < 5)
				CHECK(0, "genhtml says: %s", line);
		sscanf(line, " lines......: %*f%% (%lu of %lu lines)", &lh, &lf);
		sscanf(line, " functions..: %*f%% (%lu of %lu functions)", &fh, &ff);
	}
	rc = out ? pclose(out) : -1;
	CHECK(rc == 0, "genhtml exit status %d", rc);
	CHECK(warnings == 0, "%d lines of warnings", warnings);
	CHECK(fns > 100, "only %zu functions written", fns);
	CHECK(lf == lines && lh == lines_hit, "genhtml counts %lu of %lu lines, we wrote %zu of %zu blocks", lh, lf,
	      lines_hit, lines);
	CHECK(ff == fns && fh == fns_hit, "genhtml counts %lu of %lu functions, we wrote %zu of %zu", fh, ff, fns_hit, fns);
	printf("     genhtml: %lu of %lu blocks (lines), %lu of %lu functions\n", lh, lf, fh, ff);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		CHECK(0, "could not remove %s", dir);
	kinstr_kernel__close(k);
}

int main(void)
{
	RUN(t_genhtml_renders);
	return check_done();
}
