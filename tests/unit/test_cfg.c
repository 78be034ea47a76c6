// SPDX-License-Identifier: GPL-2.0
/*
 * CFG and liveness of small hand-assembled functions (GNU as, linked at 0xffffffff81000000 with
 * __x86_return_thunk = 0xffffffff81e01d30, ext_func = 0xffffffff81100000 and
 * other_func = 0xffffffff81200000). The assembly is in the comments.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <kinstr/cfg.h>
#include "check.h"

#define BASE		0xffffffff81000000ull
#define THUNK		0xffffffff81e01d30ull
#define EXT_FUNC	0xffffffff81100000ull
#define OTHER_FUNC	0xffffffff81200000ull

#define R(r)	KINSTR_X86_REG(KINSTR_X86_##r)
#define FL	R(FLAGS)
#define ALL	KINSTR_X86_REGS_ALL
#define RET	KINSTR_CFG_LIVE_RET
#define TAIL	KINSTR_CFG_LIVE_TAIL
#define NONE	KINSTR_CFG_NONE

/*
 * diamond (0x00):
 *  0 00 push %rbp              7 14 2: xor %ecx,%ecx       12 1f pop %rbp
 *  1 01 mov %rdi,%rbp          8 16 3: add %ecx,%eax       13 20 jmp __x86_return_thunk
 *  2 04 test %esi,%esi         9 18    add $1,%ecx         14-24 int3 x 11
 *  3 06 je 1f                 10 1b    cmp %edx,%ecx
 *  4 08 mov $1,%eax           11 1d    jl 3b
 *  5 0d jmp 2f
 *  6 0f 1: mov $2,%eax
 */
static const uint8_t diamond[] = {
	0x55, 0x48, 0x89, 0xfd, 0x85, 0xf6, 0x74, 0x07, 0xb8, 0x01, 0x00, 0x00,
	0x00, 0xeb, 0x05, 0xb8, 0x02, 0x00, 0x00, 0x00, 0x31, 0xc9, 0x01, 0xc8,
	0x83, 0xc1, 0x01, 0x39, 0xd1, 0x7c, 0xf7, 0x5d, 0xe9, 0x0b, 0x1d, 0xe0,
	0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};

/*
 * calls (0x30):
 *  0 30 call ext_func          4 3b 1: mov %rbx,%rdi       8 46 js 2f
 *  1 35 test %eax,%eax         5 3e cmp %rsi,%rdi          9 48 jmp other_func
 *  2 37 jne 1f                 6 41 jb 2f                 10 4d 2: ret
 *  3 39 ud2                    7 43 sub %rsi,%rdi         11-12 int3 x 2
 */
static const uint8_t calls[] = {
	0xe8, 0xcb, 0xff, 0x0f, 0x00, 0x85, 0xc0, 0x75, 0x02, 0x0f, 0x0b, 0x48,
	0x89, 0xdf, 0x48, 0x39, 0xf7, 0x72, 0x0a, 0x48, 0x29, 0xf7, 0x78, 0x05,
	0xe9, 0xb3, 0xff, 0x1f, 0x00, 0xc3, 0xcc, 0xcc,
};

/*
 * ind (0x50):
 *  0 50 mov (%rdi),%rax        3 58 jmp *%rax
 *  1 53 test %rax,%rax         4 5a 1: xor %eax,%eax
 *  2 56 je 1f                  5 5c ret                    6-8 int3 x 3
 */
static const uint8_t ind[] = {
	0x48, 0x8b, 0x07, 0x48, 0x85, 0xc0, 0x74, 0x02, 0xff, 0xe0, 0x31, 0xc0,
	0xc3, 0xcc, 0xcc, 0xcc,
};

/*
 * odd (0x60):
 *  0 60 jmp 1f+1 (into the mov's immediate)    3 6c jne __x86_return_thunk
 *  1 62 1: mov $0x12345678,%eax                4 72 xor %eax,%eax
 *  2 67 call odd (recursion)                   5 74 ret           6- int3 padding
 */
