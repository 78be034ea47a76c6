// SPDX-License-Identifier: GPL-2.0
/* kinstr sites: how much of a function, a glob of them, or the whole kernel can be probed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/sites.h>
#include "cli.h"

/* Tally keys: a rule, or for the reserved rules one reason bit each. */
#define NKEYS (KINSTR_RULE_NR + 2 * KINSTR_R_NR)

struct tally {
	size_t funcs, insns, padding, unreadable, cls[KINSTR_SITE_NR_CLASSES];
	size_t int3, pfx, ftrace;	/* refused: int3 guards, __pfx_/__cfi_ padding; ftrace NOPs kinstr probes */
	size_t refused[NKEYS], trap[NKEYS];
};

static void key_name(unsigned int key, char *buf, size_t size)
{
	if (key < KINSTR_RULE_NR)
		snprintf(buf, size, "%s", kinstr_site_rule__id(key));
	else if (key < KINSTR_RULE_NR + KINSTR_R_NR)
		snprintf(buf, size, "reserved:%s", kinstr_site_reason__id(key - KINSTR_RULE_NR));
	else
		snprintf(buf, size, "displaces-reserved:%s",
			 kinstr_site_reason__id(key - KINSTR_RULE_NR - KINSTR_R_NR));
}

static void key_text(unsigned int key, char *buf, size_t size)
{
	struct kinstr_site s = { .rule = key < KINSTR_RULE_NR ? key : KINSTR_RULE_RESERVED };

	if (key >= KINSTR_RULE_NR + KINSTR_R_NR) {
		snprintf(buf, size, "a jump would displace an instruction that %s",
			 kinstr_site_reason__str(key - KINSTR_RULE_NR - KINSTR_R_NR));
		return;
	}
	if (key >= KINSTR_RULE_NR)
		s.reserved = 1u << (key - KINSTR_RULE_NR);
	kinstr_site__why(&s, buf, size);
	/* drop the per-site address the generic text carries */
	if (strstr(buf, " (target 0x") || strstr(buf, " (call at 0x"))
		*strstr(buf, " (") = 0;
}

static void count(struct tally *t, const struct kinstr_site *s, const struct kinstr_func *f)
{
	size_t *to = s->cls == KINSTR_SITE_REFUSED ? t->refused : s->cls == KINSTR_SITE_TRAP ? t->trap : NULL;
	unsigned int b;

	/* alignment fill between functions is not code: count it apart */
	if (s->rule == KINSTR_RULE_PADDING) {
		t->padding++;
		return;
	}
	t->insns++;
	t->cls[s->cls]++;
	if (!to)
		return;
	t->int3 += s->rule == KINSTR_RULE_INT3;
	t->pfx += s->rule == KINSTR_RULE_RESERVED && (s->reserved & (1u << KINSTR_R_CFI_SYMBOL));
	t->ftrace += kinstr_site__ftrace_own(s, f);
	if (s->rule == KINSTR_RULE_RESERVED || s->rule == KINSTR_RULE_DISPLACES_RESERVED) {
		unsigned int base = KINSTR_RULE_NR + (s->rule == KINSTR_RULE_RESERVED ? 0 : KINSTR_R_NR);

		for (b = 0; b < KINSTR_R_NR; b++)
			if (s->reserved & (1u << b))
				to[base + b]++;
	} else {
		to[s->rule]++;
	}
}

