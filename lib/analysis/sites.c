// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Classify every instruction of a function as a jump site, a trap site, or refused. The layers:
 * address policy (what the kernel reserves), then function-level proof that the instruction
 * boundaries are right, then per-instruction checks, then whether a 5-byte jmp fits.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>
#include <kinstr/reloc.h>
#include <kinstr/sites.h>
#include "lib/zalloc.h"

#define JMP_LEN 5

struct kinstr_fn {
	struct kinstr_cfg *cfg;
	size_t alloc_size;	/* for kinstr__zfree() */
	size_t nsites;
	uint32_t *res;		/* per instruction: kinstr_kernel__reserved() of its bytes */
	struct kinstr_site sites[];
};

/*
 * Where another function's direct branches land in this one past its start, sorted: a .cold
 * part's jumps back into its function, the function's into its .cold part. GCC splits them
 * into symbols of their own, so neither one's CFG holds the other's branches, yet a jump site
 * whose displaced bytes hold such a target would be entered in its middle.
 */
struct foreign {
	uint64_t *t;
	size_t n, cap;
};

/* Where patch space will be: the module area, within +-2 GiB of all kernel text. */
static uint64_t patch_space_for(uint64_t start)
{
	return (start & ~((1ULL << 30) - 1)) + (1ULL << 30) + (16ULL << 20);
}

/* ---- per-instruction predicates ---------------------------------------------------------- */

/*
 * Never run out of line: the module's rule (rules/out_of_line.h, through kinstr_x86__out_of_line),
 * and an indirect call, which out of line would return into the slot (a direct one is emulated).
 */
static bool unsafe_out_of_line(const struct kinstr_x86_insn *x)
{
	return kinstr_x86__out_of_line(x) || x->flow == KINSTR_X86_FLOW_CALL_IND;
}

/* Does the instruction carry an address-size prefix (67h, which turns rip into eip)? */
static bool has_addr32_prefix(const struct kinstr_x86_insn *x)
{
	unsigned int i;

	for (i = 0; i < x->len; i++) {
		switch (x->bytes[i]) {
		case 0x67:
			return true;
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
		case 0x66: case 0xf0: case 0xf2: case 0xf3:
			break;
		default:
			if ((x->bytes[i] & 0xf0) != 0x40)	/* past the prefixes and REX */
				return false;
		}
	}
	return false;
}

/*
 * An instruction the relocator copies byte for byte and accepts wherever it runs: decoded, no
 * relative branch operand (direct jmp/jcc/call, and xbegin, whose flow the decoder leaves as
 * NEXT), no RIP- or EIP-relative operand, not one of the int/ud family it refuses by mnemonic.
 * A run of these always relocates, so the relocator need not decode it again. This mirrors
 * the relocator's rules (lib/isa/reloc.c, classify()): a new refusal there must be added here.
 */
static bool plain_copy(const struct kinstr_cfg_insn *in)
{
	const struct kinstr_x86_insn *x = &in->x;

	if ((in->flags & KINSTR_CFG_I_INVALID) || (x->attr & KINSTR_X86_A_RIP_REL) ||
	    has_addr32_prefix(x))
		return false;
	switch (x->flow) {
	case KINSTR_X86_FLOW_JMP:
	case KINSTR_X86_FLOW_JCC:
	case KINSTR_X86_FLOW_CALL:
	case KINSTR_X86_FLOW_EXIT:	/* includes jkzd/jknzd, whose relative operand is not op0 */
		return false;
	default:
		break;
	}
	return x->mnemonic != ZYDIS_MNEMONIC_XBEGIN && !kinstr_reloc__found_by_address(x->mnemonic);
}

/*
 * Does the relocator accept instructions [first, last] of this function at patch space? The
 * range is at most KINSTR_RELOC_MAX_IN bytes.
 */
