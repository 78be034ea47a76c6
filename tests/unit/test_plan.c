// SPDX-License-Identifier: GPL-2.0
/*
 * The planner (lib/plan/plan.c): the spec grammar and its messages, then specs, entries and timing
 * planned over the shipped snapshot of live kernel functions (tests/data/sample-*.snap) into a
 * probe set that is never installed, each checked against the function's own analysis.
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/drill.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include "check.h"

static void t_spec(void)
{
	struct kinstr_spec sp;
	struct kinstr_why why;

	CHECK(kinstr_spec__parse("vfs_read", &sp, &why) == 0 && sp.kind == KINSTR_SPEC_ENTRY &&
	      !strcmp(sp.name, "vfs_read"), "vfs_read");
	CHECK(kinstr_spec__parse("vfs_read+0x1b", &sp, &why) == 0 && sp.kind == KINSTR_SPEC_OFFSET &&
	      sp.offset == 0x1b && !strcmp(sp.name, "vfs_read"), "vfs_read+0x1b");
	CHECK(kinstr_spec__parse("vfs_read+12", &sp, &why) == 0 && sp.offset == 12, "vfs_read+12");
	CHECK(kinstr_spec__parse("vfs_read%return", &sp, &why) == 0 && sp.kind == KINSTR_SPEC_RETURN &&
	      !strcmp(sp.name, "vfs_read"), "vfs_read%%return");
	CHECK(kinstr_spec__parse("vfs_*", &sp, &why) == 0 && sp.kind == KINSTR_SPEC_GLOB, "vfs_*");
	CHECK(kinstr_spec__parse("vfs_read%returnx", &sp, &why) == -EINVAL, "%%returnx accepted");
	CHECK(why.err == -EINVAL && !strcmp(why.msg, "vfs_read%returnx: unknown suffix '%returnx' (FUNC%return)"),
	      "%d '%s'", why.err, why.msg);
	CHECK(kinstr_spec__parse("vfs_read%ret", &sp, &why) == -EINVAL, "%%ret accepted");
	CHECK(kinstr_spec__parse("vfs_read+-1", &sp, &why) == -EINVAL, "+-1 accepted");
	CHECK(!strcmp(why.msg, "vfs_read+-1: bad offset '-1' (FUNC+0xOFF)"), "'%s'", why.msg);
	CHECK(kinstr_spec__parse("vfs_read+zz", &sp, &why) == -EINVAL &&
	      !strcmp(why.msg, "vfs_read+zz: bad offset 'zz' (FUNC+0xOFF)"), "'%s'", why.msg);
	CHECK(kinstr_spec__parse("vfs_read+", &sp, &why) == -EINVAL, "+ accepted");
	CHECK(kinstr_spec__parse("vfs_read+ 5", &sp, &why) == -EINVAL, "'+ 5' accepted");
	CHECK(kinstr_spec__parse("vfs_read++5", &sp, &why) == -EINVAL, "++5 accepted");
	CHECK(kinstr_spec__parse("vfs_read+0x99999999999999999", &sp, &why) == -EINVAL, "overflow accepted");
	CHECK(kinstr_spec__parse("vfs_read+5%return", &sp, &why) == -EINVAL, "+5%%return accepted");
	CHECK(kinstr_spec__parse("+5", &sp, &why) == -EINVAL && strstr(why.msg, "no function name"), "'%s'", why.msg);
	CHECK(kinstr_spec__parse("%return", &sp, &why) == -EINVAL, "%%return alone accepted");
	CHECK(kinstr_spec__parse("", &sp, &why) == -EINVAL, "empty accepted");
	CHECK(kinstr_spec__parse("vfs_*+5", &sp, &why) == -EINVAL, "glob+5 accepted");
	CHECK(kinstr_spec__parse("vfs_*%return", &sp, &why) == -EINVAL, "glob%%return accepted");
	/* a trace spec parsed once: the probe's text, kind and its values apart */
	CHECK(kinstr_spec__parse_trace("vfs_read%return(ret,x=+8(%rsi):u32)", &sp, &why) == 0 &&
		      !strcmp(sp.text, "vfs_read%return") && !strcmp(sp.name, "vfs_read") &&
		      sp.kind == KINSTR_SPEC_RETURN && sp.has_values && !strcmp(sp.values, "ret,x=+8(%rsi):u32"),
	      "trace spec: text '%s' values '%s'", sp.text, sp.values);
	CHECK(kinstr_spec__parse_trace("vfs_read+0x1b", &sp, &why) == 0 && !sp.has_values && !strcmp(sp.text, "vfs_read+0x1b"),
	      "trace spec without values");
	CHECK(kinstr_spec__parse_trace("vfs_read(count", &sp, &why) == -EINVAL && why.err == -EINVAL &&
		      strstr(why.msg, "expected SPEC(VALUE,...)"), "'%s'", why.msg);
}

