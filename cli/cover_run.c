// SPDX-License-Identifier: GPL-2.0
/*
 * The code cache's run, for kinstr cover and kinstr count --every-block (cli.h, cli_cover__run):
 * the functions named, planned (--dry-run), installed through libkinstr's cacheset and run
 * while -c CMD or for -d seconds, then each block's count (or hit), the lcov tracefile; or the
 * one-shot probes of --once. The subcommands parse; this runs and prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/kinstr.h>
#include <kinstr/lcov.h>
#include <kinstr/lines.h>
#include <kinstr/probe.h>
#include "cli.h"
#include "cover.h"

/* Every function the arguments name, each once, in the order named. */
static int collect(const struct kinstr_kernel *k, int argc, char **argv, const struct kinstr_func ***out, size_t *n)
{
	const struct kinstr_func **v = NULL;
	size_t cap = 0;
	int i, rc = CLI_OK;

	*n = 0;
	for (i = 0; i < argc; i++) {
		size_t j, m = 0, cnt = kinstr_kernel__func_cnt(k);

		for (j = 0; j < cnt || !strpbrk(argv[i], "*?[,"); j++) {
			const struct kinstr_func *f;
			size_t q;

			if (!strpbrk(argv[i], "*?[,")) {
				f = cli_find_func(k, NULL, argv[i]);
				if (!f)
					rc = CLI_FAIL;
				m = 1;
			} else {
				f = kinstr_kernel__func(k, j);
				if (!kinstr__glob_match(argv[i], f->name))
					continue;
				m++;
			}
			for (q = 0; f && q < *n && v[q] != f; q++)
				;
			if (f && q == *n) {
				if (*n == cap) {
					const struct kinstr_func **nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

					if (!nv) {
						free(v);
						*out = NULL;
						*n = 0;
						return CLI_FAIL;
					}
					v = nv;
				}
				v[(*n)++] = f;
			}
			if (!strpbrk(argv[i], "*?[,"))
				break;
		}
		if (!m) {
			cli_err("no function matches '%s'", argv[i]);
			rc = CLI_FAIL;
		}
	}
	*out = v;
	return rc;
}

static int dry_run(const struct kinstr_kernel *k, const struct kinstr_func **fs, size_t n, bool json, bool edges)
{
	size_t refused = 0, shown = 0, i;
	int rc = CLI_OK;

	if (json)
		printf("{\"kernel\":\"%s\",\"functions\":[", kinstr_kernel__release(k));
	else
		printf("%-36s %6s %6s %6s %7s %6s %6s %6s %9s\n", "FUNCTION", "BLOCKS", "PUSHF", "INSNS", "BYTES", "CALLS",
		       "NATIVE", "JLABEL", "REENTRY");
	for (i = 0; i < n; i++)
		cli_cover__plan_one(k, fs[i], json, edges, &shown, &refused, &rc);
	if (json)
		printf("],\"refused\":%zu}\n", refused);
	else
		printf("kinstr: dry run, nothing installed: %zu planned, %zu refused; REENTRY is jumps/int3s the "
		       "original would get\n", shown - refused, refused);
	return rc;
}

/* The module a .ko file is for: its name up to ".ko", '-' as '_'; NULL for anything else (a vmlinux). */
static char *module_of_file(const char *path)
{
	const char *base = strrchr(path, '/'), *ko;
	char *m, *p;

	base = base ? base + 1 : path;
	ko = strstr(base, ".ko");
	if (!ko || (ko[3] && ko[3] != '.'))
		return NULL;
	m = strndup(base, (size_t)(ko - base));
	for (p = m; p && *p; p++)
		if (*p == '-')
			*p = '_';
	return m;
}

/*
 * Source lines for the functions fs: the --debuginfo files, then the usual paths for the core
 * and each module among them. Says on stderr where each comes from, or that there are none (the
 * blocks are then function+offset). NULL: a --debuginfo file was unusable (said why).
 */
