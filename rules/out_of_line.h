/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which x86-64 instructions never run out of line: in a probe's slot, displaced by its jmp or
 * stepped over by its int3. One rule, in one place, built into the module's verifier
 * (kmod/check/verify.c) and the library's site selection (lib/isa/x86.c, lib/analysis/sites.c), so that user space
 * never offers a site the module refuses and the module never accepts what user space would not
 * offer. tests/unit/test_rules.c walks every opcode map, mandatory prefix, opcode and ModRM byte
 * and checks this rule against Zydis's reading of each instruction.
 *
 * It reads raw bytes (the instruction as decoded by either side's decoder, which found its
 * length) so that both sides extract the opcode the same way.
 */
#ifndef KINSTR_RULES_OUT_OF_LINE_H
#define KINSTR_RULES_OUT_OF_LINE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

enum kinstr_ool {
	KINSTR_OOL_OK = 0,
	KINSTR_OOL_TRAP,	/* int3, int n, into, int1: someone else's trap */
	KINSTR_OOL_UD,		/* ud0, ud1, ud2: BUG()/WARN(), found by address */
	KINSTR_OOL_IF,		/* cli, sti, popf: the interrupt flag */
	KINSTR_OOL_LEAVES,	/* iret, sysret, sysexit, syscall, sysenter, rsm, far jmp/call/ret, ret imm16 */
	KINSTR_OOL_SYSTEM,	/* CPL0 and system state: groups 6/7, cr/dr, msr, cache, VMX, hlt, ... */
};

/* ModRM fields */
#define KINSTR_OOL_MOD(m)	((m) >> 6)
#define KINSTR_OOL_REG(m)	(((m) >> 3) & 7)

/* Legacy map (no escape). */
static inline enum kinstr_ool kinstr_ool_legacy(uint8_t op, int modrm)
{
	switch (op) {
	case 0xcc: case 0xcd: case 0xce: case 0xf1:
		return KINSTR_OOL_TRAP;
	case 0xfa: case 0xfb: case 0x9d:
		return KINSTR_OOL_IF;
	case 0xcf: case 0xc2: case 0xca: case 0xcb: case 0xea: case 0x9a:
		return KINSTR_OOL_LEAVES;
	case 0xf4:
		return KINSTR_OOL_SYSTEM;
	case 0xff:	/* /3 far call, /5 far jmp, through memory */
		if (modrm >= 0 && (KINSTR_OOL_REG(modrm) == 3 || KINSTR_OOL_REG(modrm) == 5))
			return KINSTR_OOL_LEAVES;
		return KINSTR_OOL_OK;
	}
	return KINSTR_OOL_OK;
}

/* 0f map; pfx is the mandatory prefix (0x66, 0xf3, 0xf2 or 0). */
static inline enum kinstr_ool kinstr_ool_0f(uint8_t op, int modrm, uint8_t pfx)
{
	switch (op) {
	case 0x0b: case 0xb9: case 0xff:
		return KINSTR_OOL_UD;
	case 0x05: case 0x07: case 0x34: case 0x35:
	case 0xaa:					/* rsm: back to the state SMM saved */
		return KINSTR_OOL_LEAVES;
	case 0x00: case 0x01:				/* groups 6 and 7: lgdt, ltr, swapgs, clac, ... */
	case 0x06: case 0x08: case 0x09:		/* clts, invd, wbinvd */
	case 0x20: case 0x21: case 0x22: case 0x23:	/* mov cr/dr */
	case 0x30: case 0x32:				/* wrmsr, rdmsr */
		return KINSTR_OOL_SYSTEM;
	case 0x78: case 0x79:				/* vmread, vmwrite (66/f2: sse4a) */
		return pfx == 0x66 || pfx == 0xf2 ? KINSTR_OOL_OK : KINSTR_OOL_SYSTEM;
	case 0xc7:	/* group 9, memory: xrstors, xsaves, vmptrld/vmclear/vmxon, vmptrst */
		if (modrm >= 0 && KINSTR_OOL_MOD(modrm) != 3 &&
		    (KINSTR_OOL_REG(modrm) == 3 || KINSTR_OOL_REG(modrm) >= 5))
			return KINSTR_OOL_SYSTEM;
		return KINSTR_OOL_OK;
	case 0xae:	/* f3 /6, memory: clrssbsy */
		if (pfx == 0xf3 && modrm >= 0 && KINSTR_OOL_MOD(modrm) != 3 && KINSTR_OOL_REG(modrm) == 6)
			return KINSTR_OOL_SYSTEM;
		return KINSTR_OOL_OK;
	}
	return KINSTR_OOL_OK;
}

/* 0f 38 map. */
static inline enum kinstr_ool kinstr_ool_0f38(uint8_t op, int modrm, uint8_t pfx)
{
	if (pfx == 0x66 && (op == 0x80 || op == 0x81 || op == 0x82 || op == 0xf5))
		return KINSTR_OOL_SYSTEM;	/* invept, invvpid, invpcid, wrussd */
	if (pfx == 0xf3 && op == 0xdc && modrm >= 0 && KINSTR_OOL_MOD(modrm) == 3)
		return KINSTR_OOL_SYSTEM;	/* loadiwkey */
	return KINSTR_OOL_OK;
}

/* 0f 3a map. */
static inline enum kinstr_ool kinstr_ool_0f3a(uint8_t op, int modrm, uint8_t pfx)
{
	if (pfx == 0xf3 && op == 0xf0 && modrm >= 0 && KINSTR_OOL_MOD(modrm) == 3)
		return KINSTR_OOL_SYSTEM;	/* hreset */
	return KINSTR_OOL_OK;
}

/*
 * The verdict for one instruction of len bytes. Legacy prefixes and REX are skipped; the
 * mandatory prefix is the last f2/f3, else 66. VEX, EVEX and XOP encodings hold no instruction
 * of these classes.
 */
static inline enum kinstr_ool kinstr_ool_check(const uint8_t *b, unsigned int len)
{
	unsigned int i = 0;
	uint8_t pfx = 0, rep = 0;
	int modrm;

	for (; i < len; i++) {
		uint8_t c = b[i];

		if (c == 0xf2 || c == 0xf3)
			rep = c;
		else if (c == 0x66)
			pfx = c;
		else if (!(c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x64 || c == 0x65 ||
			   c == 0x67 || c == 0xf0 || (c & 0xf0) == 0x40))
			break;
	}
	if (rep)
		pfx = rep;
	if (i >= len || b[i] == 0xc4 || b[i] == 0xc5 || b[i] == 0x62)
		return KINSTR_OOL_OK;
	if (b[i] != 0x0f)
		return kinstr_ool_legacy(b[i], i + 1 < len ? b[i + 1] : -1);
	if (i + 1 >= len)
		return KINSTR_OOL_OK;
	if (b[i + 1] == 0x38 || b[i + 1] == 0x3a) {
		if (i + 2 >= len)
			return KINSTR_OOL_OK;
		modrm = i + 3 < len ? b[i + 3] : -1;
		return b[i + 1] == 0x38 ? kinstr_ool_0f38(b[i + 2], modrm, pfx)
					: kinstr_ool_0f3a(b[i + 2], modrm, pfx);
	}
	return kinstr_ool_0f(b[i + 1], i + 2 < len ? b[i + 2] : -1, pfx);
}

#endif
