/* SPDX-License-Identifier: GPL-2.0 */
/* limits.c: resource bounds and the memory areas hold. */
#ifndef KINSTR_KMOD_LIMITS_H
#define KINSTR_KMOD_LIMITS_H

#include "base.h"

/* limits.c: bounds per descriptor (EDQUOT) and in total (ENOSPC). */
struct kinstr_limits;
enum kinstr_res { KINSTR_RES_PROBES, KINSTR_RES_TRACE_BYTES, KINSTR_RES_TIMERS, KINSTR_RES_NR };
int kinstr_limit_charge(enum kinstr_res r, u64 *fd_used, u64 n);
void kinstr_limit_release_fd(u64 *fd_used, u64 n);
void kinstr_limit_release(enum kinstr_res r, u64 n);
void kinstr_limits_read(struct kinstr_limits *l);
/* The memory areas hold (text, per-CPU), from allocation to the free after quiescence. */
enum kinstr_mem { KINSTR_MEM_AREAS, KINSTR_MEM_TEXT_BYTES, KINSTR_MEM_PERCPU_BYTES, KINSTR_MEM_NR };
void kinstr_mem_add(enum kinstr_mem m, s64 n);
void kinstr_limits_init(void);

#endif