static struct kinstr_lines *open_lines(const struct kinstr_kernel *k, const struct kinstr_func **fs, size_t n,
				       const struct cli_cover_args *a, bool quiet)
{
	struct kinstr_lines *l = kinstr_lines__new(kinstr_kernel__release(k));
	size_t i, j;
	int e;

	if (!l)
		return NULL;
	for (e = 0; e < a->ndebuginfo; e++) {
		char *m = module_of_file(a->debuginfo[e]);
		int err = kinstr_lines__add(l, m, a->debuginfo[e]);

		if (err) {
			cli_err("cover: --debuginfo %s: %s", a->debuginfo[e],
				err == -ENODATA ? "no DWARF line table in it" :
				err == -ENOEXEC ? "not an ELF file with debug info" :
				err == -EEXIST ? "a second file for the same module" : strerror(-err));
			free(m);
			kinstr_lines__free(l);
			return NULL;
		}
		free(m);
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && !(fs[j]->module == fs[i]->module ||
				       (fs[j]->module && fs[i]->module && !strcmp(fs[j]->module, fs[i]->module))); j++)
			;
		if (j < i)
			continue;	/* its module's seen */
		if (!kinstr_lines__path(l, fs[i]->module))
			kinstr_lines__add_default(l, fs[i]->module);
		if (quiet)
			continue;
		if (kinstr_lines__path(l, fs[i]->module))
			fprintf(stderr, "kinstr: source lines of %s%s from %s\n", fs[i]->module ? "module " : "the core kernel",
				fs[i]->module ? fs[i]->module : "", kinstr_lines__path(l, fs[i]->module));
		else if (!fs[i]->module)
			fprintf(stderr, "kinstr: no DWARF for the core kernel (install linux-image-%s-dbg, or give "
				"--debuginfo VMLINUX): its blocks are function+offset\n", kinstr_kernel__release(k));
		else
			fprintf(stderr, "kinstr: no DWARF for module %s (its .ko from the -dbg package, or --debuginfo "
				"%s.ko): its blocks are function+offset\n", fs[i]->module, fs[i]->module);
	}
	return l;
}
static int write_lcov(const struct kinstr_kernel *k, const struct kinstr_cacheset *cs, const char *path,
		      struct kinstr_lines *lines)
{
	char dir[4096];
	uint64_t *counts;
	FILE *info;
	size_t i, b;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s.src", path);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		cli_err("cover: %s: %s", dir, strerror(errno));
		return -1;
	}
	info = fopen(path, "we");
	if (!info) {
		cli_err("cover: %s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < kinstr_cacheset__cnt(cs) && !rc; i++) {
		const struct kinstr_cache_fn *c = kinstr_cacheset__fn(cs, i);
		size_t nb = kinstr_cache_fn__block_cnt(c);

		counts = calloc(nb ? nb : 1, sizeof(*counts));
		if (!counts) {
			rc = -ENOMEM;
			break;
		}
		for (b = 0; b < nb; b++)
			counts[b] = kinstr_cacheset__block_count(cs, i, b);
		rc = kinstr_lcov__write_fn(info, dir, k, kinstr_cacheset__func(cs, i), c, counts, lines);
		free(counts);
	}
	if (fclose(info) || rc) {
		cli_err("cover: %s: %s", path, strerror(rc ? -rc : errno));
		return -1;
	}
	return 0;
}

/*
 * --once: one-shot coverage. A probe at every block's first instruction (the blocks the code
 * cache would count), each taken out as soon as it was hit (batches every 0.1 s): which blocks
 * ran, at almost no cost once the hot ones are gone.
 */
struct once_fn {
	const struct kinstr_func *f;
	struct kinstr_cache_fn *plan;
	size_t *probe;		/* per block: its probe, or SIZE_MAX (no probe fits there) */
};

struct once_ctx {
	struct kinstr_probeset *ps;
	uint64_t *counts;
	uint8_t *out;		/* per probe: disarmed */
	uint32_t *batch;
	size_t n, disarmed;
	int err;
};

static void once_tick(void *ctx, double dt)
{
	struct once_ctx *o = ctx;
	size_t i, m = 0, d = 0;
	int e;

	(void)dt;
	if (o->err || kinstr_probeset__counts(o->ps, o->counts))
		return;
	for (i = 0; i < o->n; i++)
		if (o->counts[i] && !o->out[i]) {
			o->batch[m++] = (uint32_t)i;
			o->out[i] = 1;
		}
	if (!m)
		return;
	e = kinstr_probeset__disarm(o->ps, o->batch, m, &d);
	if (e)
		o->err = e;
	o->disarmed += d;
}

