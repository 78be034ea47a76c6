// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The code cache's second pass: the bytes of each instruction of the copy, now that every branch
 * inside the function knows where its target went.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/reloc.h>
#include <kinstr/sites.h>
#include <kinstr/x86.h>
#include "lib/cache/cache_priv.h"

/*
 * A conditional branch whose taken way is counted: [cmpl $0, key(%rip)] j<not cc> rel8 over
 * pushfq; counter; popfq; jmp rel32 target. A jump label is taken when enabled XOR its branch
 * bit (jg, or jle with the bit): not taken on jle, or jg with the bit.
 */
static int emit_edge_jcc(const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o, const struct plan *p,
			 size_t first, size_t n, size_t i, uint8_t *b, uint64_t at, struct kinstr_cache_refusal *r)
{
	const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
	const struct plan *pi = &p[i];
	int jl = pi->how == KINSTR_CACHE_JUMP_LABEL;
	uint64_t to = jl ? pi->jl_target : x->target, t = cc_copy_of(p, cfg, first, n, to);
	static const uint8_t jmp[] = { 0xe9 };

	if (!t)
		t = to;
	if (jl) {
		b[0] = 0x83;
		b[1] = 0x3d;
		cc_put32(b + 2, (int32_t)(pi->aux - (at + CMPL_LEN)));
		b[6] = 0;
		if (!cc_fits_rel32(at + CMPL_LEN, pi->aux))
			return cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a jump label's key beyond rel32 reach");
		b += CMPL_LEN;
		at += CMPL_LEN;
	}
	b[0] = jl ? (pi->jl_branch ? 0x7f : 0x7e) : (uint8_t)(0x70 | (cc_jcc_cond(x) ^ 1));
	b[1] = COUNTER_LEN + 2 + JMP_LEN;
	b = cc_emit_counter(b + 2, o->counters, pi->out_ctr, 1);
	at += 2 + COUNTER_LEN + 2;
	cc_emit_rel32(b, at, jmp, 1, t);
	return cc_fits_rel32(at + JMP_LEN, t) ? 0 :
	       cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a branch target beyond rel32 reach of the copy");
}

int cc_emit_insn(const struct kinstr_cfg *cfg, const struct kinstr_cache_opts *o, const struct plan *p, size_t first,
		     size_t n, size_t i, uint8_t *b, struct kinstr_cache_refusal *r)
{
	const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
	const struct plan *pi = &p[i];
	uint64_t at = pi->copy, t;
	static const uint8_t jmp[] = { 0xe9 }, push[] = { 0x68 };
	struct kinstr_reloc rl;

	if (pi->timer == KINSTR_CACHE_TIMER_STARTS) {
		b = cc_emit_timer(b, at, o, 1);
		at += KINSTR_CACHE_TIMER_LEN;
	}
	if (pi->edges & KINSTR_CACHE_I_EDGE_IN) {
		b = cc_emit_counter(b, o->counters, pi->in_ctr, !!(pi->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF));
		at += COUNTER_LEN + 2 * !!(pi->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF);
	}
	if (pi->counter) {
		b = cc_emit_counter(b, o->counters, pi->block, pi->saves_flags);
		at += COUNTER_LEN + 2 * pi->saves_flags;
	}
	if (pi->edges & KINSTR_CACHE_I_EDGE_OUT) {
		int jl = pi->how == KINSTR_CACHE_JUMP_LABEL, pf = !!(pi->edges & KINSTR_CACHE_I_EDGE_OUT_PUSHF);

		if (jl || x->flow == KINSTR_X86_FLOW_JCC)
			return emit_edge_jcc(cfg, o, p, first, n, i, b, at, r);
		b = cc_emit_counter(b, o->counters, pi->out_ctr, pf);	/* then the jmp, ret or tail call */
		at += COUNTER_LEN + 2 * pf;
	}
	if (pi->timer == KINSTR_CACHE_TIMER_STOPS) {	/* then the exit */
		b = cc_emit_timer(b, at, o, 0);
		at += KINSTR_CACHE_TIMER_LEN;
	}
	switch (pi->how) {
	case KINSTR_CACHE_NATIVE:
		cc_emit_rel32(b, at, jmp, 1, x->addr);
		return cc_fits_rel32(at + JMP_LEN, x->addr) ? 0 :
		       cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "the original beyond rel32 reach of the copy");
	case KINSTR_CACHE_CALL:
	case KINSTR_CACHE_STATIC_CALL:
		t = pi->how == KINSTR_CACHE_CALL ? x->target : pi->aux;
		if (!pi->tail) {
			b[0] = push[0];
			cc_put32(b + 1, (int32_t)(x->addr + x->len));
			b += 5;
			at += 5;
		}
		cc_emit_rel32(b, at, jmp, 1, t);
		return cc_fits_rel32(at + JMP_LEN, t) ? 0 :
		       cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a call target beyond rel32 reach of the copy");
	case KINSTR_CACHE_JUMP_LABEL: {
		/* cmpl $0, key(%rip): enabled when the count is > 0; jg when taken on enabled, else jle */
		uint8_t cond[] = { 0x0f, pi->jl_branch ? 0x8e : 0x8f };

		t = cc_copy_of(p, cfg, first, n, pi->jl_target);
		if (!t)
			t = pi->jl_target;
		b[0] = 0x83;
		b[1] = 0x3d;
		cc_put32(b + 2, (int32_t)(pi->aux - (at + 7)));
		b[6] = 0;
		if (!cc_fits_rel32(at + 7, pi->aux) || !cc_fits_rel32(at + JL_LEN, t))
			return cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a jump label's key or target beyond rel32 reach");
		cc_emit_rel32(b + 7, at + 7, cond, 2, t);
		return 0;
	}
	default:
		break;
	}
	if (x->flow == KINSTR_X86_FLOW_RET && pi->jl_target) {	/* a bare ret, as jmp to the thunk */
		cc_emit_rel32(b, at, jmp, 1, pi->jl_target);
		return cc_fits_rel32(at + JMP_LEN, pi->jl_target) ? 0 :
		       cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "the return thunk beyond rel32 reach of the copy");
	}
	if (x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC) {
		uint8_t cond[] = { 0x0f, (uint8_t)(0x80 | cc_jcc_cond(x)) };

		t = cc_copy_of(p, cfg, first, n, x->target);
		if (!t)
			t = x->target;
		if (x->flow == KINSTR_X86_FLOW_JMP)
			cc_emit_rel32(b, at, jmp, 1, t);
		else
			cc_emit_rel32(b, at, cond, 2, t);
		return cc_fits_rel32(at + (x->flow == KINSTR_X86_FLOW_JMP ? JMP_LEN : JCC_LEN), t) ? 0 :
		       cc_refuse(r, KINSTR_CACHE_R_RANGE, x->addr, 0, "a branch target beyond rel32 reach of the copy");
	}
	if (x->flow == KINSTR_X86_FLOW_INT3) {
		memcpy(b, x->bytes, x->len);
		return 0;
	}
	/* copied, or a RIP-relative operand re-aimed: the relocator's rules (and its refusals) */
	if (kinstr_reloc__run(&rl, x->bytes, x->len, x->addr, b, x->len, at) || rl.out_len != x->len)
		return cc_refuse(r, rl.reason == KINSTR_RELOC_OUT_OF_RANGE ? KINSTR_CACHE_R_RANGE : KINSTR_CACHE_R_UNDECODABLE,
			      x->addr, 0, "%s", kinstr_reloc__why(&rl));
	return 0;
}
