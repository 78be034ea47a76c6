// SPDX-License-Identifier: GPL-2.0
/*
 * Tallies (KINSTR_IOC_TALLY_*): a descriptor's hits counted by key in tables per CPU, so that
 * `kinstr count --by` costs a hit one table update and no trace record (ring losses cannot change
 * a count). Probe context (kinstr_tally_add) touches its own CPU's table only.
 *
 * A CPU's table is open addressing with linear probing. An entry goes free -> being written ->
 * valid, never back: an insert claims a free entry with a CPU-local cmpxchg, writes the key, then
 * publishes it. An interrupt on the same CPU that hits while an insert is half done skips the
 * entry being written and may insert the same key again further on; readers sum such duplicates.
 *
 * Lifetime: reference-counted, as a trace channel: the session holds one reference, every area
 * with tally probes one (dropped when the worker frees the area, after quiescence).
 */
#include <linux/kref.h>
#include <asm/local64.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "limits.h"
#include "abi.h"
#include "actions/actions.h"
#include "actions/fetch.h"

#define TALLY_PROBES	32	/* entries an insert looks at before it counts the hit as overflow */
#define TALLY_READ_CHUNK	64	/* entries copied to user space at a time */

/* An entry in a table: its state, a hash to compare first, what KINSTR_IOC_TALLY_READ copies. */
struct tally_ent {
	u32 state;
	u32 hash;
	struct kinstr_tally_ent e;
	u8 key[];			/* key_size bytes (BY_VALUE) */
};

struct kinstr_tally_k {
	struct kref ref;
	u32 by;				/* enum kinstr_tally_by */
	u32 key_size;
	u32 mask;			/* entries - 1 */
	u32 stride;			/* bytes of a struct tally_ent with its key */
	void *mem;			/* nr_cpu_ids tables of entries * stride bytes */
	u64 *overflow;			/* [nr_cpu_ids] */
	u64 charged;
};

static void tally_release(struct kref *ref)
{
	struct kinstr_tally_k *t = container_of(ref, struct kinstr_tally_k, ref);

	vfree(t->mem);
	kvfree(t->overflow);
	kinstr_limit_release(KINSTR_RES_TRACE_BYTES, t->charged);
	kfree(t);
}

void kinstr_tally_get(struct kinstr_tally_k *t)
{
	kref_get(&t->ref);
}

void kinstr_tally_put(struct kinstr_tally_k *t)
{
	if (t)
		kref_put(&t->ref, tally_release);
}

long kinstr_tally_create(struct kinstr_tally_k **tp, void __user *uarg)
{
	struct kinstr_tally_create tc;
	struct kinstr_tally_k *t;
	u64 fd_used = 0, bytes;	/* one tally per descriptor */
	int err;

	err = kinstr_get_struct(&tc, sizeof(tc), uarg, KINSTR_TALLY_CREATE_SIZE_VER0);
	if (err)
		return err;
	if (tc.by < KINSTR_TALLY_BY_COMM || tc.by > KINSTR_TALLY_BY_VALUE || tc.flags || tc.nr_cpus ||
	    tc.entries < KINSTR_TALLY_MIN_ENTRIES || tc.entries > KINSTR_TALLY_MAX_ENTRIES ||
	    (tc.entries & (tc.entries - 1)))
		return -EINVAL;
	if (tc.by == KINSTR_TALLY_BY_VALUE ? !tc.key_size || tc.key_size % 8 || tc.key_size > KINSTR_TRACE_STR_MAX :
	    tc.key_size)
		return -EINVAL;
	if (*tp)
		return -EEXIST;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->by = tc.by;
	t->key_size = tc.key_size;
	t->mask = tc.entries - 1;
	t->stride = sizeof(struct tally_ent) + tc.key_size;
	bytes = (u64)t->stride * tc.entries * nr_cpu_ids;
	if (bytes > (1ULL << 31)) {
		kfree(t);
		return -E2BIG;
	}
	err = kinstr_limit_charge(KINSTR_RES_TRACE_BYTES, &fd_used, bytes);
	if (err) {
		kfree(t);
		return err;
	}
	t->charged = fd_used;
	t->mem = vzalloc(bytes);
	t->overflow = kvcalloc(nr_cpu_ids, sizeof(*t->overflow), GFP_KERNEL);
	if (!t->mem || !t->overflow) {
		vfree(t->mem);
		kvfree(t->overflow);
		kinstr_limit_release(KINSTR_RES_TRACE_BYTES, t->charged);
		kfree(t);
		return -ENOMEM;
	}
	kref_init(&t->ref);
	tc.nr_cpus = nr_cpu_ids;
	err = kinstr_put_struct(uarg, &tc, sizeof(tc), KINSTR_TALLY_CREATE_SIZE_VER0);
	if (err) {
		kinstr_tally_put(t);
		return err;
	}
	*tp = t;
	return 0;
}

