// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for decode + CFG + site classification + relocation (issue 3).
 *
 * Input: an 8-byte header, then the function's bytes.
 *   h[0..2]  offset of the function's start in its region (24 bits, little endian)
 *   h[3]     bits 0-1: region: 0 and 2 kernel text (0xffffffff81000000), 1 the module area
 *            (0xffffffffc0000000), 3 just below the top of the address space (targets wrap)
 *            bit 2: give the direct kinstr_cfg__new() a return thunk; bit 3: one inside the
 *            function; bits 4-7: how many extra edges (opts->edges) it gets
 *   h[4..7]  seed for the rest: edges, relocation addresses, buffer and options sizes
 *
 * Every invariant below holds for any input; a violation prints what and where, then aborts,
 * so libFuzzer records the input as a crash. Each check says which promise it holds the
 * library to (the headers' comments, or DESIGN.md's site rules).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <kinstr/cfg.h>
#include <kinstr/reloc.h>
#include <kinstr/sites.h>
#include <kinstr/x86.h>
#include "oracle_flow.h"

#define HDR		8
#define JMP_LEN		5
#define MAX_EDGES	15
#define NONE		KINSTR_CFG_NONE
#define ALL		KINSTR_X86_REGS_ALL
#define RSP_BIT		KINSTR_X86_REG(KINSTR_X86_RSP)
#define FLAGS_BIT	KINSTR_X86_REG(KINSTR_X86_FLAGS)
#define GIB		(1ULL << 30)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What is being checked, for the report. */
static uint64_t cur_start, cur_addr;
static const char *cur_what = "";

static void violated(int line, const char *cond, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

static void violated(int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_analyze.c:%d: invariant violated: %s\n  function at 0x%" PRIx64
		", %s at 0x%" PRIx64 ": ", line, cond, cur_start, cur_what, cur_addr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#define ENSURE(cond, ...) \
	do { if (!(cond)) violated(__LINE__, #cond, __VA_ARGS__); } while (0)

/* ---- helpers --------------------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);	/* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int fits32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

static int64_t sext(const uint8_t *p, unsigned int size)
{
	int32_t v32;
	int16_t v16;

	switch (size) {
	case 1: return (int8_t)p[0];
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	}
	return 0;
}

static int is_direct(const struct kinstr_x86_insn *x)
{
	return x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC ||
	       x->flow == KINSTR_X86_FLOW_CALL;
}

/* An address dist away from site, in whichever direction keeps [it, it + MAX_OUT) unwrapped. */
static uint64_t away(uint64_t site, uint64_t dist, int down)
{
	uint64_t up = site + dist;

	if (!down && up >= site && up + KINSTR_RELOC_MAX_OUT > up)
		return up;
	if (site >= dist)
		return site - dist;
	return up;
}

/* ---- one decoded instruction ----------------------------------------------------------------- */

/* The fields kinstr_x86__decode() derives must agree with the bytes they came from. */
static void check_insn(const struct kinstr_x86_insn *x)
{
	ENSURE(x->len >= 1 && x->len <= KINSTR_X86_MAX_INSN_LEN, "len %u", x->len);
	ENSURE(!(x->regs_read & ~ALL) && !(x->regs_written & ~ALL), "register sets %#x %#x",
	       x->regs_read, x->regs_written);
	/* "killed" writes are a kind of write */
	ENSURE(!(x->regs_killed & ~x->regs_written), "killed %#x written %#x", x->regs_killed,
	       x->regs_written);
	if (is_direct(x)) {
		ENSURE(x->branch_size == 1 || x->branch_size == 2 || x->branch_size == 4,
		       "branch_size %u", x->branch_size);
		/* a relative branch's displacement is its last field */
		ENSURE(x->branch_off + x->branch_size == x->len, "branch field %u+%u in %u bytes",
		       x->branch_off, x->branch_size, x->len);
		ENSURE(x->target == x->addr + x->len + (uint64_t)sext(x->bytes + x->branch_off,
								     x->branch_size),
		       "target 0x%" PRIx64, x->target);
		ENSURE(!!(x->attr & KINSTR_X86_A_BRANCH_REL8) == (x->branch_size == 1),
		       "rel8 attr %#x size %u", x->attr, x->branch_size);
	}
	if (x->attr & KINSTR_X86_A_RIP_REL) {
		ENSURE(x->disp_size == 4 && x->disp_off + 4 <= x->len, "disp %u+%u in %u bytes",
		       x->disp_off, x->disp_size, x->len);
		/* relative to the end of the whole instruction, immediate included */
		ENSURE(x->rip_target == x->addr + x->len + (uint64_t)sext(x->bytes + x->disp_off, 4),
		       "rip_target 0x%" PRIx64, x->rip_target);
		if (x->imm_size)
			ENSURE(x->imm_off >= x->disp_off + 4 && x->imm_off + x->imm_size <= x->len,
			       "imm %u+%u after disp %u", x->imm_off, x->imm_size, x->disp_off);
	}
}

/* ---- relocation ------------------------------------------------------------------------------ */

/* Decode a run on its own; returns the count, or -1 when it does not decode to its end. */
static int decode_run(const uint8_t *in, size_t len, uint64_t old, struct kinstr_x86_insn *xs,
		      int max)
{
	size_t off = 0;
	int n = 0;

	while (off < len) {
		if (n == max || kinstr_x86__decode(in + off, len - off, old + off, &xs[n]))
			return -1;
		off += xs[n++].len;
	}
	return n;
}

/* xbegin is relative but no branch for kinstr_x86: its rel32 is its last field. */
static uint64_t xbegin_target(const struct kinstr_x86_insn *x)
{
	return x->addr + x->len + (uint64_t)sext(x->bytes + x->len - 4, 4);
}

/* The original target of x (branch, xbegin or RIP-relative), if any. */
static int orig_target(const struct kinstr_x86_insn *x, uint64_t *t)
{
	if (is_direct(x))
		*t = x->target;
	else if (x->mnemonic == ZYDIS_MNEMONIC_XBEGIN && x->len >= 6)
		*t = xbegin_target(x);
	else if (x->attr & KINSTR_X86_A_RIP_REL)
		*t = x->rip_target;
	else
		return 0;
	return 1;
}

/*
 * Asked of Zydis directly, not of kinstr_x86: does the instruction depend on where it is
 * (a relative branch, or a memory operand based on rip or eip)?
 */
static int position_dependent(const uint8_t *p, size_t len)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisDecoder dec;
	unsigned int i;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p, len, &zi, ops)))
		return 1;
	for (i = 0; i < zi.operand_count; i++) {
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative)
			return 1;
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (ops[i].mem.base == ZYDIS_REGISTER_RIP || ops[i].mem.base == ZYDIS_REGISTER_EIP))
			return 1;
	}
	return 0;
}

