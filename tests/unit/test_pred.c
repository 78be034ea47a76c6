// SPDX-License-Identifier: GPL-2.0
/*
 * Value predicates: the compiler (lib/plan/pred.c) against the programs it should make and the
 * sentences it should refuse with; the verifier and the evaluator the module runs (rules/pred.h,
 * the same source) on the compiled programs and on malformed ones; the spec grammar's 'if'.
 */
#include <errno.h>
#include <string.h>

#include <kinstr/plan.h>
#include <kinstr/pred.h>
#include <kinstr/x86.h>
#include "check.h"
#include "vfs_read_proto.h"

/* What a hit reads, for the evaluator: the values' raw 8 bytes, strings, pid/tid/cpu, comm. */
struct kinstr_pred_env {
	uint64_t num[KINSTR_TRACE_MAX_VALS];
	const char *str[KINSTR_TRACE_MAX_VALS];
	uint64_t pid, tid, cpu;
	const char *comm;
	unsigned int reads;		/* values read: short-circuits read fewer */
};

#define KINSTR_PRED_WANT_EVAL
#include "rules/pred.h"

static uint64_t kinstr_pred_env_num(const struct kinstr_pred_env *e, unsigned int i)
{
	((struct kinstr_pred_env *)e)->reads++;
	return e->num[i];
}

static uint64_t kinstr_pred_env_ctx(const struct kinstr_pred_env *e, unsigned int what)
{
	return what == KINSTR_PRED_CTX_PID ? e->pid : what == KINSTR_PRED_CTX_TID ? e->tid : e->cpu;
}

static int kinstr_pred_env_streq(const struct kinstr_pred_env *e, unsigned int i, const char *s, unsigned int len)
{
	const char *v = i == KINSTR_PRED_COMM ? e->comm : e->str[i];

	return strlen(v) == len && !memcmp(v, s, len);
}


static struct kinstr_value vals[KINSTR_TRACE_MAX_VALS];
static unsigned int nvals;
static struct kinstr_trace_spec spec;
static struct kinstr_pred prog;
static struct kinstr_why why;

/* count (size_t), small (s32 at %r8), path (a string at *(%rsi + 0)) */
static void setup(void)
{
	unsigned int i;

	if (kinstr_values__parse("count,small=%r8:s32,path=+0(%rsi):string[16]", &proto, true, false, "vfs_read",
				 vals, &nvals, &why)) {
		printf("cannot parse the values: %s\n", why.msg);
		exit(1);
	}
	memset(&spec, 0, sizeof(spec));
	spec.nvals = (uint8_t)nvals;
	for (i = 0; i < nvals; i++)
		spec.vals[i] = vals[i].v;
}

static int compile(const char *expr)
{
	why.msg[0] = 0;
	return kinstr_pred__compile(expr, vals, nvals, &prog, &why);
}

static int run(struct kinstr_pred_env *e)
{
	return kinstr_pred_run(&prog, e);
}

#define I(o, A, B, IMM) ((struct kinstr_pred_insn){ .op = KINSTR_PRED_##o, .a = (A), .b = (B), .imm = (IMM) })

static bool same(const struct kinstr_pred_insn *want, unsigned int n)
{
	return prog.ninsns == n && !memcmp(prog.insns, want, n * sizeof(*want));
}

