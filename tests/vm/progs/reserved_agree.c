// SPDX-License-Identifier: GPL-2.0
/*
 * Three views of which kernel text is reserved must agree: libkinstr's (tables read from live
 * memory, tracefs, debugfs, kallsyms), the module's (its sorted indexes of the kernel's tables,
 * and the kernel's predicates where it keeps none), and the kernel's own predicates
 * (jump_label_text_reserved, static_call_text_reserved, search_exception_tables,
 * within_kprobe_blacklist: KINSTR_CHECK_F_KERNEL). Checks an even sample of every kind of
 * reservation user space knows (at most PER_KIND each), and function starts (where ftrace sites
 * are); the 5 bytes just before and just after each reservation (an index's bounds) go to the
 * module and the kernel only: they start mid-instruction, where libkinstr reserves a whole ud2
 * or call that the kernel finds only by its first byte. The kernel's predicates
 * scan their tables linearly, so checking all ~100,000 ranges would take minutes under TCG: they
 * get every second range of the sample.
 *
 * libkinstr learns ftrace's records and the die chain from the module, asking for those reasons
 * alone (kinstr_check.only): the same ranges asked so must get the full check's answer masked,
 * and every function entry libkinstr reserves as an ftrace site must be one tracefs lists
 * (available_filter_functions), and the other way round, for every function that starts like
 * one.
 * Prints counts and the first disagreements; exit 1 on any.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>

/* The reasons both views decide from the same facts. */
#define COMPARED ((1u << KINSTR_R_FTRACE) | (1u << KINSTR_R_JUMP_LABEL) | (1u << KINSTR_R_BUG) | \
		  (1u << KINSTR_R_EXTABLE) | (1u << KINSTR_R_ENTRY_TEXT) | (1u << KINSTR_R_NOINSTR_TEXT) | \
		  (1u << KINSTR_R_KPROBE_BLACKLIST) | (1u << KINSTR_R_STATIC_CALL))

#define PER_KIND 1500
#define KSTRIDE 2

/*
 * The masks asked of kinstr_check.only: its own predicates, and one the full check decides (as
 * slow as the full check: every 8th range).
 */
static const struct {
	unsigned int mask, stride;
} only_masks[] = {
	{ 1u << KINSTR_R_FTRACE, 1 }, { 1u << KINSTR_R_DIE_NOTIFIER, 1 },
	{ (1u << KINSTR_R_FTRACE) | (1u << KINSTR_R_DIE_NOTIFIER) | (1u << KINSTR_R_ENTRY_TEXT), 1 },
	{ (1u << KINSTR_R_JUMP_LABEL) | (1u << KINSTR_R_BUG) | (1u << KINSTR_R_FTRACE), 8 },
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* available_filter_functions, sorted ("name" or "name [module]"); NULL if unreadable */
static char **tracefs_functions(size_t *n)
{
	FILE *f = fopen("/sys/kernel/tracing/available_filter_functions", "r");
	char line[1024], **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (*n == cap)
			v = realloc(v, (cap = cap ? 2 * cap : 65536) * sizeof(*v));
		v[(*n)++] = strdup(line);
	}
	fclose(f);
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* Entries that start like an ftrace site: reserved as one by libkinstr iff tracefs lists them. */
static size_t tracefs_agree(const struct kinstr_kernel *k, size_t *entries)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	size_t i, nt, bad = 0, nf = kinstr_kernel__func_cnt(k);
	char **t = tracefs_functions(&nt);

	*entries = 0;
	if (!t) {
		printf("tracefs: available_filter_functions unreadable\n");
		return 1;
	}
	for (i = 0; i < nf; i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		unsigned long long at = f->addr + f->endbr;
		const unsigned char *b = kinstr_kernel__text(k, at, 5);
		char key[600], *kp = key;
		bool listed, mine;

		/* kinstr.ko's own text: the module answers OWN_MODULE and nothing else */
		if (!b || (memcmp(b, nop5, 5) && b[0] != 0xe8) || (f->module && !strcmp(f->module, "kinstr")))
			continue;
		if (f->module)
			snprintf(key, sizeof(key), "%s [%s]", f->name, f->module);
		else
			snprintf(key, sizeof(key), "%s", f->name);
		listed = bsearch(&kp, t, nt, sizeof(*t), cmp_str) != NULL;
		mine = kinstr_kernel__reserved(k, at, 5) & (1u << KINSTR_R_FTRACE);
		/* kallsyms has aliases tracefs lists once, by one name: an alias of a listed one counts */
		if (!listed && mine && i && kinstr_kernel__func(k, i - 1)->addr == f->addr)
			continue;
		if (!listed && mine && i + 1 < nf && kinstr_kernel__func(k, i + 1)->addr == f->addr)
			continue;
		(*entries)++;
		if (listed != mine && bad++ < 20)
			printf("tracefs disagrees at %s: listed %d, libkinstr %d\n", key, listed, mine);
	}
	for (i = 0; i < nt; i++)
		free(t[i]);
	free(t);
	return bad;
}

