// SPDX-License-Identifier: GPL-2.0
/*
 * The code cache's builder (lib/cache/build.c, place.c, emit.c) over every function of the shipped snapshots of live
 * kernels (tests/data/sample-*.snap), each copy read back with Zydis, independently of the
 * library: the copy is exactly its blocks' counters and its instructions' counterparts, back to
 * back; a copied instruction has the original's bytes; a re-aimed one the original's mnemonic and
 * the same absolute target (a branch inside the function: its target block's counter in the
 * copy); a call is `push $R; jmp target` with R the address after it in the original; a native
 * instruction a jmp to itself in the original; a jump label tests its key. Every place where
 * control comes back from the original (the entry, each return address, after a native run, a
 * fixup) is a re-entry point to the right place of the copy, and one marked a jump has 5 bytes
 * clear of reservations, native instructions and other points.
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/x86.h>
#include "check.h"

#define COUNTERS 0x2a8c0ull	/* a per-CPU offset, as alloc_percpu() gives them */
#define KEY_OFF 0x100000ull	/* fake keys and trampolines: near the text, in reach */
#define TRAMP 0x200000ull

static int fake_jump_label(uint64_t site, uint64_t *key, int *branch, void *ctx)
{
	*key = site + KEY_OFF;
	*branch = (int)(site & 1);
	return 0;
}

static int fake_static_call(uint64_t site, uint64_t *tramp, int *tail, void *ctx)
{
	*tramp = site + TRAMP;
	*tail = 0;
	return 0;
}

struct tally {
	size_t funcs, built, blocks, insns, saves_flags, reentries, jump_reentries, edges, unseen, carried;
	size_t how[KINSTR_CACHE_NR_HOW], why[KINSTR_CACHE_NR_WHY], refused[KINSTR_CACHE_R_NR];
	size_t failures;
};

static ZydisDecoder zdec;

static int zdecode(const uint8_t *b, size_t len, ZydisDecodedInstruction *zi, ZydisDecodedOperand *ops)
{
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zdec, b, len, zi, ops)) ? 0 : -1;
}

/* The absolute branch target or memory operand of a decoded instruction at addr; 0 if none. */
static uint64_t abs_target(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops, uint64_t addr)
{
	ZyanU64 t;
	unsigned int i;

	for (i = 0; i < zi->operand_count_visible; i++)
		if ((ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative) ||
		    (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[i].mem.base == ZYDIS_REGISTER_RIP))
			if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, &ops[i], addr, &t)))
				return t;
	return 0;
}

#define FAIL(...) do { if (t->failures++ < 20) CHECK(0, __VA_ARGS__); return; } while (0)

/* Where control entering instruction i of the copy lands: its block's start, or its counter before it. */
static uint64_t landing(const struct kinstr_cache_fn *c, size_t i)
{
	const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, i);
	const struct kinstr_cache_block *b = kinstr_cache_fn__block(c, ci->block);

	return b->first == i ? b->copy : ci->counted ? b->counter : ci->copy;
}

/* ... and a path continued into it (a callee returned, the entry): the edge counter before it all. */
static uint64_t edge_landing(const struct kinstr_cache_fn *c, size_t i)
{
	const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, i);

	return ci->edges & KINSTR_CACHE_I_EDGE_IN ?
	       landing(c, i) - 16 - 2 * !!(ci->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF) : landing(c, i);
}

/* Not the counter sequence on the counter at v ([pushfq] push; movabs; incq %gs:; pop [popfq])? */
static int counter_differs(const uint8_t *b, uint64_t v, int pf)
{
	uint8_t ctr[18];
	size_t l = 0;

	if (pf)
		ctr[l++] = 0x9c;
	memcpy(ctr + l, "\x50\x48\xb8", 3);
	memcpy(ctr + l + 3, &v, 8);
	memcpy(ctr + l + 11, "\x65\x48\xff\x00\x58", 5);
	l += 16;
	if (pf)
		ctr[l++] = 0x9d;
	return memcmp(b, ctr, l) != 0;
}