/* Does the run hold an instruction whose target stays outside the copy (see reloc.h)? */
static int far_target(const struct kinstr_x86_insn *xs, int n, uint64_t old, size_t len,
		      uint64_t site, uint64_t margin)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t t;

		if (!orig_target(&xs[i], &t))
			continue;
		if (!(xs[i].attr & KINSTR_X86_A_RIP_REL) && t > old && t < old + len)
			continue;	/* an interior branch goes to the copy */
		if (!margin || !fits32((int64_t)(t - site)) ||
		    !fits32((int64_t)(t - site) + (int64_t)margin) ||
		    !fits32((int64_t)(t - site) - (int64_t)margin))
			return 1;
	}
	return 0;
}

/*
 * Check a kinstr_reloc__run() result against reloc.h: on success the copy, decoded again,
 * does what the original did (same instructions, same absolute targets, interior branches to
 * the copies), and map/unmap agree with the layout; on failure the reason fits the errno.
 */
static void check_reloc(const struct kinstr_reloc *r, int ret, const uint8_t *in, size_t len,
			uint64_t old, const uint8_t *out, size_t cap, uint64_t new)
{
	static const struct { int err, reason; } why[] = {
		{ -EINVAL, KINSTR_RELOC_BAD_ARGS }, { -EILSEQ, KINSTR_RELOC_UNDECODABLE },
		{ -EBADMSG, KINSTR_RELOC_TRUNCATED }, { -E2BIG, KINSTR_RELOC_TOO_MANY },
		{ -ENOSPC, KINSTR_RELOC_NO_SPACE }, { -ERANGE, KINSTR_RELOC_OUT_OF_RANGE },
		{ -EXDEV, KINSTR_RELOC_INTO_INSN }, { -EOPNOTSUPP, KINSTR_RELOC_UNMOVABLE },
	};
	struct kinstr_x86_insn xs[KINSTR_RELOC_MAX_INSNS];
	uint32_t off, noff;
	uint64_t m;
	unsigned int i, k;
	int n;

	ENSURE(r->old_addr == old && r->new_addr == new && r->in_len == len, "header");
	ENSURE(strlen(r->why) < sizeof(r->why), "why not terminated");
	if (ret) {
		for (k = 0; k < sizeof(why) / sizeof(why[0]) && why[k].err != ret; k++)
			;
		ENSURE(k < sizeof(why) / sizeof(why[0]), "unexpected errno %d", ret);
		ENSURE(r->reason == why[k].reason, "errno %d with reason %d", ret, r->reason);
		ENSURE(r->why[0] && kinstr_reloc__why(r) == r->why, "errno %d without a reason", ret);
		ENSURE(r->bad_insn >= -1 && r->bad_insn < (int)r->nr_insns, "bad_insn %d of %u",
		       r->bad_insn, r->nr_insns);
		ENSURE(kinstr_reloc__map(r, old, &m) == -EINVAL, "map after failure");
		ENSURE(kinstr_reloc__unmap(r, new, &m) == -EINVAL, "unmap after failure");
		if (ret == -ENOSPC)
			ENSURE(r->out_len > cap, "ENOSPC with %u <= %zu", r->out_len, cap);
		if (ret == -ERANGE) {
			const struct kinstr_reloc_insn *ri;
			uint64_t end;

			ENSURE(r->bad_insn >= 0, "ERANGE about no instruction");
			ri = &r->insns[r->bad_insn];
			end = new + ri->new_off + ri->new_len;
			ENSURE(!fits32((int64_t)(r->bad_target - end)),
			       "ERANGE for 0x%" PRIx64 " from 0x%" PRIx64, r->bad_target, end);
		}
		if (ret == -EXDEV) {
			ENSURE(r->bad_target > old && r->bad_target < old + len, "EXDEV outside");
			for (i = 0; i < r->nr_insns; i++)
				ENSURE(old + r->insns[i].old_off != r->bad_target,
				       "EXDEV for an instruction start 0x%" PRIx64, r->bad_target);
		}
		return;
	}

	ENSURE(r->reason == KINSTR_RELOC_OK && !r->why[0] && r->bad_insn == -1, "success with a reason");
	ENSURE(r->nr_insns >= 1 && r->nr_insns <= KINSTR_RELOC_MAX_INSNS, "nr_insns %u", r->nr_insns);
	ENSURE(r->out_len <= cap, "out_len %u > cap %zu", r->out_len, cap);
	n = decode_run(in, len, old, xs, KINSTR_RELOC_MAX_INSNS);
	ENSURE(n == (int)r->nr_insns, "decoded %d instructions, relocator %u", n, r->nr_insns);

	/* the layout: back to back on both sides */
	for (i = 0, off = 0, noff = 0; i < r->nr_insns; i++) {
		const struct kinstr_reloc_insn *ri = &r->insns[i];

		ENSURE(ri->old_off == off && ri->old_len == xs[i].len, "insn %u at +%u len %u", i,
		       ri->old_off, ri->old_len);
		ENSURE(ri->new_off == noff && ri->new_len >= 1, "insn %u copy at +%u", i, ri->new_off);
		off += ri->old_len;
		noff += ri->new_len;
	}
	ENSURE(off == len && noff == r->out_len, "layout %u/%zu %u/%u", off, len, noff, r->out_len);

	for (i = 0; i < r->nr_insns; i++) {
		const struct kinstr_reloc_insn *ri = &r->insns[i];
		const struct kinstr_x86_insn *x = &xs[i];
		const uint8_t *p = out + ri->new_off;
		uint64_t at = new + ri->new_off, t = 0, want = 0;
		struct kinstr_x86_insn y, j8, j32;
		int has_t = orig_target(x, &t);

		cur_addr = x->addr;
		want = t;
		if (has_t && !(x->attr & KINSTR_X86_A_RIP_REL) && t > old && t < old + len) {
			for (k = 1; k < r->nr_insns && old + r->insns[k].old_off != t; k++)
				;
			ENSURE(k < r->nr_insns, "interior target 0x%" PRIx64 " accepted", t);
			want = new + r->insns[k].new_off;
		}
		ENSURE(kinstr_x86__decode(p, ri->new_len, at, &y) == 0, "copy of insn %u undecodable", i);
		ENSURE(y.mnemonic == x->mnemonic, "insn %u became %s", i,
		       kinstr_x86__mnemonic_name(&y));
		check_insn(&y);

		switch (ri->kind) {
		case KINSTR_RELOC_INSN_COPY:
			/* only position-independent instructions are copied as they are */
			ENSURE(!has_t && !position_dependent(x->bytes, x->len),
			       "position-dependent insn %u (%s) copied as it is", i,
			       kinstr_x86__mnemonic_name(x));
			ENSURE(ri->new_len == x->len && !memcmp(p, x->bytes, x->len), "copy differs");
			break;
		case KINSTR_RELOC_INSN_RIPREL:
			ENSURE((x->attr & KINSTR_X86_A_RIP_REL) && y.len == x->len &&
			       ri->new_len == x->len, "riprel insn %u len %u", i, y.len);
			ENSURE(y.rip_target == t, "riprel 0x%" PRIx64 " became 0x%" PRIx64, t,
			       y.rip_target);
			ENSURE(!memcmp(p, x->bytes, x->disp_off) &&
			       !memcmp(p + x->disp_off + 4, x->bytes + x->disp_off + 4,
				       x->len - x->disp_off - 4), "riprel bytes besides disp32");
			break;
		case KINSTR_RELOC_INSN_JMP:
		case KINSTR_RELOC_INSN_CALL:
		case KINSTR_RELOC_INSN_JCC:
			ENSURE(x->flow == y.flow && is_direct(x) && !(x->attr & KINSTR_X86_A_LOOP),
			       "branch kind %d flow %u", ri->kind, x->flow);
			ENSURE(y.len == ri->new_len && y.branch_size == 4, "not rel32");
			ENSURE(y.target == want, "target 0x%" PRIx64 " want 0x%" PRIx64, y.target, want);
			if (ri->kind == KINSTR_RELOC_INSN_CALL)
				ENSURE(want == t, "call redirected into the copy");
			break;
		case KINSTR_RELOC_INSN_XBEGIN:
			ENSURE(x->mnemonic == ZYDIS_MNEMONIC_XBEGIN && y.len == 6 && ri->new_len == 6,
			       "xbegin len %u", y.len);
			ENSURE(xbegin_target(&y) == want, "xbegin target 0x%" PRIx64 " want 0x%" PRIx64,
			       xbegin_target(&y), want);
			break;
		case KINSTR_RELOC_INSN_LOOP:
			/* <op> +2; jmp +5; jmp rel32 target */
			ENSURE(x->attr & KINSTR_X86_A_LOOP, "loop kind for %s",
			       kinstr_x86__mnemonic_name(x));
			ENSURE(y.len + 7 == ri->new_len && y.target == at + y.len + 2, "loop head");
			ENSURE(kinstr_x86__decode(p + y.len, 2, at + y.len, &j8) == 0 &&
			       j8.flow == KINSTR_X86_FLOW_JMP && j8.target == at + ri->new_len,
			       "loop's short jmp");
			ENSURE(kinstr_x86__decode(p + y.len + 2, 5, at + y.len + 2, &j32) == 0 &&
			       j32.flow == KINSTR_X86_FLOW_JMP && j32.len == 5 && j32.target == want,
			       "loop's jmp rel32 to 0x%" PRIx64 " want 0x%" PRIx64, j32.target, want);
			break;
		default:
			ENSURE(0, "kind %d", ri->kind);
		}

		/* map/unmap: instruction starts both ways; inside an instruction is EXDEV */
		ENSURE(kinstr_reloc__map(r, x->addr, &m) == 0 && m == at, "map 0x%" PRIx64, x->addr);
		ENSURE(kinstr_reloc__unmap(r, at, &m) == 0 && m == x->addr, "unmap 0x%" PRIx64, at);
		if (x->len > 1)
			ENSURE(kinstr_reloc__map(r, x->addr + 1, &m) == -EXDEV, "map inside insn %u", i);
		if (ri->new_len > 1)
			ENSURE(kinstr_reloc__unmap(r, at + ri->new_len - 1, &m) == -EXDEV,
			       "unmap inside copy %u", i);
	}
	ENSURE(kinstr_reloc__map(r, old + len, &m) == 0 && m == new + r->out_len, "map end");
	ENSURE(kinstr_reloc__unmap(r, new + r->out_len, &m) == 0 && m == old + len, "unmap end");
	ENSURE(kinstr_reloc__map(r, old + len + 1, &m) == -ERANGE, "map past end");
	ENSURE(kinstr_reloc__unmap(r, new + r->out_len + 1, &m) == -ERANGE, "unmap past end");
	if (old)
		ENSURE(kinstr_reloc__map(r, old - 1, &m) == -ERANGE, "map before start");
	if (new)
		ENSURE(kinstr_reloc__unmap(r, new - 1, &m) == -ERANGE, "unmap before start");
}

