// SPDX-License-Identifier: GPL-2.0
/*
 * The relocator, tested by running code. Every sequence runs in place and relocated (about
 * 1.8 GiB above and below, and 8 GiB away, where anything with a target must be refused),
 * from identical registers, flags and memory; then registers, flags, memory and the exit
 * (which address control left the sequence at, or which instruction faulted) must agree.
 *
 * The arena: a 80 MiB region full of int3 stands for the kernel image. Code under test is
 * written into it; every branch target, fallthrough and return address lands on an int3, and
 * the SIGTRAP handler records the registers and where execution left. Faults are caught the
 * same way, and compared (a fault inside the copy is mapped back with kinstr_reloc__unmap()).
 * Memory a sequence may touch is limited, before it runs, to a scratch block (registers point
 * into it; the stack lives in it) and to the RIP-relative targets inside the arena, so both
 * can be restored and compared. Sequences come from a table of edge cases and from the
 * .text of the Debian kernel in /boot (extracted into build/; SKIP without one).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <elf.h>

#include <Zydis/Zydis.h>

#include <kinstr/reloc.h>
#include "check.h"

/* ---- the arena ---------------------------------------------------------------------- */

#define IMG_BASE	0x200000000000ULL
#define IMG_SIZE	(80ULL << 20)
#define EDGE_A		(IMG_BASE + (40ULL << 20))		/* where edge cases run */
#define S_BASE		(IMG_BASE + 0x10000000ULL)		/* scratch data + stack */
#define S_SIZE		0x8000
#define S_DATA		0x6000					/* [0, S_DATA) data, rest stack */
#define S_RSP		(S_BASE + 0x7000)
#define COPY_SIZE	0x10000
#define NR_PLACES	3

static const struct place {
	const char *name;
	uint64_t base;
	int far;	/* every external target is out of reach from here */
} places[NR_PLACES] = {
	{ "near+", IMG_BASE + 0x78000000ULL, 0 },	/* +1.875 GiB */
	{ "near-", IMG_BASE - 0x70000000ULL, 0 },	/* -1.75 GiB */
	{ "far", IMG_BASE + 0x200000000ULL, 1 },	/* +8 GiB */
};

#define FLAGS_MASK	0x8d5ULL	/* CF PF AF ZF SF OF */
#define FLAGS_FIXED	0x202ULL	/* reserved bit 1, IF */

struct regs {
	uint64_t r[16];		/* rax rcx rdx rbx rsp rbp rsi rdi r8..r15: encoding order */
	uint64_t flags;
};

struct outcome {
	struct regs regs;
	uint64_t rip;
	uint64_t fault_addr;
	int sig;
};

static const char *const reg_names[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/* read by the entry code: where to jump once the registers are loaded */
uint64_t kr_test_entry;
void kr_test_enter(const struct regs *in) __attribute__((noreturn));

/*
 * Load every register from *in (flags first: mov leaves them alone) and jump to
 * kr_test_entry. It never returns: the int3 or fault at the exit longjmps back.
 */
__asm__(
	".text\n"
	".globl kr_test_enter\n"
	".type kr_test_enter, @function\n"
	"kr_test_enter:\n"
	"	pushq 128(%rdi)\n"
	"	popfq\n"
	"	mov 0(%rdi), %rax\n"
	"	mov 8(%rdi), %rcx\n"
	"	mov 16(%rdi), %rdx\n"
	"	mov 24(%rdi), %rbx\n"
	"	mov 40(%rdi), %rbp\n"
	"	mov 48(%rdi), %rsi\n"
	"	mov 64(%rdi), %r8\n"
	"	mov 72(%rdi), %r9\n"
	"	mov 80(%rdi), %r10\n"
	"	mov 88(%rdi), %r11\n"
	"	mov 96(%rdi), %r12\n"
	"	mov 104(%rdi), %r13\n"
	"	mov 112(%rdi), %r14\n"
	"	mov 120(%rdi), %r15\n"
	"	mov 32(%rdi), %rsp\n"
	"	mov 56(%rdi), %rdi\n"
	"	jmp *kr_test_entry(%rip)\n"
	".size kr_test_enter, .-kr_test_enter\n");

static sigjmp_buf run_jb;
static volatile sig_atomic_t run_active;
static struct outcome run_out;
static uint8_t s_init[S_SIZE];
static uint8_t altstack[64 * 1024];

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
	static const int map[16] = {
		REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
	};
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	int i;

	if (!run_active) {
		/* the harness itself crashed: die loudly */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	for (i = 0; i < 16; i++)
		run_out.regs.r[i] = g[map[i]];
	run_out.regs.flags = g[REG_EFL];
	run_out.rip = g[REG_RIP];
	run_out.sig = sig;
	run_out.fault_addr = (uint64_t)si->si_addr;
	/* an int3 leaves rip after itself: the exit is the int3's own address */
	if (sig == SIGTRAP)
		run_out.rip--;
	siglongjmp(run_jb, 1);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "FAIL test_reloc: timed out (a sequence looping?)\n";
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static int arena_ready;

static void *map_at(uint64_t addr, size_t len)
{
	void *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED || (uint64_t)p != addr)
		return NULL;
	return p;
}

static int arena_setup(void)
{
	struct sigaction sa;
	stack_t ss;
	int i, sig;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	if (!map_at(IMG_BASE, IMG_SIZE) || !map_at(S_BASE, S_SIZE))
		return -1;
	memset((void *)IMG_BASE, 0xcc, IMG_SIZE);
	for (i = 0; i < NR_PLACES; i++) {
		if (!map_at(places[i].base, COPY_SIZE))
			return -1;
		memset((void *)places[i].base, 0xcc, COPY_SIZE);
	}
	/* data: a fixed pseudo-random pattern; stack: return addresses into the int3 sea */
	for (i = 0; i < S_DATA; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(s_init + i, &x, 8);
	}
	for (i = S_DATA; i < S_SIZE; i += 8) {
		uint64_t ret = IMG_BASE + 0x1000 + (uint64_t)i * 16;

		memcpy(s_init + i, &ret, 8);
	}

	ss.ss_sp = altstack;
	ss.ss_size = sizeof(altstack);
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < 32; sig++)
		if (sig == SIGTRAP || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
		    sig == SIGFPE)
			sigaction(sig, &sa, NULL);
	signal(SIGALRM, on_alarm);
	alarm(55);
	arena_ready = 1;
	return 0;
}

/* ---- what a sequence may touch, and what to expect of relocating it ------------------- */

#define MAX_WATCH 8
#define WATCH_PAD 16

struct seq {
	char name[64];
	uint8_t code[KINSTR_RELOC_MAX_IN];
	uint32_t len;
	uint64_t a;				/* where it runs in place */
	uint64_t watch[MAX_WATCH];		/* RIP-relative targets (arena) */
	uint8_t watch_init[MAX_WATCH][64];
	int nr_watch;
	int expect_near;			/* errno relocating near must give (0, -EXDEV) */
	int expect_far;				/* ... and far (also -ERANGE) */
	int has_backward;			/* a branch back into itself */
};

static ZydisDecoder zdec;

static int decode(const uint8_t *p, size_t len, ZydisDecodedInstruction *insn,
		  ZydisDecodedOperand *ops)
{
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&zdec, p, len, insn, ops)) ? 0 : -1;
}

static const ZydisDecodedOperand *rel_imm(const ZydisDecodedInstruction *insn,
					  const ZydisDecodedOperand *ops)
{
	int i;

	for (i = 0; i < insn->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative)
			return &ops[i];
	return NULL;
}

static const ZydisDecodedOperand *rip_mem(const ZydisDecodedInstruction *insn,
					  const ZydisDecodedOperand *ops)
{
	int i;

	for (i = 0; i < insn->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[i].mem.base == ZYDIS_REGISTER_RIP)
			return &ops[i];
	return NULL;
}

/*
 * Independent of lib/isa/reloc.c: which errno relocating s must give, at a near place and a far
 * one, and which arena bytes it may touch. Returns -1 if the bytes do not decode.
 */
