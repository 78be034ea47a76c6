// SPDX-License-Identifier: GPL-2.0
/*
 * Trace channels: one per file descriptor, a ring buffer (ring/ring.h) per possible CPU in one
 * vmalloc_user area that user space maps; the trace action that probes run; the reader's
 * get/put/flush/stats ioctls; a timer that wakes readers (probes never wake anyone).
 *
 * Lifetime: the channel is reference-counted. The session holds one reference, every area with
 * trace probes one (dropped when the worker frees the area, after quiescence: no probe can still
 * be writing), every mapping one (the pages stay until munmap).
 */
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <asm/ptrace.h>

#include <uapi/linux/kinstr.h>
#include "ring/ring.h"
#include "base.h"
#include "limits.h"
#include "actions/actions.h"
#include "actions/fetch.h"
#include "compat.h"
#include "abi.h"

#define READER_TICK (HZ / 10)

struct kinstr_chan {
	struct kref ref;
	struct kr_config cfg;
	u32 nr_cpus;
	size_t buf_size;		/* one CPU's bytes in the mapping (page aligned) */
	void *mem;			/* nr_cpus * buf_size, vmalloc_user */
	struct kr_buf *bufs;		/* [nr_cpus] */
	u64 (*clock)(void);		/* chan_clock or chan_clock_local: the slow paths' */
	bool local_clock;		/* the record path picks one of the two as a constant */
	struct mutex read_lock;		/* one reader at a time per channel */
	wait_queue_head_t wq;
	struct timer_list timer;
	u64 last_written;		/* the timer's view */
	bool ready;			/* records were written since the reader last found nothing */
	u64 charged;			/* buffer bytes against the limits */
};

/* NMI-safe, CLOCK_MONOTONIC: what the CTF clock describes. */
static notrace u64 chan_clock(void)
{
	return ktime_get_mono_fast_ns();
}

/* NMI-safe, per-CPU monotonic, cheap wherever the TSC is usable (KINSTR_TRACE_F_LOCAL_CLOCK). */
static notrace u64 chan_clock_local(void)
{
	return local_clock();
}

static u64 chan_written(struct kinstr_chan *ch)
{
	struct kr_lost l;
	u64 sum = 0;
	u32 cpu;

	for (cpu = 0; cpu < ch->nr_cpus; cpu++) {
		kr_lost(&ch->bufs[cpu], &l);
		sum += l.records + l.full + l.wrap + l.big + l.nest;
	}
	return sum;
}

static void chan_tick(struct timer_list *t)
{
	struct kinstr_chan *ch = from_timer(ch, t, timer);
	u64 w = chan_written(ch);

	if (w != ch->last_written) {
		ch->last_written = w;
		WRITE_ONCE(ch->ready, true);
		wake_up_interruptible(&ch->wq);
	}
	mod_timer(&ch->timer, jiffies + READER_TICK);
}

static void chan_release(struct kref *ref)
{
	struct kinstr_chan *ch = container_of(ref, struct kinstr_chan, ref);

	del_timer_sync(&ch->timer);
	vfree(ch->mem);
	kinstr_limit_release(KINSTR_RES_TRACE_BYTES, ch->charged);
	kvfree(ch->bufs);
	kfree(ch);
}

void kinstr_chan_get(struct kinstr_chan *ch)
{
	kref_get(&ch->ref);
}

void kinstr_chan_put(struct kinstr_chan *ch)
{
	if (ch)
		kref_put(&ch->ref, chan_release);
}

static bool is_pow2_in(u32 v, u32 lo, u32 hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

/* What probe context enters here, for the hit path's closure; the slow paths call the clocks by pointer. */
size_t kinstr_trace_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)kinstr_trace_record;
	r[1] = (unsigned long)chan_clock;
	r[2] = (unsigned long)chan_clock_local;
	return 3;
}

