/* SPDX-License-Identifier: GPL-2.0 */
/* Writing a probe's slot (slot.c). */
#ifndef KINSTR_SLOT_H
#define KINSTR_SLOT_H

#include <linux/types.h>

#define KINSTR_INT3 0xcc
#define KINSTR_JMP32 0xe9

struct kinstr_probe;
struct kprobe_k;
struct kinstr_action_ops;

/* The rel32 at `at` of an instruction ending at insn_end, to reach target. */
void kinstr_put_rel32(u8 *at, unsigned long insn_end, unsigned long target);
/*
 * Slot of probe p (KINSTR_SLOT_SIZE bytes, writable) for request req, whose action is ops; sets
 * p->inline_count and p->saves_flags.
 */
void kinstr_slot_write(u8 *slot, const struct kinstr_probe *req, const struct kinstr_action_ops *ops,
		       struct kprobe_k *p);
/*
 * The actions' prologues (kinstr_action_ops.prologue), written at b in slot: an inline counter, a
 * call of ops->call with the registers saved, a call of the stub ops->call with the probe pushed.
 */
u8 *kinstr_slot_count(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p, bool flags_dead);
u8 *kinstr_slot_call(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p, bool flags_dead);
u8 *kinstr_slot_stub(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p, bool flags_dead);

/*
 * An area's ftrace dispatcher, where one ftrace_ops sends the calls of all its ftrace probes
 * (compat.h, KINSTR_DIRECT_SHARED): a binary search on the return address ftrace's call left,
 * site + 5, which jumps to that probe's slot. ret[] sorted, each in the top 2 GiB (an imm32).
 * At most kinstr_dispatch_size(n) bytes at `at`.
 */
struct kinstr_dispatch_entry {
	unsigned long ret;	/* site + 5 */
	u8 *slot;
};
size_t kinstr_dispatch_size(u32 n);
void kinstr_dispatch_write(u8 *at, const struct kinstr_dispatch_entry *e, u32 n);
/* Can the dispatcher compare with this return address (a sign-extended imm32)? */
bool kinstr_dispatch_reaches(unsigned long ret);
void kinstr_direct_miss(void);

#endif
