/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Probe sets: a batch of counting probes, chosen from site analysis, relocated for the slots the
 * module reserved, installed with one ioctl (one quiescence wait), read, and removed. A set
 * belongs to the device it was made on: closing the device removes it.
 */
#ifndef KINSTR_PROBE_H
#define KINSTR_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <kinstr/sites.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_probeset;

struct kinstr_probe_info {
	uint64_t addr;
	const struct kinstr_func *func;	/* owned by the kernel view */
	uint8_t kind;			/* KINSTR_PROBE_JUMP, _TRAP or _FTRACE */
	uint8_t displaced_len;
	bool inline_count;		/* after install: a counting probe counts in its slot, no call */
	bool saves_flags;		/* after install: its slot saves the flags (live at the site) */
};

/* dev may be NULL for a set that is only planned (--dry-run). NULL with errno on failure. */
struct kinstr_probeset *kinstr_probeset__new(struct kinstr_dev *dev, const struct kinstr_kernel *k);
void kinstr_probeset__free(struct kinstr_probeset *ps);
/* The kernel view the set was made over. */
const struct kinstr_kernel *kinstr_probeset__kernel(const struct kinstr_probeset *ps);

/*
 * Add a counting probe at addr, an instruction of function f: a jump probe where a jmp fits,
 * else a trap probe. Returns 0, or a negative errno and why, a sentence naming the rule:
 * -EILSEQ not an instruction boundary, -EPERM refused, -EEXIST already in the set, -EBUSY it
 * would share bytes with a probe of the set.
 */
int kinstr_probeset__add(struct kinstr_probeset *ps, const struct kinstr_func *f, uint64_t addr,
			 struct kinstr_why *why);

/*
 * Add a probe at the first byte of f, its ftrace NOP: ftrace calls the probe's slot directly
 * (an ftrace direct call), which then goes on after the NOP. As cheap as a jump probe where the
 * instruction after the NOP is only a trap site; counting and timers only (no trace). -EPERM
 * when f has no ftrace site there or something else reserves it; why as kinstr_probeset__add's.
 */
int kinstr_probeset__add_ftrace(struct kinstr_probeset *ps, const struct kinstr_func *f,
				struct kinstr_why *why);

/*
 * f's analysis, made once for the set's life (each add and the planner share it); NULL with
 * errno (kinstr_fn__analyze's) on failure.
 */
const struct kinstr_fn *kinstr_probeset__analysis(struct kinstr_probeset *ps, const struct kinstr_func *f);

/* "jump", "trap" or "ftrace" */
const char *kinstr_probe_kind__str(unsigned int kind);

size_t kinstr_probeset__cnt(const struct kinstr_probeset *ps);
/* Drop the probes added after the first n (before install): undo a partly added group. */
int kinstr_probeset__truncate(struct kinstr_probeset *ps, size_t n);
const struct kinstr_probe_info *kinstr_probeset__info(const struct kinstr_probeset *ps, size_t i);
/*
 * The body probe i's slot would run if it sat at body_addr: its displaced instructions relocated,
 * a direct call emulated (push $return; jmp target), a bare ret as the kernel writes returns. The
 * module verifies it again before anything is patched. Its length in buf (size bytes; an ftrace
 * probe's is empty), or -errno and why.
 */
int kinstr_probeset__body(const struct kinstr_probeset *ps, size_t i, uint64_t body_addr, uint8_t *buf,
			  size_t size, struct kinstr_why *why);

/*
 * Install without waiting for the jumps: the call returns once an int3 is on every site (the
 * probes count from then on) and the module's worker puts the jumps in after its quiescence
 * wait. The default waits, so that the probes run at full speed when install returns.
 */
void kinstr_probeset__set_async(struct kinstr_probeset *ps, bool async);
/*
 * Make probe i (in the order added) a trace probe that records spec into the device's trace
 * channel (kinstr_trace__create on the same device first); NULL makes it count again.
 */