static int analyse(struct seq *s)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	uint32_t starts[KINSTR_RELOC_MAX_INSNS + 1];
	uint64_t targets[KINSTR_RELOC_MAX_INSNS];
	int branch[KINSTR_RELOC_MAX_INSNS];
	uint32_t off;
	int n = 0, i, j;

	int first_into = -1, first_ext = -1, unmovable = 0;

	s->has_backward = 0;
	for (off = 0; off < s->len; off += insn.length) {
		const ZydisDecodedOperand *op;
		ZyanU64 abs;

		if (n == KINSTR_RELOC_MAX_INSNS || decode(s->code + off, s->len - off, &insn, ops))
			return -1;
		starts[n] = off;
		branch[n] = 0;
		targets[n] = 0;
		if ((op = rel_imm(&insn, ops))) {
			ZydisCalcAbsoluteAddress(&insn, op, s->a + off, &abs);
			targets[n] = abs;
			branch[n] = 1;
			if (insn.mnemonic == ZYDIS_MNEMONIC_CALL && abs > s->a && abs < s->a + s->len)
				unmovable = 1;
		} else if ((op = rip_mem(&insn, ops))) {
			ZydisCalcAbsoluteAddress(&insn, op, s->a + off, &abs);
			targets[n] = abs;
			branch[n] = 2;
		}
		n++;
	}
	starts[n] = off;
	/* the relocator reports the first offending instruction, in order */
	for (i = 0; i < n; i++) {
		uint64_t t = targets[i];

		if (!branch[i])
			continue;
		if (branch[i] == 1 && t > s->a && t < s->a + s->len) {
			for (j = 1; j < n && s->a + starts[j] != t; j++)
				;
			if (j == n && first_into < 0)
				first_into = i;
			if (t <= s->a + starts[i])
				s->has_backward = 1;
			continue;	/* goes to the copy: always reachable */
		}
		if (branch[i] == 1 && t == s->a)
			s->has_backward = 1;
		if (first_ext < 0)
			first_ext = i;
	}
	s->expect_near = first_into >= 0 ? -EXDEV : 0;
	s->expect_far = s->expect_near;
	if (first_ext >= 0 && (first_into < 0 || first_ext < first_into))
		s->expect_far = -ERANGE;
	if (unmovable)		/* found while decoding, before any target is resolved */
		s->expect_near = s->expect_far = -EOPNOTSUPP;
	return 0;
}

/* ---- running one sequence everywhere ---------------------------------------------------- */

static unsigned long nr_seqs, nr_runs, nr_relocs, nr_refused_far, nr_redecoded, nr_faults;
static int fail_budget = 20;

static void put_bytes(uint64_t at, const void *p, size_t n)
{
	memcpy((void *)at, p, n);
}

static void load_memory(const struct seq *s)
{
	int i;

	memcpy((void *)S_BASE, s_init, S_SIZE);
	for (i = 0; i < s->nr_watch; i++)
		put_bytes(s->watch[i] - WATCH_PAD, s->watch_init[i], 64);
}

static void execute(uint64_t entry, const struct regs *in, struct outcome *o)
{
	kr_test_entry = entry;
	run_active = 1;
	if (!sigsetjmp(run_jb, 0))
		kr_test_enter(in);
	run_active = 0;
	*o = run_out;
	nr_runs++;
}

struct snapshot {
	uint8_t s[S_SIZE];
	uint8_t w[MAX_WATCH][64];
};

static void take_snapshot(const struct seq *s, struct snapshot *snap)
{
	int i;

	memcpy(snap->s, (void *)S_BASE, S_SIZE);
	for (i = 0; i < s->nr_watch; i++)
		memcpy(snap->w[i], (void *)(s->watch[i] - WATCH_PAD), 64);
}

/*
 * A relocated call (direct or through memory) pushes the copy's return address: where the
 * run in place has the original one in a stack slot, accept the copy's counterpart.
 */
static void unmap_return_addresses(const struct kinstr_reloc *r, const struct snapshot *sa,
				   struct snapshot *sb)
{
	unsigned int i;
	int k;

	for (i = 0; i < r->nr_insns; i++) {
		const struct kinstr_reloc_insn *ri = &r->insns[i];
		uint64_t old_ret = r->old_addr + ri->old_off + ri->old_len;
		uint64_t new_ret, va, vb;

		if (kinstr_reloc__map(r, old_ret, &new_ret))
			continue;
		for (k = S_DATA; k < S_SIZE; k += 8) {
			memcpy(&va, sa->s + k, 8);
			memcpy(&vb, sb->s + k, 8);
			if (va == old_ret && vb == new_ret)
				memcpy(sb->s + k, &old_ret, 8);
		}
	}
}

static int report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int report(const char *fmt, ...)
{
	va_list ap;

	if (fail_budget-- <= 0) {
		check_case_failed = 1;
		return 0;
	}
	if (!check_case_failed)
		printf("FAIL %s: ", check_case_name);
	else
		printf("     also: ");
	check_case_failed = 1;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 0;
}

static void hexdump(char *buf, size_t cap, const uint8_t *p, size_t n)
{
	size_t i, o = 0;

	buf[0] = 0;
	for (i = 0; i < n && o + 4 < cap; i++)
		o += snprintf(buf + o, cap - o, "%02x ", p[i]);
}

static int compare(const struct seq *s, const char *where, const struct regs *in,
		   const struct outcome *a, const struct snapshot *sa,
		   const struct outcome *b, const struct snapshot *sb)
{
	char hex[200];
	int i;

	hexdump(hex, sizeof(hex), s->code, s->len);
	if (a->sig != b->sig || a->rip != b->rip)
		return report("%s [%s] %s: exit sig %d at %#" PRIx64 " in place, sig %d at %#"
			      PRIx64 " relocated (a=%#" PRIx64 " flags %#" PRIx64 ")",
			      s->name, hex, where, a->sig, a->rip, b->sig, b->rip, s->a, in->flags);
	if (a->sig == SIGSEGV && a->fault_addr != b->fault_addr)
		return report("%s [%s] %s: fault address %#" PRIx64 " vs %#" PRIx64, s->name, hex,
			      where, a->fault_addr, b->fault_addr);
	for (i = 0; i < 16; i++)
		if (a->regs.r[i] != b->regs.r[i])
			return report("%s [%s] %s: %s %#" PRIx64 " in place, %#" PRIx64 " relocated",
				      s->name, hex, where, reg_names[i], a->regs.r[i], b->regs.r[i]);
	if ((a->regs.flags ^ b->regs.flags) & (FLAGS_MASK | 0x400))
		return report("%s [%s] %s: flags %#" PRIx64 " vs %#" PRIx64, s->name, hex, where,
			      a->regs.flags, b->regs.flags);
	if (memcmp(sa->s, sb->s, S_SIZE)) {
		for (i = 0; i < S_SIZE && sa->s[i] == sb->s[i]; i++)
			;
		return report("%s [%s] %s: scratch memory differs at +%#x", s->name, hex, where, i);
	}
	for (i = 0; i < s->nr_watch; i++)
		if (memcmp(sa->w[i], sb->w[i], 64))
			return report("%s [%s] %s: memory at %#" PRIx64 " differs", s->name, hex,
				      where, s->watch[i]);
	return 1;
}

/*
 * Deliverable 3: decode the copy with Zydis and check every instruction's absolute target
 * against the original's (or, for a branch inside the run, against the copy of its target).
 */
static int redecode(const struct seq *s, const struct kinstr_reloc *r, const uint8_t *out,
		    const char *where)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT], oops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn, orig;
	unsigned int i;

	for (i = 0; i < r->nr_insns; i++) {
		const struct kinstr_reloc_insn *ri = &r->insns[i];
		const uint8_t *p = out + ri->new_off;
		uint64_t at = r->new_addr + ri->new_off, want = ri->target, mapped;
		const ZydisDecodedOperand *op;
		ZyanU64 abs;

		decode(s->code + ri->old_off, ri->old_len, &orig, oops);
		if (decode(p, ri->new_len, &insn, ops))
			return report("%s %s: copy of insn %u does not decode", s->name, where, i);
		/* a branch to an interior boundary of the run must go to the copy of it */
		if (ri->has_target && rel_imm(&orig, oops) && want > s->a && want < s->a + s->len) {
			if (kinstr_reloc__map(r, want, &mapped))
				return report("%s %s: interior target %#" PRIx64 " does not map",
					      s->name, where, want);
			want = mapped;
		}
		if (insn.mnemonic != orig.mnemonic)
			return report("%s %s: insn %u is %s, was %s", s->name, where, i,
				      ZydisMnemonicGetString(insn.mnemonic),
				      ZydisMnemonicGetString(orig.mnemonic));
		if (ri->kind == KINSTR_RELOC_INSN_LOOP) {
			/* <op> +2; jmp +5; jmp rel32 target */
			const uint8_t *q = p + insn.length;
			ZydisDecodedInstruction j1, j2;

			if (!(op = rel_imm(&insn, ops)) ||
			    ZYAN_FAILED(ZydisCalcAbsoluteAddress(&insn, op, at, &abs)) ||
			    abs != at + insn.length + 2 || insn.address_width != orig.address_width)
				return report("%s %s: loop head of insn %u wrong", s->name, where, i);
			if (decode(q, 2, &j1, ops) || j1.mnemonic != ZYDIS_MNEMONIC_JMP ||
			    ZYAN_FAILED(ZydisCalcAbsoluteAddress(&j1, &ops[0], at + insn.length, &abs)) ||
			    abs != at + ri->new_len)
				return report("%s %s: loop skip of insn %u wrong", s->name, where, i);
			q += 2;
			if (decode(q, 5, &j2, ops) || j2.mnemonic != ZYDIS_MNEMONIC_JMP ||
			    ZYAN_FAILED(ZydisCalcAbsoluteAddress(&j2, &ops[0], at + insn.length + 2,
								 &abs)) || abs != want ||
			    insn.length + 2 + j2.length != ri->new_len)
				return report("%s %s: loop jump of insn %u wrong", s->name, where, i);
			nr_redecoded++;
			continue;
		}
		if (insn.length != ri->new_len)
			return report("%s %s: insn %u decodes to %u bytes, laid out as %u", s->name,
				      where, i, insn.length, ri->new_len);
		if ((op = rel_imm(&insn, ops)) || (op = rip_mem(&insn, ops))) {
			if (!ri->has_target || ZYAN_FAILED(ZydisCalcAbsoluteAddress(&insn, op, at, &abs)))
				return report("%s %s: insn %u has an unexpected target", s->name,
					      where, i);
			if (abs != want)
				return report("%s %s: insn %u reaches %#" PRIx64 ", original %#"
					      PRIx64, s->name, where, i, (uint64_t)abs, want);
			if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
			    (memcmp(p, s->code + ri->old_off, insn.raw.disp.offset) ||
			     memcmp(p + insn.raw.disp.offset + 4,
				    s->code + ri->old_off + insn.raw.disp.offset + 4,
				    insn.length - insn.raw.disp.offset - 4)))
				return report("%s %s: insn %u changed beyond its disp32", s->name,
					      where, i);
		} else if (ri->has_target || memcmp(p, s->code + ri->old_off, ri->old_len)) {
			return report("%s %s: insn %u was not copied verbatim", s->name, where, i);
		}
		nr_redecoded++;
	}
	return 1;
}

