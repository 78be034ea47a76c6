// SPDX-License-Identifier: GPL-2.0
/*
 * Timers in the code cache's copies (KINSTR_CACHE_F_TIMER, lib/cache/timer.c) over every function of the shipped
 * snapshots, read back with Zydis independently of the library: each timed copy is the untimed copy plus exactly
 * one timer sequence per start and stop; the entry point lands on the start (pushfq, the nine caller-saved pushes,
 * movabs $0, %rdi; mov $timer, %esi; call the start function, the pops, popfq) and no block does; every instruction
 * by which control leaves the copy (a ret, a jmp out of the function's code, a tail static call) has the stop just
 * before its form, and no other instruction has one. With edge counters too, the stop comes after the exit's counter.
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/x86.h>
#include "check.h"

#define COUNTERS 0x2a8c0ull
#define TSTART 0x7ff0000ull	/* the hit functions: offsets from the copy, in reach */
#define TSTOP 0x7ff1000ull
#define TIMER 7u

static ZydisDecoder zdec;

static int fake_jump_label(uint64_t site, uint64_t *key, int *branch, void *ctx)
{
	*key = site + 0x100000;
	*branch = 0;
	return 0;
}

static int fake_static_call(uint64_t site, uint64_t *tramp, int *tail, void *ctx)
{
	*tramp = site + 0x200000;
	*tail = (int)(site & 1);	/* some tail sites, some not */
	return 0;
}

/*
 * Is the copy's code at b (address at) the timer sequence calling fn on TIMER? Decoded with Zydis: 14 pushes
 * (pushfq first), mov rdi, 0; mov esi, TIMER; call fn; 10 pops (popfq last).
 */
static int is_timer(const uint8_t *b, uint64_t at, uint64_t fn)
{
	static const ZydisMnemonic seq[] = { ZYDIS_MNEMONIC_PUSHFQ, ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_PUSH,
		ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_PUSH,
		ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_PUSH, ZYDIS_MNEMONIC_MOV, ZYDIS_MNEMONIC_MOV, ZYDIS_MNEMONIC_CALL,
		ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP,
		ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POP, ZYDIS_MNEMONIC_POPFQ };
	static const ZydisRegister regs[] = { ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
		ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8, ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10,
		ZYDIS_REGISTER_R11 };
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t i, off = 0;
	ZyanU64 t;

	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zdec, b + off, KINSTR_CACHE_TIMER_LEN - off, &zi, ops)) ||
		    zi.mnemonic != seq[i])
			return 0;
		if (i >= 1 && i <= 9 && ops[0].reg.value != regs[i - 1])
			return 0;
		if (i >= 13 && i <= 21 && ops[0].reg.value != regs[21 - i])
			return 0;
		if (i == 10 && (ops[0].reg.value != ZYDIS_REGISTER_RDI || ops[1].imm.value.u != 0))
			return 0;
		if (i == 11 && (ops[0].reg.value != ZYDIS_REGISTER_ESI || ops[1].imm.value.u != TIMER))
			return 0;
		if (i == 12 && (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], at + off, &t)) || t != fn))
			return 0;
		off += zi.length;
	}
	return off == KINSTR_CACHE_TIMER_LEN;
}

/* Does control leave the copy at instruction ci (of the function's code [lo, hi))? */
static int leaves(const struct kinstr_kernel *k, const struct kinstr_cache_insn *ci, uint64_t lo, uint64_t hi)
{
	struct kinstr_x86_insn x;

	if (kinstr_x86__decode(kinstr_kernel__text(k, ci->addr, ci->len), ci->len, ci->addr, &x))
		return -1;
	if (ci->how == KINSTR_CACHE_STATIC_CALL)
		return (ci->addr & 1) != 0;	/* fake_static_call's tail sites */
	if (ci->how != KINSTR_CACHE_COPY && ci->how != KINSTR_CACHE_RELOC)
		return 0;
	if (x.flow == KINSTR_X86_FLOW_RET)
		return 1;
	return x.flow == KINSTR_X86_FLOW_JMP && (x.target < lo || x.target >= hi);
}

