// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A timer in the copy (KINSTR_CACHE_F_TIMER; the module's KINSTR_CACHE_M_TIMER): where the start
 * and the stops go, and their call sequence. The module checks the sequence byte for byte and
 * writes the timer set's address over its 0.
 */
#include "lib/cache/cache_priv.h"

/*
 * Does control leave the copy at instruction i (and not come back to it): a ret, a jmp out of the
 * function's code, a tail static call? A conditional branch or a jump label out of it, or a ret
 * the module does not read as one, leaves with no place for a stop: refused.
 */
static int exit_of(const struct kinstr_cfg *cfg, const struct plan *p, size_t first, size_t n, size_t i,
		   struct kinstr_cache_refusal *r)
{
	const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
	uint64_t lo = kinstr_cfg__insn(cfg, first)->x.addr, t;
	const struct kinstr_x86_insn *last = &kinstr_cfg__insn(cfg, first + n - 1)->x;
	uint64_t hi = last->addr + last->len;

	switch (p[i].how) {
	case KINSTR_CACHE_STATIC_CALL:
		return p[i].tail;
	case KINSTR_CACHE_JUMP_LABEL:
		if (p[i].jl_target < lo || p[i].jl_target >= hi)
			return cc_refuse(r, KINSTR_CACHE_R_TIMER, x->addr, 0, "a jump label out of the function: no place for the timer's stop");
		return 0;
	case KINSTR_CACHE_COPY:
	case KINSTR_CACHE_RELOC:
		break;
	default:
		return 0;
	}
	if (x->flow == KINSTR_X86_FLOW_RET) {
		if (x->len != 1 || x->bytes[0] != 0xc3)
			return cc_refuse(r, KINSTR_CACHE_R_TIMER, x->addr, 0, "a return other than a bare ret: no place the module reads as the timer's stop");
		return 1;
	}
	if (x->flow != KINSTR_X86_FLOW_JMP && x->flow != KINSTR_X86_FLOW_JCC)
		return 0;
	t = x->target;
	if (t >= lo && t < hi)
		return 0;
	if (x->flow == KINSTR_X86_FLOW_JCC)
		return cc_refuse(r, KINSTR_CACHE_R_TIMER, x->addr, 0, "a conditional branch out of the function: no place for the timer's stop");
	return 1;
}

int cc_plan_timers(const struct kinstr_cfg *cfg, struct plan *p, size_t first, size_t n, struct kinstr_cache_refusal *r)
{
	size_t i;
	int e;

	for (i = 0; i < n; i++) {
		e = exit_of(cfg, p, first, n, i, r);
		if (e < 0)
			return e;
		if (e && !i)
			return cc_refuse(r, KINSTR_CACHE_R_TIMER, kinstr_cfg__insn(cfg, first)->x.addr, 0,
					 "the entry is an exit: the timer would start and stop at one place");
		if (e) {
			p[i].timer = KINSTR_CACHE_TIMER_STOPS;
			p[i].size += KINSTR_CACHE_TIMER_LEN;
		}
	}
	p[0].timer = KINSTR_CACHE_TIMER_STARTS;
	p[0].size += KINSTR_CACHE_TIMER_LEN;
	return 0;
}

/* pushfq; push rax rcx rdx rsi rdi r8-r11; movabs $0, %rdi; mov $timer, %esi; call fn; pop them; popfq */
uint8_t *cc_emit_timer(uint8_t *b, uint64_t at, const struct kinstr_cache_opts *o, int start)
{
	static const uint8_t head[] = { 0x9c, 0x50, 0x51, 0x52, 0x56, 0x57, 0x41, 0x50, 0x41, 0x51, 0x41, 0x52,
					0x41, 0x53, 0x48, 0xbf, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe };
	static const uint8_t tail[] = { 0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, 0x5f, 0x5e, 0x5a, 0x59, 0x58, 0x9d };
	static const uint8_t call[] = { 0xe8 };

	memcpy(b, head, sizeof(head));
	b += sizeof(head);
	memcpy(b, &o->timer, 4);
	b += 4;
	b = cc_emit_rel32(b, at + sizeof(head) + 4, call, 1, start ? o->timer_start : o->timer_stop);
	memcpy(b, tail, sizeof(tail));
	return b + sizeof(tail);
}