static int run_once(const struct kinstr_kernel *k, struct kinstr_dev *dev, const struct kinstr_func **fs, size_t n,
		    const char *command, double duration, bool json)
{
	struct once_fn *of = calloc(n ? n : 1, sizeof(*of));
	struct kinstr_probeset *ps = kinstr_probeset__new(dev, k);
	struct once_ctx o = { 0 };
	size_t i, b, nf = 0, unprobed = 0, refused = 0, fcov = 0, bcov = 0, btot = 0;
	struct cli_run run;
	char err[512];
	int rc = CLI_FAIL;

	if (!of || !ps)
		goto out;
	for (i = 0; i < n; i++) {
		struct kinstr_cache_refusal r;
		struct once_fn *x = &of[nf];

		x->f = fs[i];
		x->plan = kinstr_cache_fn__build(k, fs[i], fs[i]->addr, NULL, &r);
		if (!x->plan) {
			refused++;
			if (!json)
				printf("%s: not covered: refused (%s) at +0x%llx: %s\n", fs[i]->name,
				       kinstr_cache_refusal__id((unsigned int)r.code), (unsigned long long)(r.addr - fs[i]->addr),
				       r.why);
			continue;
		}
		x->probe = calloc(kinstr_cache_fn__block_cnt(x->plan) + 1, sizeof(*x->probe));
		if (!x->probe)
			goto out;
		for (b = 0; b < kinstr_cache_fn__block_cnt(x->plan); b++) {
			uint64_t a = kinstr_cache_fn__block(x->plan, b)->addr;

			if (kinstr_probeset__add(ps, fs[i], a, err, sizeof(err))) {
				x->probe[b] = SIZE_MAX;
				unprobed++;
			} else {
				x->probe[b] = kinstr_probeset__cnt(ps) - 1;
			}
		}
		nf++;
	}
	o.ps = ps;
	o.n = kinstr_probeset__cnt(ps);
	if (!o.n) {
		cli_err("cover --once: no block left to probe (%zu functions refused)", refused);
		goto out;
	}
	o.counts = calloc(o.n, sizeof(*o.counts));
	o.out = calloc(o.n, 1);
	o.batch = calloc(o.n, sizeof(*o.batch));
	if (!o.counts || !o.out || !o.batch)
		goto out;
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, NULL);
	cli_catch_signals();
	if (kinstr_probeset__install(ps, err, sizeof(err))) {
		cli_err("cover --once: %s", err);
		cli_run__cleanup(&run);
		goto out;
	}
	if (!json)
		fprintf(stderr, "kinstr: one-shot coverage of %zu functions: %zu probes%s\n", nf, o.n,
			command || duration ? "" : "; Ctrl-C to stop");
	cli_run__begin(&run);
	if (command && cli_run__spawn(&run)) {
		cli_run__cleanup(&run);
		goto out;
	}
	cli_run__wait(&run, 0.1, once_tick, &o);
	cli_run__stop(&run);
	once_tick(&o, 0);	/* the last batch: what is left in now never ran */
	if (kinstr_probeset__counts(ps, o.counts) || o.err) {
		cli_err("cover --once: %s", strerror(o.err ? -o.err : errno));
		cli_run__cleanup(&run);
		goto out;
	}
	if (json)
		printf("{\"seconds\":%.3f,\"once\":true,\"functions\":[", cli_now() - run.t0);
	for (i = 0; i < nf; i++) {
		const struct once_fn *x = &of[i];
		size_t nb = kinstr_cache_fn__block_cnt(x->plan), hit = 0;

		for (b = 0; b < nb; b++)
			hit += x->probe[b] != SIZE_MAX && o.counts[x->probe[b]];
		fcov += hit != 0;
		bcov += hit;
		btot += nb;
		if (json) {
			printf("%s{\"function\":", i ? "," : "");
			cli_json_str(x->f->name);
			printf(",\"addr\":\"0x%llx\",\"blocks\":%zu,\"covered\":%zu,\"counts\":[", x->f->addr, nb, hit);
		} else {
			printf("%s: %zu/%zu blocks (%.1f%%)\n", x->f->name, hit, nb, nb ? 100.0 * (double)hit / (double)nb : 0.0);
		}
		for (b = 0; b < nb; b++) {
			unsigned long long off = kinstr_cache_fn__block(x->plan, b)->addr - x->f->addr;
			bool probed = x->probe[b] != SIZE_MAX, h = probed && o.counts[x->probe[b]];

			if (json)
				printf("%s{\"offset\":%llu,\"hit\":%d,\"probed\":%d}", b ? "," : "", off, h, probed);
			else
				printf("  +0x%-6llx %s\n", off, !probed ? "unprobed" : h ? "hit" : "-");
		}
		if (json)
			printf("]}");
	}
	if (json)
		printf("],\"probes\":%zu,\"disarmed\":%zu,\"left\":%zu,\"unprobed\":%zu,\"refused\":%zu,"
		       "\"functions_covered\":%zu,\"blocks_covered\":%zu,\"blocks_total\":%zu,\"status\":%d}\n",
		       o.n, o.disarmed, o.n - o.disarmed, unprobed, refused, fcov, bcov, btot, run.status);
	else
		printf("kinstr: one-shot: covered %zu/%zu functions, %zu/%zu blocks (%.1f%%); %zu probes: %zu taken out "
		       "after their first hit, %zu never hit; %zu blocks without a probe, %zu functions refused\n",
		       fcov, nf, bcov, btot, btot ? 100.0 * (double)bcov / (double)btot : 0.0, o.n, o.disarmed,
		       o.n - o.disarmed, unprobed, refused);
	rc = cli_run__status(&run);
	cli_run__cleanup(&run);
