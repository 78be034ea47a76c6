// SPDX-License-Identifier: GPL-2.0
/*
 * Slots: what a probe's slot holds (slot.h). The prologue (the action: an inline counter, a call
 * of a timer's hit function, or of the trace stub), the displaced instructions relocated by
 * user space and verified by verify.c, and the jump back after them.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "check/check.h"
#include "actions/actions.h"
#include "actions/hit.h"
#include "patch/slot.h"

void kinstr_put_rel32(u8 *at, unsigned long insn_end, unsigned long target)
{
	s32 rel = (s32)(target - insn_end);

	memcpy(at, &rel, 4);
}

/*
 * A counting probe's prologue: an inline per-CPU increment that calls nothing and saves one
 * register, and the flags where they are live at the site (incq writes them), written at b.
 *   [pushfq] push %rax; movabs $hits, %rax; incq %gs:(%rax); pop %rax; [popfq]
 * In a scope, the gate's per-CPU byte is tested first (cmpb writes the flags too):
 *   [pushfq] push %rax; movabs $gate, %rax; cmpb $0, %gs:(%rax); je 1f; movabs $hits, %rax;
 *   incq %gs:(%rax); 1: pop %rax; [popfq]
 */
u8 *kinstr_slot_count(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p, bool flags_dead)
{
	unsigned long hits = (unsigned long)p->hits, gate = (unsigned long)p->gate;

	if (!flags_dead)
		*b++ = 0x9c;
	*b++ = 0x50;
	if (p->gate) {
		*b++ = 0x48;
		*b++ = 0xb8;
		memcpy(b, &gate, 8);
		b += 8;
		/* cmpb $0, %gs:(%rax); je over the 14 bytes of the count */
		memcpy(b, "\x65\x80\x38\x00\x74\x0e", 6);
		b += 6;
	}
	*b++ = 0x48;
	*b++ = 0xb8;
	memcpy(b, &hits, 8);
	b += 8;
	memcpy(b, "\x65\x48\xff\x00", 4);	/* the per-CPU counter: %gs-relative, like this_cpu_inc() */
	b += 4;
	*b++ = 0x58;
	if (!flags_dead)
		*b++ = 0x9d;
	return b;
}

/* The registers C may clobber, in the order a timer probe's prologue pushes them. */
static const char caller_saved[][2] = {
	{ 0x50 }, { 0x51 }, { 0x52 }, { 0x56 }, { 0x57 },		/* rax rcx rdx rsi rdi */
	{ 0x41, 0x50 }, { 0x41, 0x51 }, { 0x41, 0x52 }, { 0x41, 0x53 },	/* r8 r9 r10 r11 */
};

/*
 * A timer probe's prologue calls its action (ops->call) itself, with no stub in between (one call
 * and return less a hit, and no pointer on the stack to load back):
 *   [pushfq] push 9 registers; movabs $p, %rdi; call kinstr_timer_{start,stop}_hit; pop them; [popfq]
 * The flags are saved where they are live: the C code leaves IF, DF and AC as they were and
 * changes only the status flags. DF is clear here as everywhere in the kernel's C ABI (objtool
 * checks it); sites between std and cld are for the classifier to refuse. 51 bytes at most.
 */
u8 *kinstr_slot_call(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p, bool flags_dead)
{
	unsigned long pp = (unsigned long)p;
	int i;

	if (!flags_dead)
		*b++ = 0x9c;
	for (i = 0; i < ARRAY_SIZE(caller_saved); i++) {
		if (caller_saved[i][0] == 0x41)
			*b++ = 0x41;
		*b++ = caller_saved[i][caller_saved[i][0] == 0x41];
	}
	*b++ = 0x48;
	*b++ = 0xbf;
	memcpy(b, &pp, 8);
	b += 8;
	*b = 0xe8;
	kinstr_put_rel32(b + 1, (unsigned long)b + 5, (unsigned long)ops->call);
	b += 5;
	for (i = ARRAY_SIZE(caller_saved) - 1; i >= 0; i--) {
		if (caller_saved[i][0] == 0x41)
			*b++ = 0x41;
		*b++ = caller_saved[i][caller_saved[i][0] == 0x41] + 8;	/* pop = push + 8 */
	}
	if (!flags_dead)
		*b++ = 0x9d;
	return b;
}

/*
 * A trace or BPF probe's prologue: push the probe pointer kept in the slot, call its stub ops->call
 * (which builds the site's pt_regs), drop the pointer without touching the flags.
 */
