/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where control leaves the straight line, read from what Zydis itself says of an instruction, not
 * from kinstr_x86's flow classes, so that the two can disagree: the oracle of the fuzz target's
 * block check (fuzz_analyze.c) and of test_rules.c's walk over every encoding. Control leaves where
 * the instruction writes RIP, EIP or IP (Zydis lists it as an operand written, or conditionally
 * written: jmp, jcc, loop, jrcxz, ret, iret, sysret, rsm, uiret, far calls and jumps), has a relative
 * target, or is in one of Zydis's branch categories (conditional, unconditional, return: xend and
 * xabort list no RIP operand), except
 *  - a near call, which comes back (the caller decides whether it enters its own function);
 *  - the instructions that trap and come back to the next one (syscall, sysenter, int n, into,
 *    int1): the kernel resumes after them;
 *  - xabort: outside a transaction a nop; inside one the abort rolls back all the block did and
 *    goes where xbegin's edge already goes;
 * and besides, where the kernel's conventions say so: ud2 (BUG and WARN) and int3 (padding or a
 * breakpoint) leave.
 */
#ifndef KINSTR_TESTS_ORACLE_FLOW_H
#define KINSTR_TESTS_ORACLE_FLOW_H

#include <Zydis/Zydis.h>

enum oracle_flow { ORACLE_NEXT, ORACLE_LEAVES, ORACLE_NEAR_CALL };

static inline enum oracle_flow oracle_flow(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops)
{
	unsigned int i;
	int writes_pc = 0;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_INT3:
		return ORACLE_LEAVES;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_XABORT:
		return ORACLE_NEXT;
	default:
		break;
	}
	for (i = 0; i < zi->operand_count; i++)
		if ((ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		     (ops[i].reg.value == ZYDIS_REGISTER_RIP || ops[i].reg.value == ZYDIS_REGISTER_EIP ||
		      ops[i].reg.value == ZYDIS_REGISTER_IP) &&	/* sysret to 32-bit code writes eip */
		     (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) ||
		    (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative))
			writes_pc = 1;
	if (zi->meta.category == ZYDIS_CATEGORY_COND_BR || zi->meta.category == ZYDIS_CATEGORY_UNCOND_BR ||
	    zi->meta.category == ZYDIS_CATEGORY_RET)
		writes_pc = 1;
	if (!writes_pc)
		return ORACLE_NEXT;
	if (zi->meta.category == ZYDIS_CATEGORY_CALL && zi->meta.branch_type != ZYDIS_BRANCH_TYPE_FAR)
		return ORACLE_NEAR_CALL;
	return ORACLE_LEAVES;
}

#endif
