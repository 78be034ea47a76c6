// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* One x86-64 instruction, decoded by Zydis and reduced to what kinstr's analyses need. */
#include <errno.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <kinstr/x86.h>
#include "rules/out_of_line.h"
#include "lib/isa/zydis_rules.h"

#define STATUS_FLAGS (ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF | ZYDIS_CPUFLAG_AF | \
		      ZYDIS_CPUFLAG_ZF | ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_OF)
#define FLAGS_BIT KINSTR_X86_REG(KINSTR_X86_FLAGS)

static const char *const reg_names[KINSTR_X86_NR_REGS] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "flags",
};

const char *kinstr_x86__reg_name(unsigned int reg)
{
	return reg < KINSTR_X86_NR_REGS ? reg_names[reg] : "?";
}

const char *kinstr_x86__mnemonic_name(const struct kinstr_x86_insn *insn)
{
	const char *s = ZydisMnemonicGetString((ZydisMnemonic)insn->mnemonic);

	return s ? s : "?";
}

int kinstr_x86__gs_store64(const struct kinstr_x86_insn *insn, uint64_t *addr)
{
	const uint8_t *b = insn->bytes;
	unsigned int i = 0, rex = 0;
	bool gs = false;

	for (; i < insn->len && (b[i] == 0x65 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x36 ||
				 b[i] == 0x64); i++)
		gs = b[i] == 0x65 || (gs && b[i] != 0x64);	/* the last segment prefix wins */
	if (i < insn->len && (b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (!gs || !(rex & 8) || i >= insn->len)
		return 0;
	if (b[i] == 0x89 && i + 6 <= insn->len && (b[i + 1] & 0xc7) == 0x05) {
		/*
		 * mov r64, %gs:disp32(%rip): ModRM mod 00 rm 101. The kernel's per-CPU accesses: the
		 * sum wraps to the variable's offset in the per-CPU area.
		 */
		int32_t d = (int32_t)((uint32_t)b[i + 2] | (uint32_t)b[i + 3] << 8 | (uint32_t)b[i + 4] << 16 |
				      (uint32_t)b[i + 5] << 24);

		*addr = insn->addr + insn->len + (uint64_t)(int64_t)d;
		return 1;
	}
	if (b[i] == 0x89 && i + 7 <= insn->len && (b[i + 1] & 0xc7) == 0x04 && b[i + 2] == 0x25 && !(rex & 2)) {
		/* mov r64, %gs:disp32: ModRM mod 00 rm 100, SIB without base or index */
		int32_t d = (int32_t)((uint32_t)b[i + 3] | (uint32_t)b[i + 4] << 8 | (uint32_t)b[i + 5] << 16 |
				      (uint32_t)b[i + 6] << 24);

		*addr = (uint64_t)(int64_t)d;
		return 1;
	}
	if (b[i] == 0xa3 && i + 9 <= insn->len) {	/* mov %rax, %gs:moffs64 */
		uint64_t a = 0;
		int k;

		for (k = 8; k >= 1; k--)
			a = a << 8 | b[i + k];
		*addr = a;
		return 1;
	}
	return 0;
}

int kinstr_x86__falls_through(const struct kinstr_x86_insn *insn)
{
	switch (insn->flow) {
	case KINSTR_X86_FLOW_NEXT:
	case KINSTR_X86_FLOW_JCC:
	case KINSTR_X86_FLOW_CALL:
	case KINSTR_X86_FLOW_CALL_IND:
	case KINSTR_X86_FLOW_UD2:
		return 1;
	default:
		return 0;
	}
}

static void decoder_init(ZydisDecoder *dec)
{
	/* 64-bit, Intel's branch semantics (66-prefixed near branches keep rel32), as the kernel */
	ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

/* GPR number 0..15 of any 8/16/32/64-bit GPR, or -1. */
static int gpr_num(ZydisRegister reg)
{
	switch (ZydisRegisterGetClass(reg)) {
	case ZYDIS_REGCLASS_GPR8:
	case ZYDIS_REGCLASS_GPR16:
	case ZYDIS_REGCLASS_GPR32:
	case ZYDIS_REGCLASS_GPR64:
		return ZydisRegisterGetId(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
									   reg));
	default:
		return -1;
	}
}

static int is_flags_reg(ZydisRegister reg)
{
	return ZydisRegisterGetClass(reg) == ZYDIS_REGCLASS_FLAGS;
}

static void classify_flow(struct kinstr_x86_insn *insn, const ZydisDecodedInstruction *zi,
			  const ZydisDecodedOperand *ops)
{
	const ZydisDecodedOperand *op0 = zi->operand_count ? &ops[0] : NULL;
	int far = zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	int direct = op0 && op0->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && op0->imm.is_relative;

	insn->flow = KINSTR_X86_FLOW_NEXT;
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		if (far) {
			insn->flow = KINSTR_X86_FLOW_EXIT;
			insn->attr |= KINSTR_X86_A_FAR_JMP;
		} else
			insn->flow = direct ? KINSTR_X86_FLOW_JMP : KINSTR_X86_FLOW_JMP_IND;
		break;
	case ZYDIS_MNEMONIC_CALL:
		if (far)
			insn->flow = KINSTR_X86_FLOW_EXIT;
		else
			insn->flow = direct ? KINSTR_X86_FLOW_CALL : KINSTR_X86_FLOW_CALL_IND;
		break;
	case ZYDIS_MNEMONIC_RET:
		insn->flow = far ? KINSTR_X86_FLOW_EXIT : KINSTR_X86_FLOW_RET;
		break;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_UIRET:	/* a user interrupt's return */
	case ZYDIS_MNEMONIC_RSM:	/* back from system management mode */
		insn->flow = KINSTR_X86_FLOW_EXIT;
		break;
	case ZYDIS_MNEMONIC_INT3:
		insn->flow = KINSTR_X86_FLOW_INT3;
		break;
	case ZYDIS_MNEMONIC_UD2:
		insn->flow = KINSTR_X86_FLOW_UD2;
		break;
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JCXZ:
		insn->attr |= KINSTR_X86_A_LOOP;
		insn->flow = KINSTR_X86_FLOW_JCC;
		break;
	default:
		if (zi->meta.category == ZYDIS_CATEGORY_COND_BR)
			insn->flow = KINSTR_X86_FLOW_JCC;
		break;
	}

	if (insn->flow != KINSTR_X86_FLOW_JMP && insn->flow != KINSTR_X86_FLOW_JCC &&
	    insn->flow != KINSTR_X86_FLOW_CALL)
		return;
	/* every x86-64 jcc is relative; anything else is nothing we can follow */
	if (!direct) {
		insn->flow = KINSTR_X86_FLOW_EXIT;
		return;
	}
	insn->target = insn->addr + zi->length + (uint64_t)op0->imm.value.s;
	insn->branch_off = zi->raw.imm[0].offset;
	insn->branch_size = zi->raw.imm[0].size / 8;
	if (insn->branch_size == 1)
		insn->attr |= KINSTR_X86_A_BRANCH_REL8;
}

static void find_rip_operand(struct kinstr_x86_insn *insn, const ZydisDecodedInstruction *zi,
			     const ZydisDecodedOperand *ops)
{
	unsigned int i;

	for (i = 0; i < zi->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.base != ZYDIS_REGISTER_RIP)
			continue;
		insn->attr |= KINSTR_X86_A_RIP_REL;
		insn->disp_off = zi->raw.disp.offset;
		insn->disp_size = zi->raw.disp.size / 8;
		/* relative to the end of the whole instruction, immediate included */
		insn->rip_target = insn->addr + zi->length + (uint64_t)zi->raw.disp.value;
		if (zi->raw.imm[0].size && zi->raw.imm[0].offset > zi->raw.disp.offset) {
			insn->imm_off = zi->raw.imm[0].offset;
			insn->imm_size = zi->raw.imm[0].size / 8;
		}
		return;
	}
}

