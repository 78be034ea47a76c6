// SPDX-License-Identifier: GPL-2.0
/*
 * User space must never offer a code-cache copy the module then refuses, as verify_agree shows
 * for probes: libkinstr's builder (Zydis, the CFG, the kernel view's reservations) and the
 * module's check (kmod/check/cache.c: the kernel's decoder, its own reading of the kernel's tables)
 * decide independently, and the builder must be at least as strict. For every STRIDE-th function
 * of the kernel (every one with -a; a seeded random sample of N with --sample N --seed S), builds
 * the copy `kinstr cover` would offer and has the module verify it without installing
 * (KINSTR_INSTALL_F_VERIFY_ONLY), in batches of up to BATCH functions per area; a refusal names
 * the function and the module's rule, and the batch is verified again without that function.
 * Prints what the builder refused, by reason, and every module refusal; exit 1 on any.
 *   cache_agree [--edges] [--batch N] [-a | --sample N [--seed S] | STRIDE]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>

static unsigned int copy_flags;

struct tally {
	size_t verified, module_refused, batches, builder_refused[64];
};

/*
 * Verify fs[0, n) in one area; after a refusal, the rest again without the function refused.
 * Functions the builder refuses are counted by reason and left out.
 */
static int verify(struct kinstr_dev *dev, const struct kinstr_kernel *k, const struct kinstr_func **fs, size_t n,
		  struct tally *t, bool count_builder)
{
	struct kinstr_cacheset *cs = kinstr_cacheset__new(dev, k);
	size_t i, refused = (size_t)-1, planned;
	struct kinstr_why why;
	int ret;

	if (!cs || kinstr_cacheset__set_flags(cs, copy_flags))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct kinstr_cache_refusal r;
		int e = kinstr_cacheset__add(cs, fs[i], &r);

		if (e && e != -EEXIST && count_builder)
			t->builder_refused[(unsigned int)r.code < 64 ? (unsigned int)r.code : 63]++;
	}
	planned = kinstr_cacheset__cnt(cs);
	if (!planned) {
		kinstr_cacheset__free(cs);
		return 0;
	}
	ret = kinstr_cacheset__install(cs, KINSTR_INSTALL_F_VERIFY_ONLY, &refused, &why);
	t->batches++;
	if (ret == -E2BIG && n > 1) {	/* beyond an area's limits: in halves */
		kinstr_cacheset__free(cs);
		ret = verify(dev, k, fs, n / 2, t, false);
		return ret ? ret : verify(dev, k, fs + n / 2, n - n / 2, t, false);
	}
	if (ret && refused < planned) {
		const struct kinstr_func *bad = kinstr_cacheset__func(cs, refused);
		const struct kinstr_func **rest = malloc(n * sizeof(*rest));
		size_t m = 0;

		printf("refused: %s%s%s: %s\n", bad->name, bad->module ? " " : "", bad->module ? bad->module : "", why.msg);
		t->module_refused++;
		for (i = 0; rest && i < planned; i++)
			if (i != refused)
				rest[m++] = kinstr_cacheset__func(cs, i);
		kinstr_cacheset__free(cs);
		ret = rest ? verify(dev, k, rest, m, t, false) : -ENOMEM;
		free(rest);
		return ret;
	}
	kinstr_cacheset__free(cs);
	if (ret) {
		fprintf(stderr, "cache_agree: %s\n", why.msg);
		return ret;
	}
	t->verified += planned;
	return 0;
}

int main(int argc, char **argv)
{
	size_t stride = 64, sample = 0, batch = 32, i, n = 0, nf, done;
	unsigned long seed = 1;
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	const struct kinstr_func **fs;
	struct tally t = { 0 };
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--edges"))
			copy_flags = KINSTR_CACHE_F_EDGES;
		else if (!strcmp(argv[a], "-a"))
			stride = 1;
		else if (!strcmp(argv[a], "--batch") && a + 1 < argc)
			batch = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--sample") && a + 1 < argc)
			sample = strtoul(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = strtoul(argv[++a], NULL, 0);
		else if (argv[a][0] != '-' && (stride = strtoul(argv[a], NULL, 0)))
			;
		else {
			fprintf(stderr, "usage: cache_agree [--edges] [--batch N] [-a | --sample N [--seed S] | STRIDE]\n");
			return 2;
		}
	}
	if (!k || !batch) {
		perror("cache_agree: open /dev/kinstr and the live kernel");
		return 1;
	}
	nf = kinstr_kernel__func_cnt(k);
	fs = malloc(nf * sizeof(*fs));
	if (!fs)
		return 1;
	if (sample) {	/* a partial Fisher-Yates shuffle of the indexes, then back in address order */
		size_t *ix = malloc(nf * sizeof(*ix));

		srandom((unsigned int)seed);
		for (i = 0; ix && i < nf; i++)
			ix[i] = i;
		for (i = 0; ix && i < sample && i < nf; i++) {
			size_t j = i + (size_t)random() % (nf - i), x = ix[i];

			ix[i] = ix[j];
			ix[j] = x;
		}
		n = sample < nf ? sample : nf;
		for (i = 0; ix && i < n; i++)
			fs[i] = kinstr_kernel__func(k, ix[i]);
		free(ix);
		printf("sample of %zu functions, seed %lu\n", n, seed);
	} else {
		for (i = 0; i < nf; i += stride)
			fs[n++] = kinstr_kernel__func(k, i);
	}
	if (sample) {	/* address order: neighbours share batches as in a glob */
		for (i = 1; i < n; i++) {
			const struct kinstr_func *x = fs[i];
			size_t j = i;

			for (; j && fs[j - 1]->addr > x->addr; j--)
				fs[j] = fs[j - 1];
			fs[j] = x;
		}
	}
	for (done = 0; done < n; done += batch) {
		int e = verify(dev, k, fs + done, n - done < batch ? n - done : batch, &t, true);

		if (e) {
			fprintf(stderr, "cache_agree: %s\n", strerror(-e));
			return 1;
		}
		if ((done / batch) % 50 == 49)
			fprintf(stderr, "cache_agree: %zu of %zu functions\n", done + batch, n);
	}
	printf("functions %zu of %zu%s: builder refused", n, nf, copy_flags ? " (with edges)" : "");
	{
		size_t tot = 0;

		for (i = 0; i < 64; i++)
			if (t.builder_refused[i]) {
				printf(" %zu %s,", t.builder_refused[i], kinstr_cache_refusal__id((unsigned int)i));
				tot += t.builder_refused[i];
			}
		printf(" %zu in all\n", tot);
	}
	printf("module verified %zu copies in %zu batches\n", t.verified, t.batches);
	printf("module refusals %zu\n", t.module_refused);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	free(fs);
	return t.module_refused ? 1 : 0;
}