static void t_programs(void)
{
	const struct kinstr_pred_insn gt[] = { I(VAL, 0, 0, 0), I(IMM, 0, 0, 4096), I(CMP, KINSTR_PRED_GT, 0, 0) };
	/* count > 1 && small < -1 || !pid: each && and || a jump over the rest of its chain */
	const struct kinstr_pred_insn chain[] = {
		I(VAL, 0, 0, 0), I(IMM, 0, 0, 1), I(CMP, KINSTR_PRED_GT, 0, 0),
		I(JZ, 0, 3, 0),
		I(VAL, 1, 4 | KINSTR_PRED_EXT_SIGNED, 0), I(IMM, 0, 0, (uint64_t)-1), I(CMP, KINSTR_PRED_SLT, 0, 0),
		I(JNZ, 0, 2, 0),
		I(CTX, KINSTR_PRED_CTX_PID, 0, 0), I(NOT, 0, 0, 0),
	};
	const struct kinstr_pred_insn comm[] = { I(STR, KINSTR_PRED_COMM, 5, 0), I(DATA, 0, 0, 0), I(NOT, 0, 0, 0) };

	CHECK(compile("count > 4096") == 0 && same(gt, 3), "%s (%u insns)", why.msg, prog.ninsns);
	CHECK(compile("count>4096") == 0 && same(gt, 3), "%s", why.msg);
	CHECK(compile("count > 1 && small < -1 || !pid") == 0 && same(chain, 10), "%s (%u insns)", why.msg,
	      prog.ninsns);
	memcpy(&((struct kinstr_pred_insn *)comm)[1].imm, "nginx\0\0", 8);
	CHECK(compile("comm != \"nginx\"") == 0 && same(comm, 3), "%s (%u insns)", why.msg, prog.ninsns);
	CHECK(kinstr_pred__valid(&prog, &spec), "comm != nginx not valid");
	CHECK(compile("path == \"/etc/passwd.0123\"") == 0 && prog.ninsns == 4 && prog.insns[0].a == 2 &&
	      prog.insns[0].b == 16, "%s (%u insns)", why.msg, prog.ninsns);
	/* 16 chars need 3 DATA instructions: the NUL gets the third */
	CHECK(kinstr_pred__valid(&prog, &spec), "a 16-char string not valid");
	CHECK(compile("(count == 0x10) && (cpu == 1 || tid == 2)") == 0 && kinstr_pred__valid(&prog, &spec), "%s",
	      why.msg);
	CHECK(compile("count") == 0 && prog.ninsns == 1 && kinstr_pred__valid(&prog, &spec), "%s", why.msg);
}

static void t_evaluates(void)
{
	struct kinstr_pred_env e = { .num = { 8192, 0xffffffffu, 0 }, .str = { NULL, NULL, "/etc/passwd" },
				     .pid = 10, .tid = 11, .cpu = 1, .comm = "nginx" };

	CHECK(compile("count > 4096") == 0 && run(&e), "8192 > 4096");
	e.num[0] = 512;
	CHECK(!run(&e), "512 > 4096");
	/* small is s32: 0xffffffff is -1; count (size_t) is unsigned: -1 is its largest value */
	CHECK(compile("small < 0") == 0 && run(&e), "s32 0xffffffff < 0");
	CHECK(compile("small == -1") == 0 && run(&e), "s32 0xffffffff == -1");
	CHECK(compile("count < -1") == 0 && run(&e), "unsigned 512 < -1 (as u64)");
	e.num[1] = 0x1fffffffeull;	/* the register's upper half is not the s32's */
	CHECK(compile("small == -2") == 0 && run(&e), "the s32 cut to 4 bytes");
	CHECK(compile("comm == \"nginx\"") == 0 && run(&e), "comm");
	CHECK(compile("comm != \"nginx\"") == 0 && !run(&e), "comm !=");
	CHECK(compile("comm == \"ngin\"") == 0 && !run(&e), "a prefix of comm");
	CHECK(compile("path == \"/etc/passwd\" && pid == 10 && tid == 11 && cpu == 1") == 0 && run(&e), "path");
	CHECK(compile("!(pid == 10) || count >= 512 && count <= 512") == 0 && run(&e), "precedence");
	CHECK(compile("(pid == 9 || pid == 10) && !(count != 512)") == 0 && run(&e), "parentheses");
	/* && stops at the first false, || at the first true: the value after is not read */
	e.reads = 0;
	CHECK(compile("pid == 9 && count > 1") == 0 && !run(&e) && e.reads == 0, "&& read %u", e.reads);
	e.reads = 0;
	CHECK(compile("pid == 10 || count > 1") == 0 && run(&e) && e.reads == 0, "|| read %u", e.reads);
	/* --where joined to the spec's own */
	{
		struct kinstr_pred w;

		CHECK(compile("pid == 10") == 0, "%s", why.msg);
		CHECK(kinstr_pred__compile("count == 512", vals, nvals, &w, &why) == 0 &&
		      kinstr_pred__and(&prog, &w, &why) == 0 && kinstr_pred__valid(&prog, &spec) && run(&e), "and");
		e.num[0] = 513;
		CHECK(!run(&e), "and: the second false");
		e.pid = 9;
		e.num[0] = 512;
		CHECK(!run(&e), "and: the first false");
	}
}

