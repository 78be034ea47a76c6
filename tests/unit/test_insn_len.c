// SPDX-License-Identifier: GPL-2.0
/*
 * The module's fast length decoder (rules/insn_len.h) over its whole domain, against Zydis: every
 * opcode of the legacy and 0f maps, under each prefix form (none, the legacy prefixes alone and
 * in pairs, REX alone and after them), with ModRM by mod, rm and every reg, and SIB by base.
 * Wherever it answers (a non-zero length), Zydis must decode the same bytes to the same length
 * and agree on what the module's scan asks of the instruction: a direct branch (which kind, where
 * its displacement sits and how long it is), `std`, an indirect jmp. Where Zydis refuses the
 * bytes, the fast decoder must not answer. The self-test in the guest compares it with the
 * kernel's own decoder over the running kernel's text (tests/vm/decoder.t).
 */
#include <string.h>

#include <Zydis/Zydis.h>

#include "rules/insn_len.h"
#include "check.h"

struct walk {
	size_t tried, answered, zydis_ok, disagree, branches, refused_by_zydis;
};

static int zydis_kind(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops, unsigned int *rel,
		      unsigned int *rel_len)
{
	*rel = *rel_len = 0;
	if (zi->mnemonic == ZYDIS_MNEMONIC_STD)
		return KINSTR_LITE_STD;
	if (zi->mnemonic == ZYDIS_MNEMONIC_JMP && zi->meta.branch_type == ZYDIS_BRANCH_TYPE_NEAR &&
	    ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return KINSTR_LITE_IJMP;
	/* ff /5 (a far jmp through memory) is an indirect jmp to the scan as well */
	if (zi->mnemonic == ZYDIS_MNEMONIC_JMP && zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY)
		return KINSTR_LITE_IJMP;
	if (zi->raw.imm[0].is_relative && 1) {
		*rel = zi->raw.imm[0].offset;
		*rel_len = zi->raw.imm[0].size / 8;
		switch (zi->mnemonic) {
		case ZYDIS_MNEMONIC_CALL:
			return KINSTR_LITE_CALL;
		case ZYDIS_MNEMONIC_JMP:
			return KINSTR_LITE_JMP;
		case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
		case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JECXZ:
			return KINSTR_LITE_LOOP;
		default:
			if (zi->meta.category == ZYDIS_CATEGORY_COND_BR)
				return KINSTR_LITE_JCC;
			return -1;	/* some other relative form (xbegin): never answered here */
		}
	}
	return KINSTR_LITE_OTHER;
}

/* Does the instruction at b decode with a register or a plain memory ModRM, its reg kept? */
static int opcode_exists(ZydisDecoder *dec, const uint8_t *b, unsigned int len)
{
	ZydisDecodedInstruction zi;
	uint8_t c[24];
	unsigned int i, m;

	/* find the ModRM: after prefixes, REX, 0f and the opcode */
	for (i = 0; i < len && ((b[i] & 0xf0) == 0x40 || kinstr_lite_legacy_prefix(b[i])); i++)
		;
	i += b[i] == 0x0f ? 2 : 1;
	if (i >= 15)
		return 0;
	for (m = 0; m < 3; m++) {
		unsigned int k;

		memcpy(c, b, 15);
		for (k = 0; k < i - 1; k++)	/* lock where it may not stand is #UD, not another length */
			if (c[k] == 0xf0)
				c[k] = 0x2e;
		if (m) {
			c[i] = (uint8_t)((m == 1 ? 0x00 : 0xc0) | (b[i] & 0x38));
			memset(c + i + 1, 0, 8);
		}
		if (ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, NULL, c, 15, &zi)))
			return 1;
	}
	return 0;
}

