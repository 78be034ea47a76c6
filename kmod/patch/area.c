// SPDX-License-Identifier: GPL-2.0
/*
 * Areas: the slots of one batch in patch space, with what they hold beside the code (the pinned
 * modules, the BPF programs, the code cache's counters); allocated here, filled by install.c, freed by
 * the worker after quiescence (protocol.c).
 */
#include <linux/ftrace.h>
#include <linux/hashtable.h>
#include <linux/kdebug.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <asm/text-patching.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "limits.h"
#include "actions/actions.h"
#include "abi.h"
#include "compat.h"
#include "patch/patch.h"
#include "patch/slot.h"
#include "actions/bpf.h"
#include "actions/pred.h"
#include "patch/patch_priv.h"

void patch_unpin_modules(struct kinstr_area *a)
{
	u32 i;

	for (i = 0; i < a->count; i++) {
		module_put(a->probes[i].mod);
		a->probes[i].mod = NULL;
	}
}

/* The BPF probes' programs' references (taken in patch/ops.c), once nothing runs them (or before anything could). */
void patch_put_progs(struct kinstr_area *a)
{
	u32 i;

	for (i = 0; i < a->count; i++) {
		kinstr_bpf_prog_put(a->probes[i].prog);
		a->probes[i].prog = NULL;
	}
}

void kinstr_area_free(struct kinstr_area *a)
{
	u32 i;

	kinstr_mem_add(KINSTR_MEM_AREAS, -1);
	kinstr_mem_add(KINSTR_MEM_PERCPU_BYTES, -(s64)a->percpu_bytes);
	for (i = 0; i < ARRAY_SIZE(a->hits_chunk); i++)
		free_percpu(a->hits_chunk[i]);	/* NULL: nothing */
	for (i = 0; a->chunks && i < a->nchunks; i++)
		free_percpu(a->chunks[i]);
	kvfree(a->chunks);
	kinstr_preds_free(a->preds);
	kvfree(a->fns);
	kvfree(a->fn_fences);
	kinstr_limit_release(KINSTR_RES_PROBES, a->count);
	if (a->mem) {
		kinstr_text_free(a->mem);	/* resets permissions (VM_FLUSH_RESET_PERMS) */
		kinstr_mem_add(KINSTR_MEM_TEXT_BYTES, -(s64)(a->pages << PAGE_SHIFT));
	}
	kvfree(a->dsort);
	/* after quiescence (or before any patch): nothing runs in the slots or the module's sites */
	patch_unpin_modules(a);
	patch_put_progs(a);
	kinstr_chan_put(a->chan);
	kinstr_tally_put(a->tally);
	kinstr_span_put(a->span);
	kinstr_timers_put(a->timers);
	kinstr_scope_put(a->scope);
	kvfree(a);
}

/* The code cache's counters, in chunks the per-CPU allocator can give (zeroed). */
static int alloc_cache_counters(struct kinstr_area *a, u32 ncounters)
{
	u32 i;

	a->nchunks = DIV_ROUND_UP(ncounters, KINSTR_CACHE_CHUNK);
	if (!a->nchunks)
		return 0;
	a->chunks = kvcalloc(a->nchunks, sizeof(*a->chunks), GFP_KERNEL);
	if (!a->chunks)
		return -ENOMEM;
	for (i = 0; i < a->nchunks; i++) {
		size_t sz = sizeof(u64) * min(ncounters - i * KINSTR_CACHE_CHUNK, KINSTR_CACHE_CHUNK);

		a->chunks[i] = __alloc_percpu(sz, sizeof(u64));
		if (!a->chunks[i])
			return -ENOMEM;
		a->percpu_bytes += sz;
		kinstr_mem_add(KINSTR_MEM_PERCPU_BYTES, sz);
	}
	a->ncounters = ncounters;
	return 0;
}

struct kinstr_area *kinstr_area_alloc(u32 count, u64 cache_size, u32 ncounters)
{
	struct kinstr_area *a = kvzalloc(struct_size(a, probes, count), GFP_KERNEL);
	unsigned long bytes, cache_off;
	u32 i;

	if (!a) {
		kinstr_limit_release(KINSTR_RES_PROBES, count);
		return NULL;
	}
	a->count = count;	/* from here kinstr_area_free() gives the total back */
	a->tgid = current->tgid;
	kinstr_mem_add(KINSTR_MEM_AREAS, 1);
	INIT_LIST_HEAD(&a->arm_node);
	bytes = (unsigned long)count * KINSTR_SLOT_SIZE;
	if (KINSTR_DIRECT_SHARED) {
		bytes += kinstr_dispatch_size(count);
		a->dsort = kvmalloc_array(count, sizeof(*a->dsort), GFP_KERNEL);
		if (!a->dsort) {
			kinstr_area_free(a);
			return NULL;
		}
	}
	INIT_LIST_HEAD(&a->cache_node);
	cache_off = ALIGN(bytes, 64);
	if (cache_size)
		bytes = cache_off + cache_size;
	bytes = PAGE_ALIGN(bytes);
	a->pages = bytes >> PAGE_SHIFT;
	if (alloc_cache_counters(a, ncounters)) {
		kinstr_area_free(a);
		return NULL;
	}
	a->mem = kinstr_text_alloc(bytes);
	if (a->mem)
		kinstr_mem_add(KINSTR_MEM_TEXT_BYTES, bytes);
	if (a->mem && cache_size) {
		a->cache = a->mem + cache_off;
		a->cache_size = cache_size;
	}
	for (i = 0; a->mem && i < a->count; i++) {
		u32 c = i / KINSTR_HITS_CHUNK;

		if (i % KINSTR_HITS_CHUNK == 0) {
			size_t sz = KINSTR_HITS_PER_PROBE * sizeof(u64) * min(count - i, KINSTR_HITS_CHUNK);

			a->hits_chunk[c] = __alloc_percpu(sz, sizeof(u64));
			if (!a->hits_chunk[c])
				break;
			a->percpu_bytes += sz;
			kinstr_mem_add(KINSTR_MEM_PERCPU_BYTES, sz);
		}
		a->probes[i].hits = a->hits_chunk[c] + KINSTR_HITS_PER_PROBE * (i % KINSTR_HITS_CHUNK);
	}
	if (!a->mem || i < a->count) {
		kinstr_area_free(a);
		return NULL;
	}
	return a;
}