static void bad(const char *expr, int err, const char *msg)
{
	int ret = compile(expr);

	CHECK(ret == err && !strcmp(why.msg, msg), "'%s': %d '%s', wanted '%s'", expr, ret, why.msg, msg);
}

static void t_refusals(void)
{
	bad("count > ", -EINVAL, "at column 9: expected a number, a string or a value name");
	bad("", -EINVAL, "at column 1: expected an expression");
	bad("count > > 1", -EINVAL, "at column 9: expected a number, a string or a value name, not '>'");
	bad("cnt > 3", -EINVAL, "at column 1: no value named 'cnt' (there are: count, small, path, pid, tid, cpu, comm)");
	bad("count > 3 count", -EINVAL, "at column 11: expected '&&', '||' or the end, not 'count'");
	bad("(count > 3", -EINVAL, "at column 11: expected ')' to close the '(' at column 1");
	bad("count > 3)", -EINVAL, "at column 10: a ')' without its '(', not ')'");
	bad("comm < \"x\"", -EINVAL, "at column 6: strings compare with == and != only");
	bad("count == \"x\"", -EINVAL, "at column 7: a number is compared with a number");
	bad("comm == path", -EINVAL, "at column 1: compare a string value (comm, or a value of type string) with a "
				     "constant string");
	bad("comm", -EINVAL, "at column 1: a string is compared with == or !=");
	bad("comm == \"0123456789abcdef\"", -EINVAL, "at column 9: comm has at most 15 characters");
	bad("count == \"abc", -EINVAL, "at column 10: a string without its closing '\"'");
	bad("count > 12ab", -EINVAL, "at column 9: expected a number, a string or a value name, not '12ab'");
	bad("count = 1", -EINVAL, "at column 7: expected '&&', '||' or the end, not '='");
	CHECK(compile("count > - 1 && small") == 0, "'- 1' is a number: %s", why.msg);
	bad("pid == 1 || pid == 2 || pid == 3 || pid == 4 || pid == 5 || pid == 6 || pid == 7 || pid == 8 || "
	    "pid == 9", -E2BIG, "the expression is too long: at most 32 instructions");
	/* the syntax alone (--where before the specs are planned): any name goes but the types */
	CHECK(kinstr_pred__compile("whatever > 3 && path == \"x\"", NULL, 0, &prog, &why) == 0, "%s", why.msg);
	CHECK(kinstr_pred__compile("x > ", NULL, 0, &prog, &why) == -EINVAL &&
	      !strcmp(why.msg, "at column 5: expected a number, a string or a value name"), "%s", why.msg);
}

/* A valid program, then one thing wrong with it: the verifier must refuse each. */
static void t_verifier(void)
{
	struct kinstr_pred p;
	unsigned int k;

	CHECK(compile("count > 4096 && comm == \"a\"") == 0 && kinstr_pred__valid(&prog, &spec), "%s", why.msg);
	/* count > 4096: VAL IMM CMP; JZ; STR DATA */
#define BREAK(what, stmt) \
	do { p = prog; stmt; CHECK(!kinstr_pred__valid(&p, &spec), "%s: taken", what); } while (0)
	BREAK("an unknown op", p.insns[1].op = KINSTR_PRED_OP_NR);
	BREAK("op 0 inside", p.insns[1].op = 0);
	BREAK("a value index past nvals", p.insns[0].a = (uint8_t)nvals);
	BREAK("a string value read as a number", p.insns[0].a = 2);
	BREAK("a number value as a string", p.insns[4].a = 0);
	BREAK("a bad width", p.insns[0].b = 3);
	BREAK("a jump past the end", p.insns[3].b = 10);
	BREAK("a jump into a string", p.insns[3].b = 1);
	BREAK("a non-zero tail", p.insns[KINSTR_PRED_MAX_INSNS - 1].imm = 1);
	BREAK("ninsns 0", p.ninsns = 0);
	BREAK("ninsns past the max", p.ninsns = KINSTR_PRED_MAX_INSNS + 1);
	BREAK("flags", p.flags = 1);
	BREAK("reserved", p.insns[2].__reserved = 1);
	BREAK("a CMP with nothing to compare", p.insns[1].op = KINSTR_PRED_NOT);
	BREAK("a CMP op past the last", p.insns[2].a = KINSTR_PRED_CMP_NR);
	BREAK("a string without its NUL", p.insns[5].imm = 0x6161);
	BREAK("a DATA outside a string", (p.insns[6] = I(DATA, 0, 0, 0), p.ninsns = 7));
	BREAK("two values left", (p.insns[6] = I(IMM, 0, 0, 1), p.ninsns = 7));
	BREAK("a bad context", p.insns[0] = I(CTX, KINSTR_PRED_CTX_NR, 0, 0));
	/* n constants then n - 1 comparisons: n deep at most */
	for (unsigned int deep = KINSTR_PRED_MAX_STACK; deep <= KINSTR_PRED_MAX_STACK + 1; deep++) {
		memset(&p, 0, sizeof(p));
		for (k = 0; k < deep; k++)
			p.insns[k] = I(IMM, 0, 0, k);
		for (; k < 2 * deep - 1; k++)
			p.insns[k] = I(CMP, KINSTR_PRED_EQ, 0, 0);
		p.ninsns = (uint16_t)k;
		CHECK(kinstr_pred__valid(&p, &spec) == (deep <= KINSTR_PRED_MAX_STACK), "a stack of %u", deep);
	}
#undef BREAK
}

