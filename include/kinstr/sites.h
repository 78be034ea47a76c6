/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Site classification: for every instruction of a function, can a probe go there, and how?
 *   jump     a 5-byte jmp can replace the instructions in [addr, addr + displaced_len)
 *   trap     only an int3 fits; the one instruction at addr runs out of line (or is emulated)
 *   refused  neither is safe; rule (and reserved, rule_addr) say why
 * A trap site also carries the rule that kept it from being a jump site.
 *
 * The checks come in layers, each failure with its own rule: address policy (entry/noinstr
 * text, blacklist, reservations), function-level proof of instruction boundaries (decoded from
 * the symbol's start), then per-instruction checks (relocatable, not int3/ud2, no branch target
 * inside the displaced bytes, ...).
 */
#ifndef KINSTR_SITES_H
#define KINSTR_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/cfg.h>
#include <kinstr/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kinstr_site_class {
	KINSTR_SITE_JUMP,
	KINSTR_SITE_TRAP,
	KINSTR_SITE_REFUSED,
	KINSTR_SITE_NR_CLASSES
};

/* Why a site is refused, or why it is a trap site and not a jump site. Ids are stable. */
enum kinstr_site_rule {
	KINSTR_RULE_NONE,		/* a jump site: nothing to say */
	KINSTR_RULE_RESERVED,		/* reserved by the kernel: see .reserved (enum kinstr_site_reason bits) */
	KINSTR_RULE_UNDECODABLE,	/* the function holds bytes that do not decode */
	KINSTR_RULE_BAD_TARGET,		/* a branch of the function lands inside an instruction */
	KINSTR_RULE_TRUNCATED,		/* the function's last instruction runs past its end */
	KINSTR_RULE_PADDING,		/* int3/nop padding after the function's code */
	KINSTR_RULE_INT3,		/* int3: padding, SLS guard, or someone else's breakpoint */
	KINSTR_RULE_UD2,		/* ud2 of BUG()/WARN(): found by address */
	KINSTR_RULE_UNSAFE_INSN,	/* changes IF/privilege, an indirect call, or leaves by iret/sysret/far:
					 * never out of line */
	KINSTR_RULE_NOT_RELOCATABLE,	/* the relocator refuses it (see .detail) */
	/* trap-only reasons: the jump does not fit */
	KINSTR_RULE_INDIRECT_JMP,	/* function has an indirect jmp: a target may be anywhere */
	KINSTR_RULE_BRANCH_TARGET,	/* a branch target lies inside the displaced bytes (.rule_addr) */
	KINSTR_RULE_CROSSES_END,	/* the 5 bytes would run past the function's code */
	KINSTR_RULE_DISPLACES_CALL,	/* an indirect call would run from the trampoline and return into it */
	KINSTR_RULE_DISPLACES_RESERVED,	/* a displaced instruction is reserved (.reserved) */
	KINSTR_RULE_DISPLACES_UNRELOCATABLE, /* a displaced instruction cannot be relocated */
	KINSTR_RULE_DIRECTION_FLAG,	/* the function sets DF (std): probe code assumes it clear */
	KINSTR_RULE_FOREIGN_TARGET,	/* another function (a .cold part, its function, an asm label) branches
					 * inside the displaced bytes (.rule_addr) */
	KINSTR_RULE_NR
};

struct kinstr_site {
	uint64_t addr;
	uint8_t insn_len;
	uint8_t displaced_len;	/* jump: bytes the jmp displaces (>= 5); trap: insn_len */
	uint8_t live_len;	/* of those, the bytes that run: up to a ret/jmp followed by int3 filler */
	uint8_t cls;		/* enum kinstr_site_class */
	uint8_t rule;		/* enum kinstr_site_rule */
	uint32_t reserved;	/* RESERVED / DISPLACES_RESERVED: 1 << enum kinstr_site_reason */
	uint64_t rule_addr;	/* BRANCH_TARGET: the target; DISPLACES_*: the instruction */
	const char *detail;	/* NOT_RELOCATABLE: the relocator's reason (static string) */
};

/* One function's analysis: its CFG and a site per instruction. */
struct kinstr_fn;

/*
 * Analyse function f of kernel k (its live bytes, reservations and hidden edges come from k).
 * NULL with errno set: ERANGE when k does not hold f's text, ENOMEM, EINVAL.
 */
struct kinstr_fn *kinstr_fn__analyze(const struct kinstr_kernel *k, const struct kinstr_func *f);
/*
 * The same for size bytes of code at runtime address start; k may be NULL (no reservations, no
 * hidden edges, no return thunk) — for tests and fuzzing.
 */
struct kinstr_fn *kinstr_fn__analyze_bytes(const struct kinstr_kernel *k, const void *code,
					   size_t size, uint64_t start);
void kinstr_fn__free(struct kinstr_fn *fn);

const struct kinstr_cfg *kinstr_fn__cfg(const struct kinstr_fn *fn);
size_t kinstr_fn__site_cnt(const struct kinstr_fn *fn);
/* Site i describes instruction i of the CFG. */
const struct kinstr_site *kinstr_fn__site(const struct kinstr_fn *fn, size_t i);
/* The site at addr, or NULL with errno EILSEQ (not an instruction boundary) or ERANGE. */
const struct kinstr_site *kinstr_fn__site_at(const struct kinstr_fn *fn, uint64_t addr);

/*
 * Is s f's ftrace NOP (its first 5 bytes after its ENDBR, if any) and reserved by ftrace alone? Then an ftrace direct
 * call may take f's entry from it. NULL s: no.
 */
bool kinstr_site__ftrace_own(const struct kinstr_site *s, const struct kinstr_func *f);

const char *kinstr_site_class__str(unsigned int cls);	/* "jump", "trap", "refused" */
const char *kinstr_site_rule__id(unsigned int rule);	/* e.g. "branch-target" */
/* A sentence naming the rule (and address/reason) for site s; written into buf. */
const char *kinstr_site__why(const struct kinstr_site *s, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
