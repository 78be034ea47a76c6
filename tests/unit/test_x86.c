// SPDX-License-Identifier: GPL-2.0
/* kinstr_x86__decode() on hand-assembled instructions whose lengths and targets are known. */
#include <errno.h>
#include <string.h>

#include <kinstr/reloc.h>
#include <kinstr/x86.h>
#include "check.h"

#define A 0xffffffff81000000ull
#define R(r) KINSTR_X86_REG(KINSTR_X86_##r)

static int dec(const char *bytes, size_t len, struct kinstr_x86_insn *in)
{
	return kinstr_x86__decode(bytes, len, A, in);
}
#define DEC(s, in) dec(s, sizeof(s) - 1, in)

struct flow_case {
	const char *name;
	const char *bytes;
	size_t size;		/* bytes given to the decoder */
	unsigned int len, flow, attr;
	uint64_t target;	/* 0: none */
	unsigned int branch_off, branch_size;
};

#define FC(n, b, l, f, at, t, bo, bs) { n, b, sizeof(b) - 1, l, KINSTR_X86_FLOW_##f, at, t, bo, bs }
#define REL8	KINSTR_X86_A_BRANCH_REL8
#define LOOP	(KINSTR_X86_A_BRANCH_REL8 | KINSTR_X86_A_LOOP)

static const struct flow_case flow_cases[] = {
	FC("jmp rel8 fwd",	"\xeb\x05",			2, JMP, REL8, A + 7, 1, 1),
	FC("jmp rel8 self",	"\xeb\xfe",			2, JMP, REL8, A, 1, 1),
	FC("jmp rel32 back",	"\xe9\xfb\xff\xff\xff",		5, JMP, 0, A, 1, 4),
	FC("jmp rel32 fwd",	"\xe9\x00\x01\x00\x00",		5, JMP, 0, A + 0x105, 1, 4),
	FC("je rel8",		"\x74\x10",			2, JCC, REL8, A + 0x12, 1, 1),
	FC("jne rel32",		"\x0f\x85\xce\x1c\xe0\x00",	6, JCC, 0, A + 6 + 0xe01cce, 2, 4),
	FC("jg rel32 back",	"\x0f\x8f\xf0\xff\xff\xff",	6, JCC, 0, A - 10, 2, 4),
	FC("call rel32",	"\xe8\xcb\xff\x0f\x00",		5, CALL, 0, A + 5 + 0xfffcb, 1, 4),
	FC("loop",		"\xe2\xfe",			2, JCC, LOOP, A, 1, 1),
	FC("loopne",		"\xe0\x03",			2, JCC, LOOP, A + 5, 1, 1),
	FC("jrcxz",		"\xe3\x7f",			2, JCC, LOOP, A + 0x81, 1, 1),
	FC("jecxz",		"\x67\xe3\x80",			3, JCC, LOOP, A + 3 - 0x80, 2, 1),
	FC("jmp *%rax",		"\xff\xe0",			2, JMP_IND, 0, 0, 0, 0),
	FC("jmp *%r11",		"\x41\xff\xe3",			3, JMP_IND, 0, 0, 0, 0),
	FC("call *%rax",	"\xff\xd0",			2, CALL_IND, 0, 0, 0, 0),
	FC("call *0x8(%rdi)",	"\xff\x57\x08",			3, CALL_IND, 0, 0, 0, 0),
	FC("jmp *disp(%rip)",	"\xff\x25\x00\x10\x00\x00",	6, JMP_IND, KINSTR_X86_A_RIP_REL, 0, 0, 0),
	FC("ret",		"\xc3",				1, RET, 0, 0, 0, 0),
	FC("ret $8",		"\xc2\x08\x00",			3, RET, 0, 0, 0, 0),
	FC("lret",		"\xcb",				1, EXIT, 0, 0, 0, 0),
	FC("iretq",		"\x48\xcf",			2, EXIT, 0, 0, 0, 0),
	FC("sysretq",		"\x48\x0f\x07",			3, EXIT, KINSTR_X86_A_PRIVILEGED, 0, 0, 0),
	FC("ljmp *(%rsp)",	"\xff\x2c\x24",			3, EXIT, KINSTR_X86_A_FAR_JMP, 0, 0, 0),
	FC("lgdt (%rdi)",	"\x0f\x01\x17",			3, NEXT, KINSTR_X86_A_SYSTEM, 0, 0, 0),
	FC("lcall *(%rsp)",	"\xff\x1c\x24",			3, EXIT, 0, 0, 0, 0),
	FC("int3",		"\xcc",				1, INT3, 0, 0, 0, 0),
	FC("ud2",		"\x0f\x0b",			2, UD2, 0, 0, 0, 0),
	FC("hlt",		"\xf4",				1, NEXT, KINSTR_X86_A_PRIVILEGED | KINSTR_X86_A_SYSTEM, 0, 0, 0),
	FC("syscall",		"\x0f\x05",			2, NEXT, 0, 0, 0, 0),
	/* decoding stops at the instruction's end, whatever follows */
	FC("push %rbp; more",	"\x55\x48\x89\xe5",		1, NEXT, 0, 0, 0, 0),
	FC("nopl 0(%rax,%rax)",	"\x0f\x1f\x44\x00\x00",		5, NEXT, KINSTR_X86_A_NOP, 0, 0, 0),
	FC("15-byte nopw",	"\x66\x66\x66\x66\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00",
								15, NEXT, KINSTR_X86_A_NOP, 0, 0, 0),
	FC("endbr64",		"\xf3\x0f\x1e\xfa",		4, NEXT, KINSTR_X86_A_ENDBR, 0, 0, 0),
	FC("lock incl (%rdi)",	"\xf0\xff\x07",			3, NEXT, KINSTR_X86_A_LOCK, 0, 0, 0),
	FC("rep movsb",		"\xf3\xa4",			2, NEXT, KINSTR_X86_A_REP, 0, 0, 0),
	FC("movabs $imm64,%rax", "\x48\xb8\x88\x77\x66\x55\x44\x33\x22\x11", 10, NEXT, 0, 0, 0, 0),
};