static struct kinstr_kernel *snap(void)
{
	static struct kinstr_kernel *k;
	glob_t g;

	if (!k && glob("tests/data/sample-*.snap", 0, NULL, &g) == 0 && g.gl_pathc) {
		k = kinstr_kernel__open_snapshot(g.gl_pathv[0]);
		globfree(&g);
	}
	return k;
}

/* A plan over a fresh probe set of the snapshot. */
static struct kinstr_plan *plan(struct kinstr_probeset **ps, bool every)
{
	struct kinstr_plan_opts o = { .sz = sizeof(o), .every = every };

	*ps = kinstr_probeset__new(NULL, snap());
	return *ps ? kinstr_plan__new(*ps, &o) : NULL;
}

static void t_entry_return_offset(void)
{
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl = plan(&ps, false);
	const struct kinstr_func *f = snap() ? kinstr_kernel__find_func(snap(), "vfs_read") : NULL;
	const struct kinstr_fn *fn, *again;
	const struct kinstr_site *e;
	const struct kinstr_cfg *cfg;
	struct kinstr_why why;
	size_t i, rets = 0, n0;
	bool ftrace;

	CHECK(pl && f, "no snapshot or no vfs_read in it");
	if (!pl || !f)
		return;
	fn = kinstr_probeset__analysis(ps, f);
	again = kinstr_probeset__analysis(ps, f);
	CHECK(fn && fn == again, "analysed twice: %p %p", (const void *)fn, (const void *)again);
	e = kinstr_plan__entry_site(fn, f, true, &ftrace);
	CHECK(kinstr_plan__add_spec(pl, "vfs_read", &why, NULL) == 0, "%s", why.msg);
	CHECK(kinstr_probeset__cnt(ps) == 1 && e, "%zu probes", kinstr_probeset__cnt(ps));
	if (e && kinstr_probeset__cnt(ps) == 1)
		CHECK(kinstr_probeset__info(ps, 0)->addr == (ftrace ? f->addr : e->addr),
		      "entry at %#llx, site %#llx", (unsigned long long)kinstr_probeset__info(ps, 0)->addr,
		      (unsigned long long)e->addr);
	/* the same spec twice: the second names the probe already there */
	CHECK(kinstr_plan__add_spec(pl, "vfs_read", &why, NULL) == -EEXIST && strstr(why.msg, "already probed") &&
	      why.func == f, "%s", why.msg);
	cfg = kinstr_fn__cfg(fn);
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++)
		rets += !!(kinstr_cfg__insn(cfg, i)->flags & KINSTR_CFG_I_RETURN);
	n0 = kinstr_probeset__cnt(ps);
	CHECK(kinstr_plan__add_spec(pl, "vfs_read%return", &why, NULL) == 0, "%s", why.msg);
	CHECK(rets && kinstr_probeset__cnt(ps) - n0 == rets, "%zu return probes, %zu returns",
	      kinstr_probeset__cnt(ps) - n0, rets);
	/*
	 * All or nothing: a function of the snapshot with several returns, its last one probed alone
	 * first: FUNC%return then fails at that one, after the others, and leaves none of them.
	 */
	{
		struct kinstr_probeset *ps2 = NULL;
		struct kinstr_plan *pl2 = NULL;
		const struct kinstr_func *g = NULL;
		char spec[600], whole[600];
		size_t k, grets = 0;

		for (k = 0; k < kinstr_kernel__func_cnt(snap()) && !g; k++) {
			const struct kinstr_func *c = kinstr_kernel__func(snap(), k);
			const struct kinstr_fn *cf;
			const struct kinstr_cfg *cc;
			uint64_t last = 0;

			kinstr_plan__free(pl2);
			kinstr_probeset__free(ps2);
			ps2 = kinstr_probeset__new(NULL, snap());
			pl2 = ps2 ? kinstr_plan__new(ps2, NULL) : NULL;
			cf = pl2 && kinstr_kernel__name_unique(snap(), c) ? kinstr_probeset__analysis(ps2, c) : NULL;
			if (!cf)
				continue;
			cc = kinstr_fn__cfg(cf);
			for (i = 0, grets = 0; i < kinstr_cfg__insn_cnt(cc); i++)
				if (kinstr_cfg__insn(cc, i)->flags & KINSTR_CFG_I_RETURN) {
					grets++;
					last = kinstr_cfg__insn(cc, i)->x.addr;
				}
			snprintf(whole, sizeof(whole), "%s%%return", c->name);
			snprintf(spec, sizeof(spec), "%s+0x%llx", c->name, (unsigned long long)(last - c->addr));
			/* every return probeable (a trial on the fresh set), then the set made anew */
			if (grets < 2 || kinstr_plan__add_spec(pl2, whole, &why, NULL))
				continue;
			kinstr_plan__free(pl2);
			kinstr_probeset__free(ps2);
			ps2 = kinstr_probeset__new(NULL, snap());
			pl2 = ps2 ? kinstr_plan__new(ps2, NULL) : NULL;
			if (pl2 && kinstr_plan__add_spec(pl2, spec, &why, NULL) == 0)
				g = c;
		}
		CHECK(g, "no function of the snapshot has two probeable returns");
		if (g)
			CHECK(kinstr_plan__add_spec(pl2, whole, &why, NULL) == -EEXIST && kinstr_probeset__cnt(ps2) == 1,
			      "%s: %zu probes left after a refused spec of %zu returns: %s", whole,
			      kinstr_probeset__cnt(ps2), grets, why.msg);
		kinstr_plan__free(pl2);
		kinstr_probeset__free(ps2);
	}
	/* an offset inside the ftrace NOP: not a boundary, and the refusal says where */
	CHECK(!kinstr_fn__site_at(fn, f->addr + 1), "vfs_read+0x1 is a boundary");
	CHECK(kinstr_plan__add_spec(pl, "vfs_read+0x1", &why, NULL) == -EILSEQ && why.addr == f->addr + 1 &&
	      why.func == f && !strcmp(why.msg, "vfs_read+0x1: not an instruction boundary (instruction at +0x0, "
				       "5 bytes)"), "%d '%s'", why.err, why.msg);
	/* a refusal at a site carries its rule and instruction */
	CHECK(kinstr_plan__add_spec(pl, "vfs_read+0x0", &why, NULL) != 0 && why.addr == f->addr &&
	      why.insn_len == 5 && why.rule == KINSTR_RULE_RESERVED, "%d rule %u len %u '%s'", why.err, why.rule,
	      why.insn_len, why.msg);
	CHECK(kinstr_plan__add_spec(pl, "no_such_function_x", &why, NULL) == -ENOENT &&
	      !strcmp(why.msg, "no_such_function_x: no function 'no_such_function_x' in the kernel's symbols"),
	      "'%s'", why.msg);
	CHECK(kinstr_plan__add_spec(pl, "vfs_read%returnx", &why, NULL) == -EINVAL &&
	      strstr(why.msg, "unknown suffix"), "'%s'", why.msg);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
}

