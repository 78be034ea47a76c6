/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Block coverage as an lcov tracefile (genhtml renders it; Debian's lcov package). Without the
 * kernel's DWARF there are no source lines, so each function gets a listing of its own to stand
 * for its source: DIR/NAME@ADDR.s, one line per instruction of the copy (offset, bytes' text),
 * the function's name on line 1; a block's count goes on the line of its first instruction
 * (DA), the function's on line 1 (FN/FNDA, the count of its entry block).
 */
#ifndef KINSTR_LCOV_H
#define KINSTR_LCOV_H

#include <stdint.h>
#include <stdio.h>
#include <kinstr/cache.h>
#include <kinstr/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_lines;
/*
 * Append function f's record to the tracefile info, its blocks' counts being counts[] (one per
 * block of c, in order), and write its listing into the directory dir (which must exist); with
 * lines (may be NULL), each instruction's source line from DWARF beside it. 0 or a negative errno.
 */
int kinstr_lcov__write_fn(FILE *info, const char *dir, const struct kinstr_kernel *k, const struct kinstr_func *f,
			  const struct kinstr_cache_fn *c, const uint64_t *counts, struct kinstr_lines *lines);
/*
 * The tracefile path of every function of cache set cs with its blocks' counts as last read, the
 * listings in the directory PATH.src (made if it is not there). 0, or a negative errno with why
 * (may be NULL) saying where ("PATH: reason").
 */
struct kinstr_cacheset;
struct kinstr_why;
int kinstr_lcov__write(const char *path, const struct kinstr_kernel *k, const struct kinstr_cacheset *cs,
		       struct kinstr_lines *lines, struct kinstr_why *why);

#ifdef __cplusplus
}
#endif
#endif
