// SPDX-License-Identifier: GPL-2.0
/* Opening the kernel to analyse and naming its functions, shared by the analysis subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/plan.h>
#include "cli.h"

bool cli_keep_kernel;
static struct kinstr_kernel *kept;

struct kinstr_kernel *cli_kept_kernel(void)
{
	return kept;
}

void cli_release_kernel(void)
{
	kinstr_kernel__close(kept);
	kept = NULL;
}

struct kinstr_kernel *cli_open_kernel(const char *snapshot, struct kinstr_dev **devp)
{
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;

	*devp = NULL;
	if (snapshot) {
		k = kinstr_kernel__open_snapshot(snapshot);
		if (!k)
			cli_err("cannot read snapshot %s: %s", snapshot,
				errno == EINVAL ? "not a kinstr snapshot (or a damaged one)" : strerror(errno));
		return k;
	}
	dev = kinstr_dev__open(NULL);
	if (!dev) {
		int err = errno;

		cli_err("cannot open %s: %s: %s", KINSTR_DEVICE, strerror(err), kinstr_dev__open_hint(err));
		return NULL;
	}
	if (cli_keep_kernel && kept) {
		*devp = dev;
		return kept;
	}
	k = kinstr_kernel__open_live(dev);
	if (!k) {
		cli_err("cannot read the running kernel's code: %s%s", strerror(errno),
			errno == ENOENT ? " (is debugfs mounted at /sys/kernel/debug?)" : "");
		kinstr_dev__close(dev);
		return NULL;
	}
	*devp = dev;
	if (cli_keep_kernel)
		kept = k;
	return k;
}

void cli_close_kernel(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	if (k && k != kept)
		kinstr_kernel__close(k);
	kinstr_dev__close(dev);
}

const struct cli_colors *cli_colors(void)
{
	static const struct cli_colors on = { "\033[32m", "\033[33m", "\033[31m", "\033[2m", "\033[0m" };
	static const struct cli_colors off = { "", "", "", "", "" };
	const char *nc = getenv("NO_COLOR");

	return cli_term_ok() && !(nc && *nc) ? &on : &off;
}

const char *cli_func_spec(const struct kinstr_kernel *k, const struct kinstr_func *f, char *buf, size_t len)
{
	if (kinstr_kernel__name_unique(k, f))
		return f->name;
	snprintf(buf, len, "%s@0x%llx", f->name, (unsigned long long)f->addr);
	return buf;
}

const struct kinstr_func *cli_find_func(const struct kinstr_kernel *k, const char *spec, const char *name)
{
	struct kinstr_why why;
	const struct kinstr_func *f = kinstr_plan__func(k, name, &why);

	if (!f)
		cli_err("%s%s%s", spec ? spec : "", spec ? ": " : "", why.msg);
	return f;
}

/* A glob's refused functions, counted by rule, after it was planned. */
static void print_glob(const char *spec, const struct kinstr_plan_glob *g)
{
	size_t i;

	if (!strpbrk(spec, "*?[") || !g->refused)
		return;
	fprintf(stderr, "kinstr: %s: %zu functions probed, %zu refused", spec, g->probed, g->refused);
	for (i = 0; i < g->nrules; i++)
		fprintf(stderr, "%s %zu %s", i ? ";" : ":", g->rules[i].count, g->rules[i].why);
	fprintf(stderr, "%s (see 'kinstr sites %s')\n", g->more ? "; ..." : "", spec);
}

struct kinstr_spec *cli_specs__parse(int n, char *const *specs, bool trace)
{
	struct kinstr_spec *sp = calloc(n > 0 ? (size_t)n : 1, sizeof(*sp));
	struct kinstr_why why;
	int i;

	if (!sp) {
		cli_err("%s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < n; i++)
		if ((trace ? kinstr_spec__parse_trace : kinstr_spec__parse)(specs[i], &sp[i], &why)) {
			cli_err("%s", why.msg);
			free(sp);
			return NULL;
		}
	return sp;
}

bool cli_spec_has_pred(const char *spec)
{
	struct kinstr_spec sp;

	return !kinstr_spec__parse_trace(spec, &sp, NULL) && sp.has_pred;
}

int cli_add_spec(struct kinstr_plan *pl, const struct kinstr_spec *sp)
{
	struct kinstr_plan_glob g;
	struct kinstr_why why;
	int ret = kinstr_plan__add(pl, sp, &why, &g);

	if (ret)
		cli_err("%s", why.msg);
	else
		print_glob(sp->text, &g);
	return ret;
}

int cli_add_trace(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_btf *btf,
		  struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max)
{
	struct kinstr_plan_glob g = { 0 };
	struct kinstr_why why;
	int ret = kinstr_plan__add_traced(pl, sp, btf, ev, nev, max, &why, &g);

	if (ret) {
		cli_err("%s", why.msg);
		return ret;
	}
	print_glob(sp->text, &g);
	return 0;
}