static void t_glob_every(void)
{
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl = plan(&ps, false);
	struct kinstr_plan_glob g;
	struct kinstr_why why;
	size_t i, n = 0, jumps = 0;
	unsigned long long last = 0, end = 0;
	const struct kinstr_func *f;
	const struct kinstr_fn *fn;

	if (!pl)
		SKIP("no snapshot");
	for (i = 0; i < kinstr_kernel__func_cnt(snap()); i++) {
		f = kinstr_kernel__func(snap(), i);
		if (kinstr__glob_match("vfs_*", f->name) && f->addr != last) {
			last = f->addr;
			n++;
		}
	}
	CHECK(kinstr_plan__add_spec(pl, "vfs_*", &why, &g) == 0, "%s", why.msg);
	CHECK(n > 5 && g.probed + g.refused == n && g.probed == kinstr_probeset__cnt(ps),
	      "%zu functions, %zu probed, %zu refused, %zu probes", n, g.probed, g.refused, kinstr_probeset__cnt(ps));
	CHECK(kinstr_plan__add_spec(pl, "zz_none_*", &why, &g) == -ENOENT &&
	      !strcmp(why.msg, "zz_none_*: no probeable function matches"), "'%s'", why.msg);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
	/* --every: the jump sites, each after the last one's bytes */
	pl = plan(&ps, true);
	f = kinstr_kernel__find_func(snap(), "vfs_read");
	fn = f ? kinstr_probeset__analysis(ps, f) : NULL;
	CHECK(fn && kinstr_plan__add_spec(pl, "vfs_read", &why, NULL) == 0, "%s", fn ? why.msg : "no vfs_read");
	for (i = 0; fn && i < kinstr_fn__site_cnt(fn); i++) {
		const struct kinstr_site *s = kinstr_fn__site(fn, i);

		if (s->cls == KINSTR_SITE_JUMP && s->addr >= end) {
			jumps++;
			end = s->addr + s->displaced_len;
		}
	}
	CHECK(jumps > 1 && kinstr_probeset__cnt(ps) == jumps, "%zu probes, %zu jump sites apart",
	      kinstr_probeset__cnt(ps), jumps);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
}