static const uint8_t odd[] = {
	0xeb, 0x01, 0xb8, 0x78, 0x56, 0x34, 0x12, 0xe8, 0xf4, 0xff, 0xff, 0xff,
	0x0f, 0x85, 0xbe, 0x1c, 0xe0, 0x00, 0x31, 0xc0, 0xc3, 0xcc, 0xcc, 0xcc,
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};

/* rp (0x80), a retpoline-style internal call: call 1f; int3; 1: mov %rax,(%rsp); ret */
static const uint8_t rp[] = {
	0xe8, 0x01, 0x00, 0x00, 0x00, 0xcc, 0x48, 0x89, 0x04, 0x24, 0xc3,
};

static const struct kinstr_cfg_opts thunk_opts = {
	.sz = sizeof(struct kinstr_cfg_opts),
	.return_thunk = THUNK,
};

static uint32_t in_of(const struct kinstr_cfg *cfg, size_t i)
{
	const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

	return in ? in->live_in : 0xdeadbeef;
}

static uint32_t out_of(const struct kinstr_cfg *cfg, size_t i)
{
	const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

	return in ? in->live_out : 0xdeadbeef;
}

static uint32_t iflags(const struct kinstr_cfg *cfg, size_t i)
{
	const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

	return in ? in->flags : 0;
}

static void t_diamond_and_loop_blocks(void)
{
	static const struct { uint64_t start, end; uint32_t first, count, s0, s1, exits; } want[] = {
		{ 0x00, 0x08, 0, 4, 1, 2, 0 },		/* push .. je: fall, taken */
		{ 0x08, 0x0f, 4, 2, 3, NONE, 0 },	/* mov $1; jmp 2f */
		{ 0x0f, 0x14, 6, 1, 3, NONE, 0 },	/* mov $2 */
		{ 0x14, 0x16, 7, 1, 4, NONE, 0 },	/* xor */
		{ 0x16, 0x1f, 8, 4, 5, 4, 0 },		/* loop body: exit, back edge */
		{ 0x1f, 0x25, 12, 2, NONE, NONE, KINSTR_CFG_EXIT_RETURN },
		{ 0x25, 0x30, 14, 11, NONE, NONE, KINSTR_CFG_EXIT_UNKNOWN },	/* padding */
	};
	struct kinstr_cfg *cfg = kinstr_cfg__new(diamond, sizeof(diamond), BASE, &thunk_opts);
	size_t i;

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__insn_cnt(cfg) == 25, "%zu insns", kinstr_cfg__insn_cnt(cfg));
	CHECK(kinstr_cfg__flags(cfg) == 0, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(kinstr_cfg__block_cnt(cfg) == 7, "%zu blocks", kinstr_cfg__block_cnt(cfg));
	for (i = 0; i < 7 && i < kinstr_cfg__block_cnt(cfg); i++) {
		const struct kinstr_cfg_block *b = kinstr_cfg__block(cfg, i);

		CHECK(b->start == BASE + want[i].start && b->end == BASE + want[i].end,
		      "block %zu [%#llx, %#llx)", i, (unsigned long long)(b->start - BASE),
		      (unsigned long long)(b->end - BASE));
		CHECK(b->first == want[i].first && b->count == want[i].count,
		      "block %zu insns %u+%u", i, b->first, b->count);
		CHECK(b->succ[0] == want[i].s0 && b->succ[1] == want[i].s1,
		      "block %zu succ %u %u", i, b->succ[0], b->succ[1]);
		CHECK(b->exits == want[i].exits, "block %zu exits %#x", i, b->exits);
	}
	CHECK(kinstr_cfg__block(cfg, 7) == NULL, "block past the end");

	/* direct branch targets and their marks */
	CHECK(kinstr_cfg__insn(cfg, 3)->target_insn == 6, "je -> %u",
	      kinstr_cfg__insn(cfg, 3)->target_insn);
	CHECK(kinstr_cfg__insn(cfg, 5)->target_insn == 7, "jmp -> %u",
	      kinstr_cfg__insn(cfg, 5)->target_insn);
	CHECK(kinstr_cfg__insn(cfg, 11)->target_insn == 8, "jl -> %u",
	      kinstr_cfg__insn(cfg, 11)->target_insn);
	CHECK(kinstr_cfg__insn(cfg, 13)->target_insn == NONE, "thunk jmp has an internal target");
	CHECK(iflags(cfg, 6) & KINSTR_CFG_I_TARGET, "mov $2 not a target");
	CHECK(iflags(cfg, 8) & KINSTR_CFG_I_TARGET, "loop head not a target");
	CHECK(!(iflags(cfg, 4) & KINSTR_CFG_I_TARGET), "mov $1 is a target");
	CHECK(iflags(cfg, 13) & KINSTR_CFG_I_RETURN, "jmp __x86_return_thunk not a return");
	CHECK(!(iflags(cfg, 13) & KINSTR_CFG_I_TAIL_CALL), "return taken for a tail call");
	CHECK(!(iflags(cfg, 13) & KINSTR_CFG_I_PADDING) && (iflags(cfg, 14) & KINSTR_CFG_I_PADDING) &&
	      (iflags(cfg, 24) & KINSTR_CFG_I_PADDING), "padding marks");

	CHECK(kinstr_cfg__find_insn(cfg, BASE + 0x16) == 8, "find loop head");
	CHECK(kinstr_cfg__find_insn(cfg, BASE + 0x17) == -ENOENT, "find mid-insn");
	CHECK(kinstr_cfg__find_insn(cfg, BASE + 0x30) == -ENOENT, "find past the end");

	/* a 5-byte splice over mov $1; jmp (0x08..0x0d) holds no target; one at 0x0d would */
	CHECK(!kinstr_cfg__has_target_in(cfg, BASE + 0x08, BASE + 0x0d), "0x08+5");
	CHECK(kinstr_cfg__has_target_in(cfg, BASE + 0x0d, BASE + 0x12), "0x0d+5 (mov $2 at 0x0f)");
	/* a target exactly at the site's first byte is fine */
	CHECK(!kinstr_cfg__has_target_in(cfg, BASE + 0x16, BASE + 0x1b), "0x16+5");
	kinstr_cfg__free(cfg);
}