static bool relocatable(const struct kinstr_cfg *cfg, const uint8_t *code, size_t first,
			size_t last, const char **why)
{
	const struct kinstr_cfg_insn *insns = kinstr_cfg__insn(cfg, 0);
	uint64_t start = kinstr_cfg__start(cfg), addr = insns[first].x.addr;
	size_t len = insns[last].x.addr + insns[last].x.len - addr, j;
	uint8_t out[KINSTR_RELOC_MAX_OUT];
	struct kinstr_reloc r;

	for (j = first; j <= last && plain_copy(&insns[j]); j++)
		;
	if (j > last && last - first < KINSTR_RELOC_MAX_INSNS)
		return true;
	if (kinstr_reloc__run(&r, code + (addr - start), len, addr, out, sizeof(out),
			      patch_space_for(start)) == 0)
		return true;
	/* the relocator's reasons are few and fixed: keep a static string per reason */
	switch (r.reason) {
	case KINSTR_RELOC_OUT_OF_RANGE: *why = "a target is beyond +-2 GiB of patch space"; break;
	case KINSTR_RELOC_INTO_INSN: *why = "a branch lands inside the displaced instructions"; break;
	case KINSTR_RELOC_UNDECODABLE: *why = "undecodable"; break;
	case KINSTR_RELOC_TRUNCATED: *why = "truncated"; break;
	case KINSTR_RELOC_TOO_MANY: *why = "too many instructions"; break;
	default: *why = "position-dependent (int3/ud2/int, 16-bit branch, call into itself, "
			"or a RIP-relative access of its own bytes)"; break;
	}
	return false;
}

/* ---- the layers ------------------------------------------------------------------------------ */

static int function_rule(const struct kinstr_cfg *cfg)
{
	uint32_t f = kinstr_cfg__flags(cfg);
	size_t i;

	if (f & KINSTR_CFG_F_INVALID)
		return KINSTR_RULE_UNDECODABLE;
	if (f & KINSTR_CFG_F_BAD_TARGET)
		return KINSTR_RULE_BAD_TARGET;
	if (f & KINSTR_CFG_F_TRUNCATED)
		return KINSTR_RULE_TRUNCATED;
	/* the kernel's C ABI keeps DF clear, and so does the entry stub: stay out of std..cld */
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++)
		if (kinstr_cfg__insn(cfg, i)->x.mnemonic == ZYDIS_MNEMONIC_STD)
			return KINSTR_RULE_DIRECTION_FLAG;
	return KINSTR_RULE_NONE;
}

/*
 * The reservations of instructions [lo, hi) into res[] (zeroed by the caller): one lookup
 * answers for a whole stretch that holds none, and most of a function does.
 */
static void find_reserved(const struct kinstr_kernel *k, const struct kinstr_cfg_insn *insns,
			  size_t lo, size_t hi, uint32_t *res)
{
	uint64_t from = insns[lo].x.addr, to = insns[hi - 1].x.addr + insns[hi - 1].x.len;
	size_t i;

	/* the sweep's instructions tile [from, to), so none is reserved if the stretch is not */
	if (to - from <= UINT32_MAX && !kinstr_kernel__reserved(k, from, to - from))
		return;
	if (hi - lo <= 8) {
		for (i = lo; i < hi; i++)
			res[i] = kinstr_kernel__reserved(k, insns[i].x.addr, insns[i].x.len);
		return;
	}
	find_reserved(k, insns, lo, lo + (hi - lo) / 2, res);
	find_reserved(k, insns, lo + (hi - lo) / 2, hi, res);
}