static void t_lengths_flows_and_targets(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(flow_cases) / sizeof(flow_cases[0]); i++) {
		const struct flow_case *c = &flow_cases[i];
		struct kinstr_x86_insn in;
		int err = kinstr_x86__decode(c->bytes, c->size, A, &in);

		CHECK(err == 0, "%s: err %d", c->name, err);
		if (err)
			continue;
		CHECK(in.addr == A, "%s: addr", c->name);
		CHECK(in.len == c->len, "%s: len %u, want %u", c->name, in.len, c->len);
		CHECK(in.flow == c->flow, "%s: flow %u, want %u", c->name, in.flow, c->flow);
		CHECK(in.attr == c->attr, "%s: attr %#x, want %#x", c->name, in.attr, c->attr);
		CHECK(!memcmp(in.bytes, c->bytes, in.len), "%s: bytes not copied", c->name);
		if (c->target) {
			CHECK(in.target == c->target, "%s: target %#llx, want %#llx", c->name,
			      (unsigned long long)in.target, (unsigned long long)c->target);
			CHECK(in.branch_off == c->branch_off && in.branch_size == c->branch_size,
			      "%s: branch field %u/%u, want %u/%u", c->name, in.branch_off,
			      in.branch_size, c->branch_off, c->branch_size);
		} else {
			CHECK(in.target == 0 && in.branch_size == 0, "%s: has a direct target", c->name);
		}
	}
}

