// SPDX-License-Identifier: GPL-2.0
/* Opening the kernel to analyse and naming its functions, shared by the analysis subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/kernel.h>
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
	const struct kinstr_func *c[8];
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);
	size_t n, i;

	if (f)
		return f;
	if (errno != ENOTUNIQ) {
		if (spec)
			cli_err("%s: no function '%s' in the kernel's symbols", spec, name);
		else
			cli_err("no function '%s' in the kernel's symbols", name);
		errno = ENOENT;
		return NULL;
	}
	n = kinstr_kernel__lookup(k, name, c, 8);
	fprintf(stderr, "kinstr: %s%s%zu functions are named '%s':", spec ? spec : "", spec ? ": " : "", n, name);
	for (i = 0; i < n && i < 8; i++)
		fprintf(stderr, "%s %s@0x%llx%s%s%s", i ? "," : "", c[i]->name, (unsigned long long)c[i]->addr,
			c[i]->module ? " [" : "", c[i]->module ? c[i]->module : "", c[i]->module ? "]" : "");
	fprintf(stderr, "%s; name one as NAME@ADDR\n", n > 8 ? ", ..." : "");
	errno = ENOTUNIQ;
	return NULL;
}
