// SPDX-License-Identifier: GPL-2.0
/*
 * Site classification: hand-made functions with known answers, and invariants over the
 * shipped snapshot of live kernel functions (tests/data/sample-*.snap).
 */
#include <errno.h>
#include <glob.h>
#include <string.h>

#include <kinstr/sites.h>
#include "check.h"

#define BASE 0xffffffff81000000ULL

static const struct kinstr_site *at(const struct kinstr_fn *fn, uint64_t off)
{
	return kinstr_fn__site_at(fn, BASE + off);
}

static void t_branch_target_makes_a_trap(void)
{
	static const uint8_t code[] = {
		0x55,			/* 0: push rbp */
		0x48, 0x89, 0xe5,	/* 1: mov rbp, rsp */
		0x31, 0xc0,		/* 4: xor eax, eax */
		0x85, 0xff,		/* 6: test edi, edi */
		0x74, 0x02,		/* 8: je 0xc */
		0xff, 0xc0,		/* a: inc eax */
		0x5d,			/* c: pop rbp  <- branch target */
		0xc3,			/* d: ret */
		0xcc, 0xcc,		/* e: padding */
	};
	struct kinstr_fn *fn = kinstr_fn__analyze_bytes(NULL, code, sizeof(code), BASE);

	CHECK(fn != NULL, "analyze: %s", strerror(errno));
	if (!fn)
		return;
	CHECK(at(fn, 0)->cls == KINSTR_SITE_JUMP && at(fn, 0)->displaced_len == 6, "+0: %d/%d",
	      at(fn, 0)->cls, at(fn, 0)->displaced_len);
	CHECK(at(fn, 4)->cls == KINSTR_SITE_JUMP, "+4 %d", at(fn, 4)->cls);
	/* the target 0xc is the end of [6, 0xc), not inside it */
	CHECK(at(fn, 6)->cls == KINSTR_SITE_JUMP && at(fn, 6)->displaced_len == 6, "+6: %d/%d",
	      at(fn, 6)->cls, at(fn, 6)->displaced_len);
	CHECK(at(fn, 8)->cls == KINSTR_SITE_TRAP && at(fn, 8)->rule == KINSTR_RULE_BRANCH_TARGET &&
	      at(fn, 8)->rule_addr == BASE + 0xc, "+8: %d rule %d at %llx", at(fn, 8)->cls,
	      at(fn, 8)->rule, (unsigned long long)at(fn, 8)->rule_addr);
	/* inc, pop, ret and one int3 of filler: but the target 0xc is inside */
	CHECK(at(fn, 0xa)->cls == KINSTR_SITE_TRAP && at(fn, 0xa)->rule == KINSTR_RULE_BRANCH_TARGET,
	      "+a: %d rule %d", at(fn, 0xa)->cls, at(fn, 0xa)->rule);
	CHECK(at(fn, 0xc)->cls == KINSTR_SITE_TRAP && at(fn, 0xc)->rule == KINSTR_RULE_CROSSES_END,
	      "+c: %d rule %d", at(fn, 0xc)->cls, at(fn, 0xc)->rule);
	CHECK(at(fn, 0xd)->cls == KINSTR_SITE_TRAP, "+d: %d", at(fn, 0xd)->cls);
	CHECK(at(fn, 0xe)->cls == KINSTR_SITE_REFUSED && at(fn, 0xe)->rule == KINSTR_RULE_PADDING,
	      "+e: %d rule %d", at(fn, 0xe)->cls, at(fn, 0xe)->rule);
	errno = 0;
	CHECK(at(fn, 2) == NULL && errno == EILSEQ, "mid-instruction: errno %d", errno);
	errno = 0;
	CHECK(at(fn, 0x100) == NULL && errno == ERANGE, "outside: errno %d", errno);
	kinstr_fn__free(fn);
}

