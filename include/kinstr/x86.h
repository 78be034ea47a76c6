/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * x86-64 instruction decoding for libkinstr: a thin layer over Zydis that answers the questions
 * the CFG, the liveness pass, site selection and the relocator ask about one instruction.
 * Nothing here allocates; the caller owns every struct.
 */
#ifndef KINSTR_X86_H
#define KINSTR_X86_H

#include <stddef.h>
#include <stdint.h>

#include <uapi/linux/kinstr.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KINSTR_X86_MAX_INSN_LEN 15

/*
 * Register numbers are the hardware encodings, so bit n of a register set is GPR n: the ABI's
 * enum kinstr_reg (include/uapi/linux/kinstr.h) holds that order once; the GPRs here are its.
 */
enum kinstr_x86_reg {
	KINSTR_X86_RAX = KINSTR_REG_RAX, KINSTR_X86_RCX = KINSTR_REG_RCX, KINSTR_X86_RDX = KINSTR_REG_RDX,
	KINSTR_X86_RBX = KINSTR_REG_RBX, KINSTR_X86_RSP = KINSTR_REG_RSP, KINSTR_X86_RBP = KINSTR_REG_RBP,
	KINSTR_X86_RSI = KINSTR_REG_RSI, KINSTR_X86_RDI = KINSTR_REG_RDI, KINSTR_X86_R8 = KINSTR_REG_R8,
	KINSTR_X86_R9 = KINSTR_REG_R9, KINSTR_X86_R10 = KINSTR_REG_R10, KINSTR_X86_R11 = KINSTR_REG_R11,
	KINSTR_X86_R12 = KINSTR_REG_R12, KINSTR_X86_R13 = KINSTR_REG_R13, KINSTR_X86_R14 = KINSTR_REG_R14,
	KINSTR_X86_R15 = KINSTR_REG_R15,
	/*
	 * The six status flags (CF PF AF ZF SF OF) as one unit: what an inserted add/inc/cmp
	 * would clobber. DF/IF/AC and the other system flags are not tracked.
	 */
	KINSTR_X86_FLAGS,
	KINSTR_X86_NR_REGS,
};
#ifndef __cplusplus
_Static_assert(KINSTR_X86_R15 == 15 && KINSTR_X86_FLAGS == 16, "the GPRs are the 16 hardware encodings");
#endif

#define KINSTR_X86_REG(r)	(1u << (r))
#define KINSTR_X86_REGS_GPR	0xffffu
#define KINSTR_X86_REGS_ALL	(KINSTR_X86_REGS_GPR | KINSTR_X86_REG(KINSTR_X86_FLAGS))

/* How control leaves an instruction. */
enum kinstr_x86_flow {
	KINSTR_X86_FLOW_NEXT,		/* falls through only (includes hlt, syscall, int n) */
	KINSTR_X86_FLOW_JMP,		/* direct jmp rel8/rel32: target only */
	KINSTR_X86_FLOW_JCC,		/* direct jcc, loop*, jrcxz/jecxz: target or next */
	KINSTR_X86_FLOW_CALL,		/* direct call rel32: target, then next */
	KINSTR_X86_FLOW_JMP_IND,	/* jmp via register or memory */
	KINSTR_X86_FLOW_CALL_IND,	/* call via register or memory, then next */
	KINSTR_X86_FLOW_RET,		/* near ret, ret imm16 */
	KINSTR_X86_FLOW_EXIT,		/* iret, sysret, sysexit, far jmp/call/ret: leaves for unknown code */
	KINSTR_X86_FLOW_INT3,		/* padding, SLS guard, or someone else's breakpoint */
	KINSTR_X86_FLOW_UD2,		/* BUG()/WARN(): WARN resumes at next */
};