/*
 * Every core .part/.isra/.constprop/.cold clone's first byte: the module's blacklist answer (from
 * the names the kernel's list holds) against within_kprobe_blacklist()'s (F_KERNEL: the parent
 * looked up by name). *blk: how many the kernel blacklists. Returns the disagreements.
 */
static size_t clones_agree(struct kinstr_dev *dev, const struct kinstr_kernel *k, size_t *nc, size_t *blk)
{
	size_t nf = kinstr_kernel__func_cnt(k), i, n = 0, bad = 0;
	struct kinstr_check_range *a = calloc(nf, sizeof(*a)), *b = calloc(nf, sizeof(*b));
	const unsigned int bl = 1u << KINSTR_R_KPROBE_BLACKLIST;

	for (i = 0; i < nf; i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);

		if (!f->module && f->size && strchr(f->name, '.') && f->name[0] != '.')
			a[n++] = (struct kinstr_check_range){ .addr = f->addr + f->endbr, .len = 1 };
	}
	memcpy(b, a, n * sizeof(*a));
	if (kinstr_dev__check(dev, a, n) || kinstr_dev__check_flags(dev, b, n, KINSTR_CHECK_F_KERNEL)) {
		fprintf(stderr, "KINSTR_IOC_CHECK of the clones failed\n");
		bad = n + 1;
	}
	for (i = 0; i < n && bad <= n; i++) {
		*blk += !!(b[i].reasons & bl);
		if ((a[i].reasons ^ b[i].reasons) & bl) {
			const struct kinstr_func *f = kinstr_kernel__func_at(k, a[i].addr);

			if (bad++ < 20)
				printf("clone disagrees %s: module 0x%x kernel 0x%x\n", f ? f->name : "?", a[i].reasons,
				       b[i].reasons);
		}
	}
	*nc = n;
	free(a);
	free(b);
	return bad;
}

