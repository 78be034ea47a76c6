/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The patching protocol (protocol.c, area.c, install.c): areas of slots, their install in phases (pin, verify, check
 * stacking, write and publish, fence, arm with int3, ftrace direct calls, queue the jumps for
 * the worker), their removal, and the worker that writes the jumps and frees slots after
 * quiescence. Sessions (session.c) own areas; nothing here knows a session.
 */
#ifndef KINSTR_PATCH_H
#define KINSTR_PATCH_H

#include <linux/list.h>
#include <linux/types.h>

#include <uapi/linux/kinstr.h>
#include "check/cache.h"
#include "actions/hit.h"
#include "patch/slot.h"

/*
 * Probes per per-CPU allocation of counters (2 u64 each: 16 KiB, below the allocator's 32 KiB
 * limit): one __alloc_percpu() per probe searched the allocator's chunks each time, a tenth of an
 * install of 10,000 probes with interrupts off.
 */
#define KINSTR_HITS_CHUNK 1024
#define KINSTR_HITS_PER_PROBE 3	/* kprobe_k.hits[]: hits, skipped, filtered */

enum area_state {
	AREA_NEW,		/* slots reserved, nothing patched */
	AREA_ARMED,		/* int3 on every site; jumps wait for the worker */
	AREA_LIVE,		/* every jump in place */
};

struct kinstr_area {
	struct list_head node;		/* in the session; then in the worker's free list */
	struct list_head arm_node;	/* in the worker's arm list while AREA_ARMED */
	u32 id, count;
	u32 tgid;			/* the thread group that allocated it (KINSTR_IOC_HELD) */
	enum area_state state;		/* under the patch mutex */
	u8 *mem;			/* module_alloc'ed slots */
	struct kinstr_chan *chan;	/* held while any probe may trace into it */
	struct kinstr_tally_k *tally;	/* held while any probe may count into it */
	struct kinstr_span_k *span;	/* held while any probe may time into it */
	struct kinstr_timers *timers;	/* held while any probe may time into it */
	struct kinstr_scope_k *scope;	/* held while any probe may test its gate */
	struct kinstr_pred_k *preds;	/* its trace probes' predicates (actions/pred.h), freed with it */
	unsigned long pages;
	u64 percpu_bytes;		/* what its per-CPU allocations took, for KINSTR_IOC_LIMITS */
	/* KINSTR_DIRECT_SHARED: one ftrace_ops for all ftrace probes, calling the dispatcher */
	struct kinstr_direct direct;
	u8 *dispatch;
	struct kinstr_dispatch_entry *dsort;	/* its entries, sorted (count of them at most) */
	u32 nftrace;
	/*
	 * A code cache (KINSTR_ACTION_ENTER probes lead into it): cache_size bytes at cache, after
	 * the slots in the same allocation; its counters in chunks of KINSTR_CACHE_CHUNK; the
	 * copied functions' code in the original, fenced against kprobes and refused to other
	 * probes while the area is in (node in the list of such areas)
	 */
	u8 *cache;
	u64 cache_size;
	u32 ncounters, nchunks;
	u64 __percpu **chunks;
	struct kinstr_cache_range *fns;
	struct kinstr_fence *fn_fences;
	u32 nfns;
	struct list_head cache_node;
	/* the probes' per-CPU counters, KINSTR_HITS_CHUNK probes' worth per allocation */
	u64 __percpu *hits_chunk[KINSTR_AREA_MAX_PROBES / KINSTR_HITS_CHUNK];
	struct kprobe_k probes[];
};

/*
 * count slots (charged against the total already) and their counters, and a code cache of
 * cache_size bytes with ncounters counters (0, 0: none); NULL: -ENOMEM (released).
 */
struct kinstr_area *kinstr_area_alloc(u32 count, u64 cache_size, u32 ncounters);
/* An area never installed, or after quiescence: its memory, counters, pins and references. */
void kinstr_area_free(struct kinstr_area *a);
/*
 * Install a's probes req[] with what the session hands them (objs: specs[] for trace, tally and
 * span probes, the trace channel, timers, tally, spans, scope, bpf[] naming BPF probes' programs,
 * preds[] the predicates of probes with a spec (the area owns them, a->preds); each may be NULL). 0, or -errno with the refusal in in (which probe, which rule).
 */
int kinstr_area_install(struct kinstr_area *a, const struct kinstr_probe *req, const struct kinstr_install_objs *objs,
			const struct kinstr_cache_check *cc, struct kinstr_install *in);
/* The sums over CPUs of a's cache counters [first, first + n) into out. */
void kinstr_area_cache_counts(struct kinstr_area *a, u32 first, u32 n, u64 *out);
/* Until a's jumps are in (the caller keeps a alive). */
void kinstr_area_wait_live(struct kinstr_area *a);
/* Disarm a's probes idx[0, n) now (their slots stay): 0 with *done, or -EINVAL. */
int kinstr_area_disarm(struct kinstr_area *a, const u32 *idx, u32 n, u32 *done);
/* Restore a's text now (a already off its session's list); the worker frees it after quiescence. */
void kinstr_area_remove(struct kinstr_area *a);
/* Until the worker has no work left: every queued jump is in, every removed slot freed. */
void kinstr_patch_drain(void);
/* ops.c: the probe actions' table (actions/actions.h): action's entry, NULL if there is none */
const struct kinstr_action_ops *kinstr_action_get(u32 action);
/* The KINSTR_FEAT_* of the actions this kernel can run. */
u64 kinstr_action_features(void);
/* What probe context enters here (the int3 notifier and the kernel's int3 delivery). */
size_t kinstr_patch_hit_roots(unsigned long *r);
int kinstr_patch_init(void);
void kinstr_patch_exit(void);

#endif