static void t_time(void)
{
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl = plan(&ps, false);
	struct kinstr_timed t[64];
	struct kinstr_why why;
	struct kinstr_callsite cs[64];
	size_t n, skipped, i, exits = 0, calls = 0;
	unsigned int ntimers;
	const struct kinstr_func *f;
	const struct kinstr_cfg *cfg;

	if (!pl)
		SKIP("no snapshot");
	f = kinstr_kernel__find_func(snap(), "vfs_read");
	CHECK(kinstr_plan__time_spec(pl, "vfs_read", 3, t, 64, &n, &skipped, &why) == 0, "%s", why.msg);
	cfg = kinstr_fn__cfg(kinstr_probeset__analysis(ps, f));
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++) {
		exits += !!(kinstr_cfg__insn(cfg, i)->flags & (KINSTR_CFG_I_RETURN | KINSTR_CFG_I_TAIL_CALL));
		calls += kinstr_cfg__insn(cfg, i)->x.flow == KINSTR_X86_FLOW_CALL ||
			 kinstr_cfg__insn(cfg, i)->x.flow == KINSTR_X86_FLOW_CALL_IND;
	}
	CHECK(n == 1 && !skipped && t[0].f == f && t[0].timer == 3 && t[0].exits == exits &&
	      kinstr_probeset__cnt(ps) == 1 + exits, "n %zu, timer %u, exits %u of %zu, %zu probes", n, t[0].timer,
	      t[0].exits, exits, kinstr_probeset__cnt(ps));
	ntimers = 4;
	n = kinstr_plan__time_calls(pl, f, &ntimers, cs, 64);
	CHECK(n == calls && calls > 0, "%zu call sites of %zu", n, calls);
	for (i = 0, skipped = 0; i < n; i++)
		skipped += cs[i].timed;
	CHECK(ntimers == 4 + skipped && kinstr_probeset__cnt(ps) == 1 + exits + 2 * skipped,
	      "%u timers, %zu probes for %zu timed calls", ntimers, kinstr_probeset__cnt(ps), skipped);
	CHECK(kinstr_plan__time_spec(pl, "zz_none_*", 0, t, 64, &n, &skipped, &why) == -ENOENT &&
	      !strcmp(why.msg, "zz_none_*: no function matches"), "'%s'", why.msg);
	CHECK(kinstr_plan__time_spec(pl, "vfs_*", 0, t, 2, &n, &skipped, &why) == -E2BIG &&
	      strstr(why.msg, "in one batch"), "'%s'", why.msg);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
}