/* `ret; int3 x4` (a return thunk's jmp rewritten at boot): a jmp may cover the never-run filler */
static void t_filler_after_exits(void)
{
	static const uint8_t code[] = {
		0x85, 0xff,			/* 0: test edi, edi */
		0x74, 0x06,			/* 2: je 0xa */
		0x5b,				/* 4: pop rbx */
		0xc3,				/* 5: ret */
		0xcc, 0xcc, 0xcc, 0xcc,		/* 6: filler */
		0x31, 0xc0,			/* a: xor eax, eax  <- branch target */
		0xeb, 0x06,			/* c: jmp 0x14 */
		0xcc,				/* e: SLS guard */
		0xcc,				/* f: int3  <- branch target below */
		0x90, 0x90, 0x90, 0x90,		/* 10: nops */
		0x48, 0x85, 0xc0,		/* 14: test rax, rax */
		0x74, 0xf6,			/* 17: je 0xf */
		0xc3,				/* 19: ret */
		0xcc, 0xcc, 0xcc, 0xcc,		/* 1a: filler to the symbol's end */
	};
	struct kinstr_fn *fn = kinstr_fn__analyze_bytes(NULL, code, sizeof(code), BASE);

	CHECK(fn != NULL, "analyze: %s", strerror(errno));
	if (!fn)
		return;
	CHECK(at(fn, 5)->cls == KINSTR_SITE_JUMP && at(fn, 5)->displaced_len == 5 && at(fn, 5)->live_len == 1,
	      "+5 ret: %d rule %d len %d/%d", at(fn, 5)->cls, at(fn, 5)->rule, at(fn, 5)->displaced_len,
	      at(fn, 5)->live_len);
	CHECK(at(fn, 4)->cls == KINSTR_SITE_JUMP && at(fn, 4)->displaced_len == 5 && at(fn, 4)->live_len == 2,
	      "+4 pop: %d rule %d len %d/%d", at(fn, 4)->cls, at(fn, 4)->rule, at(fn, 4)->displaced_len,
	      at(fn, 4)->live_len);
	/* the filler itself is never a site */
	CHECK(at(fn, 6)->cls == KINSTR_SITE_REFUSED, "+6: %d", at(fn, 6)->cls);
	/* jmp then filler, but the int3 at 0xf is a branch target: no */
	CHECK(at(fn, 0xc)->cls == KINSTR_SITE_TRAP, "+c: %d rule %d", at(fn, 0xc)->cls, at(fn, 0xc)->rule);
	/* the last ret: four bytes of filler before the symbol ends */
	CHECK(at(fn, 0x19)->cls == KINSTR_SITE_JUMP && at(fn, 0x19)->live_len == 1,
	      "+19: %d rule %d", at(fn, 0x19)->cls, at(fn, 0x19)->rule);
	/* plain code never has live_len short of displaced_len */
	CHECK(at(fn, 0)->cls != KINSTR_SITE_JUMP || at(fn, 0)->live_len == at(fn, 0)->displaced_len,
	      "+0: %d/%d", at(fn, 0)->live_len, at(fn, 0)->displaced_len);
	kinstr_fn__free(fn);
}

static void t_calls_and_unsafe_instructions(void)
{
	static const uint8_t code[] = {
		0xe8, 0x00, 0x00, 0x00, 0x00,	/* 0: call +0 */
		0xfa,				/* 5: cli */
		0x48, 0x8b, 0x05, 0x10, 0, 0, 0,/* 6: mov rax, [rip+0x10] */
		0x90, 0x90, 0x90, 0x90,		/* d: nops */
		0xcc,				/* 11: int3 (SLS-style, mid-function) */
		0x90, 0x90, 0x90, 0x90, 0x90,	/* 12 */
		0xc3,				/* 17: ret */
	};
	struct kinstr_fn *fn = kinstr_fn__analyze_bytes(NULL, code, sizeof(code), BASE);
	char why[256];

	CHECK(fn != NULL, "analyze: %s", strerror(errno));
	if (!fn)
		return;
	/* a direct call is emulated in the slot (push $return; jmp target): a jump site */
	CHECK(at(fn, 0)->cls == KINSTR_SITE_JUMP && at(fn, 0)->displaced_len == 5,
	      "call: %d rule %d len %d", at(fn, 0)->cls, at(fn, 0)->rule, at(fn, 0)->displaced_len);
	CHECK(at(fn, 5)->cls == KINSTR_SITE_REFUSED && at(fn, 5)->rule == KINSTR_RULE_UNSAFE_INSN,
	      "cli: %d rule %d", at(fn, 5)->cls, at(fn, 5)->rule);
	CHECK(at(fn, 6)->cls == KINSTR_SITE_JUMP, "rip-relative load: %d rule %d", at(fn, 6)->cls,
	      at(fn, 6)->rule);
	CHECK(at(fn, 0xd)->cls == KINSTR_SITE_TRAP &&
	      at(fn, 0xd)->rule == KINSTR_RULE_DISPLACES_UNRELOCATABLE, "nop before int3: %d rule %d",
	      at(fn, 0xd)->cls, at(fn, 0xd)->rule);
	CHECK(at(fn, 0x11)->cls == KINSTR_SITE_REFUSED, "int3: %d", at(fn, 0x11)->cls);
	kinstr_site__why(at(fn, 5), why, sizeof(why));
	CHECK(strstr(why, "IF") != NULL, "why: %s", why);
	kinstr_fn__free(fn);
}

