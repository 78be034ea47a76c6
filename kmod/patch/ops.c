// SPDX-License-Identifier: GPL-2.0
/*
 * The probe actions (actions/actions.h, struct kinstr_action_ops): one entry per action, what its
 * slot holds, what the verifier accepts, what the install takes, checks and links. A new action is
 * a line here (and its enum value and feature bit in the ABI). The table sits with the patcher
 * because its slots' prologues (slot.c) and stubs (entry.S) are the patcher's; the verifier
 * (check/) is handed the entry it needs.
 */
#include <linux/kernel.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "check/check.h"
#include "actions/actions.h"
#include "patch/patch.h"
#include "patch/slot.h"
#include "actions/bpf.h"

/* A trace probe needs the session's channel and a spec of its own. */
static int trace_check(const struct kinstr_probe *req, u32 i, const struct kinstr_install_objs *o)
{
	if (!o->specs || !o->chan || !kinstr_trace_spec_len(&o->specs[i]))
		return !o->chan ? -ENODEV : -EINVAL;
	return 0;
}

static void trace_link(struct kinstr_area *a, struct kprobe_k *p, const struct kinstr_probe *req, u32 i,
		       const struct kinstr_install_objs *o)
{
	p->spec = o->specs[i];
	p->pred = o->preds ? o->preds[i] : NULL;
	p->rec_len = kinstr_trace_spec_len(&o->specs[i]);
	p->chan = o->chan;
	if (!a->chan) {
		a->chan = o->chan;
		kinstr_chan_get(a->chan);
	}
}

/* A tally probe needs the session's tally and a spec whose key fits it. */
static int tally_check(const struct kinstr_probe *req, u32 i, const struct kinstr_install_objs *o)
{
	if (!o->tally)
		return -ENODEV;
	return o->specs && kinstr_tally_takes(o->tally, &o->specs[i]) ? 0 : -EINVAL;
}

static void tally_link(struct kinstr_area *a, struct kprobe_k *p, const struct kinstr_probe *req, u32 i,
		       const struct kinstr_install_objs *o)
{
	p->spec = o->specs[i];
	p->pred = o->preds ? o->preds[i] : NULL;
	p->tally = o->tally;
	if (!a->tally) {
		a->tally = o->tally;
		kinstr_tally_get(a->tally);
	}
}

/* A span probe needs the session's spans and a spec whose key suits them; arg 0 starts, 1 stops. */
static int span_check(const struct kinstr_probe *req, u32 i, const struct kinstr_install_objs *o)
{
	if (!o->span)
		return -ENODEV;
	return o->specs && kinstr_span_takes(o->span, &o->specs[i], req->arg) ? 0 : -EINVAL;
}

static void span_link(struct kinstr_area *a, struct kprobe_k *p, const struct kinstr_probe *req, u32 i,
		      const struct kinstr_install_objs *o)
{
	p->spec = o->specs[i];
	p->pred = o->preds ? o->preds[i] : NULL;
	p->span = o->span;
	p->span_stop = req->arg;
	if (!a->span) {
		a->span = o->span;
		kinstr_span_get(a->span);
	}
}

/* A timer probe's arg is one of the session's timers. */
static int timer_check(const struct kinstr_probe *req, u32 i, const struct kinstr_install_objs *o)
{
	if (req->arg >= kinstr_timers_count(o->timers))
		return !o->timers ? -ENODEV : -EINVAL;
	return 0;
}

static void timer_link(struct kinstr_area *a, struct kprobe_k *p, const struct kinstr_probe *req, u32 i,
		       const struct kinstr_install_objs *o)
{
	p->timers = o->timers;
	p->timer = req->arg;
	if (!a->timers) {
		a->timers = o->timers;
		kinstr_timers_get(a->timers);
	}
}

/* A code cache's entry point has no slot: its splice leads straight into the copy. */
static void enter_link(struct kinstr_area *a, struct kprobe_k *p, const struct kinstr_probe *req, u32 i,
		       const struct kinstr_install_objs *o)
{
	p->enter = true;
	p->slot = a->cache + req->arg;
}

/* A BPF probe's program, referenced from the caller's fd (bpf.c checks what it may do). */
static int bpf_take(struct kinstr_area *a, u32 i, const struct kinstr_probe *req, const struct kinstr_install_objs *o,
		    struct kinstr_verdict *v)
{
	u32 reason;

