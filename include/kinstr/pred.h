/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Value predicates (lib/plan/pred.c): `SPEC(VALUE...) if EXPR` and `--where EXPR` compiled into
 * the module's program (struct kinstr_pred, rules/pred.h). EXPR compares the spec's named values,
 * pid, tid, cpu and comm with constants: == != < <= > >= for numbers (signed where the value's
 * type is: s8..s64, or a signed BTF type of an argument or ret; else unsigned), == and != for
 * strings (comm, or a string value), joined by &&, || and !, with parentheses. A number alone
 * means "not 0".
 */
#ifndef KINSTR_PRED_H
#define KINSTR_PRED_H

#include <uapi/linux/kinstr.h>
#include <kinstr/values.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * expr over vals[nvals] (a trace event's values) into *out: 0, or -EINVAL and why ("at column N:
 * expected ..., not 'TOKEN'"; an unknown name lists the names there are), or -E2BIG (longer
 * than KINSTR_PRED_MAX_INSNS instructions). vals NULL: the syntax alone (any name but comm goes;
 * *out is then no program to run).
 */
int kinstr_pred__compile(const char *expr, const struct kinstr_value *vals, unsigned int nvals,
			 struct kinstr_pred *out, struct kinstr_why *why);
/* Both: *p becomes "p && q". 0, or -E2BIG and why. */
int kinstr_pred__and(struct kinstr_pred *p, const struct kinstr_pred *q, struct kinstr_why *why);
/* Is p a program the module takes for spec (the module's own rule, rules/pred.h)? */
bool kinstr_pred__valid(const struct kinstr_pred *p, const struct kinstr_trace_spec *spec);

#ifdef __cplusplus
}
#endif
#endif