/* Where an indirect call's or jump's target is, for the probe that tallies it (drill). */
static void t_indirect_target(void)
{
	static const struct {
		const char *what;
		unsigned char b[8];
		unsigned int len;
		int ret;
		unsigned int kind, reg;
		int off;
	} c[] = {
		{ "call *%rax", { 0xff, 0xd0 }, 2, 0, KINSTR_VAL_REG, KINSTR_REG_RAX, 0 },
		{ "call *%r11", { 0x41, 0xff, 0xd3 }, 3, 0, KINSTR_VAL_REG, KINSTR_REG_R11, 0 },
		{ "cs call *%rdx", { 0x2e, 0xff, 0xd2 }, 3, 0, KINSTR_VAL_REG, KINSTR_REG_RDX, 0 },
		{ "jmp *%rcx", { 0xff, 0xe1 }, 2, 0, KINSTR_VAL_REG, KINSTR_REG_RCX, 0 },
		{ "call *0x10(%rax)", { 0xff, 0x50, 0x10 }, 3, 0, KINSTR_VAL_MEM, KINSTR_REG_RAX, 0x10 },
		{ "call *-0x8(%rbp)", { 0xff, 0x55, 0xf8 }, 3, 0, KINSTR_VAL_MEM, KINSTR_REG_RBP, -8 },
		{ "call *0x100(%r11)", { 0x41, 0xff, 0x93, 0x00, 0x01, 0, 0 }, 7, 0, KINSTR_VAL_MEM, KINSTR_REG_R11, 0x100 },
		{ "call *(%rbx)", { 0xff, 0x13 }, 2, 0, KINSTR_VAL_MEM, KINSTR_REG_RBX, 0 },
		{ "jmp *(%rsp)", { 0xff, 0x24, 0x24 }, 3, 0, KINSTR_VAL_MEM, KINSTR_REG_RSP, 0 },
		/* RIP-relative: from the probe's RIP, the instruction's own address (0x1000): 6 + 0x10 */
		{ "call *0x10(%rip)", { 0xff, 0x15, 0x10, 0, 0, 0 }, 6, 0, KINSTR_VAL_MEM, KINSTR_REG_RIP, 0x16 },
		{ "call *0x0(,%rax,8)", { 0xff, 0x14, 0xc5, 0, 0, 0, 0 }, 7, -EOPNOTSUPP, 0, 0, 0 },
		{ "call *(%rax,%rbx,1)", { 0xff, 0x14, 0x18 }, 3, -EOPNOTSUPP, 0, 0, 0 },
		{ "mov %rax,%rdi", { 0x48, 0x89, 0xc7 }, 3, -ENOENT, 0, 0, 0 },
	};
	static const struct kinstr_func thunk = { .addr = 0x2000, .name = "__x86_indirect_thunk_r11" },
		call_thunk = { .addr = 0x2000, .name = "__x86_indirect_call_thunk_rax" },
		array = { .addr = 0x2000, .name = "__x86_indirect_thunk_array" },
		plain = { .addr = 0x2000, .name = "vfs_read" };
	/* call 0x2000 and jmp 0x2000, at 0x1000 */
	static const unsigned char call[] = { 0xe8, 0xfb, 0x0f, 0, 0 }, jmp[] = { 0xe9, 0xfb, 0x0f, 0, 0 };
	struct kinstr_x86_insn x;
	struct kinstr_trace_val v;
	size_t i;
	int r;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		CHECK(kinstr_x86__decode(c[i].b, c[i].len, 0x1000, &x) == 0 && x.len == c[i].len, "%s: decode", c[i].what);
		r = kinstr_plan__indirect_target(&x, NULL, &v);
		CHECK(r == c[i].ret, "%s: %d, not %d", c[i].what, r, c[i].ret);
		if (!r)
			CHECK(v.kind == c[i].kind && v.reg == c[i].reg && v.offset == c[i].off &&
			      v.size == (c[i].kind == KINSTR_VAL_MEM ? 8 : 0), "%s: kind %u reg %u offset %d size %u",
			      c[i].what, v.kind, v.reg, v.offset, v.size);
	}
	CHECK(kinstr_x86__decode(call, 5, 0x1000, &x) == 0 && x.target == 0x2000, "call decode");
	CHECK(kinstr_plan__indirect_target(&x, &thunk, &v) == 0 && v.kind == KINSTR_VAL_REG && v.reg == KINSTR_REG_R11,
	      "thunk: kind %u reg %u", v.kind, v.reg);
	CHECK(kinstr_plan__indirect_target(&x, &call_thunk, &v) == 0 && v.reg == KINSTR_REG_RAX, "call thunk: %u", v.reg);
	CHECK(kinstr_plan__indirect_target(&x, &array, &v) == -ENOENT, "the thunk array names no register");
	CHECK(kinstr_plan__indirect_target(&x, &plain, &v) == -ENOENT, "a direct call");
	CHECK(kinstr_plan__indirect_target(&x, NULL, &v) == -ENOENT, "a call to no known function");
	CHECK(kinstr_x86__decode(jmp, 5, 0x1000, &x) == 0, "jmp decode");
	CHECK(kinstr_plan__indirect_target(&x, &thunk, &v) == 0 && v.reg == KINSTR_REG_R11, "jmp to a thunk");
}

/*
 * Direct tail calls of the snapshot's functions are followed: the caller's stop moves to the
 * instruction before the jmp, a timer of the tail call's own starts at the jmp (one probe each),
 * and its timer comes after the caller's. And vfs_read's read_iter call is an indirect site whose
 * target a probe value reads.
 */