static void top_list(const size_t *v, unsigned int top, bool json, const char *title)
{
	unsigned int order[NKEYS], i, j, n = 0;
	char name[96], text[256];

	for (i = 0; i < NKEYS; i++)
		if (v[i])
			order[n++] = i;
	for (i = 1; i < n; i++)	/* insertion sort, largest first, stable by key */
		for (j = i; j > 0 && v[order[j]] > v[order[j - 1]]; j--) {
			unsigned int tmp = order[j];

			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	if (json) {
		printf("{");
		for (i = 0; i < n; i++) {
			key_name(order[i], name, sizeof(name));
			printf("%s\"%s\":%zu", i ? "," : "", name, v[order[i]]);
		}
		printf("}");
		return;
	}
	if (!n)
		return;
	printf("%s\n", title);
	for (i = 0; i < n && i < top; i++) {
		key_name(order[i], name, sizeof(name));
		key_text(order[i], text, sizeof(text));
		printf("  %10zu  %-34s %s\n", v[order[i]], name, text);
	}
}

enum { O_ALL = CLI_KEY_OWN, O_TOP };

static const struct cli_opt sites_opts[] = {
	{ 0, "all", O_ALL, NULL, "every function of the kernel" },
	{ .common = CLI_OPT_JSON, .help = "one JSON object (counts per class and per rule)" },
	{ 0, "top", O_TOP, "N", "rules to list (0 to 1000000, default 10)" },
	{ .common = CLI_OPT_SNAPSHOT },
	{ 0 },
};

static const struct cli_usage sites_usage = {
	.name = "sites", .synopsis = "[--json] [--top N] [--snapshot FILE] (--all | GLOB)", .verb = "classify",
	.intro = "Classify every instruction of the functions matching GLOB (a name, a shell glob such\n"
		 "as 'vfs_*', or a comma-separated list of them), or of the whole kernel with --all, as a\n"
		 "jump site (a 5-byte jmp fits), a trap site (only an int3 fits) or refused, and show the\n"
		 "counts and the rules that decided most often. With at most 100 functions, one line\n"
		 "each as well.\n\n",
	.opts = sites_opts, .min_args = 0, .max_args = 1,
};

struct sites_own {
	bool all;
	long top;
};

static int sites_opt(void *ctx, int key, const char *arg)
{
	struct sites_own *o = ctx;

	if (key == O_ALL)
		o->all = true;
	else if (key == O_TOP && cli_parse_long("--top", arg, 0, 1000000, &o->top))
		return CLI_USAGE;
	return 0;
}

int cmd_sites(int argc, char **argv)
{
	struct sites_own o = { .top = 10 };
	const char *glob = NULL;
	bool all, json, progress = isatty(STDERR_FILENO);
	unsigned long long last_addr = 0;
	unsigned int top;
	struct cli_common co;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	struct tally t = { 0 };
	size_t i, nf, matched = 0;
	int ret;

	cli_common__init(&co);
	ret = cli_opts__parse(&sites_usage, argc, argv, &co, sites_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	all = o.all, json = co.json, top = (unsigned int)o.top;
	if (optind < argc)
		glob = argv[optind];
	if (!all == !glob) {
		cli_opts__usage(&sites_usage, stderr);
		return CLI_USAGE;
	}
	k = cli_open_kernel(co.snapshot, &dev);
	if (!k)
		return CLI_FAIL;
	nf = kinstr_kernel__func_cnt(k);
	for (i = 0; i < nf; i++)
		matched += all || kinstr__glob_match(glob, kinstr_kernel__func(k, i)->name);
	if (!matched) {
		cli_err("no function matches '%s'", glob);
		cli_close_kernel(k, dev);
		return CLI_FAIL;
	}
	if (!json && !all && matched <= 100)
		printf("%-40s %8s %8s %8s\n", "function", "jump", "trap", "refused");
	for (i = 0; i < nf; i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		size_t before[KINSTR_SITE_NR_CLASSES], s;
		struct kinstr_fn *fn;

		if (!all && !kinstr__glob_match(glob, f->name))
			continue;
		/* aliases name the same code: count it once */
		if (f->addr == last_addr)
			continue;
		last_addr = f->addr;
		if (progress && !json && t.funcs % 2000 == 0)
			fprintf(stderr, "\r%zu/%zu functions", t.funcs, matched);
		fn = kinstr_fn__analyze(k, f);
		if (!fn) {
			t.unreadable++;
			continue;
		}
		t.funcs++;
		memcpy(before, t.cls, sizeof(before));
		for (s = 0; s < kinstr_fn__site_cnt(fn); s++)
			count(&t, kinstr_fn__site(fn, s), f);
		if (!json && !all && matched <= 100)
			printf("%-40s %8zu %8zu %8zu\n", f->name, t.cls[0] - before[0], t.cls[1] - before[1],
			       t.cls[2] - before[2]);
		kinstr_fn__free(fn);
	}
	if (progress && !json)
		fprintf(stderr, "\r%40s\r", "");
	if (json) {
		printf("{\"kernel\":");
		cli_json_str(kinstr_kernel__release(k));
		printf(",\"scope\":");
		cli_json_str(all ? "all" : glob);
		printf(",\"functions\":%zu,\"unreadable\":%zu,\"instructions\":%zu,\"padding\":%zu,"
		       "\"jump\":%zu,\"trap\":%zu,\"refused\":%zu,\"int3_guards\":%zu,\"pfx_padding\":%zu,"
		       "\"ftrace_nops\":%zu,\"refused_rules\":", t.funcs, t.unreadable, t.insns, t.padding,
		       t.cls[KINSTR_SITE_JUMP], t.cls[KINSTR_SITE_TRAP], t.cls[KINSTR_SITE_REFUSED], t.int3, t.pfx,
		       t.ftrace);
		top_list(t.refused, top, true, NULL);
		printf(",\"trap_rules\":");
		top_list(t.trap, top, true, NULL);
		printf("}\n");
	} else {
		double n = t.insns ? (double)t.insns : 1.0;

		printf("%s: %zu functions, %zu instructions (and %zu padding instructions between functions)\n",
		       all ? kinstr_kernel__release(k) : glob, t.funcs, t.insns, t.padding);
		printf("  jump     %10zu  %5.1f%%\n", t.cls[KINSTR_SITE_JUMP], 100.0 * t.cls[KINSTR_SITE_JUMP] / n);
		printf("  trap     %10zu  %5.1f%%\n", t.cls[KINSTR_SITE_TRAP], 100.0 * t.cls[KINSTR_SITE_TRAP] / n);
		printf("  refused  %10zu  %5.1f%%\n", t.cls[KINSTR_SITE_REFUSED], 100.0 * t.cls[KINSTR_SITE_REFUSED] / n);
		/* what runs: not the int3 guards, nor the __pfx_/__cfi_ padding before functions (6.12) */
		if (t.insns > t.int3 + t.pfx) {
			size_t code = t.insns - t.int3 - t.pfx;
			double jt = (double)(t.cls[KINSTR_SITE_JUMP] + t.cls[KINSTR_SITE_TRAP]);

			printf("  of the %zu that are code (not int3 guards or __pfx_/__cfi_ padding): jump %.1f%%, "
			       "jump or trap %.1f%%, with the %zu ftrace NOPs (probed through ftrace direct calls) %.1f%%\n",
			       code, 100.0 * t.cls[KINSTR_SITE_JUMP] / code, 100.0 * jt / code, t.ftrace,
			       100.0 * (jt + t.ftrace) / code);
		}
		if (t.unreadable)
			printf("  (%zu functions without text in this view)\n", t.unreadable);
		top_list(t.refused, top, false, "refused, by rule (a site may have several reserved reasons):");
		top_list(t.trap, top, false, "trap only, because:");
	}
	cli_close_kernel(k, dev);
	return CLI_OK;
}
