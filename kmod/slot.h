/* SPDX-License-Identifier: GPL-2.0 */
/* Writing a probe's slot (slot.c). */
#ifndef KINSTR_SLOT_H
#define KINSTR_SLOT_H

#include <linux/types.h>

#define KINSTR_INT3 0xcc
#define KINSTR_JMP32 0xe9

struct kinstr_probe;
struct kprobe_k;

/* The rel32 at `at` of an instruction ending at insn_end, to reach target. */
void kinstr_put_rel32(u8 *at, unsigned long insn_end, unsigned long target);
/* Slot of probe p (KINSTR_SLOT_SIZE bytes, writable) for request req; sets p->inline_count. */
void kinstr_slot_write(u8 *slot, const struct kinstr_probe *req, struct kprobe_k *p);

#endif
