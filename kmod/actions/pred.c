// SPDX-License-Identifier: GPL-2.0
/*
 * Value predicates: the install's side (read, verify, share) and probe context's (run). The
 * program's meaning is rules/pred.h's, shared with the library; here are only the reads of the
 * hit's values: registers from the site's pt_regs, memory and strings with
 * copy_from_kernel_nofault (a fault reads as 0 or "", as the trace records it), the thread's
 * pid, tid and comm. The predicate reads what it needs itself, before the ring is touched.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include "base.h"
#include "actions/actions.h"
#include "actions/pred.h"

struct kinstr_pred_env {
	const struct kinstr_trace_spec *spec;
	const struct pt_regs *regs;
};

#define KINSTR_PRED_WANT_EVAL
#include "rules/pred.h"

static notrace uint64_t kinstr_pred_env_num(const struct kinstr_pred_env *e, unsigned int i)
{
	const struct kinstr_trace_val *v = &e->spec->vals[i];
	unsigned long r = kinstr_trace_reg(e->regs, v->reg);
	u64 val = 0;

	if (v->kind == KINSTR_VAL_REG)
		return r;
	if (copy_from_kernel_nofault(&val, (void *)(r + (long)v->offset), v->size))
		return 0;
	return val;
}

static notrace uint64_t kinstr_pred_env_ctx(const struct kinstr_pred_env *e, unsigned int what)
{
	switch (what) {
	case KINSTR_PRED_CTX_PID: return current->tgid;
	case KINSTR_PRED_CTX_TID: return current->pid;
	default: return raw_smp_processor_id();
	}
}

static notrace bool bytes_equal(const char *a, const char *b, unsigned int n)
{
	while (n--)
		if (*a++ != *b++)
			return false;
	return true;
}

/*
 * String value i as the trace records it (at most size - 1 chars, "" where the first read
 * faults, cut where a later page faults) against s[0, len] (s[len] is its NUL): read in chunks
 * that stay within a page, so a fault falls where copy_str_nofault's would.
 */
static notrace int kinstr_pred_env_streq(const struct kinstr_pred_env *e, unsigned int i, const char *s,
					 unsigned int len)
{
	const struct kinstr_trace_val *v;
	unsigned long a;
	unsigned int n, off = 0;
	char buf[16];

	if (i == KINSTR_PRED_COMM)
		return len < TASK_COMM_LEN && bytes_equal(current->comm, s, len + 1);
	v = &e->spec->vals[i];
	a = kinstr_trace_reg(e->regs, v->reg) + (long)v->offset;
	if (v->deref && copy_from_kernel_nofault(&a, (void *)a, sizeof(a)))
		a = 0;
	if (len > v->size - 1u)
		return 0;
	/* the NUL too, unless the record is cut at len chars anyway */
	n = min(len + 1, v->size - 1u);
	while (a && off < n) {
		unsigned int chunk = min3(n - off, (unsigned int)sizeof(buf),
					  (unsigned int)(PAGE_SIZE - ((a + off) & ~PAGE_MASK)));

		if (copy_from_kernel_nofault(buf, (void *)(a + off), chunk))
			break;
		if (!bytes_equal(buf, s + off, chunk))
			return 0;
		off += chunk;
	}
	return off == n || off == len;	/* all of it, or cut by a fault just after len chars */
}

notrace bool kinstr_pred_pass(const struct kinstr_pred_k *pr, const struct pt_regs *regs)
{
	struct kinstr_pred_env e;

	if (!pr)
		return true;
	e.spec = &pr->spec;
	e.regs = regs;
	return kinstr_pred_run(&pr->p, &e);
}

size_t kinstr_pred_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)kinstr_pred_pass;
	return 1;
}

void kinstr_preds_free(struct kinstr_pred_k *list)
{
	while (list) {
		struct kinstr_pred_k *next = list->next;

		kfree(list);
		list = next;
	}
}

static bool wants_pred(const struct kinstr_probe *req, const struct kinstr_trace_spec *specs, u32 i)
{
	return (req[i].action == KINSTR_ACTION_TRACE || req[i].action == KINSTR_ACTION_TALLY ||
		req[i].action == KINSTR_ACTION_SPAN) && specs && (specs[i].flags & KINSTR_TRACE_SPEC_F_PRED);
}

int kinstr_preds_take(const struct kinstr_probe *req, const struct kinstr_trace_spec *specs, u32 count, u64 uptr,
		      struct kinstr_pred_k **ptrs, struct kinstr_pred_k **list, u32 *bad)
{
	struct kinstr_pred_k *last = NULL, *pr = NULL;
	u32 i;

	*list = NULL;
	for (i = 0; i < count; i++) {
		ptrs[i] = NULL;
		if (!wants_pred(req, specs, i))
			continue;
		*bad = i;
		if (!uptr)
			goto inval;
		if (!pr) {
			pr = kmalloc(sizeof(*pr), GFP_KERNEL);
			if (!pr)
				goto fail_nomem;
		}
		if (copy_from_user(&pr->p, u64_to_user_ptr(uptr) + (size_t)i * sizeof(pr->p), sizeof(pr->p))) {
			kfree(pr);
			kinstr_preds_free(*list);
			*list = NULL;
			return -EFAULT;
		}
		pr->spec = specs[i];
		pr->spec.event = 0;	/* not the predicate's business: lets specs of other events share */
		if (kinstr_pred_verify(&pr->p, &pr->spec))
			goto inval;
		/* the probes of one spec come one after another: share with the last one kept */
		if (last && !memcmp(&last->p, &pr->p, sizeof(pr->p)) && !memcmp(&last->spec, &pr->spec, sizeof(pr->spec))) {
			ptrs[i] = last;
			continue;
		}
		pr->next = *list;
		*list = pr;
		last = pr;
		ptrs[i] = pr;
		pr = NULL;
	}
	kfree(pr);
	return 0;
inval:
	kfree(pr);
	kinstr_preds_free(*list);
	*list = NULL;
	return -EINVAL;
fail_nomem:
	kinstr_preds_free(*list);
	*list = NULL;
	return -ENOMEM;
}