static void t_falls_through(void)
{
	struct kinstr_x86_insn in;

	CHECK(DEC("\x74\x10", &in) == 0 && kinstr_x86__falls_through(&in), "jcc falls through");
	CHECK(DEC("\xe8\x00\x00\x00\x00", &in) == 0 && kinstr_x86__falls_through(&in), "call");
	CHECK(DEC("\x0f\x0b", &in) == 0 && kinstr_x86__falls_through(&in), "ud2 (WARN resumes)");
	CHECK(DEC("\xeb\x00", &in) == 0 && !kinstr_x86__falls_through(&in), "jmp");
	CHECK(DEC("\xc3", &in) == 0 && !kinstr_x86__falls_through(&in), "ret");
	CHECK(DEC("\xcc", &in) == 0 && !kinstr_x86__falls_through(&in), "int3");
	CHECK(DEC("\xff\xe0", &in) == 0 && !kinstr_x86__falls_through(&in), "jmp *%%rax");
}

static void t_gs_store64(void)
{
	struct kinstr_x86_insn in;
	uint64_t a = 0;

	/* 6.1's __switch_to: this_cpu_write(current_task, next_p) */
	CHECK(DEC("\x65\x48\x89\x1c\x25\x80\xfb\x01\x00", &in) == 0 && kinstr_x86__gs_store64(&in, &a) &&
	      a == 0x1fb80, "mov %%rbx, %%gs:0x1fb80: %#llx", (unsigned long long)a);
	CHECK(DEC("\x65\x4c\x89\x24\x25\x00\x00\x00\x00", &in) == 0 && kinstr_x86__gs_store64(&in, &a) && a == 0,
	      "mov %%r12, %%gs:0");
	CHECK(DEC("\x65\x48\xa3\x88\x77\x66\x55\x44\x33\x22\x11", &in) == 0 && kinstr_x86__gs_store64(&in, &a) &&
	      a == 0x1122334455667788ull, "mov %%rax, %%gs:moffs64");
	CHECK(DEC("\x65\x48\x8b\x1c\x25\x80\xfb\x01\x00", &in) == 0 && !kinstr_x86__gs_store64(&in, &a),
	      "a load is no store");
	CHECK(DEC("\x65\x89\x1c\x25\x80\xfb\x01\x00", &in) == 0 && !kinstr_x86__gs_store64(&in, &a), "32-bit");
	CHECK(DEC("\x48\x89\x1c\x25\x80\xfb\x01\x00", &in) == 0 && !kinstr_x86__gs_store64(&in, &a), "no %%gs");
	CHECK(DEC("\x65\x48\x89\x1c\x24", &in) == 0 && !kinstr_x86__gs_store64(&in, &a), "%%gs:(%%rsp) has a base");
	/* 6.1's __switch_to+0x124 at 0xffffffffb1a311a4: mov %rbx, %gs:0x4e5ee9d4(%rip), which wraps to 0x1fb80 */
	CHECK(kinstr_x86__decode("\x65\x48\x89\x1d\xd4\xe9\x5e\x4e", 8, 0xffffffffb1a311a4ull, &in) == 0 &&
	      kinstr_x86__gs_store64(&in, &a) && a == 0x1fb80, "RIP-relative: %#llx", (unsigned long long)a);
	CHECK(kinstr_x86__decode("\x48\x89\x1d\xd4\xe9\x5e\x4e", 7, 0xffffffffb1a311a4ull, &in) == 0 &&
	      !kinstr_x86__gs_store64(&in, &a), "RIP-relative without %%gs");
}

