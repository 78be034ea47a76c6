/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The patcher's insides, shared by kmod/patch/'s files: protocol.c (the state, the int3 handler, the
 * text protocol and the worker), area.c (areas) and install.c (a batch's install). Nothing outside
 * kmod/patch/ includes this.
 */
#ifndef KINSTR_PATCH_PRIV_H
#define KINSTR_PATCH_PRIV_H

#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include "patch/patch.h"

/* protocol.c: the patcher's state */
#define SITE_HASH_BITS 15	/* sets of up to 65,536 probes: short chains for the int3 handler */
extern struct mutex kinstr_patch_mutex;
extern DECLARE_HASHTABLE(kinstr_sites, SITE_HASH_BITS);
extern struct list_head kinstr_arm_list, kinstr_free_list, kinstr_cached;
/* Let a few batches gather before a round (the kprobe optimizer waits 5 jiffies too). */
#define WORKER_DELAY 5


/* area.c */
void patch_put_progs(struct kinstr_area *a);
void patch_unpin_modules(struct kinstr_area *a);

/* protocol.c */
int patch_fence_area(struct kinstr_area *a, u32 *bad);
void patch_kick_worker(unsigned long delay);
struct kprobe_k *patch_lookup_site(unsigned long site);
void patch_poke(unsigned long addr, const void *bytes, size_t len);
void patch_quiesce(void);
void patch_unfence_area(struct kinstr_area *a);
void patch_unpatch_locked(struct kinstr_area *a, u32 n);
void patch_unpublish(struct kinstr_area *a, u32 n);
void patch_unregister_direct(struct kinstr_area *a, u32 n);

#endif
