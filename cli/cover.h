/* SPDX-License-Identifier: GPL-2.0 */
/* Between cover_run.c (the code cache's run) and out/cover.c (what it prints). */
#ifndef KINSTR_CLI_COVER_H
#define KINSTR_CLI_COVER_H

#include <stdbool.h>
#include <stddef.h>
#include <kinstr/cache.h>

/* cover_run.c and out/cover.c: a function the run could not cover, and why. */
struct cli_cover_refused {
	const struct kinstr_func *f;
	struct kinstr_cache_refusal r;	/* the plan's refusal (by the library) */
	char *module;			/* else -k: the refusal at install, as libkinstr words it */
	bool by_module;			/* kinstr.ko refused the copy (else libkinstr, at install) */
};
/* Plan f as the module's area would hold it and print its row (or JSON object); shown and refused count. */
void cli_cover__plan_one(const struct kinstr_kernel *k, const struct kinstr_func *f, bool json, bool edges,
			 size_t *shown, size_t *refused, int *rc);
struct kinstr_cacheset;
struct kinstr_lines;
/* Each function's blocks and counts (hit_only: hit or not), the refused ones, the totals. */
void cli_cover__results(const struct kinstr_cacheset *cs, const struct cli_cover_refused *rf, size_t nrf, bool json,
			bool hit_only, double secs, int status, struct kinstr_lines *lines);

#endif
