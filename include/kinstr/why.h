/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The library's one error report. A call that can fail for a reason worth a sentence takes a
 * struct kinstr_why *why (NULL: the caller wants no sentence); when it fails it returns -errno (or
 * NULL with errno set) and fills why: why->err the same -errno, why->msg the stable sentence a tool
 * prints after "kinstr: ". The planner's refusals also say what they are about (the function, the
 * address, the site's rule and instruction there). A call that succeeds leaves why as it was,
 * unless its header says otherwise.
 */
#ifndef KINSTR_WHY_H
#define KINSTR_WHY_H

#include <stdarg.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_func;

/* Why a call failed, or something was refused. */
struct kinstr_why {
	int err;				/* -errno */
	const struct kinstr_func *func;		/* NULL when no function is known */
	uint64_t addr;				/* the address refused, 0 when none */
	unsigned int rule;			/* the site's enum kinstr_site_rule at addr (NONE if none) */
	uint8_t insn_len;			/* the instruction at addr, 0 when unknown */
	char msg[512];				/* the sentence, e.g. "vfs_read+0x3: refused: ..." */
};

/*
 * Fill why (if not NULL) for a failure: err (a negative errno), the sentence fmt formats (cut at
 * sizeof(why->msg) - 1 bytes), func, addr, rule and insn_len zeroed. The arguments may point into
 * why->msg (a sentence put before the one there). Returns err; errno is left as it was.
 */
int kinstr_why__fail(struct kinstr_why *why, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with the arguments in a va_list. */
int kinstr_why__vfail(struct kinstr_why *why, int err, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#ifdef __cplusplus
}
#endif
#endif
