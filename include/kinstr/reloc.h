/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Relocation of displaced instructions: re-encode a run of x86-64 instructions that ran at
 * old_addr so that it does the same thing at new_addr (a trampoline). Nothing is allocated:
 * the caller owns struct kinstr_reloc and the output buffer, so the same code can serve a
 * daemon and, one day, a verifier with no heap.
 *
 * What the output is: the relocated instructions, back to back, ending where the run's last
 * instruction would fall through. The caller appends the `jmp old_addr + in_len` (or whatever
 * follows); kinstr_reloc__map(r, old_addr + in_len) gives the address where that goes.
 *
 * Rewrites:
 *   jmp rel8 -> jmp rel32 (5 bytes); jcc rel8 -> jcc rel32 (6 bytes);
 *   jmp/jcc/call/xbegin rel32 -> same instruction, rel32 recomputed;
 *   RIP-relative memory operand -> same bytes, disp32 recomputed from the end of the
 *     instruction (so an immediate after the displacement is accounted for);
 *   loop/loope/loopne/jrcxz/jecxz -> `<op> +2; jmp +5; jmp rel32 target` (the original
 *     opcode and its address-size prefix are kept, so rcx/ecx and ZF behave exactly as
 *     before, including loop's decrement);
 *   anything else is copied byte for byte.
 * Branches inside the run:
 *   a target at the start of an instruction other than the first goes to that instruction's
 *   copy; a target equal to old_addr keeps the original address (it re-enters the site, so a
 *   probe there fires again, as for any other branch to the site); a target inside an
 *   instruction is refused.
 * Refused (r->reason says which, kinstr_reloc__why() says it in words):
 *   -EINVAL       bad arguments, or run longer than KINSTR_RELOC_MAX_IN
 *   -EILSEQ       bytes that do not decode as a 64-bit instruction
 *   -EBADMSG      the run ends inside an instruction
 *   -E2BIG        more than KINSTR_RELOC_MAX_INSNS instructions
 *   -ENOSPC       output buffer too small (r->out_len says how much is needed)
 *   -ERANGE       a branch or RIP-relative target beyond +-2 GiB of its new location
 *   -EXDEV        a branch from the run into the middle of one of the run's instructions
 *   -EOPNOTSUPP   an instruction that cannot be moved: int3/int1/int n/ud0/ud1/ud2 (the
 *                 kernel finds their handlers, kprobe or BUG table entries, by address),
 *                 branches with a 16-bit operand size (rel16; Intel and AMD disagree on
 *                 them), a call to an address inside the run (`call 1f; 1: pop %rax` would
 *                 see the copy's address), a RIP-relative read or write of the run's own
 *                 bytes (they will hold the patch), an EIP-relative operand (67h prefix:
 *                 a 32-bit address). A RIP-relative `lea` of an address in
 *                 the run is fine: it keeps yielding the original address.
 *
 * Not the relocator's business (the site checker's): exception-table entries, branches from
 * outside the run into its interior, alternatives/static calls. Noted here because they make
 * a relocation unsafe even when this API succeeds. A relocated `call` pushes the *copy's*
 * return address (see KINSTR_RELOC_INSN_CALL): the trampoline must stay alive while a task
 * may still return into it.
 */
#ifndef KINSTR_RELOC_H
#define KINSTR_RELOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a 5-byte jump displaces at most 4 + 15 bytes; leave room for trap sites and tests */
#define KINSTR_RELOC_MAX_IN	64
#define KINSTR_RELOC_MAX_INSNS	32
/* worst case growth: loop family, 2 (or 3) bytes -> 9 (or 10) */
#define KINSTR_RELOC_MAX_OUT	(KINSTR_RELOC_MAX_IN * 5)

enum kinstr_reloc_kind {
	KINSTR_RELOC_INSN_COPY,		/* position independent, copied */
	KINSTR_RELOC_INSN_RIPREL,	/* RIP-relative memory operand, disp32 rewritten */
	KINSTR_RELOC_INSN_JMP,		/* jmp rel8/rel32 -> jmp rel32 */
	KINSTR_RELOC_INSN_JCC,		/* jcc rel8/rel32 -> jcc rel32 */
	KINSTR_RELOC_INSN_CALL,		/* call rel32: pushes the copy's return address */
	KINSTR_RELOC_INSN_XBEGIN,	/* xbegin rel32: abort path retargeted */
	KINSTR_RELOC_INSN_LOOP,		/* loop, loope, loopne, jrcxz, jecxz: expanded */
};

enum kinstr_reloc_reason {
	KINSTR_RELOC_OK,
	KINSTR_RELOC_BAD_ARGS,
	KINSTR_RELOC_UNDECODABLE,
	KINSTR_RELOC_TRUNCATED,
	KINSTR_RELOC_TOO_MANY,
	KINSTR_RELOC_NO_SPACE,
	KINSTR_RELOC_OUT_OF_RANGE,
	KINSTR_RELOC_INTO_INSN,
	KINSTR_RELOC_UNMOVABLE,
};

struct kinstr_reloc_insn {
	uint32_t old_off;	/* from old_addr */
	uint32_t new_off;	/* from new_addr */
	uint8_t old_len;
	uint8_t new_len;
	uint8_t kind;		/* enum kinstr_reloc_kind */
	uint8_t has_target;
	uint64_t target;	/* absolute branch or RIP-relative target, as in the original */
	uint64_t new_target;	/* what the copy uses (differs only for branches inside the run) */
};

struct kinstr_reloc {
	uint64_t old_addr;
	uint64_t new_addr;
	uint32_t in_len;
	uint32_t out_len;	/* bytes written; on -ENOSPC, bytes needed */
	uint32_t nr_insns;
	struct kinstr_reloc_insn insns[KINSTR_RELOC_MAX_INSNS];
	/* on failure: why, and which instruction */
	int reason;		/* enum kinstr_reloc_reason */
	int bad_insn;		/* index into insns[], -1 when not about one instruction */
	uint64_t bad_addr;	/* original address of that instruction */
	uint64_t bad_target;	/* the offending target, if any */
	char why[160];
};

/*
 * Relocate in[0..in_len) (which ran at old_addr) to run at new_addr, writing at most out_cap
 * bytes to out. Returns 0 or a negative errno (see above); r is filled either way.
 */
int kinstr_reloc__run(struct kinstr_reloc *r, const void *in, size_t in_len, uint64_t old_addr,
		      void *out, size_t out_cap, uint64_t new_addr);

/*
 * Map an original address to its place in the copy: the start of an instruction of the run,
 * or old_addr + in_len (the end). Returns 0, or -EXDEV for an address inside an
 * instruction, -ERANGE outside the run. Used to move a CPU stopped at an int3 site.
 */
int kinstr_reloc__map(const struct kinstr_reloc *r, uint64_t old, uint64_t *new_out);

/* The reverse, for the start of a relocated instruction (e.g. a fault inside the copy). */
int kinstr_reloc__unmap(const struct kinstr_reloc *r, uint64_t new_addr, uint64_t *old_out);

/* One line saying why the last kinstr_reloc__run() failed ("" after success). */
const char *kinstr_reloc__why(const struct kinstr_reloc *r);

/*
 * Is this (Zydis) mnemonic one the relocator always refuses because its handler finds it by
 * address (int3, int1, int n, ud0/1/2)? Shared with the classifier's no-relocation fast path.
 */
int kinstr_reloc__found_by_address(unsigned int mnemonic);

/* Name of an enum kinstr_reloc_kind, for logs. */
const char *kinstr_reloc__kind_name(int kind);

#ifdef __cplusplus
}
#endif
#endif
