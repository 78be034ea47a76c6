/* SPDX-License-Identifier: GPL-2.0 */
/* The recursion guard of every action that calls out (actions/). */
#ifndef KINSTR_KMOD_GUARD_H
#define KINSTR_KMOD_GUARD_H

#include "base.h"

/*
 * The recursion guard of every action that calls out (timers, trace): one bit per context level
 * (task, softirq, irq, NMI) per CPU. A probe hit inside kinstr's own action at the same level is
 * recursion through a function the hit path reaches in a way the closure cannot see (an
 * indirect call): its action is skipped and counted as missed. Preemption stays off inside so
 * the bit is the CPU's own.
 */
DECLARE_PER_CPU(u8, kinstr_in_action);
static __always_inline bool kinstr_action_enter(u8 *bit)
{
	unsigned int pc;

	preempt_disable_notrace();
	/* task level, the common case, in one test; interrupt_context_level() otherwise */
	pc = preempt_count();
	*bit = likely(!(pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET))) ? 1 : 1U << interrupt_context_level();
	if (unlikely(__this_cpu_read(kinstr_in_action) & *bit)) {
		preempt_enable_notrace();
		return false;
	}
	/* one instruction: an interrupt sees the bit either set or not, never half */
	this_cpu_or(kinstr_in_action, *bit);
	barrier();	/* the action's accesses stay inside the guarded region */
	return true;
}

static __always_inline void kinstr_action_exit(u8 bit)
{
	barrier();	/* ... and are done before the bit clears */
	this_cpu_and(kinstr_in_action, ~bit);
	preempt_enable_notrace();
}

#endif
