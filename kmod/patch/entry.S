/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace and BPF actions' stubs, which their probes' slots call: it lives in the module's own text,
 * so the unwinder knows it. (Counting probes count in the slot itself, timer probes' slots save
 * the registers and call their C function directly: slot.c.)
 */
#include <linux/linkage.h>
#include <asm/nospec-branch.h>
#include <asm/segment.h>

/*
 * It saves the flags and builds a whole struct pt_regs of the site (the values a trace records:
 * any register, the site's %rsp), and calls its C function (probe, regs). On entry: 0(%rsp) the return address into the slot, 8(%rsp)
 * the probe, 16(%rsp) where the site's stack pointer was.
 */
#define R15	0
#define R14	8
#define R13	16
#define R12	24
#define RBP	32
#define RBX	40
#define R11	48
#define R10	56
#define R9	64
#define R8	72
#define RAX	80
#define RCX	88
#define RDX	96
#define RSI	104
#define RDI	112
#define ORIG_RAX 120
#define RIP	128
#define CS	136
#define EFLAGS	144
#define RSP	152
#define SS	160
#define PTREGS	168

.macro REGS_STUB name, target
SYM_FUNC_START(\name)
	pushfq				/* before anything that writes the flags */
	subq	$PTREGS, %rsp
	movq	%r15, R15(%rsp)
	movq	%r14, R14(%rsp)
	movq	%r13, R13(%rsp)
	movq	%r12, R12(%rsp)
	movq	%rbp, RBP(%rsp)
	movq	%rbx, RBX(%rsp)
	movq	%r11, R11(%rsp)
	movq	%r10, R10(%rsp)
	movq	%r9, R9(%rsp)
	movq	%r8, R8(%rsp)
	movq	%rax, RAX(%rsp)
	movq	%rcx, RCX(%rsp)
	movq	%rdx, RDX(%rsp)
	movq	%rsi, RSI(%rsp)
	movq	%rdi, RDI(%rsp)
	movq	$-1, ORIG_RAX(%rsp)
	movq	$0, RIP(%rsp)		/* the C function puts the site here */
	movq	$__KERNEL_CS, CS(%rsp)
	movq	PTREGS(%rsp), %rax
	movq	%rax, EFLAGS(%rsp)
	leaq	PTREGS + 24(%rsp), %rax	/* above the flags, the return address and the probe */
	movq	%rax, RSP(%rsp)
	movq	$__KERNEL_DS, SS(%rsp)
	movq	PTREGS + 16(%rsp), %rdi
	movq	%rsp, %rsi
	call	\target
	movq	R15(%rsp), %r15
	movq	R14(%rsp), %r14
	movq	R13(%rsp), %r13
	movq	R12(%rsp), %r12
	movq	RBP(%rsp), %rbp
	movq	RBX(%rsp), %rbx
	movq	R11(%rsp), %r11
	movq	R10(%rsp), %r10
	movq	R9(%rsp), %r9
	movq	R8(%rsp), %r8
	movq	RAX(%rsp), %rax
	movq	RCX(%rsp), %rcx
	movq	RDX(%rsp), %rdx
	movq	RSI(%rsp), %rsi
	movq	RDI(%rsp), %rdi
	addq	$PTREGS, %rsp
	popfq
	RET
SYM_FUNC_END(\name)
.endm

/* a trace probe's: kinstr_trace_hit(probe, regs) */
REGS_STUB kinstr_trace_stub, kinstr_trace_hit
/* a BPF probe's: kinstr_bpf_hit(probe, regs) */
REGS_STUB kinstr_bpf_stub, kinstr_bpf_hit
/* a tally probe's: kinstr_tally_hit(probe, regs) */
REGS_STUB kinstr_tally_stub, kinstr_tally_hit
/* a span probe's: kinstr_span_hit(probe, regs) */
REGS_STUB kinstr_span_stub, kinstr_span_hit

/*
 * Where an area's ftrace dispatcher (slot.c) goes when ftrace called it from a site it does not
 * know: never, since ftrace calls it only from the sites it was registered for; should it happen,
 * the function runs unprobed.
 */
SYM_FUNC_START(kinstr_direct_miss)
	RET
SYM_FUNC_END(kinstr_direct_miss)
