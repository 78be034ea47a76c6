/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The trace value grammar (lib/plan/values.c): what a trace probe records, and how the trace stores it. */
#ifndef KINSTR_VALUES_H
#define KINSTR_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <uapi/linux/kinstr.h>
#include <kinstr/ctf.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_proto;

/*
 * What a trace probe records (lib/plan/values.c): VALUE[:TYPE],... where VALUE is a register (%rdi,
 * %rip), an argument's name at FUNC's entry (from BTF: proto, may be NULL), ret at FUNC%return,
 * or +OFF(X) memory at X + OFF; NAME=VALUE names the field; TYPE is u8..u64, s8..s64, x8..x64
 * or string[N] (default KINSTR_VALUE_STR_DEFAULT bytes).
 */
#define KINSTR_VALUE_STR_DEFAULT 64
struct kinstr_value {
	char name[64];			/* the event field's name: distinct, not pid/tid/comm */
	struct kinstr_trace_val v;	/* what the module reads */
	enum kinstr_ctf_type type;	/* how the trace stores it */
	bool hex;
};
/*
 * list (NULL or empty: none; at a return, ret) into vals[KINSTR_TRACE_MAX_VALS], *nvals of them:
 * 0, or -errno and why.
 */
int kinstr_values__parse(const char *list, const struct kinstr_proto *proto, bool at_entry, bool at_return,
			 const char *func, struct kinstr_value *vals, unsigned int *nvals, struct kinstr_why *why);

#ifdef __cplusplus
}
#endif
#endif