static void t_time_tails(void)
{
	struct kinstr_callsite tails[8], cs[64];
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl;
	const struct kinstr_func *f;
	const struct kinstr_cfg *cfg;
	unsigned int exits, ntimers, ntails, n, i, ind = 0;
	size_t j, k, at_jmp, before, found = 0;

	if (!snap())
		SKIP("no snapshot");
	for (i = 0; i < kinstr_kernel__func_cnt(snap()) && found < 20; i++) {
		f = kinstr_kernel__func(snap(), i);
		if (!kinstr_kernel__name_unique(snap(), f) || !(pl = plan(&ps, false)))
			continue;
		ntimers = 1;
		if (kinstr_plan__time_func_tails(pl, f, 0, &exits, &ntimers, tails, 8, &ntails, NULL) == 0 && ntails &&
		    tails[0].timed) {
			found++;
			CHECK(tails[0].tail && tails[0].timer == 1 && tails[0].callee &&
			      tails[0].callee->addr != f->addr, "%s: tail timer %u", f->name, tails[0].timer);
			cfg = kinstr_fn__cfg(kinstr_probeset__analysis(ps, f));
			at_jmp = before = 0;
			for (j = 1; j < kinstr_cfg__insn_cnt(cfg); j++)
				if (kinstr_cfg__insn(cfg, j)->x.addr == tails[0].addr)
					for (k = 0; k < kinstr_probeset__cnt(ps); k++) {
						at_jmp += kinstr_probeset__info(ps, k)->addr == tails[0].addr;
						before += kinstr_probeset__info(ps, k)->addr ==
							  kinstr_cfg__insn(cfg, j - 1)->x.addr;
					}
			CHECK(at_jmp == 1 && before == 1, "%s: probes at the jmp %zu, before it %zu", f->name, at_jmp,
			      before);
		}
		kinstr_plan__free(pl);
		kinstr_probeset__free(ps);
	}
	CHECK(found > 0, "no function of the snapshot has a tail call followed");

	f = kinstr_kernel__find_func(snap(), "vfs_read");
	if (!f || !(pl = plan(&ps, false)))
		return;
	ntimers = 0;
	n = kinstr_plan__time_calls(pl, f, &ntimers, cs, 64);
	for (i = 0; i < n; i++)
		ind += !cs[i].callee && cs[i].target_ok && cs[i].target.kind == KINSTR_VAL_REG;
	CHECK(ind >= 1, "vfs_read: %u indirect call sites with a register target", ind);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
}

/* A drill target's time from its site: the paths that end [site, target], from any CPU, nothing else. */
static void t_drill_time_under(void)
{
	static const struct kinstr_timer_path p[] = {
		{ .depth = 2, .timers = { 4, 0 }, .calls = 3, .wall_ns = 300, .oncpu_ns = 30 },	/* CPU 0 */
		{ .depth = 2, .timers = { 4, 0 }, .calls = 1, .wall_ns = 100, .oncpu_ns = 10 },	/* CPU 1 */
		{ .depth = 3, .timers = { 7, 4, 0 }, .calls = 1, .wall_ns = 50, .oncpu_ns = 5 },	/* deeper */
		{ .depth = 3, .timers = { 4, 0, 1 }, .calls = 3, .wall_ns = 200, .oncpu_ns = 20 },	/* inside it */
		{ .depth = 1, .timers = { 0 }, .calls = 9, .wall_ns = 900, .oncpu_ns = 90 },	/* not from the site */
		{ .depth = 3, .timers = { 4, 2, 0 }, .calls = 1, .wall_ns = 70, .oncpu_ns = 7 },	/* through another */
		{ .depth = 2, .timers = { 4, 2 }, .calls = 1, .wall_ns = 80, .oncpu_ns = 8 },
		{ .depth = 1, .timers = { 4 }, .calls = 5, .wall_ns = 999, .oncpu_ns = 99 },	/* the site itself */
	};

	CHECK(kinstr_drill__time_under(p, 8, 4, 0, false) == 450, "wall %llu",
	      (unsigned long long)kinstr_drill__time_under(p, 8, 4, 0, false));
	CHECK(kinstr_drill__time_under(p, 8, 4, 0, true) == 45, "on-CPU");
	CHECK(kinstr_drill__time_under(p, 8, 4, 2, false) == 80, "the other target");
	CHECK(kinstr_drill__time_under(p, 8, 5, 0, false) == 0 && kinstr_drill__time_under(p, 0, 4, 0, false) == 0,
	      "no such site, no paths");
}