/* kinstr_x86_insn.attr */
enum kinstr_x86_attr {
	KINSTR_X86_A_BRANCH_REL8 = 1u << 0,	/* direct branch with an 8-bit displacement */
	KINSTR_X86_A_LOOP	 = 1u << 1,	/* loop/loope/loopne/jrcxz/jecxz: rel8 only, no rel32 form */
	KINSTR_X86_A_RIP_REL	 = 1u << 2,	/* has a RIP-relative memory operand (rip_* valid) */
	KINSTR_X86_A_LOCK	 = 1u << 3,
	KINSTR_X86_A_REP	 = 1u << 4,	/* rep/repe/repne prefix on a string instruction */
	KINSTR_X86_A_NOP	 = 1u << 5,	/* architectural no-op (nop, nopl/nopw with any operand) */
	KINSTR_X86_A_PRIVILEGED	 = 1u << 6,	/* CPL0-only */
	KINSTR_X86_A_ENDBR	 = 1u << 7,	/* endbr64 */
	/* far jmp through memory (ljmp *m, FF /5): leaves (FLOW_EXIT), and an indirect jmp for the
	 * rules, as for the module's verifier and kprobes' insn_is_indirect_jump() */
	KINSTR_X86_A_FAR_JMP	 = 1u << 8,
	/*
	 * A system instruction by opcode, whatever Zydis's privilege data says (it misses lgdt): the
	 * SYSTEM class of rules/out_of_line.h, which the module's verifier applies too (groups 6 and
	 * 7, cr/dr, msr, cache, VMX, hlt, ...). Never run out of line.
	 */
	KINSTR_X86_A_SYSTEM	 = 1u << 9,
};

struct kinstr_x86_insn {
	uint64_t addr;		/* runtime address it was decoded at */
	uint64_t target;	/* FLOW_JMP/JCC/CALL: absolute branch target */
	uint64_t rip_target;	/* A_RIP_REL: absolute address the operand refers to */
	uint16_t mnemonic;	/* a ZydisMnemonic; see kinstr_x86__mnemonic_name() */
	uint8_t category;	/* a ZydisInstructionCategory */
	uint8_t len;
	uint8_t flow;		/* enum kinstr_x86_flow */
	uint8_t branch_off;	/* direct branch: offset of its rel8/rel32 field in the insn */
	uint8_t branch_size;	/* ... and its size in bytes (1 or 4) */
	uint8_t disp_off;	/* A_RIP_REL: offset of the disp32 in the insn */
	uint8_t disp_size;	/* ... and its size (always 4 for RIP-relative) */
	uint8_t imm_off;	/* immediate after the displacement: offset, 0 if none */
	uint8_t imm_size;	/* ... and its size, 0 if none */
	uint8_t bytes[KINSTR_X86_MAX_INSN_LEN];
	uint16_t attr;		/* enum kinstr_x86_attr */
	/*
	 * Register sets (KINSTR_X86_REG bits) including implicit operands and address registers.
	 * written: any write, partial or conditional. killed: writes that fully replace the old
	 * value on every path (64/32-bit GPR writes, all six status flags), i.e. what ends a
	 * live range. Zeroing idioms (xor/sub reg,reg) do not read their register.
	 */
	uint32_t regs_read;
	uint32_t regs_written;
	uint32_t regs_killed;
};

/*
 * Decode the one instruction at code[0..len) as if it were at runtime address addr.
 * Returns 0, -EINVAL (bad arguments), -ENODATA (len ends inside the instruction) or
 * -EILSEQ (not a valid x86-64 instruction). insn is unspecified on error.
 */
int kinstr_x86__decode(const void *code, size_t len, uint64_t addr, struct kinstr_x86_insn *insn);

/* Lower-case mnemonic, e.g. "jmp"; static storage. */
const char *kinstr_x86__mnemonic_name(const struct kinstr_x86_insn *insn);

/* Lower-case register name for a KINSTR_X86_* number ("rax" .. "r15", "flags"). */
const char *kinstr_x86__reg_name(unsigned int reg);

/*
 * Is it a 64-bit store of a register to a %gs-relative address (a per-CPU variable: the kernel's
 * `mov %reg, %gs:disp32(%rip)`, whose sum wraps to the variable's per-CPU offset, `mov %reg,
 * %gs:disp32` or `mov %rax, %gs:moffs64`)? 1 with *addr set, else 0.
 */
int kinstr_x86__gs_store64(const struct kinstr_x86_insn *insn, uint64_t *addr);

/* Does control reach the next instruction (FLOW_NEXT/JCC/CALL/CALL_IND/UD2)? */
int kinstr_x86__falls_through(const struct kinstr_x86_insn *insn);

/*
 * Why the instruction may never run out of line (in a probe's slot), as a KINSTR_OOL_* class of
 * rules/out_of_line.h (the module's rule), or 0. Indirect calls are a rule of their own.
 */
int kinstr_x86__out_of_line(const struct kinstr_x86_insn *insn);

/* Intel-syntax text of the instruction into buf; returns 0 or negative errno. */
int kinstr_x86__format(const struct kinstr_x86_insn *insn, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