long kinstr_trace_create(struct kinstr_chan **chp, void __user *uarg)
{
	struct kinstr_trace_create tc;
	struct kinstr_chan *ch;
	u64 fd_used = 0;	/* one channel per descriptor */
	size_t per;
	u32 cpu;
	int err;

	err = kinstr_get_struct(&tc, sizeof(tc), uarg, KINSTR_TRACE_CREATE_SIZE_VER0);
	if (err)
		return err;
	if ((tc.flags & ~KINSTR_TRACE_F_LOCAL_CLOCK) || tc.nr_cpus || tc.buf_mmap_size || tc.clock_ns ||
	    tc.realtime_ns || tc.mode > KINSTR_TRACE_OVERWRITE ||
	    !is_pow2_in(tc.subbuf_size, 4096, 16 << 20) || !is_pow2_in(tc.num_subbufs, 2, KR_MAX_SUBBUFS))
		return -EINVAL;
	if (*chp)
		return -EEXIST;
	ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	if (!ch)
		return -ENOMEM;
	ch->cfg = (struct kr_config){ .subbuf_size = tc.subbuf_size, .num_subbufs = tc.num_subbufs,
				      .mode = tc.mode == KINSTR_TRACE_OVERWRITE ? KR_MODE_OVERWRITE : KR_MODE_DISCARD };
	per = kr_buf_mem_size(&ch->cfg);
	ch->nr_cpus = nr_cpu_ids;
	ch->buf_size = PAGE_ALIGN(per);
	if (!per || (u64)ch->buf_size * ch->nr_cpus > (1ULL << 31)) {
		kfree(ch);
		return -E2BIG;
	}
	err = kinstr_limit_charge(KINSTR_RES_TRACE_BYTES, &fd_used, (u64)ch->buf_size * ch->nr_cpus);
	if (err) {
		kfree(ch);
		return err;
	}
	ch->charged = fd_used;
	ch->bufs = kvcalloc(ch->nr_cpus, sizeof(*ch->bufs), GFP_KERNEL);
	ch->mem = vmalloc_user(ch->buf_size * ch->nr_cpus);
	if (!ch->bufs || !ch->mem) {
		vfree(ch->mem);
		kvfree(ch->bufs);
		kinstr_limit_release(KINSTR_RES_TRACE_BYTES, ch->charged);
		kfree(ch);
		return -ENOMEM;
	}
	for (cpu = 0; cpu < ch->nr_cpus; cpu++)
		kr_buf_init(&ch->bufs[cpu], &ch->cfg, (char *)ch->mem + cpu * ch->buf_size, cpu);
	kref_init(&ch->ref);
	mutex_init(&ch->read_lock);
	init_waitqueue_head(&ch->wq);
	timer_setup(&ch->timer, chan_tick, 0);
	mod_timer(&ch->timer, jiffies + READER_TICK);

	ch->local_clock = tc.flags & KINSTR_TRACE_F_LOCAL_CLOCK;
	ch->clock = ch->local_clock ? chan_clock_local : chan_clock;
	tc.nr_cpus = ch->nr_cpus;
	tc.buf_mmap_size = ch->buf_size;
	/* the two clocks side by side (no interrupt between them): user space's offset to wall time */
	local_irq_disable();
	tc.clock_ns = ch->clock();
	tc.realtime_ns = ktime_get_real_fast_ns();
	local_irq_enable();
	err = kinstr_put_struct(uarg, &tc, sizeof(tc), KINSTR_TRACE_CREATE_SIZE_VER0);
	if (err) {
		kinstr_chan_put(ch);
		return err;
	}
	/* publish after init: pairs with the acquire in kinstr_session_poll's reader */
	smp_store_release(chp, ch);
	return 0;
}

long kinstr_trace_subbuf(struct kinstr_chan *ch, unsigned int cmd, void __user *uarg)
{
	struct kinstr_trace_subbuf sb;
	u32 phys;
	int err;

	if (!ch)
		return -ENODEV;
	err = kinstr_get_struct(&sb, sizeof(sb), uarg, KINSTR_TRACE_SUBBUF_SIZE_VER0);
	if (err)
		return err;
	if (sb.cpu >= ch->nr_cpus)
		return -EINVAL;
	mutex_lock(&ch->read_lock);
	if (cmd == KINSTR_IOC_TRACE_PUT) {
		err = sb.offset ? -EINVAL : kr_put_subbuf(&ch->bufs[sb.cpu], sb.seq);
		mutex_unlock(&ch->read_lock);
		return err;
	}
	if (sb.seq || sb.offset) {
		mutex_unlock(&ch->read_lock);
		return -EINVAL;
	}
	err = kr_get_subbuf(&ch->bufs[sb.cpu], &sb.seq, &phys);
	if (err == -EAGAIN)
		WRITE_ONCE(ch->ready, false);
	mutex_unlock(&ch->read_lock);
	if (err)
		return err;
	sb.offset = (u64)sb.cpu * ch->buf_size + (u64)phys * ch->cfg.subbuf_size;
	return kinstr_put_struct(uarg, &sb, sizeof(sb), KINSTR_TRACE_SUBBUF_SIZE_VER0);
}

static void flush_this_cpu(void *arg)
{
	struct kinstr_chan *ch = arg;

	kr_switch(&ch->bufs[smp_processor_id()], ch->clock);
}

long kinstr_trace_flush(struct kinstr_chan *ch, void __user *uarg)
{
	struct kinstr_trace_flush fl;
	int err;

	if (!ch)
		return -ENODEV;
	err = kinstr_get_struct(&fl, sizeof(fl), uarg, KINSTR_TRACE_FLUSH_SIZE_VER0);
	if (err)
		return err;
	if (fl.flags)
		return -EINVAL;
	/* each buffer is written by its own CPU only: close its sub-buffer there */
	on_each_cpu(flush_this_cpu, ch, 1);
	return 0;
}