static void t_diamond_liveness(void)
{
	struct kinstr_cfg *cfg = kinstr_cfg__new(diamond, sizeof(diamond), BASE, &thunk_opts);
	uint32_t loop = R(RAX) | R(RCX) | R(RDX) | R(RSP) | R(RBX) | R(R12) | R(R13) | R(R14) | R(R15);

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	/* the return: what our caller expects, flags dead */
	CHECK(in_of(cfg, 13) == RET, "at jmp thunk %#x", in_of(cfg, 13));
	/* pop %rbp redefines rbp */
	CHECK(in_of(cfg, 12) == (RET & ~R(RBP)), "at pop %#x", in_of(cfg, 12));
	/* the loop: sum, counter and bound live around the back edge */
	CHECK(in_of(cfg, 8) == loop, "loop head %#x", in_of(cfg, 8));
	CHECK(in_of(cfg, 11) == (loop | FL), "at jl %#x", in_of(cfg, 11));
	/* flags dead after cmp; jl: pop does not read them, add redefines them */
	CHECK(!(out_of(cfg, 11) & FL), "flags live after jl: %#x", out_of(cfg, 11));
	/* xor %ecx,%ecx defines rcx without reading it */
	CHECK(in_of(cfg, 7) == (loop & ~R(RCX)), "at xor %#x", in_of(cfg, 7));
	/* both arms of the diamond define eax: rax dead at their start, flags too */
	CHECK(in_of(cfg, 4) == (loop & ~R(RCX) & ~R(RAX)), "at mov $1 %#x", in_of(cfg, 4));
	CHECK(in_of(cfg, 6) == in_of(cfg, 4), "arms differ: %#x vs %#x", in_of(cfg, 6), in_of(cfg, 4));
	/* je reads the flags test set; test does not need them */
	CHECK(in_of(cfg, 3) & FL, "flags dead at je");
	CHECK(!(in_of(cfg, 2) & FL), "flags live at test");
	/* esi is read once, by test */
	CHECK(in_of(cfg, 2) & R(RSI), "rsi dead at test");
	CHECK(!(in_of(cfg, 3) & R(RSI)), "rsi live after test");
	/* rdi is copied into rbp and never read again */
	CHECK(in_of(cfg, 1) & R(RDI), "rdi dead at mov %%rdi,%%rbp");
	CHECK(!(in_of(cfg, 2) & R(RDI)), "rdi live after its last use");
	CHECK(!(in_of(cfg, 2) & R(RBP)), "rbp live between its redefinition and pop");
	CHECK(in_of(cfg, 0) & R(RBP), "rbp dead at push %%rbp");
	/* rsp is always live */
	for (size_t i = 0; i < kinstr_cfg__insn_cnt(cfg); i++)
		CHECK((in_of(cfg, i) & out_of(cfg, i) & R(RSP)), "rsp dead at %zu", i);
	kinstr_cfg__free(cfg);
}

