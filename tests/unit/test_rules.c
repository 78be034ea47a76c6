// SPDX-License-Identifier: GPL-2.0
/*
 * The rule of what never runs out of line (rules/out_of_line.h), which the module's verifier and
 * the library both apply, walked over its whole domain: every opcode map (legacy, 0f, 0f38,
 * 0f3a), mandatory prefix (none, 66, f3, f2), REX.W and opcode, with every ModRM byte. For each
 * encoding Zydis decodes, three verdicts must agree: the shared rule on the raw bytes (the
 * module's), the library's (kinstr_x86__out_of_line, what site selection refuses), and Zydis's
 * reading of the instruction by meaning, written here independently of the opcode numbers:
 * privileged, a trap or ud, the interrupt flag, a far or system transfer, ret imm16, or a
 * descriptor-table, system or virtualization instruction of groups 6 and 7.
 */
#include <string.h>

#include <Zydis/Zydis.h>

#include <kinstr/x86.h>
#include "rules/out_of_line.h"
#include "rules/flags.h"
#include "rules/symbols.h"
#include "check.h"
#include "../fuzz/oracle_flow.h"

/* Zydis misses lgdt's privilege (it has lidt's); groups 6 and 7 by name, as Zydis 4 decodes them. */
static const ZydisMnemonic by_meaning[] = {
	ZYDIS_MNEMONIC_INT3, ZYDIS_MNEMONIC_INT, ZYDIS_MNEMONIC_INTO, ZYDIS_MNEMONIC_INT1,
	ZYDIS_MNEMONIC_UD0, ZYDIS_MNEMONIC_UD1, ZYDIS_MNEMONIC_UD2,
	ZYDIS_MNEMONIC_CLI, ZYDIS_MNEMONIC_STI, ZYDIS_MNEMONIC_POPF, ZYDIS_MNEMONIC_POPFD, ZYDIS_MNEMONIC_POPFQ,
	ZYDIS_MNEMONIC_IRET, ZYDIS_MNEMONIC_IRETD, ZYDIS_MNEMONIC_IRETQ, ZYDIS_MNEMONIC_SYSCALL,
	ZYDIS_MNEMONIC_SYSENTER, ZYDIS_MNEMONIC_SYSRET, ZYDIS_MNEMONIC_SYSEXIT, ZYDIS_MNEMONIC_RSM, ZYDIS_MNEMONIC_HLT,
	/* group 6 */
	ZYDIS_MNEMONIC_SLDT, ZYDIS_MNEMONIC_STR, ZYDIS_MNEMONIC_LLDT, ZYDIS_MNEMONIC_LTR, ZYDIS_MNEMONIC_VERR,
	ZYDIS_MNEMONIC_VERW,
	/* group 7 */
	ZYDIS_MNEMONIC_SGDT, ZYDIS_MNEMONIC_SIDT, ZYDIS_MNEMONIC_LGDT, ZYDIS_MNEMONIC_LIDT, ZYDIS_MNEMONIC_SMSW,
	ZYDIS_MNEMONIC_LMSW, ZYDIS_MNEMONIC_INVLPG, ZYDIS_MNEMONIC_SWAPGS, ZYDIS_MNEMONIC_RDTSCP,
	ZYDIS_MNEMONIC_MONITOR, ZYDIS_MNEMONIC_MWAIT, ZYDIS_MNEMONIC_MONITORX, ZYDIS_MNEMONIC_MWAITX,
	ZYDIS_MNEMONIC_CLAC, ZYDIS_MNEMONIC_STAC, ZYDIS_MNEMONIC_CLUI, ZYDIS_MNEMONIC_STUI, ZYDIS_MNEMONIC_TESTUI,
	ZYDIS_MNEMONIC_UIRET, ZYDIS_MNEMONIC_XGETBV, ZYDIS_MNEMONIC_XSETBV, ZYDIS_MNEMONIC_XEND,
	ZYDIS_MNEMONIC_XTEST, ZYDIS_MNEMONIC_XSUSLDTRK, ZYDIS_MNEMONIC_XRESLDTRK, ZYDIS_MNEMONIC_ENCLS,
	ZYDIS_MNEMONIC_ENCLU, ZYDIS_MNEMONIC_ENCLV, ZYDIS_MNEMONIC_VMCALL, ZYDIS_MNEMONIC_VMLAUNCH,
	ZYDIS_MNEMONIC_VMRESUME, ZYDIS_MNEMONIC_VMXOFF, ZYDIS_MNEMONIC_VMFUNC, ZYDIS_MNEMONIC_VMRUN,
	ZYDIS_MNEMONIC_VMMCALL, ZYDIS_MNEMONIC_VMLOAD, ZYDIS_MNEMONIC_VMSAVE, ZYDIS_MNEMONIC_STGI,
	ZYDIS_MNEMONIC_CLGI, ZYDIS_MNEMONIC_SKINIT, ZYDIS_MNEMONIC_INVLPGA, ZYDIS_MNEMONIC_INVLPGB,
	ZYDIS_MNEMONIC_TLBSYNC, ZYDIS_MNEMONIC_CLZERO, ZYDIS_MNEMONIC_RDPRU, ZYDIS_MNEMONIC_RDPKRU,
	ZYDIS_MNEMONIC_WRPKRU, ZYDIS_MNEMONIC_SERIALIZE, ZYDIS_MNEMONIC_MCOMMIT, ZYDIS_MNEMONIC_PCONFIG,
	ZYDIS_MNEMONIC_PSMASH, ZYDIS_MNEMONIC_PVALIDATE, ZYDIS_MNEMONIC_RMPADJUST, ZYDIS_MNEMONIC_RMPUPDATE,
	ZYDIS_MNEMONIC_RSTORSSP, ZYDIS_MNEMONIC_SAVEPREVSSP, ZYDIS_MNEMONIC_SETSSBSY, ZYDIS_MNEMONIC_SEAMCALL,
	ZYDIS_MNEMONIC_SEAMOPS, ZYDIS_MNEMONIC_SEAMRET, ZYDIS_MNEMONIC_TDCALL,
};