/* Relocate in[0..len) from old to new with an output buffer of exactly cap bytes. */
static int reloc_checked(struct kinstr_reloc *r, const uint8_t *in, size_t len, uint64_t old,
			 size_t cap, uint64_t new)
{
	uint8_t *exact_in = malloc(len ? len : 1), *out = malloc(cap ? cap : 1);
	int ret;

	if (!exact_in || !out)
		abort();
	/* exact-size copies, so ASan sees any access past either end */
	memcpy(exact_in, in, len);
	ret = kinstr_reloc__run(r, exact_in, len, old, out, cap, new);
	check_reloc(r, ret, exact_in, len, old, out, cap, new);
	free(exact_in);
	free(out);
	return ret;
}

/*
 * The run [addr, addr + len) of a validated site (jump, or a trap site's one instruction):
 * nothing but distance may make relocating it fail.
 *   near (within 1 MiB): succeeds unless a target is within 1 MiB of the +-2 GiB limit
 *   within 2 GiB: succeeds, or fails with ERANGE for a target really out of reach
 *   far (8 GiB): succeeds exactly when no instruction has an external target
 */
static void reloc_site(const uint8_t *in, size_t len, uint64_t addr, uint64_t *rng)
{
	struct kinstr_x86_insn xs[KINSTR_RELOC_MAX_INSNS];
	struct kinstr_reloc r;
	uint64_t v = rng_next(rng), new;
	int n, ret;

	n = decode_run(in, len, addr, xs, KINSTR_RELOC_MAX_INSNS);
	ENSURE(n > 0, "site bytes do not decode");

	new = away(addr, v & ((1ULL << 20) - 1), v >> 63);
	ret = reloc_checked(&r, in, len, addr, KINSTR_RELOC_MAX_OUT, new);
	ENSURE(!ret || (ret == -ERANGE && far_target(xs, n, addr, len, addr, 2ULL << 20)),
	       "near relocation to 0x%" PRIx64 ": %d %s", new, ret, r.why);

	new = away(addr, (v >> 20) & (2 * GIB - 1), (v >> 62) & 1);
	ret = reloc_checked(&r, in, len, addr, KINSTR_RELOC_MAX_OUT, new);
	ENSURE(!ret || ret == -ERANGE, "relocation to 0x%" PRIx64 ": %d %s", new, ret, r.why);

	new = away(addr, 8 * GIB + (v & 0xfff), (v >> 61) & 1);
	ret = reloc_checked(&r, in, len, addr, KINSTR_RELOC_MAX_OUT, new);
	if (far_target(xs, n, addr, len, addr, 0))
		ENSURE(ret == -ERANGE, "far relocation with an external target: %d %s", ret, r.why);
	else
		ENSURE(ret == 0, "far relocation without external targets: %d %s", ret, r.why);
}