static void t_spec_grammar(void)
{
	struct kinstr_spec sp;

	CHECK(kinstr_spec__parse_trace("vfs_read(count) if count > 4096", &sp, &why) == 0 && sp.has_values &&
	      !strcmp(sp.values, "count") && sp.has_pred && !strcmp(sp.pred, "count > 4096") &&
	      !strcmp(sp.name, "vfs_read"), "%s", why.msg);
	CHECK(kinstr_spec__parse_trace("do_filp_open(p=+0(%rsi):string) if (p == \"/x\")", &sp, &why) == 0 &&
	      !strcmp(sp.values, "p=+0(%rsi):string") && !strcmp(sp.pred, "(p == \"/x\")"), "%s '%s' '%s'", why.msg,
	      sp.values, sp.pred);
	CHECK(kinstr_spec__parse_trace("vfs_read%return if ret < 0", &sp, &why) == 0 && !sp.has_values &&
	      sp.kind == KINSTR_SPEC_RETURN && !strcmp(sp.pred, "ret < 0"), "%s", why.msg);
	CHECK(kinstr_spec__parse_trace("vfs_read(count)", &sp, &why) == 0 && !sp.has_pred, "%s", why.msg);
	CHECK(kinstr_spec__parse_trace("vfs_read(count) if count >", &sp, &why) == -EINVAL &&
	      !strcmp(why.msg, "vfs_read: if 'count >': at column 8: expected a number, a string or a value name"),
	      "%s", why.msg);
	CHECK(kinstr_spec__parse_trace("vfs_read(count) when count > 1", &sp, &why) == -EINVAL &&
	      !strcmp(why.msg, "vfs_read(count) when count > 1: at column 17: expected 'if EXPR' after the spec, not "
			       "'when count > 1'"), "%s", why.msg);
	CHECK(kinstr_spec__parse_trace("vfs_read(count) if ", &sp, &why) == -EINVAL &&
	      !strcmp(why.msg, "vfs_read(count) if : at column 20: expected an expression after 'if'"), "%s", why.msg);
	CHECK(kinstr_spec__parse_trace("vfs_read(count", &sp, &why) == -EINVAL &&
	      !strcmp(why.msg, "vfs_read(count: expected SPEC(VALUE,...) [if EXPR]"), "%s", why.msg);
	/* elsewhere a predicate is named, not taken for a function's name */
	CHECK(kinstr_spec__parse("vfs_read if pid == 1", &sp, &why) == -EINVAL &&
	      !strcmp(why.msg, "vfs_read if pid == 1: a predicate (SPEC if EXPR) works with count, trace and span only"),
	      "%s", why.msg);
}

int main(void)
{
	setup();
	RUN(t_programs);
	RUN(t_evaluates);
	RUN(t_refusals);
	RUN(t_verifier);
	RUN(t_spec_grammar);
	return check_done();
}