static int unsafe_by_meaning(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops)
{
	size_t i;

	if (zi->attributes & ZYDIS_ATTRIB_IS_PRIVILEGED)
		return 1;
	if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return 1;
	if (zi->mnemonic == ZYDIS_MNEMONIC_RET && zi->operand_count_visible > 0 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return 1;
	for (i = 0; i < sizeof(by_meaning) / sizeof(by_meaning[0]); i++)
		if (zi->mnemonic == by_meaning[i])
			return 1;
	return 0;
}

static const ZydisOpcodeMap maps[] = {
	ZYDIS_OPCODE_MAP_DEFAULT, ZYDIS_OPCODE_MAP_0F, ZYDIS_OPCODE_MAP_0F38, ZYDIS_OPCODE_MAP_0F3A,
};
static const uint8_t prefixes[] = { 0, 0x66, 0xf3, 0xf2 };

struct walk {
	size_t decoded, unsafe, disagree;
	size_t by_class[KINSTR_OOL_SYSTEM + 1];
	size_t flags_killed, flags_disagree;
	size_t flow_checked, flow_disagree;
};

#define STATUS_FLAGS (ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF | ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_ZF | \
		      ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_OF)

/*
 * rules/flags.h against Zydis: the rule may say "killed" only where Zydis has the instruction write
 * all six status flags and read none; and it must say so for every such add, or, and, sub, xor,
 * cmp and test (the instructions it is about), but for f6/f7 /1: Zydis reads it as test, the
 * manuals leave it undocumented, and the rule stays on the safe side.
 */
static void check_flags_rule(struct walk *w, const ZydisDecodedInstruction *zi, const uint8_t *b)
{
	const ZydisAccessedFlags *f = zi->cpu_flags;
	int rule = kinstr_flags_killed(b, zi->length), meaning = 0, named;

	if (f)
		meaning = ((f->modified | f->set_0 | f->set_1 | f->undefined) & STATUS_FLAGS) == STATUS_FLAGS &&
			  !(f->tested & STATUS_FLAGS);
	named = zi->mnemonic == ZYDIS_MNEMONIC_ADD || zi->mnemonic == ZYDIS_MNEMONIC_OR ||
		zi->mnemonic == ZYDIS_MNEMONIC_AND || zi->mnemonic == ZYDIS_MNEMONIC_SUB ||
		zi->mnemonic == ZYDIS_MNEMONIC_XOR || zi->mnemonic == ZYDIS_MNEMONIC_CMP ||
		zi->mnemonic == ZYDIS_MNEMONIC_TEST;
	w->flags_killed += rule;
	if ((zi->opcode == 0xf6 || zi->opcode == 0xf7) && ((zi->raw.modrm.reg & 7) == 1))
		named = 0;
	if ((rule && !meaning) || (!rule && meaning && named && zi->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)) {
		if (w->flags_disagree++ < 30)
			CHECK(0, "flags rule: %02x %02x %02x %02x (mnemonic %s): rule %d, Zydis %d", b[0], b[1], b[2],
			      b[3], ZydisMnemonicGetString(zi->mnemonic), rule, meaning);
	}
}