/* Any bytes at all: whatever kinstr_reloc__run() says must be consistent. */
static void reloc_raw(const uint8_t *code, size_t size, uint64_t start, uint64_t *rng)
{
	uint64_t v = rng_next(rng), new;
	struct kinstr_reloc r;
	size_t len = 1 + v % (KINSTR_RELOC_MAX_IN + 6), cap;
	int ret;

	cur_what = "raw run";
	cur_addr = start;
	if (len > size)
		len = size;
	switch ((v >> 8) & 3) {
	case 0: new = away(start, (v >> 16) & 0xfffff, v >> 63); break;
	case 1: new = away(start, (v >> 16) & (2 * GIB - 1), v >> 63); break;
	case 2: new = away(start, 8 * GIB, v >> 63); break;
	default: new = start; break;
	}
	cap = (v >> 12) & 1 ? KINSTR_RELOC_MAX_OUT : (v >> 40) % (KINSTR_RELOC_MAX_OUT + 1);
	ret = reloc_checked(&r, code, len, start, cap, new);
	if (len > KINSTR_RELOC_MAX_IN)
		ENSURE(ret == -EINVAL, "%zu input bytes accepted", len);
	if (ret == -ENOSPC) {
		/* r.out_len says how much is needed, and that much is enough */
		uint32_t need = r.out_len;

		ret = reloc_checked(&r, code, len, start, need, new);
		ENSURE(ret != -ENOSPC && (ret || r.out_len == need), "%u bytes were not enough: %d",
		       need, ret);
	}
}

/* ---- the CFG --------------------------------------------------------------------------------- */

struct edges {
	struct kinstr_cfg_edge e[MAX_EDGES];
	size_t n;		/* what kinstr_cfg__new() is told to use */
	uint64_t return_thunk;
};

/*
 * Does the instruction end its block (before the padding/int3-run merges)? The oracle for
 * lib/analysis/cfg.c's rule (oracle_flow.h: from Zydis's own reading, not kinstr_x86's flow classes);
 * a near call ends one only when it enters the function itself (its target an instruction of the
 * function other than the first: a recursive call is a call). The inputs the CFG was given count as
 * facts: an instruction it could not decode (INVALID) or one with an edge from the kernel's tables
 * (EXTRA_EDGE) ends its block.
 */
static int leaves_line(const struct kinstr_cfg *cfg, const struct kinstr_cfg_insn *in, const uint8_t *code,
		       size_t size, uint64_t start)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisDecoder dec;
	size_t off = in->x.addr - start;
	uint64_t t;

	if (in->flags & (KINSTR_CFG_I_INVALID | KINSTR_CFG_I_EXTRA_EDGE))
		return 1;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (off >= size || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, size - off, &zi, ops)))
		return 1;
	switch (oracle_flow(&zi, ops)) {
	case ORACLE_NEXT:
		return 0;
	case ORACLE_NEAR_CALL:
		if (!(ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[0].imm.is_relative))
			return 0;
		t = in->x.addr + zi.length + (uint64_t)ops[0].imm.value.s;
		return t != start && t - start < size && kinstr_cfg__find_insn(cfg, t) >= 0;
	default:
		return 1;
	}
}

static int falls(const struct kinstr_cfg *cfg, size_t i)
{
	const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

	return i + 1 < kinstr_cfg__insn_cnt(cfg) && !(in->flags & KINSTR_CFG_I_INVALID) &&
	       kinstr_x86__falls_through(&in->x);
}

static int inside(uint64_t a, uint64_t start, size_t size)
{
	return a >= start && a - start < size;
}

/* kinstr_cfg__has_target_in(), the slow way. */
static int target_in(const struct kinstr_cfg *cfg, const struct edges *ed, uint64_t lo, uint64_t hi)
{
	size_t i, n = kinstr_cfg__insn_cnt(cfg);

	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, i)->x;

		if (is_direct(x) && x->target > lo && x->target < hi)
			return 1;
	}
	for (i = 0; ed && i < ed->n; i++) {
		if (inside(ed->e[i].from, kinstr_cfg__start(cfg), kinstr_cfg__size(cfg)) &&
		    ed->e[i].to > lo && ed->e[i].to < hi)
			return 1;
	}
	return 0;
}

/* Index of the instruction holding addr (inside the function). */
static size_t containing(const struct kinstr_cfg *cfg, uint64_t addr)
{
	size_t i = 0, n = kinstr_cfg__insn_cnt(cfg);

	while (i + 1 < n && kinstr_cfg__insn(cfg, i + 1)->x.addr <= addr)
		i++;
	return i;
}