struct seen {
	int calls, jumps;
	uint64_t call_target, jump_target;
};

/* As site selection would say: the callee is r11's retpoline thunk, the jump a SysV tail call. */
static uint32_t entry_live_cb(uint64_t target, int is_call, void *ctx)
{
	struct seen *s = ctx;

	if (is_call) {
		s->calls++;
		s->call_target = target;
		return KINSTR_CFG_LIVE_CALL | R(R11);
	}
	s->jumps++;
	s->jump_target = target;
	return KINSTR_CFG_LIVE_TAIL;
}

static void t_calls_tail_calls_ud2(void)
{
	struct seen seen = { 0 };
	struct kinstr_cfg_opts opts = {
		.sz = sizeof(opts), .return_thunk = THUNK, .entry_live = entry_live_cb, .ctx = &seen,
	};
	struct kinstr_cfg *cfg = kinstr_cfg__new(calls, sizeof(calls), BASE + 0x30, &opts);
	const struct kinstr_cfg_block *b;

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__insn_cnt(cfg) == 13, "%zu insns", kinstr_cfg__insn_cnt(cfg));
	CHECK(kinstr_cfg__flags(cfg) == 0, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(seen.calls >= 1 && seen.call_target == EXT_FUNC, "call target %#llx",
	      (unsigned long long)seen.call_target);
	CHECK(seen.jumps >= 1 && seen.jump_target == OTHER_FUNC, "jump target %#llx",
	      (unsigned long long)seen.jump_target);
	CHECK(kinstr_cfg__insn(cfg, 0)->x.flow == KINSTR_X86_FLOW_CALL &&
	      kinstr_cfg__insn(cfg, 0)->x.target == EXT_FUNC, "call");
	CHECK(iflags(cfg, 9) & KINSTR_CFG_I_TAIL_CALL, "jmp other_func not a tail call");
	CHECK(iflags(cfg, 10) & KINSTR_CFG_I_RETURN, "ret not a return");

	/* blocks: [call test jne] [ud2] [mov cmp jb] [sub js] [jmp other] [ret] [int3 int3] */
	CHECK(kinstr_cfg__block_cnt(cfg) == 7, "%zu blocks", kinstr_cfg__block_cnt(cfg));
	b = kinstr_cfg__block(cfg, 1);
	CHECK(b && b->count == 1 && b->succ[0] == 2 && b->succ[1] == NONE && b->exits == 0,
	      "ud2 (WARN) must fall through to the next block");
	b = kinstr_cfg__block(cfg, 4);
	CHECK(b && b->exits == KINSTR_CFG_EXIT_TAIL_CALL && b->succ[0] == NONE, "tail call block");
	b = kinstr_cfg__block(cfg, 5);
	CHECK(b && b->exits == KINSTR_CFG_EXIT_RETURN, "ret block");

	/* the tail call reads what the callback said; ret what our caller expects */
	CHECK(in_of(cfg, 9) == TAIL, "at tail call %#x", in_of(cfg, 9));
	CHECK(in_of(cfg, 10) == RET, "at ret %#x", in_of(cfg, 10));
	/* cmp; jb; sub redefines the flags: dead before sub, live at jb */
	CHECK(!(in_of(cfg, 7) & FL), "flags live at sub: %#x", in_of(cfg, 7));
	CHECK(in_of(cfg, 6) & FL, "flags dead at jb");
	CHECK(!(in_of(cfg, 5) & FL), "flags live at cmp");
	/* mov %rbx,%rdi: rdi dead before it, rbx live */
	CHECK((in_of(cfg, 4) & (R(RDI) | R(RBX))) == R(RBX), "at mov %#x", in_of(cfg, 4));
	/* the call reads the SysV argument registers and, per the callback, r11 */
	CHECK((in_of(cfg, 0) & (KINSTR_CFG_LIVE_CALL | R(R11))) == (KINSTR_CFG_LIVE_CALL | R(R11)),
	      "at call %#x", in_of(cfg, 0));
	CHECK(!(in_of(cfg, 1) & R(R11)), "r11 live after the call");
	/* calls clobber the flags */
	CHECK(!(in_of(cfg, 0) & FL), "flags live at call");
	/* rax holds the call's result, read by test: calls do not kill GPRs */
	CHECK(in_of(cfg, 1) & R(RAX), "rax dead at test");
	kinstr_cfg__free(cfg);

	/* without a callback, a jump out of the function might be into a .cold part */
	cfg = kinstr_cfg__new(calls, sizeof(calls), BASE + 0x30, &thunk_opts);
	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(in_of(cfg, 9) == ALL, "default at tail call %#x", in_of(cfg, 9));
	CHECK(in_of(cfg, 7) == (ALL & ~FL), "default at sub %#x", in_of(cfg, 7));
	kinstr_cfg__free(cfg);
}

