// SPDX-License-Identifier: GPL-2.0
/*
 * User space must never offer a site the module then refuses: libkinstr's classification
 * (Zydis, the CFG, the relocator) and the module's verifier (the kernel's own instruction
 * decoder, its predicates) decide independently, and user space must be at least as strict.
 * For an even sample of the kernel's functions (every STRIDE-th; all of them with -a), asks the
 * module to verify, without patching (KINSTR_INSTALL_F_VERIFY_ONLY), the probes user space
 * would make: the function's first and last jump site (the last one is often its return, with
 * the int3 filler after it), its first and last trap site, and its first jump site that displaces
 * a call (which the slot emulates). Prints counts and each refusal;
 * exit 1 on any.
 *   verify_agree [-a | -m] [STRIDE]     (-m: every function of the loaded modules only)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/probe.h>
#include <kinstr/sites.h>

/* Does jump site s of fn displace a direct call as its last instruction? */
static bool ends_in_call(const struct kinstr_fn *fn, size_t s)
{
	const struct kinstr_cfg *cfg = kinstr_fn__cfg(fn);
	const struct kinstr_site *st = kinstr_fn__site(fn, s);
	size_t j = s;

	if (st->cls != KINSTR_SITE_JUMP)
		return false;
	while (j + 1 < kinstr_cfg__insn_cnt(cfg) &&
	       kinstr_cfg__insn(cfg, j + 1)->x.addr < st->addr + st->displaced_len)
		j++;
	return kinstr_cfg__insn(cfg, j)->x.flow == KINSTR_X86_FLOW_CALL;
}

struct cand {
	const struct kinstr_func *f;
	unsigned long long addr;
};

int main(int argc, char **argv)
{
	size_t stride = 16, i, n = 0, cap = 4096, pos = 0, bad = 0, batches = 0, per[2] = { 0 }, calls = 0;
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct cand *c = malloc(cap * sizeof(*c));
	struct kinstr_kernel *k;
	struct kinstr_why why;

	bool modules_only = argc > 1 && !strcmp(argv[1], "-m");	/* every function of loaded modules */

	if (argc > 1 && (!strcmp(argv[1], "-a") || modules_only))
		stride = 1;
	else if (argc > 1)
		stride = strtoul(argv[1], NULL, 0);
	if (!dev || !c || !stride) {
		perror("verify_agree: open /dev/kinstr");
		return 1;
	}
	k = kinstr_kernel__open_live(dev);
	if (!k) {
		perror("kinstr_kernel__open_live");
		return 1;
	}
	for (i = 0; i < kinstr_kernel__func_cnt(k); i += stride) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_fn *fn = modules_only && !f->module ? NULL : kinstr_fn__analyze(k, f);
		/* first, last of each class; then the first jump that displaces a call (emulated) */
		const struct kinstr_site *pick[5] = { NULL, NULL, NULL, NULL, NULL };
		size_t s, j;

		for (s = 0; fn && s < kinstr_fn__site_cnt(fn); s++) {
			const struct kinstr_site *st = kinstr_fn__site(fn, s);

			if (st->cls > KINSTR_SITE_TRAP)
				continue;
			if (!pick[2 * st->cls])
				pick[2 * st->cls] = st;
			pick[2 * st->cls + 1] = st;
			if (st->cls == KINSTR_SITE_JUMP && !pick[4] && ends_in_call(fn, s))
				pick[4] = st;
		}
		for (j = 0; j < 5; j++) {
			if (!pick[j] || (j & 1 && pick[j] == pick[j - 1]) ||
			    (j == 4 && (pick[4] == pick[0] || pick[4] == pick[1])))
				continue;
			if (n == cap && !(c = realloc(c, (cap *= 2) * sizeof(*c))))
				return 1;
			c[n++] = (struct cand){ f, pick[j]->addr };
			per[pick[j]->cls]++;
			calls += ends_in_call(fn, (size_t)(pick[j] - kinstr_fn__site(fn, 0)));
		}
		kinstr_fn__free(fn);
	}
	/* batches of at most an area's worth; after a refusal, go on past the refused probe */
	while (pos < n) {
		struct kinstr_probeset *ps = kinstr_probeset__new(dev, k);
		size_t m = 0, refused = (size_t)-1;
		int ret;

		if (!ps)
			return 1;
		while (pos + m < n && m < KINSTR_AREA_MAX_PROBES &&
		       kinstr_probeset__add(ps, c[pos + m].f, c[pos + m].addr, &why) == 0)
			m++;
		if (!m) {	/* user space itself refuses it: consistent, skip it */
			pos++;
			kinstr_probeset__free(ps);
			continue;
		}
		ret = kinstr_probeset__verify(ps, &refused, &why);
		batches++;
		kinstr_probeset__free(ps);
		if (ret && refused < m) {
			printf("refused: %s\n", why.msg);
			bad++;
			pos += refused + 1;
		} else if (ret) {
			fprintf(stderr, "verify_agree: %s\n", why.msg);
			return 1;
		} else {
			pos += m;
		}
	}
	printf("functions %zu (every %zu), probes verified %zu (%zu jump, %zu trap; %zu jumps displace a call) in %zu batches\n",
	       kinstr_kernel__func_cnt(k), stride, n, per[0], per[1], calls, batches);
	printf("module refusals %zu\n", bad);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	free(c);
	return bad ? 1 : 0;
}