/*
 * A jump may displace a direct call as its last instruction (the callee returns after the jmp,
 * to the original code), but never an indirect one, and never a call in the middle (a direct
 * call is 5 bytes: it always ends the displaced run).
 */
static void t_displaced_calls(void)
{
	static const uint8_t code[] = {
		0x53,				/* 0: push rbx */
		0xe8, 0x10, 0x00, 0x00, 0x00,	/* 1: call +0x10 */
		0x48, 0x89, 0xc3,		/* 6: mov rbx, rax */
		0xff, 0xd0,			/* 9: call *rax */
		0x5b,				/* b: pop rbx */
		0x31, 0xc0,			/* c: xor eax, eax */
		0x90, 0x90, 0x90,		/* e: nops */
		0xc3,				/* 11: ret */
	};
	struct kinstr_fn *fn = kinstr_fn__analyze_bytes(NULL, code, sizeof(code), BASE);
	char why[256];

	CHECK(fn != NULL, "analyze: %s", strerror(errno));
	if (!fn)
		return;
	CHECK(at(fn, 0)->cls == KINSTR_SITE_JUMP && at(fn, 0)->displaced_len == 6 && at(fn, 0)->live_len == 6,
	      "push; call: %d rule %d len %d", at(fn, 0)->cls, at(fn, 0)->rule, at(fn, 0)->displaced_len);
	CHECK(at(fn, 1)->cls == KINSTR_SITE_JUMP && at(fn, 1)->displaced_len == 5,
	      "call: %d rule %d", at(fn, 1)->cls, at(fn, 1)->rule);
	/* mov; call *rax: the indirect call would return into the slot */
	CHECK(at(fn, 6)->cls == KINSTR_SITE_TRAP && at(fn, 6)->rule == KINSTR_RULE_DISPLACES_CALL &&
	      at(fn, 6)->rule_addr == BASE + 9, "mov; call *: %d rule %d", at(fn, 6)->cls, at(fn, 6)->rule);
	kinstr_site__why(at(fn, 6), why, sizeof(why));
	CHECK(strstr(why, "indirect call") && strstr(why, "0xffffffff81000009"), "why: %s", why);
	CHECK(at(fn, 9)->cls == KINSTR_SITE_REFUSED && at(fn, 9)->rule == KINSTR_RULE_UNSAFE_INSN,
	      "call *: %d rule %d", at(fn, 9)->cls, at(fn, 9)->rule);
	kinstr_fn__free(fn);

	/* a return address outside the top 2 GiB cannot be pushed as a sign-extended imm32 */
	fn = kinstr_fn__analyze_bytes(NULL, code, sizeof(code), 0x1000);
	CHECK(fn != NULL, "analyze low: %s", strerror(errno));
	if (!fn)
		return;
	CHECK(kinstr_fn__site_at(fn, 0x1001)->cls == KINSTR_SITE_TRAP &&
	      kinstr_fn__site_at(fn, 0x1001)->rule == KINSTR_RULE_DISPLACES_CALL, "low call: %d rule %d",
	      kinstr_fn__site_at(fn, 0x1001)->cls, kinstr_fn__site_at(fn, 0x1001)->rule);
	kinstr_fn__free(fn);
}