/* ljmp *(%rax) (FF /5): leaves for unknown code, and counts as an indirect jmp, as for the module */
static void t_far_jump(void)
{
	static const uint8_t code[] = {
		0x48, 0x8b, 0x07,		/* mov (%rdi),%rax */
		0xff, 0x28,			/* ljmp *(%rax) */
	};
	struct kinstr_cfg *cfg = kinstr_cfg__new(code, sizeof(code), BASE + 0x80, &thunk_opts);

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__insn(cfg, 1)->x.flow == KINSTR_X86_FLOW_EXIT, "ljmp flow %d", kinstr_cfg__insn(cfg, 1)->x.flow);
	CHECK(kinstr_cfg__insn(cfg, 1)->x.attr & KINSTR_X86_A_FAR_JMP, "ljmp attr %#x", kinstr_cfg__insn(cfg, 1)->x.attr);
	CHECK(kinstr_cfg__flags(cfg) == (KINSTR_CFG_F_EXIT | KINSTR_CFG_F_INDIRECT_JMP), "flags %#x",
	      kinstr_cfg__flags(cfg));
	kinstr_cfg__free(cfg);
}

static void t_indirect_jump(void)
{
	struct kinstr_cfg *cfg = kinstr_cfg__new(ind, sizeof(ind), BASE + 0x50, &thunk_opts);

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__flags(cfg) == KINSTR_CFG_F_INDIRECT_JMP, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(kinstr_cfg__insn(cfg, 3)->x.flow == KINSTR_X86_FLOW_JMP_IND, "jmp *%%rax");
	/* unknown successor: everything live */
	CHECK(in_of(cfg, 3) == ALL && out_of(cfg, 3) == ALL, "at jmp *%%rax %#x", in_of(cfg, 3));
	CHECK(kinstr_cfg__block(cfg, 1)->exits == KINSTR_CFG_EXIT_UNKNOWN, "exit kind");
	/* xor %eax,%eax; ret: rax defined without being read */
	CHECK(in_of(cfg, 4) == (RET & ~R(RAX)), "at xor %#x", in_of(cfg, 4));
	/* mov (%rdi),%rax; test: rax and the flags dead on entry, even with ALL behind */
	CHECK(in_of(cfg, 0) == (ALL & ~R(RAX) & ~FL), "at entry %#x", in_of(cfg, 0));
	kinstr_cfg__free(cfg);
}