static void one(ZydisDecoder *dec, struct walk *w, const uint8_t *b)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	struct kinstr_lite l;
	unsigned int len, rel, rel_len;
	int ok, kind;

	w->tried++;
	len = kinstr_lite_decode(b, 15, &l);
	ok = ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, b, 15, &zi, ops));
	w->zydis_ok += ok;
	if (!len)
		return;
	w->answered++;
	if (!ok) {
		/*
		 * Zydis refuses some operand forms the kernel's decoder reads by opcode alone (lfs with
		 * a register, SSE moves with memory): the length is still the ModRM rule's. The opcode
		 * itself must exist: some form of it, with this ModRM.reg, decodes (a lock prefix on
		 * what takes none counts as a segment prefix there: same length, #UD when run).
		 */
		w->refused_by_zydis++;
		if (opcode_exists(dec, b, len))
			return;
		if (w->disagree++ < 40)
			CHECK(0, "%02x %02x %02x %02x %02x %02x: fast length %u, Zydis refuses it", b[0], b[1], b[2], b[3],
			      b[4], b[5], len);
		return;
	}
	kind = zydis_kind(&zi, ops, &rel, &rel_len);
	if (zi.length != len || kind != l.kind ||
	    (kind != KINSTR_LITE_OTHER && kind != KINSTR_LITE_STD && kind != KINSTR_LITE_IJMP &&
	     (rel != l.rel || rel_len != l.rel_len))) {
		if (w->disagree++ < 40)
			CHECK(0, "%02x %02x %02x %02x %02x %02x (%s): fast length %u kind %u rel %u/%u, Zydis %u kind %d rel %u/%u",
			      b[0], b[1], b[2], b[3], b[4], b[5], ZydisMnemonicGetString(zi.mnemonic), len, l.kind, l.rel,
			      l.rel_len, zi.length, kind, rel, rel_len);
		return;
	}
	w->branches += kind != KINSTR_LITE_OTHER;
}

/* ModRM bytes that matter to a length: each mod and rm with reg 0 and 5, every reg for groups. */
static void modrms(ZydisDecoder *dec, struct walk *w, uint8_t *b, unsigned int at)
{
	static const uint8_t sibs[] = { 0x00, 0x05, 0x24, 0x25, 0xe5, 0xfd };
	unsigned int m, s;

	for (m = 0; m < 256; m++) {
		b[at] = (uint8_t)m;
		if ((m >> 6) != 3 && (m & 7) == 4) {
			for (s = 0; s < sizeof(sibs); s++) {
				b[at + 1] = sibs[s];
				one(dec, w, b);
			}
			b[at + 1] = 0;
		} else {
			one(dec, w, b);
		}
	}
}

static void t_every_form(void)
{
	static const uint8_t pfx[][2] = {
		{ 0 }, { 0x66 }, { 0x67 }, { 0xf2 }, { 0xf3 }, { 0xf0 }, { 0x2e }, { 0x3e }, { 0x26 }, { 0x36 },
		{ 0x64 }, { 0x65 }, { 0x66, 0xf3 }, { 0xf3, 0x66 }, { 0xf0, 0x66 }, { 0x66, 0x67 }, { 0x2e, 0x3e },
		{ 0x66, 0x66 }, { 0xf2, 0xf3 },
	};
	static const uint8_t rex[] = { 0, 0x40, 0x41, 0x44, 0x48, 0x49, 0x4c, 0x4f };
	struct walk w = { 0 };
	ZydisDecoder dec;
	unsigned int p, r, map, op;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (p = 0; p < sizeof(pfx) / sizeof(pfx[0]); p++)
		for (r = 0; r < sizeof(rex); r++)
			for (map = 0; map < 2; map++)
				for (op = 0; op < 256; op++) {
					uint8_t b[24] = { 0 };
					unsigned int n = 0;

					if (pfx[p][0])
						b[n++] = pfx[p][0];
					if (pfx[p][1])
						b[n++] = pfx[p][1];
					if (rex[r])
						b[n++] = rex[r];
					if (map)
						b[n++] = 0x0f;
					b[n++] = (uint8_t)op;
					modrms(&dec, &w, b, n);
				}
	CHECK(w.disagree == 0, "%zu encodings disagree (%zu refused by Zydis)", w.disagree, w.refused_by_zydis);
	/* the fast path answers for most of what Zydis decodes: it is there to be used */
	CHECK(w.answered > w.zydis_ok / 2, "answered only %zu of %zu that Zydis decodes", w.answered, w.zydis_ok);
	CHECK(w.branches > 1000, "only %zu branches, std or indirect jmps met", w.branches);
	printf("     %zu encodings tried, %zu decoded by Zydis, %zu answered by the fast decoder\n", w.tried, w.zydis_ok,
	       w.answered);
}