static void check_cfg(const struct kinstr_cfg *cfg, const uint8_t *code, size_t size,
		      uint64_t start, const struct edges *ed, uint64_t *rng)
{
	size_t n = kinstr_cfg__insn_cnt(cfg), nb = kinstr_cfg__block_cnt(cfg), i, k;
	uint32_t f = kinstr_cfg__flags(cfg), want_f = 0;
	uint64_t addr = start;
	int truncated = 0;

	cur_what = "insn";
	ENSURE(kinstr_cfg__start(cfg) == start && kinstr_cfg__size(cfg) == size, "start/size");
	ENSURE(n >= 1 && n <= size && nb >= 1 && nb <= n, "%zu insns %zu blocks", n, nb);
	ENSURE(!kinstr_cfg__insn(cfg, n) && !kinstr_cfg__block(cfg, nb), "accessor past the end");

	for (i = 0; i < n; i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
		const struct kinstr_x86_insn *x = &in->x;
		const struct kinstr_cfg_block *b = kinstr_cfg__block(cfg, in->block);
		size_t off = addr - start;
		uint32_t kill;

		cur_addr = addr;
		/* a linear sweep: every byte belongs to exactly one instruction */
		ENSURE(x->addr == addr && x->len >= 1 && off + x->len <= size, "insn %zu at 0x%" PRIx64
		       " len %u", i, x->addr, x->len);
		ENSURE(kinstr_cfg__find_insn(cfg, addr) == (int)i, "find_insn");
		if (x->len > 1)
			ENSURE(kinstr_cfg__find_insn(cfg, addr + 1) == -ENOENT, "find_insn inside");
		if (in->flags & KINSTR_CFG_I_INVALID) {
			struct kinstr_x86_insn y;
			int err = kinstr_x86__decode(code + off, size - off, addr, &y);

			ENSURE(err == -ENODATA || err == -EILSEQ, "invalid insn decodes: %d", err);
			ENSURE(x->flow == KINSTR_X86_FLOW_EXIT && (x->len == 1 || x->len == size - off),
			       "invalid insn len %u", x->len);
			want_f |= KINSTR_CFG_F_INVALID;
			truncated |= err == -ENODATA;
		} else {
			struct kinstr_x86_insn y;
			char txt[256];

			ENSURE(kinstr_x86__decode(code + off, size - off, addr, &y) == 0 &&
			       !memcmp(&y, x, sizeof(y)), "cfg's decode differs from a fresh one");
			check_insn(x);
			ENSURE(kinstr_x86__format(x, txt, sizeof(txt)) == 0 && txt[0] &&
			       kinstr_x86__mnemonic_name(x)[0], "format");
			/* a far jmp (through memory: the only kind in 64-bit mode) counts as indirect */
			if (x->flow == KINSTR_X86_FLOW_JMP_IND ||
			    (x->flow == KINSTR_X86_FLOW_EXIT && !strcmp(kinstr_x86__mnemonic_name(x), "jmp")))
				want_f |= KINSTR_CFG_F_INDIRECT_JMP;
			if (x->flow == KINSTR_X86_FLOW_CALL_IND)
				want_f |= KINSTR_CFG_F_INDIRECT_CALL;
			if (x->flow == KINSTR_X86_FLOW_EXIT)
				want_f |= KINSTR_CFG_F_EXIT;
		}

		/* direct branches resolved to instruction starts, or flagged */
		if (in->target_insn != NONE) {
			const struct kinstr_cfg_insn *t = kinstr_cfg__insn(cfg, in->target_insn);

			ENSURE(t && is_direct(x) && t->x.addr == x->target, "target_insn %u",
			       in->target_insn);
			ENSURE((t->flags & (KINSTR_CFG_I_TARGET | KINSTR_CFG_I_LEADER)) ==
			       (KINSTR_CFG_I_TARGET | KINSTR_CFG_I_LEADER), "target not a leader");
			ENSURE((in->live_out & t->live_in) == t->live_in, "live_out misses the target's");
		} else if (is_direct(x) && !(in->flags & KINSTR_CFG_I_INVALID) &&
			   inside(x->target, start, size) &&
			   !(x->flow == KINSTR_X86_FLOW_CALL && x->target == start) &&
			   !(x->flow != KINSTR_X86_FLOW_CALL && x->target == ed->return_thunk)) {
			ENSURE(kinstr_cfg__find_insn(cfg, x->target) < 0 &&
			       (in->flags & KINSTR_CFG_I_BAD_TARGET), "unresolved target 0x%" PRIx64,
			       x->target);
		}
		if (in->flags & KINSTR_CFG_I_BAD_TARGET)
			want_f |= KINSTR_CFG_F_BAD_TARGET;

		/* blocks */
		ENSURE(b && i >= b->first && i < b->first + b->count && addr >= b->start &&
		       addr < b->end, "insn %zu not in its block %u", i, in->block);
		ENSURE(!!(in->flags & KINSTR_CFG_I_LEADER) == (i == b->first), "leader flag");
		if (in->flags & KINSTR_CFG_I_TARGET)
			ENSURE(in->flags & KINSTR_CFG_I_LEADER, "target not a leader");
		if (i > 0) {
			const struct kinstr_cfg_insn *p = kinstr_cfg__insn(cfg, i - 1);
			int pp = !!(p->flags & KINSTR_CFG_I_PADDING), ip = !!(in->flags & KINSTR_CFG_I_PADDING);
			int int3_run = p->x.flow == KINSTR_X86_FLOW_INT3 &&
				       in->x.flow == KINSTR_X86_FLOW_INT3 &&
				       !((p->flags | in->flags) & KINSTR_CFG_I_INVALID);
			int lead = (in->flags & KINSTR_CFG_I_TARGET) || (ip && !pp) ||
				   (!(pp && ip) && !int3_run && leaves_line(cfg, p, code, size, start));

			ENSURE(!!(in->flags & KINSTR_CFG_I_LEADER) == lead, "leader %#x after %#x flow %u",
			       in->flags, p->flags, p->x.flow);
			/* padding is a suffix */
			ENSURE(!pp || ip, "padding then code");
		} else {
			ENSURE(!(in->flags & KINSTR_CFG_I_PADDING), "first insn is padding");
		}

		/* liveness: defined bits only, rsp always, and a fixpoint of the equations */
		ENSURE(!(in->live_in & ~ALL) && !(in->live_out & ~ALL), "live bits %#x %#x",
		       in->live_in, in->live_out);
		ENSURE((in->live_in & RSP_BIT) && (in->live_out & RSP_BIT), "rsp dead");
		if (x->flow != KINSTR_X86_FLOW_INT3 && x->flow != KINSTR_X86_FLOW_UD2)
			ENSURE((in->live_in & x->regs_read) == x->regs_read, "reads %#x live_in %#x",
			       x->regs_read, in->live_in);
		if (x->flow == KINSTR_X86_FLOW_CALL || x->flow == KINSTR_X86_FLOW_CALL_IND)
			kill = FLAGS_BIT;
		else if (x->flow == KINSTR_X86_FLOW_INT3 || x->flow == KINSTR_X86_FLOW_UD2)
			kill = 0;
		else
			kill = x->regs_killed;
		ENSURE((in->live_in & (in->live_out & ~kill)) == (in->live_out & ~kill),
		       "live_out %#x kill %#x live_in %#x", in->live_out, kill, in->live_in);
		if (falls(cfg, i)) {
			uint32_t next = kinstr_cfg__insn(cfg, i + 1)->live_in;

			ENSURE((in->live_out & next) == next, "live_out %#x misses next %#x",
			       in->live_out, next);
		}
		addr += x->len;
	}
	ENSURE(addr == start + size, "instructions end at 0x%" PRIx64, addr);
	if (truncated)
		want_f |= KINSTR_CFG_F_TRUNCATED;
	ENSURE((f & (KINSTR_CFG_F_INVALID | KINSTR_CFG_F_TRUNCATED | KINSTR_CFG_F_INDIRECT_JMP |
		     KINSTR_CFG_F_INDIRECT_CALL | KINSTR_CFG_F_EXIT)) == (want_f & ~KINSTR_CFG_F_BAD_TARGET),
	       "flags %#x want %#x", f, want_f);
	if (want_f & KINSTR_CFG_F_BAD_TARGET)
		ENSURE(f & KINSTR_CFG_F_BAD_TARGET, "BAD_TARGET insn, no BAD_TARGET flag");

	/* blocks tile the instructions; successors are exactly fall-through and branch target */
	cur_what = "block";
	for (k = 0, i = 0; k < nb; k++) {
		const struct kinstr_cfg_block *b = kinstr_cfg__block(cfg, k);
		size_t last = b->first + b->count - 1;
		const struct kinstr_cfg_insn *l;
		uint32_t succ[2] = { NONE, NONE }, ns = 0;

		cur_addr = b->start;
		ENSURE(b->first == i && b->count >= 1 && last < n, "block %zu: first %u count %u",
		       k, b->first, b->count);
		l = kinstr_cfg__insn(cfg, last);
		ENSURE(b->start == kinstr_cfg__insn(cfg, b->first)->x.addr &&
		       b->end == l->x.addr + l->x.len, "block %zu bounds", k);
		ENSURE(!(b->exits & ~0xfu), "exits %#x", b->exits);
		if (falls(cfg, last))
			succ[ns++] = kinstr_cfg__insn(cfg, last + 1)->block;
		if (l->target_insn != NONE)
			succ[ns++] = kinstr_cfg__insn(cfg, l->target_insn)->block;
		ENSURE(b->succ[0] == succ[0] && b->succ[1] == succ[1], "block %zu succ %u %u want %u %u",
		       k, b->succ[0], b->succ[1], succ[0], succ[1]);
		i = last + 1;
	}
	ENSURE(i == n, "blocks cover %zu of %zu insns", i, n);

	/* extra edges: flagged, resolved, and part of liveness */
	cur_what = "edge";
	for (k = 0; ed && k < ed->n; k++) {
		const struct kinstr_cfg_edge *e = &ed->e[k];
		const struct kinstr_cfg_insn *src;
		int t;

		cur_addr = e->from;
		if (!inside(e->from, start, size))
			continue;
		src = kinstr_cfg__insn(cfg, containing(cfg, e->from));
		ENSURE(src->flags & KINSTR_CFG_I_EXTRA_EDGE, "edge source not flagged");
		if (!inside(e->to, start, size))
			continue;
		t = kinstr_cfg__find_insn(cfg, e->to);
		if (t < 0) {
			ENSURE((f & KINSTR_CFG_F_BAD_TARGET) && (src->flags & KINSTR_CFG_I_BAD_TARGET),
			       "edge into an instruction not flagged");
			continue;
		}
		ENSURE(kinstr_cfg__insn(cfg, t)->flags & KINSTR_CFG_I_TARGET, "edge target not flagged");
		ENSURE((src->live_out & kinstr_cfg__insn(cfg, t)->live_in) ==
		       kinstr_cfg__insn(cfg, t)->live_in, "live_out misses the edge target's");
	}
	for (i = 0; i < n; i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
		int any = 0;

		for (k = 0; ed && k < ed->n; k++)
			any |= inside(ed->e[k].from, start, size) && containing(cfg, ed->e[k].from) == i;
		cur_addr = in->x.addr;
		ENSURE(!!(in->flags & KINSTR_CFG_I_EXTRA_EDGE) == any, "EXTRA_EDGE flag");
	}

	/* has_target_in() against the slow way, for site-like and random ranges */
	cur_what = "has_target_in";
	for (k = 0; k < 4; k++) {
		uint64_t v = rng_next(rng);
		uint64_t lo = k & 1 ? start + v % (size + 8) - 4 :
			      kinstr_cfg__insn(cfg, v % n)->x.addr;
		uint64_t hi = lo + (k < 2 ? JMP_LEN : (v >> 32) % 64);

		cur_addr = lo;
		ENSURE(kinstr_cfg__has_target_in(cfg, lo, hi) == target_in(cfg, ed, lo, hi),
		       "[0x%" PRIx64 ", 0x%" PRIx64 ")", lo, hi);
	}
}

