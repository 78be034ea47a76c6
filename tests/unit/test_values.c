// SPDX-License-Identifier: GPL-2.0
/*
 * The trace value grammar (lib/plan/values.c): registers, BTF arguments by name, ret, +OFF(X)
 * memory, :TYPE, NAME=, the field names made from them, and every refusal's sentence.
 */
#include <errno.h>
#include <string.h>

#include <kinstr/plan.h>
#include <kinstr/x86.h>
#include "check.h"
#include "vfs_read_proto.h"

static struct kinstr_value v[KINSTR_TRACE_MAX_VALS];
static unsigned int n;
static struct kinstr_why why;


static int parse(const char *list, bool entry, bool ret)
{
	memset(v, 0x5a, sizeof(v));
	why.msg[0] = 0;
	return kinstr_values__parse(list, &proto, entry, ret, "vfs_read", v, &n, &why);
}

static void t_registers_and_memory(void)
{
	CHECK(parse("%rdi", false, false) == 0 && n == 1 && v[0].v.kind == KINSTR_VAL_REG &&
	      v[0].v.reg == KINSTR_REG_RDI && v[0].type == KINSTR_CTF_U64 && v[0].hex && !strcmp(v[0].name, "rdi"),
	      "%s n %u name %s", why.msg, n, v[0].name);
	CHECK(parse("%rip, %r15:s32", false, false) == 0 && n == 2 && v[0].v.reg == KINSTR_REG_RIP &&
	      v[1].v.reg == KINSTR_REG_R15 && v[1].type == KINSTR_CTF_S32 && !v[1].hex, "%s", why.msg);
	CHECK(parse("+0x10(%rsi):u32", false, false) == 0 && n == 1 && v[0].v.kind == KINSTR_VAL_MEM &&
	      v[0].v.reg == KINSTR_REG_RSI && v[0].v.offset == 16 && v[0].v.size == 4 && v[0].type == KINSTR_CTF_U32 &&
	      !strcmp(v[0].name, "rsi_10"), "%s name %s size %u", why.msg, v[0].name, v[0].v.size);
	CHECK(parse("-8(%rbp)", false, false) == 0 && v[0].v.offset == -8 && v[0].v.size == 8 &&
	      !strcmp(v[0].name, "rbp_m8"), "%s name %s", why.msg, v[0].name);
	CHECK(parse("%rdi:string", false, false) == 0 && v[0].v.kind == KINSTR_VAL_STR && !v[0].v.deref &&
	      v[0].v.size == KINSTR_VALUE_STR_DEFAULT && v[0].type == KINSTR_CTF_STRING, "%s", why.msg);
	CHECK(parse("0(%rdi):string[16]", false, false) == 0 && v[0].v.kind == KINSTR_VAL_STR && v[0].v.deref &&
	      v[0].v.size == 16, "%s", why.msg);
	CHECK(parse("len=%rdx:x16", false, false) == 0 && !strcmp(v[0].name, "len") && v[0].type == KINSTR_CTF_U16 &&
	      v[0].hex, "%s name %s", why.msg, v[0].name);
}

static void t_arguments_and_ret(void)
{
	CHECK(parse("file, count", true, false) == 0 && n == 2 && v[0].v.reg == KINSTR_REG_RDI && v[0].hex &&
	      v[1].v.reg == KINSTR_REG_RDX && v[1].type == KINSTR_CTF_U64 && !v[1].hex &&
	      !strcmp(v[1].name, "count"), "%s", why.msg);
	CHECK(parse("+8(file)", true, false) == 0 && v[0].v.kind == KINSTR_VAL_MEM && v[0].v.reg == KINSTR_REG_RDI &&
	      !strcmp(v[0].name, "file_8"), "%s name %s", why.msg, v[0].name);
	CHECK(parse(NULL, false, true) == 0 && n == 1 && !strcmp(v[0].name, "ret") && v[0].v.reg == KINSTR_REG_RAX &&
	      v[0].type == KINSTR_CTF_S64, "%s", why.msg);
	CHECK(parse("", false, false) == 0 && n == 0, "%s", why.msg);
	CHECK(parse("retval", false, true) == 0 && !strcmp(v[0].name, "ret"), "%s", why.msg);
	CHECK(parse("ret", true, false) == -EINVAL &&
	      !strcmp(why.msg, "'ret': the return value exists only at FUNC%return"), "'%s'", why.msg);
	CHECK(parse("count", false, false) == -EINVAL &&
	      !strcmp(why.msg, "argument 'count': arguments by name only at vfs_read's entry (use registers elsewhere)"),
	      "'%s'", why.msg);
	CHECK(parse("nope", true, false) == -ENOENT &&
	      !strcmp(why.msg, "vfs_read has no argument 'nope' (it has: file, buf, count, pos)"), "'%s'", why.msg);
	CHECK(kinstr_values__parse("file", NULL, true, false, "f", v, &n, &why) == -ENOENT && why.err == -ENOENT &&
	      strstr(why.msg, "no BTF prototype for f"), "%d '%s'", why.err, why.msg);
}

static void t_names_and_refusals(void)
{
	CHECK(parse("%rdi, %rdi, pid=%rsi", false, false) == 0 && n == 3 && !strcmp(v[0].name, "rdi") &&
	      !strcmp(v[1].name, "rdi_1") && !strcmp(v[2].name, "pid_2"), "%s %s %s", v[0].name, v[1].name, v[2].name);
	CHECK(parse("%rdi,%rsi,%rdx,%rcx,%r8,%r9,%rax,%rbx,%r10", false, false) == -E2BIG && why.err == -E2BIG &&
	      !strcmp(why.msg, "at most 8 values per probe"), "%d '%s'", why.err, why.msg);
	CHECK(parse("%rzz", false, false) == -EINVAL && !strcmp(why.msg, "unknown register '%rzz' (%rax .. %r15, %rip)"),
	      "'%s'", why.msg);
	CHECK(parse("%rdi:u128", false, false) == -EINVAL &&
	      !strcmp(why.msg, "unknown type 'u128' (u8..u64, s8..s64, x8..x64, string)"), "'%s'", why.msg);
	CHECK(parse("%rdi:string[1]", false, false) == -EINVAL && strstr(why.msg, "bad string size"), "'%s'", why.msg);
	CHECK(parse("8(%rdi", false, false) == -EINVAL && strstr(why.msg, "expected +OFF(X)"), "'%s'", why.msg);
	CHECK(parse("zz(%rdi)", false, false) == -EINVAL && strstr(why.msg, "bad offset"), "'%s'", why.msg);
	CHECK(parse("%rdi,,%rsi", false, false) == -EINVAL && !strcmp(why.msg, "empty value"), "'%s'", why.msg);
}

int main(void)
{
	RUN(t_registers_and_memory);
	RUN(t_arguments_and_ret);
	RUN(t_names_and_refusals);
	return check_done();
}