/*
 * What the module's verifier refuses out of line, user space refuses too, by opcode: lgdt (which
 * Zydis does not mark privileged), clac, verw, ret imm16. At +0 each would be displaced by a
 * jump, so +0 is only a trap site if it is safe on its own.
 */
static void t_system_instructions_agree_with_the_module(void)
{
	static const struct {
		const char *name;
		uint8_t code[16];
		size_t len;
	} cases[] = {
		{ "lgdt (%rdi)", { 0x0f, 0x01, 0x17, 0x90, 0x90, 0x90, 0xc3 }, 7 },
		{ "clac", { 0x0f, 0x01, 0xca, 0x90, 0x90, 0x90, 0xc3 }, 7 },
		{ "verw 0x10(%rip)", { 0x0f, 0x00, 0x2d, 0x10, 0, 0, 0, 0xc3 }, 8 },
		{ "ret $8", { 0xc2, 0x08, 0x00 }, 3 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kinstr_fn *fn = kinstr_fn__analyze_bytes(NULL, cases[i].code, cases[i].len, BASE);

		CHECK(fn != NULL, "%s: analyze: %s", cases[i].name, strerror(errno));
		if (!fn)
			continue;
		CHECK(at(fn, 0)->cls == KINSTR_SITE_REFUSED && at(fn, 0)->rule == KINSTR_RULE_UNSAFE_INSN,
		      "%s: class %d rule %d", cases[i].name, at(fn, 0)->cls, at(fn, 0)->rule);
		kinstr_fn__free(fn);
	}
}

static struct kinstr_kernel *sample(void)
{
	struct kinstr_kernel *k = NULL;
	glob_t g;

	if (glob("tests/data/sample-*.snap", 0, NULL, &g) == 0 && g.gl_pathc)
		k = kinstr_kernel__open_snapshot(g.gl_pathv[0]);
	globfree(&g);
	return k;
}

static void t_snapshot_known_refusals(void)
{
	struct kinstr_kernel *k = sample();
	const struct kinstr_func *f;
	struct kinstr_fn *fn;
	size_t i;

	CHECK(k != NULL, "no readable tests/data/sample-*.snap: %s", strerror(errno));
	if (!k)
		return;
	f = kinstr_kernel__find_func(k, "vfs_read");
	fn = f ? kinstr_fn__analyze(k, f) : NULL;
	CHECK(fn != NULL, "vfs_read");
	if (fn) {
		const struct kinstr_site *s = kinstr_fn__site(fn, 0);

		CHECK(s->cls == KINSTR_SITE_REFUSED && (s->reserved & (1u << KINSTR_R_FTRACE)),
		      "vfs_read+0 is the ftrace site: cls %d reserved 0x%x", s->cls, s->reserved);
		kinstr_fn__free(fn);
	}
	f = kinstr_kernel__find_func(k, "entry_SYSCALL_64");
	fn = f ? kinstr_fn__analyze(k, f) : NULL;
	CHECK(fn != NULL, "entry_SYSCALL_64");
	for (i = 0; fn && i < kinstr_fn__site_cnt(fn); i++) {
		const struct kinstr_site *s = kinstr_fn__site(fn, i);

		CHECK(s->cls == KINSTR_SITE_REFUSED, "entry text +0x%llx is %d",
		      (unsigned long long)(s->addr - f->addr), s->cls);
		if (s->rule != KINSTR_RULE_PADDING)
			CHECK(s->reserved & (1u << KINSTR_R_ENTRY_TEXT), "+0x%llx reserved 0x%x",
			      (unsigned long long)(s->addr - f->addr), s->reserved);
	}
	kinstr_fn__free(fn);
	f = kinstr_kernel__find_func(k, "do_int3");
	fn = f ? kinstr_fn__analyze(k, f) : NULL;
	CHECK(fn != NULL, "do_int3");
	for (i = 0; fn && i < kinstr_fn__site_cnt(fn); i++)
		CHECK(kinstr_fn__site(fn, i)->cls == KINSTR_SITE_REFUSED, "do_int3 site %zu probeable", i);
	kinstr_fn__free(fn);
	kinstr_kernel__close(k);
}

/* Invariants every classification must keep, checked over every sample function. */
static void t_snapshot_invariants(void)
{
	struct kinstr_kernel *k = sample();
	size_t i, j, sites = 0, jumps = 0;

	CHECK(k != NULL, "no readable tests/data/sample-*.snap");
	if (!k)
		return;
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_fn *fn = kinstr_fn__analyze(k, f);
		const struct kinstr_cfg *cfg;
		uint64_t next;

		CHECK(fn != NULL, "%s: %s", f->name, strerror(errno));
		if (!fn)
			continue;
		cfg = kinstr_fn__cfg(fn);
		next = f->addr;
		for (j = 0; j < kinstr_fn__site_cnt(fn); j++) {
			const struct kinstr_site *s = kinstr_fn__site(fn, j);
			char why[256];
			size_t m;

			sites++;
			CHECK(s->addr == next, "%s: sites do not tile at 0x%llx", f->name, (unsigned long long)s->addr);
			next = s->addr + s->insn_len;
			if (s->cls != KINSTR_SITE_JUMP)
				CHECK(*kinstr_site__why(s, why, sizeof(why)), "%s+0x%llx: empty why", f->name,
				      (unsigned long long)(s->addr - f->addr));
			if (s->cls == KINSTR_SITE_REFUSED)
				continue;
			CHECK(kinstr_kernel__reserved(k, s->addr, s->insn_len) == 0, "%s+0x%llx probeable but reserved",
			      f->name, (unsigned long long)(s->addr - f->addr));
			if (s->cls != KINSTR_SITE_JUMP)
				continue;
			jumps++;
			CHECK(s->displaced_len >= 5, "%s: displaced %u", f->name, s->displaced_len);
			CHECK(kinstr_kernel__reserved(k, s->addr, s->displaced_len) == 0, "%s+0x%llx: jump over reserved",
			      f->name, (unsigned long long)(s->addr - f->addr));
			/* no displaced instruction after the first is a branch target */
			for (m = j + 1; m < kinstr_cfg__insn_cnt(cfg) &&
					kinstr_cfg__insn(cfg, m)->x.addr < s->addr + s->displaced_len; m++) {
				const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, m);

				CHECK(!(in->flags & KINSTR_CFG_I_TARGET), "%s+0x%llx: jump displaces target +0x%llx",
				      f->name, (unsigned long long)(s->addr - f->addr),
				      (unsigned long long)(in->x.addr - f->addr));
				/* a direct call only as the last (emulated), an indirect one never */
				CHECK(in->x.flow != KINSTR_X86_FLOW_CALL_IND, "%s: jump displaces an indirect call", f->name);
				CHECK(in->x.flow != KINSTR_X86_FLOW_CALL ||
				      in->x.addr + in->x.len == s->addr + s->displaced_len,
				      "%s+0x%llx: jump displaces a call that is not its last instruction", f->name,
				      (unsigned long long)(s->addr - f->addr));
			}
		}
		CHECK(next == f->addr + f->size || (kinstr_cfg__flags(cfg) & KINSTR_CFG_F_TRUNCATED),
		      "%s: sites end at +0x%llx of 0x%x", f->name, (unsigned long long)(next - f->addr), f->size);
		kinstr_fn__free(fn);
	}
	CHECK(sites > 10000 && jumps > 5000, "only %zu sites, %zu jumps", sites, jumps);
	kinstr_kernel__close(k);
}

int main(void)
{
	RUN(t_branch_target_makes_a_trap);
	RUN(t_filler_after_exits);
	RUN(t_calls_and_unsafe_instructions);
	RUN(t_displaced_calls);
	RUN(t_system_instructions_agree_with_the_module);
	RUN(t_snapshot_known_refusals);
	RUN(t_snapshot_invariants);
	return check_done();
}
