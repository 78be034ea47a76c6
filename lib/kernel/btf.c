// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Prototypes from BTF through libbpf, with SysV argument registers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <kinstr/btf.h>
#include <kinstr/x86.h>

struct kinstr_btf {
	struct btf *btf;
	struct btf_dump *dump;
	char *out;		/* where the dump callback writes */
	size_t out_size, out_len;
};

static void dump_printf(void *ctx, const char *fmt, va_list args)
{
	struct kinstr_btf *b = ctx;
	int n;

	if (!b->out || b->out_len >= b->out_size)
		return;
	n = vsnprintf(b->out + b->out_len, b->out_size - b->out_len, fmt, args);
	if (n > 0)
		b->out_len += (size_t)n < b->out_size - b->out_len ? (size_t)n : b->out_size - b->out_len - 1;
}

struct kinstr_btf *kinstr_btf__open(const char *path)
{
	struct kinstr_btf *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return NULL;
	/* libbpf 1.x: NULL with errno set on failure */
	b->btf = btf__parse(path ? path : "/sys/kernel/btf/vmlinux", NULL);
	if (!b->btf) {
		err = errno;
		free(b);
		errno = err;
		return NULL;
	}
	b->dump = btf_dump__new(b->btf, dump_printf, b, NULL);
	if (!b->dump) {
		btf__free(b->btf);
		free(b);
		errno = EINVAL;
		return NULL;
	}
	return b;
}

void kinstr_btf__close(struct kinstr_btf *b)
{
	if (!b)
		return;
	btf_dump__free(b->dump);
	btf__free(b->btf);
	free(b);
}

static void type_str(struct kinstr_btf *b, __u32 id, char *buf, size_t size)
{
	LIBBPF_OPTS(btf_dump_emit_type_decl_opts, opts, .field_name = "");

	b->out = buf;
	b->out_size = size;
	b->out_len = 0;
	buf[0] = 0;
	if (btf_dump__emit_type_decl(b->dump, id, &opts))
		snprintf(buf, size, "?");
	b->out = NULL;
}

int kinstr_btf__proto(struct kinstr_btf *b, const char *func, struct kinstr_proto *out)
{
	static const int regs[6] = { KINSTR_X86_RDI, KINSTR_X86_RSI, KINSTR_X86_RDX,
				     KINSTR_X86_RCX, KINSTR_X86_R8, KINSTR_X86_R9 };
	const struct btf_type *fn, *proto;
	const struct btf_param *p;
	unsigned int i, next = 0;
	__s32 id;

	memset(out, 0, sizeof(*out));
	if (strchr(func, '.'))
		return -EOPNOTSUPP;
	id = btf__find_by_name_kind(b->btf, func, BTF_KIND_FUNC);
	if (id < 0)
		return -ENOENT;
	fn = btf__type_by_id(b->btf, id);
	proto = fn ? btf__type_by_id(b->btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return -ENOENT;
	if (proto->type)
		type_str(b, proto->type, out->ret, sizeof(out->ret));
	else
		snprintf(out->ret, sizeof(out->ret), "void");
	p = btf_params(proto);
	for (i = 0; i < btf_vlen(proto) && out->nargs < KINSTR_PROTO_MAX_ARGS; i++, p++) {
		struct kinstr_proto_arg *a = &out->args[out->nargs];
		__s64 size;
		unsigned int need;

		if (!p->type) {		/* a trailing "..." */
			out->variadic = true;
			continue;
		}
		snprintf(a->name, sizeof(a->name), "%s", btf__name_by_offset(b->btf, p->name_off) ?: "");
		type_str(b, p->type, a->type, sizeof(a->type));
		size = btf__resolve_size(b->btf, p->type);
		a->size = size > 0 ? (unsigned int)size : 8;
		a->reg[0] = a->reg[1] = -1;
		need = a->size <= 8 ? 1 : a->size <= 16 ? 2 : 0;
		if (!need || next + need > 6) {
			a->on_stack = true;
		} else {
			a->reg[0] = regs[next++];
			if (need == 2)
				a->reg[1] = regs[next++];
		}
		out->nargs++;
	}
	return 0;
}

int kinstr_proto__format(const struct kinstr_proto *p, const char *func, char *buf, size_t size)
{
	size_t len;
	unsigned int i;

	len = snprintf(buf, size, "%s%s%s(", p->ret, p->ret[strlen(p->ret) - 1] == '*' ? "" : " ", func);
	for (i = 0; i < p->nargs && len < size; i++) {
		const struct kinstr_proto_arg *a = &p->args[i];

		len += snprintf(buf + len, size - len, "%s%s%s%s /%s%s%s/", i ? ", " : "", a->type,
				a->type[strlen(a->type) - 1] == '*' ? "" : " ", a->name,
				a->on_stack ? "stack" : kinstr_x86__reg_name(a->reg[0]),
				a->reg[1] >= 0 ? ":" : "", a->reg[1] >= 0 ? kinstr_x86__reg_name(a->reg[1]) : "");
	}
	if (len < size)
		len += snprintf(buf + len, size - len, "%s)", p->variadic ? ", ..." : "");
	return len < size ? 0 : -ENOSPC;
}
