/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The code cache's builder: an instrumented copy of one kernel function, for exactly the address
 * the module gave its area, with a per-CPU counter at the start of every basic block
 * (docs/design.md, "The code cache"). Pure computation: from the function's live text, its CFG
 * and the kernel's reservations (a live view or a snapshot), and the answers the bytes do not
 * hold (a jump label's key, a static call's trampoline), which the caller supplies.
 *
 * The copy runs from the function's entry (the instruction after its ftrace NOP, or its first
 * after the ENDBR) to the end of its code:
 *   - each block holds its counter:
 *       [pushfq] push %rax; movabs $counter, %rax; incq %gs:(%rax); pop %rax [popfq]
 *     just before the block's first instruction that kills the flags (rules/flags.h) or where the
 *     C calling convention leaves them dead (the entry, a return), if nothing before it in the
 *     block can leave the block; else at the block's start, between pushfq and popfq;
 *   - a call becomes `push $R; jmp target`, R the address after the call in the original (a
 *     native return address: no stack ever holds an address in the copy);
 *   - an instruction the kernel finds by address (an exception-table entry's, a BUG/WARN ud2)
 *     or that must not move (rules/out_of_line.h: cli, sti, popf, system instructions) is not
 *     copied: the copy jumps to it in the original, which runs it natively;
 *   - a jump label becomes `cmpl $0, key(%rip); jg/jle target` (taken when the key is enabled
 *     XOR the entry's branch bit), a static call `push $R; jmp trampoline`;
 *   - branches inside the function go to the copy of their target (its counter), branches and
 *     RIP-relative operands outside it keep their absolute targets; the rest is copied as is.
 * Where control comes back to the original from the copy (R after each call, the instruction
 * after a native run, an exception fixup in the function) and at the entry, the module splices
 * the original into the copy: the re-entry points, each a jump where 5 bytes fit, else an int3.
 *
 * Refused (kinstr_cache_fn__build() returns NULL, errno and the refusal say why): what the
 * code cache cannot run faithfully (indirect jumps, calls into the function, loops with
 * rel8-only forms, an int3 that may run, an ENDBR inside the function, alternatives the kernel
 * still patches, kprobes, function-level policy) or a site whose kernel facts the caller did
 * not supply.
 */
#ifndef KINSTR_CACHE_H
#define KINSTR_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <kinstr/kernel.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How an instruction of the original appears in the copy. */
enum kinstr_cache_how {
	KINSTR_CACHE_COPY,		/* the same bytes */
	KINSTR_CACHE_RELOC,		/* a branch or RIP-relative operand, re-aimed (rel8 grows to rel32) */
	KINSTR_CACHE_CALL,		/* push $R; jmp target (R: after the call, in the original) */
	KINSTR_CACHE_NATIVE,		/* jmp to it in the original, which runs it */
	KINSTR_CACHE_JUMP_LABEL,	/* cmpl $0, key(%rip); jg/jle target */
	KINSTR_CACHE_STATIC_CALL,	/* push $R; jmp trampoline (a tail call: jmp trampoline) */
	KINSTR_CACHE_NR_HOW
};

/* Why control enters the copy from the original at a re-entry point. */
enum kinstr_cache_why {
	KINSTR_CACHE_ENTRY,		/* the function's entry */
	KINSTR_CACHE_RETURN,		/* a callee returns here (R) */
	KINSTR_CACHE_AFTER_NATIVE,	/* after instructions the original ran */
	KINSTR_CACHE_FIXUP,		/* an exception fixup lands here */
	KINSTR_CACHE_NR_WHY
};

/* An instruction's edge counters (KINSTR_CACHE_F_EDGES), as the module's map says them. */
#define KINSTR_CACHE_I_EDGE_IN		(1u << 0)	/* a counter before it all: falling into it */
#define KINSTR_CACHE_I_EDGE_IN_PUSHF	(1u << 1)
#define KINSTR_CACHE_I_EDGE_OUT		(1u << 2)	/* its counterpart counts its branch taken, or its exit */
#define KINSTR_CACHE_I_EDGE_OUT_PUSHF	(1u << 3)

struct kinstr_cache_insn {
	uint64_t addr;		/* in the original */
	uint64_t copy;		/* its counterpart in the copy (after its counters) */
	uint8_t len, copy_len;
	uint8_t how;		/* enum kinstr_cache_how */
	uint8_t counted;	/* its block's counter runs just before it */
	uint8_t edges;		/* KINSTR_CACHE_I_EDGE_* */
	uint32_t block;		/* index into the blocks */
	uint32_t edge;		/* edges: its first edge's index (the edge-in's, then the out's) */
	/*
	 * I_EDGE_IN: the index, among the function's counters, of the counter before it all: the
	 * edge-in's, or the block before's (kinstr_cache_block.counted_after)
	 */
	uint32_t in_counter;
	uint8_t timer;		/* KINSTR_CACHE_F_TIMER: KINSTR_CACHE_TIMER_STARTS or _STOPS here, else 0 */
};
#define KINSTR_CACHE_TIMER_STARTS	1	/* before it all: where the entry point lands */
#define KINSTR_CACHE_TIMER_STOPS	2	/* an exit: just before its form (after an exit's edge counter) */

/* A block's flow the edge counters do not see all of (it is left out of flow conservation). */
#define KINSTR_CACHE_B_IN_UNSEEN	(1u << 0)	/* entered from the original: an exception fixup, a jump label run there */
#define KINSTR_CACHE_B_OUT_UNSEEN	(1u << 1)	/* leaves through a native instruction, or by no exit (noreturn) */

struct kinstr_cache_block {
	uint64_t addr;		/* first instruction, in the original */
	uint64_t copy;		/* where branches to the block land (its counter, or its first instruction) */
	uint64_t counter;	/* its counter in the copy */
	uint32_t first, count;	/* its instructions */
	uint8_t saves_flags;	/* the counter sits between pushfq and popfq */
	uint8_t unseen;		/* edges: KINSTR_CACHE_B_* */
	/*
	 * The original runs into the block (a native instruction before falls into its native
	 * start, or a fixup lands there): it is counted where control comes back into the copy after
	 * that run, by the next block's counter before it all (with edges, the edge falling in from
	 * this block); a fault inside the run is not counted.
	 */
	uint8_t counted_after;
	uint32_t ctr;		/* the index of its counter among the function's */
};

/* Edges (KINSTR_CACHE_F_EDGES): each has a counter of its own, after the blocks' (see counter). */
enum kinstr_cache_edge_kind {
	KINSTR_CACHE_EDGE_ENTRY,	/* into the entry block from the function's entry */
	KINSTR_CACHE_EDGE_FALL,		/* falling through into the next block (a jcc not taken, a call returned) */
	KINSTR_CACHE_EDGE_TAKEN,	/* a branch taken to a block of the function */
	KINSTR_CACHE_EDGE_EXIT,		/* out of the function: a return, a tail jump or call */
	KINSTR_CACHE_NR_EDGE
};
#define KINSTR_CACHE_OUTSIDE UINT32_MAX	/* an edge's end outside the function */

struct kinstr_cache_edge {
	uint32_t from, to;	/* blocks, or KINSTR_CACHE_OUTSIDE */
	uint32_t counter;	/* among the function's counters: the blocks' first, then the edges' */
	uint32_t insn;		/* the instruction that holds its counter */
	uint8_t kind;		/* enum kinstr_cache_edge_kind */
};

struct kinstr_cache_reentry {
	uint64_t addr;		/* in the original */
	uint64_t copy;		/* where it continues in the copy (a block's counter at a block start) */
	uint8_t why;		/* enum kinstr_cache_why */
	uint8_t jump;		/* 1: a 5-byte jmp fits at addr, 0: an int3 */
};

/* Why a function was refused. Ids are stable. */
enum kinstr_cache_refusal_code {
	KINSTR_CACHE_OK,
	KINSTR_CACHE_R_POLICY,		/* the function's text is reserved as a whole (.reserved) */
	KINSTR_CACHE_R_UNDECODABLE,	/* bytes that do not decode, or a branch into an instruction */
	KINSTR_CACHE_R_INT3,		/* an int3 that may run: someone's breakpoint */
	KINSTR_CACHE_R_INDIRECT_JMP,	/* a jmp through a register or memory: it may land in the original */
	KINSTR_CACHE_R_INDIRECT_CALL,	/* a call through a register or memory (placement matters: ITS) */
	KINSTR_CACHE_R_INTERNAL_CALL,	/* a call into the function itself */
	KINSTR_CACHE_R_LOOP,		/* loop/jrcxz (rel8 only) */
	KINSTR_CACHE_R_ENDBR,		/* an ENDBR inside the function: an indirect branch may land there */
	KINSTR_CACHE_R_RESERVED,	/* an instruction the kernel may rewrite (alternative, kprobe, ftrace) */
	KINSTR_CACHE_R_JUMP_LABEL,	/* a jump label whose key the caller did not give, or flags live there */
	KINSTR_CACHE_R_STATIC_CALL,	/* a static call whose trampoline the caller did not give */
	KINSTR_CACHE_R_REENTRY,		/* a re-entry point where not even an int3 can go */
	KINSTR_CACHE_R_RANGE,		/* a target out of rel32 or imm32 reach of the copy */
	KINSTR_CACHE_R_NO_CODE,		/* nothing after the entry */
	KINSTR_CACHE_R_RETURN,		/* a bare ret that cannot move (the ITS thunk depends on its address) */
	KINSTR_CACHE_R_COLD,		/* a .cold part of the function may jump back into the original */
	KINSTR_CACHE_R_SCHED_TEXT,	/* .sched.text or lock text (wchan, profile_pc look there) */
	KINSTR_CACHE_R_FAR,		/* iret, sysret, a far jmp/call/ret: control goes where no map says */
	KINSTR_CACHE_R_RUNS_ON,		/* the last instruction falls through past the function's end */
	KINSTR_CACHE_R_FOREIGN,		/* a branch into another function's middle */
	KINSTR_CACHE_R_UNCOUNTED,	/* a block the original runs into, with no one place to count it */
	KINSTR_CACHE_R_HELD,		/* another kinstr session's probe or code cache is in the function */
	KINSTR_CACHE_R_TIMER,		/* timed: an exit with no place for the timer's stop */
	KINSTR_CACHE_R_NR
};

struct kinstr_cache_refusal {
	int code;		/* enum kinstr_cache_refusal_code */
	uint64_t addr;		/* the instruction it is about, or the function */
	uint32_t reserved;	/* POLICY / RESERVED: 1 << enum kinstr_site_reason */
	char why[160];
};

struct kinstr_cache_opts {
	size_t sz;		/* sizeof(struct kinstr_cache_opts) */
	/* the __percpu address of the function's counters (u64 each, one per block, in order) */
	uint64_t counters;
	/*
	 * The kernel's facts the bytes do not hold (NULL: the view's, kinstr_kernel__jump_label()
	 * and kinstr_kernel__static_call(); a snapshot has none, and such a site refuses).
	 * jump_label: the key (struct static_key *) of the jump label at site, and the entry's
	 * branch bit. static_call: the trampoline (__SCT__*) of the static call at site, and
	 * whether the site is a tail call. Each returns 0, or a negative errno.
	 */
	int (*jump_label)(uint64_t site, uint64_t *key, int *branch, void *ctx);
	int (*static_call)(uint64_t site, uint64_t *tramp, int *tail, void *ctx);
	void *ctx;
	unsigned int flags;	/* KINSTR_CACHE_F_* */
	/*
	 * KINSTR_CACHE_F_TIMER: the session's timer the copy starts and stops, and the module's
	 * functions its timer sequences call (kinstr_cache_timer_start and _stop)
	 */
	uint32_t timer;
	uint64_t timer_start, timer_stop;
	/*
	 * A re-laid copy (kinstr optimize, layout.h): no counters, the blocks in this order
	 * (nlayout: the plan's block count, a permutation of its block indices), jccs inverted and
	 * jmps added or dropped for the new fall-throughs, branches rel8 where they reach. NULL: the
	 * counted copy in the original order.
	 */
	const uint32_t *layout;
	size_t nlayout;
};
/* A counter on every edge too: into each block by falling through, out of each branch and exit. */
#define KINSTR_CACHE_F_EDGES	(1u << 0)
/*
 * A timer too (kinstr profile --cache; the module's KINSTR_CACHE_M_TIMER): started where the
 * entry point lands, before everything of the entry, and stopped before every exit (a ret, a
 * jmp out of the function, a tail static call), each by a call of the module's with the flags
 * and the registers C may clobber saved. Refused (KINSTR_CACHE_R_TIMER) where control may leave
 * otherwise: a conditional branch or a jump label out of the function, a ret with an operand.
 */
#define KINSTR_CACHE_F_TIMER	(1u << 1)

struct kinstr_cache_fn;

/*
 * Build the copy of function f of kernel k to run at copy_addr. NULL with errno set: EPERM
 * refused (r says why), ERANGE when k does not hold f's text, EINVAL, ENOMEM. r may be NULL.
 */
struct kinstr_cache_fn *kinstr_cache_fn__build(const struct kinstr_kernel *k, const struct kinstr_func *f,
					       uint64_t copy_addr, const struct kinstr_cache_opts *opts,
					       struct kinstr_cache_refusal *r);
void kinstr_cache_fn__free(struct kinstr_cache_fn *c);

uint64_t kinstr_cache_fn__copy_addr(const struct kinstr_cache_fn *c);
size_t kinstr_cache_fn__size(const struct kinstr_cache_fn *c);
const uint8_t *kinstr_cache_fn__bytes(const struct kinstr_cache_fn *c);
size_t kinstr_cache_fn__insn_cnt(const struct kinstr_cache_fn *c);
const struct kinstr_cache_insn *kinstr_cache_fn__insn(const struct kinstr_cache_fn *c, size_t i);
size_t kinstr_cache_fn__block_cnt(const struct kinstr_cache_fn *c);
const struct kinstr_cache_block *kinstr_cache_fn__block(const struct kinstr_cache_fn *c, size_t i);
size_t kinstr_cache_fn__edge_cnt(const struct kinstr_cache_fn *c);
const struct kinstr_cache_edge *kinstr_cache_fn__edge(const struct kinstr_cache_fn *c, size_t i);
/* The function's counters: one per block, then one per edge. */
size_t kinstr_cache_fn__counter_cnt(const struct kinstr_cache_fn *c);
size_t kinstr_cache_fn__reentry_cnt(const struct kinstr_cache_fn *c);
const struct kinstr_cache_reentry *kinstr_cache_fn__reentry(const struct kinstr_cache_fn *c, size_t i);

/* A re-laid copy (opts.layout): 1, else 0; what the layout did to block b (KINSTR_CACHE_L_*). */
int kinstr_cache_fn__laid(const struct kinstr_cache_fn *c);
unsigned int kinstr_cache_fn__laid_block(const struct kinstr_cache_fn *c, size_t b);
#define KINSTR_CACHE_L_INVERTED		(1u << 0)	/* its jcc inverted: the target falls through */
#define KINSTR_CACHE_L_JMP_ADDED	(1u << 1)	/* a jmp to its fall-through successor, not next */
#define KINSTR_CACHE_L_JMP_DROPPED	(1u << 2)	/* its jmp dropped: the target is next */
#define KINSTR_CACHE_L_SHORT		(1u << 3)	/* its branch (and added jmp) in the rel8 form where it reaches */

const char *kinstr_cache_how__str(unsigned int how);		/* "copy", "reloc", "call", ... */
const char *kinstr_cache_why__str(unsigned int why);		/* "entry", "return", ... */
const char *kinstr_cache_refusal__id(unsigned int code);	/* "indirect-jmp", ... */
const char *kinstr_cache_edge_kind__str(unsigned int kind);	/* "entry", "fall", "taken", "exit" */

/*
 * A set of functions run through the code cache of one area. Each is planned when added (its
 * refusal, if any, says why it cannot be), built again for the area's address at install and
 * handed to the module with its map and entry points, which it proves before anything enters a
 * copy (KINSTR_REFUSE_BAD_COPY names the rule a copy broke: kinstr_cache_rule__str()).
 */
struct kinstr_cacheset;
struct kinstr_dev;
struct kinstr_probe;
struct kinstr_cache_map;

struct kinstr_cacheset *kinstr_cacheset__new(struct kinstr_dev *dev, const struct kinstr_kernel *k);
/* Removes what is installed. */
void kinstr_cacheset__free(struct kinstr_cacheset *cs);
/* 0; -EPERM with r saying why f cannot be cached; -EEXIST, -EBUSY (installed), -ENOMEM. */
int kinstr_cacheset__add(struct kinstr_cacheset *cs, const struct kinstr_func *f, struct kinstr_cache_refusal *r);
/* As __add, the copy laid out in order (layout.h; n: f's block count), without counters. */
int kinstr_cacheset__add_laid(struct kinstr_cacheset *cs, const struct kinstr_func *f, const uint32_t *order,
			      size_t n, struct kinstr_cache_refusal *r);
size_t kinstr_cacheset__cnt(const struct kinstr_cacheset *cs);
/* Function i (in address order once installed) and its copy (as installed, once it is). */
const struct kinstr_func *kinstr_cacheset__func(const struct kinstr_cacheset *cs, size_t i);
const struct kinstr_cache_fn *kinstr_cacheset__fn(const struct kinstr_cacheset *cs, size_t i);
/*
 * Install every function's copy (flags: KINSTR_INSTALL_F_*; with F_VERIFY_ONLY the module only
 * checks). -errno and why and, when one function's copy is the cause (the module
 * refused it, it has more counters than a chunk, it changed between plan and install), *refused
 * that function's index; else *refused is left as it was.
 */
int kinstr_cacheset__install(struct kinstr_cacheset *cs, unsigned int flags, size_t *refused,
			     struct kinstr_why *why);
/* Read every counter (one ioctl); then the count of block b of function i. */
int kinstr_cacheset__read(struct kinstr_cacheset *cs);
uint64_t kinstr_cacheset__block_count(const struct kinstr_cacheset *cs, size_t i, size_t block);
uint64_t kinstr_cacheset__edge_count(const struct kinstr_cacheset *cs, size_t i, size_t edge);
/*
 * With edges: the counts of the edges into block b of function i and out of it (flow
 * conservation: in = the block's count = out, for a reading with no pass in flight); returns the
 * block's KINSTR_CACHE_B_* (a way in or out the counters do not see), or -EINVAL (no edges).
 */
int kinstr_cacheset__block_flow(const struct kinstr_cacheset *cs, size_t i, size_t b, uint64_t *in, uint64_t *out);
/*
 * Build copies with KINSTR_CACHE_F_* (before the first add). With KINSTR_CACHE_F_TIMER each
 * function starts and stops timer i of the descriptor's (KINSTR_IOC_TIMERS_CREATE, before the
 * install), i the order it was added in: -EOPNOTSUPP when the loaded kinstr.ko has none.
 */
int kinstr_cacheset__set_flags(struct kinstr_cacheset *cs, unsigned int flags);
/* KINSTR_CACHE_F_TIMER: the timer of function i (kinstr_cacheset__func()'s order). */
uint32_t kinstr_cacheset__timer(const struct kinstr_cacheset *cs, size_t i);
int kinstr_cacheset__remove(struct kinstr_cacheset *cs);
/* For tests of the module's check: change the request (bytes, map, entry probes) before it is sent. */
typedef void (*kinstr_cacheset_mutate_fn)(uint8_t *bytes, size_t len, struct kinstr_cache_map *map, size_t nmap,
					  struct kinstr_probe *req, size_t nreq, void *ctx);
void kinstr_cacheset__set_mutate(struct kinstr_cacheset *cs, kinstr_cacheset_mutate_fn fn, void *ctx);
const char *kinstr_cache_rule__str(unsigned int rule);	/* enum kinstr_cache_rule */
const char *kinstr_cache_rule__id(unsigned int rule);	/* "counter", "exit", ... */

#ifdef __cplusplus
}
#endif
#endif
