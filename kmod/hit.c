// SPDX-License-Identifier: GPL-2.0
/*
 * Probe context: what every slot calls through its stub (entry.S), in any context (task, irq,
 * NMI). It calls down only: the timers (timing.c) and the tracer (trace.c).
 */
#include <linux/percpu.h>
#include <linux/ptrace.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"
#include "hit.h"
#include "timing.h"

DEFINE_PER_CPU(u8, kinstr_in_action);

/* Called from every slot's prologue, in any context (task, irq, NMI): touch nothing else. */
notrace void kinstr_probe_hit(struct kprobe_k *p)
{
	u8 bit;

	this_cpu_inc(p->hits[0]);
	if (unlikely(p->timers)) {
		if (!kinstr_action_enter(&bit)) {
			this_cpu_inc(p->hits[1]);
			return;
		}
		kinstr_timer_hit(p->timers, p->timer, p->timer_start);
		kinstr_action_exit(bit);
	}
}

/* From a trace probe's slot, through kinstr_trace_stub: regs is the site's full state. */
notrace void kinstr_trace_hit(struct kprobe_k *p, struct pt_regs *regs)
{
	u8 bit;

	regs->ip = p->site;
	this_cpu_inc(p->hits[0]);
	if (!kinstr_action_enter(&bit)) {
		this_cpu_inc(p->hits[1]);
		return;
	}
	kinstr_trace_record(p->chan, &p->spec, p->rec_len, regs);
	kinstr_action_exit(bit);
}

/* What probe context enters here, for the hit path's closure (hitpath.c). */
size_t kinstr_hit_roots(unsigned long *r)
{
	size_t n = 0;

	r[n++] = (unsigned long)kinstr_probe_hit;
	r[n++] = (unsigned long)kinstr_trace_hit;
	return n;
}
