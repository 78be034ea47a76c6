/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How an x86-64 kernel function begins. On a kernel built with IBT (Debian's 6.12) a function
 * that is global or address-taken starts with an ENDBR: `endbr64`, or the 4-byte NOP the kernel
 * seals it to at boot when objtool found nothing taking its address. The fentry NOP, ftrace's
 * site, follows it (ftrace_location(f) == f + 4); elsewhere it is the function's first
 * instruction. An indirect call lands on the ENDBR, so it is never displaced and never
 * trapped (KINSTR_R_ENDBR). One rule for the module (kmod/check/policy.c, kmod/check/verify.c) and the
 * library (lib/kernel/view.c); tests/unit/test_rules.c walks every 4-byte pattern it could confuse.
 */
#ifndef KINSTR_RULES_ENTRY_H
#define KINSTR_RULES_ENTRY_H

#define KINSTR_ENDBR_LEN 4

/* The length of the ENDBR at a function's first bytes b[0..3]: 4, or 0 when it has none. */
static inline unsigned int kinstr_entry_endbr_len(const unsigned char *b)
{
	/* endbr64 (f3 0f 1e fa) and the kernel's seal of it, nopw (%rax) (66 0f 1f 00) */
	if (b[1] != 0x0f)
		return 0;
	if (b[0] == 0xf3 && b[2] == 0x1e && b[3] == 0xfa)
		return KINSTR_ENDBR_LEN;
	if (b[0] == 0x66 && b[2] == 0x1f && b[3] == 0x00)
		return KINSTR_ENDBR_LEN;
	return 0;
}

#endif