/* ---- sites ----------------------------------------------------------------------------------- */

static const char *site_why(const struct kinstr_site *s, uint64_t *rng)
{
	static char buf[256];
	size_t small = 1 + rng_next(rng) % 24;
	char *tiny = malloc(small), none = 'x';

	if (!tiny)
		abort();
	ENSURE(kinstr_site__why(s, buf, sizeof(buf)) == buf && strlen(buf) < sizeof(buf), "why");
	/* a short buffer is cut, still terminated; size 0 writes nothing */
	ENSURE(kinstr_site__why(s, tiny, small) == tiny && strnlen(tiny, small) < small,
	       "why into %zu bytes", small);
	ENSURE(kinstr_site__why(s, &none, 0) == &none && none == 'x', "why into 0 bytes");
	free(tiny);
	ENSURE(kinstr_site_rule__id(s->rule)[0] && kinstr_site_class__str(s->cls)[0], "names");
	return buf;
}

static void check_sites(const struct kinstr_fn *fn, const uint8_t *code, size_t size,
			uint64_t start, uint64_t *rng)
{
	const struct kinstr_cfg *cfg = kinstr_fn__cfg(fn);
	size_t n = kinstr_cfg__insn_cnt(cfg), i, j;
	uint32_t f = kinstr_cfg__flags(cfg);
	int frule = 0;

	if (f & KINSTR_CFG_F_INVALID)
		frule = KINSTR_RULE_UNDECODABLE;
	else if (f & KINSTR_CFG_F_BAD_TARGET)
		frule = KINSTR_RULE_BAD_TARGET;
	else if (f & KINSTR_CFG_F_TRUNCATED)
		frule = KINSTR_RULE_TRUNCATED;
	for (i = 0; !frule && i < n; i++)	/* std anywhere: probe code assumes DF clear */
		if (kinstr_cfg__insn(cfg, i)->x.mnemonic == ZYDIS_MNEMONIC_STD)
			frule = KINSTR_RULE_DIRECTION_FLAG;

	ENSURE(kinstr_fn__site_cnt(fn) == n && !kinstr_fn__site(fn, n), "%zu sites for %zu insns",
	       kinstr_fn__site_cnt(fn), n);
	errno = 0;
	ENSURE(!kinstr_fn__site_at(fn, start + size) && errno == ERANGE, "site past the end");
	if (start) {
		errno = 0;
		ENSURE(!kinstr_fn__site_at(fn, start - 1) && errno == ERANGE, "site before the start");
	}

	for (i = 0; i < n; i++) {
		const struct kinstr_site *s = kinstr_fn__site(fn, i);
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
		const struct kinstr_x86_insn *x = &in->x;
		const char *why;

		cur_what = "site";
		cur_addr = s->addr;
		/* sites tile the function: one per instruction, back to back */
		ENSURE(s->addr == (i ? kinstr_fn__site(fn, i - 1)->addr +
				   kinstr_fn__site(fn, i - 1)->insn_len : start),
		       "site %zu does not follow the previous one", i);
		ENSURE(s->addr == x->addr && s->insn_len == x->len, "site %zu is not insn %zu", i, i);
		ENSURE(s->addr + s->insn_len <= start + size, "site runs past the end");
		ENSURE(kinstr_fn__site_at(fn, s->addr) == s, "site_at");
		if (s->insn_len > 1) {
			errno = 0;
			ENSURE(!kinstr_fn__site_at(fn, s->addr + 1) && errno == EILSEQ, "site_at inside");
		}
		ENSURE(s->cls < KINSTR_SITE_NR_CLASSES && s->rule < KINSTR_RULE_NR, "cls %u rule %u",
		       s->cls, s->rule);
		why = site_why(s, rng);
		ENSURE(why[0], "empty why for a %s site (rule %s)", kinstr_site_class__str(s->cls),
		       kinstr_site_rule__id(s->rule));

		if (frule) {
			/* boundaries not proven: nothing in the function is safe */
			ENSURE(s->cls == KINSTR_SITE_REFUSED && s->rule == frule, "%s site with rule %s",
			       kinstr_site_class__str(s->cls), kinstr_site_rule__id(s->rule));
			continue;
		}
		if (s->cls != KINSTR_SITE_JUMP) {
			ENSURE(s->rule != KINSTR_RULE_NONE && s->displaced_len == s->insn_len,
			       "non-jump site: rule %u displaced %u", s->rule, s->displaced_len);
		}
		if (s->cls == KINSTR_SITE_REFUSED) {
			/* no kernel view: nothing is reserved; function-level rules were handled above */
			ENSURE(s->rule >= KINSTR_RULE_PADDING && s->rule <= KINSTR_RULE_NOT_RELOCATABLE,
			       "refused with rule %s",
			       kinstr_site_rule__id(s->rule));
			ENSURE(!!(in->flags & KINSTR_CFG_I_PADDING) == (s->rule == KINSTR_RULE_PADDING),
			       "padding rule");
			if (s->rule == KINSTR_RULE_NOT_RELOCATABLE)
				ENSURE(s->detail && s->detail[0] && x->flow != KINSTR_X86_FLOW_CALL,
				       "not-relocatable without detail");
			continue;
		}

		/* trap and jump sites: the instruction may run out of line */
		ENSURE(!(in->flags & (KINSTR_CFG_I_PADDING | KINSTR_CFG_I_INVALID)) &&
		       x->flow != KINSTR_X86_FLOW_INT3 && x->flow != KINSTR_X86_FLOW_UD2 &&
		       x->flow != KINSTR_X86_FLOW_EXIT && !(x->attr & KINSTR_X86_A_PRIVILEGED),
		       "%s site on %s", kinstr_site_class__str(s->cls), kinstr_x86__mnemonic_name(x));
		if (s->cls == KINSTR_SITE_TRAP) {
			ENSURE(s->rule >= KINSTR_RULE_INDIRECT_JMP && s->rule < KINSTR_RULE_NR &&
			       s->rule != KINSTR_RULE_DISPLACES_RESERVED &&
			       s->rule != KINSTR_RULE_DIRECTION_FLAG, "trap with rule %s",
			       kinstr_site_rule__id(s->rule));
			ENSURE(!!(f & KINSTR_CFG_F_INDIRECT_JMP) == (s->rule == KINSTR_RULE_INDIRECT_JMP),
			       "indirect-jmp rule");
			if (s->rule == KINSTR_RULE_BRANCH_TARGET)
				ENSURE(s->rule_addr > s->addr && s->rule_addr < s->addr + JMP_LEN +
				       KINSTR_X86_MAX_INSN_LEN && target_in(cfg, NULL, s->rule_addr - 1,
									    s->rule_addr + 1),
				       "branch-target at 0x%" PRIx64, s->rule_addr);
			if (s->rule == KINSTR_RULE_DISPLACES_CALL) {
				const struct kinstr_site *c = kinstr_fn__site_at(fn, s->rule_addr);
				const struct kinstr_x86_insn *cx = c ? &kinstr_cfg__insn(cfg,
					(size_t)(c - kinstr_fn__site(fn, 0)))->x : NULL;

				/* a direct call is emulated where its return address can be pushed */
				ENSURE(cx && s->rule_addr < s->addr + JMP_LEN &&
				       (cx->flow == KINSTR_X86_FLOW_CALL_IND ||
					(cx->flow == KINSTR_X86_FLOW_CALL &&
					 cx->addr + cx->len < 0xffffffff80000000ULL)), "displaces-call 0x%" PRIx64,
				       s->rule_addr);
			}
			/* a call at a trap site is emulated; anything else runs relocated */
			if (x->flow != KINSTR_X86_FLOW_CALL)
				reloc_site(code + (s->addr - start), s->insn_len, s->addr, rng);
			continue;
		}

		/* jump sites: DESIGN.md's rules for the displaced range [addr, addr + 5..) */
		ENSURE(s->rule == KINSTR_RULE_NONE && !(f & KINSTR_CFG_F_INDIRECT_JMP),
		       "jump site with rule %s, flags %#x", kinstr_site_rule__id(s->rule), f);
		ENSURE(s->displaced_len >= JMP_LEN && s->displaced_len <= KINSTR_RELOC_MAX_IN &&
		       s->addr + s->displaced_len <= start + size, "displaced %u", s->displaced_len);
		ENSURE(s->live_len && s->live_len <= s->displaced_len, "live %u of %u", s->live_len,
		       s->displaced_len);
		for (j = i; kinstr_cfg__insn(cfg, j)->x.addr < s->addr + s->displaced_len; j++) {
			const struct kinstr_cfg_insn *d = kinstr_cfg__insn(cfg, j);

			cur_addr = d->x.addr;
			/* as few instructions as cover 5 bytes, ending on a boundary */
			ENSURE(d->x.addr < s->addr + JMP_LEN, "displaces more than needed");
			ENSURE(d->x.addr + d->x.len <= s->addr + s->displaced_len, "ends inside an insn");
			if (d->x.addr >= s->addr + s->live_len) {
				/* past the live bytes: single int3s right after a ret or direct jmp */
				const struct kinstr_cfg_insn *e = kinstr_cfg__insn(cfg, j - 1);

				ENSURE(d->x.len == 1 && code[d->x.addr - start] == 0xcc &&
				       !(d->flags & (KINSTR_CFG_I_TARGET | KINSTR_CFG_I_INVALID)),
				       "dead byte %s", kinstr_x86__mnemonic_name(&d->x));
				if (d->x.addr == s->addr + s->live_len)
					ENSURE((e->x.flow == KINSTR_X86_FLOW_RET && e->x.len == 1) ||
					       e->x.flow == KINSTR_X86_FLOW_JMP,
					       "filler after %s", kinstr_x86__mnemonic_name(&e->x));
				if (j + 1 == n)
					break;
				continue;
			}
			/* a direct call only as the last displaced instruction: the slot emulates it */
			if (d->x.flow == KINSTR_X86_FLOW_CALL)
				ENSURE(d->x.addr + d->x.len == s->addr + s->displaced_len &&
				       d->x.addr + d->x.len >= 0xffffffff80000000ULL,
				       "displaces a call that is not last or whose return cannot be pushed");
			ENSURE(!(d->flags & (KINSTR_CFG_I_PADDING | KINSTR_CFG_I_INVALID)) &&
			       d->x.flow != KINSTR_X86_FLOW_CALL_IND &&
			       d->x.flow != KINSTR_X86_FLOW_INT3 && d->x.flow != KINSTR_X86_FLOW_UD2 &&
			       d->x.flow != KINSTR_X86_FLOW_EXIT && !(d->x.attr & KINSTR_X86_A_PRIVILEGED),
			       "displaces %s", kinstr_x86__mnemonic_name(&d->x));
			if (j + 1 == n)
				break;
		}
		cur_addr = s->addr;
		/* no branch of the function lands inside, except on its first byte */
		ENSURE(!target_in(cfg, NULL, s->addr, s->addr + s->displaced_len),
		       "a branch target inside the displaced bytes");
		/* the call that ends a run is emulated, not relocated: what precedes it runs relocated */
		{
			const struct kinstr_cfg_insn *e = kinstr_cfg__insn(cfg, i);
			size_t len = s->live_len, m;

			for (m = i; m < n && kinstr_cfg__insn(cfg, m)->x.addr < s->addr + s->live_len; m++)
				e = kinstr_cfg__insn(cfg, m);
			if (e->x.flow == KINSTR_X86_FLOW_CALL)
				len = e->x.addr - s->addr;
			if (len)
				reloc_site(code + (s->addr - start), len, s->addr, rng);
		}
	}
}