static void t_rip_relative(void)
{
	struct kinstr_x86_insn in;

	/* mov 0x10(%rip),%rax: disp32 at 3, relative to the end (A + 7) */
	CHECK(DEC("\x48\x8b\x05\x10\x00\x00\x00", &in) == 0, "decode");
	CHECK(in.attr & KINSTR_X86_A_RIP_REL, "not RIP-relative");
	CHECK(in.rip_target == A + 7 + 0x10, "target %#llx", (unsigned long long)in.rip_target);
	CHECK(in.disp_off == 3 && in.disp_size == 4, "disp %u/%u", in.disp_off, in.disp_size);
	CHECK(in.imm_size == 0 && in.imm_off == 0, "imm %u/%u", in.imm_off, in.imm_size);

	/* lea -0xe(%rip),%rdi: negative displacement */
	CHECK(DEC("\x48\x8d\x3d\xf2\xff\xff\xff", &in) == 0, "decode lea");
	CHECK(in.rip_target == A + 7 - 0xe, "lea target %#llx", (unsigned long long)in.rip_target);

	/* cmpl $0x1,0x100(%rip): imm8 after the displacement; target counts it */
	CHECK(DEC("\x83\x3d\x00\x01\x00\x00\x01", &in) == 0, "decode cmpl");
	CHECK(in.len == 7, "len %u", in.len);
	CHECK(in.rip_target == A + 7 + 0x100, "cmpl target %#llx", (unsigned long long)in.rip_target);
	CHECK(in.disp_off == 2 && in.disp_size == 4, "cmpl disp %u/%u", in.disp_off, in.disp_size);
	CHECK(in.imm_off == 6 && in.imm_size == 1, "cmpl imm %u/%u", in.imm_off, in.imm_size);

	/* movl $1,0x1000(%rip): imm32 after the displacement */
	CHECK(DEC("\xc7\x05\x00\x10\x00\x00\x01\x00\x00\x00", &in) == 0, "decode movl");
	CHECK(in.len == 10 && in.rip_target == A + 10 + 0x1000, "movl len %u target %#llx",
	      in.len, (unsigned long long)in.rip_target);
	CHECK(in.imm_off == 6 && in.imm_size == 4, "movl imm %u/%u", in.imm_off, in.imm_size);

	/* incq %gs:0x1234(%rip) with a segment prefix: disp moves by one */
	CHECK(DEC("\x65\x48\xff\x05\x34\x12\x00\x00", &in) == 0, "decode gs incq");
	CHECK(in.disp_off == 4 && in.rip_target == A + 8 + 0x1234, "gs incq disp %u target %#llx",
	      in.disp_off, (unsigned long long)in.rip_target);

	/* absolute addressing (no base) and %gs:0x28 are not RIP-relative */
	CHECK(DEC("\x65\x48\x8b\x04\x25\x28\x00\x00\x00", &in) == 0, "decode gs mov");
	CHECK(!(in.attr & KINSTR_X86_A_RIP_REL), "%%gs:0x28 taken as RIP-relative");
	CHECK(DEC("\x48\x8b\x47\x08", &in) == 0 && !(in.attr & KINSTR_X86_A_RIP_REL),
	      "0x8(%%rdi) taken as RIP-relative");
}

struct regs_case {
	const char *name, *bytes;
	size_t size;
	uint32_t rd, wr, kill;
};

#define RC(n, b, r, w, k) { n, b, sizeof(b) - 1, r, w, k }
#define F R(FLAGS)

