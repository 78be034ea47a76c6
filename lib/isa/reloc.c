// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Relocation of displaced instructions (see include/kinstr/reloc.h for the rules).
 *
 * Three passes over at most KINSTR_RELOC_MAX_INSNS instructions: decode and classify (which
 * fixes every new length, since branches are always emitted in their rel32 form), lay out,
 * then resolve targets and emit. Fixed new lengths are what make branches inside the run
 * easy: an interior target's new address is known before anything is written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "lib/isa/zydis_rules.h"

#include <kinstr/reloc.h>

static const char *const kind_names[] = {
	[KINSTR_RELOC_INSN_COPY]	= "copy",
	[KINSTR_RELOC_INSN_RIPREL]	= "riprel",
	[KINSTR_RELOC_INSN_JMP]		= "jmp",
	[KINSTR_RELOC_INSN_JCC]		= "jcc",
	[KINSTR_RELOC_INSN_CALL]	= "call",
	[KINSTR_RELOC_INSN_XBEGIN]	= "xbegin",
	[KINSTR_RELOC_INSN_LOOP]	= "loop",
};

const char *kinstr_reloc__kind_name(int kind)
{
	if (kind < 0 || kind >= (int)(sizeof(kind_names) / sizeof(kind_names[0])))
		return "?";
	return kind_names[kind];
}

/* Per-instruction facts pass 1 finds and pass 3 needs, kept off the public struct. */
struct reloc_scratch {
	uint8_t disp_off;	/* RIP-relative: where disp32 sits in the instruction */
	uint8_t opcode;		/* jcc: 0x7X or 0x8X; loop family: 0xE0..0xE3 */
	uint8_t addr32;		/* loop family: keep the 0x67 prefix (ecx instead of rcx) */
};

/* Traps whose handlers look their address up (kprobes, text_poke_bp, the BUG table). */
int kinstr_reloc__found_by_address(unsigned int mnemonic)
{
	switch (mnemonic) {
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
		return 1;
	default:
		return 0;
	}
}

static int fail(struct kinstr_reloc *r, int err, int reason, int idx, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(struct kinstr_reloc *r, int err, int reason, int idx, const char *fmt, ...)
{
	va_list ap;
	int n;

	r->reason = reason;
	r->bad_insn = idx;
	if (idx >= 0)
		r->bad_addr = r->old_addr + r->insns[idx].old_off;
	n = 0;
	if (idx >= 0)
		n = snprintf(r->why, sizeof(r->why), "0x%" PRIx64 ": ", r->bad_addr);
	va_start(ap, fmt);
	vsnprintf(r->why + n, sizeof(r->why) - n, fmt, ap);
	va_end(ap);
	return err;
}

/* The rel32 the copy needs to reach target from an instruction ending at end, if it can. */
static int rel32_to(uint64_t target, uint64_t end, int32_t *rel)
{
	int64_t d = (int64_t)(target - end);

	if (d < INT32_MIN || d > INT32_MAX)
		return -ERANGE;
	*rel = (int32_t)d;
	return 0;
}

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);	/* x86 is little endian, so is the host */
}

static int is_jcc_opcode(const ZydisDecodedInstruction *insn)
{
	if (insn->encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY)
		return 0;	/* VEX.0F 8x is no jcc */
	if (insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT)
		return (insn->opcode & 0xf0) == 0x70;
	if (insn->opcode_map == ZYDIS_OPCODE_MAP_0F)
		return (insn->opcode & 0xf0) == 0x80;
	return 0;
}