/* Can a tally probe with this spec count into t? Its key must fit. */
bool kinstr_tally_takes(const struct kinstr_tally_k *t, const struct kinstr_trace_spec *spec)
{
	if (!kinstr_trace_spec_len(spec))
		return false;
	return t->by != KINSTR_TALLY_BY_VALUE || (spec->nvals && kinstr_val_bytes(&spec->vals[0]) <= t->key_size);
}

static inline struct tally_ent *ent_at(const struct kinstr_tally_k *t, u32 cpu, u32 i)
{
	return (struct tally_ent *)((u8 *)t->mem + ((size_t)cpu * (t->mask + 1) + i) * t->stride);
}

/* A multiplicative hash over the event and the key's words (probe context: no call out) */
static __always_inline u32 key_hash(u16 event, const u64 *k, u32 words)
{
	u64 h = 0x9e3779b97f4a7c15ULL * (event + 1);
	u32 i;

	for (i = 0; i < words; i++) {
		h = (h ^ k[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return (u32)h;
}

static __always_inline bool words_eq(const void *a, const u64 *k, u32 words)
{
	const u64 *x = a;
	u32 i;

	for (i = 0; i < words; i++)
		if (x[i] != k[i])
			return false;
	return true;
}

static __always_inline bool ent_is(const struct kinstr_tally_k *t, const struct tally_ent *e, u32 hash, u16 event,
				   const u64 *k, u32 words)
{
	if (e->hash != hash || e->e.event != event)
		return false;
	switch (t->by) {
	case KINSTR_TALLY_BY_COMM:
		return words_eq(e->e.comm, k, words);
	case KINSTR_TALLY_BY_VALUE:
		return words_eq(e->key, k, words);
	default:
		return e->e.id == (u32)k[0];
	}
}

/*
 * One hit of spec's probe under the current task's key. Called with preemption off (the hit's
 * recursion guard): the CPU's table is this CPU's alone but for its own interrupts.
 */
notrace void kinstr_tally_add(struct kinstr_tally_k *t, const struct kinstr_trace_spec *spec, struct pt_regs *regs)
{
	struct task_struct *tsk = current;
	u32 cpu = raw_smp_processor_id(), n, hash, i, probe, w;
	u64 k[KINSTR_TRACE_STR_MAX / 8];	/* the key in words: comm 2, pid/tid 1, a value key_size / 8 */
	struct tally_ent *e;

	switch (t->by) {
	case KINSTR_TALLY_BY_COMM:
		memcpy(k, tsk->comm, 16);
		n = 2;
		break;
	case KINSTR_TALLY_BY_PID:
	case KINSTR_TALLY_BY_TID:
		k[0] = t->by == KINSTR_TALLY_BY_PID ? tsk->tgid : tsk->pid;
		n = 1;
		break;
	default:
		n = t->key_size / 8;
		/* word stores, not memset: probe context calls no kernel function it could be probed in */
		for (w = 0; w < n; w++)
			WRITE_ONCE(k[w], 0);
		kinstr_val_fetch(&spec->vals[0], regs, (u8 *)k);	/* unreadable: zeros, as a record holds */
		break;
	}
	hash = key_hash(spec->event, k, n);
	for (i = hash & t->mask, probe = 0; probe < TALLY_PROBES; i = (i + 1) & t->mask, probe++) {
		e = ent_at(t, cpu, i);
		switch (READ_ONCE(e->state)) {
		case ENT_VALID:
			if (!ent_is(t, e, hash, spec->event, k, n))
				continue;
			/* an interrupt may add to the same entry: one instruction, no lost count */
			local64_inc((local64_t *)&e->e.hits);
			if (t->by != KINSTR_TALLY_BY_COMM && memcmp(e->e.comm, tsk->comm, 16)) {
				if (t->by == KINSTR_TALLY_BY_VALUE)
					e->e.flags |= KINSTR_TALLY_E_SEVERAL;
				memcpy(e->e.comm, tsk->comm, 16);	/* the latest name */
			}
			return;
		case ENT_WRITING:
			continue;	/* an insert this hit interrupted: the key may be anything yet */
		}
		/* free: claim it against this CPU's interrupts (no other CPU writes the table) */
		if (cmpxchg_local(&e->state, ENT_FREE, ENT_WRITING) != ENT_FREE)
			continue;
		e->hash = hash;
		e->e.event = spec->event;
		e->e.hits = 1;
		memcpy(e->e.comm, tsk->comm, 16);
		if (t->by == KINSTR_TALLY_BY_VALUE)
			for (w = 0; w < n; w++)	/* word stores, not memcpy (as above) */
				WRITE_ONCE(((u64 *)e->key)[w], k[w]);
		else if (t->by != KINSTR_TALLY_BY_COMM)
			e->e.id = (u32)k[0];
		/* the entry's fields before its state: pairs with the acquire in kinstr_tally_read */
		smp_store_release(&e->state, ENT_VALID);
		return;
	}
	local64_inc((local64_t *)&t->overflow[cpu]);
}

long kinstr_tally_read(struct kinstr_tally_k *t, void __user *uarg)
{
	struct kinstr_tally_read rd;
	u32 i, found = 0, in_buf = 0, ustride;
	u8 *buf;
	int err = 0;

	if (!t)
		return -ENODEV;
	err = kinstr_get_struct(&rd, sizeof(rd), uarg, KINSTR_TALLY_READ_SIZE_VER0);
	if (err)
		return err;
	if (rd.cpu >= nr_cpu_ids || rd.found || rd.overflow || (rd.count && !rd.ents))
		return -EINVAL;
	ustride = sizeof(struct kinstr_tally_ent) + t->key_size;
	buf = kmalloc_array(TALLY_READ_CHUNK, ustride, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		const struct tally_ent *e = ent_at(t, rd.cpu, i);

		/* the entry's fields once valid: pairs with the release in kinstr_tally_add */
		if (smp_load_acquire(&e->state) != ENT_VALID)
			continue;
		if (found++ >= rd.count)
			continue;
		memcpy(buf + in_buf * ustride, &e->e, sizeof(e->e));
		((struct kinstr_tally_ent *)(buf + in_buf * ustride))->hits = READ_ONCE(e->e.hits);
		memcpy(buf + in_buf * ustride + sizeof(e->e), e->key, t->key_size);
		if (++in_buf == TALLY_READ_CHUNK || found == rd.count) {
			if (copy_to_user(u64_to_user_ptr(rd.ents) + (u64)(found - in_buf) * ustride, buf,
					 (size_t)in_buf * ustride)) {
				err = -EFAULT;
				break;
			}
			in_buf = 0;
		}
	}
	if (!err && in_buf &&
	    copy_to_user(u64_to_user_ptr(rd.ents) + (u64)(min(found, rd.count) - in_buf) * ustride, buf,
			 (size_t)in_buf * ustride))
		err = -EFAULT;
	kfree(buf);
	if (err)
		return err;
	rd.found = found;
	rd.overflow = READ_ONCE(t->overflow[rd.cpu]);
	return kinstr_put_struct(uarg, &rd, sizeof(rd), KINSTR_TALLY_READ_SIZE_VER0);
}

/* What probe context enters here, for the hit path's closure. */
size_t kinstr_tally_hit_roots(unsigned long *r)
{
	r[0] = (unsigned long)kinstr_tally_add;
	return 1;
}
