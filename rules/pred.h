/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Value predicates (struct kinstr_pred, include/uapi/linux/kinstr.h): what a well-formed program
 * is, and what it computes. One rule for the module, which verifies each program at install
 * and runs it in probe context (kmod/actions/pred.c), and the library, whose compiler
 * (lib/plan/pred.c) checks its own output with the same verifier and whose tests
 * (tests/unit/test_pred.c) run the same evaluator.
 *
 * The evaluator reads values through three functions its includer defines before including
 * this header with KINSTR_PRED_WANT_EVAL (the module reads pt_regs and kernel memory, the tests
 * a table): kinstr_pred_env_num(), kinstr_pred_env_ctx() and kinstr_pred_env_streq().
 */
#ifndef KINSTR_RULES_PRED_H
#define KINSTR_RULES_PRED_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdint.h>
#include <string.h>
#endif
#include <uapi/linux/kinstr.h>

/* How many DATA instructions hold a string of len bytes and its NUL. */
static inline unsigned int kinstr_pred_data_insns(unsigned int len)
{
	return len / 8 + 1;
}

static inline int kinstr_pred_insn_zero(const struct kinstr_pred_insn *in)
{
	return !in->op && !in->a && !in->b && !in->__reserved && !in->imm;
}

/* A VAL's width and sign: 0 (8 bytes), 1, 2 or 4, with or without KINSTR_PRED_EXT_SIGNED. */
static inline int kinstr_pred_ext_ok(unsigned int b)
{
	unsigned int w = b & ~(unsigned int)KINSTR_PRED_EXT_SIGNED;

	return w == 0 || w == 1 || w == 2 || w == 4;
}

/* STR at insns[i] of length len: its DATA instructions hold exactly len bytes, NUL-padded. */
static inline int kinstr_pred_data_ok(const struct kinstr_pred *p, unsigned int i, unsigned int len)
{
	unsigned int nd = kinstr_pred_data_insns(len), k, j;

	if (i + nd >= p->ninsns)
		return 0;
	for (k = 0; k < nd; k++) {
		const struct kinstr_pred_insn *d = &p->insns[i + 1 + k];
		uint8_t bytes[8];

		if (d->op != KINSTR_PRED_DATA || d->a || d->b || d->__reserved)
			return 0;
		memcpy(bytes, &d->imm, 8);
		for (j = 0; j < 8; j++)
			if ((k * 8 + j < len) != (bytes[j] != 0))
				return 0;	/* a NUL inside, or a byte past the end */
	}
	return 1;
}

/* The value a VAL or STR names is one of the spec's, of a kind it reads that way. */
static inline int kinstr_pred_val_ok(const struct kinstr_trace_spec *s, unsigned int a, int str)
{
	if (str && a == KINSTR_PRED_COMM)
		return 1;
	if (a >= s->nvals || a >= KINSTR_TRACE_MAX_VALS)
		return 0;
	return str ? s->vals[a].kind == KINSTR_VAL_STR :
		     s->vals[a].kind == KINSTR_VAL_REG || s->vals[a].kind == KINSTR_VAL_MEM;
}

/*
 * The stack depth before each instruction, from the single forward pass: jumps only go forward,
 * so every way into an instruction is known when the pass reaches it, and must agree. 0 if p is
 * a program for spec s, else -1.
 */
static inline int kinstr_pred_verify(const struct kinstr_pred *p, const struct kinstr_trace_spec *s)
{
	int8_t depth[KINSTR_PRED_MAX_INSNS + 1];
	unsigned int i, n = p->ninsns;

	if (p->flags || p->__reserved || n < 1 || n > KINSTR_PRED_MAX_INSNS)
		return -1;
	for (i = n; i < KINSTR_PRED_MAX_INSNS; i++)
		if (!kinstr_pred_insn_zero(&p->insns[i]))
			return -1;	/* unknown non-zero tail */
	memset(depth, -1, sizeof(depth));
	depth[0] = 0;
	for (i = 0; i < n;) {
		const struct kinstr_pred_insn *in = &p->insns[i];
		int d = depth[i], next = i + 1, out;

		if (d < 0 || in->__reserved)
			return -1;	/* unreachable, or a reserved field set */
		switch (in->op) {
		case KINSTR_PRED_VAL:
			if (!kinstr_pred_val_ok(s, in->a, 0) || !kinstr_pred_ext_ok(in->b) || in->imm)
				return -1;
			out = d + 1;
			break;
		case KINSTR_PRED_CTX:
			if (in->a < KINSTR_PRED_CTX_PID || in->a >= KINSTR_PRED_CTX_NR || in->b || in->imm)
				return -1;
			out = d + 1;
			break;
		case KINSTR_PRED_IMM:
			if (in->a || in->b)
				return -1;
			out = d + 1;
			break;
		case KINSTR_PRED_STR:
			if (!kinstr_pred_val_ok(s, in->a, 1) || in->b >= KINSTR_TRACE_STR_MAX || in->imm ||
			    !kinstr_pred_data_ok(p, i, in->b))
				return -1;
			next = i + 1 + kinstr_pred_data_insns(in->b);
			for (unsigned int k = i + 1; k < (unsigned int)next; k++)
				if (depth[k] >= 0)
					return -1;	/* a jump into the string */
			out = d + 1;
			break;
		case KINSTR_PRED_CMP:
			if (in->a >= KINSTR_PRED_CMP_NR || in->b || in->imm || d < 2)
				return -1;
			out = d - 1;
			break;
		case KINSTR_PRED_NOT:
			if (in->a || in->b || in->imm || d < 1)
				return -1;
			out = d;
			break;
		case KINSTR_PRED_JZ:
		case KINSTR_PRED_JNZ: {
			unsigned int t = i + 1 + in->b;

			if (in->a || in->imm || d < 1 || t > n || (depth[t] >= 0 && depth[t] != d))
				return -1;
			depth[t] = (int8_t)d;
			out = d - 1;
			break;
		}
		default:
			return -1;	/* unknown, or DATA outside a string */
		}
		if (out > KINSTR_PRED_MAX_STACK || (depth[next] >= 0 && depth[next] != out))
			return -1;
		depth[next] = (int8_t)out;
		i = next;
	}
	return depth[n] == 1 ? 0 : -1;
}

