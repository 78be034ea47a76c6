#!/usr/bin/env bash
# Regenerate tests/fuzz/corpus: functions cut from a kernel snapshot ('kinstr snapshot'; k-*,
# GPL-2.0 kernel text) and hand-made edge cases (h-*), in fuzz_analyze's input format.
#   tests/fuzz/mkcorpus.sh SNAPSHOT
set -euo pipefail
cd "$(dirname "$0")/../.."
snap=${1:?usage: tests/fuzz/mkcorpus.sh SNAPSHOT}
dir=tests/fuzz/corpus
mkdir -p "$dir"
make -s build/fuzz/cut_seeds
rm -f "$dir"/k-* "$dir"/h-*
build/fuzz/cut_seeds "$snap" "$dir" __do_sys_getppid memchr strnlen vfs_read

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# seed NAME OPT ASM: the header is start offset 0x001240 in region OPT&3, options OPT, seed
# 0x5a5a5a5a (see tests/fuzz/fuzz_analyze.c), then the assembled bytes.
seed() {
	printf '%s\n' "$3" >"$tmp/s.s"
	as --64 -o "$tmp/s.o" "$tmp/s.s"
	objcopy -O binary -j .text "$tmp/s.o" "$tmp/s.bin"
	{ printf "\\x40\\x12\\x00\\x$(printf %02x "$2")\\x5a\\x5a\\x5a\\x5a"; cat "$tmp/s.bin"; } >"$dir/h-$1"
}

seed loop-dec 0 '
1:	dec %ecx
	jnz 1b
	ret
	int3'
seed loop-insns 0x34 '
	mov $10, %ecx
1:	nop
	loop 1b
	jrcxz 2f
	addr32 loop 1b
	jecxz 2f
	loope 1b
	loopne 1b
2:	ret'
seed interior-branches 0 '
0:	xor %eax, %eax
1:	inc %eax
	jnz 1b
	jz 0b
	cmp $3, %eax
	jb 1b
	ret'
seed jcc8-at-ends 0 '
0:	jz 0b
	cmp $1, %edi
	je 0b
	mov %esi, %eax
	jmp .
	.byte 0x75, 0x00'
seed riprel-imm 0 '
0:	cmpb $0x1, 0x1234(%rip)
	movl $0x12345678, -0x10(%rip)
	testl $0xff00ff00, 0x40(%rip)
	addq $-1, 0x7ffffff0(%rip)
	movw $0x1234, 0x20(%rip)
	lea 0b(%rip), %rax
	mov 0b(%rip), %al
	ret'
seed eip-relative 0 '
	mov 0x10(%eip), %eax
	addl $1, 0x10(%eip)
	ret'
seed call-into-self 0 '
	call 1f
1:	pop %rax
	ret'
seed xbegin 0 '
	xbegin 1f
	mov $1, %eax
	xend
1:	xabort $1
	ret'
# a ud2 (BUG, WARN) followed by code: the block after it starts there (test_fuzz.sh's planted bug)
seed ud2-then-code 0 '
	xor %eax, %eax
	ud2
	mov $1, %eax
	ret'
seed bad-target 0 '
	jmp 1f+1
1:	mov $0x12345678, %eax
	ret'
seed indirect 0x54 '
	mov %rdi, %rax
	call *(%rdi)
	jmp *0x10(%rip)
	jmp *%rax'
seed privileged 0 '
	cli
	mov %cr0, %rax
	sti
	pushf
	popf
	swapgs
	wrmsr
	hlt
	iretq
	ret
	int3
	int3'
seed opsize-branches 0 '
	.byte 0x66, 0xe9, 0, 0, 0, 0
	.byte 0x66, 0x0f, 0x84, 0, 0, 0, 0
	.byte 0x66, 0xe8, 0, 0, 0, 0
	ret'
seed far-targets 0 '
	.byte 0xe9
	.long 0x7ffffff0
	.byte 0x0f, 0x85
	.long 0x80000000
	.byte 0xe8
	.long 0x7fff0000
	lea 0x7fffffff(%rip), %rax
	ret'
seed wrap-top 3 '
	.byte 0xe9
	.long 0x7ffffff0
	lea 0x7fffffff(%rip), %rax
	jmp 1f
1:	ret'
seed edges-and-thunk 0xfc '
	push %rbx
	mov %rdi, %rbx
	test %rsi, %rsi
	je 1f
	call *%rsi
1:	mov (%rbx), %eax
	add $1, %eax
	pop %rbx
	ret
	int3'
seed truncated 0 '
	xor %eax, %eax
	.byte 0xb8, 0x78, 0x56'
seed invalid 0 '
	xor %eax, %eax
	.byte 0x06
	ret'
seed padding 0 '
	mov %edi, %eax
	ret
	int3
	int3
	nop
	nopw 0(%rax,%rax,1)
	ud2'
seed int3-run 0 '
	int3
	int3
	mov %eax, %ebx
	int3
	ret'
seed jmp-to-start 0 '
0:	nop
	nop
	nop
	nop
	nop
	nop
	jmp 0b'
seed strings-and-flags 0 '
	rep movsb
	rep stosq
	repne scasb
	lock incl (%rdi)
	shl $0, %eax
	shl %cl, %eax
	shl $1, %eax
	bsf %edi, %eax
	xor %ecx, %ecx
	setz %cl
	ret'
ls -l "$dir"
du -sb "$dir"