/* Is instruction i a place where an int3 may go and the instruction run out of line? */
static void classify_trap(const struct kinstr_cfg *cfg, const uint32_t *reserved,
			  const uint8_t *code, size_t i, struct kinstr_site *s)
{
	const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
	const struct kinstr_x86_insn *x = &in->x;
	uint32_t res = reserved[i];

	s->cls = KINSTR_SITE_REFUSED;
	if (res) {
		s->rule = KINSTR_RULE_RESERVED;
		s->reserved = res;
	} else if (in->flags & KINSTR_CFG_I_PADDING) {
		s->rule = KINSTR_RULE_PADDING;
	} else if (x->flow == KINSTR_X86_FLOW_INT3) {
		s->rule = KINSTR_RULE_INT3;
	} else if (x->flow == KINSTR_X86_FLOW_UD2) {
		s->rule = KINSTR_RULE_UD2;
	} else if (unsafe_out_of_line(x)) {
		s->rule = KINSTR_RULE_UNSAFE_INSN;
	} else if (x->flow != KINSTR_X86_FLOW_CALL &&	/* a call at a trap site is emulated */
		   !relocatable(cfg, code, i, i, &s->detail)) {
		s->rule = KINSTR_RULE_NOT_RELOCATABLE;
	} else {
		s->cls = KINSTR_SITE_TRAP;
	}
}

/*
 * Can the slot emulate this direct call as `push $imm32; jmp target`? The pushed imm32 is
 * sign-extended: the return address must lie in the top 2 GiB, as kernel and module text do.
 */
static bool call_emulable(const struct kinstr_cfg_insn *in)
{
	uint64_t ret = in->x.addr + in->x.len;

	return in->x.flow == KINSTR_X86_FLOW_CALL && ret >= 0xffffffff80000000ULL;
}

/* Does control never fall through this instruction to the bytes after it (ret, jmp)? */
static bool ends_code(const struct kinstr_cfg_insn *in)
{
	return (in->x.flow == KINSTR_X86_FLOW_RET && in->x.len == 1) || in->x.flow == KINSTR_X86_FLOW_JMP;
}

/*
 * An int3 after a ret or jmp that nothing branches to never runs: the filler the kernel leaves
 * where a 5-byte `jmp __x86_return_thunk` became `ret; int3 x4` at boot (a CPU that needs no
 * return thunk: many Intel ones, QEMU's), or an SLS guard. A jmp may cover it.
 */
static bool dead_filler(const struct kinstr_cfg_insn *in)
{
	return in->x.flow == KINSTR_X86_FLOW_INT3 && in->x.len == 1 && in->x.bytes[0] == 0xcc &&
	       !(in->flags & (KINSTR_CFG_I_TARGET | KINSTR_CFG_I_INVALID));
}