u8 *kinstr_slot_stub(const struct kinstr_action_ops *ops, u8 *slot, u8 *b, struct kprobe_k *p, bool flags_dead)
{
	/* ff 35 disp32: push qword [rip + disp32] -> the pointer at slot + 56 */
	*b++ = 0xff;
	*b++ = 0x35;
	kinstr_put_rel32(b, (unsigned long)b + 4, (unsigned long)slot + 56);
	b += 4;
	*b = 0xe8;
	kinstr_put_rel32(b + 1, (unsigned long)b + 5, (unsigned long)ops->call);
	b += 5;
	/* lea 8(%rsp), %rsp */
	memcpy(b, "\x48\x8d\x64\x24\x08", 5);
	memcpy(slot + 56, &p, sizeof(p));
	return b + 5;
}

/*
 * The prologue (the action's, ops->prologue), then a jump to the body. An ftrace probe's slot
 * first drops the return address of ftrace's call: from there on the stack is the function's at
 * its entry, as under a jump probe, so the trace stub's pt_regs (its sp above all) and the timers
 * see the same frame either way.
 */
void kinstr_slot_write(u8 *slot, const struct kinstr_probe *req, const struct kinstr_action_ops *ops,
		       struct kprobe_k *p)
{
	u8 *b = slot;
	bool flags_dead;

	memset(slot, KINSTR_INT3, KINSTR_SLOT_SIZE);
	if (req->kind == KINSTR_PROBE_FTRACE) {
		/* lea 8(%rsp), %rsp: the flags are the caller's, so leave them alone here too */
		memcpy(b, "\x48\x8d\x64\x24\x08", 5);
		b += 5;
	}
	flags_dead = p->flags_dead;	/* as verification found them */
	p->inline_count = ops->inline_count;
	/* a stub always saves them (its pt_regs has the flags) */
	p->saves_flags = ops->flags == KINSTR_SAVE_FLAGS_ALWAYS || (ops->flags == KINSTR_SAVE_FLAGS_LIVE && !flags_dead);
	if (ops->prologue)
		b = ops->prologue(ops, slot, b, p, flags_dead);
	/*
	 * the longest prologue (ftrace's lea, then a timer's call with the flags) ends before
	 * slot + 56, and so does a scoped count's (its gate's test, 16 bytes, before the count)
	 */
	BUILD_BUG_ON(5 + 1 + 13 + 10 + 5 + 13 + 1 + 5 > 56);
	BUILD_BUG_ON(5 + 1 + 1 + 16 + 10 + 4 + 1 + 1 + 5 > 56);
	*b = KINSTR_JMP32;
	kinstr_put_rel32(b + 1, (unsigned long)b + 5, (unsigned long)slot + KINSTR_SLOT_BODY);
	/* an ftrace probe's body is empty: on at site + 5, after the NOP */
	memcpy(slot + KINSTR_SLOT_BODY, req->body, req->body_len);
	b = slot + KINSTR_SLOT_BODY + req->body_len;
	*b = KINSTR_JMP32;
	kinstr_put_rel32(b + 1, (unsigned long)b + 5, req->site + req->displaced_len);
}


/* cmpq $imm32, (%rsp) + jb rel32 + je rel32 per node; a leaf's miss: jmp rel32 */
#define NODE_BYTES (8 + 6 + 6)
#define MISS_BYTES 5

size_t kinstr_dispatch_size(u32 n)
{
	return (size_t)n * NODE_BYTES + (size_t)(n + 1) * MISS_BYTES;
}

/* [lo, hi) of ret[] at b; returns the end of what it wrote. Depth log2(n): a few levels. */
static u8 *dispatch_node(u8 *b, const struct kinstr_dispatch_entry *e, u32 lo, u32 hi)
{
	u32 mid = lo + (hi - lo) / 2;
	u8 *jb;
	s32 imm;

	if (lo == hi) {
		*b = KINSTR_JMP32;
		kinstr_put_rel32(b + 1, (unsigned long)b + 5, (unsigned long)kinstr_direct_miss);
		return b + 5;
	}
	imm = (s32)e[mid].ret;	/* sign-extended back to the address: kernel and module text */
	memcpy(b, "\x48\x81\x3c\x24", 4);
	memcpy(b + 4, &imm, 4);
	b += 8;
	/* below: the left half, written after this node's je and right half */
	jb = b;
	memcpy(b, "\x0f\x82", 2);
	b += 6;
	memcpy(b, "\x0f\x84", 2);
	kinstr_put_rel32(b + 2, (unsigned long)b + 6, (unsigned long)e[mid].slot);
	b += 6;
	b = dispatch_node(b, e, mid + 1, hi);
	kinstr_put_rel32(jb + 2, (unsigned long)jb + 6, (unsigned long)b);
	return dispatch_node(b, e, lo, mid);
}

bool kinstr_dispatch_reaches(unsigned long ret)
{
	return (unsigned long)(long)(s32)ret == ret;
}

void kinstr_dispatch_write(u8 *at, const struct kinstr_dispatch_entry *e, u32 n)
{
	dispatch_node(at, e, 0, n);
}