/* Run s from each initial state in place and at every place; 1 if all agreed. */
static int run_seq(struct seq *s, const struct regs *ins, int nr_ins)
{
	static uint8_t out[KINSTR_RELOC_MAX_OUT], patched[KINSTR_RELOC_MAX_IN];
	struct kinstr_reloc r;
	static struct snapshot sa, sb;
	struct outcome oa, ob;
	int p, k, err, ok = 1;

	nr_seqs++;
	put_bytes(s->a, s->code, s->len);
	for (p = 0; p < NR_PLACES && ok; p++) {
		const struct place *pl = &places[p];
		/* a different offset each time, so displacements vary */
		uint64_t b = pl->base + 0x100 + (nr_seqs * 37 % (COPY_SIZE - 0x400));
		int want = pl->far ? s->expect_far : s->expect_near;
		uint64_t back = s->a + s->len;
		uint8_t tail[14];
		int64_t d;
		int tl;

		err = kinstr_reloc__run(&r, s->code, s->len, s->a, out, sizeof(out), b);
		if (err != want) {
			report("%s at %s: kinstr_reloc__run() = %d (%s), expected %d", s->name,
			       pl->name, err, kinstr_reloc__why(&r), want);
			ok = 0;
			break;
		}
		if (err) {
			if (!r.why[0])
				ok = report("%s at %s: refused with no reason", s->name, pl->name);
			nr_refused_far += pl->far;
			continue;
		}
		nr_relocs++;
		if (!redecode(s, &r, out, pl->name)) {
			ok = 0;
			break;
		}
		/* the trampoline's jmp back to the original fallthrough */
		d = (int64_t)(back - (b + r.out_len + 5));
		if (d >= INT32_MIN && d <= INT32_MAX) {
			int32_t d32 = d;

			tail[0] = 0xe9;
			memcpy(tail + 1, &d32, 4);
			tl = 5;
		} else {
			memcpy(tail, "\xff\x25\0\0\0\0", 6);
			memcpy(tail + 6, &back, 8);
			tl = 14;
		}
		put_bytes(b, out, r.out_len);
		put_bytes(b + r.out_len, tail, tl);
		/*
		 * While the copy runs, the site is patched as it will be in the kernel: a jmp to
		 * the copy, int3 in the rest, so any way back into the original bytes shows.
		 */
		memset(patched, 0xcc, s->len);
		d = (int64_t)(b - (s->a + 5));
		if (s->len >= 5 && d >= INT32_MIN && d <= INT32_MAX) {
			int32_t d32 = d;

			patched[0] = 0xe9;
			memcpy(patched + 1, &d32, 4);
		}

		for (k = 0; k < nr_ins && ok; k++) {
			load_memory(s);
			execute(s->a, &ins[k], &oa);
			take_snapshot(s, &sa);
			load_memory(s);
			put_bytes(s->a, patched, s->len);
			execute(b, &ins[k], &ob);
			put_bytes(s->a, s->code, s->len);
			take_snapshot(s, &sb);
			/* the copy faulted: name the original instruction it stands for */
			if (ob.sig != SIGTRAP && ob.rip >= b && ob.rip < b + r.out_len &&
			    kinstr_reloc__unmap(&r, ob.rip, &ob.rip))
				ok = report("%s at %s: fault at %#" PRIx64 " inside an expansion",
					    s->name, pl->name, ob.rip);
			if (oa.sig != SIGTRAP)
				nr_faults++;
			unmap_return_addresses(&r, &sa, &sb);
			if (ok)
				ok = compare(s, pl->name, &ins[k], &oa, &sa, &ob, &sb);
		}
		memset((void *)b, 0xcc, r.out_len + tl);
	}
	/* leave the sea of int3 as it was: later sequences branch into it */
	memset((void *)s->a, 0xcc, s->len);
	for (p = 0; p < s->nr_watch; p++)
		memset((void *)(s->watch[p] - WATCH_PAD), 0xcc, 64);
	return ok;
}

/* ---- initial states ------------------------------------------------------------------- */

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* every register a pointer into the scratch data, rsp into the scratch stack */
static void pointer_regs(struct regs *in, uint64_t flags)
{
	int i;

	for (i = 0; i < 16; i++)
		in->r[i] = S_BASE + 0x2000 + i * 0x140 + (rnd() & 0x38);
	in->r[4] = S_RSP;
	in->flags = FLAGS_FIXED | (flags & FLAGS_MASK);
}

static void value_regs(struct regs *in, uint64_t flags)
{
	static const uint64_t small[] = { 0, 1, 2, 0x7f, 0x80, 0xff, 0xffffffff, 0x100000000ULL,
					  0x8000000000000000ULL, ~0ULL, 5, 64 };
	int i;

	for (i = 0; i < 16; i++)
		in->r[i] = (rnd() & 1) ? small[rnd() % 12] : rnd();
	in->r[4] = S_RSP;
	in->flags = FLAGS_FIXED | (flags & FLAGS_MASK);
}

/* the 32 combinations of CF PF ZF SF OF, so every jcc is seen taken and not taken */
static int all_flag_states(struct regs *ins, const struct regs *base)
{
	static const uint64_t bits[5] = { 0x1, 0x4, 0x40, 0x80, 0x800 };
	int m, b;

	for (m = 0; m < 32; m++) {
		ins[m] = *base;
		ins[m].flags = FLAGS_FIXED;
		for (b = 0; b < 5; b++)
			if (m & (1 << b))
				ins[m].flags |= bits[b];
	}
	return 32;
}

/* ---- building edge cases ------------------------------------------------------------- */