/* ---- kinstr_cfg__new() with random options --------------------------------------------------- */

static uint32_t fake_entry_live(uint64_t target, int is_call, void *ctx)
{
	uint64_t seed = *(const uint64_t *)ctx;

	/* any pure function of the target will do; it must stay within the defined bits */
	return (uint32_t)((target ^ seed) * 0x9e3779b97f4a7c15ULL >> 40 | (uint64_t)is_call) & ALL;
}

static void cfg_with_options(const struct kinstr_fn *fn, const uint8_t *code, size_t size,
			     uint64_t start, unsigned int opt, uint64_t *rng)
{
	const struct kinstr_cfg *plain = kinstr_fn__cfg(fn);
	size_t n = kinstr_cfg__insn_cnt(plain), k, nr = opt >> 4;
	struct kinstr_cfg_opts opts;
	struct kinstr_cfg *cfg;
	struct edges ed;
	uint64_t v = rng_next(rng), seed = v;
	int variant = (v >> 8) & 7, plain_expected;

	memset(&ed, 0, sizeof(ed));
	if (opt & 4)
		ed.return_thunk = opt & 8 ? start + (v >> 16) % size : start + size + ((v >> 16) & 0xffff);
	for (k = 0; k < nr; k++) {
		uint64_t r = rng_next(rng);
		struct kinstr_cfg_edge *e = &ed.e[k];

		switch (r & 3) {
		case 0: e->from = r & 4 ? start - 1 - ((r >> 3) & 15) : start + size + ((r >> 3) & 15); break;
		default: e->from = start + (r >> 3) % size; break;
		}
		switch ((r >> 32) & 7) {
		case 0: case 1: case 2:
			e->to = kinstr_cfg__insn(plain, (r >> 35) % n)->x.addr; break;
		case 3: e->to = start + (r >> 35) % size; break;
		case 4: e->to = start + size + ((r >> 35) & 31); break;
		case 5: e->to = ed.return_thunk ? ed.return_thunk : start - 0x1000; break;
		case 6: e->to = start; break;
		default: e->to = start + size; break;
		}
	}

	memset(&opts, 0, sizeof(opts));
	opts.return_thunk = ed.return_thunk;
	opts.entry_live = (v >> 12) & 1 ? fake_entry_live : NULL;
	opts.ctx = &seed;
	opts.edges = nr ? ed.e : NULL;
	opts.nr_edges = nr;
	switch (variant) {
	case 4:	/* an older caller without edges */
		opts.sz = offsetof(struct kinstr_cfg_opts, edges);
		break;
	case 5:	/* ... or with only the return thunk */
		opts.sz = offsetof(struct kinstr_cfg_opts, entry_live);
		break;
	case 6:	/* too small to hold anything: refused */
		opts.sz = (v >> 16) % offsetof(struct kinstr_cfg_opts, entry_live);
		errno = 0;
		ENSURE(!kinstr_cfg__new(code, size, start, &opts) && errno == EINVAL, "opts.sz %zu",
		       opts.sz);
		return;
	default:
		opts.sz = sizeof(opts);
		break;
	}
	/* what the library will see of the options */
	ed.n = variant == 4 || variant == 5 || variant == 7 ? 0 : nr;
	if (variant == 7)
		ed.return_thunk = 0;
	plain_expected = !ed.n && !ed.return_thunk && (variant >= 5 || !opts.entry_live);
	cfg = kinstr_cfg__new(code, size, start, variant == 7 ? NULL : &opts);
	ENSURE(cfg, "kinstr_cfg__new: %s", strerror(errno));
	check_cfg(cfg, code, size, start, &ed, rng);

	/* options change the graph, never the decode */
	ENSURE(kinstr_cfg__insn_cnt(cfg) == n, "insn count");
	for (k = 0; k < n; k++)
		ENSURE(!memcmp(&kinstr_cfg__insn(cfg, k)->x, &kinstr_cfg__insn(plain, k)->x,
			       sizeof(struct kinstr_x86_insn)), "insn %zu decoded differently", k);
	/* without edges or thunk the result is the plain one, liveness and all */
	if (plain_expected) {
		ENSURE(kinstr_cfg__flags(cfg) == kinstr_cfg__flags(plain), "flags differ");
		for (k = 0; k < n; k++) {
			const struct kinstr_cfg_insn *a = kinstr_cfg__insn(cfg, k);
			const struct kinstr_cfg_insn *b = kinstr_cfg__insn(plain, k);

			ENSURE(a->flags == b->flags && a->live_in == b->live_in &&
			       a->live_out == b->live_out && a->block == b->block &&
			       a->target_insn == b->target_insn, "insn %zu differs", k);
		}
	}
	kinstr_cfg__free(cfg);
}

