// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Value predicates: EXPR into the module's stack program (rules/pred.h says what it means).
 * Recursive descent straight into instructions, no tree and no allocation:
 *   or   := and ('||' and)*          A || B:  A; JNZ end; B; end:
 *   and  := not ('&&' not)*          A && B:  A; JZ end; B; end:
 *   not  := '!' not | '(' or ')' | cmp
 *   cmp  := term [('=='|'!='|'<'|'<='|'>'|'>=') term]
 *   term := NUMBER | '-' NUMBER | "STRING" | NAME
 * A jump keeps its operand when it jumps, so each of && and || leaves one value: the stack never
 * holds more than two.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/pred.h>
#include "rules/pred.h"

enum tok { T_END, T_NUM, T_STR, T_NAME, T_OP, T_BAD };

struct pc {
	const char *src;
	const struct kinstr_value *vals;
	unsigned int nvals;
	struct kinstr_pred *out;
	struct kinstr_why *why;
	/* the current token */
	enum tok t;
	size_t at, len;			/* where it starts in src, its length */
	uint64_t num;
	char str[KINSTR_TRACE_STR_MAX];
	unsigned int slen;
	int err;
};

/* An operand of a comparison: a number on the stack or a string to compare. */
struct operand {
	bool is_str, is_const, is_signed;
	bool any;			/* a name while only the syntax is checked: either type */
	size_t at;
	/* a string: the value's index (or KINSTR_PRED_COMM) or, for a constant, its bytes in str */
	unsigned int idx;
	char str[KINSTR_TRACE_STR_MAX];
	unsigned int slen;
};

static int fail(struct pc *c, size_t at, const char *fmt, const char *tok)
{
	char what[64];

	if (c->err)
		return c->err;
	if (tok)
		snprintf(what, sizeof(what), "%s", tok);
	c->err = kinstr_why__fail(c->why, -EINVAL, "at column %zu: %s%s%.*s%s", at + 1, fmt,
				  tok ? ", not '" : "", tok ? 40 : 0, tok ? what : "", tok ? "'" : "");
	return c->err;
}

/* The current token's text, or "the end". */
static const char *tok_text(struct pc *c, char *buf, size_t n)
{
	if (c->t == T_END)
		return "the end";
	snprintf(buf, n, "%.*s", (int)(c->len > 40 ? 40 : c->len), c->src + c->at);
	return buf;
}

static int fail_tok(struct pc *c, const char *expected)
{
	char buf[48];

	return fail(c, c->at, expected, c->t == T_END ? NULL : tok_text(c, buf, sizeof(buf)));
}

static void next(struct pc *c)
{
	const char *s = c->src;
	size_t i = c->at + c->len;

	while (isspace((unsigned char)s[i]))
		i++;
	c->at = i, c->len = 0;
	if (!s[i]) {
		c->t = T_END;
		return;
	}
	if (isdigit((unsigned char)s[i])) {
		char *end;

		errno = 0;
		c->num = strtoull(s + i, &end, 0);
		c->len = (size_t)(end - (s + i));
		while (isalnum((unsigned char)s[i + c->len]) || s[i + c->len] == '_')
			c->len++, errno = EINVAL;	/* 12ab: one bad token */
		c->t = errno ? T_BAD : T_NUM;
		return;
	}
	if (isalpha((unsigned char)s[i]) || s[i] == '_') {
		while (isalnum((unsigned char)s[i + c->len]) || s[i + c->len] == '_')
			c->len++;
		c->t = T_NAME;
		return;
	}
	if (s[i] == '"') {
		size_t j = i + 1;

		c->slen = 0;
		while (s[j] && s[j] != '"') {
			char ch = s[j];

			if (ch == '\\' && (s[j + 1] == '"' || s[j + 1] == '\\'))
				ch = s[++j];
			if (c->slen + 1 >= sizeof(c->str)) {
				c->t = T_BAD, c->len = j - i;
				return;
			}
			c->str[c->slen++] = ch;
			j++;
		}
		c->str[c->slen] = 0;
		c->len = j - i + (s[j] == '"');
		c->t = s[j] == '"' ? T_STR : T_BAD;
		return;
	}
	static const char *const ops[] = { "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "-" };
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strncmp(s + i, ops[k], strlen(ops[k]))) {
			c->t = T_OP, c->len = strlen(ops[k]);
			return;
		}
	c->t = T_BAD, c->len = 1;
}