	if (!o->bpf || o->bpf[i].flags) {
		*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BAD_REQUEST, .addr = req->site };
		return -EINVAL;
	}
	a->probes[i].prog = kinstr_bpf_prog_get(&o->bpf[i], &reason);
	if (!a->probes[i].prog) {
		*v = (struct kinstr_verdict){ .refusal = KINSTR_REFUSE_BPF_PROG, .addr = req->site,
					      .reasons = 1U << reason };
		return reason == KINSTR_BPF_R_BAD_FD ? -EBADF : reason == KINSTR_BPF_R_UNAVAILABLE ? -EOPNOTSUPP :
		       -EINVAL;
	}
	a->probes[i].cookie = o->bpf[i].cookie;
	return 0;
}

#define KINDS_SPLICE	(1U << KINSTR_PROBE_JUMP | 1U << KINSTR_PROBE_TRAP)
#define KINDS_ALL	(KINDS_SPLICE | 1U << KINSTR_PROBE_FTRACE)

static const struct kinstr_action_ops ops[] = {
	[KINSTR_ACTION_COUNT] = { .name = "count", .kinds = KINDS_ALL, .inline_count = true, .scoped = true,
				  .flags = KINSTR_SAVE_FLAGS_LIVE, .prologue = kinstr_slot_count },
	[KINSTR_ACTION_TRACE] = { .name = "trace", .kinds = KINDS_ALL, .scoped = true, .flags = KINSTR_SAVE_FLAGS_ALWAYS,
				  .prologue = kinstr_slot_stub, .call = kinstr_trace_stub,
				  .check = trace_check, .link = trace_link },
	[KINSTR_ACTION_TIMER_START] = { .name = "timer_start", .kinds = KINDS_ALL, .arg = true, .scoped = true,
					.flags = KINSTR_SAVE_FLAGS_LIVE, .prologue = kinstr_slot_call,
					.call = kinstr_timer_start_hit, .check = timer_check, .link = timer_link },
	[KINSTR_ACTION_TIMER_STOP] = { .name = "timer_stop", .kinds = KINDS_ALL, .arg = true, .scoped = true,
				       .flags = KINSTR_SAVE_FLAGS_LIVE, .prologue = kinstr_slot_call,
				       .call = kinstr_timer_stop_hit, .check = timer_check, .link = timer_link },
	[KINSTR_ACTION_ENTER] = { .name = "enter", .feature = KINSTR_FEAT_CODE_CACHE, .kinds = KINDS_SPLICE,
				  .arg = true, .enters_cache = true, .link = enter_link },
	[KINSTR_ACTION_BPF] = { .name = "bpf", .feature = KINSTR_FEAT_BPF, .available = kinstr_bpf_available,
				.kinds = KINDS_ALL, .scoped = true, .flags = KINSTR_SAVE_FLAGS_ALWAYS,
				.prologue = kinstr_slot_stub, .call = kinstr_bpf_stub, .take = bpf_take },
	[KINSTR_ACTION_NOP] = { .name = "nop", .feature = KINSTR_FEAT_NOP, .kinds = KINDS_ALL },
	[KINSTR_ACTION_TALLY] = { .name = "tally", .feature = KINSTR_FEAT_TALLY, .kinds = KINDS_ALL, .scoped = true,
				  .flags = KINSTR_SAVE_FLAGS_ALWAYS, .prologue = kinstr_slot_stub,
				  .call = kinstr_tally_stub, .check = tally_check, .link = tally_link },
	[KINSTR_ACTION_SPAN] = { .name = "span", .feature = KINSTR_FEAT_SPAN, .kinds = KINDS_ALL, .arg = true,
				 .scoped = true, .flags = KINSTR_SAVE_FLAGS_ALWAYS, .prologue = kinstr_slot_stub,
				 .call = kinstr_span_stub, .check = span_check, .link = span_link },
};

const struct kinstr_action_ops *kinstr_action_get(u32 action)
{
	return action < ARRAY_SIZE(ops) && ops[action].name ? &ops[action] : NULL;
}

u64 kinstr_action_features(void)
{
	u64 f = 0;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (ops[i].name && (!ops[i].available || ops[i].available()))
			f |= ops[i].feature;
	return f;
}