/* Build [prefix][rex.w][escape] op modrm 00..., decode, compare. */
static void walk_one(ZydisDecoder *dec, struct walk *w, unsigned int mi, uint8_t pfx, int rexw, unsigned int op,
		     unsigned int modrm)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	struct kinstr_x86_insn x;
	uint8_t b[KINSTR_X86_MAX_INSN_LEN] = { 0 };
	unsigned int n = 0;
	int rule, lib, meaning;

	if (pfx)
		b[n++] = pfx;
	if (rexw)
		b[n++] = 0x48;
	if (mi >= 1)
		b[n++] = 0x0f;
	if (mi == 2)
		b[n++] = 0x38;
	if (mi == 3)
		b[n++] = 0x3a;
	b[n++] = (uint8_t)op;
	b[n++] = (uint8_t)modrm;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, b, sizeof(b), &zi, ops)))
		return;
	/* the encoding meant: not a prefix or escape read as the opcode, not VEX/EVEX */
	if (zi.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY || zi.opcode_map != maps[mi] || zi.opcode != op)
		return;
	w->decoded++;
	check_flags_rule(w, &zi, b);
	rule = kinstr_ool_check(b, zi.length);
	meaning = unsafe_by_meaning(&zi, ops);
	if (kinstr_x86__decode(b, sizeof(b), 0x1000, &x)) {
		CHECK(0, "the library does not decode what Zydis does: %02x %02x %02x %02x", b[0], b[1], b[2], b[3]);
		return;
	}
	lib = kinstr_x86__out_of_line(&x);
	/* where control goes: kinstr_x86's flow classes against Zydis's reading (oracle_flow.h) */
	{
		enum oracle_flow of = oracle_flow(&zi, ops);
		int leaves = !(x.flow == KINSTR_X86_FLOW_NEXT || x.flow == KINSTR_X86_FLOW_CALL ||
			       x.flow == KINSTR_X86_FLOW_CALL_IND);

		w->flow_checked++;
		if (of == ORACLE_NEAR_CALL ? !(x.flow == KINSTR_X86_FLOW_CALL || x.flow == KINSTR_X86_FLOW_CALL_IND)
					   : leaves != (of == ORACLE_LEAVES)) {
			if (w->flow_disagree++ < 30)
				CHECK(0, "flow: %02x %02x %02x %02x (mnemonic %s): library flow %u, Zydis %s", b[0], b[1],
				      b[2], b[3], ZydisMnemonicGetString(zi.mnemonic), x.flow,
				      of == ORACLE_LEAVES ? "leaves" : of == ORACLE_NEAR_CALL ? "near call" : "next");
		}
	}
	if (rule) {
		w->unsafe++;
		w->by_class[rule]++;
	}
	if (!!rule != meaning || !!lib != meaning) {
		char txt[96] = "";

		kinstr_x86__format(&x, txt, sizeof(txt));
		if (w->disagree++ < 30)
			CHECK(0, "map %u prefix %02x rex.w %d op %02x modrm %02x (%s): rule %d, library %d, by meaning %d",
			      mi, pfx, rexw, op, modrm, txt, rule, lib, meaning);
	}
}

static void t_every_encoding(void)
{
	struct walk w = { 0 };
	ZydisDecoder dec;
	unsigned int mi, pi, op, modrm;
	int rexw;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (mi = 0; mi < 4; mi++)
		for (pi = 0; pi < sizeof(prefixes); pi++)
			for (rexw = 0; rexw <= 1; rexw++)
				for (op = 0; op < 256; op++)
					for (modrm = 0; modrm < 256; modrm++)
						walk_one(&dec, &w, mi, prefixes[pi], rexw, op, modrm);
	CHECK(w.disagree == 0, "%zu encodings disagree", w.disagree);
	/* the walk reached the instructions it is about */
	CHECK(w.decoded > 100000, "only %zu encodings decoded", w.decoded);
	CHECK(w.flags_disagree == 0, "%zu encodings disagree on the flags rule", w.flags_disagree);
	CHECK(w.flow_disagree == 0, "%zu encodings disagree on where control goes", w.flow_disagree);
	CHECK(w.flags_killed > 10000, "the flags rule said killed only %zu times", w.flags_killed);
	CHECK(w.by_class[KINSTR_OOL_TRAP] && w.by_class[KINSTR_OOL_UD] && w.by_class[KINSTR_OOL_IF] &&
	      w.by_class[KINSTR_OOL_LEAVES] && w.by_class[KINSTR_OOL_SYSTEM], "a class was never reached");
	printf("     %zu kill the status flags (rules/flags.h)\n", w.flags_killed);
	printf("     %zu encodings decoded, %zu never out of line (trap %zu, ud %zu, if %zu, leaves %zu, "
	       "system %zu)\n", w.decoded, w.unsafe, w.by_class[KINSTR_OOL_TRAP], w.by_class[KINSTR_OOL_UD],
	       w.by_class[KINSTR_OOL_IF], w.by_class[KINSTR_OOL_LEAVES], w.by_class[KINSTR_OOL_SYSTEM]);
}