struct kinstr_trace_spec;
struct kinstr_pred;
int kinstr_probeset__set_trace(struct kinstr_probeset *ps, size_t i, const struct kinstr_trace_spec *spec);
/*
 * Make trace probe i (kinstr_probeset__set_trace) count each hit in the device's tally under its
 * key (kinstr_tally__new_dev) instead of recording it: its spec names the event and the value a
 * tally by value keys by. -EINVAL if probe i is no trace probe.
 */
int kinstr_probeset__set_tally(struct kinstr_probeset *ps, size_t i);
/*
 * Make trace probe i a span's start (stop false) or stop in the device's spans
 * (kinstr_spanner__new_dev) instead of recording: its spec names the value a span by value keys
 * by. -EINVAL if probe i is no trace probe.
 */
int kinstr_probeset__set_span(struct kinstr_probeset *ps, size_t i, bool stop);
/*
 * Trace probe i records only hits pred passes (kinstr/pred.h; NULL: every hit). pred is not
 * copied: it must stay until the set is installed. Needs KINSTR_FEAT_PRED.
 */
int kinstr_probeset__set_pred(struct kinstr_probeset *ps, size_t i, const struct kinstr_pred *pred);
/* Make probe i start (or stop) timer `timer` of the device's timers (kinstr_timers__create). */
int kinstr_probeset__set_timer(struct kinstr_probeset *ps, size_t i, bool start, uint32_t timer);
/*
 * Make probe i run an action that takes no argument and hands the module nothing (enum
 * kinstr_action: KINSTR_ACTION_COUNT, the default; KINSTR_ACTION_NOP, the splice alone, which
 * counts nothing); -EINVAL for any other (trace, timers and BPF
 * programs have their setters). Install refuses with -EOPNOTSUPP an action the module does not offer.
 */
int kinstr_probeset__set_action(struct kinstr_probeset *ps, size_t i, unsigned int action);

/* Reserve slots, relocate, install every probe: 0, or -errno and why (a refusal names the probe and the rule). */
int kinstr_probeset__install(struct kinstr_probeset *ps, struct kinstr_why *why);
/*
 * Have the module verify every probe as install would, and patch nothing: 0, or -errno with
 * why and, when the module refused one probe, its index in *refused (if not NULL). The set can
 * be installed afterwards. Needs KINSTR_FEAT_VERIFY_ONLY.
 */
int kinstr_probeset__verify(struct kinstr_probeset *ps, size_t *refused, struct kinstr_why *why);
/* Hits per probe, summed over CPUs, into counts[cnt]. */
int kinstr_probeset__counts(struct kinstr_probeset *ps, uint64_t *counts);
/* The same, and per probe the actions its recursion guard skipped (missed[cnt], may be NULL). */
int kinstr_probeset__counts_missed(struct kinstr_probeset *ps, uint64_t *counts, uint64_t *missed);
/*
 * Per probe the hits its predicate rejected (filtered[cnt]; all 0 where the module has no
 * predicates), from KINSTR_IOC_COUNTS.
 */
int kinstr_probeset__filtered(struct kinstr_probeset *ps, uint64_t *filtered);
/* Their sum over every probe (0 if unknown). */
uint64_t kinstr_probeset__filtered_total(struct kinstr_probeset *ps);
/* Hits whose action the recursion guard skipped, over every probe (0 if unknown). */
uint64_t kinstr_probeset__missed_total(struct kinstr_probeset *ps);
int kinstr_probeset__remove(struct kinstr_probeset *ps);
/*
 * Take probes idx[0, n) of the installed set out now, the others staying (one-shot coverage):
 * their text restored, their counts kept. *disarmed (may be NULL): how many were still in.
 */
int kinstr_probeset__disarm(struct kinstr_probeset *ps, const uint32_t *idx, size_t n, size_t *disarmed);

/* The stable text of a module refusal code (enum kinstr_refusal). */
const char *kinstr_refusal__str(unsigned int refusal);

#ifdef __cplusplus
}
#endif
#endif
