/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The BPF object of kinstr count --by stack (lib/bpf/stack.bpf.c), inside libkinstr. */
	.section .rodata
	.balign 8
	.globl kinstr_stack_bpf_obj
	.globl kinstr_stack_bpf_obj_end
kinstr_stack_bpf_obj:
	.incbin STACK_OBJ
kinstr_stack_bpf_obj_end:
	.section .note.GNU-stack,"",@progbits
