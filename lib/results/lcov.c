// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Block coverage as an lcov tracefile with a listing per function (include/kinstr/lcov.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kinstr/lcov.h>
#include <kinstr/lines.h>
#include <kinstr/plan.h>
#include <kinstr/x86.h>

/* A file name for f's listing: its name, and its address when names repeat; no '/'. */
static void listing_name(const struct kinstr_func *f, char *buf, size_t size)
{
	char *p;

	snprintf(buf, size, "%s@%llx.s", f->name, f->addr);
	for (p = buf; *p; p++)
		if (*p == '/')
			*p = '_';
}

int kinstr_lcov__write_fn(FILE *info, const char *dir, const struct kinstr_kernel *k, const struct kinstr_func *f,
			  const struct kinstr_cache_fn *c, const uint64_t *counts, struct kinstr_lines *lines)
{
	int with_lines = lines && kinstr_lines__path(lines, f->module);
	size_t i, nb = kinstr_cache_fn__block_cnt(c), ni = kinstr_cache_fn__insn_cnt(c), hit = 0;
	char name[300], path[PATH_MAX], abs[PATH_MAX];
	unsigned int *line;
	FILE *src;
	int err = 0;

	if (!info || !dir || !k || !f || !c || !counts)
		return -EINVAL;
	line = calloc(nb ? nb : 1, sizeof(*line));
	if (!line)
		return -ENOMEM;
	listing_name(f, name, sizeof(name));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		free(line);
		return -ENAMETOOLONG;
	}
	src = fopen(path, "we");
	if (!src) {
		err = -errno;
		free(line);
		return err;
	}
	/* line 1 the function, then one line per instruction of the copied range */
	fprintf(src, "%s:\t# %s, %zu blocks (kinstr cover: %s)\n", f->name, kinstr_kernel__release(k), nb,
		with_lines ? "a listing, each instruction's source line from DWARF beside it" :
			     "a listing for want of source lines");
	for (i = 0; i < ni; i++) {
		const struct kinstr_cache_insn *in = kinstr_cache_fn__insn(c, i);
		const unsigned char *b = kinstr_kernel__text(k, in->addr, in->len);
		const struct kinstr_cache_block *blk = kinstr_cache_fn__block(c, in->block);
		struct kinstr_x86_insn x;
		char text[96] = "?";

		if (b && !kinstr_x86__decode(b, in->len, in->addr, &x))
			kinstr_x86__format(&x, text, sizeof(text));
		if (blk->first == i)
			line[in->block] = (unsigned int)i + 2;
		fprintf(src, "\t+0x%-5llx %-44s # %s%s", (unsigned long long)(in->addr - f->addr), text,
			kinstr_cache_how__str(in->how), blk->first == i ? ", block start" : "");
		if (with_lines) {
			const char *file;
			int ln;

			if (!kinstr_lines__find(lines, f, in->addr, &file, &ln))
				fprintf(src, ", %s:%d", file, ln);
		}
		fprintf(src, "\n");
	}
	if (fclose(src))
		err = -errno;
	if (!err && !realpath(path, abs))
		err = -errno;
	if (err) {
		free(line);
		return err;
	}
	for (i = 0; i < nb; i++)
		hit += counts[i] != 0;
	fprintf(info, "TN:kinstr\nSF:%s\nFN:1,%s\nFNDA:%llu,%s\nFNF:1\nFNH:%d\n", abs, f->name,
		(unsigned long long)(nb ? counts[0] : 0), f->name, nb && counts[0] ? 1 : 0);
	for (i = 0; i < nb; i++)
		fprintf(info, "DA:%u,%llu\n", line[i], (unsigned long long)counts[i]);
	fprintf(info, "LF:%zu\nLH:%zu\nend_of_record\n", nb, hit);
	free(line);
	return ferror(info) ? -EIO : 0;
}

/* err about path into why (if not NULL; a path too long for it ends in "..."); returns err. */
static int path_failed(struct kinstr_why *why, int err, const char *path)
{
	size_t sz = sizeof(why->msg);

	if (why) {
		memset(why, 0, sizeof(*why));
		why->err = err;
		if ((size_t)snprintf(why->msg, sz, "%s: %s", path, strerror(-err)) >= sz)
			memcpy(why->msg + sz - 4, "...", 4);
	}
	return err;
}

int kinstr_lcov__write(const char *path, const struct kinstr_kernel *k, const struct kinstr_cacheset *cs,
		       struct kinstr_lines *lines, struct kinstr_why *why)
{
	char dir[PATH_MAX];
	uint64_t *counts;
	FILE *info;
	size_t i, b;
	int err = 0;

	if (!path || !k || !cs)
		return path_failed(why, -EINVAL, path ? path : "(null)");
	snprintf(dir, sizeof(dir), "%s.src", path);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return path_failed(why, -errno, dir);
	info = fopen(path, "we");
	if (!info)
		return path_failed(why, -errno, path);
	for (i = 0; i < kinstr_cacheset__cnt(cs) && !err; i++) {
		const struct kinstr_cache_fn *c = kinstr_cacheset__fn(cs, i);
		size_t nb = kinstr_cache_fn__block_cnt(c);

		counts = calloc(nb ? nb : 1, sizeof(*counts));
		if (!counts) {
			err = -ENOMEM;
			break;
		}
		for (b = 0; b < nb; b++)
			counts[b] = kinstr_cacheset__block_count(cs, i, b);
		err = kinstr_lcov__write_fn(info, dir, k, kinstr_cacheset__func(cs, i), c, counts, lines);
		free(counts);
	}
	if (fclose(info) && !err)
		err = -errno;
	return err ? path_failed(why, err, path) : 0;
}