/* x cut to the width in b and extended as b says (a VAL's b). */
static inline uint64_t kinstr_pred_extend(uint64_t x, unsigned int b)
{
	unsigned int w = b & ~(unsigned int)KINSTR_PRED_EXT_SIGNED;
	int sgn = b & KINSTR_PRED_EXT_SIGNED;

	switch (w) {
	case 1: return sgn ? (uint64_t)(int64_t)(int8_t)x : (uint8_t)x;
	case 2: return sgn ? (uint64_t)(int64_t)(int16_t)x : (uint16_t)x;
	case 4: return sgn ? (uint64_t)(int64_t)(int32_t)x : (uint32_t)x;
	default: return x;
	}
}

static inline int kinstr_pred_cmp(unsigned int op, uint64_t x, uint64_t y)
{
	switch (op) {
	case KINSTR_PRED_EQ: return x == y;
	case KINSTR_PRED_NE: return x != y;
	case KINSTR_PRED_LT: return x < y;
	case KINSTR_PRED_LE: return x <= y;
	case KINSTR_PRED_GT: return x > y;
	case KINSTR_PRED_GE: return x >= y;
	case KINSTR_PRED_SLT: return (int64_t)x < (int64_t)y;
	case KINSTR_PRED_SLE: return (int64_t)x <= (int64_t)y;
	case KINSTR_PRED_SGT: return (int64_t)x > (int64_t)y;
	default: return (int64_t)x >= (int64_t)y;
	}
}

#ifdef KINSTR_PRED_WANT_EVAL
struct kinstr_pred_env;
/* The raw 8 bytes of value i (REG or MEM; a faulting read is 0, as the trace records it). */
static uint64_t kinstr_pred_env_num(const struct kinstr_pred_env *e, unsigned int i);
static uint64_t kinstr_pred_env_ctx(const struct kinstr_pred_env *e, unsigned int what);
/* Does string value i (or KINSTR_PRED_COMM), as recorded, equal s[0, len)? */
static int kinstr_pred_env_streq(const struct kinstr_pred_env *e, unsigned int i, const char *s, unsigned int len);

/* Run verified program p: nonzero if the hit passes. O(ninsns), no loop but the one forward walk. */
static inline int kinstr_pred_run(const struct kinstr_pred *p, const struct kinstr_pred_env *e)
{
	uint64_t st[KINSTR_PRED_MAX_STACK];
	char str[KINSTR_TRACE_STR_MAX + 8];
	unsigned int i = 0, sp = 0, n = p->ninsns, k;

	while (i < n) {
		const struct kinstr_pred_insn *in = &p->insns[i++];

		switch (in->op) {
		case KINSTR_PRED_VAL:
			st[sp++] = kinstr_pred_extend(kinstr_pred_env_num(e, in->a), in->b);
			break;
		case KINSTR_PRED_CTX:
			st[sp++] = kinstr_pred_env_ctx(e, in->a);
			break;
		case KINSTR_PRED_IMM:
			st[sp++] = in->imm;
			break;
		case KINSTR_PRED_STR:
			/* the DATA instructions' bytes, one after another */
			for (k = 0; k < kinstr_pred_data_insns(in->b); k++)
				memcpy(str + 8 * k, &p->insns[i++].imm, 8);
			st[sp++] = !!kinstr_pred_env_streq(e, in->a, str, in->b);
			break;
		case KINSTR_PRED_CMP:
			sp--;
			st[sp - 1] = kinstr_pred_cmp(in->a, st[sp - 1], st[sp]);
			break;
		case KINSTR_PRED_NOT:
			st[sp - 1] = !st[sp - 1];
			break;
		case KINSTR_PRED_JZ:
		case KINSTR_PRED_JNZ:
			if (!st[sp - 1] == (in->op == KINSTR_PRED_JZ))
				i += in->b;
			else
				sp--;
			break;
		default:
			return 0;	/* not verified: reject */
		}
	}
	return sp == 1 && st[0] != 0;
}
#endif

#endif