static void seq_init(struct seq *s, uint64_t a, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void seq_init(struct seq *s, uint64_t a, const char *fmt, ...)
{
	va_list ap;

	memset(s, 0, sizeof(*s));
	s->a = a;
	va_start(ap, fmt);
	vsnprintf(s->name, sizeof(s->name), fmt, ap);
	va_end(ap);
}

static void emit(struct seq *s, const void *p, size_t n)
{
	memcpy(s->code + s->len, p, n);
	s->len += n;
}

static void emit1(struct seq *s, uint8_t b)
{
	emit(s, &b, 1);
}

static void emit32(struct seq *s, int32_t v)
{
	emit(s, &v, 4);
}

/* rel8/rel32 so that an instruction ending after `after` more bytes reaches target */
static int32_t rel_to(const struct seq *s, uint32_t after, uint64_t target)
{
	return (int32_t)(target - (s->a + s->len + after));
}

/* watch a RIP-relative target: give it pattern bytes; the instruction is emitted after */
static void add_watch(struct seq *s, uint64_t target)
{
	int i;

	s->watch[s->nr_watch] = target;
	for (i = 0; i < 64; i++)
		s->watch_init[s->nr_watch][i] = rnd();
	s->nr_watch++;
}

static int check_seq(struct seq *s, const struct regs *ins, int n)
{
	if (analyse(s)) {
		report("%s: test bug, sequence does not decode", s->name);
		return 0;
	}
	return run_seq(s, ins, n);
}

/* ---- execution tests: the table --------------------------------------------------------- */

static void t_jcc(void)
{
	struct regs base, ins[32];
	struct seq s;
	int cc, w, v, n;

	pointer_regs(&base, 0);
	n = all_flag_states(ins, &base);
	for (cc = 0; cc < 16; cc++) {
		for (w = 0; w < 2; w++) {
			for (v = 0; v < 5; v++) {
				uint32_t il = w ? 6 : 2;
				uint64_t t;

				seq_init(&s, EDGE_A, "j%x rel%d variant %d", cc, w ? 32 : 8, v);
				if (v == 4)	/* flags from an instruction before it */
					emit(&s, "\x48\x01\xd8", 3);	/* add %rbx,%rax */
				switch (v) {
				case 0: case 4: t = s.a + 0x40; break;	/* forward, outside */
				case 1: t = s.a - 0x50; break;		/* backward, outside */
				case 2: t = s.a + s.len + il + 5; break; /* interior boundary */
				default: t = s.a + 0x7f + il; break;	/* rel8 edge */
				}
				if (w) {
					emit1(&s, 0x0f);
					emit1(&s, 0x80 | cc);
					emit32(&s, rel_to(&s, 4, t));
				} else {
					emit1(&s, 0x70 | cc);
					emit1(&s, (uint8_t)rel_to(&s, 1, t));
				}
				emit(&s, "\xb8\x11\x22\x33\x44", 5);	/* mov $..,%eax */
				emit(&s, "\xff\xc3", 2);		/* inc %ebx */
				check_seq(&s, ins, n);
			}
		}
	}
}

static void t_jmp_call(void)
{
	static const int64_t dists[] = { 0x40, -0x50, 0x7f, -0x80, 0x123456, -0x654321 };
	struct regs base, ins[32];
	struct seq s;
	unsigned int i;
	int n, form;

	pointer_regs(&base, 0);
	n = all_flag_states(ins, &base) / 4;
	for (i = 0; i < sizeof(dists) / sizeof(dists[0]); i++) {
		for (form = 0; form < 3; form++) {
			uint64_t t = EDGE_A + 3 + dists[i];

			seq_init(&s, EDGE_A, "%s to %+" PRId64, form == 0 ? "jmp rel8" :
				 form == 1 ? "jmp rel32" : "call rel32", dists[i]);
			emit(&s, "\x48\xff\xc0", 3);	/* inc %rax: the jump is not first */
			if (form == 0) {
				if (rel_to(&s, 2, t) != (int8_t)rel_to(&s, 2, t))
					continue;
				emit1(&s, 0xeb);
				emit1(&s, (uint8_t)rel_to(&s, 1, t));
			} else {
				emit1(&s, form == 1 ? 0xe9 : 0xe8);
				emit32(&s, rel_to(&s, 4, t));
			}
			emit(&s, "\x48\xff\xc3", 3);	/* inc %rbx: never reached */
			check_seq(&s, ins, n);
		}
	}
	/* a call in the middle: its return address is the copy's */
	seq_init(&s, EDGE_A, "call then more");
	emit1(&s, 0xe8);
	emit32(&s, rel_to(&s, 4, EDGE_A - 0x1000));
	emit(&s, "\x48\xff\xc3", 3);
	check_seq(&s, ins, n);
	/* interior jmp over an instruction */
	seq_init(&s, EDGE_A, "jmp rel8 interior");
	emit(&s, "\xeb\x03\x48\xff\xc0\x48\xff\xc3", 8);
	check_seq(&s, ins, n);
}

struct rip_op {
	const char *name;
	const char *bytes;	/* up to the disp32 */
	int nbytes;
	int imm;		/* immediate bytes after the disp32 */
	int write;
};

static const struct rip_op rip_ops[] = {
	{ "mov disp(%rip),%rax", "\x48\x8b\x05", 3, 0, 0 },
	{ "mov %rax,disp(%rip)", "\x48\x89\x05", 3, 0, 1 },
	{ "mov disp(%rip),%r13d", "\x44\x8b\x2d", 3, 0, 0 },
	{ "cmpl $imm32,disp(%rip)", "\x81\x3d", 2, 4, 0 },
	{ "cmpq $imm8,disp(%rip)", "\x48\x83\x3d", 3, 1, 0 },
	{ "cmpb $imm8,disp(%rip)", "\x80\x3d", 2, 1, 0 },
	{ "movb $imm8,disp(%rip)", "\xc6\x05", 2, 1, 1 },
	{ "movw $imm16,disp(%rip)", "\x66\xc7\x05", 3, 2, 1 },
	{ "movl $imm32,disp(%rip)", "\xc7\x05", 2, 4, 1 },
	{ "movq $simm32,disp(%rip)", "\x48\xc7\x05", 3, 4, 1 },
	{ "addq $imm8,disp(%rip)", "\x48\x83\x05", 3, 1, 1 },
	{ "andl $imm32,disp(%rip)", "\x81\x25", 2, 4, 1 },
	{ "testb $imm8,disp(%rip)", "\xf6\x05", 2, 1, 0 },
	{ "testl $imm32,disp(%rip)", "\xf7\x05", 2, 4, 0 },
	{ "imul $imm32,disp(%rip),%rax", "\x48\x69\x05", 3, 4, 0 },
	{ "imul $imm8,disp(%rip),%rcx", "\x48\x6b\x0d", 3, 1, 0 },
	{ "shll $imm8,disp(%rip)", "\xc1\x25", 2, 1, 1 },
	{ "btsq $imm8,disp(%rip)", "\x48\x0f\xba\x2d", 4, 1, 1 },
	{ "lea disp(%rip),%rsi", "\x48\x8d\x35", 3, 0, 0 },
	{ "push disp(%rip)", "\xff\x35", 2, 0, 0 },
	{ "pop disp(%rip)", "\x8f\x05", 2, 0, 1 },
	{ "incl disp(%rip)", "\xff\x05", 2, 0, 1 },
	{ "lock incq disp(%rip)", "\xf0\x48\xff\x05", 4, 0, 1 },
	{ "cmpxchg %rbx,disp(%rip)", "\x48\x0f\xb1\x1d", 4, 0, 1 },
	{ "xchg %rax,disp(%rip)", "\x48\x87\x05", 3, 0, 1 },
	{ "movzbl disp(%rip),%edx", "\x0f\xb6\x15", 3, 0, 0 },
	{ "cmovz disp(%rip),%rdi", "\x48\x0f\x44\x3d", 4, 0, 0 },
	{ "sete disp(%rip)", "\x0f\x94\x05", 3, 0, 1 },
	{ "jmp *disp(%rip)", "\xff\x25", 2, 0, 0 },
	{ "call *disp(%rip)", "\xff\x15", 2, 0, 0 },
};

static void t_riprel(void)
{
	static const int64_t dists[] = { 0x1000, -0x2000, 0x123450, -0x7f008, 0x80, -0x100 };
	struct regs base, ins[32];
	struct seq s;
	unsigned int i, d;
	int n, k, m, tail;

	pointer_regs(&base, 0);
	all_flag_states(ins, &base);
	/* a few flag states: cmp/test results feed a jcc after the instruction */
	for (k = 0, n = 0; k < 32; k += 5)
		ins[n++] = ins[k];
	for (i = 0; i < sizeof(rip_ops) / sizeof(rip_ops[0]); i++) {
		const struct rip_op *op = &rip_ops[i];

		for (d = 0; d < sizeof(dists) / sizeof(dists[0]); d++) {
			for (tail = 0; tail < 2; tail++) {
				uint64_t t = EDGE_A + dists[d];
				int is_branch = op->bytes[0] == '\xff' &&
						(op->bytes[1] == '\x25' || op->bytes[1] == '\x15');

				seq_init(&s, EDGE_A, "%s %+" PRId64 "%s", op->name, dists[d],
					 tail ? " + jz" : "");
				add_watch(&s, t);
				if (is_branch) {
					/* the loaded target: an int3 somewhere in the arena */
					uint64_t dest = EDGE_A - 0x3000 - d * 8;

					memcpy(&s.watch_init[0][WATCH_PAD], &dest, 8);
				}
				emit(&s, "\x48\x31\xd8", 3);	/* xor %rbx,%rax */
				emit(&s, op->bytes, op->nbytes);
				emit32(&s, rel_to(&s, 4 + op->imm, t));
				for (m = 0; m < op->imm; m++)
					emit1(&s, 0xa5 ^ (m * 0x3c) ^ d);
				if (tail) {
					emit1(&s, 0x74);	/* jz +0x30 */
					emit1(&s, 0x30);
				}
				emit(&s, "\x48\xff\xc1", 3);	/* inc %rcx */
				check_seq(&s, ins, n);
			}
		}
	}
}

/* loop, loope, loopne, jrcxz, and their 32-bit-counter (67h) forms */
static void t_loop(void)
{
	static const uint64_t rcxs[] = { 0, 1, 2, 5, 0x100000000ULL, 0xffffffffULL,
					 0x100000001ULL, ~0ULL };
	static const uint8_t ops[] = { 0xe0, 0xe1, 0xe2, 0xe3 };
	struct regs base, ins[64];
	struct seq s;
	unsigned int o, a32, v, i;
	int n;

	pointer_regs(&base, 0);
	for (o = 0; o < 4; o++) {
		for (a32 = 0; a32 < 2; a32++) {
			for (v = 0; v < 4; v++) {
				seq_init(&s, EDGE_A, "%s%s variant %u", a32 ? "addr32 " : "",
					 ops[o] == 0xe0 ? "loopne" : ops[o] == 0xe1 ? "loope" :
					 ops[o] == 0xe2 ? "loop" : "jrcxz", v);
				n = 0;
				if (v < 2) {
					/* one instruction to a target outside, forward / back */
					uint64_t t = v ? EDGE_A - 0x60 : EDGE_A + 0x70;

					if (a32)
						emit1(&s, 0x67);
					emit1(&s, ops[o]);
					emit1(&s, (uint8_t)rel_to(&s, 1, t));
					emit(&s, "\x48\xff\xc0", 3);
					for (i = 0; i < 8; i++) {
						ins[n] = base;
						ins[n].r[1] = rcxs[i];
						ins[n++].flags = FLAGS_FIXED | (i & 1 ? 0x40 : 0);
						ins[n] = ins[n - 1];
						ins[n++].flags ^= 0x40;
					}
				} else if (v == 2) {
					/* a counted loop inside the run: nop; 1: inc; cmp; loopX 1b */
					if (ops[o] == 0xe3)
						continue;
					emit1(&s, 0x90);
					emit(&s, "\x48\xff\xc0", 3);		/* inc %rax */
					emit(&s, "\x48\x83\xf8\x05", 4);	/* cmp $5,%rax */
					if (a32)
						emit1(&s, 0x67);
					emit1(&s, ops[o]);
					emit1(&s, (uint8_t)rel_to(&s, 1, EDGE_A + 1));
					emit(&s, "\x48\xff\xc3", 3);
					for (i = 1; i <= 9; i++) {
						ins[n] = base;
						ins[n].r[0] = i & 1 ? 0 : 3;
						ins[n].r[1] = (i < 8 ? i : 100) |
							(a32 ? 0xabc00000000ULL : 0);
						ins[n++].flags = FLAGS_FIXED;
					}
				} else {
					/* jrcxz/loop forward over an instruction inside the run */
					if (a32)
						emit1(&s, 0x67);
					emit1(&s, ops[o]);
					emit1(&s, 3);
					emit(&s, "\x48\xff\xc0", 3);	/* skipped when taken */
					emit(&s, "\x48\xff\xc3", 3);
					for (i = 0; i < 8; i++) {
						ins[n] = base;
						ins[n].r[1] = rcxs[i];
						ins[n++].flags = FLAGS_FIXED | (i & 2 ? 0x40 : 0);
					}
				}
				check_seq(&s, ins, n);
			}
		}
	}
}

/* Branches back to the run's first byte re-enter the original site. */
static void t_branch_to_start(void)
{
	struct regs ins[4];
	struct seq s;
	int i;

	for (i = 0; i < 4; i++) {
		pointer_regs(&ins[i], 0);
		ins[i].r[1] = i + 1;
	}
	/* 0: inc %rax; dec %rcx; jnz 0 */
	seq_init(&s, EDGE_A, "dec/jnz to start");
	emit(&s, "\x48\xff\xc0\x48\xff\xc9\x75\xf8", 8);
	check_seq(&s, ins, 4);
	/* 0: add %rcx,%rax; loop 0 */
	seq_init(&s, EDGE_A, "loop to start");
	emit(&s, "\x48\x01\xc8\xe2\xfb", 5);
	check_seq(&s, ins, 4);
}

/* Straight-line arithmetic: no targets, so it must also work 8 GiB away. */
static void t_position_independent(void)
{
	static const char *const codes[] = {
		"\x48\x01\xd8\x48\x11\xca\x48\x19\xf7",		/* add adc sbb */
		"\x48\xf7\xe3\x48\x0f\xaf\xc1",			/* mul imul */
		"\x48\xd3\xe0\x48\xd3\xfa\x0f\xbc\xc8",		/* shl sar bsf */
		"\x0f\x94\xc0\x0f\x9c\xc3\x48\x0f\x4f\xca",	/* setz setl cmovg */
		"\x53\x51\x5a\x41\x58\x9c",			/* push push pop pop pushf */
		"\x48\x8b\x47\x08\x48\x89\x46\x10\x48\x8d\x44\x8a\x10", /* mov mov lea */
		"\x48\x99\x48\x98\x66\x98\x90\x0f\x1f\x44\x00\x00", /* cqo cdqe cbw nop nopl */
	};
	static const int lens[] = { 9, 7, 9, 10, 6, 13, 12 };
	struct regs ins[8];
	struct seq s;
	unsigned int i;
	int k;

	for (k = 0; k < 8; k++)
		pointer_regs(&ins[k], rnd());
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		seq_init(&s, EDGE_A, "position independent %u", i);
		emit(&s, codes[i], lens[i]);
		check_seq(&s, ins, 8);
	}
}