static void every_function(unsigned int flags)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o), .counters = COUNTERS, .jump_label = fake_jump_label,
				       .static_call = fake_static_call, .timer = TIMER };
	size_t p, timed_total = 0, stops_total = 0, refused_total = 0, built_untimed = 0;
	glob_t g;

	ZydisDecoderInit(&zdec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (glob("tests/data/sample-*.snap", 0, NULL, &g) || !g.gl_pathc)
		SKIP("no snapshot in tests/data");
	for (p = 0; p < g.gl_pathc; p++) {
		struct kinstr_kernel *k = kinstr_kernel__open_snapshot(g.gl_pathv[p]);
		size_t i, fails = 0;

		CHECK(k != NULL, "%s: %s", g.gl_pathv[p], strerror(errno));
		for (i = 0; k && i < kinstr_kernel__func_cnt(k) && fails < 10; i++) {
			const struct kinstr_func *f = kinstr_kernel__func(k, i);
			uint64_t copy = (f->addr & ~((1ULL << 30) - 1)) + (1ULL << 30) + (i << 12), lo, hi;
			struct kinstr_cache_refusal r;
			struct kinstr_cache_fn *u, *c;
			const struct kinstr_cache_insn *last;
			size_t j, stops = 0, n;

			o.flags = flags;
			u = kinstr_cache_fn__build(k, f, copy, &o, &r);
			if (!u)
				continue;
			built_untimed++;
			o.flags = flags | KINSTR_CACHE_F_TIMER;
			o.timer_start = copy + TSTART;
			o.timer_stop = copy + TSTOP;
			c = kinstr_cache_fn__build(k, f, copy, &o, &r);
			if (!c) {
				CHECK(r.code == KINSTR_CACHE_R_TIMER && r.why[0], "%s: untimed copy built, timed refused: %s",
				      f->name, r.why);
				refused_total++;
				kinstr_cache_fn__free(u);
				continue;
			}
			n = kinstr_cache_fn__insn_cnt(c);
			lo = kinstr_cache_fn__insn(c, 0)->addr;
			last = kinstr_cache_fn__insn(c, n - 1);
			hi = last->addr + last->len;
			for (j = 0; j < n; j++) {
				const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, j);
				int e = leaves(k, ci, lo, hi);
				/* after an exit's edge counter, if any */
				uint64_t at = ci->copy + ((ci->edges & KINSTR_CACHE_I_EDGE_OUT) ?
							  16 + 2 * !!(ci->edges & KINSTR_CACHE_I_EDGE_OUT_PUSHF) : 0);

				if (e < 0 || (j && e != (ci->timer == KINSTR_CACHE_TIMER_STOPS)) || (!j && e)) {
					CHECK(0, "%s+0x%llx: exit %d, timer %d", f->name, (unsigned long long)(ci->addr - f->addr),
					      e, ci->timer);
					fails++;
				} else if (e && !is_timer(kinstr_cache_fn__bytes(c) + (at - copy), at, copy + TSTOP)) {
					CHECK(0, "%s+0x%llx: no stop sequence before the exit", f->name,
					      (unsigned long long)(ci->addr - f->addr));
					fails++;
				}
				stops += e > 0;
			}
			/* the entry point lands on the start; the entry block's branches land after it */
			for (j = 0; j < kinstr_cache_fn__reentry_cnt(c); j++) {
				const struct kinstr_cache_reentry *re = kinstr_cache_fn__reentry(c, j);

				if (re->why != KINSTR_CACHE_ENTRY)
					continue;
				if (!is_timer(kinstr_cache_fn__bytes(c) + (re->copy - copy), re->copy, copy + TSTART) ||
				    kinstr_cache_fn__block(c, 0)->copy < re->copy + KINSTR_CACHE_TIMER_LEN) {
					CHECK(0, "%s: the entry point does not land on the start, or a branch can", f->name);
					fails++;
				}
			}
			if (kinstr_cache_fn__size(c) != kinstr_cache_fn__size(u) + KINSTR_CACHE_TIMER_LEN * (1 + stops)) {
				CHECK(0, "%s: %zu bytes timed, %zu untimed, %zu stops", f->name, kinstr_cache_fn__size(c),
				      kinstr_cache_fn__size(u), stops);
				fails++;
			}
			timed_total++;
			stops_total += stops;
			kinstr_cache_fn__free(c);
			kinstr_cache_fn__free(u);
		}
		if (k)
			kinstr_kernel__close(k);
	}
	globfree(&g);
	printf("     %zu copies timed (%zu stops), %zu refused for the timer, of %zu built untimed\n", timed_total,
	       stops_total, refused_total, built_untimed);
	CHECK(timed_total * 10 > built_untimed * 9 && stops_total > timed_total, "too few timed copies");
}

static void t_timed_copies(void)
{
	every_function(0);
}

static void t_timed_copies_edges(void)
{
	every_function(KINSTR_CACHE_F_EDGES);
}

int main(void)
{
	RUN(t_timed_copies);
	RUN(t_timed_copies_edges);
	return check_done();
}