out:
	kinstr_probeset__free(ps);	/* removes what is left */
	for (i = 0; of && i < nf; i++) {
		kinstr_cache_fn__free(of[i].plan);
		free(of[i].probe);
	}
	free(of);
	free(o.counts);
	free(o.out);
	free(o.batch);
	return rc;
}

/*
 * A cache set of fs but those dropped (each marked dropped once the library refuses its plan:
 * with rf, recorded there with the reason). NULL: no memory, or another error (said).
 */
static struct kinstr_cacheset *new_set(struct kinstr_dev *dev, const struct kinstr_kernel *k,
				       const struct kinstr_func **fs, size_t n, bool *dropped, bool edges,
				       struct cli_cover_refused *rf, size_t *nrf)
{
	struct kinstr_cacheset *cs = kinstr_cacheset__new(dev, k);
	struct kinstr_cache_refusal r;
	size_t i;

	if (!cs || (edges && kinstr_cacheset__set_flags(cs, KINSTR_CACHE_F_EDGES))) {
		kinstr_cacheset__free(cs);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		int e;

		if (dropped[i])
			continue;
		e = kinstr_cacheset__add(cs, fs[i], &r);
		if (e == -EPERM && rf) {
			rf[*nrf].f = fs[i];
			rf[(*nrf)++].r = r;
			dropped[i] = true;
		} else if (e && e != -EEXIST) {
			cli_err("cover: %s: %s", fs[i]->name, e == -EPERM ? r.why : strerror(-e));
			kinstr_cacheset__free(cs);
			return NULL;
		}
	}
	return cs;
}

