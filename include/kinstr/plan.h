/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The planner: what every subcommand that patches asks of the library. Probe specs (FUNC,
 * FUNC+0xOFF, FUNC%return, GLOB; FUNC a name or NAME@ADDR) become probes of a set; a function's
 * entry is chosen (after its ftrace NOP, or from the NOP through an ftrace direct call); a
 * function and its call sites are timed. Each function is analysed once per probe set
 * (kinstr_probeset__analysis). A refusal comes back as a struct kinstr_why (kinstr/why.h): the
 * stable sentence a tool prints after "kinstr: ", and what it is about.
 */
#ifndef KINSTR_PLAN_H
#define KINSTR_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/btf.h>
#include <kinstr/ctf.h>
#include <kinstr/event.h>
#include <kinstr/probe.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The spec grammar. A spec is parsed once, by kinstr_spec__parse() (or __parse_trace()), and
 * planned from what it parsed (kinstr_plan__add(), kinstr_plan__add_traced()).
 */
enum kinstr_spec_kind { KINSTR_SPEC_ENTRY, KINSTR_SPEC_OFFSET, KINSTR_SPEC_RETURN, KINSTR_SPEC_GLOB };
struct kinstr_spec {
	char text[512];			/* the spec as written (a trace spec's without its values) */
	char name[512];			/* FUNC, NAME@ADDR or the glob */
	enum kinstr_spec_kind kind;
	uint64_t offset;		/* KINSTR_SPEC_OFFSET */
	bool has_values;		/* a trace spec's SPEC(VALUE,...) ... */
	char values[512];		/* ... its VALUE,... (parsed when planned, against the function) */
	bool has_pred;			/* a trace spec's SPEC[(VALUE,...)] if EXPR ... */
	char pred[512];			/* ... its EXPR (kinstr/pred.h; compiled when planned) */
};
/* text into sp: 0, or -EINVAL and why (the whole word must be a spec). */
int kinstr_spec__parse(const char *text, struct kinstr_spec *sp, struct kinstr_why *why);
/* The same for a trace spec: SPEC or SPEC(VALUE,...), then optionally ' if EXPR' (kinstr/pred.h). */
int kinstr_spec__parse_trace(const char *text, struct kinstr_spec *sp, struct kinstr_why *why);

/*
 * The one function name (or NAME@ADDR) denotes; else NULL, errno ENOENT or ENOTUNIQ, and why
 * (may be NULL) says so ("no function 'X' in the kernel's symbols", "N functions are named 'X':
 * X@0x..., ...; name one as NAME@ADDR").
 */
const struct kinstr_func *kinstr_plan__func(const struct kinstr_kernel *k, const char *name, struct kinstr_why *why);

/*
 * The site of f's entry (fn: f analysed): after the ftrace NOP, before the function's own first
 * instruction. *ftrace (if ftrace_ok) says the entry is better taken from the NOP through an
 * ftrace direct call: only an int3 fits after it (a trap costs far more) and the NOP is ftrace's
 * alone. NULL when f has no site.
 */
const struct kinstr_site *kinstr_plan__entry_site(const struct kinstr_fn *fn, const struct kinstr_func *f,
						  bool ftrace_ok, bool *ftrace);

/*
 * A glob's default cap on the probes of one set: until its jumps are in, every probe is an int3
 * that each call through it traps on, and a glob over the whole kernel takes its hottest
 * functions too. Raised per planner up to the module's KINSTR_AREA_MAX_PROBES.
 */
#define KINSTR_PLAN_MAX_PROBES 4096

struct kinstr_plan_opts {
	size_t sz;
	bool every;		/* each FUNC at every jump site not sharing bytes with the last one */
	bool no_ftrace;		/* never take an entry through an ftrace direct call */
	size_t max_probes;	/* globs' cap on the set (0: KINSTR_PLAN_MAX_PROBES) */
	const char *where;	/* a predicate every trace spec's probes take (kinstr/pred.h), or NULL */
};

/* How a glob went: the functions it matched, probed and refused, the refusals' rules counted. */
#define KINSTR_PLAN_GLOB_RULES 6
struct kinstr_plan_glob {
	size_t probed, refused;
	size_t nrules;
	bool more;				/* more rules than rules[] holds */
	struct {
		char why[160];
		size_t count;
	} rules[KINSTR_PLAN_GLOB_RULES];
};

struct kinstr_plan;
/* A planner adding to ps (whose kernel view it plans over). NULL with errno (EINVAL: opts). */
struct kinstr_plan *kinstr_plan__new(struct kinstr_probeset *ps, const struct kinstr_plan_opts *opts);
void kinstr_plan__free(struct kinstr_plan *pl);

/*
 * One spec into probes: FUNC its entry (every jump site with opts.every), FUNC+0xOFF that
 * instruction, FUNC%return every return site, GLOB the entries of every matching function
 * (those refused are skipped and counted into glob, if not NULL). 0, or -errno and why, and then
 * no probe of the spec is left in the set.
 */
int kinstr_plan__add(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_why *why,
		     struct kinstr_plan_glob *glob);
/* The same from the spec's text (parsed first). */
int kinstr_plan__add_spec(struct kinstr_plan *pl, const char *spec, struct kinstr_why *why,
			  struct kinstr_plan_glob *glob);

/*
 * Probes that time f with timer `timer`: a start at its entry (as kinstr_plan__entry_site
 * chooses it), a stop at every exit (ret, return-thunk jump, tail call); *exits gets their
 * number. A function with a conditional exit, or branching back to its entry, is refused. On
 * failure nothing is added and -errno and why are returned.
 */
