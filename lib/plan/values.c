// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The values a trace probe records: the VALUE[:TYPE],... grammar (include/kinstr/plan.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/plan.h>
#include <kinstr/x86.h>

static const char *const reg_names[KINSTR_REG_NR] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

/* BTF arguments come as enum kinstr_x86_reg; the module takes enum kinstr_reg: the same order. */
_Static_assert((int)KINSTR_REG_RAX == (int)KINSTR_X86_RAX && (int)KINSTR_REG_RSP == (int)KINSTR_X86_RSP &&
	       (int)KINSTR_REG_RDI == (int)KINSTR_X86_RDI && (int)KINSTR_REG_R8 == (int)KINSTR_X86_R8 &&
	       (int)KINSTR_REG_R15 == (int)KINSTR_X86_R15, "register numbering differs");

static int reg_by_name(const char *s)
{
	int i;

	for (i = 0; i < KINSTR_REG_NR; i++)
		if (!strcmp(s, reg_names[i]))
			return i;
	return -1;
}

static void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

/* C type spelling from BTF to a CTF integer type. */
static void type_from_btf(const struct kinstr_proto_arg *a, struct kinstr_value *t)
{
	bool is_signed = !strstr(a->type, "unsigned") && strncmp(a->type, "u", 1) && strcmp(a->type, "size_t") &&
			 strcmp(a->type, "bool") && strcmp(a->type, "_Bool") && strncmp(a->type, "__u", 3) &&
			 strncmp(a->type, "gfp_t", 5) && strncmp(a->type, "umode_t", 7);

	if (strchr(a->type, '*') || strchr(a->type, '(') || a->size > 8 || a->size == 0) {
		t->type = KINSTR_CTF_U64;
		t->hex = true;
		return;
	}
	switch (a->size) {
	case 1: t->type = is_signed ? KINSTR_CTF_S8 : KINSTR_CTF_U8; break;
	case 2: t->type = is_signed ? KINSTR_CTF_S16 : KINSTR_CTF_U16; break;
	case 4: t->type = is_signed ? KINSTR_CTF_S32 : KINSTR_CTF_U32; break;
	default: t->type = is_signed ? KINSTR_CTF_S64 : KINSTR_CTF_U64; break;
	}
}

/* ":TYPE" into t (integer width also sets a memory read's size). */
static int apply_type(const char *ty, struct kinstr_value *t, bool mem, struct kinstr_why *why)
{
	static const struct { const char *n; enum kinstr_ctf_type t; unsigned int size; bool hex; } types[] = {
		{ "u8", KINSTR_CTF_U8, 1, false }, { "u16", KINSTR_CTF_U16, 2, false },
		{ "u32", KINSTR_CTF_U32, 4, false }, { "u64", KINSTR_CTF_U64, 8, false },
		{ "s8", KINSTR_CTF_S8, 1, false }, { "s16", KINSTR_CTF_S16, 2, false },
		{ "s32", KINSTR_CTF_S32, 4, false }, { "s64", KINSTR_CTF_S64, 8, false },
		{ "x8", KINSTR_CTF_U8, 1, true }, { "x16", KINSTR_CTF_U16, 2, true },
		{ "x32", KINSTR_CTF_U32, 4, true }, { "x64", KINSTR_CTF_U64, 8, true },
	};
	size_t i;

	if (!strncmp(ty, "string", 6)) {
		unsigned long n = KINSTR_VALUE_STR_DEFAULT;
		char *end;

		if (ty[6] == '[') {
			n = strtoul(ty + 7, &end, 0);
			if (end == ty + 7 || strcmp(end, "]") || n < 2 || n > KINSTR_TRACE_STR_MAX)
				return kinstr_why__fail(why, -EINVAL, "bad string size '%.100s' (string[2..%d])", ty,
							KINSTR_TRACE_STR_MAX);
		} else if (ty[6]) {
			goto bad;
		}
		t->v.deref = mem;
		t->v.kind = KINSTR_VAL_STR;
		t->v.size = (uint8_t)n;
		t->type = KINSTR_CTF_STRING;
		t->hex = false;
		return 0;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(ty, types[i].n)) {
			t->type = types[i].t;
			t->hex = types[i].hex;
			if (mem)
				t->v.size = types[i].size;
			return 0;
		}
bad:
	return kinstr_why__fail(why, -EINVAL, "unknown type '%.100s' (u8..u64, s8..s64, x8..x64, string)", ty);
}