/* Pass 1 for one instruction: kind, new length, original target. */
static int classify(struct kinstr_reloc *r, int idx, struct reloc_scratch *s,
		    const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops)
{
	struct kinstr_reloc_insn *ri = &r->insns[idx];
	uint64_t here = r->old_addr + ri->old_off;
	ZyanU64 abs;
	int i;

	ri->kind = KINSTR_RELOC_INSN_COPY;
	ri->new_len = ri->old_len;

	if (kinstr_reloc__found_by_address(insn->mnemonic))
		return fail(r, -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE, idx,
			    "%s is handled by address lookup and cannot move",
			    ZydisMnemonicGetString(insn->mnemonic));

	if (insn->attributes & ZYDIS_ATTRIB_IS_RELATIVE) {
		const ZydisDecodedOperand *imm = NULL;

		for (i = 0; i < insn->operand_count; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative)
				imm = &ops[i];
		if (imm) {
			/* 66h on a near branch: rel16 and IP truncation on AMD, ignored on Intel */
			if ((insn->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE) ||
			    insn->raw.imm[0].size == 16)
				return fail(r, -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE, idx,
					    "%s with a 16-bit operand size is vendor dependent",
					    ZydisMnemonicGetString(insn->mnemonic));
			if (ZYAN_FAILED(ZydisCalcAbsoluteAddress(insn, imm, here, &abs)))
				return fail(r, -EILSEQ, KINSTR_RELOC_UNDECODABLE, idx,
					    "cannot compute branch target");
			ri->has_target = 1;
			ri->target = abs;

			if (insn->mnemonic == ZYDIS_MNEMONIC_JMP) {
				ri->kind = KINSTR_RELOC_INSN_JMP;
				ri->new_len = 5;
			} else if (insn->mnemonic == ZYDIS_MNEMONIC_CALL) {
				/* `call 1f; 1: pop` reads the return address: the copy's, not ours */
				if (abs > r->old_addr && abs < r->old_addr + r->in_len) {
					r->bad_target = abs;
					return fail(r, -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE, idx,
						    "call into the run itself exposes the copy's address");
				}
				ri->kind = KINSTR_RELOC_INSN_CALL;
				ri->new_len = 5;
			} else if (insn->mnemonic == ZYDIS_MNEMONIC_XBEGIN) {
				ri->kind = KINSTR_RELOC_INSN_XBEGIN;
				ri->new_len = 6;
			} else if (is_jcc_opcode(insn)) {
				ri->kind = KINSTR_RELOC_INSN_JCC;
				ri->new_len = 6;
				s->opcode = insn->opcode;
			} else if (insn->mnemonic == ZYDIS_MNEMONIC_LOOP ||
				   insn->mnemonic == ZYDIS_MNEMONIC_LOOPE ||
				   insn->mnemonic == ZYDIS_MNEMONIC_LOOPNE ||
				   insn->mnemonic == ZYDIS_MNEMONIC_JRCXZ ||
				   insn->mnemonic == ZYDIS_MNEMONIC_JECXZ) {
				/* the counter width is the address size: keep 67h */
				ri->kind = KINSTR_RELOC_INSN_LOOP;
				s->opcode = insn->opcode;
				s->addr32 = insn->address_width == 32;
				ri->new_len = (s->addr32 ? 1 : 0) + 2 + 2 + 5;
			} else {
				return fail(r, -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE, idx,
					    "relative %s is not supported",
					    ZydisMnemonicGetString(insn->mnemonic));
			}
			return 0;
		}
	}

	for (i = 0; i < insn->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		/* 67h turns rip into eip: a 32-bit address, recomputing disp32 would not keep it */
		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY && op->mem.base == ZYDIS_REGISTER_EIP)
			return fail(r, -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE, idx,
				    "EIP-relative operand (67h prefix)");
		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (insn->raw.disp.size != 32)
			return fail(r, -EILSEQ, KINSTR_RELOC_UNDECODABLE, idx,
				    "RIP-relative operand without disp32");
		if (ZYAN_FAILED(ZydisCalcAbsoluteAddress(insn, op, here, &abs)))
			return fail(r, -EILSEQ, KINSTR_RELOC_UNDECODABLE, idx,
				    "cannot compute RIP-relative target");
		/* the run's own bytes will hold the patch: reading or writing them changes meaning */
		if (op->mem.type != ZYDIS_MEMOP_TYPE_AGEN &&
		    abs + (op->size / 8) > r->old_addr && abs < r->old_addr + r->in_len) {
			r->bad_target = abs;
			return fail(r, -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE, idx,
				    "%s accesses the displaced bytes at 0x%" PRIx64,
				    ZydisMnemonicGetString(insn->mnemonic), (uint64_t)abs);
		}
		ri->kind = KINSTR_RELOC_INSN_RIPREL;
		ri->has_target = 1;
		ri->target = abs;
		s->disp_off = insn->raw.disp.offset;
		return 0;
	}
	return 0;
}

