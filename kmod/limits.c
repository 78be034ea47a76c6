// SPDX-License-Identifier: GPL-2.0
/*
 * Bounds on what descriptors may hold: probes (patch space near kernel text, per-CPU counters),
 * trace buffers (vmalloc'ed, mapped to user space) and timers. Each has a bound per descriptor
 * (EDQUOT past it) and one in total (ENOSPC), module parameters an administrator may change:
 * without them a loop of ALLOC ioctls exhausts the kernel's memory ("System is deadlocked on
 * memory").
 *
 * A descriptor's use is charged when it asks and given back when it lets go (REMOVE, close); the
 * total is given back when the memory is (after quiescence, by the worker).
 */
#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "limits.h"

static unsigned long max_probes_per_fd = 65536;
static unsigned long max_probes = 262144;
static unsigned long max_trace_bytes_per_fd = 1UL << 30;
static unsigned long max_trace_bytes;	/* 0: a quarter of RAM, set at load */
static unsigned long max_timers_per_fd = KINSTR_TIMERS_MAX;
static unsigned long max_timers = 65536;
module_param(max_probes_per_fd, ulong, 0644);
MODULE_PARM_DESC(max_probes_per_fd, "probes one descriptor may hold (EDQUOT past it)");
module_param(max_probes, ulong, 0644);
MODULE_PARM_DESC(max_probes, "probes all descriptors may hold (ENOSPC past it)");
module_param(max_trace_bytes_per_fd, ulong, 0644);
MODULE_PARM_DESC(max_trace_bytes_per_fd, "trace buffer bytes of one descriptor (EDQUOT past it)");
module_param(max_trace_bytes, ulong, 0644);
MODULE_PARM_DESC(max_trace_bytes, "trace buffer bytes of all descriptors (ENOSPC past it; default: RAM/4)");
module_param(max_timers_per_fd, ulong, 0644);
MODULE_PARM_DESC(max_timers_per_fd, "timers of one descriptor (EDQUOT past it)");
module_param(max_timers, ulong, 0644);
MODULE_PARM_DESC(max_timers, "timers of all descriptors (ENOSPC past it)");

static atomic64_t in_use[KINSTR_RES_NR];
/* not limits: what is held, so that a test can see every byte come back after the frees */
static atomic64_t mem_held[KINSTR_MEM_NR];

static unsigned long limit_fd(enum kinstr_res r)
{
	switch (r) {
	case KINSTR_RES_PROBES:
		return READ_ONCE(max_probes_per_fd);
	case KINSTR_RES_TRACE_BYTES:
		return READ_ONCE(max_trace_bytes_per_fd);
	default:
		return READ_ONCE(max_timers_per_fd);
	}
}

static unsigned long limit_total(enum kinstr_res r)
{
	switch (r) {
	case KINSTR_RES_PROBES:
		return READ_ONCE(max_probes);
	case KINSTR_RES_TRACE_BYTES:
		return READ_ONCE(max_trace_bytes);
	default:
		return READ_ONCE(max_timers);
	}
}

/* Charge n to a descriptor whose use is *fd_used (under its lock) and to the total. */
int kinstr_limit_charge(enum kinstr_res r, u64 *fd_used, u64 n)
{
	if (n > limit_fd(r) || *fd_used > limit_fd(r) - n)
		return -EDQUOT;
	if (atomic64_add_return(n, &in_use[r]) > limit_total(r)) {
		atomic64_sub(n, &in_use[r]);
		return -ENOSPC;
	}
	*fd_used += n;
	return 0;
}

/* The descriptor let go of n (its memory may still wait for quiescence). */
void kinstr_limit_release_fd(u64 *fd_used, u64 n)
{
	*fd_used -= min(*fd_used, n);
}

/* n is freed. */
void kinstr_limit_release(enum kinstr_res r, u64 n)
{
	atomic64_sub(n, &in_use[r]);
}

void kinstr_mem_add(enum kinstr_mem m, s64 n)
{
	atomic64_add(n, &mem_held[m]);
}

/* The limits and what is in use, for KINSTR_IOC_LIMITS. */
void kinstr_limits_read(struct kinstr_limits *l)
{
	l->max_probes_per_fd = limit_fd(KINSTR_RES_PROBES);
	l->max_probes = limit_total(KINSTR_RES_PROBES);
	l->max_trace_bytes_per_fd = limit_fd(KINSTR_RES_TRACE_BYTES);
	l->max_trace_bytes = limit_total(KINSTR_RES_TRACE_BYTES);
	l->max_timers_per_fd = limit_fd(KINSTR_RES_TIMERS);
	l->max_timers = limit_total(KINSTR_RES_TIMERS);
	l->probes = atomic64_read(&in_use[KINSTR_RES_PROBES]);
	l->trace_bytes = atomic64_read(&in_use[KINSTR_RES_TRACE_BYTES]);
	l->timers = atomic64_read(&in_use[KINSTR_RES_TIMERS]);
	l->areas = atomic64_read(&mem_held[KINSTR_MEM_AREAS]);
	l->text_bytes = atomic64_read(&mem_held[KINSTR_MEM_TEXT_BYTES]);
	l->percpu_bytes = atomic64_read(&mem_held[KINSTR_MEM_PERCPU_BYTES]);
}

void kinstr_limits_init(void)
{
	if (!max_trace_bytes)
		max_trace_bytes = (totalram_pages() << PAGE_SHIFT) / 4;
}
