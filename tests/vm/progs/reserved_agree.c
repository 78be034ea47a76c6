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
 * scan their tables linearly, so checking all ~100,000 ranges would take minutes under TCG.
 * Prints counts and the first disagreements; exit 1 on any.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/kernel.h>

/* The reasons both views decide from the same facts. */
#define COMPARED ((1u << KINSTR_R_FTRACE) | (1u << KINSTR_R_JUMP_LABEL) | (1u << KINSTR_R_BUG) | \
		  (1u << KINSTR_R_EXTABLE) | (1u << KINSTR_R_ENTRY_TEXT) | (1u << KINSTR_R_NOINSTR_TEXT) | \
		  (1u << KINSTR_R_KPROBE_BLACKLIST) | (1u << KINSTR_R_STATIC_CALL))

#define PER_KIND 1500

int main(void)
{
	size_t kind_total[KINSTR_R_NR] = { 0 }, kind_seen[KINSTR_R_NR] = { 0 };
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_check_range *r;
	struct kinstr_kernel *k;
	size_t i, n = 0, nres, nf, bad = 0, kbad = 0, per[KINSTR_R_NR] = { 0 };
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
	kr = calloc(n, sizeof(*kr));
	memcpy(kr, r, n * sizeof(*r));
	err = kinstr_dev__check(dev, r, n) ?: kinstr_dev__check_flags(dev, kr, n, KINSTR_CHECK_F_KERNEL);
	if (err) {
		fprintf(stderr, "KINSTR_IOC_CHECK: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < n; i++)	/* the module's indexes against the kernel's predicates */
		if ((r[i].reasons ^ kr[i].reasons) & COMPARED) {
			const struct kinstr_func *f = kinstr_kernel__func_at(k, r[i].addr);

			if (kbad++ < 20)
				printf("index disagrees %s+0x%llx len %u: module 0x%x kernel 0x%x\n",
				       f ? f->name : "?", f ? r[i].addr - f->addr : r[i].addr, r[i].len,
				       r[i].reasons, kr[i].reasons);
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
	printf("functions %zu reservations %zu ranges checked %zu\n", nf, nres, n);
	for (i = 0; i < KINSTR_R_NR; i++)
		if (per[i])
			printf("  %-18s %zu\n", kinstr_site_reason__id(i), per[i]);
	printf("disagreements %zu\n", bad);
	printf("index disagreements %zu (module's indexes against the kernel's own predicates)\n", kbad);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	free(r);
	free(kr);
	free(nb);
	return bad || kbad ? 1 : 0;
}