/*
 * `call A; mov ...; call B`: the probe that stops A's timer, at A's return address, would be a jmp
 * displacing `call B` (a jump may displace a call), yet B needs a start probe of its own: the stop
 * becomes a trap on its own instruction and both calls are timed.
 */
static void t_time_adjacent_calls(void)
{
	size_t i, found = 0;

	if (!snap())
		SKIP("no snapshot");
	for (i = 0; i < kinstr_kernel__func_cnt(snap()) && found < 20; i++) {
		const struct kinstr_func *f = kinstr_kernel__func(snap(), i);
		struct kinstr_probeset *ps;
		struct kinstr_plan *pl;
		const struct kinstr_fn *fn;
		const struct kinstr_cfg *cfg;
		struct kinstr_callsite cs[256];
		unsigned int ntimers = 0, n, c;
		uint64_t a = 0, b = 0, ret = 0;
		size_t j, k, m;

		if (!kinstr_kernel__name_unique(snap(), f) || !(pl = plan(&ps, false)))
			continue;
		fn = kinstr_probeset__analysis(ps, f);
		cfg = fn ? kinstr_fn__cfg(fn) : NULL;
		for (j = 0; cfg && !b && j + 1 < kinstr_cfg__insn_cnt(cfg); j++) {
			const struct kinstr_site *r = kinstr_fn__site(fn, j + 1);

			if (kinstr_cfg__insn(cfg, j)->x.flow != KINSTR_X86_FLOW_CALL ||
			    kinstr_fn__site(fn, j)->cls != KINSTR_SITE_JUMP || r->cls != KINSTR_SITE_JUMP)
				continue;
			for (k = j + 2; k < kinstr_cfg__insn_cnt(cfg) && kinstr_cfg__insn(cfg, k)->x.addr <
			     r->addr + r->displaced_len; k++)
				if (kinstr_cfg__insn(cfg, k)->x.flow == KINSTR_X86_FLOW_CALL &&
				    kinstr_fn__site(fn, k)->cls == KINSTR_SITE_JUMP) {
					a = kinstr_cfg__insn(cfg, j)->x.addr;
					ret = r->addr;
					b = kinstr_cfg__insn(cfg, k)->x.addr;
				}
		}
		if (b) {
			found++;
			n = kinstr_plan__time_calls(pl, f, &ntimers, cs, 256);
			for (c = 0, m = 0; c < n; c++)
				m += (cs[c].addr == a || cs[c].addr == b) && cs[c].timed;
			CHECK(m == 2, "%s: calls at +0x%llx and +0x%llx: %zu of them timed", f->name,
			      (unsigned long long)(a - f->addr), (unsigned long long)(b - f->addr), m);
			for (m = 0; m < kinstr_probeset__cnt(ps); m++)
				if (kinstr_probeset__info(ps, m)->addr == ret)
					CHECK(kinstr_probeset__info(ps, m)->kind == KINSTR_PROBE_TRAP &&
					      kinstr_probeset__info(ps, m)->displaced_len == kinstr_fn__site_at(fn, ret)->insn_len,
					      "%s+0x%llx: the stop is a %s of %u bytes", f->name,
					      (unsigned long long)(ret - f->addr),
					      kinstr_probe_kind__str(kinstr_probeset__info(ps, m)->kind),
					      kinstr_probeset__info(ps, m)->displaced_len);
		}
		kinstr_plan__free(pl);
		kinstr_probeset__free(ps);
	}
	CHECK(found > 0, "no function of the snapshot has two calls that close");
}

