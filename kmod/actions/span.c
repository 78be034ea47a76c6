// SPDX-License-Identifier: GPL-2.0
/*
 * Spans (KINSTR_IOC_SPAN_*): the time from a start probe's hit to the next stop probe's hit of
 * the same key (thread, process, or a value handed from one point to the other), measured in the
 * module: `kinstr span` costs a hit a table lookup, no trace record, and no ring loss can change
 * an interval.
 *
 * Open starts are one table for every CPU (a value's stop may run elsewhere): open addressing,
 * an entry claimed once for its key with a cmpxchg and kept, its start time swapped in and out
 * with xchg (by thread: a CPU-local cmpxchg, ts_swap()), so that a start and a stop of one key
 * on two CPUs each see the other whole or not at all. Rows (per key) and totals are per CPU, as tallies are (tally.c): only the CPU's own
 * interrupts can race an update, and every field is one local64 operation or a local cmpxchg.
 *
 * Lifetime: reference-counted, as a trace channel: the session holds one reference, every area
 * with span probes one (dropped when the worker frees the area, after quiescence).
 */
#include <linux/kref.h>
#include <asm/local64.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "limits.h"
#include "abi.h"
#include "actions/actions.h"
#include "actions/fetch.h"

#define SPAN_PROBES	32	/* entries a lookup looks at before it gives up (overflow) */
#define SPAN_READ_CHUNK	16	/* rows copied to user space at a time */

struct span_open {
	u32 state;
	u32 __pad;
	u64 key;
	u64 ts;				/* the open start; 0: none */
};

struct span_row {
	u32 state;
	u32 __pad;
	struct kinstr_span_row_k r;
};

struct span_cpu {
	u64 replaced, unmatched_stops, overflow;
	struct kinstr_span_stats_k total;
};

struct kinstr_span_k {
	struct kref ref;
	u32 by;				/* enum kinstr_span_by */
	u32 starts_mask, rows_mask;
	bool local_clock;
	struct span_open *open;		/* [starts] */
	struct span_row *rows;		/* nr_cpu_ids * rows */
	struct span_cpu *cpu;		/* [nr_cpu_ids] */
	u64 charged;
};

static void span_release(struct kref *ref)
{
	struct kinstr_span_k *s = container_of(ref, struct kinstr_span_k, ref);

	vfree(s->open);
	vfree(s->rows);
	vfree(s->cpu);
	kinstr_limit_release(KINSTR_RES_TRACE_BYTES, s->charged);
	kfree(s);
}

void kinstr_span_get(struct kinstr_span_k *s)
{
	kref_get(&s->ref);
}

void kinstr_span_put(struct kinstr_span_k *s)
{
	if (s)
		kref_put(&s->ref, span_release);
}

static bool entries_ok(u32 n)
{
	return n >= KINSTR_TALLY_MIN_ENTRIES && n <= KINSTR_TALLY_MAX_ENTRIES && !(n & (n - 1));
}

static void stats_init(struct kinstr_span_stats_k *st)
{
	st->min = ~0ULL;
}

long kinstr_span_create(struct kinstr_span_k **sp, void __user *uarg)
{
	struct kinstr_span_create sc;
	struct kinstr_span_k *s;
	u64 fd_used = 0, bytes;	/* one per descriptor */
	u32 i;
	int err;

	err = kinstr_get_struct(&sc, sizeof(sc), uarg, KINSTR_SPAN_CREATE_SIZE_VER0);
	if (err)
		return err;
	if (sc.by < KINSTR_SPAN_BY_TID || sc.by > KINSTR_SPAN_BY_VALUE || (sc.flags & ~KINSTR_SPAN_F_LOCAL_CLOCK) ||
	    sc.nr_cpus || !entries_ok(sc.starts) || !entries_ok(sc.rows))
		return -EINVAL;
	if (*sp)
		return -EEXIST;
	bytes = (u64)sc.starts * sizeof(struct span_open) + (u64)sc.rows * nr_cpu_ids * sizeof(struct span_row) +
		(u64)nr_cpu_ids * sizeof(struct span_cpu);
	if (bytes > (1ULL << 31))
		return -E2BIG;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	err = kinstr_limit_charge(KINSTR_RES_TRACE_BYTES, &fd_used, bytes);
	if (err) {
		kfree(s);
		return err;
	}
	s->charged = fd_used;
	s->by = sc.by;
	s->starts_mask = sc.starts - 1;
	s->rows_mask = sc.rows - 1;
	s->local_clock = sc.flags & KINSTR_SPAN_F_LOCAL_CLOCK;
	s->open = vzalloc(array_size(sc.starts, sizeof(*s->open)));
	s->rows = vzalloc(array3_size(sc.rows, nr_cpu_ids, sizeof(*s->rows)));
	s->cpu = vzalloc(array_size(nr_cpu_ids, sizeof(*s->cpu)));
	kref_init(&s->ref);
	if (!s->open || !s->rows || !s->cpu) {
		kinstr_span_put(s);
		return -ENOMEM;
	}
	for (i = 0; i < nr_cpu_ids; i++)
		stats_init(&s->cpu[i].total);
	sc.nr_cpus = nr_cpu_ids;
	err = kinstr_put_struct(uarg, &sc, sizeof(sc), KINSTR_SPAN_CREATE_SIZE_VER0);
	if (err) {
		kinstr_span_put(s);
		return err;
	}
	*sp = s;
	return 0;
}

