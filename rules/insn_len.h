/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The length of an x86-64 instruction, and whether it is a direct branch (with where its
 * displacement sits), `std`, or an indirect jmp: a table-driven reading of the encodings that make
 * up nearly all kernel code, for the module's pass over a whole function (kmod/check/verify.c),
 * which the kernel's full decoder made most of the install's time. It answers 0 for anything it
 * does not handle (VEX, EVEX, XOP, the 0f38/0f3a maps, 3DNow!, SSE, a 66 prefix on a branch, more
 * than three legacy prefixes, forms invalid in 64-bit mode, the Xen and KVM emulate prefixes
 * (ud2 then "xen"/"kvm", one instruction with what follows to the kernel's decoder), ...): the
 * caller then asks the full
 * decoder, so "not handled" is never a verdict.
 *
 * One source, two checks over the whole domain: tests/unit/test_insn_len.c walks every opcode of
 * the legacy and 0f maps under each prefix form with every ModRM and SIB byte against Zydis; the
 * module's decoder self-test (kinstr.ko decoder_selftest=1, tests/vm/decoder.t) compares it with
 * the kernel's insn_decode() on every instruction of the running kernel's text.
 */
#ifndef KINSTR_RULES_INSN_LEN_H
#define KINSTR_RULES_INSN_LEN_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

enum kinstr_lite_kind {
	KINSTR_LITE_OTHER,
	KINSTR_LITE_JMP,	/* e9 rel32, eb rel8 */
	KINSTR_LITE_JCC,	/* 70-7f rel8, 0f 80-8f rel32 */
	KINSTR_LITE_CALL,	/* e8 rel32 */
	KINSTR_LITE_LOOP,	/* e0-e3 rel8: loopne, loope, loop, jrcxz */
	KINSTR_LITE_STD,	/* fd */
	KINSTR_LITE_IJMP,	/* ff /4, ff /5 */
};

struct kinstr_lite {
	uint8_t len;		/* 0: not handled here: ask the full decoder */
	uint8_t kind;		/* enum kinstr_lite_kind */
	uint8_t rel;		/* a direct branch's displacement: its offset ... */
	uint8_t rel_len;	/* ... and size (1 or 4) */
};

/* Per opcode: ModRM or not, and the immediate. */
#define KL_M	0x10	/* a ModRM byte (and what it brings: SIB, displacement) */
#define KL_I0	0x00	/* no immediate */
#define KL_IB	0x01	/* 1 byte */
#define KL_IW	0x02	/* 2 bytes */
#define KL_IZ	0x03	/* 2 with a 66 prefix (and no REX.W), else 4 */
#define KL_IV	0x04	/* b8-bf: 8 with REX.W, else as IZ */
#define KL_MO	0x05	/* a0-a3: a moffs, 8 bytes (4 with a 67 prefix) */
#define KL_EN	0x06	/* c8 enter: iw + ib */
#define KL_IMM	0x0f
#define KL_X	0x80	/* not handled */
#define KL_PF	(KL_X | 0x08)	/* a legacy prefix (in the legacy map only) */
#define KL_RX	(KL_X | 0x09)	/* REX (in the legacy map only) */
#define KL_G	0x40	/* decided by ModRM.reg: see kinstr_lite_group() */
#define KL_P	0x20	/* 0f map: a 66, f2 or f3 prefix makes it another instruction: not handled then */

#define KL_M_IB (KL_M | KL_IB)
#define KL_M_IZ (KL_M | KL_IZ)

/* The legacy map in 64-bit mode; prefixes, REX and 0f are taken before this table is read. */
static const uint8_t kinstr_lite_map1[256] = {
	/* 00 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_X, KL_X,
	/* 08 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_X, KL_X,
	/* 10 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_X, KL_X,
	/* 18 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_X, KL_X,
	/* 20 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_PF, KL_X,
	/* 28 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_PF, KL_X,
	/* 30 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_PF, KL_X,
	/* 38 */ KL_M, KL_M, KL_M, KL_M, KL_IB, KL_IZ, KL_PF, KL_X,
	/* 40 REX */
	KL_RX, KL_RX, KL_RX, KL_RX, KL_RX, KL_RX, KL_RX, KL_RX,
	KL_RX, KL_RX, KL_RX, KL_RX, KL_RX, KL_RX, KL_RX, KL_RX,
	/* 50 push, pop */
	KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0,
	KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0,
	/* 60 */ KL_X, KL_X, KL_X, KL_M, KL_PF, KL_PF, KL_PF, KL_PF,
	/* 68 */ KL_IZ, KL_M_IZ, KL_IB, KL_M_IB, KL_I0, KL_I0, KL_I0, KL_I0,
	/* 70 jcc rel8 */
	KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB,
	KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB,
	/* 80 */ KL_M_IB, KL_M_IZ, KL_X, KL_M_IB, KL_M, KL_M, KL_M, KL_M,
	/* 88 */ KL_M, KL_M, KL_M, KL_M, KL_X, KL_M, KL_X, KL_G,
	/* 90 */ KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0,
	/* 98 */ KL_I0, KL_I0, KL_X, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0,
	/* a0 */ KL_MO, KL_MO, KL_MO, KL_MO, KL_I0, KL_I0, KL_I0, KL_I0,
	/* a8 */ KL_IB, KL_IZ, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0,
	/* b0 */ KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB,
	/* b8 */ KL_IV, KL_IV, KL_IV, KL_IV, KL_IV, KL_IV, KL_IV, KL_IV,
	/* c0 */ KL_M_IB, KL_M_IB, KL_IW, KL_I0, KL_X, KL_X, KL_G, KL_G,
	/* c8 */ KL_EN, KL_I0, KL_IW, KL_I0, KL_I0, KL_IB, KL_X, KL_I0,
	/* d0 */ KL_M, KL_M, KL_M, KL_M, KL_X, KL_X, KL_X, KL_I0,
	/* d8 x87 */ KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M,
	/* e0 loop*, jrcxz; in, out; call, jmp rel32; (ea); jmp rel8; in, out */
	/* e0 */ KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB, KL_IB,
	/* e8 */ KL_IZ, KL_IZ, KL_X, KL_IB, KL_I0, KL_I0, KL_I0, KL_I0,
	/* f0 (f0, f2, f3 are prefixes) */
	/* f0 */ KL_PF, KL_I0, KL_PF, KL_PF, KL_I0, KL_I0, KL_G, KL_G,
	/* f8 */ KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_G, KL_G,
};

/* The 0f map: only what kernel code is made of; the rest goes to the full decoder. */
static const uint8_t kinstr_lite_map2[256] = {
	/* 00 (group 6: not all of it), 01 group 7, lar, lsl; syscall clts sysret */
	/* 00 */ KL_X, KL_M | KL_P, KL_M | KL_P, KL_M | KL_P, KL_X, KL_I0 | KL_P, KL_I0 | KL_P, KL_I0 | KL_P,
	/* 08 invd wbinvd, ud2, prefetchw */
	/* 08 */ KL_I0 | KL_P, KL_I0 | KL_P, KL_X, KL_I0 | KL_P, KL_X, KL_M | KL_P, KL_X, KL_X,
	/* 10 SSE */ KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	/* 18 prefetch, hint nops, endbr */
	/* 18 */ KL_M, KL_M, KL_M | KL_P, KL_M | KL_P, KL_M, KL_M, KL_M, KL_M,
	/* 20 mov cr/dr, 24-27 */
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	/* 28 SSE */ KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	/* 30 wrmsr rdtsc rdmsr rdpmc */
	/* 30 */ KL_I0 | KL_P, KL_I0 | KL_P, KL_I0 | KL_P, KL_I0 | KL_P, KL_X, KL_X, KL_X, KL_X,
	/* 38 */ KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	/* 40 cmovcc */
	KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M,
	/* 50-7f SSE, MMX */
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	/* 80 jcc rel32 */
	KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ,
	KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ, KL_IZ,
	/* 90 setcc */
	KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M,
	/* a0 push/pop fs, cpuid, bt, shld */
	/* a0 */ KL_I0 | KL_P, KL_I0 | KL_P, KL_I0 | KL_P, KL_M, KL_M_IB, KL_M, KL_X, KL_X,
	/* a8 push/pop gs, (rsm), bts, shrd, group 15, imul */
	/* a8 */ KL_I0 | KL_P, KL_I0 | KL_P, KL_X, KL_M, KL_M_IB, KL_M, KL_M | KL_P, KL_M,
	/* b0 cmpxchg, lss, btr, lfs, lgs, movzx */
	/* b0 */ KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M, KL_M,
	/* b8 (popcnt, ud1), group 8, btc, bsf, bsr, movsx */
	/* b8 */ KL_X, KL_X, KL_G, KL_M, KL_M, KL_M, KL_M, KL_M,
	/* c0 xadd, (SSE), movnti, (SSE), (group 9) */
	/* c0 */ KL_M, KL_M, KL_X, KL_M | KL_P, KL_X, KL_X, KL_X, KL_X,
	/* c8 bswap */ KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0, KL_I0,
	/* d0-ff SSE, MMX */
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
	KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X, KL_X,
};

/*
 * The opcodes whose form ModRM.reg decides (KL_G): what follows ModRM, or KL_X. 0f ba /4-/7; 8f /0 is
 * pop (else XOP); c6/c7 /0 mov (c6 f8 xabort, c7 f8 xbegin to the full decoder); f6/f7 /0 test
 * (an immediate), /2-/7 none (/1, which decoders read differently, not here); fe /0 /1 inc dec;
 * ff: /0 /1 inc dec, /2 call, /4 jmp (/3 /5 far, /6 push; /7 none).
 */
static inline int kinstr_lite_group(unsigned int two, uint8_t op, uint8_t modrm)
{
	unsigned int reg = (modrm >> 3) & 7;

	if (two)	/* 0f ba: bt, bts, btr, btc imm8 are /4-/7 */
		return op == 0xba && reg >= 4 ? KL_IB : KL_X;
	switch (op) {
	case 0x8f:
		return reg == 0 ? KL_I0 : KL_X;
	case 0xc6:
		return reg == 0 && modrm != 0xf8 ? KL_IB : KL_X;
	case 0xc7:
		return reg == 0 && modrm != 0xf8 ? KL_IZ : KL_X;
	case 0xf6:
		return reg == 0 ? KL_IB : reg == 1 ? KL_X : KL_I0;
	case 0xf7:
		return reg == 0 ? KL_IZ : reg == 1 ? KL_X : KL_I0;
	case 0xfe:
		return reg <= 1 ? KL_I0 : KL_X;
	case 0xff:
		return reg == 7 ? KL_X : KL_I0;
	}
	return KL_X;
}

static inline int kinstr_lite_legacy_prefix(uint8_t b)
{
	return kinstr_lite_map1[b] == KL_PF;
}

/*
 * Read the instruction at b (avail bytes there, at least 15 for a full answer). Fills *l and
 * returns its length, or 0 with l->len = 0: not handled here.
 */
static inline unsigned int kinstr_lite_decode(const uint8_t *b, unsigned int avail, struct kinstr_lite *l)
{
	unsigned int i = 0, np = 0, rexw = 0, o16 = 0, a32 = 0, rep = 0, t, imm, two = 0;
	uint8_t op, modrm = 0;

	l->len = 0;
	l->kind = KINSTR_LITE_OTHER;
	l->rel = 0;
	l->rel_len = 0;
	if (avail < 15)
		return 0;
	/* ud2 then "xen" or "kvm": the kernel's decoder reads it as a prefix of what follows (cpuid) */
	if (b[0] == 0x0f && b[1] == 0x0b && ((b[2] == 'x' && b[3] == 'e' && b[4] == 'n') ||
					     (b[2] == 'k' && b[3] == 'v' && b[4] == 'm')))
		return 0;
	t = kinstr_lite_map1[b[0]];
	if (t == KL_PF) {
		do {
			o16 |= b[i] == 0x66;
			a32 |= b[i] == 0x67;
			rep |= b[i] == 0xf2 || b[i] == 0xf3;
			if (++np > 3)
				return 0;
			t = kinstr_lite_map1[b[++i]];
		} while (t == KL_PF);
	}
	if (t == KL_RX) {
		rexw = b[i] & 8;
		t = kinstr_lite_map1[b[++i]];	/* another REX or a prefix after it: KL_X below */
	}
	op = b[i++];
	if (op == 0x0f) {
		two = 1;
		op = b[i++];
		t = kinstr_lite_map2[op];
	}
	if ((t & KL_X) || ((t & KL_P) && (o16 || rep)))
		return 0;
	if (t & (KL_M | KL_G)) {
		unsigned int mod, rm;

		modrm = b[i++];
		if (t & KL_G) {
			t = kinstr_lite_group(two, op, modrm);
			if (t & KL_X)
				return 0;
		}
		mod = modrm >> 6;
		rm = modrm & 7;
		if (mod != 3 && rm == 4) {
			uint8_t sib = b[i++];

			if (mod == 0 && (sib & 7) == 5)
				i += 4;
		}
		if (mod == 1)
			i += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			i += 4;
	}
	switch (t & KL_IMM) {
	case KL_I0:
		imm = 0;
		break;
	case KL_IB:
		imm = 1;
		break;
	case KL_IW:
		imm = 2;
		break;
	case KL_IZ:
		imm = o16 && !rexw ? 2 : 4;
		break;
	case KL_IV:
		imm = rexw ? 8 : o16 ? 2 : 4;
		break;
	case KL_MO:
		imm = a32 ? 4 : 8;
		break;
	case KL_EN:
		imm = 3;
		break;
	default:
		return 0;
	}
	/* direct branches: never with 66 (a rel16 on some CPUs), which the full decoder reads */
	if (!two && ((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3) || op == 0xe8 ||
		     op == 0xe9)) {
		if (o16)
			return 0;
		l->kind = op == 0xe8 ? KINSTR_LITE_CALL : op == 0xe9 || op == 0xeb ? KINSTR_LITE_JMP :
			  op <= 0x7f ? KINSTR_LITE_JCC : KINSTR_LITE_LOOP;
		l->rel = i;
		l->rel_len = imm;
	} else if (two && op >= 0x80 && op <= 0x8f) {
		if (o16)
			return 0;
		l->kind = KINSTR_LITE_JCC;
		l->rel = i;
		l->rel_len = imm;
	} else if (!two && op == 0xfd) {
		l->kind = KINSTR_LITE_STD;
	} else if (!two && op == 0xff && (((modrm >> 3) & 7) == 4 || ((modrm >> 3) & 7) == 5)) {
		l->kind = KINSTR_LITE_IJMP;
	}
	i += imm;
	if (i > 15)
		return 0;
	l->len = i;
	return i;
}

/* A direct branch's target, the instruction being at addr. */
static inline unsigned long kinstr_lite_target(const uint8_t *b, const struct kinstr_lite *l, unsigned long addr)
{
	long rel;

	if (l->rel_len == 1) {
		rel = (int8_t)b[l->rel];
	} else {
		int32_t r = (int32_t)((uint32_t)b[l->rel] | (uint32_t)b[l->rel + 1] << 8 |
				      (uint32_t)b[l->rel + 2] << 16 | (uint32_t)b[l->rel + 3] << 24);
		rel = r;
	}
	return addr + l->len + rel;
}

#undef KL_M
#undef KL_I0
#undef KL_IB
#undef KL_IW
#undef KL_IZ
#undef KL_IV
#undef KL_MO
#undef KL_EN
#undef KL_IMM
#undef KL_X
#undef KL_PF
#undef KL_RX
#undef KL_G
#undef KL_P
#undef KL_M_IB
#undef KL_M_IZ

#endif