/* ---- entry ----------------------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t regions[4] = {
		0xffffffff81000000ULL, 0xffffffffc0000000ULL, 0xffffffff81000000ULL,
		0xfffffffffe000000ULL,
	};
	const uint8_t *code;
	struct kinstr_fn *fn;
	unsigned int opt;
	uint64_t start, rng;
	uint32_t seed;

	if (size <= HDR)
		return -1;	/* not an input: keep it out of the corpus */
	opt = data[3];
	start = regions[opt & 3] + (data[0] | data[1] << 8 | (uint32_t)data[2] << 16);
	memcpy(&seed, data + 4, 4);
	code = data + HDR;
	size -= HDR;
	rng = seed ^ (uint64_t)size << 32;
	cur_start = start;

	fn = kinstr_fn__analyze_bytes(NULL, code, size, start);
	if (!fn) {
		/* only a function that wraps around the address space is refused */
		ENSURE(errno == EINVAL && start + size < start, "analyze: %s", strerror(errno));
		return 0;
	}
	check_cfg(kinstr_fn__cfg(fn), code, size, start, &(struct edges){ .n = 0 }, &rng);
	check_sites(fn, code, size, start, &rng);
	cfg_with_options(fn, code, size, start, opt, &rng);
	reloc_raw(code, size, start, &rng);
	kinstr_fn__free(fn);
	return 0;
}