static const struct regs_case regs_cases[] = {
	RC("xor %eax,%eax (idiom)",	"\x31\xc0",		0, R(RAX) | F, R(RAX) | F),
	RC("sub %rdx,%rdx (idiom)",	"\x48\x29\xd2",		0, R(RDX) | F, R(RDX) | F),
	RC("xor %ecx,%eax",		"\x31\xc8",		R(RAX) | R(RCX), R(RAX) | F, R(RAX) | F),
	RC("mov %ecx,%eax",		"\x89\xc8",		R(RCX), R(RAX), R(RAX)),
	RC("mov %rdi,%rbp",		"\x48\x89\xfd",		R(RDI), R(RBP), R(RBP)),
	RC("mov %cl,%al (partial)",	"\x88\xc8",		R(RCX), R(RAX), 0),
	RC("mov %cx,%ax (partial)",	"\x66\x89\xc8",		R(RCX), R(RAX), 0),
	RC("mov (%rbx),%al",		"\x8a\x03",		R(RBX), R(RAX), 0),
	RC("mov %r8,0x8(%r9,%r10,4)",	"\x4f\x89\x44\x91\x08",	R(R8) | R(R9) | R(R10), 0, 0),
	RC("lea (%rdi,%rsi,4),%rax",	"\x48\x8d\x04\xb7",	R(RDI) | R(RSI), R(RAX), R(RAX)),
	RC("push %rbx",			"\x53",			R(RBX) | R(RSP), R(RSP), R(RSP)),
	RC("pop %r12",			"\x41\x5c",		R(RSP), R(RSP) | R(R12), R(RSP) | R(R12)),
	RC("cmp %rsi,%rdi",		"\x48\x39\xf7",		R(RSI) | R(RDI), F, F),
	RC("test %esi,%esi",		"\x85\xf6",		R(RSI), F, F),
	RC("add $1,%rax",		"\x48\x83\xc0\x01",	R(RAX), R(RAX) | F, R(RAX) | F),
	/* inc leaves CF alone: the flags are written but not all redefined */
	RC("inc %eax",			"\xff\xc0",		R(RAX), R(RAX) | F, R(RAX)),
	RC("adc %rcx,%rax",		"\x48\x11\xc8",		R(RAX) | R(RCX) | F, R(RAX) | F, R(RAX) | F),
	RC("shl $3,%rax",		"\x48\xc1\xe0\x03",	R(RAX), R(RAX) | F, R(RAX) | F),
	/* a zero count leaves the flags as they were */
	RC("shl %cl,%rax",		"\x48\xd3\xe0",		R(RAX) | R(RCX), R(RAX) | F, R(RAX)),
	RC("shl $0,%rax",		"\x48\xc1\xe0\x00",	R(RAX), R(RAX) | F, R(RAX)),
	RC("cmovl %ecx,%eax",		"\x0f\x4c\xc1",		R(RCX) | F, R(RAX), 0),
	/* Linux relies on bsf/bsr of 0 leaving the destination unchanged */
	RC("bsf %ecx,%eax",		"\x0f\xbc\xc1",		R(RCX), R(RAX) | F, F),
	RC("mul %rcx",			"\x48\xf7\xe1",		R(RAX) | R(RCX), R(RAX) | R(RDX) | F, R(RAX) | R(RDX) | F),
	RC("cpuid",			"\x0f\xa2",		R(RAX) | R(RCX), R(RAX) | R(RCX) | R(RDX) | R(RBX),
	   R(RAX) | R(RCX) | R(RDX) | R(RBX)),
	RC("rep movsb",			"\xf3\xa4",		R(RCX) | R(RSI) | R(RDI) | F, R(RCX) | R(RSI) | R(RDI), 0),
	/* with rcx == 0 nothing runs, so the flags survive */
	RC("repe cmpsb",		"\xf3\xa6",		R(RCX) | R(RSI) | R(RDI) | F, R(RCX) | F, 0),
	RC("pushfq",			"\x9c",			R(RSP) | F, R(RSP), R(RSP)),
	RC("popfq",			"\x9d",			R(RSP) | F, R(RSP) | F, R(RSP) | F),
	RC("nopl 0(%rax,%rax)",		"\x0f\x1f\x44\x00\x00",	0, 0, 0),
	RC("jmp *%r11",			"\x41\xff\xe3",		R(R11), 0, 0),
	RC("je rel8",			"\x74\x00",		F, 0, 0),
	RC("movq %xmm0,%rax",		"\x66\x48\x0f\x7e\xc0",	0, R(RAX), R(RAX)),
};

static void t_register_sets(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(regs_cases) / sizeof(regs_cases[0]); i++) {
		const struct regs_case *c = &regs_cases[i];
		struct kinstr_x86_insn in;
		int err = kinstr_x86__decode(c->bytes, c->size, A, &in);

		CHECK(err == 0 && in.len == c->size, "%s: err %d len %u", c->name, err, in.len);
		if (err)
			continue;
		CHECK(in.regs_read == c->rd, "%s: read %#x, want %#x", c->name, in.regs_read, c->rd);
		CHECK(in.regs_written == c->wr, "%s: written %#x, want %#x", c->name,
		      in.regs_written, c->wr);
		CHECK(in.regs_killed == c->kill, "%s: killed %#x, want %#x", c->name,
		      in.regs_killed, c->kill);
		CHECK((in.regs_killed & ~in.regs_written) == 0, "%s: kills what it does not write",
		      c->name);
	}
}

