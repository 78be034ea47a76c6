// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr optimize FUNC...: KernInst's runtime code positioning through the code cache. Each
 * function's edges are measured (cover --edges' copies, for -d SEC or while -c CMD runs) or read
 * from a saved `kinstr cover --edges --json` run (--from-cover); libkinstr orders its blocks
 * (lib/cache/layout.c, Pettis–Hansen) and builds a copy laid out that way, without counters,
 * which kinstr.ko proves like any copy (only the layout and branch forms changed) before the
 * function's entry is routed to it. The copies stay in until --while CMD ends, --for SEC passes
 * or Ctrl-C; removing them restores every byte. --dry-run prints the layouts and the predicted
 * taken branches per call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/cover.h>
#include <kinstr/kinstr.h>
#include <kinstr/layout.h>
#include <kinstr/plan.h>
#include "cli.h"

enum { O_FROM = CLI_KEY_OWN, O_WHILE, O_FOR, O_ORIGINAL };

static const struct cli_opt optimize_opts[] = {
	{ .common = CLI_OPT_COMMAND, .help = "measure the edges while CMD runs (cover --edges' copies)" },
	{ .common = CLI_OPT_DURATION, .help = "measure the edges for SEC seconds (default: 1 s when no -c CMD "
					      "and no --from-cover)" },
	{ 0, "from-cover", O_FROM, "JSON", "take the edge counts from a saved 'kinstr cover --edges --json' run "
					   "(FILE, or - for stdin) instead of measuring: each FUNC must be in it, "
					   "with the same blocks (the same kernel build)" },
	{ 0, "while", O_WHILE, "CMD", "keep the re-laid copies in while CMD runs, then remove them and exit "
				      "with its status (else until --for SEC passes, or until Ctrl-C/SIGTERM)" },
	{ 0, "for", O_FOR, "SEC", "keep the re-laid copies in for SEC seconds, then remove them" },
	{ 0, "original-order", O_ORIGINAL, NULL, "lay the copies out in the original order (no counters, rel8 "
						 "branches where they reach, a jmp to the next block dropped): what the "
						 "code cache costs without the new layout, to measure beside it" },
	{ .common = CLI_OPT_JSON, .help = "the layouts as one JSON object" },
	{ .common = CLI_OPT_DRY_RUN, .help = "measure (or read) the edges and print each layout and its predicted "
					     "taken branches per call; install nothing" },
	{ 0 },
};

static const struct cli_usage optimize_usage = {
	.name = "optimize", .verb = "optimize", .done = "optimized",
	.synopsis = "[-d SEC | -c CMD | --from-cover JSON] [--dry-run] [--json] [--while CMD | --for SEC] FUNC...",
	.intro = "Runtime code positioning (KernInst, Pettis-Hansen) through the code cache. The edges of\n"
		 "each FUNC are counted (as 'kinstr cover --edges' does) or read from a saved cover run;\n"
		 "its blocks are ordered so that the hot chains fall through (the heaviest edges joined\n"
		 "first), a conditional branch whose hot way is its target inverted, the blocks that never\n"
		 "ran after the hot part; the original order is kept where it predicts no fewer taken\n"
		 "branches. The copy laid out that way has no counters; kinstr.ko proves it is the\n"
		 "function's instructions with only their layout and branch forms changed (jcc inverted\n"
		 "with its ways swapped, jmp added or dropped for a fall-through, rel8 or rel32), then the\n"
		 "function's entry is routed to it while kinstr runs. Removing it restores every byte.\n"
		 "Taken branches are those between the function's blocks (a jcc taken, a jmp); calls and\n"
		 "returns are the same in every layout and not counted.\n\n",
	.outro = "A FUNC the code cache cannot run (see 'kinstr cover --dry-run FUNC') is refused with the\n"
		 "reason. The measured copies are out before the re-laid ones go in.\n",
	.examples = "kinstr optimize -c 'cat /etc/services' --dry-run vfs_read\n"
		    "the layout vfs_read would get from that workload, and its taken branches per call before and after\n"
		    "kinstr optimize --from-cover e.json --for 60 vfs_read\n"
		    "vfs_read re-laid for a minute by a saved 'kinstr cover --edges --json vfs_read' run\n",
	.opts = optimize_opts, .min_args = 1, .max_args = -1,
};

struct opt_args {
	const char *from, *hold_cmd;
	double hold;
	bool original;
};