/* Can a span probe with this spec and arg take part in s? Start 0, stop 1; a value key needs a number. */
bool kinstr_span_takes(const struct kinstr_span_k *s, const struct kinstr_trace_spec *spec, u32 arg)
{
	if (arg > 1 || !kinstr_trace_spec_len(spec))
		return false;
	return s->by != KINSTR_SPAN_BY_VALUE || (spec->nvals && spec->vals[0].kind != KINSTR_VAL_STR);
}

/* A 64-bit mix: tids and pointers spread over the tables (probe context: no call out) */
static __always_inline u32 key_slot(u64 key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (u32)key;
}

/* key's open-start entry; with add, claimed if new. NULL: no room. */
static __always_inline struct span_open *open_of(struct kinstr_span_k *s, u64 key, bool add)
{
	u32 i = key_slot(key) & s->starts_mask, n;

	for (n = 0; n < SPAN_PROBES; n++, i = (i + 1) & s->starts_mask) {
		struct span_open *e = &s->open[i];

		/* the key once valid: pairs with the release below, on whichever CPU claimed it */
		switch (smp_load_acquire(&e->state)) {
		case ENT_VALID:
			if (e->key == key)
				return e;
			continue;
		case ENT_WRITING:
			continue;
		}
		if (!add)
			return NULL;	/* a free entry ends the key's run: it was never started */
		if (cmpxchg(&e->state, ENT_FREE, ENT_WRITING) != ENT_FREE)
			continue;	/* another CPU (or an interrupt) took it first */
		e->key = key;
		smp_store_release(&e->state, ENT_VALID);
		return e;
	}
	return NULL;
}

/*
 * Swap v into an open start's time. By thread, only the thread and interrupts on the CPU it runs
 * on touch its entry (a migration between start and stop goes through the scheduler's full
 * barriers), so a CPU-local cmpxchg does; by process or value, any CPU may: a locked xchg.
 */
static __always_inline u64 ts_swap(const struct kinstr_span_k *s, u64 *p, u64 v)
{
	u64 old, seen;

	if (s->by != KINSTR_SPAN_BY_TID)
		return xchg(p, v);
	for (old = READ_ONCE(*p); (seen = cmpxchg_local(p, old, v)) != old; old = seen)
		;
	return old;
}