static int find(const struct kinstr_cache_fn *c, uint64_t a)
{
	size_t i;

	for (i = 0; i < kinstr_cache_fn__insn_cnt(c); i++)
		if (kinstr_cache_fn__insn(c, i)->addr == a)
			return (int)i;
	return -1;
}

static const struct kinstr_cache_reentry *reentry_at(const struct kinstr_cache_fn *c, uint64_t a)
{
	size_t i;

	for (i = 0; i < kinstr_cache_fn__reentry_cnt(c); i++)
		if (kinstr_cache_fn__reentry(c, i)->addr == a)
			return kinstr_cache_fn__reentry(c, i);
	return NULL;
}

/*
 * Are the flags dead just before instruction ci, by Zydis's reading (it writes all six status
 * flags and reads none) or by the C calling convention (the first instruction after the ftrace
 * NOP, a return)?
 */
static int flags_dead_at(const struct kinstr_kernel *k, const struct kinstr_func *f, const struct kinstr_cache_insn *ci)
{
	const uint32_t st = ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF | ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_ZF | ZYDIS_CPUFLAG_SF |
			    ZYDIS_CPUFLAG_OF;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	uint64_t nop = f->addr + f->endbr;

	if (zdecode(kinstr_kernel__text(k, ci->addr, ci->len), ci->len, &zi, ops))
		return 0;
	if ((kinstr_kernel__reserved(k, nop, 1) & (1u << KINSTR_R_FTRACE)) && ci->addr == nop + 5)
		return 1;
	if (zi.mnemonic == ZYDIS_MNEMONIC_RET ||
	    (zi.mnemonic == ZYDIS_MNEMONIC_JMP && abs_target(&zi, ops, ci->addr) == kinstr_kernel__return_thunk(k)))
		return 1;
	return zi.cpu_flags && ((zi.cpu_flags->modified | zi.cpu_flags->set_0 | zi.cpu_flags->set_1 |
				 zi.cpu_flags->undefined) & st) == st && !(zi.cpu_flags->tested & st);
}