long kinstr_trace_stats(struct kinstr_chan *ch, void __user *uarg)
{
	struct kinstr_trace_stats st;
	struct kr_lost l;
	int err;

	if (!ch)
		return -ENODEV;
	err = kinstr_get_struct(&st, sizeof(st), uarg, KINSTR_TRACE_STATS_SIZE_VER0);
	if (err)
		return err;
	if (st.cpu >= ch->nr_cpus || st.written || st.lost_full || st.lost_wrap || st.lost_big ||
	    st.lost_nest)
		return -EINVAL;
	kr_lost(&ch->bufs[st.cpu], &l);
	st.written = l.records;
	st.lost_full = l.full;
	st.lost_wrap = l.wrap;
	st.lost_big = l.big;
	st.lost_nest = l.nest;
	return kinstr_put_struct(uarg, &st, sizeof(st), KINSTR_TRACE_STATS_SIZE_VER0);
}

__poll_t kinstr_trace_poll(struct kinstr_chan *ch, struct file *file, struct poll_table_struct *pt)
{
	if (!ch)
		return EPOLLERR;
	poll_wait(file, &ch->wq, pt);
	return READ_ONCE(ch->ready) ? EPOLLIN | EPOLLRDNORM : 0;
}

static void vma_open(struct vm_area_struct *vma)
{
	kinstr_chan_get(vma->vm_private_data);
}

static void vma_close(struct vm_area_struct *vma)
{
	kinstr_chan_put(vma->vm_private_data);
}

static const struct vm_operations_struct chan_vm_ops = {
	.open = vma_open,
	.close = vma_close,
};

int kinstr_trace_mmap(struct kinstr_chan *ch, struct vm_area_struct *vma)
{
	int err;

	if (!ch)
		return -ENODEV;
	/* read-only: what the reader sees must be what the probes wrote */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	kinstr_vma_clear_flags(vma, VM_MAYWRITE);
	err = remap_vmalloc_range(vma, ch->mem, vma->vm_pgoff);
	if (err)
		return err;
	vma->vm_private_data = ch;
	vma->vm_ops = &chan_vm_ops;
	kinstr_chan_get(ch);
	return 0;
}

/* ---- the trace action --------------------------------------------------------------------- */

/* A spec's record length, or 0 if the spec is malformed. */
u32 kinstr_trace_spec_len(const struct kinstr_trace_spec *s)
{
	u32 len = sizeof(struct kinstr_trace_rec), i;

	if ((s->flags & ~KINSTR_TRACE_SPEC_F_PRED) || s->__reserved || s->nvals > KINSTR_TRACE_MAX_VALS)
		return 0;
	for (i = 0; i < KINSTR_TRACE_MAX_VALS; i++) {
		const struct kinstr_trace_val *v = &s->vals[i];

		if (i >= s->nvals) {
			if (v->kind || v->reg || v->size || v->deref || v->offset)
				return 0;	/* unknown non-zero tail */
			continue;
		}
		if (v->reg >= KINSTR_REG_NR)
			return 0;
		switch (v->kind) {
		case KINSTR_VAL_REG:
			if (v->size || v->deref || v->offset)
				return 0;
			break;
		case KINSTR_VAL_MEM:
			if (v->deref || (v->size != 1 && v->size != 2 && v->size != 4 && v->size != 8))
				return 0;
			break;
		case KINSTR_VAL_STR:
			if (v->deref > 1 || v->size < 2 || v->size > KINSTR_TRACE_STR_MAX)
				return 0;
			break;
		default:
			return 0;
		}
		len += kinstr_val_bytes(v);
	}
	return len;
}

/*
 * Called from the trace stub with a full pt_regs of the site, in any context the site runs in
 * (task, softirq, irq, NMI). Touches the ring buffer of this CPU and nothing else; reads of
 * memory are fault-safe.
 */
notrace void kinstr_trace_record(struct kinstr_chan *ch, const struct kinstr_trace_spec *spec,
				 u32 len, struct pt_regs *regs)
{
	struct kr_reserve_ctx ctx;
	struct kinstr_trace_rec *r;
	struct task_struct *t = current;
	u8 *out;
	u32 i;

	preempt_disable_notrace();
	/* each kr_reserve() expansion with its clock a constant: a direct call, as ring.h intends */
	if (ch->local_clock ? kr_reserve(&ch->bufs[raw_smp_processor_id()], &ctx, len, chan_clock_local) :
	    kr_reserve(&ch->bufs[raw_smp_processor_id()], &ctx, len, chan_clock))
		goto out;
	r = ctx.data;
	r->event = spec->event;
	r->faults = 0;
	r->ts = ctx.ts;
	r->pid = t->tgid;
	r->tid = t->pid;
	memcpy(r->comm, t->comm, sizeof(r->comm));
	out = (u8 *)(r + 1);
	for (i = 0; i < spec->nvals; i++) {
		if (!kinstr_val_fetch(&spec->vals[i], regs, out))
			r->faults |= 1U << i;
		out += kinstr_val_bytes(&spec->vals[i]);
	}
	kr_commit(&ch->bufs[raw_smp_processor_id()], &ctx);
out:
	preempt_enable_notrace();
}
