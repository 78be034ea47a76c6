/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The entry stub every slot's prologue calls: it lives in the module's own text, so the
 * unwinder knows it. On entry: 0(%rsp) the return address into the slot, 8(%rsp) the probe.
 * It saves the flags and every register C may clobber, calls the action, and restores
 * everything: the probed instruction then runs with exactly the state it had. DF is clear
 * here as everywhere in the kernel's C ABI (objtool checks it); sites between std and cld are
 * for the classifier to refuse.
 */
#include <linux/linkage.h>
#include <asm/nospec-branch.h>

#define SAVED (10 * 8)	/* flags + 9 registers */

SYM_FUNC_START(kinstr_entry_stub)
	pushfq
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	movq	SAVED + 8(%rsp), %rdi
	call	kinstr_probe_hit
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popfq
	RET
SYM_FUNC_END(kinstr_entry_stub)