/* A register or an argument name into a register; *name_out gets the field's name. */
static int base_reg(const char *s, const struct kinstr_proto *proto, bool at_entry, const char *func,
		    struct kinstr_value *t, struct kinstr_why *why)
{
	unsigned int j;
	int r;

	if (s[0] == '%') {
		r = reg_by_name(s + 1);
		if (r < 0)
			return kinstr_why__fail(why, -EINVAL, "unknown register '%.100s' (%%rax .. %%r15, %%rip)", s);
		t->v.reg = (uint8_t)r;
		t->type = KINSTR_CTF_U64;
		t->hex = true;
		return 0;
	}
	if (!proto)
		return kinstr_why__fail(why, -ENOENT, "'%.100s': no BTF prototype for %.200s (use registers: %%rdi, %%rsi, ...)",
					s, func);
	for (j = 0; j < proto->nargs; j++)
		if (!strcmp(proto->args[j].name, s))
			break;
	if (j == proto->nargs) {
		char names[256] = "";

		for (j = 0; j < proto->nargs; j++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", j ? ", " : "",
				 proto->args[j].name);
		return kinstr_why__fail(why, -ENOENT, "%.150s has no argument '%.100s' (it has: %.200s)", func, s,
					proto->nargs ? names : "none");
	}
	if (!at_entry)
		return kinstr_why__fail(why, -EINVAL, "argument '%.100s': arguments by name only at %.150s's entry (use "
					"registers elsewhere)", s, func);
	if (proto->args[j].on_stack || proto->args[j].reg[0] < 0)
		return kinstr_why__fail(why, -EOPNOTSUPP, "argument '%.100s' of %.150s is passed on the stack: not supported",
					s, func);
	t->v.reg = (uint8_t)proto->args[j].reg[0];
	type_from_btf(&proto->args[j], t);
	return 0;
}

static void field_name(const char *expr, char *out, size_t size)
{
	size_t o = 0;

	for (; *expr && o + 1 < size; expr++) {
		char c = *expr;

		if (isalnum((unsigned char)c) || c == '_')
			out[o++] = c;
		else if (o && out[o - 1] != '_' && c != '%' && c != ')')
			out[o++] = '_';
	}
	while (o && out[o - 1] == '_')
		o--;
	out[o] = 0;
	if (!o || isdigit((unsigned char)out[0])) {
		memmove(out + 1, out, strlen(out) + 1 < size - 1 ? strlen(out) + 1 : size - 2);
		out[0] = 'v';
		out[size - 1] = 0;
	}
}