int kinstr_plan__time_func(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int timer,
			   unsigned int *exits, struct kinstr_why *why);

/*
 * spec (FUNC or GLOB) into timed functions (aliases once): each as kinstr_plan__time_func, with
 * timers first_timer, first_timer + 1, ...; out[max] gets them, *n their number, *skipped the
 * functions of a glob that could not be timed. -errno and why when nothing can be timed or the
 * batch would be too large.
 */
struct kinstr_timed {
	const struct kinstr_func *f;
	unsigned int timer, exits;
};
int kinstr_plan__time_spec(struct kinstr_plan *pl, const char *spec, unsigned int first_timer,
			   struct kinstr_timed *out, size_t max, size_t *n, size_t *skipped, struct kinstr_why *why);

/* A call instruction of a function, timed from the call to the instruction after it. */
struct kinstr_callsite {
	uint64_t addr;
	const struct kinstr_func *callee;	/* NULL: indirect (register, memory, retpoline thunk) */
	unsigned int timer;
	bool timed;				/* false: the call or the next instruction is not probeable */
	/*
	 * the callee switches threads (kinstr_plan__switch_at): the call returns when this thread
	 * runs again, so its time is the time the thread was switched out
	 */
	bool switches;
	/*
	 * callee NULL: what holds the target at the call (kinstr_plan__indirect_target), for a tally
	 * probe there; target_ok false where no value can read it (an index register)
	 */
	struct kinstr_trace_val target;
	bool target_ok;
	/*
	 * a tail call of kinstr_plan__time_func_tails: a jmp to callee, timed from the jmp to the
	 * callee's return (which is the caller's); its time is part of the caller's
	 */
	bool tail;
};
/*
 * Where f switches the CPU to another thread (a store to the per-CPU current-task pointer; with
 * tail_calls, also in a function f tail-calls, up to 3 deep): that instruction's address, or 0
 * (also when the pointer's address is unknown, as in a snapshot).
 */
uint64_t kinstr_plan__switch_at(struct kinstr_plan *pl, const struct kinstr_func *f, bool tail_calls);
/*
 * Where the target of an indirect call or jump x is at x: the register of `call/jmp *%reg`, the
 * memory of `call/jmp *disp(%reg)` or `*disp(%rip)`, or the register a retpoline thunk takes
 * (callee, may be NULL: a direct call's or jmp's callee, e.g. __x86_indirect_thunk_rax,
 * __x86_indirect_call_thunk_r11, __x86_indirect_its_thunk_rax). 0 with v filled (a value
 * kind REG or MEM of 8 bytes), -ENOENT when x is no indirect branch, -EOPNOTSUPP for an operand
 * a value cannot read (an index register).
 */
int kinstr_plan__indirect_target(const struct kinstr_x86_insn *x, const struct kinstr_func *callee,
				 struct kinstr_trace_val *v);
/*
 * A tally probe at the indirect call or jump at addr in f (kinstr_probeset__set_tally) keyed by
 * its target (kinstr_plan__indirect_target), as trace event `event`: ev gets the event (name
 * F+0xOFF, one value, "target"). 0, or -errno and why; nothing added on failure.
 */
int kinstr_plan__tally_target(struct kinstr_plan *pl, const struct kinstr_func *f, uint64_t addr, uint16_t event,
			      struct kinstr_trace_event *ev, struct kinstr_why *why);
/*
 * kinstr_plan__time_func, but a direct tail call (jmp G, G another function's start) is followed:
 * f's timer stops at the instruction before the jmp (same block: nothing else runs between), and
 * a timer of its own (numbered from *ntimers on) starts at the jmp and stops at each of G's exits,
 * so that the time G spends for f (its return is f's) is known. A tail call where that cannot be
 * done (the jmp a branch target, G with a conditional exit, a site refused) is an exit as before.
 * Each tail call followed goes into tails[max] (callee G, timer, tail true); *ntails their number.
 */
int kinstr_plan__time_func_tails(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int timer,
				 unsigned int *exits, unsigned int *ntimers, struct kinstr_callsite *tails,
				 unsigned int max, unsigned int *ntails, struct kinstr_why *why);
/* Timers for f's call sites, numbered from *ntimers on; fills sites[max]; returns how many. */
unsigned int kinstr_plan__time_calls(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int *ntimers,
				     struct kinstr_callsite *sites, unsigned int max);
/*
 * The one call instruction at addr of f, as kinstr_plan__time_calls times each: *s filled; 0 when
 * timed (timer *ntimers, then incremented), -ENOENT when addr is no call of f, -EPERM when the
 * call or the instruction after it cannot be probed (nothing added).
 */
int kinstr_plan__time_call(struct kinstr_plan *pl, const struct kinstr_func *f, uint64_t addr, unsigned int *ntimers,
			   struct kinstr_callsite *s);

/*
 * A trace spec, SPEC or SPEC(VALUE,...), into probes of the set that record into event classes:
 * one per FUNC, FUNC+0xOFF or FUNC%return named (ev[*nev], at most max, made once each) with the
 * values parsed for it (btf, may be NULL: arguments by name). glob as kinstr_plan__add_spec's.
 * 0, or -errno and why.
 */
int kinstr_plan__add_trace(struct kinstr_plan *pl, const char *text, struct kinstr_btf *btf,
			   struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max, struct kinstr_why *why,
			   struct kinstr_plan_glob *glob);
/* The same from a parsed trace spec (kinstr_spec__parse_trace). */
int kinstr_plan__add_traced(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_btf *btf,
			    struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max, struct kinstr_why *why,
			    struct kinstr_plan_glob *glob);

#ifdef __cplusplus
}
#endif
#endif
