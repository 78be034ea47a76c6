/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the parts of kinstr.ko. */
#ifndef KINSTR_KMOD_H
#define KINSTR_KMOD_H

#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/types.h>
#include <linux/bug.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/static_call.h>
#include <asm/alternative.h>
#include <asm/insn.h>
#include <asm/text-patching.h>

#define KINSTR_PR_PREFIX "kinstr: "

struct insn;
enum insn_mode;
struct exception_table_entry;
struct bug_entry;
struct mutex;
struct kprobe;
struct module;
struct kinstr_module_info;

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

/* modtext.c: the core text of live modules (never init text, never ours). */
u32 kinstr_module_policy(unsigned long addr, unsigned int len);
bool kinstr_module_readable(unsigned long addr, unsigned long len, struct module **modp);
int kinstr_module_pin(unsigned long site, struct module **modp);
bool kinstr_module_sites_in(enum kinstr_patch_sites which, unsigned long a, unsigned int len);
bool kinstr_module_target_in(unsigned long lo, unsigned long hi, unsigned long *target);
void kinstr_module_table_of(unsigned long a, enum kinstr_patch_sites which, struct kinstr_span *t);
/* kinstr.ko's own jump entries and static call sites (the hit path's closure reads them). */
void kinstr_module_own_tables(struct kinstr_span *jl, struct kinstr_span *sc);
int kinstr_module_info(struct kinstr_module_info *mi);

/*
 * hitpath.c: the functions kinstr's probe context can reach (KINSTR_R_HIT_PATH), closed over
 * direct branches from the roots each part of the module names (kinstr_*_hit_roots()).
 */
#define KINSTR_HIT_ROOTS_MAX 32
int kinstr_hitpath_init(const unsigned long *roots, size_t nroots);
void kinstr_hitpath_exit(void);
bool kinstr_hitpath_has(unsigned long a, unsigned int len);
bool kinstr_hitpath_spans(const struct kinstr_span **spans, size_t *n);

/*
 * The recursion guard of every action that calls out (timers, trace): one bit per context level
 * (task, softirq, irq, NMI) per CPU. A probe hit inside kinstr's own action at the same level is
 * recursion through a function the hit path reaches in a way the closure cannot see (an
 * indirect call): its action is skipped and counted as missed. Preemption stays off inside so
 * the bit is the CPU's own.
 */
DECLARE_PER_CPU(u8, kinstr_in_action);
static __always_inline bool kinstr_action_enter(u8 *bit)
{
	unsigned int pc;

	preempt_disable_notrace();
	/* task level, the common case, in one test; interrupt_context_level() otherwise */
	pc = preempt_count();
	*bit = likely(!(pc & (NMI_MASK | HARDIRQ_MASK | SOFTIRQ_OFFSET))) ? 1 : 1U << interrupt_context_level();
	if (unlikely(__this_cpu_read(kinstr_in_action) & *bit)) {
		preempt_enable_notrace();
		return false;
	}
	/* one instruction: an interrupt sees the bit either set or not, never half */
	this_cpu_or(kinstr_in_action, *bit);
	barrier();	/* the action's accesses stay inside the guarded region */
	return true;
}

static __always_inline void kinstr_action_exit(u8 bit)
{
	barrier();	/* ... and are done before the bit clears */
	this_cpu_and(kinstr_in_action, ~bit);
	preempt_enable_notrace();
}

/* fence.c: kprobes refuse the bytes of kinstr's sites (entries on the kprobe blacklist). */
struct kinstr_fence {
	struct kprobe_blacklist_entry e;
	struct hlist_node node;
	bool in;
};
bool kinstr_fence_available(void);
void kinstr_fence_lock(void);
void kinstr_fence_unlock(void);
bool kinstr_fence_kprobed(unsigned long a, unsigned int len);
void kinstr_fence_add(struct kinstr_fence *f, unsigned long site, unsigned int len);
void kinstr_fence_del(struct kinstr_fence *f);
bool kinstr_fence_blacklisted(unsigned long a, const char *sym);

/* limits.c: bounds per descriptor (EDQUOT) and in total (ENOSPC). */
struct kinstr_limits;
enum kinstr_res { KINSTR_RES_PROBES, KINSTR_RES_TRACE_BYTES, KINSTR_RES_TIMERS, KINSTR_RES_NR };
int kinstr_limit_charge(enum kinstr_res r, u64 *fd_used, u64 n);
void kinstr_limit_release_fd(u64 *fd_used, u64 n);
void kinstr_limit_release(enum kinstr_res r, u64 n);
void kinstr_limits_read(struct kinstr_limits *l);
/* The memory areas hold (text, per-CPU), from allocation to the free after quiescence. */
enum kinstr_mem { KINSTR_MEM_AREAS, KINSTR_MEM_TEXT_BYTES, KINSTR_MEM_PERCPU_BYTES, KINSTR_MEM_NR };
void kinstr_mem_add(enum kinstr_mem m, s64 n);
void kinstr_limits_init(void);