/* ---- execution tests: the kernel ---------------------------------------------------------- */

static uint8_t *ktext;
static uint64_t ktext_addr, ktext_size;
static char kimage_note[PATH_MAX + 64];

/* snprintf for paths; -1 when the result does not fit */
static int pathf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int pathf(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int exe_dir(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/* bzImage -> vmlinux, with the distribution's decompressors, cached in build/ */
static int extract_vmlinux(const char *bz, const char *outp)
{
	static const struct { const char *magic; int n; const char *tool; } fmts[] = {
		{ "\xfd\x37\x7a\x58\x5a\x00", 6, "xz -dc" },
		{ "\x28\xb5\x2f\xfd", 4, "zstd -dcq" },
		{ "\x1f\x8b", 2, "gzip -dc" },
	};
	FILE *f = fopen(bz, "rb"), *pipe;
	uint8_t hdr[0x250];
	uint32_t poff, plen, start;
	char cmd[2 * PATH_MAX + 64], tmp[PATH_MAX + 64];
	uint8_t *buf;
	unsigned int i;
	int ok = -1;

	if (!f)
		return -1;
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4)) {
		fclose(f);
		return -1;
	}
	memcpy(&poff, hdr + 0x248, 4);
	memcpy(&plen, hdr + 0x24c, 4);
	start = (hdr[0x1f1] + 1) * 512 + poff;
	buf = malloc(plen);
	if (!buf || fseek(f, start, SEEK_SET) || fread(buf, 1, plen, f) != plen) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	for (i = 0; i < 3; i++) {
		if (memcmp(buf, fmts[i].magic, fmts[i].n))
			continue;
		if (pathf(tmp, sizeof(tmp), "%s.tmp.%d", outp, (int)getpid()) ||
		    pathf(cmd, sizeof(cmd), "%s > '%s' 2>/dev/null", fmts[i].tool, tmp))
			break;
		signal(SIGPIPE, SIG_IGN);
		pipe = popen(cmd, "w");
		if (!pipe)
			break;
		fwrite(buf, 1, plen, pipe);
		pclose(pipe);	/* xz complains about the bzImage's trailing size word */
		signal(SIGPIPE, SIG_DFL);
		if (!rename(tmp, outp))
			ok = 0;
		break;
	}
	free(buf);
	return ok;
}

/* the target kernel's release, as the Makefile picks it */
static int kernel_release(const char *root, char *buf, size_t cap)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	size_t n;

	if (pathf(cmd, sizeof(cmd), "'%s/scripts/kernel-release' 2>/dev/null", root))
		return -1;
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(buf, 1, cap - 1, p);
	pclose(p);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return n ? 0 : -1;
}

/*
 * build/vmlinux-RELEASE (shared with test_vmlinux_boundaries), extracted from
 * /boot/vmlinuz-RELEASE when missing or older; KINSTR_VMLINUX names another one.
 */