int cli_cover__run(const struct cli_cover_args *a)
{
	const char *snapshot = a->snapshot, *command = a->command, *lcov = a->lcov;
	bool json = a->json, dry = a->dry, hit_only = a->hit_only, once = a->once;
	const struct kinstr_func **fs = NULL;
	struct kinstr_cacheset *cs = NULL;
	struct kinstr_lines *lines = NULL;
	struct cli_cover_refused *rf = NULL;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	double duration = a->duration;
	size_t n = 0, nrf = 0, i, bad;
	bool *dropped = NULL;
	struct cli_run run;
	char err[512];
	int rc;

	if (snapshot && !dry) {
		cli_err("cover: --snapshot plans only (--dry-run): a snapshot is not the running kernel");
		return CLI_USAGE;
	}
	k = cli_open_kernel(snapshot, &dev);
	if (!k)
		return CLI_FAIL;
	rc = collect(k, a->nfuncs, a->funcs, &fs, &n);
	if (rc && a->keep && n)
		rc = CLI_OK;	/* -k: a name that matched nothing was reported; the others go on */
	if (dry) {
		int r2 = dry_run(k, fs, n, json, a->edges);

		rc = rc ? rc : r2;
		goto out;
	}
	if (rc)
		goto out;
	if (once) {
		if (a->edges) {
			cli_err("cover: --once takes each probe out at its first hit, --edges counts every pass: use one of them");
			rc = CLI_USAGE;
			goto out;
		}
		if (lcov) {
			cli_err("cover: --once tells hit or not, --lcov wants counts: use one of them");
			rc = CLI_USAGE;
			goto out;
		}
		rc = run_once(k, dev, fs, n, command, duration, json);
		goto out;
	}
	rc = CLI_FAIL;
	/* written at the end: a place it cannot go is said now, not after the run */
	if (lcov && cli_check_writable("--lcov", lcov))
		goto out;
	/* before anything goes in: a --debuginfo file that is no good stops here, and reading DWARF takes a while */
	lines = open_lines(k, fs, n, a, json);
	if (!lines)
		goto out;
	rf = calloc(n ? n : 1, sizeof(*rf));
	dropped = calloc(n ? n : 1, sizeof(*dropped));
	if (!rf || !dropped)
		goto out;
	/* the plans: a function the library refuses is listed with its reason and left out */
	cs = new_set(dev, k, fs, n, dropped, a->edges, rf, &nrf);
	if (!cs)
		goto out;
	if (!kinstr_cacheset__cnt(cs)) {
		cli_err("cover: no function left to cover (%zu refused%s%s)", nrf, nrf ? ", the first: " : "",
			nrf ? rf[0].r.why : "");
		goto out;
	}
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, NULL);
	cli_catch_signals();
	for (;;) {
		const struct kinstr_func *f;

		bad = SIZE_MAX;
		if (!kinstr_cacheset__install(cs, KINSTR_INSTALL_F_WAIT, &bad, err, sizeof(err)))
			break;
		f = bad < kinstr_cacheset__cnt(cs) ? kinstr_cacheset__func(cs, bad) : NULL;
		if (!a->keep || !f || cli_stop) {
			cli_err("cover: %s", err);
			cli_run__cleanup(&run);
			goto out;
		}
		/* -k: the module refused f's copy; f is reported and left out, the rest go in again */
		fprintf(stderr, "kinstr: cover: %s left out: %s\n", f->name, err);
		for (i = 0; i < n && fs[i] != f; i++)
			;
		if (i == n || dropped[i] || !(rf[nrf].module = strdup(err))) {
			cli_err("cover: %s", i == n || dropped[i] ? "the module's refusal names no function left to drop" :
				strerror(ENOMEM));
			cli_run__cleanup(&run);
			goto out;
		}
		rf[nrf].by_module = strstr(err, "the module refused") != NULL;
		rf[nrf++].f = f;
		dropped[i] = true;
		kinstr_cacheset__free(cs);
		cs = new_set(dev, k, fs, n, dropped, a->edges, NULL, NULL);
		if (!cs || !kinstr_cacheset__cnt(cs)) {
			if (cs)
				cli_err("cover: no function left to cover (%zu refused, the last by the module)", nrf);
			cli_run__cleanup(&run);
			goto out;
		}
	}
	if (!json)
		fprintf(stderr, "kinstr: covering %zu functions%s\n", kinstr_cacheset__cnt(cs),
			command || duration ? "" : "; Ctrl-C to stop");
	cli_run__begin(&run);
	if (command && cli_run__spawn(&run)) {
		cli_run__cleanup(&run);
		goto out;
	}
	cli_run__wait(&run, 0.1, NULL, NULL);
	cli_run__stop(&run);
	if (kinstr_cacheset__read(cs)) {
		cli_err("cover: cannot read the counters: %s", strerror(errno));
		cli_run__cleanup(&run);
		goto out;
	}
	kinstr_cacheset__remove(cs);
	cli_cover__results(cs, rf, nrf, json, hit_only, cli_now() - run.t0, run.status, lines);
	rc = lcov && write_lcov(k, cs, lcov, lines) ? CLI_FAIL : cli_run__status(&run);
	cli_run__cleanup(&run);
out:
	kinstr_cacheset__free(cs);
	kinstr_lines__free(lines);
	for (i = 0; rf && i < nrf; i++)
		free(rf[i].module);
	free(rf);
	free(dropped);
	free(fs);
	cli_close_kernel(k, dev);
	return rc;
}