static void t_trace(void)
{
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl = plan(&ps, false);
	struct kinstr_trace_event ev[2];
	struct kinstr_why why;
	unsigned int nev = 0;
	size_t n0;

	if (!pl)
		SKIP("no snapshot");
	CHECK(kinstr_plan__add_trace(pl, "vfs_read(%rdi, x=+8(%rsi):u32)", NULL, ev, &nev, 2, &why, NULL) == 0 &&
	      nev == 1 && !strcmp(ev[0].name, "vfs_read") && ev[0].nvals == 2 && !strcmp(ev[0].vals[1].name, "x") &&
	      kinstr_probeset__cnt(ps) == 1, "%s: %u events", why.msg, nev);
	n0 = kinstr_probeset__cnt(ps);
	CHECK(kinstr_plan__add_trace(pl, "vfs_read%return", NULL, ev, &nev, 2, &why, NULL) == 0 && nev == 2 &&
	      !strcmp(ev[1].name, "vfs_read%return") && ev[1].nvals == 1 && !strcmp(ev[1].vals[0].name, "ret") &&
	      kinstr_probeset__cnt(ps) > n0, "%s: %u events", why.msg, nev);
	n0 = kinstr_probeset__cnt(ps);
	CHECK(kinstr_plan__add_trace(pl, "vfs_write", NULL, ev, &nev, 2, &why, NULL) == -E2BIG &&
	      !strcmp(why.msg, "more than 2 events") && kinstr_probeset__cnt(ps) == n0, "'%s'", why.msg);
	nev = 0;
	CHECK(kinstr_plan__add_trace(pl, "vfs_write(count)", NULL, ev, &nev, 2, &why, NULL) == -EINVAL &&
	      !strcmp(why.msg, "vfs_write: 'count': no BTF prototype for vfs_write (use registers: %rdi, %rsi, ...)") &&
	      kinstr_probeset__cnt(ps) == n0, "'%s'", why.msg);
	CHECK(kinstr_plan__add_trace(pl, "vfs_write(%rdi", NULL, ev, &nev, 2, &why, NULL) == -EINVAL &&
	      !strcmp(why.msg, "vfs_write(%rdi: expected SPEC(VALUE,...) [if EXPR]"), "'%s'", why.msg);
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
}

static void t_opts(void)
{
	struct {
		struct kinstr_plan_opts o;
		unsigned char tail[16];
	} b;
	struct kinstr_probeset *ps = kinstr_probeset__new(NULL, snap());
	struct kinstr_plan *pl;

	if (!ps)
		SKIP("no snapshot");
	memset(&b, 0, sizeof(b));
	b.o.sz = sizeof(b);
	pl = kinstr_plan__new(ps, &b.o);
	CHECK(pl, "a longer struct with a zero tail refused");
	kinstr_plan__free(pl);
	b.tail[3] = 1;
	errno = 0;
	CHECK(!kinstr_plan__new(ps, &b.o) && errno == EINVAL, "a garbage tail accepted");
	b.o.sz = offsetof(struct kinstr_plan_opts, every) + sizeof(bool);	/* shorter: no no_ftrace */
	b.o.every = true;
	pl = kinstr_plan__new(ps, &b.o);
	CHECK(pl, "a shorter struct refused");
	kinstr_plan__free(pl);
	b.o.sz = 3;
	CHECK(!kinstr_plan__new(ps, &b.o) && errno == EINVAL, "sz below the size field accepted");
	CHECK(kinstr_plan__new(ps, NULL) != NULL, "NULL opts refused");
	kinstr_probeset__free(ps);
}

/* kinstr_probeset__set_action: the actions without an argument or an object, and no other. */
static void t_set_action(void)
{
	static const unsigned int plain[] = { KINSTR_ACTION_COUNT, KINSTR_ACTION_NOP };
	static const unsigned int not_plain[] = { 0, KINSTR_ACTION_TRACE, KINSTR_ACTION_TIMER_START,
						  KINSTR_ACTION_TIMER_STOP, KINSTR_ACTION_ENTER, KINSTR_ACTION_BPF, 200 };
	struct kinstr_probeset *ps;
	struct kinstr_plan *pl = plan(&ps, false);
	struct kinstr_why why;
	size_t i;

	if (!pl)
		SKIP("no snapshot");
	CHECK(kinstr_plan__add_spec(pl, "vfs_read", &why, NULL) == 0 && kinstr_probeset__cnt(ps) == 1, "%s", why.msg);
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		CHECK(kinstr_probeset__set_action(ps, 0, plain[i]) == 0, "action %u refused", plain[i]);
	for (i = 0; i < sizeof(not_plain) / sizeof(not_plain[0]); i++)
		CHECK(kinstr_probeset__set_action(ps, 0, not_plain[i]) == -EINVAL, "action %u accepted", not_plain[i]);
	CHECK(kinstr_probeset__set_action(ps, 1, KINSTR_ACTION_COUNT) == -EINVAL, "probe 1 of 1 accepted");
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
}

int main(void)
{
	RUN(t_spec);
	RUN(t_entry_return_offset);
	RUN(t_glob_every);
	RUN(t_time);
	RUN(t_time_adjacent_calls);
	RUN(t_indirect_target);
	RUN(t_time_tails);
	RUN(t_drill_time_under);
	RUN(t_trace);
	RUN(t_opts);
	RUN(t_set_action);
	return check_done();
}