static int load_ktext(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 200], bz[PATH_MAX + 200], release[128];
	const char *env = getenv("KINSTR_VMLINUX");
	struct stat zst, vst;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	FILE *f;
	int i, ret = -1;

	if (env) {
		if (pathf(path, sizeof(path), "%s", env))
			return -1;
	} else {
		/* the binary is ROOT/build/tests/unit/test_reloc */
		if (exe_dir(dir, sizeof(dir)))
			return -1;
		if (pathf(path, sizeof(path), "%s/../../..", dir))
			return -1;
		if (kernel_release(path, release, sizeof(release))) {
			glob_t g;

			if (glob("/boot/vmlinuz-6.1.*-amd64", 0, NULL, &g))
				return -1;
			pathf(release, sizeof(release), "%s", g.gl_pathv[0] + strlen("/boot/vmlinuz-"));
			globfree(&g);
		}
		if (pathf(bz, sizeof(bz), "/boot/vmlinuz-%s", release) ||
		    pathf(path, sizeof(path), "%s/../../vmlinux-%s", dir, release) || stat(bz, &zst))
			return -1;
		pathf(kimage_note, sizeof(kimage_note), "%s", bz);
		if ((stat(path, &vst) || vst.st_mtime < zst.st_mtime) && extract_vmlinux(bz, path))
			return -1;
	}
	if (!kimage_note[0])
		pathf(kimage_note, sizeof(kimage_note), "%s", path);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || fseek(f, eh.e_shoff, SEEK_SET) ||
	    fread(sh, sizeof(*sh), eh.e_shnum, f) != eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	names = malloc(sh[eh.e_shstrndx].sh_size);
	if (!names || fseek(f, sh[eh.e_shstrndx].sh_offset, SEEK_SET) ||
	    fread(names, 1, sh[eh.e_shstrndx].sh_size, f) != sh[eh.e_shstrndx].sh_size)
		goto out;
	for (i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name >= sh[eh.e_shstrndx].sh_size ||
		    strcmp(names + sh[i].sh_name, ".text"))
			continue;
		ktext_addr = sh[i].sh_addr;
		ktext_size = sh[i].sh_size;
		ktext = malloc(ktext_size);
		if (ktext && !fseek(f, sh[i].sh_offset, SEEK_SET) &&
		    fread(ktext, 1, ktext_size, f) == ktext_size)
			ret = 0;
		break;
	}
out:
	free(sh);
	free(names);
	fclose(f);
	return ret;
}

/* the kernel address at IMG_BASE: .text starts 4 MiB in, data and bss follow */
static uint64_t img_of(uint64_t kaddr)
{
	return IMG_BASE + (kaddr - (ktext_addr - (4ULL << 20)));
}

static int in_img(uint64_t a, uint64_t n)
{
	return a >= IMG_BASE + 0x1000 && a - IMG_BASE <= IMG_SIZE - n;
}

/* instructions we let run in user space: arithmetic, moves, branches, stack */
static int allowed_insn(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops)
{
	int i;

	switch (insn->meta.category) {
	case ZYDIS_CATEGORY_BINARY: case ZYDIS_CATEGORY_LOGICAL: case ZYDIS_CATEGORY_DATAXFER:
	case ZYDIS_CATEGORY_SHIFT: case ZYDIS_CATEGORY_ROTATE: case ZYDIS_CATEGORY_BITBYTE:
	case ZYDIS_CATEGORY_SETCC: case ZYDIS_CATEGORY_CMOV: case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR: case ZYDIS_CATEGORY_CALL: case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_NOP: case ZYDIS_CATEGORY_WIDENOP: case ZYDIS_CATEGORY_PUSH:
	case ZYDIS_CATEGORY_POP: case ZYDIS_CATEGORY_CONVERT: case ZYDIS_CATEGORY_MISC:
	case ZYDIS_CATEGORY_SEMAPHORE: case ZYDIS_CATEGORY_BMI1: case ZYDIS_CATEGORY_FLAGOP:
		break;
	default:
		return 0;
	}
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_POPFQ: case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_CLI:
	case ZYDIS_MNEMONIC_STI: case ZYDIS_MNEMONIC_LEAVE: case ZYDIS_MNEMONIC_ENTER:
	case ZYDIS_MNEMONIC_XLAT: case ZYDIS_MNEMONIC_CPUID: case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2: case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_STD: case ZYDIS_MNEMONIC_STAC: case ZYDIS_MNEMONIC_CLAC:
	case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ:
		return 0;
	case ZYDIS_MNEMONIC_RET:
		if (insn->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return 0;
		break;
	case ZYDIS_MNEMONIC_JMP: case ZYDIS_MNEMONIC_CALL:
		/* direct only: an indirect one goes who knows where in this process */
		if (!rel_imm(insn, ops))
			return 0;
		break;
	default:
		break;
	}
	/* bt* reg,mem address mem + reg/8: anywhere at all */
	if ((insn->mnemonic == ZYDIS_MNEMONIC_BT || insn->mnemonic == ZYDIS_MNEMONIC_BTS ||
	     insn->mnemonic == ZYDIS_MNEMONIC_BTR || insn->mnemonic == ZYDIS_MNEMONIC_BTC) &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY && ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER)
		return 0;
	/* o16 branches are refused by the relocator (t_refusals); not run here */
	if (rel_imm(insn, ops) && (insn->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE))
		return 0;
	for (i = 0; i < insn->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			ZydisRegisterClass c = ZydisRegisterGetClass(op->reg.value);

			if (c != ZYDIS_REGCLASS_GPR8 && c != ZYDIS_REGCLASS_GPR16 &&
			    c != ZYDIS_REGCLASS_GPR32 && c != ZYDIS_REGCLASS_GPR64 &&
			    c != ZYDIS_REGCLASS_FLAGS && c != ZYDIS_REGCLASS_IP)
				return 0;
		}
		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (op->mem.segment == ZYDIS_REGISTER_FS || op->mem.segment == ZYDIS_REGISTER_GS))
			return 0;	/* per-CPU data: not ours to touch */
		if (op->type == ZYDIS_OPERAND_TYPE_POINTER)
			return 0;
	}
	return 1;
}

static int gpr_id(ZydisRegister reg)
{
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);

	if (ZydisRegisterGetClass(big) != ZYDIS_REGCLASS_GPR64)
		return -1;
	return ZydisRegisterGetId(big);
}

/*
 * Can s run from state in without touching memory outside the scratch block and its own
 * RIP-relative targets? Registers are followed in program order: a memory operand may only
 * use registers no earlier instruction wrote (their values are known), and the stack pointer
 * through pushes and pops. Also collects the RIP-relative targets to watch.
 */
static int memory_safe(struct seq *s, const struct regs *in)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	uint32_t written = 0, off;
	int64_t rsp_delta = 0;
	int rsp_known = 1, i;

	s->nr_watch = 0;
	for (off = 0; off < s->len; off += insn.length) {
		uint32_t now_written = 0;

		if (decode(s->code + off, s->len - off, &insn, ops) || !allowed_insn(&insn, ops))
			return 0;
		for (i = 0; i < insn.operand_count; i++) {
			const ZydisDecodedOperand *op = &ops[i];
			uint64_t ea, size = op->size / 8 ? op->size / 8 : 8;
			int b, x;

			if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
			    (b = gpr_id(op->reg.value)) >= 0)
				now_written |= 1u << b;
			if (op->type != ZYDIS_OPERAND_TYPE_MEMORY ||
			    op->mem.type == ZYDIS_MEMOP_TYPE_AGEN || insn.mnemonic == ZYDIS_MNEMONIC_NOP)
				continue;
			if (insn.address_width != 64)
				return 0;
			if (op->mem.base == ZYDIS_REGISTER_RIP) {
				ZyanU64 abs;

				ZydisCalcAbsoluteAddress(&insn, op, s->a + off, &abs);
				/* keep clear of the code and its fallthrough int3 */
				if (!in_img(abs - WATCH_PAD, 64) || size > 64 - 2 * WATCH_PAD ||
				    (abs + size + WATCH_PAD > s->a && abs < s->a + s->len + 1 + WATCH_PAD) ||
				    s->nr_watch == MAX_WATCH)
					return 0;
				s->watch[s->nr_watch] = abs;
				memset(s->watch_init[s->nr_watch], 0, 64);
				s->nr_watch++;
				continue;
			}
			b = op->mem.base == ZYDIS_REGISTER_NONE ? -2 : gpr_id(op->mem.base);
			x = op->mem.index == ZYDIS_REGISTER_NONE ? -2 : gpr_id(op->mem.index);
			if (b == -1 || x == -1 || b == -2)
				return 0;
			if (b == 4) {
				if (!rsp_known)
					return 0;
				ea = in->r[4] + rsp_delta;
			} else {
				if (written & (1u << b))
					return 0;
				ea = in->r[b];
			}
			if (x >= 0) {
				if (written & (1u << x))
					return 0;
				ea += in->r[x] * op->mem.scale;
			}
			ea += op->mem.disp.value;
			/* a push writes below rsp: allow 64 bytes of slack either way */
			if (ea < S_BASE || ea - S_BASE < 64 || ea - S_BASE > S_SIZE - 64 - size)
				return 0;
		}
		if (now_written & (1u << 4)) {
			if (insn.mnemonic == ZYDIS_MNEMONIC_PUSH || insn.mnemonic == ZYDIS_MNEMONIC_PUSHFQ)
				rsp_delta -= insn.operand_width / 8;
			else if (insn.mnemonic == ZYDIS_MNEMONIC_POP &&
				 !(ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
				   gpr_id(ops[0].reg.value) == 4))
				rsp_delta += insn.operand_width / 8;
			else if (insn.mnemonic != ZYDIS_MNEMONIC_CALL && insn.mnemonic != ZYDIS_MNEMONIC_RET)
				rsp_known = 0;
			now_written &= ~(1u << 4);
		}
		written |= now_written;
	}
	return 1;
}

