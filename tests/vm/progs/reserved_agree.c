// SPDX-License-Identifier: GPL-2.0
/*
 * Two independent views of which kernel text is reserved must agree: libkinstr's (tables read
 * from live memory, tracefs, debugfs, kallsyms) and the module's (the kernel's own predicates:
 * ftrace_text_reserved, jump_label_text_reserved, search_exception_tables, find_bug, ...).
 * Checks an even sample of every kind of reservation user space knows (at most PER_KIND each)
 * and of function starts (where ftrace sites are). The kernel's predicates scan their tables
 * linearly, so checking all ~100,000 ranges would take minutes under TCG. Prints counts and the
 * first disagreements; exit 1 on any.
 */
#include <errno.h>
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
	size_t i, n = 0, nres, nf, bad = 0, per[KINSTR_R_NR] = { 0 };
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
	r = calloc(nres + nf, sizeof(*r));
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
	}
	for (i = 0; i < nf; i += nf / (2 * PER_KIND) + 1) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);

		if (f->size >= 5)
			r[n++] = (struct kinstr_check_range){ .addr = f->addr, .len = 5 };
	}
	err = kinstr_dev__check(dev, r, n);
	if (err) {
		fprintf(stderr, "KINSTR_IOC_CHECK: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < n; i++) {
		unsigned int mine = kinstr_kernel__reserved(k, r[i].addr, r[i].len) & COMPARED;
		unsigned int theirs = r[i].reasons & COMPARED;
		unsigned int b;

		/* kinstr.ko's own text: the module refuses it outright, asking nothing else */
		if (r[i].reasons & (1u << KINSTR_R_OWN_MODULE))
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
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	free(r);
	return bad ? 1 : 0;
}