static bool is_op(const struct pc *c, const char *op)
{
	return c->t == T_OP && c->len == strlen(op) && !strncmp(c->src + c->at, op, c->len);
}

static struct kinstr_pred_insn *emit(struct pc *c, uint8_t op, uint8_t a, uint16_t b, uint64_t imm)
{
	struct kinstr_pred_insn *in;

	if (c->err)
		return NULL;
	if (c->out->ninsns >= KINSTR_PRED_MAX_INSNS) {
		c->err = kinstr_why__fail(c->why, -E2BIG, "the expression is too long: at most %d instructions",
					  KINSTR_PRED_MAX_INSNS);
		return NULL;
	}
	in = &c->out->insns[c->out->ninsns++];
	*in = (struct kinstr_pred_insn){ .op = op, .a = a, .b = b, .imm = imm };
	return in;
}

static void emit_str(struct pc *c, unsigned int idx, const char *s, unsigned int len)
{
	unsigned int k;

	emit(c, KINSTR_PRED_STR, (uint8_t)idx, (uint16_t)len, 0);
	for (k = 0; k < kinstr_pred_data_insns(len); k++) {
		uint64_t imm = 0;
		unsigned int n = len - k * 8 < 8 ? len - k * 8 : 8;

		if (k * 8 < len)
			memcpy(&imm, s + k * 8, n);
		emit(c, KINSTR_PRED_DATA, 0, 0, imm);
	}
}

static bool ctf_signed(enum kinstr_ctf_type t)
{
	return t == KINSTR_CTF_S8 || t == KINSTR_CTF_S16 || t == KINSTR_CTF_S32 || t == KINSTR_CTF_S64;
}

static unsigned int ctf_width(enum kinstr_ctf_type t)
{
	switch (t) {
	case KINSTR_CTF_U8: case KINSTR_CTF_S8: return 1;
	case KINSTR_CTF_U16: case KINSTR_CTF_S16: return 2;
	case KINSTR_CTF_U32: case KINSTR_CTF_S32: return 4;
	default: return 0;	/* 8 bytes: as read */
	}
}

/* "the values are a, b, pid, tid, cpu, comm" for an unknown name */
static int fail_name(struct pc *c)
{
	char names[400] = "", tok[48];
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < c->nvals && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s, ", c->vals[i].name);
	if (n < sizeof(names))
		snprintf(names + n, sizeof(names) - n, "pid, tid, cpu, comm");
	tok_text(c, tok, sizeof(tok));
	if (c->err)
		return c->err;
	c->err = kinstr_why__fail(c->why, -EINVAL, "at column %zu: no value named '%s' (there are: %s)", c->at + 1,
				  tok, names);
	return c->err;
}