/* A trap site becomes a jump site if a 5-byte jmp can displace [addr, end) safely. */
static void try_jump(const struct kinstr_cfg *cfg, const uint32_t *reserved,
		     const uint8_t *code, size_t i, struct kinstr_site *s, const struct foreign *fo)
{
	uint64_t end = s->addr, live_end = 0;
	size_t n = kinstr_cfg__insn_cnt(cfg), j, last = i;
	const char *why = NULL;

	if (kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INDIRECT_JMP) {
		s->rule = KINSTR_RULE_INDIRECT_JMP;
		return;
	}
	for (j = i; end < s->addr + JMP_LEN; j++) {
		const struct kinstr_cfg_insn *in;

		if (j >= n) {
			s->rule = KINSTR_RULE_CROSSES_END;
			return;
		}
		in = kinstr_cfg__insn(cfg, j);
		if (live_end) {
			/* past the exit: only filler, which the jmp's tail may overwrite */
			if (!dead_filler(in) || reserved[j]) {
				s->rule = KINSTR_RULE_DISPLACES_UNRELOCATABLE;
				s->rule_addr = in->x.addr;
				return;
			}
			end = in->x.addr + in->x.len;
			continue;
		}
		if (in->flags & (KINSTR_CFG_I_PADDING | KINSTR_CFG_I_INVALID)) {
			s->rule = KINSTR_RULE_CROSSES_END;
			return;
		}
		/*
		 * A direct call is 5 bytes, so it is always the last instruction displaced: its
		 * return address is the first byte after the jmp, and the slot emulates it as
		 * `push $return; jmp target` (as at a trap site). The callee returns to the
		 * original code, never into the slot. An indirect call cannot be emulated so.
		 */
		if (in->x.flow == KINSTR_X86_FLOW_CALL_IND ||
		    (in->x.flow == KINSTR_X86_FLOW_CALL && !call_emulable(in))) {
			s->rule = KINSTR_RULE_DISPLACES_CALL;
			s->rule_addr = in->x.addr;
			return;
		}
		if (j > i) {
			if (reserved[j]) {
				s->rule = KINSTR_RULE_DISPLACES_RESERVED;
				s->reserved = reserved[j];
				s->rule_addr = in->x.addr;
				return;
			}
			if (in->x.flow == KINSTR_X86_FLOW_INT3 || in->x.flow == KINSTR_X86_FLOW_UD2 ||
			    unsafe_out_of_line(&in->x)) {
				s->rule = KINSTR_RULE_DISPLACES_UNRELOCATABLE;
				s->rule_addr = in->x.addr;
				return;
			}
		}
		end = in->x.addr + in->x.len;
		last = j;
		if (ends_code(in) && end < s->addr + JMP_LEN && j + 1 < n &&
		    dead_filler(kinstr_cfg__insn(cfg, j + 1)))
			live_end = end;
	}
	if (kinstr_cfg__has_target_in(cfg, s->addr, end)) {
		s->rule = KINSTR_RULE_BRANCH_TARGET;
		for (j = i + 1; j < n && kinstr_cfg__insn(cfg, j)->x.addr < end; j++)
			if (kinstr_cfg__insn(cfg, j)->flags & KINSTR_CFG_I_TARGET)
				s->rule_addr = kinstr_cfg__insn(cfg, j)->x.addr;
		return;
	}
	for (j = 0; fo && j < fo->n; j++) {
		if (fo->t[j] > s->addr && fo->t[j] < end) {
			s->rule = KINSTR_RULE_FOREIGN_TARGET;
			s->rule_addr = fo->t[j];
			return;
		}
	}
	/* last is the last displaced instruction that runs */
	if (end - s->addr > KINSTR_RELOC_MAX_IN || !relocatable(cfg, code, i, last, &why)) {
		s->rule = KINSTR_RULE_DISPLACES_UNRELOCATABLE;
		s->detail = why;
		return;
	}
	s->cls = KINSTR_SITE_JUMP;
	s->rule = KINSTR_RULE_NONE;
	s->displaced_len = end - s->addr;
	s->live_len = (live_end ? live_end : end) - s->addr;
}

static struct kinstr_fn *analyze(const struct kinstr_kernel *k, const void *code, size_t size, uint64_t start,
				 const struct foreign *fo)
{
	const struct kinstr_cfg_edge *edges = NULL;
	struct kinstr_cfg_opts opts = { .sz = sizeof(opts) };
	struct kinstr_cfg *cfg;
	struct kinstr_fn *fn;
	size_t n, i, bytes;
	uint32_t held = 0;
	int frule;

	if (!code || !size) {
		errno = EINVAL;
		return NULL;
	}
	if (k) {
		opts.return_thunk = kinstr_kernel__return_thunk(k);
		opts.nr_edges = kinstr_kernel__edges(k, start, start + size, &edges);
		opts.edges = edges;
	}
	cfg = kinstr_cfg__new(code, size, start, &opts);
	if (!cfg)
		return NULL;
	n = kinstr_cfg__insn_cnt(cfg);
	bytes = sizeof(*fn) + n * (sizeof(fn->sites[0]) + sizeof(fn->res[0]));
	fn = kinstr__zalloc(bytes);
	if (!fn) {
		kinstr_cfg__free(cfg);
		errno = ENOMEM;
		return NULL;
	}
	fn->alloc_size = bytes;
	fn->cfg = cfg;
	fn->nsites = n;
	fn->res = (uint32_t *)(fn->sites + n);
	if (k)
		find_reserved(k, kinstr_cfg__insn(cfg, 0), 0, n, fn->res);
	frule = function_rule(cfg);
	/* another session's probe or copy is in it: the live bytes are partly that session's */
	if (k && size <= UINT32_MAX)
		held = kinstr_kernel__reserved(k, start, (unsigned int)size) & (1u << KINSTR_R_HELD);
	if (held)
		frule = KINSTR_RULE_RESERVED;
	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, i)->x;
		struct kinstr_site *s = &fn->sites[i];

		s->addr = x->addr;
		s->insn_len = s->displaced_len = s->live_len = x->len;
		if (frule) {	/* boundaries not proven (or another session's): nothing in the function is safe */
			s->cls = KINSTR_SITE_REFUSED;
			s->rule = fn->res[i] || held ? KINSTR_RULE_RESERVED : frule;
			s->reserved = fn->res[i] | held;
			continue;
		}
		classify_trap(cfg, fn->res, code, i, s);
		if (s->cls == KINSTR_SITE_TRAP)
			try_jump(cfg, fn->res, code, i, s, fo);
	}
	return fn;
}