int main(void)
{
	size_t kind_total[KINSTR_R_NR] = { 0 }, kind_seen[KINSTR_R_NR] = { 0 };
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_check_range *r;
	struct kinstr_kernel *k;
	size_t i, n = 0, nk, nres, nf, bad = 0, kbad = 0, obad = 0, cbad, tbad, tentries, per[KINSTR_R_NR] = { 0 };
	struct kinstr_check_range *kr;
	bool *nb;
	int err;

	if (!dev) {
		perror("open /dev/kinstr");
		return 1;
	}
	k = kinstr_kernel__open_live(dev);
	if (!k) {
		perror("kinstr_kernel__open_live");
		return 1;
	}
	nres = kinstr_kernel__reserved_cnt(k);
	nf = kinstr_kernel__func_cnt(k);
	r = calloc(3 * nres + nf, sizeof(*r));
	nb = calloc(3 * nres + nf, sizeof(*nb));
	for (i = 0; i < nres; i++)
		kind_total[kinstr_kernel__reserved_at(k, i)->reason]++;
	for (i = 0; i < nres; i++) {
		const struct kinstr_reserved *e = kinstr_kernel__reserved_at(k, i);
		size_t t = kind_total[e->reason], stride = t > PER_KIND ? t / PER_KIND : 1;

		if (kind_seen[e->reason]++ % stride)
			continue;

		if (e->len > 16)	/* whole sections and blacklisted functions: check their start */
			r[n++] = (struct kinstr_check_range){ .addr = e->addr, .len = 1 };
		else
			r[n++] = (struct kinstr_check_range){ .addr = e->addr, .len = e->len };
		/* the neighbours: a range ending at the reservation, and one starting after it */
		nb[n] = true;
		r[n++] = (struct kinstr_check_range){ .addr = e->addr - 5, .len = 5 };
		nb[n] = true;
		r[n++] = (struct kinstr_check_range){ .addr = e->addr + e->len, .len = 5 };
	}
	for (i = 0; i < nf; i += nf / (2 * PER_KIND) + 1) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);

		if (f->size >= 5)
			r[n++] = (struct kinstr_check_range){ .addr = f->addr, .len = 5 };
	}
	/* the kernel's predicates walk whole tables per range (most of this test's time): every KSTRIDE-th */
	nk = (n + KSTRIDE - 1) / KSTRIDE;
	kr = calloc(nk, sizeof(*kr));
	for (i = 0; i < nk; i++)
		kr[i] = r[i * KSTRIDE];
	err = kinstr_dev__check(dev, r, n) ?: kinstr_dev__check_flags(dev, kr, nk, KINSTR_CHECK_F_KERNEL);
	if (err) {
		fprintf(stderr, "KINSTR_IOC_CHECK: %s\n", strerror(-err));
		return 1;
	}
	for (size_t m = 0; m < sizeof(only_masks) / sizeof(only_masks[0]); m++) {
		unsigned int mask = only_masks[m].mask, nmask = 0;
		size_t st = only_masks[m].stride, no = (n + st - 1) / st, j;
		struct kinstr_check_range *o = calloc(no, sizeof(*o));

		for (j = 0; j < no; j++)
			o[j] = r[j * st];
		err = kinstr_dev__check_only(dev, o, no, mask);
		if (err) {
			fprintf(stderr, "KINSTR_IOC_CHECK only 0x%x: %s\n", mask, strerror(-err));
			return 1;
		}
		for (j = 0; j < no; j++) {
			i = j * st;
			nmask += !!(o[j].reasons & mask);
			/* UNVERIFIABLE: the full check's may come from a predicate not asked */
			if (((o[j].reasons ^ r[i].reasons) & mask) || (o[j].reasons & ~mask & ~(1u << KINSTR_R_UNVERIFIABLE))) {
				const struct kinstr_func *f = kinstr_kernel__func_at(k, r[i].addr);

				if (obad++ < 20)
					printf("only 0x%x disagrees %s+0x%llx len %u: only 0x%x full 0x%x\n", mask,
					       f ? f->name : "?", f ? r[i].addr - f->addr : r[i].addr, r[i].len,
					       o[j].reasons, r[i].reasons);
			}
		}
		printf("only 0x%x: %u ranges with those reasons\n", mask, nmask);
		free(o);
	}
	tbad = tracefs_agree(k, &tentries);
	{	/* an unknown reason bit, and only with the kernel's predicates, are refused */
		struct kinstr_check_range one = r[0];
		struct kinstr_check c = { .size = sizeof(c), .flags = KINSTR_CHECK_F_KERNEL,
					  .ranges = (unsigned long)&one, .count = 1, .only = 1u << KINSTR_R_FTRACE };
		int fd = open("/dev/kinstr", O_RDWR), e1, e2;

		e1 = kinstr_dev__check_only(dev, &one, 1, 1u << KINSTR_R_NR);
		e2 = fd >= 0 && ioctl(fd, KINSTR_IOC_CHECK, &c) < 0 ? -errno : 0;
		printf("only refusals: unknown bit %s, with F_KERNEL %s\n", strerror(-e1), strerror(-e2));
		if (e1 != -EINVAL || e2 != -EINVAL)
			obad++;
		if (fd >= 0)
			close(fd);
	}
	for (size_t j = 0; j < nk; j++) {	/* the module's indexes against the kernel's predicates */
		i = j * KSTRIDE;
		if ((r[i].reasons ^ kr[j].reasons) & COMPARED) {
			const struct kinstr_func *f = kinstr_kernel__func_at(k, r[i].addr);

			if (kbad++ < 20)
				printf("index disagrees %s+0x%llx len %u: module 0x%x kernel 0x%x\n",
				       f ? f->name : "?", f ? r[i].addr - f->addr : r[i].addr, r[i].len,
				       r[i].reasons, kr[j].reasons);
		}
	}
	for (i = 0; i < n; i++) {
		unsigned int mine = kinstr_kernel__reserved(k, r[i].addr, r[i].len) & COMPARED;
		unsigned int theirs = r[i].reasons & COMPARED;
		unsigned int b;

		/*
		 * kinstr.ko's own text: the module refuses it outright, asking nothing else; the
		 * neighbours are the kernel's comparison only
		 */
		if (nb[i] || (r[i].reasons & (1u << KINSTR_R_OWN_MODULE)))
			continue;
		for (b = 0; b < KINSTR_R_NR; b++)
			per[b] += !!(mine & (1u << b));
		if (mine != theirs) {
			const struct kinstr_func *f = kinstr_kernel__func_at(k, r[i].addr);

			if (bad++ < 20)
				printf("disagree %s+0x%llx len %u: libkinstr 0x%x module 0x%x\n",
				       f ? f->name : "?", f ? r[i].addr - f->addr : r[i].addr, r[i].len,
				       mine, theirs);
		}
	}
	printf("functions %zu reservations %zu ranges checked %zu (%zu against the kernel's predicates)\n", nf, nres, n, nk);
	for (i = 0; i < KINSTR_R_NR; i++)
		if (per[i])
			printf("  %-18s %zu\n", kinstr_site_reason__id(i), per[i]);
	printf("disagreements %zu\n", bad);
	printf("index disagreements %zu (module's indexes against the kernel's own predicates)\n", kbad);
	printf("only disagreements %zu (the reasons asked alone against the full check's)\n", obad);
	printf("tracefs disagreements %zu of %zu entries that start like ftrace sites\n", tbad, tentries);
	{
		size_t nc = 0, blk = 0;

		cbad = clones_agree(dev, k, &nc, &blk);
		printf("clone blacklist disagreements %zu of %zu core clones (%zu blacklisted by the kernel)\n", cbad, nc,
		       blk);
	}
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	free(r);
	free(kr);
	free(nb);
	return bad || kbad || obad || tbad || cbad ? 1 : 0;
}