static int is_zero_idiom(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops)
{
	if (zi->mnemonic != ZYDIS_MNEMONIC_XOR && zi->mnemonic != ZYDIS_MNEMONIC_SUB)
		return 0;
	return zi->operand_count_visible == 2 &&
	       ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	       ops[0].reg.value == ops[1].reg.value &&
	       gpr_num(ops[0].reg.value) >= 0;
}

/*
 * A shift or rotate by zero leaves the flags alone, so only a nonzero immediate count
 * (or the implicit count 1 of the D0/D1 forms) redefines them.
 */
static int shift_count_nonzero(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops)
{
	unsigned int i, mask = zi->operand_width == 64 ? 0x3f : 0x1f;

	for (i = 1; i < zi->operand_count_visible; i++) {
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			return (ops[i].imm.value.u & mask) != 0;
	}
	return 0;
}

/* Can the instruction, although it lists all status flags as written, leave them unchanged? */
static int flags_may_survive(const struct kinstr_x86_insn *insn, const ZydisDecodedInstruction *zi,
			     const ZydisDecodedOperand *ops)
{
	/* rep cmps/scas with rcx == 0 execute no iteration */
	if (insn->attr & KINSTR_X86_A_REP)
		return 1;
	if (zi->meta.category == ZYDIS_CATEGORY_SHIFT || zi->meta.category == ZYDIS_CATEGORY_ROTATE)
		return !shift_count_nonzero(zi, ops);
	return 0;
}