struct kinstr_fn *kinstr_fn__analyze_bytes(const struct kinstr_kernel *k, const void *code,
					   size_t size, uint64_t start)
{
	return analyze(k, code, size, start, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* g's direct branches that land in f past its start, into fo. */
static int foreign_from(const struct kinstr_kernel *k, const struct kinstr_func *g, const struct kinstr_func *f,
			struct foreign *fo)
{
	const unsigned char *b = kinstr_kernel__text(k, g->addr, g->size);
	uint64_t a = g->addr;

	while (b && a < g->addr + g->size) {
		struct kinstr_x86_insn in;

		if (kinstr_x86__decode(b + (a - g->addr), g->addr + g->size - a, a, &in))
			break;	/* what does not decode branches nowhere we can know: g's own analysis refuses it */
		if ((in.flow == KINSTR_X86_FLOW_JMP || in.flow == KINSTR_X86_FLOW_JCC || in.flow == KINSTR_X86_FLOW_CALL) &&
		    in.target > f->addr && in.target < f->addr + f->size) {
			if (fo->n == fo->cap) {
				size_t cap = fo->cap ? 2 * fo->cap : 16;
				uint64_t *t = realloc(fo->t, cap * sizeof(*t));

				if (!t)
					return -ENOMEM;
				fo->t = t;
				fo->cap = cap;
			}
			fo->t[fo->n++] = in.target;
		}
		a += in.len;
	}
	return 0;
}

/*
 * f's siblings by name: NAME.cold (and NAME.cold.N) of NAME, and NAME of NAME.cold; every
 * function of such a name (several files may define one), since a shared name does not say
 * which is whose.
 */
static int foreign_targets(const struct kinstr_kernel *k, const struct kinstr_func *f, struct foreign *fo)
{
	const struct kinstr_func *g[16];
	const char *c = strstr(f->name, ".cold");
	char name[512];
	size_t n, i, j;
	int err = 0;

	if (c && (c[5] == 0 || c[5] == '.') && (size_t)(c - f->name) < sizeof(name)) {
		memcpy(name, f->name, (size_t)(c - f->name));
		name[c - f->name] = 0;
	} else if (strlen(f->name) + 8 < sizeof(name)) {
		snprintf(name, sizeof(name), "%s.cold", f->name);
	} else {
		return 0;
	}
	n = kinstr_kernel__lookup(k, name, g, sizeof(g) / sizeof(g[0]));
	for (i = 0; i < n && i < sizeof(g) / sizeof(g[0]) && !err; i++)
		err = foreign_from(k, g[i], f, fo);
	for (j = 1; !c && j < 4 && !err; j++) {	/* NAME.cold.1, ... */
		char nn[520];

		snprintf(nn, sizeof(nn), "%s.%zu", name, j);
		n = kinstr_kernel__lookup(k, nn, g, sizeof(g) / sizeof(g[0]));
		for (i = 0; i < n && i < sizeof(g) / sizeof(g[0]) && !err; i++)
			err = foreign_from(k, g[i], f, fo);
	}
	/*
	 * Assembly's local labels that kallsyms keeps (.E_read_words, .E_trailing_bytes after
	 * copy_mc_fragile and copy_user_*: fixup code that jumps back into its function): the run
	 * of dot-named symbols after a function, and, for one of them, its function and the run.
	 */
	{
		const struct kinstr_func *lo = kinstr_kernel__func_at(k, f->addr), *p;
		size_t nf = kinstr_kernel__func_cnt(k), at;

		if (lo) {
			at = (size_t)(lo - kinstr_kernel__func(k, 0));
			while (at && f->name[0] == '.' && kinstr_kernel__func(k, at)->name[0] == '.')
				at--;	/* back to the function whose labels these are */
			for (i = at; i < nf && !err; i++) {
				p = kinstr_kernel__func(k, i);
				if (i > at && p->name[0] != '.')
					break;
				if (p->addr != f->addr)
					err = foreign_from(k, p, f, fo);
			}
		}
	}
	if (fo->n)
		qsort(fo->t, fo->n, sizeof(*fo->t), cmp_u64);
	return err;
}

struct kinstr_fn *kinstr_fn__analyze(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	const unsigned char *code = kinstr_kernel__text(k, f->addr, f->size);
	struct foreign fo = { 0 };
	struct kinstr_fn *fn;

	if (!code)
		return NULL;
	if (foreign_targets(k, f, &fo)) {
		free(fo.t);
		errno = ENOMEM;
		return NULL;
	}
	fn = analyze(k, code, f->size, f->addr, &fo);
	free(fo.t);
	return fn;
}

void kinstr_fn__free(struct kinstr_fn *fn)
{
	if (!fn)
		return;
	kinstr_cfg__free(fn->cfg);
	kinstr__zfree(fn, fn->alloc_size);
}

const struct kinstr_cfg *kinstr_fn__cfg(const struct kinstr_fn *fn)
{
	return fn->cfg;
}

size_t kinstr_fn__site_cnt(const struct kinstr_fn *fn)
{
	return fn->nsites;
}

const struct kinstr_site *kinstr_fn__site(const struct kinstr_fn *fn, size_t i)
{
	return i < fn->nsites ? &fn->sites[i] : NULL;
}

const struct kinstr_site *kinstr_fn__site_at(const struct kinstr_fn *fn, uint64_t addr)
{
	int i = kinstr_cfg__find_insn(fn->cfg, addr);
	uint64_t start = kinstr_cfg__start(fn->cfg);

	if (i >= 0)
		return &fn->sites[i];
	errno = addr >= start && addr - start < kinstr_cfg__size(fn->cfg) ? EILSEQ : ERANGE;
	return NULL;
}

/* ---- names ------------------------------------------------------------------------------------ */

const char *kinstr_site_class__str(unsigned int cls)
{
	static const char *const names[] = { "jump", "trap", "refused" };

	return cls < KINSTR_SITE_NR_CLASSES ? names[cls] : "unknown";
}

static const struct {
	const char *id, *text;
} rules[KINSTR_RULE_NR] = {
	[KINSTR_RULE_NONE] = { "none", "a 5-byte jump fits" },
	[KINSTR_RULE_RESERVED] = { "reserved", "reserved by the kernel" },
	[KINSTR_RULE_UNDECODABLE] = { "undecodable", "the function holds bytes that do not decode" },
	[KINSTR_RULE_BAD_TARGET] = { "bad-target", "a branch of the function lands inside an instruction" },
	[KINSTR_RULE_TRUNCATED] = { "truncated", "the function's last instruction runs past its end" },
	[KINSTR_RULE_PADDING] = { "padding", "padding after the function's code" },
	[KINSTR_RULE_INT3] = { "int3", "int3 (padding, SLS guard or another breakpoint)" },
	[KINSTR_RULE_UD2] = { "ud2", "ud2 of BUG()/WARN() is found by its address" },
	[KINSTR_RULE_UNSAFE_INSN] = { "unsafe-insn", "changes IF or privilege, is an indirect call, or leaves by iret/sysret/far transfer" },
	[KINSTR_RULE_NOT_RELOCATABLE] = { "not-relocatable", "cannot be relocated" },
	[KINSTR_RULE_INDIRECT_JMP] = { "indirect-jmp", "the function has an indirect jmp, so a jump could displace a target" },
	[KINSTR_RULE_BRANCH_TARGET] = { "branch-target", "a branch target lies inside the 5 displaced bytes" },
	[KINSTR_RULE_FOREIGN_TARGET] = { "foreign-target", "another function's branch (its .cold part's or its function's, an asm label's) lands inside the 5 displaced bytes" },
	[KINSTR_RULE_CROSSES_END] = { "crosses-end", "5 bytes would run past the function's code" },
	[KINSTR_RULE_DISPLACES_CALL] = { "displaces-call", "a jump would move an indirect call into the trampoline" },
	[KINSTR_RULE_DISPLACES_RESERVED] = { "displaces-reserved", "a jump would displace a reserved instruction" },
	[KINSTR_RULE_DISPLACES_UNRELOCATABLE] = { "displaces-unrelocatable", "a jump would displace an instruction that cannot be relocated" },
	[KINSTR_RULE_DIRECTION_FLAG] = { "direction-flag", "the function sets the direction flag (std), which probe code assumes clear" },
};

const char *kinstr_site_rule__id(unsigned int rule)
{
	return rule < KINSTR_RULE_NR ? rules[rule].id : "unknown";
}

static void append_reasons(char *buf, size_t size, uint32_t res)
{
	unsigned int b;
	size_t len = strlen(buf);

	for (b = 0; b < KINSTR_R_NR && len < size; b++) {
		if (!(res & (1u << b)))
			continue;
		snprintf(buf + len, size - len, "%s%s", len && buf[len - 1] != ' ' ? ", " : "",
			 kinstr_site_reason__str(b));
		len = strlen(buf);
	}
}

bool kinstr_site__ftrace_own(const struct kinstr_site *s, const struct kinstr_func *f)
{
	return s && s->addr == f->addr + f->endbr && s->insn_len == 5 && s->rule == KINSTR_RULE_RESERVED &&
	       s->reserved == 1u << KINSTR_R_FTRACE;
}

const char *kinstr_site__why(const struct kinstr_site *s, char *buf, size_t size)
{
	const char *text = s->rule < KINSTR_RULE_NR ? rules[s->rule].text : "unknown rule";

	if (!size)
		return buf;
	buf[0] = 0;
	switch (s->rule) {
	case KINSTR_RULE_RESERVED:
		append_reasons(buf, size, s->reserved);
		break;
	case KINSTR_RULE_DISPLACES_RESERVED:
		snprintf(buf, size, "a jump would displace the instruction at 0x%llx, which is ",
			 (unsigned long long)s->rule_addr);
		append_reasons(buf, size, s->reserved);
		break;
	case KINSTR_RULE_BRANCH_TARGET:
	case KINSTR_RULE_FOREIGN_TARGET:
		snprintf(buf, size, "%s (target 0x%llx)", text, (unsigned long long)s->rule_addr);
		break;
	case KINSTR_RULE_DISPLACES_CALL:
		snprintf(buf, size, "%s (call at 0x%llx)", text, (unsigned long long)s->rule_addr);
		break;
	case KINSTR_RULE_NOT_RELOCATABLE:
	case KINSTR_RULE_DISPLACES_UNRELOCATABLE:
		snprintf(buf, size, "%s%s%s", text, s->detail ? ": " : "", s->detail ? s->detail : "");
		break;
	default:
		snprintf(buf, size, "%s", text);
	}
	return buf;
}