/* branch targets must be int3s in the arena, not data we watch or bytes of other code */
static int targets_safe(const struct seq *s)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	uint32_t off;
	int i;

	for (off = 0; off < s->len; off += insn.length) {
		const ZydisDecodedOperand *op;
		ZyanU64 t;

		decode(s->code + off, s->len - off, &insn, ops);
		if (!(op = rel_imm(&insn, ops)))
			continue;
		ZydisCalcAbsoluteAddress(&insn, op, s->a + off, &t);
		if (!in_img(t, 1))
			return 0;
		for (i = 0; i < s->nr_watch; i++)
			if (t + 16 > s->watch[i] - WATCH_PAD && t < s->watch[i] + 64)
				return 0;
	}
	return 1;
}

static unsigned long k_candidates, k_refused, k_windows, k_riprel_imm, k_riprel, k_branches,
	k_calls;

static void t_kernel_sequences(void)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	uint32_t *starts;
	size_t nstarts = 0, cap = 1 << 23, i, stride;
	uint64_t off;
	struct regs ins[4];
	struct seq s;
	unsigned long budget = 20000;

	if (load_ktext())
		SKIP("no kernel image to extract (set KINSTR_VMLINUX or install linux-image-amd64)");
	starts = malloc(cap * sizeof(*starts));
	if (!starts)
		SKIP("out of memory");
	/* a linear sweep of .text: good enough for a source of real instruction mixes */
	for (off = 0; off < ktext_size && nstarts < cap; ) {
		if (decode(ktext + off, ktext_size - off, &insn, ops)) {
			off++;
			continue;
		}
		starts[nstarts++] = off;
		off += insn.length;
	}

	/*
	 * Windows spread evenly over all of .text; every third with a RIP-relative operand
	 * followed by an immediate (the case a length bug breaks), every tenth other RIP-relative.
	 */
	stride = nstarts / 12000 + 1;
	for (i = 0; i + 8 < nstarts && k_windows < budget; i++) {
		uint64_t kaddr = ktext_addr + starts[i];
		uint32_t len = 0, want = 5 + (rnd() % 12);
		size_t j;
		int interesting = 0, k, nin = 0;

		decode(ktext + starts[i], ktext_size - starts[i], &insn, ops);
		if (rip_mem(&insn, ops))
			interesting = insn.raw.imm[0].size ? rnd() % 3 == 0 : rnd() % 10 == 0;
		if (!interesting && i % stride)
			continue;
		k_candidates++;
		for (j = i; j < nstarts && len < want; j++) {
			uint32_t l = (j + 1 < nstarts ? starts[j + 1] : ktext_size) - starts[j];

			if (len + l > KINSTR_RELOC_MAX_IN || starts[j] != starts[i] + len)
				break;
			len += l;
		}
		if (len < 5)
			continue;
		seq_init(&s, img_of(kaddr), "kernel %#" PRIx64 " +%u", kaddr, len);
		memcpy(s.code, ktext + starts[i], len);
		s.len = len;
		if (analyse(&s))
			continue;
		if (s.expect_near) {
			/* not runnable, but the refusal must be the one expected */
			static uint8_t out[KINSTR_RELOC_MAX_OUT];
			struct kinstr_reloc r;
			int err = kinstr_reloc__run(&r, s.code, s.len, s.a, out, sizeof(out),
						    places[0].base);

			CHECK(err == s.expect_near, "%s: %d (%s), expected %d", s.name, err,
			      r.why, s.expect_near);
			k_refused++;
			continue;
		}
		if (s.has_backward)
			continue;	/* a loop inside the window could spin forever */

		/* states the window can run from: registers as pointers, then as plain values */
		pointer_regs(&ins[nin], 0);
		if (memory_safe(&s, &ins[nin]))
			nin++;
		pointer_regs(&ins[nin], FLAGS_MASK);
		if (memory_safe(&s, &ins[nin]))
			nin++;
		value_regs(&ins[nin], rnd());
		if (memory_safe(&s, &ins[nin]))
			nin++;
		if (!nin || !memory_safe(&s, &ins[0]) || !targets_safe(&s))
			continue;
		for (k = 0; k < s.nr_watch; k++) {
			int b;

			for (b = 0; b < 64; b++)
				s.watch_init[k][b] = rnd();
		}
		k_windows++;
		for (off = 0; off < s.len; off += insn.length) {
			const ZydisDecodedOperand *m;

			decode(s.code + off, s.len - off, &insn, ops);
			if ((m = rip_mem(&insn, ops))) {
				k_riprel++;
				if (insn.raw.imm[0].size)
					k_riprel_imm++;
			}
			if (rel_imm(&insn, ops))
				k_branches++;
			if (insn.mnemonic == ZYDIS_MNEMONIC_CALL)
				k_calls++;
		}
		run_seq(&s, ins, nin);
	}
	free(starts);
	printf("# kernel %s: .text %#" PRIx64 "+%#" PRIx64 ", %zu instructions swept, "
	       "%lu windows run (%lu RIP-relative operands, %lu with an immediate after disp32, "
	       "%lu direct branches, %lu calls), %lu refused as expected\n", kimage_note,
	       ktext_addr, ktext_size, nstarts, k_windows, k_riprel, k_riprel_imm, k_branches,
	       k_calls, k_refused);
	CHECK(k_windows > 1000, "only %lu kernel windows were usable", k_windows);
}

/* ---- API tests (no execution) ------------------------------------------------------------- */

static int reloc(struct kinstr_reloc *r, const char *code, size_t len, uint64_t old,
		 uint8_t *out, uint64_t newa)
{
	return kinstr_reloc__run(r, code, len, old, out, KINSTR_RELOC_MAX_OUT, newa);
}

static void t_reach_limits(void)
{
	uint8_t out[KINSTR_RELOC_MAX_OUT];
	struct kinstr_reloc r;
	const uint64_t old = 0xffffffff81000000ULL;
	uint64_t t, newa;
	int32_t rel;
	int err;

	/* jmp rel8 +0x10 (target old+0x12) widened to 5 bytes at newa: end newa+5 */
	t = old + 0x12;
	newa = t - 5 - INT32_MAX;		/* target - end == INT32_MAX: fits */
	err = reloc(&r, "\xeb\x10", 2, old, out, newa);
	CHECK(err == 0, "%d %s", err, r.why);
	memcpy(&rel, out + 1, 4);
	CHECK(out[0] == 0xe9 && rel == INT32_MAX && r.out_len == 5, "%02x %d", out[0], rel);
	err = reloc(&r, "\xeb\x10", 2, old, out, newa - 1);
	CHECK(err == -ERANGE && r.reason == KINSTR_RELOC_OUT_OF_RANGE && r.bad_target == t,
	      "%d", err);
	newa = t - 5 + 0x80000000ULL;		/* target - end == INT32_MIN: fits */
	err = reloc(&r, "\xeb\x10", 2, old, out, newa);
	CHECK(err == 0, "%d %s", err, r.why);
	err = reloc(&r, "\xeb\x10", 2, old, out, newa + 1);
	CHECK(err == -ERANGE && strstr(r.why, "2 GiB"), "%d %s", err, r.why);

	/* cmpl $0x11223344, 0x100(%rip): 10 bytes, the immediate follows the disp32 */
	t = old + 10 + 0x100;
	newa = t - 10 - INT32_MAX;
	err = reloc(&r, "\x81\x3d\x00\x01\x00\x00\x44\x33\x22\x11", 10, old, out, newa);
	memcpy(&rel, out + 2, 4);
	CHECK(err == 0 && rel == INT32_MAX && !memcmp(out + 6, "\x44\x33\x22\x11", 4),
	      "%d rel %d %s", err, rel, r.why);
	err = reloc(&r, "\x81\x3d\x00\x01\x00\x00\x44\x33\x22\x11", 10, old, out, newa - 1);
	CHECK(err == -ERANGE, "%d", err);
	/* movb $1, 0x100(%rip): 7 bytes; a length computed without the imm8 is off by one */
	newa = old + 0x40000000;
	err = reloc(&r, "\xc6\x05\x00\x01\x00\x00\x01", 7, old, out, newa);
	memcpy(&rel, out + 2, 4);
	CHECK(err == 0 && (uint64_t)(newa + 7 + rel) == old + 7 + 0x100, "rel %d", rel);
}