/* What the walk does not vary: more prefixes than it takes, REX before a prefix, short input. */
static void t_edges(void)
{
	static const struct {
		const char *what;
		const char *b;
		unsigned int nb, len;
	} c[] = {
		{ "four legacy prefixes: not answered", "\x66\x2e\x3e\xf0\x01\x00", 6, 0 },
		{ "REX then a legacy prefix: not answered", "\x48\x66\x01\x00", 4, 0 },
		{ "two REX: not answered", "\x48\x41\x01\x00", 4, 0 },
		{ "VEX: not answered", "\xc5\xf8\x77", 3, 0 },
		{ "66 call: not answered", "\x66\xe8\x00\x00", 4, 0 },
		{ "0f 38: not answered", "\x66\x0f\x38\x00\xc0", 5, 0 },
		{ "Xen's emulate prefix (ud2; .ascii \"xen\"; cpuid): not answered", "\x0f\x0b\x78\x65\x6e\x0f\xa2", 7, 0 },
		{ "KVM's: not answered", "\x0f\x0b\x6b\x76\x6d\x0f\xa2", 7, 0 },
		{ "ud2 alone", "\x0f\x0b\x00\x00\x00", 5, 2 },
		{ "endbr64", "\xf3\x0f\x1e\xfa", 4, 4 },
		{ "movabs rax, imm64", "\x48\xb8\x01\x02\x03\x04\x05\x06\x07\x08", 10, 10 },
		{ "mov rax, moffs64", "\x48\xa1\x01\x02\x03\x04\x05\x06\x07\x08", 10, 10 },
		{ "addr32 mov eax, moffs32", "\x67\xa1\x01\x02\x03\x04", 6, 6 },
		{ "enter", "\xc8\x10\x00\x01", 4, 4 },
		{ "nopw 0x0(%rax,%rax,1)", "\x66\x0f\x1f\x44\x00\x00", 6, 6 },
		{ "lock cmpxchg %rdx,(%rdi)", "\xf0\x48\x0f\xb1\x17", 5, 5 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint8_t b[24] = { 0 };
		struct kinstr_lite l;
		unsigned int got;

		memcpy(b, c[i].b, c[i].nb);
		got = kinstr_lite_decode(b, 15, &l);
		CHECK(got == c[i].len, "%s: %u, not %u", c[i].what, got, c[i].len);
	}
	{
		uint8_t b[24] = { 0x74, 0x05 };
		struct kinstr_lite l;

		CHECK(kinstr_lite_decode(b, 14, &l) == 0, "fewer than 15 bytes: not answered");
	}
}

/* Targets: rel8 back and forward, rel32, from where the instruction ends. */
static void t_targets(void)
{
	static const struct {
		const char *b;
		unsigned int nb;
		unsigned long want;
	} c[] = {
		{ "\x74\xfe", 2, 0x1000 },				/* je . */
		{ "\xeb\x10", 2, 0x1012 },
		{ "\xe8\x00\x00\x00\x00", 5, 0x1005 },
		{ "\xe9\xfb\xff\xff\xff", 5, 0x1000 },
		{ "\x0f\x85\x00\x01\x00\x00", 6, 0x1106 },
		{ "\x3e\xe9\x01\x00\x00\x00", 6, 0x1007 },		/* notrack/ds prefix: the target moves with the length */
		{ "\x41\x0f\x84\xf0\xff\xff\xff", 7, 0x0ff7 },	/* a REX on a jcc */
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint8_t b[24] = { 0 };
		struct kinstr_lite l;

		memcpy(b, c[i].b, c[i].nb);
		CHECK(kinstr_lite_decode(b, 15, &l) != 0, "case %zu: not answered", i);
		CHECK(kinstr_lite_target(b, &l, 0x1000) == c[i].want, "case %zu: target %#lx, not %#lx", i,
		      kinstr_lite_target(b, &l, 0x1000), c[i].want);
	}
}

int main(void)
{
	RUN(t_every_form);
	RUN(t_edges);
	RUN(t_targets);
	return check_done();
}
