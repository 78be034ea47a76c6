/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which x86-64 instructions overwrite all six status flags (CF PF AF ZF SF OF) without reading
 * any: add, or, and, sub, xor, cmp and test in all their one-byte-opcode forms (not adc/sbb,
 * which read CF; not inc/dec, which keep CF). Just before such an instruction the flags are
 * dead, so code placed there may clobber them: a probe's inline counter, a code-cache block
 * counter. One rule for the module's verifier (kmod/check/verify.c) and the library's builders
 * (lib/cache/place.c); tests/unit/test_rules.c walks every one-byte opcode, prefix and ModRM byte and
 * checks it against Zydis's reading of each instruction's flags.
 *
 * It reads raw bytes (the instruction as either side's decoder found its length).
 */
#ifndef KINSTR_RULES_FLAGS_H
#define KINSTR_RULES_FLAGS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

static inline int kinstr_flags_killed(const uint8_t *b, unsigned int len)
{
	unsigned int i = 0;
	uint8_t op, reg;

	/* legacy prefixes and REX */
	while (i < len && (b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e || b[i] == 0x64 ||
			   b[i] == 0x65 || b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
			   b[i] == 0xf3 || (b[i] & 0xf0) == 0x40))
		i++;
	if (i >= len)
		return 0;
	op = b[i];
	reg = i + 1 < len ? (b[i + 1] >> 3) & 7 : 0xff;
	if (op < 0x40 && (op & 7) <= 5)		/* the ALU block: add or adc sbb and sub xor cmp */
		return (op >> 3) != 2 && (op >> 3) != 3;
	switch (op) {
	case 0x84: case 0x85: case 0xa8: case 0xa9:	/* test */
		return 1;
	case 0x80: case 0x81: case 0x83:		/* group 1: not /2 adc, /3 sbb */
		return reg != 0xff && reg != 2 && reg != 3;
	case 0xf6: case 0xf7:				/* group 3 /0: test imm */
		return reg == 0;
	}
	return 0;
}

#endif