static void t_exact_bytes(void)
{
	uint8_t out[KINSTR_RELOC_MAX_OUT];
	struct kinstr_reloc r;
	const uint64_t old = 0x100000, newa = 0x200000;
	int32_t rel;
	int err;

	/* jz +0x20 -> 0f 84 rel32 */
	err = reloc(&r, "\x74\x20", 2, old, out, newa);
	memcpy(&rel, out + 2, 4);
	CHECK(!err && r.out_len == 6 && out[0] == 0x0f && out[1] == 0x84 &&
	      newa + 6 + rel == old + 0x22, "%d", err);
	/* loop -> e2 02 eb 05 e9 rel32 */
	err = reloc(&r, "\xe2\xf0", 2, old, out, newa);
	memcpy(&rel, out + 5, 4);
	CHECK(!err && r.out_len == 9 && !memcmp(out, "\xe2\x02\xeb\x05\xe9", 5) &&
	      newa + 9 + rel == old + 2 - 0x10, "%d", err);
	CHECK(r.insns[0].kind == KINSTR_RELOC_INSN_LOOP, "kind %s",
	      kinstr_reloc__kind_name(r.insns[0].kind));
	/* jecxz keeps its 67h */
	err = reloc(&r, "\x67\xe3\x10", 3, old, out, newa);
	memcpy(&rel, out + 6, 4);
	CHECK(!err && r.out_len == 10 && !memcmp(out, "\x67\xe3\x02\xeb\x05\xe9", 6) &&
	      newa + 10 + rel == old + 0x13, "%d", err);
	/* xbegin rel32: the abort path is a branch target too */
	err = reloc(&r, "\xc7\xf8\x10\x00\x00\x00", 6, old, out, newa);
	memcpy(&rel, out + 2, 4);
	CHECK(!err && r.out_len == 6 && out[0] == 0xc7 && out[1] == 0xf8 &&
	      newa + 6 + rel == old + 0x16 && r.insns[0].kind == KINSTR_RELOC_INSN_XBEGIN,
	      "%d %s", err, r.why);
	/* call rel32 */
	err = reloc(&r, "\xe8\x00\x00\x00\x00", 5, old, out, newa);
	memcpy(&rel, out + 1, 4);
	CHECK(!err && out[0] == 0xe8 && newa + 5 + rel == old + 5, "%d", err);
	/* a plain instruction is copied; nothing else written */
	memset(out, 0xaa, 16);
	err = reloc(&r, "\x48\x89\xe5", 3, old, out, newa);
	CHECK(!err && r.out_len == 3 && !memcmp(out, "\x48\x89\xe5\xaa", 4), "%d", err);
	CHECK(!strcmp(kinstr_reloc__why(&r), ""), "why after success: %s", r.why);
}

static void t_refusals(void)
{
	uint8_t out[KINSTR_RELOC_MAX_OUT], nops[40];
	struct kinstr_reloc r;
	const uint64_t old = 0x100000, newa = 0x200000;
	int err;

	err = reloc(&r, "\x48\x89", 2, old, out, newa);
	CHECK(err == -EBADMSG && r.reason == KINSTR_RELOC_TRUNCATED, "%d", err);
	err = reloc(&r, "\x90\x06", 2, old, out, newa);		/* push %es: not in 64-bit */
	CHECK(err == -EILSEQ && r.bad_insn == 1 && r.bad_addr == old + 1, "%d", err);
	err = reloc(&r, "\x90\xcc", 2, old, out, newa);
	CHECK(err == -EOPNOTSUPP && strstr(r.why, "int3"), "%d %s", err, r.why);
	err = reloc(&r, "\x0f\x0b", 2, old, out, newa);
	CHECK(err == -EOPNOTSUPP && strstr(r.why, "ud2"), "%d %s", err, r.why);
	err = reloc(&r, "\x66\xe9\x10\x00", 4, old, out, newa);	/* jmp rel16 */
	CHECK(err == -EOPNOTSUPP || err == -EBADMSG, "%d %s", err, r.why);
	err = reloc(&r, "\x66\x74\x10", 3, old, out, newa);	/* o16 jz */
	CHECK(err == -EOPNOTSUPP, "%d %s", err, r.why);
	/* jmp into the middle of the mov that follows it */
	err = reloc(&r, "\xeb\x01\x48\x89\xe5", 5, old, out, newa);
	CHECK(err == -EXDEV && r.reason == KINSTR_RELOC_INTO_INSN && r.bad_target == old + 3,
	      "%d %s", err, r.why);
	/* reads its own displaced bytes */
	err = reloc(&r, "\x8b\x05\xfa\xff\xff\xff\x90", 7, old, out, newa);
	CHECK(err == -EOPNOTSUPP && strstr(r.why, "displaced"), "%d %s", err, r.why);
	/* call 1f; 1: pop %rax */
	err = reloc(&r, "\xe8\x00\x00\x00\x00\x58", 6, old, out, newa);
	CHECK(err == -EOPNOTSUPP && r.bad_target == old + 5, "%d %s", err, r.why);
	/* ... but taking the address of its own instruction is fine */
	err = reloc(&r, "\x48\x8d\x05\xf9\xff\xff\xff", 7, old, out, newa);
	CHECK(err == 0, "%d %s", err, r.why);
	memset(nops, 0x90, sizeof(nops));
	err = reloc(&r, (char *)nops, 33, old, out, newa);
	CHECK(err == -E2BIG && r.reason == KINSTR_RELOC_TOO_MANY, "%d", err);
	err = kinstr_reloc__run(&r, "\x74\x20\x90", 3, old, out, 6, newa);
	CHECK(err == -ENOSPC && r.out_len == 7, "%d needs %u", err, r.out_len);
	err = kinstr_reloc__run(&r, "\x74\x20\x90", 3, old, out, 7, newa);
	CHECK(err == 0, "%d", err);
	err = kinstr_reloc__run(&r, "\x90", 0, old, out, 7, newa);
	CHECK(err == -EINVAL && r.why[0], "%d", err);
	err = kinstr_reloc__run(&r, (char *)nops, KINSTR_RELOC_MAX_IN + 1, old, out, 7, newa);
	CHECK(err == -EINVAL, "%d", err);
	CHECK(kinstr_reloc__run(NULL, nops, 1, old, out, 7, newa) == -EINVAL, "NULL r");
}

static void t_map(void)
{
	uint8_t out[KINSTR_RELOC_MAX_OUT];
	struct kinstr_reloc r;
	const uint64_t old = 0x100000, newa = 0x200000;
	uint64_t v = 0;
	int err;

	/* nop; jz +0x10; mov %rsp,%rbp -> 1 + 6 + 3 */
	err = reloc(&r, "\x90\x74\x10\x48\x89\xe5", 6, old, out, newa);
	CHECK(!err, "%d", err);
	CHECK(!kinstr_reloc__map(&r, old, &v) && v == newa, "%#" PRIx64, v);
	CHECK(!kinstr_reloc__map(&r, old + 1, &v) && v == newa + 1, "%#" PRIx64, v);
	CHECK(!kinstr_reloc__map(&r, old + 3, &v) && v == newa + 7, "%#" PRIx64, v);
	CHECK(!kinstr_reloc__map(&r, old + 6, &v) && v == newa + 10, "end %#" PRIx64, v);
	CHECK(kinstr_reloc__map(&r, old + 2, &v) == -EXDEV, "mid-instruction");
	CHECK(kinstr_reloc__map(&r, old + 7, &v) == -ERANGE, "past the end");
	CHECK(kinstr_reloc__map(&r, old - 1, &v) == -ERANGE, "before");
	CHECK(!kinstr_reloc__unmap(&r, newa + 7, &v) && v == old + 3, "%#" PRIx64, v);
	CHECK(!kinstr_reloc__unmap(&r, newa + 10, &v) && v == old + 6, "%#" PRIx64, v);
	CHECK(kinstr_reloc__unmap(&r, newa + 2, &v) == -EXDEV, "inside the jcc");
	/* after a failure there is nothing to map */
	reloc(&r, "\xcc", 1, old, out, newa);
	CHECK(kinstr_reloc__map(&r, old, &v) == -EINVAL, "mapped a failed relocation");
}

/* ---- main --------------------------------------------------------------------------------- */

static void t_arena(void)
{
	if (arena_setup())
		SKIP("cannot map the test arena at fixed addresses");
}

#define RUN_EXEC(fn)								\
	do {									\
		if (arena_ready)						\
			RUN(fn);						\
		else								\
			printf("SKIP %s: no arena\n", #fn);			\
	} while (0)

int main(void)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ZydisDecoderInit(&zdec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);

	RUN(t_exact_bytes);
	RUN(t_reach_limits);
	RUN(t_refusals);
	RUN(t_map);
	RUN(t_arena);
	RUN_EXEC(t_jcc);
	RUN_EXEC(t_jmp_call);
	RUN_EXEC(t_riprel);
	RUN_EXEC(t_loop);
	RUN_EXEC(t_branch_to_start);
	RUN_EXEC(t_position_independent);
	RUN_EXEC(t_kernel_sequences);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# %lu sequences, %lu executions (%lu faulted, identically), %lu relocations "
	       "run and re-decoded (%lu instructions), %lu far relocations refused, %.2f s\n",
	       nr_seqs, nr_runs, nr_faults, nr_relocs, nr_redecoded, nr_refused_far,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return check_done();
}