static int optimize_opt(void *ctx, int key, const char *arg)
{
	struct opt_args *a = ctx;

	switch (key) {
	case O_FROM: a->from = arg; break;
	case O_WHILE: a->hold_cmd = arg; break;
	case O_ORIGINAL: a->original = true; break;
	case O_FOR:
		if (cli_parse_seconds("--for", arg, &a->hold))
			return CLI_USAGE;
		break;
	}
	return 0;
}

/* One function: its plan with edges, the counts, the blocks and the order. */
struct ofn {
	const struct kinstr_func *f;
	struct kinstr_cache_fn *plan;	/* built with edges at the function itself: its blocks */
	uint64_t *counts;		/* per edge of plan */
	struct kinstr_layout_block *b;
	uint32_t *order;
	size_t nb;
	uint64_t calls, before, after;
};

static void ofn_free(struct ofn *o)
{
	kinstr_cache_fn__free(o->plan);
	free(o->counts);
	free(o->b);
	free(o->order);
}

/* The plan of f with edge counters (its blocks and edges, as cover --edges has them). */
static int ofn_plan(const struct kinstr_kernel *k, struct ofn *o)
{
	struct kinstr_cache_opts co = { .sz = sizeof(co), .flags = KINSTR_CACHE_F_EDGES };
	struct kinstr_cache_refusal r;

	o->plan = kinstr_cache_fn__build(k, o->f, o->f->addr, &co, &r);
	if (!o->plan) {
		cli_err("optimize: %s cannot run through the code cache: %s (%s at +0x%llx)", o->f->name,
			errno == EPERM ? r.why : strerror(errno), kinstr_cache_refusal__id((unsigned int)r.code),
			(unsigned long long)(r.addr - o->f->addr));
		return -1;
	}
	o->nb = kinstr_cache_fn__block_cnt(o->plan);
	o->counts = calloc(kinstr_cache_fn__edge_cnt(o->plan) + 1, sizeof(*o->counts));
	o->b = calloc(o->nb, sizeof(*o->b));
	o->order = calloc(o->nb, sizeof(*o->order));
	if (!o->counts || !o->b || !o->order) {
		cli_err("optimize: %s", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/* The layout from the counts (original: the original order): the order, the taken branches before and after. */
static int ofn_layout(const struct kinstr_kernel *k, struct ofn *o, bool original)
{
	size_t i;

	if (kinstr_layout__blocks(k, o->plan, o->counts, o->b, &o->calls) ||
	    kinstr_layout__order(o->b, o->nb, 0, o->order)) {
		cli_err("optimize: %s: no layout from its blocks", o->f->name);
		return -1;
	}
	for (i = 0; original && i < o->nb; i++)
		o->order[i] = (uint32_t)i;
	o->before = kinstr_layout__taken(o->b, o->nb, NULL);
	o->after = kinstr_layout__taken(o->b, o->nb, o->order);
	return 0;
}

/* Measure: cover --edges' copies of every function for -d or while -c runs; their edge counts. */
static int measure(struct kinstr_dev *dev, const struct kinstr_kernel *k, struct ofn *fns, size_t n,
		   const char *command, double duration)
{
	struct kinstr_cover_opts co = { .sz = sizeof(co), .cache_flags = KINSTR_CACHE_F_EDGES };
	struct kinstr_cover *cv = kinstr_cover__new(dev, k, &co);
	const struct kinstr_cacheset *cs;
	struct kinstr_why why;
	struct cli_run run;
	size_t i, j, e;
	int rc = -1;

	if (!cv) {
		cli_err("optimize: %s", strerror(errno));
		return -1;
	}
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, true, NULL);	/* CMD's output to stderr: stdout is the layouts' */
	for (i = 0; i < n; i++) {
		char spec[600];

		snprintf(spec, sizeof(spec), "%s@0x%llx", fns[i].f->name, (unsigned long long)fns[i].f->addr);
		if (kinstr_cover__add(cv, spec, &why)) {
			cli_err("optimize: %s", why.msg);
			goto out;
		}
	}
	if (kinstr_cover__plan(cv, &why) || kinstr_cover__install(cv, KINSTR_INSTALL_F_WAIT, &why)) {
		cli_err("optimize: measuring the edges: %s", why.msg);
		goto out;
	}
	fprintf(stderr, "kinstr: optimize: measuring the edges of %zu functions%s\n", n,
		command ? " while CMD runs" : "");
	cli_run__begin(&run);
	if (command && cli_run__spawn(&run))
		goto out;
	cli_run__wait(&run, 0.1, NULL, NULL);
	cli_run__stop(&run);
	if (cli_stop) {
		rc = -1;
		goto out;
	}
	if (kinstr_cover__read(cv)) {
		cli_err("optimize: cannot read the edge counters");
		goto out;
	}
	cs = kinstr_cover__set(cv);
	for (i = 0; i < n; i++) {
		for (j = 0; j < kinstr_cacheset__cnt(cs) && kinstr_cacheset__func(cs, j)->addr != fns[i].f->addr; j++)
			;
		if (j == kinstr_cacheset__cnt(cs) ||
		    kinstr_cache_fn__edge_cnt(kinstr_cacheset__fn(cs, j)) != kinstr_cache_fn__edge_cnt(fns[i].plan)) {
			cli_err("optimize: %s was not measured (refused by the code cache)", fns[i].f->name);
			goto out;
		}
		for (e = 0; e < kinstr_cache_fn__edge_cnt(fns[i].plan); e++)
			fns[i].counts[e] = kinstr_cacheset__edge_count(cs, j, e);
	}
	rc = 0;
out:
	cli_run__cleanup(&run);
	kinstr_cover__free(cv);
	return rc;
}

/*
 * --from-cover: the edges of each function in a saved `cover --edges --json` run, matched to the
 * plan's by kind and block offsets (the k-th of a kind between two blocks to the k-th).
 */
static char *slurp(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t n = 0, cap = 1 << 16;
	char *s = malloc(cap);

	if (!f || !s) {
		free(s);
		return NULL;
	}
	while (!feof(f) && !ferror(f)) {
		if (n + 4096 > cap && !(s = realloc(s, cap *= 2)))
			break;
		n += fread(s + n, 1, cap - n - 1, f);
	}
	if (f != stdin)
		fclose(f);
	if (s)
		s[n] = 0;
	return s;
}

/* The offset of an edge's end ("null": outside) at p; -1 outside; -2 not a number. */
static long long end_at(const char *p)
{
	char *e;
	long long v;

	if (!strncmp(p, "null", 4))
		return -1;
	v = strtoll(p, &e, 10);
	return e == p ? -2 : v;
}

static int from_cover(const char *path, struct ofn *fns, size_t n)
{
	char *s = slurp(path), *fn, key[600];
	size_t i, e;
	int rc = -1;

	if (!s) {
		cli_err("optimize: --from-cover %s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct kinstr_cache_fn *p = fns[i].plan;
		uint8_t *used = calloc(kinstr_cache_fn__edge_cnt(p) + 1, 1);
		char *end, *q;
		size_t got = 0;

		snprintf(key, sizeof(key), "{\"function\":\"%s\",", fns[i].f->name);
		fn = strstr(s, key);
		if (!fn || !used) {
			cli_err("optimize: --from-cover %s: no function %s in it", path, fns[i].f->name);
			free(used);
			goto out;
		}
		end = strstr(fn + 1, "{\"function\":");
		q = strstr(fn, "\"edges\":[");
		if (!q || (end && q > end)) {
			cli_err("optimize: --from-cover %s: %s has no edges (a 'kinstr cover --edges --json' run?)", path,
				fns[i].f->name);
			free(used);
			goto out;
		}
		for (q = strstr(q, "{\"kind\":\""); q && (!end || q < end); q = strstr(q + 1, "{\"kind\":\"")) {
			char kind[16] = "";
			const char *fr = strstr(q, "\"from\":"), *to = strstr(q, "\"to\":"), *ct = strstr(q, "\"count\":");
			long long a, b;
			unsigned long long c;

			if (sscanf(q, "{\"kind\":\"%15[a-z]\"", kind) != 1 || !fr || !to || !ct ||
			    (a = end_at(fr + 7)) < -1 || (b = end_at(to + 5)) < -1 || sscanf(ct + 8, "%llu", &c) != 1) {
				cli_err("optimize: --from-cover %s: %s: an edge that does not read", path, fns[i].f->name);
				free(used);
				goto out;
			}
			for (e = 0; e < kinstr_cache_fn__edge_cnt(p); e++) {
				const struct kinstr_cache_edge *ed = kinstr_cache_fn__edge(p, e);
				long long ea = ed->from == KINSTR_CACHE_OUTSIDE ? -1 :
					       (long long)(kinstr_cache_fn__block(p, ed->from)->addr - fns[i].f->addr);
				long long eb = ed->to == KINSTR_CACHE_OUTSIDE ? -1 :
					       (long long)(kinstr_cache_fn__block(p, ed->to)->addr - fns[i].f->addr);

				if (!used[e] && ea == a && eb == b && !strcmp(kinstr_cache_edge_kind__str(ed->kind), kind))
					break;
			}
			if (e == kinstr_cache_fn__edge_cnt(p)) {
				cli_err("optimize: --from-cover %s: %s: its %s edge %lld -> %lld is not one of this kernel's "
					"(another build?)", path, fns[i].f->name, kind, a, b);
				free(used);
				goto out;
			}
			used[e] = 1;
			fns[i].counts[e] = c;
			got++;
		}
		free(used);
		if (got != kinstr_cache_fn__edge_cnt(p)) {
			cli_err("optimize: --from-cover %s: %s: %zu edges, this kernel's copy has %zu (another build?)", path,
				fns[i].f->name, got, kinstr_cache_fn__edge_cnt(p));
			goto out;
		}
	}
	rc = 0;
out:
	free(s);
	return rc;
}

static const char *flag_words(unsigned int fl, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s%s%s%s", fl & KINSTR_CACHE_L_INVERTED ? " inverted" : "",
		 fl & KINSTR_CACHE_L_JMP_ADDED ? " jmp-added" : "", fl & KINSTR_CACHE_L_JMP_DROPPED ? " jmp-dropped" : "",
		 fl & KINSTR_CACHE_L_SHORT ? " rel8" : "");
	return buf[0] ? buf + 1 : "-";
}

/* The layouts: per function its blocks in the new order, and the taken branches per call. */
static void print_layouts(const struct kinstr_kernel *k, const struct ofn *fns, size_t n, bool json)
{
	size_t i, j;
	char w[64];

	if (json)
		printf("{\"functions\":[");
	for (i = 0; i < n; i++) {
		const struct ofn *o = &fns[i];
		struct kinstr_cache_opts co = { .sz = sizeof(co), .layout = o->order, .nlayout = o->nb };
		struct kinstr_cache_fn *c = kinstr_cache_fn__build(k, o->f, o->f->addr, &co, NULL);
		double pb = o->calls ? (double)o->before / (double)o->calls : 0, pa = o->calls ? (double)o->after / (double)o->calls : 0;

		if (json) {
			printf("%s{\"function\":", i ? "," : "");
			cli_json_str(o->f->name);
			printf(",\"addr\":\"0x%llx\",\"blocks\":%zu,\"calls\":%llu,\"taken_before\":%llu,\"taken_after\":%llu,"
			       "\"per_call_before\":%.4f,\"per_call_after\":%.4f,\"copy_bytes\":%zu,\"layout\":[",
			       (unsigned long long)o->f->addr, o->nb, (unsigned long long)o->calls,
			       (unsigned long long)o->before, (unsigned long long)o->after, pb, pa, c ? kinstr_cache_fn__size(c) : 0);
		} else {
			printf("%s: %zu blocks, %llu calls; taken branches %llu -> %llu (%.3f -> %.3f per call, predicted)%s\n",
			       o->f->name, o->nb, (unsigned long long)o->calls, (unsigned long long)o->before,
			       (unsigned long long)o->after, pb, pa, c ? "" : " (no copy: refused)");
			printf("  %-8s %-10s %-12s %-7s %s\n", "offset", "count", "end", "copy", "layout");
		}
		for (j = 0; j < o->nb; j++) {
			uint32_t b = o->order[j];
			const struct kinstr_cache_block *bl = kinstr_cache_fn__block(o->plan, b);
			unsigned int fl = c ? kinstr_cache_fn__laid_block(c, b) : 0;
			uint64_t cp = c ? kinstr_cache_fn__block(c, b)->copy - kinstr_cache_fn__copy_addr(c) : 0;

			if (json) {
				printf("%s{\"offset\":%llu,\"count\":%llu,\"end\":\"%s\",\"copy\":%llu,\"inverted\":%s,"
				       "\"jmp_added\":%s,\"jmp_dropped\":%s,\"rel8\":%s}", j ? "," : "",
				       (unsigned long long)(bl->addr - o->f->addr), (unsigned long long)o->b[b].count,
				       kinstr_layout_end__str(o->b[b].end), (unsigned long long)cp,
				       fl & KINSTR_CACHE_L_INVERTED ? "true" : "false", fl & KINSTR_CACHE_L_JMP_ADDED ? "true" : "false",
				       fl & KINSTR_CACHE_L_JMP_DROPPED ? "true" : "false", fl & KINSTR_CACHE_L_SHORT ? "true" : "false");
			} else {
				printf("  +0x%-6llx %-10llu %-12s +0x%-5llx %s\n", (unsigned long long)(bl->addr - o->f->addr),
				       (unsigned long long)o->b[b].count, kinstr_layout_end__str(o->b[b].end),
				       (unsigned long long)cp, flag_words(fl, w, sizeof(w)));
			}
		}
		if (json)
			printf("]}");
		kinstr_cache_fn__free(c);
	}
	if (json)
		printf("]}\n");
	fflush(stdout);
}

/* The re-laid copies in, held while --while CMD runs, for --for SEC or until a signal; then out. */
static int install(struct kinstr_dev *dev, const struct kinstr_kernel *k, struct ofn *fns, size_t n,
		   const struct opt_args *a)
{
	struct kinstr_cacheset *cs = kinstr_cacheset__new(dev, k);
	struct kinstr_why why;
	struct cli_run run;
	size_t i, refused = SIZE_MAX;
	int rc = CLI_FAIL;

	if (!cs) {
		cli_err("optimize: %s", strerror(ENOMEM));
		return CLI_FAIL;
	}
	cli_run__init(&run, a->hold_cmd, a->hold, false);
	for (i = 0; i < n; i++) {
		struct kinstr_cache_refusal r;

		if (kinstr_cacheset__add_laid(cs, fns[i].f, fns[i].order, fns[i].nb, &r)) {
			cli_err("optimize: %s: the re-laid copy is refused: %s", fns[i].f->name, r.why);
			goto out;
		}
	}
	if (kinstr_cacheset__install(cs, KINSTR_INSTALL_F_WAIT, &refused, &why)) {
		cli_err("optimize: %s", why.msg);
		goto out;
	}
	fprintf(stderr, "kinstr: optimize: %zu functions run through their re-laid copies%s\n", n,
		a->hold_cmd ? " while CMD runs" : a->hold ? "" : "; Ctrl-C to remove them");
	cli_run__begin(&run);
	if (a->hold_cmd && cli_run__spawn(&run))
		goto out;
	cli_run__wait(&run, 0.2, NULL, NULL);
	cli_run__stop(&run);
	if (kinstr_cacheset__remove(cs)) {
		cli_err("optimize: removing the copies: %s", strerror(errno));
		goto out;
	}
	fprintf(stderr, "kinstr: optimize: the originals restored\n");
	rc = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	kinstr_cacheset__free(cs);
	return rc;
}

int cmd_optimize(int argc, char **argv)
{
	struct opt_args a = { 0 };
	struct cli_common co;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	struct ofn *fns;
	size_t n, i;
	int ret, rc = CLI_FAIL;

	cli_common__init(&co);
	ret = cli_opts__parse(&optimize_usage, argc, argv, &co, optimize_opt, &a);
	if (ret != CLI_GO_ON)
		return ret;
	if (a.from && (co.command || co.duration)) {
		cli_err("optimize: --from-cover takes the counts from a saved run: no -c CMD or -d SEC to measure");
		return CLI_USAGE;
	}
	if (co.dry && (a.hold_cmd || a.hold)) {
		cli_err("optimize: --dry-run installs nothing: no --while or --for");
		return CLI_USAGE;
	}
	if (a.hold_cmd && a.hold) {
		cli_err("optimize: --while CMD or --for SEC, not both");
		return CLI_USAGE;
	}
	n = (size_t)(argc - optind);
	fns = calloc(n, sizeof(*fns));
	if (!fns)
		return CLI_FAIL;
	k = cli_open_kernel(NULL, &dev);
	if (!k) {
		free(fns);
		return CLI_FAIL;
	}
	cli_catch_signals();
	for (i = 0; i < n; i++) {
		struct kinstr_why why;

		fns[i].f = kinstr_plan__func(k, argv[optind + (int)i], &why);
		if (!fns[i].f) {
			cli_err("%s", why.msg);
			goto out;
		}
		if (ofn_plan(k, &fns[i]))
			goto out;
	}
	if (a.from ? from_cover(a.from, fns, n) : measure(dev, k, fns, n, co.command, co.command || co.duration ? co.duration : 1.0))
		goto out;
	for (i = 0; i < n; i++)
		if (ofn_layout(k, &fns[i], a.original))
			goto out;
	print_layouts(k, fns, n, co.json);
	rc = co.dry ? CLI_OK : install(dev, k, fns, n, &a);
out:
	if (cli_stop && rc == CLI_FAIL)
		rc = cli_stop_status();
	for (i = 0; i < n; i++)
		ofn_free(&fns[i]);
	free(fns);
	cli_close_kernel(k, dev);
	return rc;
}