/*
 * What the walk does not vary: segment, address-size and several prefixes at once, REX before an
 * escape, VEX, truncated bytes, and the encodings invalid in 64-bit mode.
 */
static void t_prefix_forms(void)
{
	static const struct {
		const char *what;
		const char *b;
		unsigned int len;
		int want;
	} c[] = {
		{ "cs wrmsr", "\x2e\x0f\x30", 3, KINSTR_OOL_SYSTEM },
		{ "66 f3 0f 78 (f3 wins over 66: vmread has none)", "\x66\xf3\x0f\x78\xc0", 5, KINSTR_OOL_SYSTEM },
		{ "66 0f 78 /0 ib (extrq)", "\x66\x0f\x78\xc0\x01\x02", 6, KINSTR_OOL_OK },
		{ "addr32 lock rex.w iretq", "\x67\x48\xcf", 3, KINSTR_OOL_LEAVES },
		{ "rex then 0f 01 f8 (swapgs)", "\x41\x0f\x01\xf8", 4, KINSTR_OOL_SYSTEM },
		{ "vex (c5) is never one of them", "\xc5\xf8\x77", 3, KINSTR_OOL_OK },
		{ "ff /3 (lcall *m)", "\xff\x18", 2, KINSTR_OOL_LEAVES },
		{ "ff /2 (call *m) is the indirect-call rule's", "\xff\x10", 2, KINSTR_OOL_OK },
		{ "a truncated escape", "\x0f", 1, KINSTR_OOL_OK },
		/* invalid in 64-bit mode, so outside the walk (Zydis refuses them); the kernel's decoder
		 * only marks them (INAT_INV64) and gives them a length: the rule must still refuse */
		{ "into", "\xce", 1, KINSTR_OOL_TRAP },
		{ "ljmp ptr16:32", "\xea\x00\x00\x00\x00\x10\x00", 7, KINSTR_OOL_LEAVES },
		{ "lcall ptr16:32", "\x9a\x00\x00\x00\x00\x10\x00", 7, KINSTR_OOL_LEAVES },
		{ "nothing", "", 0, KINSTR_OOL_OK },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int got = kinstr_ool_check((const uint8_t *)c[i].b, c[i].len);

		CHECK(got == c[i].want, "%s: %d, not %d", c[i].what, got, c[i].want);
	}
}

/*
 * The name rules (rules/symbols.h) against what a kernel's names look like: the prefixes only,
 * whole, at the start, in that case; never a name that merely holds them or stops short.
 */
static void t_symbol_rules(void)
{
	static const struct { const char *name; int cfi, sct; } c[] = {
		{ "__cfi_vfs_read", 1, 0 }, { "__pfx_vfs_read", 1, 0 }, { "__pfx_", 1, 0 },
		{ "__SCT__tp_func_sched_switch", 0, 1 }, { "__SCT__preempt_schedule", 0, 1 },
		{ "__SCK__tp_func_sched_switch", 0, 0 }, { "__SCT_", 0, 0 }, { "__sct__x", 0, 0 },
		{ "_SCT__x", 0, 0 }, { "x__SCT__y", 0, 0 }, { "__pf_x", 0, 0 }, { "__cfi", 0, 0 },
		{ "vfs_read", 0, 0 }, { "__static_call_return0", 0, 0 }, { "__traceiter_sched_switch", 0, 0 },
		{ "", 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		CHECK(kinstr_rule_cfi_symbol(c[i].name) == c[i].cfi, "cfi rule on '%s'", c[i].name);
		CHECK(kinstr_rule_sc_trampoline(c[i].name) == c[i].sct, "trampoline rule on '%s'", c[i].name);
	}
}

int main(void)
{
	RUN(t_symbol_rules);
	RUN(t_every_encoding);
	RUN(t_prefix_forms);
	return check_done();
}