static void t_errors(void)
{
	struct kinstr_x86_insn in;

	CHECK(kinstr_x86__decode(NULL, 4, A, &in) == -EINVAL, "NULL code");
	CHECK(kinstr_x86__decode("\x90", 1, A, NULL) == -EINVAL, "NULL insn");
	CHECK(kinstr_x86__decode("\x90", 0, A, &in) == -ENODATA, "empty buffer");
	/* call rel32 cut after 3 bytes */
	CHECK(DEC("\xe8\x00\x00", &in) == -ENODATA, "truncated call");
	CHECK(DEC("\x48", &in) == -ENODATA, "lone REX");
	/* far jmp ptr16:32 and push %es do not exist in 64-bit mode */
	CHECK(DEC("\xea\x00\x00\x00\x00\x10\x00", &in) == -EILSEQ, "ljmp ptr16:32");
	CHECK(DEC("\x06", &in) == -EILSEQ, "push %%es");
	/* 16 bytes: one prefix too many */
	CHECK(DEC("\x66\x66\x66\x66\x66\x66\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00", &in) == -EILSEQ,
	      "16-byte instruction");
	/* lock on a register destination */
	CHECK(DEC("\xf0\x01\xc0", &in) == -EILSEQ, "lock add %%eax,%%eax");
}

static void t_names_and_format(void)
{
	struct kinstr_x86_insn in;
	char buf[96];

	CHECK(DEC("\xe9\xfb\xff\xff\xff", &in) == 0, "decode");
	CHECK(!strcmp(kinstr_x86__mnemonic_name(&in), "jmp"), "%s", kinstr_x86__mnemonic_name(&in));
	CHECK(kinstr_x86__format(&in, buf, sizeof(buf)) == 0, "format");
	CHECK(strstr(buf, "jmp") && strstr(buf, "FFFFFFFF81000000"), "%s", buf);
	CHECK(!strcmp(kinstr_x86__reg_name(KINSTR_X86_R12), "r12"), "r12");
	CHECK(!strcmp(kinstr_x86__reg_name(KINSTR_X86_FLAGS), "flags"), "flags");
	CHECK(!strcmp(kinstr_x86__reg_name(99), "?"), "out of range");
}

/*
 * Xeon Phi (KNC) encodings Zydis decodes outside its KNC mode (jknzd is VEX.0F 85: a jcc to
 * the eye) are #UD on every x86-64 CPU: undecodable for the decoder and for the relocator alike.
 */
static void t_knc_is_not_code(void)
{
	static const unsigned char jknzd[] = { 0xc5, 0xe4, 0x85, 0x36, 0x94, 0xeb, 0xdd, 0xc3 };
	struct kinstr_x86_insn x;
	struct kinstr_reloc r;
	unsigned char out[64];

	CHECK(kinstr_x86__decode(jknzd, sizeof(jknzd), 0xffffffff81000000ull, &x) == -EILSEQ,
	      "jknzd decoded as %s", kinstr_x86__mnemonic_name(&x));
	CHECK(kinstr_reloc__run(&r, jknzd, 7, 0xffffffff81000000ull, out, sizeof(out), 0xffffffffc0000000ull) ==
	      -EILSEQ && r.reason == KINSTR_RELOC_UNDECODABLE, "relocated: reason %d", r.reason);
}

int main(void)
{
	RUN(t_lengths_flows_and_targets);
	RUN(t_knc_is_not_code);
	RUN(t_falls_through);
	RUN(t_rip_relative);
	RUN(t_gs_store64);
	RUN(t_register_sets);
	RUN(t_errors);
	RUN(t_names_and_format);
	return check_done();
}