static void collect_regs(struct kinstr_x86_insn *insn, const ZydisDecodedInstruction *zi,
			 const ZydisDecodedOperand *ops)
{
	uint32_t rd = 0, wr = 0, kill = 0;
	unsigned int i;
	int zero_idiom;

	/* nopl 0x0(%rax,%rax,1) computes no address */
	if (insn->attr & KINSTR_X86_A_NOP)
		return;
	zero_idiom = is_zero_idiom(zi, ops);

	for (i = 0; i < zi->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		int r;

		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			/* address registers are read whatever the operand's action */
			r = gpr_num(op->mem.base);
			if (r >= 0)
				rd |= KINSTR_X86_REG(r);
			r = gpr_num(op->mem.index);
			if (r >= 0)
				rd |= KINSTR_X86_REG(r);
			continue;
		}
		if (op->type != ZYDIS_OPERAND_TYPE_REGISTER)
			continue;
		if (is_flags_reg(op->reg.value)) {
			/* pushf/popf/sahf-style access to the flags register as a whole */
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				rd |= FLAGS_BIT;
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				wr |= FLAGS_BIT;
			continue;
		}
		r = gpr_num(op->reg.value);
		if (r < 0)
			continue;
		if ((op->actions & ZYDIS_OPERAND_ACTION_MASK_READ) && !zero_idiom)
			rd |= KINSTR_X86_REG(r);
		if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) {
			ZydisRegisterClass c = ZydisRegisterGetClass(op->reg.value);

			wr |= KINSTR_X86_REG(r);
			/* 8/16-bit writes merge; 32-bit writes zero-extend */
			if ((op->actions & ZYDIS_OPERAND_ACTION_WRITE) &&
			    (c == ZYDIS_REGCLASS_GPR64 || c == ZYDIS_REGCLASS_GPR32))
				kill |= KINSTR_X86_REG(r);
		}
	}

	/* Linux relies on AMD's promise that bsf/bsr of zero leave the destination alone */
	if (zi->mnemonic == ZYDIS_MNEMONIC_BSF || zi->mnemonic == ZYDIS_MNEMONIC_BSR)
		kill &= ~(wr & KINSTR_X86_REGS_GPR);

	if (zi->cpu_flags) {
		const ZydisAccessedFlags *f = zi->cpu_flags;
		uint32_t defs = (f->modified | f->set_0 | f->set_1 | f->undefined) & STATUS_FLAGS;

		if (f->tested & STATUS_FLAGS)
			rd |= FLAGS_BIT;
		if (defs)
			wr |= FLAGS_BIT;
		if (defs == STATUS_FLAGS && !flags_may_survive(insn, zi, ops))
			kill |= FLAGS_BIT;
	}

	insn->regs_read = rd;
	insn->regs_written = wr;
	insn->regs_killed = kill;
}

int kinstr_x86__decode(const void *code, size_t len, uint64_t addr, struct kinstr_x86_insn *insn)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisDecoder dec;
	ZyanStatus st;

	if (!code || !insn)
		return -EINVAL;
	if (!len)
		return -ENODATA;
	decoder_init(&dec);
	st = ZydisDecoderDecodeFull(&dec, code, len, &zi, ops);
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return -ENODATA;
	if (!ZYAN_SUCCESS(st) || !kinstr_zydis__is_insn(&zi))
		return -EILSEQ;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->len = zi.length;
	insn->mnemonic = (uint16_t)zi.mnemonic;
	insn->category = (uint8_t)zi.meta.category;
	memcpy(insn->bytes, code, zi.length);
	if (zi.attributes & ZYDIS_ATTRIB_HAS_LOCK)
		insn->attr |= KINSTR_X86_A_LOCK;
	if (zi.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE))
		insn->attr |= KINSTR_X86_A_REP;
	if (zi.attributes & ZYDIS_ATTRIB_IS_PRIVILEGED)
		insn->attr |= KINSTR_X86_A_PRIVILEGED;
	if (kinstr_ool_check(code, zi.length) == KINSTR_OOL_SYSTEM)
		insn->attr |= KINSTR_X86_A_SYSTEM;
	if (zi.mnemonic == ZYDIS_MNEMONIC_NOP)
		insn->attr |= KINSTR_X86_A_NOP;
	if (zi.mnemonic == ZYDIS_MNEMONIC_ENDBR64)
		insn->attr |= KINSTR_X86_A_ENDBR;

	classify_flow(insn, &zi, ops);
	find_rip_operand(insn, &zi, ops);
	collect_regs(insn, &zi, ops);
	return 0;
}

/*
 * Why this instruction may not run out of line, or 0: the rule the module's verifier applies
 * (rules/out_of_line.h), then Zydis's privilege data and flow as a second opinion, which
 * tests/unit/test_rules.c shows adds nothing over every encoding it walks.
 */
int kinstr_x86__out_of_line(const struct kinstr_x86_insn *insn)
{
	enum kinstr_ool r = kinstr_ool_check(insn->bytes, insn->len);

	if (r != KINSTR_OOL_OK)
		return r;
	if (insn->attr & KINSTR_X86_A_PRIVILEGED)
		return KINSTR_OOL_SYSTEM;
	if (insn->flow == KINSTR_X86_FLOW_EXIT)
		return KINSTR_OOL_LEAVES;
	return KINSTR_OOL_OK;
}

int kinstr_x86__format(const struct kinstr_x86_insn *insn, char *buf, size_t size)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisFormatter fmt;
	ZydisDecoder dec;

	if (!insn || !buf || !size)
		return -EINVAL;
	decoder_init(&dec);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, insn->bytes, insn->len, &zi, ops)))
		return -EILSEQ;
	if (!ZYAN_SUCCESS(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL)))
		return -EINVAL;
	if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &zi, ops, zi.operand_count_visible,
							  buf, size, insn->addr, NULL)))
		return -ENOSPC;
	return 0;
}
