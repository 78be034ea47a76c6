/* SPDX-License-Identifier: GPL-2.0 */
/* ksym.c: what the kernel does not export, called through static calls; the kernel's tables and ranges. */
#ifndef KINSTR_KMOD_KSYM_H
#define KINSTR_KMOD_KSYM_H

#include "base.h"

/* An address range of the running kernel, [start, end). */
struct kinstr_span {
	unsigned long start, end;
};

/*
 * ksym.c: what kinstr needs but the kernel does not export to modules, resolved once at load
 * through kallsyms_lookup_name. Only kallsyms_lookup_name and the text bounds are required; a
 * missing predicate makes every range it would decide unverifiable (refused), never unchecked.
 *
 * The resolved functions are called through static calls, kinstr_kcall(NAME)(...): once
 * resolved, a direct call. A call through a pointer to a function whose ENDBR the kernel sealed
 * (every one not address-taken, on an IBT kernel) faults with #CP on IBT hardware.
 */
#define KINSTR_KFUNCS(X) X(kallsyms_lookup_name) X(ftrace_text_reserved) X(jump_label_text_reserved) \
	X(static_call_text_reserved) X(alternatives_text_reserved) X(search_exception_tables) X(find_bug) \
	X(within_kprobe_blacklist) X(insn_decode) X(kallsyms_lookup_size_offset) X(text_poke) \
	X(text_poke_sync) X(get_kprobe) X(__module_address)
#define KINSTR_KFUNC_DECLARE(f) DECLARE_STATIC_CALL(kinstr_k_##f, f);
KINSTR_KFUNCS(KINSTR_KFUNC_DECLARE)
#define kinstr_kcall(f) static_call(kinstr_k_##f)
#define kinstr_khas(f) (static_call_query(kinstr_k_##f) != NULL)
#define kinstr_kaddr(f) ((unsigned long)static_call_query(kinstr_k_##f))

struct kinstr_ksyms {
	struct mutex *text_mutex;
	/* where a relocated return goes (x86_return_thunk's value; 0: a bare ret) */
	unsigned long return_thunk;
	/* __x86_return_thunk, the thunk the compiler's returns name before the kernel patches them */
	unsigned long return_thunk_sym;
	bool return_thunk_its;		/* return_thunk is its_return_thunk: it depends on the address */
	struct list_head *kprobe_blacklist;	/* kernel/kprobes.c's list, written under kprobe_mutex */
	struct mutex *kprobe_mutex;
	struct atomic_notifier_head *die_chain;	/* kernel/notifier.c's, which notify_die() calls */
	struct kinstr_span text, entry_text, irqentry_text, noinstr_text, kprobes_text, sched_text, lock_text;
	/* the read-only tables user space may read to classify sites itself */
	struct kinstr_span ex_table, jump_table, static_call_sites, bug_table;
	/* find_bug() scans the whole table per call: a sorted index of core BUG sites instead */
	unsigned long *bug_addrs;
	size_t nbug_addrs;
	/*
	 * jump_label_text_reserved() decodes every jump entry of the kernel per call: the core's
	 * entries (code address and length) sorted once instead, and every address the core's jump
	 * labels and exception fixups branch to
	 */
	struct kinstr_jl_site *jl_sites;
	size_t njl_sites;
	/* the same for static_call_text_reserved(), which walks every static call site per call */
	struct kinstr_jl_site *sc_sites;
	size_t nsc_sites;
	unsigned long *core_targets;
	size_t ncore_targets;
	/* search_exception_tables() per byte walks the module list each time: the core's sorted */
	unsigned long *ex_addrs;
	size_t nex_addrs;
	/*
	 * within_kprobe_blacklist() walks the whole list, kinstr's fences included: the kernel's
	 * entries for core text (all made at boot) sorted by start, each with the furthest end of
	 * those up to it
	 */
	struct kinstr_span *bl_core;
	size_t nbl_core;
	/* kernel/bpf/syscall.c's guard: no tracing program runs inside another on one CPU */
	int __percpu *bpf_prog_active;
};
struct kinstr_jl_site {
	unsigned long code;
	unsigned long len;
	unsigned long other;	/* a jump label's target; a static call site's key */
};
extern struct kinstr_ksyms kinstr_ksyms;
int kinstr_ksyms_init(void);
int kinstr_ksyms_insn_len(unsigned long addr);
/* The kernel's patch sites whose bytes are reserved: jump labels' jmp/NOPs, static calls' calls. */
enum kinstr_patch_sites { KINSTR_SITES_JUMP_LABEL, KINSTR_SITES_STATIC_CALL };
bool kinstr_ksyms_sites_in(enum kinstr_patch_sites which, unsigned long a, unsigned int len);
bool kinstr_ksyms_extable_in(unsigned long a, unsigned int len);
bool kinstr_ksyms_core_blacklist_has(unsigned long a);
void kinstr_ksyms_exit(void);
bool kinstr_ksyms_bug_in(unsigned long a, unsigned int len);
/* Does a jump label or an exception fixup of the core kernel aim into (lo, hi)? */
bool kinstr_ksyms_table_target_in(unsigned long lo, unsigned long hi, unsigned long *target);
/*
 * In a jump table t (the core's or a module's): the entry whose code is at code, its key, branch
 * bit and target; in a table of static call sites: the site at addr, its key and whether it is a
 * tail call. 0 or -ENOENT.
 */
int kinstr_jump_entry_in(const struct kinstr_span *t, unsigned long code, unsigned long *key, bool *branch,
			 unsigned long *target);
int kinstr_static_call_site_in(const struct kinstr_span *t, unsigned long addr, unsigned long *key, bool *tail);
/* The trampoline (__SCT__name) of a static call key (__SCK__name), by the kernel's symbols; 0 if none. */
unsigned long kinstr_static_call_trampoline(unsigned long key);
/*
 * Where code in [lo, hi) may branch that a decode of its bytes now need not show: each jump
 * label's target (a NOP until its key flips) and, for each static call site, its trampoline
 * (a NULL static call is a NOP; the trampoline follows every update) and a tracepoint's
 * iterator (its static call's target while it has several probes). fn(ctx, target) for each.
 * The core's sites from the index; jl and sc (a module's tables, either may be empty) walked.
 */
typedef void (*kinstr_target_fn)(void *ctx, unsigned long target);
void kinstr_ksyms_hidden_targets(unsigned long lo, unsigned long hi, kinstr_target_fn fn, void *ctx);
void kinstr_tables_hidden_targets(const struct kinstr_span *jl, const struct kinstr_span *sc, unsigned long lo,
				  unsigned long hi, kinstr_target_fn fn, void *ctx);
/* Is [a, a + len) in .sched.text or the lock text (wchan and profile_pc look there by address)? */
bool kinstr_ksyms_sched_or_lock_text(unsigned long a, unsigned long len);
/* Everything patching needs was resolved. */
bool kinstr_ksyms_can_patch(void);

static inline bool kinstr_span_has(const struct kinstr_span *s, unsigned long a, unsigned long len)
{
	return s->start && a >= s->start && len <= s->end - s->start && a - s->start <= s->end - s->start - len;
}

#endif