int kinstr_reloc__run(struct kinstr_reloc *r, const void *in, size_t in_len, uint64_t old_addr,
		      void *out, size_t out_cap, uint64_t new_addr)
{
	struct reloc_scratch scratch[KINSTR_RELOC_MAX_INSNS];
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	const uint8_t *src = in;
	uint8_t *dst = out;
	uint32_t off, new_off;
	unsigned int i, n;
	int err;

	if (!r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->old_addr = old_addr;
	r->new_addr = new_addr;
	r->in_len = in_len;
	r->bad_insn = -1;
	if (!in || !out || !in_len || in_len > KINSTR_RELOC_MAX_IN)
		return fail(r, -EINVAL, KINSTR_RELOC_BAD_ARGS, -1,
			    "need 1..%d input bytes and an output buffer", KINSTR_RELOC_MAX_IN);
	memset(scratch, 0, sizeof(scratch));
	if (ZYAN_FAILED(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
		return fail(r, -EINVAL, KINSTR_RELOC_BAD_ARGS, -1, "Zydis decoder init failed");

	/* pass 1: decode and classify */
	for (off = 0, n = 0; off < in_len; off += insn.length, n++) {
		ZyanStatus st;

		if (n == KINSTR_RELOC_MAX_INSNS)
			return fail(r, -E2BIG, KINSTR_RELOC_TOO_MANY, -1,
				    "more than %d instructions", KINSTR_RELOC_MAX_INSNS);
		r->nr_insns = n + 1;
		r->insns[n].old_off = off;
		st = ZydisDecoderDecodeFull(&dec, src + off, in_len - off, &insn, ops);
		if (st == ZYDIS_STATUS_NO_MORE_DATA)
			return fail(r, -EBADMSG, KINSTR_RELOC_TRUNCATED, n,
				    "the run ends inside an instruction (%u bytes left)",
				    (unsigned int)(in_len - off));
		if (ZYAN_FAILED(st) || !kinstr_zydis__is_insn(&insn))
			return fail(r, -EILSEQ, KINSTR_RELOC_UNDECODABLE, n,
				    "undecodable bytes (%02x ...)", src[off]);
		r->insns[n].old_len = insn.length;
		err = classify(r, n, &scratch[n], &insn, ops);
		if (err)
			return err;
	}

	/* pass 2: layout */
	for (i = 0, new_off = 0; i < n; i++) {
		r->insns[i].new_off = new_off;
		new_off += r->insns[i].new_len;
	}
	r->out_len = new_off;
	if (new_off > out_cap)
		return fail(r, -ENOSPC, KINSTR_RELOC_NO_SPACE, -1,
			    "output needs %u bytes, buffer has %zu", new_off, out_cap);

	/* pass 3: resolve targets, check reach, emit */
	for (i = 0; i < n; i++) {
		struct kinstr_reloc_insn *ri = &r->insns[i];
		struct reloc_scratch *s = &scratch[i];
		uint64_t end = new_addr + ri->new_off + ri->new_len;
		uint8_t *p = dst + ri->new_off;
		int32_t rel = 0;

		ri->new_target = ri->target;
		if (ri->has_target && ri->kind != KINSTR_RELOC_INSN_RIPREL &&
		    ri->target > old_addr && ri->target < old_addr + in_len) {
			uint32_t toff = ri->target - old_addr;
			unsigned int j;

			for (j = 1; j < n && r->insns[j].old_off != toff; j++)
				;
			if (j == n) {
				r->bad_target = ri->target;
				return fail(r, -EXDEV, KINSTR_RELOC_INTO_INSN, i,
					    "branch into the middle of a displaced instruction (+%u)",
					    toff);
			}
			ri->new_target = new_addr + r->insns[j].new_off;
		}
		if (ri->has_target && rel32_to(ri->new_target, end, &rel)) {
			r->bad_target = ri->new_target;
			return fail(r, -ERANGE, KINSTR_RELOC_OUT_OF_RANGE, i,
				    "%s target 0x%" PRIx64 " is beyond +-2 GiB of 0x%" PRIx64,
				    kinstr_reloc__kind_name(ri->kind), ri->new_target, end);
		}

		switch (ri->kind) {
		case KINSTR_RELOC_INSN_COPY:
			memcpy(p, src + ri->old_off, ri->old_len);
			break;
		case KINSTR_RELOC_INSN_RIPREL:
			/* same length, so the immediate after disp32 stays where it was */
			memcpy(p, src + ri->old_off, ri->old_len);
			put32(p + s->disp_off, rel);
			break;
		case KINSTR_RELOC_INSN_JMP:
			p[0] = 0xe9;
			put32(p + 1, rel);
			break;
		case KINSTR_RELOC_INSN_CALL:
			p[0] = 0xe8;
			put32(p + 1, rel);
			break;
		case KINSTR_RELOC_INSN_XBEGIN:
			p[0] = 0xc7;
			p[1] = 0xf8;
			put32(p + 2, rel);
			break;
		case KINSTR_RELOC_INSN_JCC:
			p[0] = 0x0f;
			p[1] = 0x80 | (s->opcode & 0x0f);
			put32(p + 2, rel);
			break;
		case KINSTR_RELOC_INSN_LOOP:
			/*
			 * taken: skip the short jmp and land on the jmp rel32; not taken: the
			 * short jmp skips the jmp rel32. The original opcode does its own
			 * counting and flag test.
			 */
			if (s->addr32)
				*p++ = 0x67;
			p[0] = s->opcode;
			p[1] = 0x02;
			p[2] = 0xeb;
			p[3] = 0x05;
			p[4] = 0xe9;
			put32(p + 5, rel);
			break;
		}
	}
	return 0;
}

/* index of the instruction starting at offset off, or -1 */
static int find_old(const struct kinstr_reloc *r, uint32_t off)
{
	unsigned int lo = 0, hi = r->nr_insns;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (r->insns[mid].old_off == off)
			return mid;
		if (r->insns[mid].old_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int kinstr_reloc__map(const struct kinstr_reloc *r, uint64_t old, uint64_t *new_out)
{
	int i;

	if (!r || r->reason != KINSTR_RELOC_OK || !r->nr_insns)
		return -EINVAL;
	if (old < r->old_addr || old > r->old_addr + r->in_len)
		return -ERANGE;
	if (old == r->old_addr + r->in_len) {
		*new_out = r->new_addr + r->out_len;
		return 0;
	}
	i = find_old(r, old - r->old_addr);
	if (i < 0)
		return -EXDEV;
	*new_out = r->new_addr + r->insns[i].new_off;
	return 0;
}

int kinstr_reloc__unmap(const struct kinstr_reloc *r, uint64_t new_addr, uint64_t *old_out)
{
	unsigned int i;

	if (!r || r->reason != KINSTR_RELOC_OK || !r->nr_insns)
		return -EINVAL;
	if (new_addr < r->new_addr || new_addr > r->new_addr + r->out_len)
		return -ERANGE;
	if (new_addr == r->new_addr + r->out_len) {
		*old_out = r->old_addr + r->in_len;
		return 0;
	}
	for (i = 0; i < r->nr_insns; i++) {
		if (r->new_addr + r->insns[i].new_off == new_addr) {
			*old_out = r->old_addr + r->insns[i].old_off;
			return 0;
		}
	}
	return -EXDEV;
}

const char *kinstr_reloc__why(const struct kinstr_reloc *r)
{
	return r ? r->why : "";
}