static __always_inline void lmin(u64 *p, u64 v)
{
	u64 old = READ_ONCE(*p);

	while (v < old) {
		u64 seen = cmpxchg_local(p, old, v);

		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline void lmax(u64 *p, u64 v)
{
	u64 old = READ_ONCE(*p);

	while (v > old) {
		u64 seen = cmpxchg_local(p, old, v);

		if (seen == old)
			break;
		old = seen;
	}
}

static __always_inline void stats_add(struct kinstr_span_stats_k *st, u64 d)
{
	u32 b = fls64(d);	/* 0 for 0, else 1 + floor(log2(d)) */

	local64_inc((local64_t *)&st->count);
	local64_add(d, (local64_t *)&st->sum);
	local64_inc((local64_t *)&st->hist[b < KINSTR_SPAN_HIST ? b : KINSTR_SPAN_HIST - 1]);
	lmin(&st->min, d);
	lmax(&st->max, d);
}

/* key's row on cpu, added if new; NULL: no room */
static __always_inline struct span_row *row_of(struct kinstr_span_k *s, u32 cpu, u64 key)
{
	struct span_row *rows = s->rows + (size_t)cpu * (s->rows_mask + 1);
	u32 i = key_slot(key) & s->rows_mask, n;

	for (n = 0; n < SPAN_PROBES; n++, i = (i + 1) & s->rows_mask) {
		struct span_row *e = &rows[i];

		switch (READ_ONCE(e->state)) {
		case ENT_VALID:
			if (e->r.key == key)
				return e;
			continue;
		case ENT_WRITING:
			continue;	/* an insert this hit interrupted */
		}
		/* only this CPU's interrupts race for its rows */
		if (cmpxchg_local(&e->state, ENT_FREE, ENT_WRITING) != ENT_FREE)
			continue;
		e->r.key = key;
		stats_init(&e->r.st);
		/* the row's key before its state: pairs with the acquire in kinstr_span_read */
		smp_store_release(&e->state, ENT_VALID);
		return e;
	}
	return NULL;
}

static notrace u64 span_clock(const struct kinstr_span_k *s)
{
	return s->local_clock ? local_clock() : ktime_get_mono_fast_ns();
}

/*
 * A start (stop false) or stop of spec's probe for the current task. Called with preemption off
 * (the hit's recursion guard).
 */
notrace void kinstr_span_hit_one(struct kinstr_span_k *s, const struct kinstr_trace_spec *spec, bool stop,
				 struct pt_regs *regs)
{
	struct task_struct *tsk = current;
	u32 cpu = raw_smp_processor_id();
	struct span_cpu *c = &s->cpu[cpu];
	u64 now = span_clock(s), key, t0, d;
	struct span_open *o;
	struct span_row *r;
	u8 v[8] __aligned(8);

	switch (s->by) {
	case KINSTR_SPAN_BY_TID:
		key = tsk->pid;
		break;
	case KINSTR_SPAN_BY_PID:
		key = tsk->tgid;
		break;
	default:
		kinstr_val_fetch(&spec->vals[0], regs, v);	/* unreadable: 0, as a record holds */
		memcpy(&key, v, 8);
		break;
	}
	o = open_of(s, key, !stop);
	if (!stop) {
		if (!o)
			local64_inc((local64_t *)&c->overflow);
		else if (ts_swap(s, &o->ts, now ? now : 1))	/* 0 means none */
			local64_inc((local64_t *)&c->replaced);
		return;
	}
	t0 = o ? ts_swap(s, &o->ts, 0) : 0;
	if (!t0) {
		local64_inc((local64_t *)&c->unmatched_stops);
		return;
	}
	d = now > t0 ? now - t0 : 0;	/* local_clock() across CPUs may step back a little */
	stats_add(&c->total, d);
	r = row_of(s, cpu, key);
	if (!r) {
		local64_inc((local64_t *)&c->overflow);
		return;
	}
	stats_add(&r->r.st, d);
	memcpy(r->r.comm, tsk->comm, sizeof(r->r.comm));
}

static void stats_copy(struct kinstr_span_stats_k *to, const struct kinstr_span_stats_k *from)
{
	u32 b;

	to->count = READ_ONCE(from->count);
	to->min = READ_ONCE(from->min);
	to->max = READ_ONCE(from->max);
	to->sum = READ_ONCE(from->sum);
	for (b = 0; b < KINSTR_SPAN_HIST; b++)
		to->hist[b] = READ_ONCE(from->hist[b]);
}

long kinstr_span_read(struct kinstr_span_k *s, void __user *uarg)
{
	struct kinstr_span_read rd;
	struct kinstr_span_row_k *buf;
	struct kinstr_span_stats_k tot;
	const struct span_row *rows;
	u32 i, found = 0, in_buf = 0;
	u64 open = 0;
	int err;

	if (!s)
		return -ENODEV;
	err = kinstr_get_struct(&rd, sizeof(rd), uarg, KINSTR_SPAN_READ_SIZE_VER0);
	if (err)
		return err;
	if (rd.cpu >= nr_cpu_ids || rd.found || rd.replaced || rd.unmatched_stops || rd.overflow || rd.open ||
	    (rd.count && !rd.rows))
		return -EINVAL;
	buf = kmalloc_array(SPAN_READ_CHUNK, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rows = s->rows + (size_t)rd.cpu * (s->rows_mask + 1);
	for (i = 0; i <= s->rows_mask; i++) {
		const struct span_row *e = &rows[i];

		/* the row's key once valid: pairs with the release in row_of */
		if (smp_load_acquire(&e->state) != ENT_VALID)
			continue;
		if (found++ >= rd.count)
			continue;
		buf[in_buf].key = e->r.key;
		memcpy(buf[in_buf].comm, e->r.comm, sizeof(buf[in_buf].comm));
		stats_copy(&buf[in_buf].st, &e->r.st);
		if (++in_buf == SPAN_READ_CHUNK || found == rd.count) {
			if (copy_to_user(u64_to_user_ptr(rd.rows) + (u64)(found - in_buf) * sizeof(*buf), buf,
					 in_buf * sizeof(*buf))) {
				kfree(buf);
				return -EFAULT;
			}
			in_buf = 0;
		}
	}
	if (in_buf && copy_to_user(u64_to_user_ptr(rd.rows) + (u64)(min(found, rd.count) - in_buf) * sizeof(*buf),
				   buf, in_buf * sizeof(*buf))) {
		kfree(buf);
		return -EFAULT;
	}
	kfree(buf);
	stats_copy(&tot, &s->cpu[rd.cpu].total);
	if (rd.total && copy_to_user(u64_to_user_ptr(rd.total), &tot, sizeof(tot)))
		return -EFAULT;
	for (i = 0; i <= s->starts_mask; i++)
		open += smp_load_acquire(&s->open[i].state) == ENT_VALID && READ_ONCE(s->open[i].ts);
	rd.found = found;
	rd.replaced = READ_ONCE(s->cpu[rd.cpu].replaced);
	rd.unmatched_stops = READ_ONCE(s->cpu[rd.cpu].unmatched_stops);
	rd.overflow = READ_ONCE(s->cpu[rd.cpu].overflow);
	rd.open = open;
	return kinstr_put_struct(uarg, &rd, sizeof(rd), KINSTR_SPAN_READ_SIZE_VER0);
}

/* What probe context enters here, for the hit path's closure. */
size_t kinstr_span_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)kinstr_span_hit_one;
	r[1] = (unsigned long)span_clock;
	return 2;
}
