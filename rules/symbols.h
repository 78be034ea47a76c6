/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Functions refused whole by their symbol's name, one rule for the module (kmod/check/policy.c) and
 * the library (lib/kernel/reserve.c); tests/unit/test_rules.c walks the names it could confuse.
 *  - __cfi_NAME, __pfx_NAME (KINSTR_R_CFI_SYMBOL): the padding and CFI preambles before a
 *    function, never code of its own.
 *  - __SCT__NAME (KINSTR_R_SC_TRAMPOLINE): a static call's trampoline, `jmp target` (or `ret`)
 *    and the kernel's signature bytes, which static_call_update() rewrites with text_poke_bp()
 *    whenever the call is updated (a tracepoint gaining or losing a probe, a paravirt clock, a
 *    preemption model): a splice there would be overwritten under kinstr, and its removal would
 *    then write back a stale target. A copy of it would keep calling the old target.
 */
#ifndef KINSTR_RULES_SYMBOLS_H
#define KINSTR_RULES_SYMBOLS_H

static inline int kinstr_rule_prefix(const char *name, const char *prefix)
{
	while (*prefix)
		if (*name++ != *prefix++)
			return 0;
	return 1;
}

static inline int kinstr_rule_cfi_symbol(const char *name)
{
	return kinstr_rule_prefix(name, "__cfi_") || kinstr_rule_prefix(name, "__pfx_");
}

static inline int kinstr_rule_sc_trampoline(const char *name)
{
	return kinstr_rule_prefix(name, "__SCT__");
}

#endif