/* policy.c: the site-safety predicates, each one rule. */
u32 kinstr_policy_check(unsigned long addr, unsigned int len);
long kinstr_ioctl_check(void __user *uarg);
/* KINSTR_IOC_HELD (patch/protocol.c): what every session holds now. */
long kinstr_ioctl_held(void __user *uarg);

/* verify.c: one probe request against the kernel's decoder and the site-safety rules. */
struct kinstr_probe;
struct kinstr_verdict {
	u32 refusal;		/* enum kinstr_refusal */
	u32 reasons;		/* KINSTR_REFUSE_RESERVED */
	u32 offset;		/* from the symbol: the instruction containing site, or a target */
	u32 insn_len;
	unsigned long addr;
};
int kinstr_verify_probe(const struct kinstr_probe *p, unsigned long body_addr,
			struct kinstr_verdict *v);
/* The decoder's helpers, for cache.c (enum: 0 none, 1 jmp, 2 jcc, 3 call, 4 loop/jrcxz). */
enum kinstr_branch { KINSTR_BR_NONE, KINSTR_BR_JMP, KINSTR_BR_JCC, KINSTR_BR_CALL, KINSTR_BR_LOOP };
int kinstr_decode_live(struct insn *insn, unsigned long addr);
int kinstr_decode_bytes(struct insn *insn, const u8 *buf, int len);
int kinstr_branch_of(const struct insn *insn, int *cc);
unsigned long kinstr_branch_target(const struct insn *insn, unsigned long addr);
bool kinstr_rip_relative(const struct insn *insn);
bool kinstr_indirect_branch(const struct insn *insn);
bool kinstr_function_of(unsigned long site, unsigned long *start, unsigned long *size);
unsigned long kinstr_fentry_of(unsigned long start);
/* Proven locally: the instruction at site overwrites every status flag before reading one. */
bool kinstr_flags_dead_at(unsigned long site);
bool kinstr_flags_dead_by_abi(unsigned long site);

/* session.c: sessions (one per open file) and their ioctls; patch/ does the patching. */
struct kinstr_session;
struct kinstr_session *kinstr_session_new(void);
void kinstr_session_free(struct kinstr_session *s);
long kinstr_session_ioctl(struct kinstr_session *s, unsigned int cmd, void __user *uarg);
int kinstr_probes_init(void);
void kinstr_probes_exit(void);
size_t kinstr_probes_hit_roots(unsigned long *roots);

/* trace.c: trace channels (one per session), the trace action, the reader's ioctls. */
struct kinstr_chan;
struct kinstr_trace_spec;
struct pt_regs;
struct vm_area_struct;
struct file;
struct poll_table_struct;
void kinstr_chan_get(struct kinstr_chan *ch);
void kinstr_chan_put(struct kinstr_chan *ch);
long kinstr_trace_create(struct kinstr_chan **chp, void __user *uarg);
long kinstr_trace_subbuf(struct kinstr_chan *ch, unsigned int cmd, void __user *uarg);
long kinstr_trace_flush(struct kinstr_chan *ch, void __user *uarg);
long kinstr_trace_stats(struct kinstr_chan *ch, void __user *uarg);
__poll_t kinstr_trace_poll(struct kinstr_chan *ch, struct file *file, struct poll_table_struct *pt);
int kinstr_trace_mmap(struct kinstr_chan *ch, struct vm_area_struct *vma);
u32 kinstr_trace_spec_len(const struct kinstr_trace_spec *s);
size_t kinstr_trace_hit_roots(unsigned long *roots);
void kinstr_trace_record(struct kinstr_chan *ch, const struct kinstr_trace_spec *spec, u32 len,
			 struct pt_regs *regs);
int kinstr_session_mmap(struct kinstr_session *s, struct vm_area_struct *vma);
__poll_t kinstr_session_poll(struct kinstr_session *s, struct file *file, struct poll_table_struct *pt);

/* timing.c: per-thread start/stop timers for the profiler. */
struct kinstr_timers;
void kinstr_timers_get(struct kinstr_timers *t);
void kinstr_timers_put(struct kinstr_timers *t);
u32 kinstr_timers_count(const struct kinstr_timers *t);
long kinstr_timers_create(struct kinstr_timers **tp, void __user *uarg);
long kinstr_timers_read(struct kinstr_timers *t, void __user *uarg);
long kinstr_timer_paths(struct kinstr_timers *t, void __user *uarg);
size_t kinstr_timing_hit_roots(unsigned long *roots);
int kinstr_timing_init(void);
void kinstr_timing_exit(void);

#endif