static void t_bad_target_recursion_conditional_return(void)
{
	struct kinstr_cfg *cfg = kinstr_cfg__new(odd, sizeof(odd), BASE + 0x60, &thunk_opts);

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__flags(cfg) == KINSTR_CFG_F_BAD_TARGET, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(iflags(cfg, 0) & KINSTR_CFG_I_BAD_TARGET, "jmp into an insn not flagged");
	CHECK(in_of(cfg, 0) == ALL, "at bad jmp %#x", in_of(cfg, 0));
	/* the splice check sees the bad target too */
	CHECK(kinstr_cfg__has_target_in(cfg, BASE + 0x62, BASE + 0x67), "target inside mov");
	/* recursion: a call to our own entry, an ordinary call */
	CHECK(kinstr_cfg__insn(cfg, 2)->target_insn == NONE, "recursive call has an edge");
	CHECK(iflags(cfg, 0) & KINSTR_CFG_I_TARGET, "entry not marked as a call target");
	/* jne __x86_return_thunk: a conditional return that also falls through */
	CHECK(iflags(cfg, 3) & KINSTR_CFG_I_RETURN, "jne thunk not a return");
	CHECK(in_of(cfg, 3) == (RET | FL), "at jne thunk %#x", in_of(cfg, 3));
	CHECK(kinstr_cfg__block(cfg, 1) && kinstr_cfg__block(cfg, 1)->exits == KINSTR_CFG_EXIT_RETURN &&
	      kinstr_cfg__block(cfg, 1)->succ[0] == 2, "conditional return block");
	kinstr_cfg__free(cfg);

	/* the same bytes without a thunk address: jne to elsewhere is a (conditional) tail call */
	cfg = kinstr_cfg__new(odd, sizeof(odd), BASE + 0x60, NULL);
	CHECK(cfg && (iflags(cfg, 3) & KINSTR_CFG_I_TAIL_CALL), "jne without thunk");
	kinstr_cfg__free(cfg);
}

static void t_internal_call(void)
{
	struct kinstr_cfg *cfg = kinstr_cfg__new(rp, sizeof(rp), BASE + 0x80, &thunk_opts);

	CHECK(cfg != NULL, "kinstr_cfg__new: errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INTERNAL_CALL, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(kinstr_cfg__insn(cfg, 0)->target_insn == 2, "call edge -> %u",
	      kinstr_cfg__insn(cfg, 0)->target_insn);
	/* this ret may return into the function: nothing is dead */
	CHECK(in_of(cfg, 3) == ALL, "at ret %#x", in_of(cfg, 3));
	kinstr_cfg__free(cfg);
}

static void t_truncated_invalid_and_args(void)
{
	/* push %rbp; call with its rel32 cut short */
	static const uint8_t cut[] = { 0x55, 0xe8, 0x00, 0x00 };
	/* nop; push %es (invalid in 64-bit mode); ret */
	static const uint8_t bad[] = { 0x90, 0x06, 0xc3 };
	struct kinstr_cfg_opts small = { .sz = 4 };
	struct kinstr_cfg *cfg;

	cfg = kinstr_cfg__new(cut, sizeof(cut), BASE, NULL);
	CHECK(cfg != NULL, "cut: errno %d", errno);
	if (cfg) {
		CHECK(kinstr_cfg__insn_cnt(cfg) == 2, "cut: %zu insns", kinstr_cfg__insn_cnt(cfg));
		CHECK(kinstr_cfg__flags(cfg) == (KINSTR_CFG_F_INVALID | KINSTR_CFG_F_TRUNCATED),
		      "cut: flags %#x", kinstr_cfg__flags(cfg));
		CHECK((iflags(cfg, 1) & KINSTR_CFG_I_INVALID) && kinstr_cfg__insn(cfg, 1)->x.len == 3,
		      "cut: tail");
		CHECK(in_of(cfg, 0) == ALL, "cut: at push %#x", in_of(cfg, 0));
		kinstr_cfg__free(cfg);
	}
	cfg = kinstr_cfg__new(bad, sizeof(bad), BASE, NULL);
	CHECK(cfg != NULL, "bad: errno %d", errno);
	if (cfg) {
		CHECK(kinstr_cfg__insn_cnt(cfg) == 3, "bad: %zu insns", kinstr_cfg__insn_cnt(cfg));
		CHECK(kinstr_cfg__flags(cfg) == KINSTR_CFG_F_INVALID, "bad: flags %#x",
		      kinstr_cfg__flags(cfg));
		CHECK(in_of(cfg, 1) == ALL && in_of(cfg, 2) == RET, "bad: liveness");
		kinstr_cfg__free(cfg);
	}

	errno = 0;
	CHECK(kinstr_cfg__new(diamond, 0, BASE, NULL) == NULL && errno == EINVAL, "empty");
	errno = 0;
	CHECK(kinstr_cfg__new(NULL, 4, BASE, NULL) == NULL && errno == EINVAL, "NULL code");
	errno = 0;
	CHECK(kinstr_cfg__new(diamond, 16, UINT64_MAX - 4, NULL) == NULL && errno == EINVAL,
	      "wraps the address space");
	errno = 0;
	CHECK(kinstr_cfg__new(diamond, sizeof(diamond), BASE, &small) == NULL && errno == EINVAL,
	      "opts too small");
}