static void verify(struct tally *t, const struct kinstr_kernel *k, const struct kinstr_func *f,
		   const struct kinstr_cache_fn *c)
{
	uint8_t counted[4096] = { 0 }, edge_seen[8192] = { 0 };
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT], oops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi, zo;
	const uint8_t *bytes = kinstr_cache_fn__bytes(c);
	uint64_t base = kinstr_cache_fn__copy_addr(c), at = base;
	size_t i, n = kinstr_cache_fn__insn_cnt(c);

	for (i = 0; i < n; i++) {
		const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, i);
		const struct kinstr_cache_block *b = kinstr_cache_fn__block(c, ci->block);
		const uint8_t *orig = kinstr_kernel__text(k, ci->addr, ci->len), *p;
		uint64_t want, cp = ci->copy;
		size_t cl = ci->copy_len;
		int pf;

		if (ci->edges & KINSTR_CACHE_I_EDGE_IN) {	/* the edge falling into the block, first */
			const struct kinstr_cache_edge *e = kinstr_cache_fn__edge(c, ci->edge);
			/* ... or the counter of the block before, which the original runs into (counted after it) */
			const struct kinstr_cache_block *pb = ci->block ? kinstr_cache_fn__block(c, ci->block - 1) : NULL;
			int carried = pb && pb->counted_after && pb->ctr == ci->in_counter && pb->counter == at;

			pf = !!(ci->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF);
			if (carried && b->first == i && (!e || e->counter == ci->in_counter)) {
				if (counted[ci->block - 1]++ || pb->saves_flags != pf)
					FAIL("%s: block %u counted twice, or its flags saving misread", f->name, ci->block - 1);
				t->carried++;
			}
			if (!carried && !e)
				FAIL("%s+0x%llx: an edge-in counter neither an edge's nor the block before's", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			if (e && (e->insn != i || b->first != i || e->to != ci->block || e->counter != ci->in_counter ||
				  (e->kind != KINSTR_CACHE_EDGE_FALL && e->kind != KINSTR_CACHE_EDGE_ENTRY) ||
				  (e->kind == KINSTR_CACHE_EDGE_ENTRY) != (i == 0)))
				FAIL("%s+0x%llx: an edge-in counter with no edge into its block", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			if (!pf && !flags_dead_at(k, f, ci))
				FAIL("%s+0x%llx: an edge counter without pushfq where the flags may be live", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			if (counter_differs(bytes + (at - base), COUNTERS + 8ull * ci->in_counter, pf))
				FAIL("%s+0x%llx: edge-in counter bytes", f->name, (unsigned long long)(ci->addr - f->addr));
			at += 16 + 2 * pf;
			if (e) {
				edge_seen[ci->edge]++;
				t->edges++;
			}
		}
		if (b->first == i && b->copy != at)
			FAIL("%s: block %u starts at 0x%llx in the copy, not 0x%llx", f->name, ci->block,
			     (unsigned long long)b->copy, (unsigned long long)at);
		if (ci->counted) {
			uint8_t ctr[18];
			uint64_t v = COUNTERS + 8ull * ci->block;
			size_t l = 0;

			if (b->counter != at || b->ctr != ci->block || counted[ci->block]++)
				FAIL("%s: block %u's counter at 0x%llx, not 0x%llx, or twice", f->name, ci->block,
				     (unsigned long long)b->counter, (unsigned long long)at);
			/* where the flags are not saved, this instruction shows them dead */
			if (!b->saves_flags && !flags_dead_at(k, f, ci))
				FAIL("%s+0x%llx: a counter without pushfq where the flags may be live", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			if (b->saves_flags)
				ctr[l++] = 0x9c;
			memcpy(ctr + l, "\x50\x48\xb8", 3);
			memcpy(ctr + l + 3, &v, 8);
			memcpy(ctr + l + 11, "\x65\x48\xff\x00\x58", 5);
			l += 16;
			if (b->saves_flags)
				ctr[l++] = 0x9d;
			if (memcmp(bytes + (at - base), ctr, l))
				FAIL("%s: block %u's counter bytes", f->name, ci->block);
			at += l;
			t->blocks++;
			t->saves_flags += b->saves_flags;
		}
		if (ci->copy != at || !orig)
			FAIL("%s+0x%llx: at 0x%llx in the copy, not 0x%llx", f->name,
			     (unsigned long long)(ci->addr - f->addr), (unsigned long long)ci->copy, (unsigned long long)at);
		p = bytes + (at - base);
		t->how[ci->how]++;
		t->insns++;
		if (zdecode(orig, ci->len, &zo, oops))
			FAIL("%s+0x%llx: Zydis does not decode the original", f->name, (unsigned long long)(ci->addr - f->addr));
		if (ci->edges & KINSTR_CACHE_I_EDGE_OUT) {	/* its taken way, or its exit, counted */
			size_t ei = ci->edge + !!(ci->edges & KINSTR_CACHE_I_EDGE_IN);
			const struct kinstr_cache_edge *e = kinstr_cache_fn__edge(c, ei);
			int jl = ci->how == KINSTR_CACHE_JUMP_LABEL;

			pf = !!(ci->edges & KINSTR_CACHE_I_EDGE_OUT_PUSHF);
			if (!e || e->insn != i || e->from != ci->block ||
			    (e->kind != KINSTR_CACHE_EDGE_TAKEN && e->kind != KINSTR_CACHE_EDGE_EXIT))
				FAIL("%s+0x%llx: an edge-out counter with no edge out of its block", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			edge_seen[ei]++;
			t->edges++;
			if (jl || zo.meta.category == ZYDIS_CATEGORY_COND_BR) {
				/* [cmpl] j<not cc> rel8 over pushfq; counter; popfq; then jmp rel32 to the target */
				const uint8_t *q = p + (jl ? 7 : 0);
				uint8_t notcc = jl ? ((ci->addr & 1) ? 0x7f : 0x7e) : (uint8_t)(0x70 | ((orig[zo.length - zo.raw.imm[0].size / 8 - 1] & 0xf) ^ 1));
				int tgt;

				want = jl ? 0 : abs_target(&zo, oops, ci->addr);
				if (jl && (zdecode(p, 7, &zi, ops) || zi.mnemonic != ZYDIS_MNEMONIC_CMP ||
					   abs_target(&zi, ops, cp) != ci->addr + KEY_OFF))
					FAIL("%s+0x%llx: a counted jump label without its test", f->name,
					     (unsigned long long)(ci->addr - f->addr));
				if (cl != (jl ? 7u : 0u) + 25 || q[0] != notcc || q[1] != 23 || !pf ||
				    counter_differs(q + 2, COUNTERS + 8ull * e->counter, 1) ||
				    zdecode(q + 20, 5, &zi, ops) || zi.mnemonic != ZYDIS_MNEMONIC_JMP)
					FAIL("%s+0x%llx: a counted conditional branch is not j<not cc>; counter; jmp", f->name,
					     (unsigned long long)(ci->addr - f->addr));
				if (!jl) {
					tgt = find(c, want);
					if (tgt >= 0)
						want = landing(c, (size_t)tgt);
					if (abs_target(&zi, ops, cp + 20) != want || (tgt >= 0) != (e->kind == KINSTR_CACHE_EDGE_TAKEN) ||
					    (tgt >= 0 && e->to != kinstr_cache_fn__insn(c, (size_t)tgt)->block))
						FAIL("%s+0x%llx: a counted branch aims wrong", f->name,
						     (unsigned long long)(ci->addr - f->addr));
				}
				at += cl;
				continue;
			}
			if (!pf && !flags_dead_at(k, f, ci))
				FAIL("%s+0x%llx: an exit's edge counter without pushfq where the flags may be live", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			if (counter_differs(p, COUNTERS + 8ull * e->counter, pf))
				FAIL("%s+0x%llx: edge-out counter bytes", f->name, (unsigned long long)(ci->addr - f->addr));
			p += 16 + 2 * pf;
			cp += 16 + 2 * pf;
			cl -= 16 + 2 * pf;
			at += 16 + 2 * pf;
		}
		switch (ci->how) {
		case KINSTR_CACHE_COPY:
			if (cl != ci->len || memcmp(p, orig, ci->len))
				FAIL("%s+0x%llx: a copy that differs", f->name, (unsigned long long)(ci->addr - f->addr));
			break;
		case KINSTR_CACHE_RELOC: {
			int tgt;

			if (zdecode(p, cl, &zi, ops) || zi.length != cl || zi.mnemonic != zo.mnemonic)
				FAIL("%s+0x%llx: the re-aimed instruction is not the original's", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			want = abs_target(&zo, oops, ci->addr);
			tgt = zo.meta.category == ZYDIS_CATEGORY_COND_BR || zo.meta.category == ZYDIS_CATEGORY_UNCOND_BR ?
			      find(c, want) : -1;
			if (tgt >= 0)
				want = landing(c, (size_t)tgt);
			if (abs_target(&zi, ops, cp) != want)
				FAIL("%s+0x%llx: aims at 0x%llx, not 0x%llx", f->name, (unsigned long long)(ci->addr - f->addr),
				     (unsigned long long)abs_target(&zi, ops, cp), (unsigned long long)want);
			break;
		}
		case KINSTR_CACHE_CALL:
		case KINSTR_CACHE_STATIC_CALL: {
			int32_t imm;

			want = ci->how == KINSTR_CACHE_CALL ? abs_target(&zo, oops, ci->addr) : ci->addr + TRAMP;
			memcpy(&imm, p + 1, 4);
			if (cl != 10 || p[0] != 0x68 || (uint64_t)(int64_t)imm != ci->addr + ci->len ||
			    zdecode(p + 5, 5, &zi, ops) || zi.mnemonic != ZYDIS_MNEMONIC_JMP ||
			    abs_target(&zi, ops, cp + 5) != want)
				FAIL("%s+0x%llx: not push $return; jmp target", f->name, (unsigned long long)(ci->addr - f->addr));
			/* the callee returns to the original: a re-entry point there, into the copy */
			if (i + 1 < n && kinstr_cache_fn__insn(c, i + 1)->how != KINSTR_CACHE_NATIVE &&
			    (!reentry_at(c, ci->addr + ci->len) || (reentry_at(c, ci->addr + ci->len)->copy != edge_landing(c, i + 1) &&
								    reentry_at(c, ci->addr + ci->len)->copy != landing(c, i + 1))))
				FAIL("%s+0x%llx: no re-entry at the return address", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			break;
		}
		case KINSTR_CACHE_NATIVE:
			if (cl != 5 || zdecode(p, 5, &zi, ops) || zi.mnemonic != ZYDIS_MNEMONIC_JMP ||
			    abs_target(&zi, ops, cp) != ci->addr)
				FAIL("%s+0x%llx: a native instruction not left to the original", f->name,
				     (unsigned long long)(ci->addr - f->addr));
			break;
		case KINSTR_CACHE_JUMP_LABEL: {
			uint64_t key;

			if (cl != 13 || zdecode(p, 7, &zi, ops) || zi.mnemonic != ZYDIS_MNEMONIC_CMP)
				FAIL("%s+0x%llx: a jump label without its test", f->name, (unsigned long long)(ci->addr - f->addr));
			key = abs_target(&zi, ops, cp);
			if (key != ci->addr + KEY_OFF || zdecode(p + 7, 6, &zi, ops) ||
			    zi.mnemonic != ((ci->addr & 1) ? ZYDIS_MNEMONIC_JLE : ZYDIS_MNEMONIC_JNLE))
				FAIL("%s+0x%llx: a jump label's key or condition", f->name, (unsigned long long)(ci->addr - f->addr));
			break;
		}
		}
		at += cl;
	}
	for (i = 0; i < kinstr_cache_fn__block_cnt(c) && i < sizeof(counted); i++) {
		const struct kinstr_cache_block *b = kinstr_cache_fn__block(c, i);

		if (counted[i] == 1)
			continue;
		/* a block of a native run (filldir64's user stores) shares the counter after the run */
		if (!counted[i] && b->counted_after && b->ctr != i && b->counter >= base &&
		    b->counter + 16 + 2 * b->saves_flags <= base + kinstr_cache_fn__size(c) &&
		    !counter_differs(bytes + (b->counter - base), COUNTERS + 8ull * b->ctr, b->saves_flags)) {
			t->carried++;
			continue;
		}
		FAIL("%s: block %zu has %u counters", f->name, i, counted[i]);
	}
	/* a block whose flow the counters see whole has a counted way in and one out */
	for (i = 0; kinstr_cache_fn__edge_cnt(c) && i < kinstr_cache_fn__block_cnt(c); i++) {
		const struct kinstr_cache_block *b = kinstr_cache_fn__block(c, i);
		size_t e, nin = 0, nout = 0;

		for (e = 0; e < kinstr_cache_fn__edge_cnt(c); e++) {
			nin += kinstr_cache_fn__edge(c, e)->to == i;
			nout += kinstr_cache_fn__edge(c, e)->from == i;
		}
		/* no way in at all: after a jmp or a ret (or int3s), and no branch to it (dead code, as memset's) */
		if (!nin && i && b->first) {
			const struct kinstr_cache_insn *pv = kinstr_cache_fn__insn(c, b->first - 1);
			ZydisDecodedInstruction zp;

			if (!zdecode(kinstr_kernel__text(k, pv->addr, pv->len), pv->len, &zp, ops) &&
			    (zp.meta.category == ZYDIS_CATEGORY_UNCOND_BR || zp.meta.category == ZYDIS_CATEGORY_RET ||
			     zp.mnemonic == ZYDIS_MNEMONIC_INT3))
				nin = SIZE_MAX;
		}
		if ((!(b->unseen & KINSTR_CACHE_B_IN_UNSEEN) && !nin) || (!(b->unseen & KINSTR_CACHE_B_OUT_UNSEEN) && !nout))
			FAIL("%s: block %zu (+0x%llx) has %zu counted ways in and %zu out, and nothing unseen", f->name, i,
			     (unsigned long long)(b->addr - f->addr), nin, nout);
		t->unseen += b->unseen != 0;
	}
	for (i = 0; i < kinstr_cache_fn__edge_cnt(c) && i < sizeof(edge_seen); i++)
		if (edge_seen[i] != 1 || kinstr_cache_fn__edge(c, i)->counter != kinstr_cache_fn__block_cnt(c) + i)
			FAIL("%s: edge %zu has %u counters, or not the counter after the blocks'", f->name, i, edge_seen[i]);
	if (at != base + kinstr_cache_fn__size(c))
		FAIL("%s: %llu bytes accounted for, the copy has %zu", f->name, (unsigned long long)(at - base),
		     kinstr_cache_fn__size(c));
	if (!reentry_at(c, kinstr_cache_fn__insn(c, 0)->addr) || reentry_at(c, kinstr_cache_fn__insn(c, 0)->addr)->copy != base)
		FAIL("%s: the entry is not a re-entry point to the copy's start", f->name);
	for (i = 0; i < kinstr_cache_fn__reentry_cnt(c); i++) {
		const struct kinstr_cache_reentry *re = kinstr_cache_fn__reentry(c, i);
		int j = find(c, re->addr);
		size_t m;

		t->why[re->why]++;
		t->reentries++;
		if (j < 0 || (re->copy != landing(c, (size_t)j) && re->copy != edge_landing(c, (size_t)j)) ||
		    kinstr_cache_fn__insn(c, (size_t)j)->how == KINSTR_CACHE_NATIVE)
			FAIL("%s: re-entry 0x%llx lands wrong", f->name, (unsigned long long)re->addr);
		if (!re->jump)
			continue;
		t->jump_reentries++;
		if (kinstr_kernel__reserved(k, re->addr, 5))
			FAIL("%s: a re-entry jmp over reserved bytes at 0x%llx", f->name, (unsigned long long)re->addr);
		for (m = (size_t)j + 1; m < n && kinstr_cache_fn__insn(c, m)->addr < re->addr + 5; m++)
			if (kinstr_cache_fn__insn(c, m)->how == KINSTR_CACHE_NATIVE || reentry_at(c, kinstr_cache_fn__insn(c, m)->addr))
				FAIL("%s: the re-entry jmp at 0x%llx covers 0x%llx", f->name, (unsigned long long)re->addr,
				     (unsigned long long)kinstr_cache_fn__insn(c, m)->addr);
		if (m == n && re->addr + 5 > kinstr_cache_fn__insn(c, n - 1)->addr + kinstr_cache_fn__insn(c, n - 1)->len)
			FAIL("%s: the re-entry jmp at 0x%llx runs past the code", f->name, (unsigned long long)re->addr);
	}
	/*
	 * A block the original runs into (its first instruction native, and the native one before it
	 * falls into it, or a kernel table sends control to it from the original) is counted where
	 * control comes back into the copy: a re-entry point lands on its counter.
	 */
	for (i = 0; i < kinstr_cache_fn__block_cnt(c); i++) {
		const struct kinstr_cache_block *b = kinstr_cache_fn__block(c, i);
		const struct kinstr_cache_insn *fi = kinstr_cache_fn__insn(c, b->first);
		const struct kinstr_cache_insn *pv = b->first ? kinstr_cache_fn__insn(c, b->first - 1) : NULL;
		const struct kinstr_cfg_edge *e;
		size_t ne = kinstr_kernel__edges(k, f->addr, f->addr + f->size, &e), m, r;
		int runs_in = 0, landed = 0;

		if (fi->how != KINSTR_CACHE_NATIVE)
			continue;
		if (pv && pv->how == KINSTR_CACHE_NATIVE &&
		    !zdecode(kinstr_kernel__text(k, pv->addr, pv->len), pv->len, &zi, ops) &&
		    zi.meta.category != ZYDIS_CATEGORY_UNCOND_BR && zi.meta.category != ZYDIS_CATEGORY_RET &&
		    zi.mnemonic != ZYDIS_MNEMONIC_UD2 && zi.mnemonic != ZYDIS_MNEMONIC_INT3)
			runs_in = 1;
		for (m = 0; m < ne; m++) {
			int from = find(c, e[m].from);

			if (e[m].to == fi->addr && e[m].from != e[m].to &&
			    (from < 0 || kinstr_cache_fn__insn(c, (size_t)from)->how == KINSTR_CACHE_NATIVE))
				runs_in = 1;
		}
		for (r = 0; r < kinstr_cache_fn__reentry_cnt(c); r++)
			landed |= kinstr_cache_fn__reentry(c, r)->copy == b->counter;
		if (runs_in && (!b->counted_after || !landed))
			FAIL("%s: block %zu (+0x%llx) the original runs into is counted at 0x%llx, where no re-entry point lands",
			     f->name, i, (unsigned long long)(b->addr - f->addr), (unsigned long long)b->counter);
	}
	/* after a native instruction that falls through, and where its hidden edges land, control comes back */
	for (i = 0; i + 1 < n; i++) {
		const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, i), *nx = kinstr_cache_fn__insn(c, i + 1);
		const struct kinstr_cfg_edge *e;
		size_t ne = ci->how == KINSTR_CACHE_NATIVE ? kinstr_kernel__edges(k, ci->addr, ci->addr + ci->len, &e) : 0, m;

		for (m = 0; m < ne; m++) {
			int j = find(c, e[m].to);

			if (j >= 0 && kinstr_cache_fn__insn(c, (size_t)j)->how != KINSTR_CACHE_NATIVE && !reentry_at(c, e[m].to))
				FAIL("%s+0x%llx: no re-entry where the native instruction at +0x%llx may go", f->name,
				     (unsigned long long)(e[m].to - f->addr), (unsigned long long)(ci->addr - f->addr));
		}

		if (ci->how == KINSTR_CACHE_NATIVE && nx->how != KINSTR_CACHE_NATIVE && !reentry_at(c, nx->addr)) {
			struct kinstr_x86_insn x;

			if (!kinstr_x86__decode(kinstr_kernel__text(k, ci->addr, ci->len), ci->len, ci->addr, &x) &&
			    kinstr_x86__falls_through(&x))
				FAIL("%s+0x%llx: no re-entry after a native instruction", f->name,
				     (unsigned long long)(nx->addr - f->addr));
		}
	}
}

static void every_function(unsigned int flags)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o), .counters = COUNTERS, .jump_label = fake_jump_label,
				       .static_call = fake_static_call, .flags = flags };
	glob_t g;
	size_t p, carried = 0;

	ZydisDecoderInit(&zdec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (glob("tests/data/sample-*.snap", 0, NULL, &g) || !g.gl_pathc)
		SKIP("no snapshot in tests/data");
	for (p = 0; p < g.gl_pathc; p++) {
		struct kinstr_kernel *k = kinstr_kernel__open_snapshot(g.gl_pathv[p]);
		struct tally t = { 0 };
		size_t i;

		CHECK(k != NULL, "%s: %s", g.gl_pathv[p], strerror(errno));
		if (!k)
			continue;
		for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
			const struct kinstr_func *f = kinstr_kernel__func(k, i);
			/* the area: within +-2 GiB of the text, as module_alloc() gives it */
			uint64_t copy = (f->addr & ~((1ULL << 30) - 1)) + (1ULL << 30) + (i << 12);
			struct kinstr_cache_refusal r;
			struct kinstr_cache_fn *c;

			t.funcs++;
			c = kinstr_cache_fn__build(k, f, copy, &o, &r);
			if (!c) {
				CHECK(errno == EPERM && r.code > 0 && r.code < KINSTR_CACHE_R_NR && r.why[0],
				      "%s: refused without a reason (errno %d)", f->name, errno);
				if (r.code > 0 && r.code < KINSTR_CACHE_R_NR)
					t.refused[r.code]++;
				continue;
			}
			t.built++;
			verify(&t, k, f, c);
			kinstr_cache_fn__free(c);
		}
		printf("     %s: %zu of %zu functions copied: %zu blocks (%zu save the flags), %zu instructions "
		       "(copy %zu, reloc %zu, call %zu, native %zu, jump-label %zu, static-call %zu); %zu re-entry points "
		       "(%zu jumps; entry %zu, return %zu, after-native %zu, fixup %zu)\n", g.gl_pathv[p], t.built,
		       t.funcs, t.blocks, t.saves_flags, t.insns, t.how[0], t.how[1], t.how[2], t.how[3], t.how[4], t.how[5],
		       t.reentries, t.jump_reentries, t.why[0], t.why[1], t.why[2], t.why[3]);
		printf("     %zu blocks the original runs into, counted where it comes back into the copy\n", t.carried);
		carried += t.carried;
		if (flags & KINSTR_CACHE_F_EDGES)
			printf("     with edge counters: %zu edges counted; %zu blocks with a way in or out they do not see\n",
			       t.edges, t.unseen);
		CHECK(!(flags & KINSTR_CACHE_F_EDGES) == !t.edges, "%s: %zu edge counters with flags 0x%x", g.gl_pathv[p],
		      t.edges, flags);
		printf("     refused:");
		for (i = 1; i < KINSTR_CACHE_R_NR; i++)
			if (t.refused[i])
				printf(" %s %zu", kinstr_cache_refusal__id((unsigned int)i), t.refused[i]);
		printf("\n");
		CHECK(t.failures == 0, "%s: %zu copies wrong", g.gl_pathv[p], t.failures);
		/* the walk reached what it is about: most functions, and every kind of instruction but static calls */
		CHECK(t.built * 2 > t.funcs, "%s: only %zu of %zu functions copied", g.gl_pathv[p], t.built, t.funcs);
		CHECK(t.how[KINSTR_CACHE_CALL] && t.how[KINSTR_CACHE_NATIVE] && t.how[KINSTR_CACHE_RELOC] &&
		      t.how[KINSTR_CACHE_JUMP_LABEL] && t.why[KINSTR_CACHE_RETURN] && t.why[KINSTR_CACHE_AFTER_NATIVE],
		      "%s: a kind of instruction or re-entry was never reached", g.gl_pathv[p]);
		kinstr_kernel__close(k);
	}
	globfree(&g);
	/* the shipped 6.1 sample holds one: path_openat's */
	CHECK(carried > 0, "no block the original runs into was reached");
}

static void t_every_function(void)
{
	every_function(0);
}

/* the same with a counter on every edge too: into each block by falling through, out of each branch and exit */
static void t_every_function_edges(void)
{
	every_function(KINSTR_CACHE_F_EDGES);
}

int main(void)
{
	RUN(t_every_function);
	RUN(t_every_function_edges);
	return check_done();
}
