// SPDX-License-Identifier: GPL-2.0
/*
 * A spec's values (struct kinstr_trace_val) read at the site, in probe context: what a trace
 * record holds and what a tally keys by. Reads of memory are fault-safe.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>

#include <uapi/linux/kinstr.h>
#include "actions/actions.h"
#include "actions/fetch.h"

/* struct pt_regs slot of each enum kinstr_reg */
static const u8 reg_slot[KINSTR_REG_NR] = {
	[KINSTR_REG_RAX] = offsetof(struct pt_regs, ax) / 8,
	[KINSTR_REG_RCX] = offsetof(struct pt_regs, cx) / 8,
	[KINSTR_REG_RDX] = offsetof(struct pt_regs, dx) / 8,
	[KINSTR_REG_RBX] = offsetof(struct pt_regs, bx) / 8,
	[KINSTR_REG_RSP] = offsetof(struct pt_regs, sp) / 8,
	[KINSTR_REG_RBP] = offsetof(struct pt_regs, bp) / 8,
	[KINSTR_REG_RSI] = offsetof(struct pt_regs, si) / 8,
	[KINSTR_REG_RDI] = offsetof(struct pt_regs, di) / 8,
	[KINSTR_REG_R8] = offsetof(struct pt_regs, r8) / 8,
	[KINSTR_REG_R9] = offsetof(struct pt_regs, r9) / 8,
	[KINSTR_REG_R10] = offsetof(struct pt_regs, r10) / 8,
	[KINSTR_REG_R11] = offsetof(struct pt_regs, r11) / 8,
	[KINSTR_REG_R12] = offsetof(struct pt_regs, r12) / 8,
	[KINSTR_REG_R13] = offsetof(struct pt_regs, r13) / 8,
	[KINSTR_REG_R14] = offsetof(struct pt_regs, r14) / 8,
	[KINSTR_REG_R15] = offsetof(struct pt_regs, r15) / 8,
	[KINSTR_REG_RIP] = offsetof(struct pt_regs, ip) / 8,
};

u32 kinstr_val_bytes(const struct kinstr_trace_val *v)
{
	return v->kind == KINSTR_VAL_STR ? round_up(v->size, 8) : 8;
}

/*
 * A NUL-terminated string of at most size - 1 chars at src into dst[size], fault-safe (6.1 does
 * not export strncpy_from_kernel_nofault): page by page, so that a short string near the end
 * of a mapping does not fault on bytes past its end. false if the first byte cannot be read.
 */
static notrace bool copy_str_nofault(char *dst, unsigned long src, u32 size)
{
	u32 got = 0;

	while (got < size - 1) {
		u32 chunk = min_t(u32, size - 1 - got, PAGE_SIZE - ((src + got) & ~PAGE_MASK));

		if (copy_from_kernel_nofault(dst + got, (void *)(src + got), chunk))
			break;
		if (memchr(dst + got, 0, chunk))
			return true;
		got += chunk;
	}
	dst[got] = 0;
	return got > 0;
}

static notrace unsigned long reg_of(const struct pt_regs *regs, u8 reg)
{
	return ((const unsigned long *)regs)[reg_slot[reg]];
}

/* Register reg (enum kinstr_reg) of the site's state, for the predicates (pred.c). */
notrace unsigned long kinstr_trace_reg(const struct pt_regs *regs, u8 reg)
{
	return reg_of(regs, reg);
}

notrace bool kinstr_val_fetch(const struct kinstr_trace_val *v, const struct pt_regs *regs, u8 *out)
{
	unsigned long a = reg_of(regs, v->reg) + (long)v->offset;
	bool ok = true;
	u64 val = 0;

	switch (v->kind) {
	case KINSTR_VAL_REG:
		val = reg_of(regs, v->reg);
		break;
	case KINSTR_VAL_MEM:
		if (copy_from_kernel_nofault(&val, (void *)a, v->size))
			ok = false, val = 0;
		break;
	case KINSTR_VAL_STR:
		if (v->deref && copy_from_kernel_nofault(&a, (void *)a, sizeof(a)))
			a = 0;
		memset(out, 0, round_up(v->size, 8));
		if (!a || !copy_str_nofault((char *)out, a, v->size)) {
			ok = false;
			out[0] = 0;
		}
		out[v->size - 1] = 0;
		return ok;
	}
	memcpy(out, &val, 8);
	return ok;
}
