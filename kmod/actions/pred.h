/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Value predicates (pred.c): a trace probe's program over its spec's values, verified at install
 * (rules/pred.h) and run in probe context before the action. Any action may call
 * kinstr_pred_pass(); a NULL predicate passes.
 */
#ifndef KINSTR_KMOD_PRED_H
#define KINSTR_KMOD_PRED_H
#include <linux/types.h>

#include <uapi/linux/kinstr.h>

struct pt_regs;

/* One verified program and the values it reads; shared by an area's probes that ask the same. */
struct kinstr_pred_k {
	struct kinstr_pred_k *next;	/* the area's list (kinstr_area.preds) */
	struct kinstr_trace_spec spec;	/* the values' definitions (event 0) */
	struct kinstr_pred p;
};

/* Does the hit with the site's state regs pass pr? NULL: yes. Any context; fault-safe reads. */
bool kinstr_pred_pass(const struct kinstr_pred_k *pr, const struct pt_regs *regs);

/*
 * The predicates of an install's trace probes whose spec has KINSTR_TRACE_SPEC_F_PRED, read
 * from uptr (struct kinstr_pred[count]) and verified: ptrs[i] set for those (equal consecutive
 * ones share a copy), *list every copy. 0, -EFAULT, -ENOMEM, or -EINVAL with *bad the index.
 */
int kinstr_preds_take(const struct kinstr_probe *req, const struct kinstr_trace_spec *specs, u32 count, u64 uptr,
		      struct kinstr_pred_k **ptrs, struct kinstr_pred_k **list, u32 *bad);
void kinstr_preds_free(struct kinstr_pred_k *list);
size_t kinstr_pred_hit_roots(unsigned long *roots);

#endif