/* One term; a number is pushed at once, a string waits for its comparison. */
static int term(struct pc *c, struct operand *o)
{
	unsigned int i;

	memset(o, 0, sizeof(*o));
	o->at = c->at;
	if (is_op(c, "-")) {
		next(c);
		if (c->t != T_NUM)
			return fail_tok(c, "expected a number after '-'");
		o->is_const = o->is_signed = true;
		emit(c, KINSTR_PRED_IMM, 0, 0, (uint64_t)0 - c->num);
		next(c);
		return c->err;
	}
	switch (c->t) {
	case T_NUM:
		o->is_const = true;
		emit(c, KINSTR_PRED_IMM, 0, 0, c->num);
		break;
	case T_STR:
		o->is_str = o->is_const = true;
		memcpy(o->str, c->str, c->slen + 1);
		o->slen = c->slen;
		break;
	case T_NAME: {
		static const struct { const char *n; unsigned int ctx; } ctx[] = {
			{ "pid", KINSTR_PRED_CTX_PID }, { "tid", KINSTR_PRED_CTX_TID }, { "cpu", KINSTR_PRED_CTX_CPU } };

		for (i = 0; i < c->nvals; i++)
			if (strlen(c->vals[i].name) == c->len && !strncmp(c->vals[i].name, c->src + c->at, c->len))
				break;
		if (!c->vals && !(c->len == 4 && !strncmp(c->src + c->at, "comm", 4))) {
			o->any = true;	/* the syntax only: no values to look in */
			emit(c, KINSTR_PRED_IMM, 0, 0, 0);
			break;
		}
		if (i < c->nvals) {
			const struct kinstr_value *v = &c->vals[i];

			if (v->v.kind == KINSTR_VAL_STR) {
				o->is_str = true;
				o->idx = i;
				break;
			}
			o->is_signed = ctf_signed(v->type);
			emit(c, KINSTR_PRED_VAL, (uint8_t)i,
			     (uint16_t)(ctf_width(v->type) | (o->is_signed ? KINSTR_PRED_EXT_SIGNED : 0)), 0);
			break;
		}
		if (c->len == 4 && !strncmp(c->src + c->at, "comm", 4)) {
			o->is_str = true;
			o->idx = KINSTR_PRED_COMM;
			break;
		}
		for (i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++)
			if (strlen(ctx[i].n) == c->len && !strncmp(ctx[i].n, c->src + c->at, c->len))
				break;
		if (i == sizeof(ctx) / sizeof(ctx[0]))
			return fail_name(c);
		emit(c, KINSTR_PRED_CTX, (uint8_t)ctx[i].ctx, 0, 0);
		break;
	}
	case T_BAD:
		if (c->src[c->at] == '"')
			return fail(c, c->at, c->len + 1 >= KINSTR_TRACE_STR_MAX ?
				    "a string of at most 127 characters" : "a string without its closing '\"'", NULL);
		/* fall through */
	default:
		return fail_tok(c, "expected a number, a string or a value name");
	}
	next(c);
	return c->err;
}

static int cmp_op(struct pc *c)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
	int k;

	for (k = 0; k < 6; k++)
		if (is_op(c, ops[k]))
			return k;	/* KINSTR_PRED_EQ .. KINSTR_PRED_GE */
	return -1;
}

static int compare(struct pc *c)
{
	struct operand x, y;
	size_t at;
	int op;

	if (term(c, &x))
		return c->err;
	op = cmp_op(c);
	if (op < 0) {
		if (x.is_str && !x.any)
			return fail(c, x.at, "a string is compared with == or !=", NULL);
		return 0;	/* a number alone: true when not 0 */
	}
	at = c->at;
	next(c);
	if (term(c, &y))
		return c->err;
	if (x.any || y.any) {
		if (op > KINSTR_PRED_NE && (x.is_str || y.is_str))
			return fail(c, at, "strings compare with == and != only", NULL);
		if (x.is_str || y.is_str)
			emit(c, KINSTR_PRED_IMM, 0, 0, 0);	/* keep the stack as a number's */
		emit(c, KINSTR_PRED_CMP, 0, 0, 0);
		return c->err;
	}
	if (x.is_str != y.is_str)
		return fail(c, at, x.is_str ? "a string is compared with a string" : "a number is compared with a number",
			    NULL);
	if (!x.is_str) {
		/* the value's type decides (a constant takes it); two constants: signed if one is negative */
		bool sgn = x.is_const && y.is_const ? x.is_signed || y.is_signed :
						      (!x.is_const && x.is_signed) || (!y.is_const && y.is_signed);

		if (op >= KINSTR_PRED_LT && sgn)
			op += KINSTR_PRED_SLT - KINSTR_PRED_LT;
		emit(c, KINSTR_PRED_CMP, (uint8_t)op, 0, 0);
		return c->err;
	}
	if (op > KINSTR_PRED_NE)
		return fail(c, at, "strings compare with == and != only", NULL);
	if (x.is_const == y.is_const)
		return fail(c, x.at, "compare a string value (comm, or a value of type string) with a constant string",
			    NULL);
	{
		const struct operand *v = x.is_const ? &y : &x, *k = x.is_const ? &x : &y;

		if (v->idx == KINSTR_PRED_COMM && k->slen >= 16)
			return fail(c, k->at, "comm has at most 15 characters", NULL);
		emit_str(c, v->idx, k->str, k->slen);
	}
	if (op == KINSTR_PRED_NE)
		emit(c, KINSTR_PRED_NOT, 0, 0, 0);
	return c->err;
}