static void t_falls_off_end(void)
{
	/* mov %rdi,%rax; call ext_func -- a noreturn call with no padding after it */
	static const uint8_t fn[] = { 0x48, 0x89, 0xf8, 0xe8, 0xf8, 0xff, 0x0f, 0x00 };
	struct kinstr_cfg *cfg = kinstr_cfg__new(fn, sizeof(fn), BASE, NULL);

	CHECK(cfg != NULL, "errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__insn(cfg, 1)->x.target == EXT_FUNC, "target %#llx",
	      (unsigned long long)kinstr_cfg__insn(cfg, 1)->x.target);
	CHECK(kinstr_cfg__flags(cfg) == KINSTR_CFG_F_FALLS_OFF_END, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(out_of(cfg, 1) == ALL, "after the last call %#x", out_of(cfg, 1));
	CHECK(kinstr_cfg__block(cfg, 0)->exits == KINSTR_CFG_EXIT_UNKNOWN, "exit kind");
	kinstr_cfg__free(cfg);
}

static void t_calls_kill_no_gpr(void)
{
	/*
	 * call ext_func; add %r10,%rax; ret -- a helper with its own convention (say __get_user_8)
	 * may preserve r10, and gcc may keep a value there across the call.
	 */
	static const uint8_t fn[] = { 0xe8, 0xfb, 0xff, 0x0f, 0x00, 0x4c, 0x01, 0xd0, 0xc3 };
	struct kinstr_cfg *cfg = kinstr_cfg__new(fn, sizeof(fn), BASE, &thunk_opts);

	CHECK(cfg != NULL, "errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__insn(cfg, 0)->x.target == EXT_FUNC, "target %#llx",
	      (unsigned long long)kinstr_cfg__insn(cfg, 0)->x.target);
	CHECK(in_of(cfg, 0) & R(R10), "r10 dead before the call: %#x", in_of(cfg, 0));
	CHECK(!(in_of(cfg, 0) & FL), "flags live before the call");
	CHECK(in_of(cfg, 2) == RET && in_of(cfg, 1) == (RET | R(R10)), "after the call %#x %#x",
	      in_of(cfg, 1), in_of(cfg, 2));
	kinstr_cfg__free(cfg);
}

/*
 * jl (0x00), a jump-label site and its out-of-line block:
 *  0 00 nopl 0x0(%rax,%rax,1)  (static_branch: may become jmp 2f)
 *  1 05 1: xor %eax,%eax       4 0d 2: mov %rdi,%rsi
 *  2 07 jmp __x86_return_thunk 5 10 call ext_func
 *  3 0c int3                   6 15 jmp 1b             7 17 int3
 */
static const uint8_t jl[] = {
	0x0f, 0x1f, 0x44, 0x00, 0x00, 0x31, 0xc0, 0xe9, 0x24, 0x1d, 0xe0, 0x00,
	0xcc, 0x48, 0x89, 0xfe, 0xe8, 0xeb, 0xff, 0x0f, 0x00, 0xeb, 0xee, 0xcc,
};

static void t_extra_edges(void)
{
	const struct kinstr_cfg_edge label[] = {
		{ BASE, BASE + 0x0d },		/* enabled: jmp 2f */
		{ BASE, BASE + 0x05 },		/* disabled: nop */
		{ BASE + 0x100, BASE + 0x0e },	/* another function's: ignored */
	};
	const struct kinstr_cfg_edge fixup[] = {
		{ BASE + 0x0e, EXT_FUNC + 0x100 },	/* a faulting insn's fixup elsewhere */
	};
	struct kinstr_cfg_opts opts = {
		.sz = sizeof(opts), .return_thunk = THUNK, .edges = label, .nr_edges = 3,
	};
	const struct kinstr_cfg_block *b;
	struct kinstr_cfg *cfg;

	/* without the jump table the out-of-line block looks unreachable and rdi dead */
	cfg = kinstr_cfg__new(jl, sizeof(jl), BASE, &thunk_opts);
	CHECK(cfg != NULL, "errno %d", errno);
	if (!cfg)
		return;
	CHECK(!(in_of(cfg, 0) & R(RDI)), "rdi live without the edge: %#x", in_of(cfg, 0));
	CHECK(!(iflags(cfg, 4) & KINSTR_CFG_I_TARGET), "0x0d a target without the edge");
	CHECK(!kinstr_cfg__has_target_in(cfg, BASE + 0x0c, BASE + 0x11), "target in 0x0c+5");
	kinstr_cfg__free(cfg);

	cfg = kinstr_cfg__new(jl, sizeof(jl), BASE, &opts);
	CHECK(cfg != NULL, "errno %d", errno);
	if (!cfg)
		return;
	CHECK(kinstr_cfg__flags(cfg) == 0, "flags %#x", kinstr_cfg__flags(cfg));
	CHECK(in_of(cfg, 0) & R(RDI), "rdi dead at the jump label: %#x", in_of(cfg, 0));
	CHECK(iflags(cfg, 0) & KINSTR_CFG_I_EXTRA_EDGE, "site not marked");
	CHECK(iflags(cfg, 4) & KINSTR_CFG_I_TARGET, "label target not marked");
	CHECK(kinstr_cfg__has_target_in(cfg, BASE + 0x0c, BASE + 0x11), "no target in 0x0c+5");
	CHECK(kinstr_cfg__block(cfg, 0)->count == 1, "the site does not end its block");
	kinstr_cfg__free(cfg);

	/* an exception edge out of the mov: whatever the fixup reads is live there */
	opts.edges = fixup;
	opts.nr_edges = 1;
	cfg = kinstr_cfg__new(jl, sizeof(jl), BASE, &opts);
	CHECK(cfg != NULL, "errno %d", errno);
	if (!cfg)
		return;
	CHECK(iflags(cfg, 4) & KINSTR_CFG_I_EXTRA_EDGE, "mov not marked");
	CHECK(out_of(cfg, 4) == ALL, "after the faulting mov %#x", out_of(cfg, 4));
	/* blocks [nop] [xor jmp] [int3] [mov] [call jmp] [int3]: the edge ends the mov's */
	b = kinstr_cfg__block(cfg, kinstr_cfg__insn(cfg, 4)->block);
	CHECK(kinstr_cfg__block_cnt(cfg) == 6, "%zu blocks", kinstr_cfg__block_cnt(cfg));
	CHECK(b && b->first == 4 && b->count == 1 && b->exits == KINSTR_CFG_EXIT_TAIL_CALL &&
	      b->succ[0] == 4 && b->succ[1] == NONE, "the mov's block: %u+%u exits %#x succ %u",
	      b->first, b->count, b->exits, b->succ[0]);
	kinstr_cfg__free(cfg);
}

int main(void)
{
	RUN(t_diamond_and_loop_blocks);
	RUN(t_diamond_liveness);
	RUN(t_calls_tail_calls_ud2);
	RUN(t_indirect_jump);
	RUN(t_far_jump);
	RUN(t_bad_target_recursion_conditional_return);
	RUN(t_internal_call);
	RUN(t_truncated_invalid_and_args);
	RUN(t_falls_off_end);
	RUN(t_calls_kill_no_gpr);
	RUN(t_extra_edges);
	return check_done();
}
