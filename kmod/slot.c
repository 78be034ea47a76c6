// SPDX-License-Identifier: GPL-2.0
/*
 * Slots: what a probe's slot holds (slot.h). The prologue (an inline counter where the flags are
 * dead, else a call of the stub with the probe pointer), the displaced instructions relocated by
 * user space and verified by verify.c, and the jump back after them.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"
#include "hit.h"
#include "slot.h"

void kinstr_put_rel32(u8 *at, unsigned long insn_end, unsigned long target)
{
	s32 rel = (s32)(target - insn_end);

	memcpy(at, &rel, 4);
}

/*
 * Prologue, fast path, where the flags are provably dead at the site: an inline per-CPU
 * increment that calls nothing and saves one register, written at b.
 *   push %rax; movabs $hits, %rax; incq %gs:(%rax); pop %rax; jmp body
 */
static void write_inline_count(u8 *slot, u8 *b, struct kprobe_k *p)
{
	unsigned long s = (unsigned long)slot, hits = (unsigned long)p->hits;

	*b++ = 0x50;
	*b++ = 0x48;
	*b++ = 0xb8;
	memcpy(b, &hits, 8);
	b += 8;
	memcpy(b, "\x65\x48\xff\x00", 4);	/* the per-CPU counter: %gs-relative, like this_cpu_inc() */
	b += 4;
	*b++ = 0x58;
	*b = KINSTR_JMP32;
	kinstr_put_rel32(b + 1, (unsigned long)b + 5, s + KINSTR_SLOT_BODY);
}

/*
 * Prologue: the inline counter where the flags are dead, else push the probe pointer kept in
 * the slot, call the stub (which saves the registers, and the flags unless they are dead), drop
 * the pointer, go to the body. An ftrace probe's slot first drops the return address of
 * ftrace's call: from there on the stack is the function's at its entry, as under a jump probe,
 * so the trace stub's pt_regs (its sp above all) and the timers see the same frame either way.
 */
void kinstr_slot_write(u8 *slot, const struct kinstr_probe *req, struct kprobe_k *p)
{
	u8 *b = slot;
	bool flags_dead;

	memset(slot, KINSTR_INT3, KINSTR_SLOT_SIZE);
	if (req->kind == KINSTR_PROBE_FTRACE) {
		/* lea 8(%rsp), %rsp: the flags are the caller's, so leave them alone here too */
		memcpy(b, "\x48\x8d\x64\x24\x08", 5);
		b += 5;
	}
	flags_dead = kinstr_flags_dead_at(req->site) || kinstr_flags_dead_by_abi(req->site);
	p->inline_count = req->action == KINSTR_ACTION_COUNT && flags_dead;
	if (p->inline_count) {
		write_inline_count(slot, b, p);
		goto body;
	}
	/* ff 35 disp32: push qword [rip + disp32] -> the pointer at slot + 56 */
	*b++ = 0xff;
	*b++ = 0x35;
	kinstr_put_rel32(b, (unsigned long)b + 4, (unsigned long)slot + 56);
	b += 4;
	*b++ = 0xe8;	/* call kinstr_trace_stub or kinstr_entry_stub[_nf] */
	kinstr_put_rel32(b, (unsigned long)b + 4, (unsigned long)(req->action == KINSTR_ACTION_TRACE ? kinstr_trace_stub :
							    flags_dead ? kinstr_entry_stub_nf : kinstr_entry_stub));
	b += 4;
	/* lea 8(%rsp), %rsp: drop the pointer without touching the flags */
	memcpy(b, "\x48\x8d\x64\x24\x08", 5);
	b += 5;
	*b = KINSTR_JMP32;
	kinstr_put_rel32(b + 1, (unsigned long)b + 5, (unsigned long)slot + KINSTR_SLOT_BODY);
	BUILD_BUG_ON(5 + 21 > 56);	/* the longest prologue stays below the pointer */
	memcpy(slot + 56, &p, sizeof(p));
body:
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