/* One VALUE of a SPEC. */
static int parse_value(char *tok, const struct kinstr_proto *proto, bool at_entry, bool at_return,
		       const char *func, struct kinstr_value *t, struct kinstr_why *why)
{
	char *colon = NULL, *p, *open;
	int depth = 0, ret;

	memset(t, 0, sizeof(*t));
	trim(tok);
	for (p = tok; *p; p++) {
		depth += *p == '(';
		depth -= *p == ')';
		if (*p == ':' && !depth)
			colon = p;
	}
	if (colon)
		*colon = 0;
	trim(tok);
	/* NAME=EXPR names the field */
	p = strchr(tok, '=');
	if (p && (!strchr(tok, '(') || p < strchr(tok, '('))) {
		*p = 0;
		trim(tok);
		field_name(tok, t->name, sizeof(t->name));
		tok = p + 1;
		trim(tok);
	} else {
		p = NULL;
	}
	if (!*tok)
		return kinstr_why__fail(why, -EINVAL, "empty value");
	if (!p)
		field_name(tok, t->name, sizeof(t->name));
	open = strchr(tok, '(');
	if (!strcmp(tok, "ret") || !strcmp(tok, "retval")) {
		if (!at_return)
			return kinstr_why__fail(why, -EINVAL, "'%.200s': the return value exists only at FUNC%%return", tok);
		t->v.kind = KINSTR_VAL_REG;
		t->v.reg = KINSTR_REG_RAX;
		t->type = KINSTR_CTF_S64;
		if (!p)
			snprintf(t->name, sizeof(t->name), "ret");
	} else if (open) {
		char *end, *close = strrchr(tok, ')');
		long long off = 0;

		if (!close || close[1])
			return kinstr_why__fail(why, -EINVAL, "'%.200s': expected +OFF(X)", tok);
		*close = 0;
		*open = 0;
		if (*tok) {
			errno = 0;
			off = strtoll(tok, &end, 0);
			if (errno || *end || off < INT32_MIN || off > INT32_MAX)
				return kinstr_why__fail(why, -EINVAL, "'%.200s': bad offset (+0x10(%%rdi))", tok);
		}
		trim(open + 1);
		ret = base_reg(open + 1, proto, at_entry, func, t, why);
		if (ret)
			return ret;
		if (!p) {
			char base[64];

			field_name(open + 1, base, sizeof(base));
			snprintf(t->name, sizeof(t->name), "%.40s_%s%llx", base, off < 0 ? "m" : "",
				 off < 0 ? -(unsigned long long)off : (unsigned long long)off);
		}
		t->v.kind = KINSTR_VAL_MEM;
		t->v.offset = (int32_t)off;
		t->v.size = 8;
		t->type = KINSTR_CTF_U64;
		t->hex = true;
		if (colon)
			return apply_type(colon + 1, t, true, why);
		return 0;
	} else {
		ret = base_reg(tok, proto, at_entry, func, t, why);
		if (ret)
			return ret;
		t->v.kind = KINSTR_VAL_REG;
	}
	if (colon) {
		ret = apply_type(colon + 1, t, false, why);
		if (ret)
			return ret;
		if (t->v.kind == KINSTR_VAL_STR)
			t->v.deref = 0;	/* the register holds the char pointer */
	}
	return 0;
}

int kinstr_values__parse(const char *list, const struct kinstr_proto *proto, bool at_entry, bool at_return,
			 const char *func, struct kinstr_value *vals, unsigned int *nvals, struct kinstr_why *why)
{
	char buf[1024], *tok, *p;
	int depth = 0, ret;
	unsigned int i, j;

	*nvals = 0;
	if (at_return && (!list || !*list)) {
		/* a return's value is what one wants to see */
		struct kinstr_value *t = &vals[(*nvals)++];

		memset(t, 0, sizeof(*t));
		snprintf(t->name, sizeof(t->name), "ret");
		t->v.kind = KINSTR_VAL_REG;
		t->v.reg = KINSTR_REG_RAX;
		t->type = KINSTR_CTF_S64;
		return 0;
	}
	if (!list || !*list)
		return 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = p = buf;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if ((*p == ',' && !depth) || !*p) {
			bool last = !*p;

			*p = 0;
			if (*nvals == KINSTR_TRACE_MAX_VALS)
				return kinstr_why__fail(why, -E2BIG, "at most %d values per probe", KINSTR_TRACE_MAX_VALS);
			ret = parse_value(tok, proto, at_entry, at_return, func, &vals[*nvals], why);
			if (ret)
				return ret;
			(*nvals)++;
			if (last)
				break;
			tok = p + 1;
		}
	}
	/* field names must be distinct, and not the ones every event has */
	for (i = 0; i < *nvals; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(vals[i].name, vals[j].name))
				break;
		if (j < i || !strcmp(vals[i].name, "pid") || !strcmp(vals[i].name, "tid") ||
		    !strcmp(vals[i].name, "comm"))
			snprintf(vals[i].name + strlen(vals[i].name),
				 sizeof(vals[i].name) - strlen(vals[i].name), "_%u", i);
	}
	return 0;
}

