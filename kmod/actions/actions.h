/* SPDX-License-Identifier: GPL-2.0 */
/* actions/: trace channels and timers, as the session and the patcher call them. */
#ifndef KINSTR_KMOD_ACTIONS_H
#define KINSTR_KMOD_ACTIONS_H

#include "base.h"

/* trace.c: trace channels (one per session), the trace action, the reader's ioctls. */
struct kinstr_chan;
struct kinstr_trace_spec;
struct pt_regs;
struct vm_area_struct;
struct file;
struct poll_table_struct;
void kinstr_chan_get(struct kinstr_chan *ch);
void kinstr_chan_put(struct kinstr_chan *ch);
long kinstr_trace_create(struct kinstr_chan **chp, void __user *uarg);
long kinstr_trace_subbuf(struct kinstr_chan *ch, unsigned int cmd, void __user *uarg);
long kinstr_trace_flush(struct kinstr_chan *ch, void __user *uarg);
long kinstr_trace_stats(struct kinstr_chan *ch, void __user *uarg);
__poll_t kinstr_trace_poll(struct kinstr_chan *ch, struct file *file, struct poll_table_struct *pt);
int kinstr_trace_mmap(struct kinstr_chan *ch, struct vm_area_struct *vma);
u32 kinstr_trace_spec_len(const struct kinstr_trace_spec *s);
size_t kinstr_trace_hit_roots(unsigned long *roots);
void kinstr_trace_record(struct kinstr_chan *ch, const struct kinstr_trace_spec *spec, u32 len,
			 struct pt_regs *regs);

/* timing.c: per-thread start/stop timers for the profiler. */
struct kinstr_timers;
void kinstr_timers_get(struct kinstr_timers *t);
void kinstr_timers_put(struct kinstr_timers *t);
u32 kinstr_timers_count(const struct kinstr_timers *t);
long kinstr_timers_create(struct kinstr_timers **tp, void __user *uarg);
long kinstr_timers_read(struct kinstr_timers *t, void __user *uarg);
long kinstr_timer_paths(struct kinstr_timers *t, void __user *uarg);
size_t kinstr_timing_hit_roots(unsigned long *roots);
int kinstr_timing_init(void);
void kinstr_timing_exit(void);

#endif
