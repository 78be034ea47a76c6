/* SPDX-License-Identifier: GPL-2.0 */
/* Between cover_run.c (the code cache's run, through lib/cache/cover.c) and out/cover.c (what it prints). */
#ifndef KINSTR_CLI_COVER_H
#define KINSTR_CLI_COVER_H

#include <stdbool.h>
#include <stddef.h>
#include <kinstr/cover.h>

/* --dry-run: each function's plan as the module's area would hold it, a row (or JSON object) each; CLI_*. */
int cli_cover__dry_run(const struct kinstr_kernel *k, const struct kinstr_cover *cv, bool json, bool edges);
/* On stderr, for the core kernel and each module among cv's functions: where its source lines come from. */
void cli_cover__lines_from(const struct kinstr_kernel *k, const struct kinstr_cover *cv,
			   const struct kinstr_lines *l);
struct kinstr_cacheset;
/* Each function's blocks and counts (hit_only: hit or not), the refused ones, the totals. */
void cli_cover__results(const struct kinstr_cacheset *cs, const struct kinstr_cover_refusal *rf, size_t nrf,
			bool json, bool hit_only, double secs, int status, struct kinstr_lines *lines);
/* --once: the functions refused when planned (text only); then each block hit or not, and the totals. */
void cli_cover__once_refused(const struct kinstr_cover_once *o);
void cli_cover__once_results(const struct kinstr_cover_once *o, bool json, double secs, int status);

#endif