static int expr_or(struct pc *c);

static int expr_not(struct pc *c)
{
	if (is_op(c, "!")) {
		next(c);
		if (expr_not(c))
			return c->err;
		emit(c, KINSTR_PRED_NOT, 0, 0, 0);
		return c->err;
	}
	if (is_op(c, "(")) {
		size_t at = c->at;

		next(c);
		if (expr_or(c))
			return c->err;
		if (!is_op(c, ")")) {
			char msg[64];

			snprintf(msg, sizeof(msg), "expected ')' to close the '(' at column %zu", at + 1);
			return fail_tok(c, msg);
		}
		next(c);
		return c->err;
	}
	return compare(c);
}

/* A chain of one operator: each operand but the last ends in a jump to the chain's end. */
static int chain(struct pc *c, const char *op, uint8_t jump, int (*operand)(struct pc *))
{
	uint16_t from[KINSTR_PRED_MAX_INSNS];
	unsigned int n = 0, k;

	if (operand(c))
		return c->err;
	while (is_op(c, op)) {
		next(c);
		from[n++] = c->out->ninsns;
		if (!emit(c, jump, 0, 0, 0) || operand(c))
			return c->err;
	}
	for (k = 0; k < n; k++)
		c->out->insns[from[k]].b = (uint16_t)(c->out->ninsns - from[k] - 1);
	return 0;
}

static int expr_and(struct pc *c)
{
	return chain(c, "&&", KINSTR_PRED_JZ, expr_not);
}

static int expr_or(struct pc *c)
{
	return chain(c, "||", KINSTR_PRED_JNZ, expr_and);
}

int kinstr_pred__compile(const char *expr, const struct kinstr_value *vals, unsigned int nvals,
			 struct kinstr_pred *out, struct kinstr_why *why)
{
	struct pc c = { .src = expr, .vals = vals, .nvals = nvals, .out = out, .why = why };

	memset(out, 0, sizeof(*out));
	next(&c);
	if (c.t == T_END)
		return fail(&c, c.at, "expected an expression", NULL);
	if (!expr_or(&c) && c.t != T_END)
		fail_tok(&c, is_op(&c, ")") ? "a ')' without its '('" : "expected '&&', '||' or the end");
	if (c.err)
		memset(out, 0, sizeof(*out));
	return c.err;
}

int kinstr_pred__and(struct kinstr_pred *p, const struct kinstr_pred *q, struct kinstr_why *why)
{
	unsigned int n = p->ninsns;

	if (n + 1u + q->ninsns > KINSTR_PRED_MAX_INSNS)
		return kinstr_why__fail(why, -E2BIG, "the expression is too long: at most %d instructions",
					KINSTR_PRED_MAX_INSNS);
	/* q's jumps are relative: they hold where q lands */
	p->insns[n] = (struct kinstr_pred_insn){ .op = KINSTR_PRED_JZ, .b = q->ninsns };
	memcpy(&p->insns[n + 1], q->insns, q->ninsns * sizeof(q->insns[0]));
	p->ninsns = (uint16_t)(n + 1 + q->ninsns);
	return 0;
}

bool kinstr_pred__valid(const struct kinstr_pred *p, const struct kinstr_trace_spec *spec)
{
	return kinstr_pred_verify(p, spec) == 0;
}
