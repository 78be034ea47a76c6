/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kinstr's ioctl ABI on /dev/kinstr, shared by kinstr.ko and libkinstr.
 *
 * Every argument struct starts with a __u32 size that the caller sets to sizeof() of the struct
 * as it knows it, so that structs can grow (as perf_event_attr and libbpf's opts do):
 *   - input fields the module does not know must be zero, or the call fails with E2BIG;
 *   - output structs are filled up to min(caller's size, module's size); the module writes the
 *     number of bytes it filled back into size and zeroes the caller's bytes beyond that;
 *   - a size smaller than the first published version of the struct fails with EINVAL.
 */
#ifndef _UAPI_LINUX_KINSTR_H
#define _UAPI_LINUX_KINSTR_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KINSTR_DEVICE		"/dev/kinstr"
#define KINSTR_ABI_MAJOR	0	/* incompatible changes */
#define KINSTR_ABI_MINOR	20	/* compatible additions */

/* The ioctl numbers carry no size: the struct's leading size field says how much there is. */
#define KINSTR_IOC_MAGIC	0xb7
#define KINSTR_IOC_VERSION	_IO(KINSTR_IOC_MAGIC, 0x01)	/* struct kinstr_version */
#define KINSTR_IOC_DEBUG_INFO	_IO(KINSTR_IOC_MAGIC, 0x02)	/* struct kinstr_debug_info */
#define KINSTR_IOC_READ		_IO(KINSTR_IOC_MAGIC, 0x03)	/* struct kinstr_read */
#define KINSTR_IOC_CHECK	_IO(KINSTR_IOC_MAGIC, 0x04)	/* struct kinstr_check */
#define KINSTR_IOC_LAYOUT	_IO(KINSTR_IOC_MAGIC, 0x05)	/* struct kinstr_layout */
#define KINSTR_IOC_MODULE	_IO(KINSTR_IOC_MAGIC, 0x06)	/* struct kinstr_module_info */
#define KINSTR_IOC_HIT_PATH	_IO(KINSTR_IOC_MAGIC, 0x07)	/* struct kinstr_hit_path */
#define KINSTR_IOC_LIMITS	_IO(KINSTR_IOC_MAGIC, 0x08)	/* struct kinstr_limits */
#define KINSTR_IOC_HELD		_IO(KINSTR_IOC_MAGIC, 0x09)	/* struct kinstr_held */
#define KINSTR_IOC_ALLOC	_IO(KINSTR_IOC_MAGIC, 0x10)	/* struct kinstr_alloc */
#define KINSTR_IOC_INSTALL	_IO(KINSTR_IOC_MAGIC, 0x11)	/* struct kinstr_install */
#define KINSTR_IOC_REMOVE	_IO(KINSTR_IOC_MAGIC, 0x12)	/* struct kinstr_remove */
#define KINSTR_IOC_COUNTS	_IO(KINSTR_IOC_MAGIC, 0x13)	/* struct kinstr_counts */
#define KINSTR_IOC_SYNC		_IO(KINSTR_IOC_MAGIC, 0x14)	/* struct kinstr_sync */
#define KINSTR_IOC_CACHE_COUNTS	_IO(KINSTR_IOC_MAGIC, 0x15)	/* struct kinstr_cache_counts */
#define KINSTR_IOC_DISARM	_IO(KINSTR_IOC_MAGIC, 0x16)	/* struct kinstr_disarm */
#define KINSTR_IOC_SCOPE	_IO(KINSTR_IOC_MAGIC, 0x17)	/* struct kinstr_scope */
#define KINSTR_IOC_TALLY_CREATE	_IO(KINSTR_IOC_MAGIC, 0x18)	/* struct kinstr_tally_create */
#define KINSTR_IOC_TALLY_READ	_IO(KINSTR_IOC_MAGIC, 0x19)	/* struct kinstr_tally_read */
#define KINSTR_IOC_SPAN_CREATE	_IO(KINSTR_IOC_MAGIC, 0x1a)	/* struct kinstr_span_create */
#define KINSTR_IOC_SPAN_READ	_IO(KINSTR_IOC_MAGIC, 0x1b)	/* struct kinstr_span_read */
#define KINSTR_IOC_TRACE_CREATE	_IO(KINSTR_IOC_MAGIC, 0x20)	/* struct kinstr_trace_create */
#define KINSTR_IOC_TRACE_GET	_IO(KINSTR_IOC_MAGIC, 0x21)	/* struct kinstr_trace_subbuf */
#define KINSTR_IOC_TRACE_PUT	_IO(KINSTR_IOC_MAGIC, 0x22)	/* struct kinstr_trace_subbuf */
#define KINSTR_IOC_TRACE_FLUSH	_IO(KINSTR_IOC_MAGIC, 0x23)	/* struct kinstr_trace_flush */
#define KINSTR_IOC_TRACE_STATS	_IO(KINSTR_IOC_MAGIC, 0x24)	/* struct kinstr_trace_stats */
#define KINSTR_IOC_TIMERS_CREATE _IO(KINSTR_IOC_MAGIC, 0x30)	/* struct kinstr_timers_create */
#define KINSTR_IOC_TIMERS_READ	_IO(KINSTR_IOC_MAGIC, 0x31)	/* struct kinstr_timers_read */
#define KINSTR_IOC_TIMER_PATHS	_IO(KINSTR_IOC_MAGIC, 0x32)	/* struct kinstr_timer_paths */
#define KINSTR_IOC_TIMER_BY	_IO(KINSTR_IOC_MAGIC, 0x33)	/* struct kinstr_timer_by */

/* Largest struct size accepted at all; beyond it E2BIG without reading the tail. */
#define KINSTR_MAX_STRUCT_SIZE	4096

/* KINSTR_IOC_VERSION: output only. */
struct kinstr_version {
	__u32 size;
	__u16 abi_major;
	__u16 abi_minor;
	__u64 features;			/* KINSTR_FEAT_* */
	char module_version[32];	/* NUL-terminated, e.g. "0.1.0" */
	char kernel_release[65];	/* utsname()->release of the running kernel */
	__u8 __reserved[7];
};
#define KINSTR_VERSION_SIZE_VER0	120

/* Nothing is offered yet but the version and debug ioctls; bits appear as features land. */
#define KINSTR_FEAT_DEBUG_INFO	(1ULL << 0)
#define KINSTR_FEAT_READ	(1ULL << 1)
#define KINSTR_FEAT_CHECK	(1ULL << 2)
#define KINSTR_FEAT_LAYOUT	(1ULL << 3)
#define KINSTR_FEAT_PROBES	(1ULL << 4)	/* ALLOC/INSTALL/REMOVE/COUNTS: count probes */
#define KINSTR_FEAT_MODULE_TEXT	(1ULL << 5)	/* READ/CHECK/INSTALL in loaded modules' text; MODULE */
#define KINSTR_FEAT_FTRACE_PROBES (1ULL << 6)	/* KINSTR_PROBE_FTRACE; KINSTR_REFUSE_CROSSES_END (ABI 0.3) */
#define KINSTR_FEAT_FTRACE_TRACE (1ULL << 7)	/* KINSTR_ACTION_TRACE on KINSTR_PROBE_FTRACE (ABI 0.4) */
#define KINSTR_FEAT_VERIFY_ONLY	(1ULL << 8)	/* KINSTR_INSTALL_F_VERIFY_ONLY (ABI 0.4) */
#define KINSTR_FEAT_HIT_PATH	(1ULL << 9)	/* KINSTR_R_HIT_PATH, KINSTR_IOC_HIT_PATH (ABI 0.5) */
#define KINSTR_FEAT_MISSED	(1ULL << 10)	/* kinstr_counts.missed: the recursion guard (ABI 0.5) */
#define KINSTR_FEAT_LIMITS	(1ULL << 11)	/* KINSTR_IOC_LIMITS; EDQUOT/ENOSPC at a limit (ABI 0.5) */
#define KINSTR_FEAT_KPROBE_FENCE (1ULL << 12)	/* kprobes refuse kinstr's sites (ABI 0.5) */
#define KINSTR_FEAT_CODE_CACHE	(1ULL << 13)	/* code-cache areas, KINSTR_ACTION_ENTER (ABI 0.9) */
#define KINSTR_FEAT_DISARM	(1ULL << 14)	/* KINSTR_IOC_DISARM (ABI 0.9) */
#define KINSTR_FEAT_BPF		(1ULL << 15)	/* KINSTR_ACTION_BPF, kinstr_install.bpf (ABI 0.11) */
#define KINSTR_FEAT_CHECK_ONLY	(1ULL << 16)	/* kinstr_check.only (ABI 0.12) */
#define KINSTR_FEAT_HELD	(1ULL << 17)	/* KINSTR_IOC_HELD, KINSTR_R_HELD (ABI 0.14) */
#define KINSTR_FEAT_NOP		(1ULL << 18)	/* KINSTR_ACTION_NOP (ABI 0.15) */
#define KINSTR_FEAT_SCOPE	(1ULL << 19)	/* KINSTR_IOC_SCOPE (ABI 0.16) */
#define KINSTR_FEAT_PRED	(1ULL << 20)	/* value predicates: kinstr_install.preds, counts.filtered (ABI 0.17) */
#define KINSTR_FEAT_TALLY	(1ULL << 21)	/* KINSTR_ACTION_TALLY, KINSTR_IOC_TALLY_* (ABI 0.18) */
#define KINSTR_FEAT_SPAN	(1ULL << 22)	/* KINSTR_ACTION_SPAN, KINSTR_IOC_SPAN_* (ABI 0.18) */
#define KINSTR_FEAT_TIMER_BY	(1ULL << 23)	/* KINSTR_TIMERS_F_BY_*, KINSTR_IOC_TIMER_BY (ABI 0.18) */
#define KINSTR_FEAT_CACHE_TIMER	(1ULL << 24)	/* KINSTR_CACHE_M_TIMER: timers in a code cache (ABI 0.19) */
#define KINSTR_FEAT_LAID_COPY	(1ULL << 25)	/* KINSTR_CACHE_IMAGE_LAID, KINSTR_CACHE_RULE_FALL (ABI 0.20) */

/* KINSTR_IOC_DEBUG_INFO: output only; addresses the module resolved at load time. */
struct kinstr_debug_info {
	__u32 size;
	__u32 flags;			/* KINSTR_DEBUG_* */
	__u64 kallsyms_lookup_name;	/* found through a kprobe on it (it is not exported) */
	__u64 stext;			/* _stext */
	__u64 etext;			/* _etext */
	/*
	 * Where the kernel sends a return (ABI 0.6): the return thunk it chose at boot, which
	 * every `jmp __x86_return_thunk` of compiled code was rewritten to; 0 with
	 * KINSTR_DEBUG_RET_BARE when the CPU needs none (returns are `ret; int3`).
	 */
	__u64 return_thunk;
	__u64 return_thunk_sym;		/* __x86_return_thunk (0: none) */
};
#define KINSTR_DEBUG_INFO_SIZE_VER0	32
#define KINSTR_DEBUG_INFO_SIZE_VER1	48

#define KINSTR_DEBUG_LOCKDOWN	(1U << 0)	/* the kernel is locked down: patching refused */
#define KINSTR_DEBUG_RET_BARE	(1U << 1)	/* a relocated bare ret stays a bare ret (ABI 0.6) */
#define KINSTR_DEBUG_RET_ITS	(1U << 2)	/* the thunk depends on the return's address: a bare
						 * ret is not relocated (ABI 0.6) */
#define KINSTR_DEBUG_IBT	(1U << 3)	/* the kernel is built with IBT: functions may start
						 * with an ENDBR (ABI 0.6) */

/*
 * KINSTR_IOC_READ: copy live kernel memory to user space, fault-safely. Only core kernel text
 * and the read-only tables that say which text is reserved (__ex_table, __jump_table,
 * static_call_sites, __bug_table) may be read, and the same of a live module (its core text and
 * the tables KINSTR_IOC_MODULE reports); anything else fails with ERANGE. A fault in
 * kernel memory fails with EIO (copied says how far it got).
 */
struct kinstr_read {
	__u32 size;
	__u32 flags;			/* none defined: must be 0 */
	__u64 addr;			/* kernel address */
	__u64 len;			/* at most KINSTR_READ_MAX */
	__u64 buf;			/* user pointer */
	__u64 copied;			/* out: bytes copied */
};
#define KINSTR_READ_SIZE_VER0	40
#define KINSTR_READ_MAX		(64ULL << 20)

/*
 * Why a byte range may not be patched, as the module sees it with the kernel's own predicates.
 * A range can have several reasons; each is one bit. User space names them
 * (kinstr_site_reason__str()).
 */
enum kinstr_site_reason {
	KINSTR_R_NOT_TEXT = 0,		/* not in core kernel text nor a live module's core text */
	KINSTR_R_OWN_MODULE,		/* inside kinstr.ko itself */
	KINSTR_R_ENTRY_TEXT,		/* .entry.text / .irqentry.text */
	KINSTR_R_NOINSTR_TEXT,		/* .noinstr.text */
	KINSTR_R_KPROBES_TEXT,		/* .kprobes.text */
	KINSTR_R_KPROBE_BLACKLIST,	/* within_kprobe_blacklist() */
	KINSTR_R_CFI_SYMBOL,		/* a __cfi_ or __pfx_ symbol */
	KINSTR_R_FTRACE,		/* overlaps an ftrace (fentry) site */
	KINSTR_R_JUMP_LABEL,		/* overlaps a jump label */
	KINSTR_R_STATIC_CALL,		/* overlaps a static call site */
	KINSTR_R_ALTERNATIVE,		/* overlaps a patchable alternative the kernel still tracks */
	KINSTR_R_BUG,			/* holds a BUG/WARN ud2 (find_bug()) */
	KINSTR_R_EXTABLE,		/* holds an instruction with an exception-table fixup */
	KINSTR_R_UNVERIFIABLE,		/* a kernel predicate needed to decide is unavailable */
	KINSTR_R_KPROBE,		/* a kprobe (or optprobe jump) sits on or just before it */
	KINSTR_R_MODULE_STATE,		/* in a module that is loading or unloading */
	KINSTR_R_HIT_PATH,		/* a function kinstr's own probe context can reach */
	KINSTR_R_DIE_NOTIFIER,		/* in a function on the kernel's die notifier chain, which
					 * every int3 runs (notify_die()) */
	KINSTR_R_ENDBR,			/* a function's ENDBR (rules/entry.h), where indirect
					 * calls land (ABI 0.6) */
	KINSTR_R_SC_TRAMPOLINE,		/* a static call's trampoline (__SCT__*, rules/symbols.h),
					 * which static_call_update() rewrites (ABI 0.13) */
	KINSTR_R_HELD,			/* a kinstr session holds it: a probe's patched bytes, or a
					 * function a code cache runs (ABI 0.14: what KINSTR_IOC_HELD
					 * lists; KINSTR_IOC_CHECK does not say it) */
	KINSTR_R_NR
};

/*
 * KINSTR_IOC_HELD: what every session holds now (ABI 0.14), so that user space says "held"
 * instead of reading another session's patch as the kernel's code: each published probe's
 * patched bytes and each function a code cache runs, with the process that holds it.
 */
enum kinstr_held_kind {
	KINSTR_HELD_PROBE,		/* a probe's patched bytes (a code cache's entry points too) */
	KINSTR_HELD_FTRACE,		/* a probe through ftrace at a function's ftrace site */
	KINSTR_HELD_CACHE,		/* a function a code cache runs: its whole code */
	KINSTR_HELD_NR
};

struct kinstr_held_range {
	__u64 addr;
	__u32 len;
	__u32 pid;			/* the thread group that made it */
	__u32 kind;			/* enum kinstr_held_kind */
	__u32 __reserved;
};

struct kinstr_held {
	__u32 size;
	__u32 flags;			/* none defined: must be 0 */
	__u64 ranges;			/* user pointer to struct kinstr_held_range[count] */
	__u32 count;			/* in: room for so many; out: how many there are (more than
					 * the room: call again with more) */
	__u32 __reserved;
};
#define KINSTR_HELD_SIZE_VER0	24

/* One range to check: [addr, addr + len). */
struct kinstr_check_range {
	__u64 addr;
	__u32 len;			/* 1..16 */
	__u32 reasons;			/* out: 1 << enum kinstr_site_reason for each that applies */
};

/* KINSTR_IOC_CHECK: classify many ranges in one call. */
struct kinstr_check {
	__u32 size;
	__u32 flags;			/* KINSTR_CHECK_F_*; others must be 0 */
	__u64 ranges;			/* user pointer to struct kinstr_check_range[count] */
	__u32 count;			/* at most KINSTR_CHECK_MAX */
	/*
	 * 1 << KINSTR_R_* of the reasons asked for (ABI 0.12; 0: all): each range's reasons are the
	 * full check's and only, plus KINSTR_R_UNVERIFIABLE where a predicate needed could not
	 * decide. The ftrace site and the die notifier each have a predicate of their own, so
	 * asking for those alone is cheap: what user space learns ftrace's records and the die
	 * chain by, at every start. EINVAL for a bit at or above KINSTR_R_NR, or with flags.
	 */
	__u32 only;
};
#define KINSTR_CHECK_SIZE_VER0	24
/*
 * Decide jump labels, static calls, exception entries and the kprobe blacklist with the kernel's
 * own predicates (jump_label_text_reserved(), ...), which walk whole tables per call, instead of
 * the module's indexes of the same tables (ABI 0.7): slow, for tests that compare the two.
 */
#define KINSTR_CHECK_F_KERNEL	(1U << 0)
#define KINSTR_CHECK_MAX	(1U << 20)

/* A table of the running kernel whose entries locate reserved text by self-relative offsets. */
struct kinstr_table {
	__u64 addr;			/* first entry (0: the kernel has no such table) */
	__u64 bytes;			/* whole table */
	__u32 entry_size;		/* sizeof() of one entry in this kernel's build */
	__u32 addr_off;			/* offset in an entry of the __s32 that, added to its own
					 * address, gives the text address the entry is about */
	__u32 target_off;		/* KINSTR_TABLE_HAS_TARGET: the same for where control
					 * may go from there (jump label target, extable fixup) */
	__u32 flags;			/* KINSTR_TABLE_* */
};
#define KINSTR_TABLE_HAS_TARGET	(1U << 0)

struct kinstr_span64 {
	__u64 start, end;		/* [start, end); 0, 0 when the kernel has none */
};

/*
 * KINSTR_IOC_LAYOUT: output only. Where the running kernel keeps its text and the tables that
 * reserve parts of it, with the entry layouts of this build, so that user space can classify
 * sites from live memory (read with KINSTR_IOC_READ) without hard-coding struct layouts.
 */
struct kinstr_layout {
	__u32 size;
	__u32 flags;
	struct kinstr_span64 text;		/* _stext.._etext */
	struct kinstr_span64 entry_text;
	struct kinstr_span64 irqentry_text;
	struct kinstr_span64 noinstr_text;
	struct kinstr_span64 kprobes_text;
	struct kinstr_table ex_table;		/* faulting instruction -> fixup */
	struct kinstr_table jump_table;		/* jump labels (2- or 5-byte sites) */
	struct kinstr_table static_call_sites;	/* 5-byte call/jmp sites */
	struct kinstr_table bug_table;		/* ud2 of BUG()/WARN() */
};
#define KINSTR_LAYOUT_SIZE_VER0	216

/*
 * KINSTR_IOC_MODULE: the loaded module whose memory holds addr: its name, its core text (init
 * text is never probed) and the tables that reserve parts of it, laid out like the core
 * kernel's (struct kinstr_layout). ENOENT when no module holds addr. Only a live module's text
 * and tables may be read, checked or patched, and never kinstr's own.
 */
struct kinstr_module_info {
	__u32 size;
	__u32 flags;			/* out: KINSTR_MODULE_* (in: must be 0) */
	__u64 addr;			/* in: an address inside the module */
	char name[56];			/* out: NUL-terminated */
	struct kinstr_span64 text;	/* out: core text, [base, base + text_size) */
	struct kinstr_span64 noinstr_text;
	struct kinstr_span64 kprobes_text;
	struct kinstr_table ex_table;
	struct kinstr_table jump_table;
	struct kinstr_table static_call_sites;
	struct kinstr_table bug_table;
};
#define KINSTR_MODULE_INFO_SIZE_VER0	248

#define KINSTR_MODULE_LIVE	(1U << 0)	/* MODULE_STATE_LIVE (else loading or unloading) */
#define KINSTR_MODULE_OWN	(1U << 1)	/* kinstr.ko itself: never patched */

/*
 * KINSTR_IOC_HIT_PATH: the functions kinstr's probe context can reach (KINSTR_R_HIT_PATH), as
 * the module found them at load time: the closure over direct branches from its own hit-path
 * functions. spans[] gets up to cap entries, sorted; count says how many there are.
 * KINSTR_HIT_PATH_F_INCOMPLETE: the closure could not be computed, every range is refused.
 */
struct kinstr_hit_path {
	__u32 size;
	__u32 flags;			/* out: KINSTR_HIT_PATH_F_* (in: must be 0) */
	__u32 cap;			/* in: entries spans[] can hold */
	__u32 count;			/* out: entries that exist (may exceed cap) */
	__u64 spans;			/* user pointer to struct kinstr_span64[cap] */
};
#define KINSTR_HIT_PATH_SIZE_VER0	24
#define KINSTR_HIT_PATH_F_INCOMPLETE	(1U << 0)

/*
 * KINSTR_IOC_LIMITS: the bounds on what descriptors may hold (module parameters, see
 * /sys/module/kinstr/parameters), and what is in use. At a per-descriptor bound ALLOC (and
 * TRACE_CREATE, TIMERS_CREATE) fail with EDQUOT; at a total bound with ENOSPC.
 */
struct kinstr_limits {
	__u32 size;
	__u32 flags;			/* in: must be 0 */
	__u64 max_probes_per_fd;	/* out: the limits */
	__u64 max_probes;
	__u64 max_trace_bytes_per_fd;
	__u64 max_trace_bytes;
	__u64 max_timers_per_fd;
	__u64 max_timers;
	__u64 probes;			/* out: in use now, all descriptors */
	__u64 trace_bytes;
	__u64 timers;
	/*
	 * (ABI 0.10) out: memory held now, all descriptors, until the free after quiescence:
	 * areas, their executable bytes (slots, copies) and per-CPU bytes (counters; per CPU)
	 */
	__u64 areas;
	__u64 text_bytes;
	__u64 percpu_bytes;
};
#define KINSTR_LIMITS_SIZE_VER0	80
#define KINSTR_LIMITS_SIZE_VER1	104

/*
 * Probes. A batch of probes lives in one *area* of patch space, near kernel text: one slot of
 * KINSTR_SLOT_SIZE bytes per probe. The module writes each slot's prologue (the action); user
 * space relocates the displaced instructions to run at slot + KINSTR_SLOT_BODY, so it must know
 * the area's address first:
 *   1. KINSTR_IOC_ALLOC: reserve an area of count slots; learn its id and address.
 *   2. KINSTR_IOC_INSTALL: hand over every probe of the area at once; the module verifies each
 *      (kernel decoder, site-safety rules, expected bytes, relocation) and refuses the whole
 *      batch if one fails, naming it; else it patches them all with one quiescence wait.
 *   3. KINSTR_IOC_COUNTS: read the hit counters.  4. KINSTR_IOC_REMOVE: undo the whole area.
 * Areas belong to the file descriptor: closing it removes everything it installed.
 *
 * Quiescence is asynchronous: INSTALL returns once an int3 is on every site (the probes act from
 * then on, through the int3 handler) and a worker writes the jumps after an rcu-tasks wait,
 * unless KINSTR_INSTALL_F_WAIT asks to return with the jumps in place. REMOVE returns with the
 * text restored; the worker frees the slots after quiescence. KINSTR_IOC_SYNC waits until the
 * worker has nothing left to do (and, ABI 0.16, until the tracepoints that scopes no longer in use
 * needed are unregistered: the kernel's text is then as kinstr found it).
 */
#define KINSTR_SLOT_SIZE	128
#define KINSTR_SLOT_BODY	64	/* relocated bytes start here, at most 56 of them */
#define KINSTR_SLOT_BODY_MAX	(KINSTR_SLOT_SIZE - KINSTR_SLOT_BODY - 8)
#define KINSTR_AREA_MAX_PROBES	65536	/* 4096 before ABI 0.7 */
#define KINSTR_MAX_DISPLACED	16

struct kinstr_alloc {
	__u32 size;
	__u32 count;			/* slots, 1..KINSTR_AREA_MAX_PROBES */
	__u32 area;			/* out: id for INSTALL/REMOVE/COUNTS */
	__u32 __reserved;
	__u64 addr;			/* out: address of slot 0 */
	/*
	 * A code cache beside the slots (KINSTR_FEAT_CODE_CACHE, ABI 0.9): cache_size bytes of
	 * executable memory for instrumented copies of functions (at most KINSTR_CACHE_MAX_BYTES)
	 * and cache_counters per-CPU __u64 counters for them (at most KINSTR_CACHE_MAX_COUNTERS);
	 * both 0 for none. The counters come in chunks of KINSTR_CACHE_CHUNK (the per-CPU
	 * allocator's limit): counter i is at chunk[i / KINSTR_CACHE_CHUNK] + 8 (i % CHUNK), so a
	 * copy's counters should not straddle two chunks.
	 */
	__u64 cache_size;
	__u32 cache_counters;
	__u32 __reserved2;
	__u64 cache_addr;		/* out: where the copies run */
	__u64 cache_chunks;		/* in: user pointer to __u64[ceil(cache_counters / CHUNK)],
					 * out there: each chunk's __percpu address */
};
#define KINSTR_ALLOC_SIZE_VER0	24
#define KINSTR_ALLOC_SIZE_VER1	56
#define KINSTR_CACHE_MAX_BYTES		(64U << 20)
#define KINSTR_CACHE_MAX_COUNTERS	(1U << 20)
#define KINSTR_CACHE_CHUNK		4096

enum kinstr_probe_kind {
	KINSTR_PROBE_JUMP = 1,		/* a 5-byte jmp replaces [site, site + displaced_len) */
	KINSTR_PROBE_TRAP = 2,		/* an int3 at site; the one instruction runs in the slot */
	/*
	 * site is a function's ftrace NOP (its first byte): ftrace calls the slot directly
	 * (register_ftrace_direct), which runs the action and goes on at site + 5. The text stays
	 * ftrace's: displaced_len 5, body_len 0, expected[] not compared. COUNT and TIMER actions;
	 * TRACE too with KINSTR_FEAT_FTRACE_TRACE (its pt_regs are the function's at its entry).
	 */
	KINSTR_PROBE_FTRACE = 3,
};

enum kinstr_action {
	KINSTR_ACTION_COUNT = 1,	/* per-CPU hit counter */
	KINSTR_ACTION_TRACE = 2,	/* a record into the session's trace buffers (and the counter) */
	KINSTR_ACTION_TIMER_START = 3,	/* start timer `arg` of the session's timers for this thread */
	KINSTR_ACTION_TIMER_STOP = 4,	/* stop it: one call of `arg`, its wall and on-CPU time */
	/*
	 * (ABI 0.9) A code cache's entry or re-entry point: the splice leads to the area's cache at
	 * cache_addr + arg, where the copy of the instruction at site (or its counter) starts; no
	 * slot, no body (body_len 0). The install's struct kinstr_cache_image says what the copy is;
	 * the module proves it first. JUMP or TRAP kinds only.
	 */
	KINSTR_ACTION_ENTER = 5,
	/*
	 * (ABI 0.11, KINSTR_FEAT_BPF) run a BPF program of kprobe type with the site's pt_regs
	 * (kinstr_install.bpf[i] names it), as a kprobe would: the kernel's guard against one
	 * tracing program inside another, its run context (bpf_get_attach_cookie() is the request's
	 * cookie). JUMP, TRAP and FTRACE kinds.
	 */
	KINSTR_ACTION_BPF = 6,
	/*
	 * (ABI 0.15, KINSTR_FEAT_NOP) nothing: the slot holds the displaced instructions and the
	 * jump back, no counter (hits stay 0), no call. A probe's bare cost, for benchmarks. JUMP,
	 * TRAP and FTRACE kinds.
	 */
	KINSTR_ACTION_NOP = 7,
	/*
	 * (ABI 0.18, KINSTR_FEAT_TALLY) count the hit in the descriptor's tally (KINSTR_IOC_TALLY_CREATE)
	 * under its key: the comm, process, thread or the spec's first value; the request's
	 * kinstr_install.specs entry names its event and value, as for TRACE. JUMP, TRAP and FTRACE kinds.
	 */
	KINSTR_ACTION_TALLY = 8,
	/*
	 * (ABI 0.18, KINSTR_FEAT_SPAN) a span's start (arg 0) or stop (arg 1) in the descriptor's
	 * spans (KINSTR_IOC_SPAN_CREATE), keyed by thread, process or the spec's first value (the
	 * request's kinstr_install.specs entry, as for TRACE). JUMP, TRAP and FTRACE kinds.
	 */
	KINSTR_ACTION_SPAN = 9,
};

struct kinstr_probe {
	__u64 site;			/* kernel text address */
	__u8 kind;			/* enum kinstr_probe_kind */
	__u8 action;			/* enum kinstr_action */
	__u8 displaced_len;		/* bytes the splice displaces (trap: the instruction's) */
	__u8 body_len;			/* bytes of body[] */
	__u32 arg;			/* KINSTR_ACTION_TIMER_*: the timer; else 0 */
	__u8 expected[KINSTR_MAX_DISPLACED];	/* the bytes analysed: must equal memory */
	__u8 body[KINSTR_SLOT_BODY_MAX];	/* displaced instructions relocated to the slot */
};

/*
 * Why the module refused a probe (enum kinstr_refusal in kinstr_install.refusal), beside the
 * errno of the ioctl, so that the CLI can name the rule.
 */
enum kinstr_refusal {
	KINSTR_REFUSE_NONE,
	KINSTR_REFUSE_RESERVED,		/* reasons: see refusal_reasons (enum kinstr_site_reason) */
	KINSTR_REFUSE_NOT_BOUNDARY,	/* site not an instruction start decoding from the symbol */
	KINSTR_REFUSE_BAD_LENGTH,	/* displaced_len does not end on an instruction boundary */
	KINSTR_REFUSE_BYTES_DIFFER,	/* expected[] differs from the live text */
	KINSTR_REFUSE_BAD_RELOCATION,	/* body[] does not do what the displaced instructions did */
	KINSTR_REFUSE_BRANCH_TARGET,	/* a branch of the function lands inside the displaced bytes */
	KINSTR_REFUSE_INDIRECT_JMP,	/* jump probe in a function with an indirect jmp */
	KINSTR_REFUSE_UNSAFE_INSN,	/* an instruction that may not run out of line */
	KINSTR_REFUSE_BUSY,		/* the site is already probed */
	KINSTR_REFUSE_BAD_REQUEST,	/* a field is out of range */
	KINSTR_REFUSE_LOCKDOWN,		/* the kernel is locked down */
	KINSTR_REFUSE_CROSSES_END,	/* the displaced bytes run past the function's symbol */
	/*
	 * (ABI 0.9) the code cache does not do what the original does: refusal_reasons is the
	 * rule (enum kinstr_cache_rule), refusal_addr the original instruction (or function) and
	 * refusal_offset the offset in the cache where the module looked
	 */
	KINSTR_REFUSE_BAD_COPY,
	/*
	 * (ABI 0.11) the BPF program of a KINSTR_ACTION_BPF probe may not run there:
	 * refusal_reasons is 1 << enum kinstr_bpf_reason
	 */
	KINSTR_REFUSE_BPF_PROG,
	KINSTR_REFUSE_NR
};

/* Why a BPF program was refused (KINSTR_REFUSE_BPF_PROG). */
enum kinstr_bpf_reason {
	KINSTR_BPF_R_BAD_FD,		/* the fd is not open in the caller */
	KINSTR_BPF_R_NOT_KPROBE,	/* not a BPF program, or one of another type than kprobe */
	KINSTR_BPF_R_ATTACH_TYPE,	/* a kprobe.multi/session/uprobe.multi program: their helpers
					 * read a run context of their own */
	KINSTR_BPF_R_OVERRIDE,		/* calls bpf_override_return(): a site mid-function has no
					 * return to override */
	KINSTR_BPF_R_SLEEPABLE,		/* sleepable: probe context may not sleep */
	KINSTR_BPF_R_UNAVAILABLE,	/* the kernel's guard of tracing programs was not found */
	KINSTR_BPF_R_NR
};

/* kinstr_install.bpf[i], for a KINSTR_ACTION_BPF probe i (ABI 0.11). */
struct kinstr_bpf_attach {
	__s32 prog_fd;			/* a BPF_PROG_TYPE_KPROBE program, loaded by the caller */
	__u32 flags;			/* 0 */
	__u64 cookie;			/* what bpf_get_attach_cookie() returns there */
};

struct kinstr_install {
	__u32 size;
	__u32 area;
	__u32 count;			/* must equal the area's slot count */
	__u32 flags;			/* KINSTR_INSTALL_F_* */
	__u64 probes;			/* user pointer to struct kinstr_probe[count] */
	/* out, on failure: which probe and why */
	__u32 refused_index;
	__u32 refusal;			/* enum kinstr_refusal */
	__u32 refusal_reasons;		/* KINSTR_REFUSE_RESERVED: 1 << enum kinstr_site_reason */
	__u32 refusal_offset;		/* NOT_BOUNDARY: offset of the instruction containing site
					 * from the symbol; BRANCH_TARGET: the target's offset;
					 * CROSSES_END: the symbol's size */
	__u64 refusal_addr;		/* the address the refusal is about */
	__u64 specs;			/* user pointer to struct kinstr_trace_spec[count]; read for
					 * KINSTR_ACTION_TRACE probes only (needs TRACE_CREATE first) */
	__u64 cache;			/* (ABI 0.9) user pointer to struct kinstr_cache_image: the
					 * copies KINSTR_ACTION_ENTER probes lead into; 0: none */
	__u64 bpf;			/* (ABI 0.11) user pointer to struct kinstr_bpf_attach[count];
					 * read for KINSTR_ACTION_BPF probes only */
	__u64 preds;			/* (ABI 0.17) user pointer to struct kinstr_pred[count]; read
					 * for trace probes whose spec has KINSTR_TRACE_SPEC_F_PRED only */
};
#define KINSTR_INSTALL_SIZE_VER0	48
#define KINSTR_INSTALL_SIZE_VER1	56
#define KINSTR_INSTALL_SIZE_VER2	64
#define KINSTR_INSTALL_SIZE_VER3	72
#define KINSTR_INSTALL_SIZE_VER4	80
#define KINSTR_INSTALL_F_WAIT	(1U << 0)	/* return once every jump is in place */
/*
 * Verify every probe as INSTALL would (module state, the verifier, the live bytes, no other
 * probe on them) and stop there: 0 or the refusal, nothing written, the area still new
 * (KINSTR_FEAT_VERIFY_ONLY, ABI 0.4).
 */
#define KINSTR_INSTALL_F_VERIFY_ONLY (1U << 1)

/*
 * The code cache (ABI 0.9; docs/design.md, "The code cache"). An area allocated with a cache
 * holds instrumented copies of whole functions, which user space builds for the cache's
 * address: per original instruction a counterpart, with a block's counter before some. The
 * install hands over the whole cache image and a map of it, one entry per original
 * instruction, functions one after the other in ascending address order; the module checks
 * every byte against the live original before anything enters a copy, and the area's
 * KINSTR_ACTION_ENTER probes splice the originals' entries and re-entry points into it.
 */
enum kinstr_cache_form {
	KINSTR_CACHE_FORM_COPY,		/* the original's bytes */
	KINSTR_CACHE_FORM_RELOC,	/* a branch (rel32 form) or a RIP-relative operand re-aimed;
					 * a bare ret as the kernel's patch_return() writes it */
	KINSTR_CACHE_FORM_CALL,		/* push $return (sign-extended imm32); jmp target */
	KINSTR_CACHE_FORM_NATIVE,	/* jmp to the instruction in the original, which runs it */
	KINSTR_CACHE_FORM_JUMP_LABEL,	/* cmpl $0, key(%rip); jg/jle target (jle: branch bit set) */
	KINSTR_CACHE_FORM_STATIC_CALL,	/* push $return; jmp __SCT__name (a tail site: jmp only) */
	KINSTR_CACHE_FORM_NR
};

#define KINSTR_CACHE_M_COUNTED	(1U << 0)	/* a counter precedes the counterpart */
#define KINSTR_CACHE_M_PUSHF	(1U << 1)	/* ... between pushfq and popfq */
#define KINSTR_CACHE_M_FUNC	(1U << 2)	/* the first instruction of a function's copy */
/*
 * (ABI 0.10) Edge counters, on the counters from `edge` on, in this order:
 * EDGE_IN: a counter precedes everything of the entry (before its COUNTED counter): the edge
 * into the instruction by falling through to it (or through an entry point continuing a path).
 * EDGE_OUT: the counterpart of a branch or an exit carries the counter of its taken way: a
 * conditional one (a jcc, a jump label's test) as `j<not cc> rel8 over the rest; pushfq;
 * counter; popfq; jmp rel32 target`, an unconditional one (jmp, ret, a tail static call) as the
 * counter, then the form. The _PUSHF flags: that counter saves the flags (a conditional's always).
 */
#define KINSTR_CACHE_M_EDGE_IN		(1U << 3)
#define KINSTR_CACHE_M_EDGE_IN_PUSHF	(1U << 4)
#define KINSTR_CACHE_M_EDGE_OUT		(1U << 5)
#define KINSTR_CACHE_M_EDGE_OUT_PUSHF	(1U << 6)
/*
 * (ABI 0.19, KINSTR_FEAT_CACHE_TIMER) A timer of the session's (KINSTR_IOC_TIMERS_CREATE) in the
 * copy, as the call sequence KINSTR_CACHE_TIMER_LEN bytes long: pushfq; push the nine registers
 * C may clobber (rax rcx rdx rsi rdi r8-r11); movabs $0, %rdi; mov $timer, %esi; call rel32;
 * pop them; popfq. The module checks it and writes the timer set's address over the 0. On a
 * function's first entry (M_FUNC) it starts the timer, before everything of the entry (its
 * entry point lands on it, no branch of the copy does); on an exit (a ret, a jmp out of the
 * function's code, a tail static call) it stops it, just before the form (after an EDGE_OUT
 * counter). A timed function stops its timer at every exit; nothing else carries one.
 */
#define KINSTR_CACHE_M_TIMER		(1U << 7)
#define KINSTR_CACHE_TIMER_LEN		48
#define KINSTR_CACHE_M_ALL	0xffU

struct kinstr_cache_map {
	__u64 addr;			/* the original instruction */
	__u32 copy;			/* its counterpart's offset in the cache (after its counters) */
	__u32 counter;			/* KINSTR_CACHE_M_COUNTED: the counter's index */
	__u8 len;			/* the original's length */
	__u8 copy_len;			/* the counterpart's */
	__u8 form;			/* enum kinstr_cache_form */
	__u8 flags;			/* KINSTR_CACHE_M_* */
	__u32 edge;			/* (ABI 0.10) M_EDGE_*: the first edge counter's index; else 0 */
};

/*
 * (ABI 0.20, KINSTR_FEAT_LAID_COPY) KINSTR_CACHE_IMAGE_LAID: every function of the image is a
 * re-laid copy (kinstr optimize), on every entry of its function's run: no counters, no timers;
 * the counterparts tile the function's part of the image in any order; a counterpart whose form
 * runs on may end with a jmp (rel8 or rel32) to where it runs on; a jcc may be rel8, or inverted
 * with its two ways swapped; a jmp whose target's counterpart follows it may be left out
 * (copy_len 0). Where control runs on past a counterpart, it reaches the counterpart of the
 * original's next instruction (a jcc's other way). docs/design.md, "Re-laid copies". (The map's
 * flags byte has no bit left: a set of re-laid copies is laid as a whole.)
 */
#define KINSTR_CACHE_IMAGE_LAID	(1U << 0)

struct kinstr_cache_image {
	__u32 size;
	__u32 flags;			/* KINSTR_CACHE_IMAGE_*; others must be 0 */
	__u64 bytes;			/* user pointer to the cache's bytes, from cache_addr on */
	__u64 len;			/* bytes: at most the area's cache_size */
	__u64 map;			/* user pointer to struct kinstr_cache_map[nmap] */
	__u32 nmap;
	__u32 __reserved;
};
#define KINSTR_CACHE_IMAGE_SIZE_VER0	40

/*
 * Which rule a copy broke (KINSTR_REFUSE_BAD_COPY, in kinstr_install.refusal_reasons). Ids are
 * stable; libkinstr names them (kinstr_cache_rule__str()).
 */
enum kinstr_cache_rule {
	KINSTR_CACHE_RULE_NONE,
	KINSTR_CACHE_RULE_REQUEST,	/* a field out of range, an unknown form or flag */
	KINSTR_CACHE_RULE_FUNCTION,	/* the function may not be copied (policy, its symbol, a .cold part) */
	KINSTR_CACHE_RULE_BOUNDARY,	/* the map is not the function's instructions, back to back */
	KINSTR_CACHE_RULE_END,		/* the copied code does not end where the function's does */
	KINSTR_CACHE_RULE_LAYOUT,	/* the copy is not the map's counterparts back to back */
	KINSTR_CACHE_RULE_COUNTER,	/* a counter is not the counter sequence on its own counter */
	KINSTR_CACHE_RULE_FLAGS,	/* a counter without pushfq where the flags may be live */
	KINSTR_CACHE_RULE_COPY,		/* copied bytes differ, or the instruction may not be copied */
	KINSTR_CACHE_RULE_RELOC,	/* a re-aimed branch or operand goes elsewhere */
	KINSTR_CACHE_RULE_CALL,		/* a call's push/jmp is not the original's return and target */
	KINSTR_CACHE_RULE_NATIVE,	/* a native jmp is not to its instruction */
	KINSTR_CACHE_RULE_JUMP_LABEL,	/* not the jump entry's key, branch bit or target */
	KINSTR_CACHE_RULE_STATIC_CALL,	/* not the static call site's trampoline or return */
	KINSTR_CACHE_RULE_REENTRY,	/* an entry point that is not where the map says, or covers
					 * what it must not */
	KINSTR_CACHE_RULE_EXIT,		/* control comes back to the original where no entry point is */
	KINSTR_CACHE_RULE_TIMER,	/* (ABI 0.19) a timer is not the timer sequence on a timer of the session */
	KINSTR_CACHE_RULE_TIMER_PLACE,	/* (ABI 0.19) a timer where no entry or exit is, an exit of a timed
					 * function without its stop, or an entry point past the start */
	KINSTR_CACHE_RULE_FALL,		/* (ABI 0.20) in a re-laid copy, control runs on past a
					 * counterpart to another than its next instruction's (or a jcc's
					 * other way's) */
	KINSTR_CACHE_RULE_NR
};

struct kinstr_cache_counts {
	__u32 size;
	__u32 area;
	__u32 first;			/* counter index */
	__u32 count;
	__u64 counts;			/* user pointer to __u64[count]: summed over CPUs */
};
#define KINSTR_CACHE_COUNTS_SIZE_VER0	24

/*
 * KINSTR_IOC_DISARM (ABI 0.9): take some probes of an installed area out now, the others staying
 * (one-shot coverage: each block's probe goes once it was hit). Their text is restored as
 * REMOVE restores it; their counters keep their counts; their slots go with the area. Not for
 * ftrace probes or KINSTR_ACTION_ENTER (EINVAL). Disarming one twice is no error.
 */
struct kinstr_disarm {
	__u32 size;
	__u32 area;
	__u32 count;			/* entries in indices[] */
	__u32 disarmed;			/* out: how many were armed until now */
	__u64 indices;			/* user pointer to __u32[count]: probe indices */
};
#define KINSTR_DISARM_SIZE_VER0	24
#define KINSTR_DISARM_MAX	65536

struct kinstr_remove {
	__u32 size;
	__u32 area;
};
#define KINSTR_REMOVE_SIZE_VER0	8

struct kinstr_counts {
	__u32 size;
	__u32 area;
	__u32 count;			/* entries in counts[]: at most the area's slots */
	__u32 __reserved;
	__u64 counts;			/* user pointer to __u64[count]: hits summed over CPUs */
	__u64 flags;			/* optional user pointer to __u32[count]: KINSTR_PROBE_F_* */
	/*
	 * optional user pointer to __u64[count]: hits whose action was skipped because the CPU was
	 * already inside a kinstr action at the same context level (recursion, as kprobes' nmissed);
	 * the hit itself is still in counts[]
	 */
	__u64 missed;
	/*
	 * (ABI 0.17) optional user pointer to __u64[count]: hits a predicate rejected (nothing
	 * recorded; not in counts[])
	 */
	__u64 filtered;
};
#define KINSTR_COUNTS_SIZE_VER0	24
#define KINSTR_COUNTS_SIZE_VER1	32
#define KINSTR_COUNTS_SIZE_VER2	40	/* missed (ABI 0.5) */
#define KINSTR_COUNTS_SIZE_VER3	48	/* filtered (ABI 0.17) */

struct kinstr_sync {
	__u32 size;
	__u32 flags;			/* none defined: must be 0 */
};
#define KINSTR_SYNC_SIZE_VER0	8

/*
 * KINSTR_IOC_SCOPE (ABI 0.16, KINSTR_FEAT_SCOPE): which threads the descriptor's probes act for,
 * set at most once, before its first ALLOC (EBUSY after). A hit while a thread out of scope is
 * the CPU's current task does nothing: no count, no record, no timer, no program. Code-cache
 * entry points and NOP probes are not scoped. Interrupts count as the thread they interrupt (as
 * perf's and bpftrace's process filters do). The module decides per CPU when a thread is switched
 * in and when a thread renames itself (exec, prctl), so a hit tests one per-CPU byte; the
 * scheduler's switch code between its sched_switch tracepoint and the switch runs as the next
 * thread. Every condition given must hold:
 *   - its process is not one of self[] (kinstr's own: leave self empty to observe them);
 *   - pids[] or tids[] given: its process is in pids[] or the thread in tids[]; with
 *     KINSTR_SCOPE_F_FOLLOW, a process that a process of pids[] forks joins pids[] (at most
 *     KINSTR_SCOPE_MAX_PIDS in all: more are not followed; a pid, once in, stays in);
 *   - comm[0]: its comm is exactly comm;
 *   - cgroup_fd >= 0: it is in that cgroup v2 directory's cgroup or a descendant of it;
 *   - ncpus: the CPU is set in the bitmap cpus (bit c of word c / 64).
 */
struct kinstr_scope {
	__u32 size;
	__u32 flags;			/* KINSTR_SCOPE_F_* */
	__u64 pids;			/* user pointer to __u32[npids] */
	__u64 tids;			/* user pointer to __u32[ntids] */
	__u64 self;			/* user pointer to __u32[nself] */
	__u64 cpus;			/* user pointer to __u64[(ncpus + 63) / 64] */
	__u32 npids;			/* at most KINSTR_SCOPE_MAX_PIDS */
	__u32 ntids;			/* at most KINSTR_SCOPE_MAX_IDS */
	__u32 nself;			/* at most KINSTR_SCOPE_MAX_IDS */
	__u32 ncpus;			/* bits of cpus[]; 0: every CPU */
	__s32 cgroup_fd;		/* -1: any cgroup */
	__u32 __reserved;		/* 0 */
	char comm[16];			/* "": any comm */
};
#define KINSTR_SCOPE_SIZE_VER0	80
#define KINSTR_SCOPE_F_FOLLOW	(1U << 0)
#define KINSTR_SCOPE_MAX_PIDS	4096
#define KINSTR_SCOPE_MAX_IDS	64

/*
 * Tallies (ABI 0.18, KINSTR_FEAT_TALLY; kinstr count --by): KINSTR_ACTION_TALLY probes count
 * each hit in a table per CPU of the descriptor, under the probe's event (its spec's) and the
 * hit's key, so that a hit costs a table update and no trace record. One tally per descriptor,
 * created before the probes that count into it (EEXIST for a second). Each CPU's table has
 * `entries` entries (open addressing); a hit whose key finds no room is counted in that CPU's
 * overflow. A key may appear in more than one entry of a CPU (an interrupt that inserts the key
 * a thread was inserting): a reader sums entries of equal event and key, as it sums CPUs.
 */
enum kinstr_tally_by {
	KINSTR_TALLY_BY_COMM = 1,	/* the current task's comm (kinstr_tally_ent.comm) */
	KINSTR_TALLY_BY_PID = 2,	/* its thread group id (kinstr_tally_ent.id) */
	KINSTR_TALLY_BY_TID = 3,	/* its thread id (kinstr_tally_ent.id) */
	KINSTR_TALLY_BY_VALUE = 4,	/* the spec's first value, as a trace record holds it: 8
					 * bytes, or a string's round_up(size, 8) (0 if unreadable) */
};

#define KINSTR_TALLY_MIN_ENTRIES	64
#define KINSTR_TALLY_MAX_ENTRIES	(1U << 20)

struct kinstr_tally_create {
	__u32 size;
	__u32 by;			/* enum kinstr_tally_by */
	__u32 entries;			/* per CPU: a power of two, MIN .. MAX_ENTRIES */
	__u32 key_size;			/* BY_VALUE: bytes of value key, a multiple of 8, 8 ..
					 * KINSTR_TRACE_STR_MAX (a probe whose first value is longer
					 * is refused); else 0 */
	__u32 flags;			/* none defined: 0 */
	__u32 nr_cpus;			/* out (0 in): the CPUs 0 .. nr_cpus - 1 that TALLY_READ takes */
};
#define KINSTR_TALLY_CREATE_SIZE_VER0	24

/* An entry as KINSTR_IOC_TALLY_READ copies it: this, then key_size bytes of value key. */
struct kinstr_tally_ent {
	__u16 event;			/* the probe's kinstr_trace_spec.event */
	__u16 flags;			/* KINSTR_TALLY_E_* */
	__u32 id;			/* BY_PID, BY_TID: the key */
	__u64 hits;
	char comm[16];			/* BY_COMM: the key; else the last hit's comm */
};
#define KINSTR_TALLY_E_SEVERAL	(1U << 0)	/* BY_VALUE: hit under more than one comm */

struct kinstr_tally_read {
	__u32 size;
	__u32 cpu;			/* < kinstr_tally_create.nr_cpus */
	__u32 count;			/* entries room at ents */
	__u32 found;			/* out: entries in use on cpu (copied: min(count, found)) */
	__u64 ents;			/* user pointer: count * (sizeof(struct kinstr_tally_ent) +
					 * key_size) bytes */
	__u64 overflow;			/* out: hits on cpu that found no entry */
};
#define KINSTR_TALLY_READ_SIZE_VER0	32

/*
 * Spans (ABI 0.18, KINSTR_FEAT_SPAN; kinstr span A B): a start probe notes the time under its
 * key in one table of open starts (every CPU's: a stop may run on another CPU than its start);
 * a stop takes its key's open start, if any, and adds the interval to its key's row in a table
 * per CPU and to the CPU's total. A start over an open one replaces it (counted), a stop with
 * none is counted; a start with no room in the open table, or an interval whose key has no room
 * for a row on its CPU, is counted as overflow (the total still has the interval). Keys are
 * never taken out of the open table: it bounds the distinct keys of a run. Rows of equal key
 * on several CPUs (or twice on one, as for tallies) are summed by the reader.
 */
enum kinstr_span_by {
	KINSTR_SPAN_BY_TID = 1,
	KINSTR_SPAN_BY_PID = 2,
	KINSTR_SPAN_BY_VALUE = 3,	/* the spec's first value: a number (8 bytes) */
};
#define KINSTR_SPAN_HIST	64	/* bucket i: [2^(i-1), 2^i) ns; bucket 0: 0 ns */
#define KINSTR_SPAN_F_LOCAL_CLOCK (1U << 0)	/* local_clock(), not CLOCK_MONOTONIC (fast NMI-safe) */

struct kinstr_span_create {
	__u32 size;
	__u32 by;			/* enum kinstr_span_by */
	__u32 starts;			/* the open starts' table: a power of two, MIN .. MAX_ENTRIES
					 * of the tallies */
	__u32 rows;			/* rows per CPU: a power of two, the same bounds */
	__u32 flags;			/* KINSTR_SPAN_F_* */
	__u32 nr_cpus;			/* out (0 in): the CPUs 0 .. nr_cpus - 1 that SPAN_READ takes */
};
#define KINSTR_SPAN_CREATE_SIZE_VER0	24

struct kinstr_span_stats_k {
	__u64 count, min, max, sum;	/* ns; min is ~0ULL before the first interval */
	__u64 hist[KINSTR_SPAN_HIST];
};

struct kinstr_span_row_k {
	__u64 key;			/* tid, pid or the value */
	char comm[16];			/* the last stop's task */
	struct kinstr_span_stats_k st;
};

struct kinstr_span_read {
	__u32 size;
	__u32 cpu;			/* < kinstr_span_create.nr_cpus */
	__u32 count;			/* rows room at rows */
	__u32 found;			/* out: rows in use on cpu (copied: min(count, found)) */
	__u64 rows;			/* user pointer to struct kinstr_span_row_k[count] */
	__u64 total;			/* user pointer to struct kinstr_span_stats_k: cpu's total (0: not read) */
	/* out, cpu's */
	__u64 replaced;			/* starts over an open start of their key */
	__u64 unmatched_stops;		/* stops with no open start of their key */
	__u64 overflow;			/* starts with no room; intervals with no row */
	__u64 open;			/* out, every CPU's: starts open now */
};
#define KINSTR_SPAN_READ_SIZE_VER0	64

/* How a probe's action runs (kinstr_counts.flags). */
#define KINSTR_PROBE_F_INLINE	(1U << 0)	/* inline per-CPU increment: no call */
#define KINSTR_PROBE_F_SAVES_FLAGS (1U << 1)	/* (ABI 0.8) the slot saves the flags around its
						 * action: they are live at the site. Before 0.8 a
						 * counting probe without F_INLINE called a stub */
#define KINSTR_PROBE_F_SCOPED	(1U << 2)	/* (ABI 0.16) it acts only in the descriptor's
						 * scope (KINSTR_IOC_SCOPE): its slot or hit
						 * function tests the scope's gate first */

/*
 * Tracing. One trace channel per file descriptor: KINSTR_IOC_TRACE_CREATE makes a ring buffer
 * per possible CPU (ring/ring.h: sub-buffers, each starting with a struct kr_subbuf_hdr), which
 * user space maps with mmap() on the same descriptor: CPU c's buffer at offset c * buf_mmap_size.
 * A reader takes a delivered sub-buffer with TRACE_GET (its offset in the mapping), reads it, and
 * gives it back with TRACE_PUT. poll() says POLLIN when a sub-buffer is ready (a timer checks;
 * probes wake nobody). TRACE_FLUSH closes every CPU's current sub-buffer so that a partly filled
 * one is delivered (at the end, or periodically for live output).
 */
enum kinstr_trace_mode {
	KINSTR_TRACE_DISCARD = 0,	/* full buffer: new records are dropped and counted */
	KINSTR_TRACE_OVERWRITE = 1,	/* flight recorder: the oldest sub-buffers are overwritten */
};

struct kinstr_trace_create {
	__u32 size;
	__u32 mode;			/* enum kinstr_trace_mode */
	__u32 subbuf_size;		/* bytes: a power of two, 4096 .. 16 MiB */
	__u32 num_subbufs;		/* a power of two, 2 .. 4096 */
	__u32 flags;			/* KINSTR_TRACE_F_* */
	__u32 nr_cpus;			/* out: buffers, for CPU ids 0 .. nr_cpus - 1 */
	__u64 buf_mmap_size;		/* out: bytes of one CPU's buffer in the mapping */
	__u64 clock_ns;			/* out: the records' clock ... */
	__u64 realtime_ns;		/* out: ... and CLOCK_REALTIME, read together */
};
#define KINSTR_TRACE_CREATE_SIZE_VER0	32
#define KINSTR_TRACE_CREATE_SIZE_VER1	48
/*
 * Records are stamped with CLOCK_MONOTONIC (ktime_get_mono_fast_ns(), NMI-safe) unless this
 * flag asks for the kernel's local clock (local_clock(), what ftrace's "local" clock reads):
 * cheaper where the clocksource is slow to read (e.g. HPET in an emulator), monotonic per CPU,
 * and across CPUs only as synchronised as the TSCs.
 */
#define KINSTR_TRACE_F_LOCAL_CLOCK	(1U << 0)

struct kinstr_trace_subbuf {
	__u32 size;
	__u32 cpu;
	__u64 seq;			/* GET: out, the sub-buffer's sequence number; PUT: in */
	__u64 offset;			/* GET: out, its offset in the mapping (all CPUs) */
};
#define KINSTR_TRACE_SUBBUF_SIZE_VER0	24

struct kinstr_trace_flush {
	__u32 size;
	__u32 flags;			/* none defined: must be 0 */
};
#define KINSTR_TRACE_FLUSH_SIZE_VER0	8

struct kinstr_trace_stats {
	__u32 size;
	__u32 cpu;
	__u64 written;			/* records committed */
	__u64 lost_full;		/* discard mode: no free sub-buffer */
	__u64 lost_wrap;		/* overwrite mode: records in overwritten sub-buffers */
	__u64 lost_big;			/* larger than a sub-buffer */
	__u64 lost_nest;		/* probes nested deeper than 4 (task, softirq, irq, NMI) */
};
#define KINSTR_TRACE_STATS_SIZE_VER0	48

/* Registers a trace value can name: the x86 encoding order, then the site's address. */
enum kinstr_reg {
	KINSTR_REG_RAX, KINSTR_REG_RCX, KINSTR_REG_RDX, KINSTR_REG_RBX,
	KINSTR_REG_RSP, KINSTR_REG_RBP, KINSTR_REG_RSI, KINSTR_REG_RDI,
	KINSTR_REG_R8, KINSTR_REG_R9, KINSTR_REG_R10, KINSTR_REG_R11,
	KINSTR_REG_R12, KINSTR_REG_R13, KINSTR_REG_R14, KINSTR_REG_R15,
	KINSTR_REG_RIP,			/* the probed site */
	KINSTR_REG_NR
};

enum kinstr_val_kind {
	KINSTR_VAL_REG = 1,		/* the register's value at the site: 8 bytes */
	KINSTR_VAL_MEM = 2,		/* size bytes at reg + offset, fault-safe: 8 bytes, zero-extended */
	KINSTR_VAL_STR = 3,		/* a NUL-terminated string at *(reg + offset) if deref, else at
					 * reg + offset, at most size - 1 chars: round_up(size, 8) bytes */
};

#define KINSTR_TRACE_MAX_VALS	8
#define KINSTR_TRACE_STR_MAX	128

struct kinstr_trace_val {
	__u8 kind;			/* enum kinstr_val_kind */
	__u8 reg;			/* enum kinstr_reg */
	__u8 size;			/* MEM: 1, 2, 4 or 8; STR: 2 .. KINSTR_TRACE_STR_MAX */
	__u8 deref;			/* STR: the string's address is the pointer at reg + offset */
	__s32 offset;
};

struct kinstr_trace_spec {
	__u16 event;			/* copied into each record: the consumer's event class */
	__u8 nvals;			/* values in vals[] */
	__u8 flags;			/* KINSTR_TRACE_SPEC_F_* */
	__u32 __reserved;
	struct kinstr_trace_val vals[KINSTR_TRACE_MAX_VALS];
};
/* (ABI 0.17) record only hits kinstr_install.preds[i] passes (struct kinstr_pred below) */
#define KINSTR_TRACE_SPEC_F_PRED	(1U << 0)

/*
 * A value predicate (ABI 0.17, KINSTR_FEAT_PRED; docs/design.md, "Value predicates"): a small
 * stack program over the spec's values, run in probe context before the action. A hit it
 * rejects records nothing and counts as filtered, not as a hit. Fixed size; the module verifies
 * it at install (rules/pred.h, shared with the library): every op known, unused fields and the
 * tail after ninsns zero, jumps forward and onto an instruction, the stack at most
 * KINSTR_PRED_MAX_STACK deep and one value at the end (nonzero: pass), value indices below
 * the spec's nvals and of the right kind.
 */
#define KINSTR_PRED_MAX_INSNS	32
#define KINSTR_PRED_MAX_STACK	8
#define KINSTR_PRED_COMM	0xff	/* KINSTR_PRED_STR's a: the current thread's comm */
#define KINSTR_PRED_EXT_SIGNED	0x80	/* KINSTR_PRED_VAL's b: sign-extend (else zero-extend) */

enum kinstr_pred_op {
	KINSTR_PRED_VAL = 1,	/* push value a (REG or MEM) of the spec; b: the width it is cut to
				 * (0: 8 bytes; 1, 2, 4) | KINSTR_PRED_EXT_SIGNED */
	KINSTR_PRED_CTX = 2,	/* push enum kinstr_pred_ctx a */
	KINSTR_PRED_IMM = 3,	/* push imm */
	KINSTR_PRED_STR = 4,	/* push 1 if string value a (a STR; or KINSTR_PRED_COMM) as the
				 * trace records it equals the b (< KINSTR_TRACE_STR_MAX) bytes held
				 * by the b / 8 + 1 KINSTR_PRED_DATA instructions after it, else 0 */
	KINSTR_PRED_DATA = 5,	/* 8 bytes of a string in imm, NUL-padded; only after a STR */
	KINSTR_PRED_CMP = 6,	/* pop y, pop x, push (x a y): enum kinstr_pred_cmp */
	KINSTR_PRED_NOT = 7,	/* replace the top x by !x */
	KINSTR_PRED_JZ = 8,	/* top 0: go to the instruction b + 1 on, keeping it; else pop it */
	KINSTR_PRED_JNZ = 9,	/* top not 0: the same */
	KINSTR_PRED_OP_NR
};

enum kinstr_pred_ctx {
	KINSTR_PRED_CTX_PID = 1,	/* current's thread group id */
	KINSTR_PRED_CTX_TID = 2,	/* current's pid */
	KINSTR_PRED_CTX_CPU = 3,	/* the CPU the hit runs on */
	KINSTR_PRED_CTX_NR
};

enum kinstr_pred_cmp {
	KINSTR_PRED_EQ, KINSTR_PRED_NE,
	KINSTR_PRED_LT, KINSTR_PRED_LE, KINSTR_PRED_GT, KINSTR_PRED_GE,		/* unsigned */
	KINSTR_PRED_SLT, KINSTR_PRED_SLE, KINSTR_PRED_SGT, KINSTR_PRED_SGE,	/* signed */
	KINSTR_PRED_CMP_NR
};

struct kinstr_pred_insn {
	__u8 op;			/* enum kinstr_pred_op */
	__u8 a;
	__u16 b;
	__u32 __reserved;
	__u64 imm;			/* IMM: the constant; DATA: string bytes; else 0 */
};

struct kinstr_pred {
	__u16 ninsns;			/* 1 .. KINSTR_PRED_MAX_INSNS */
	__u16 flags;			/* none defined: must be 0 */
	__u32 __reserved;
	struct kinstr_pred_insn insns[KINSTR_PRED_MAX_INSNS];
};

/*
 * A record in a trace sub-buffer: this header, then the values in the order of the spec (8
 * bytes each, strings round_up(size, 8)). Records are 8-byte aligned; len includes the header.
 */
struct kinstr_trace_rec {
	__u32 len;
	__u16 event;
	__u16 faults;			/* bit i: value i could not be read (it reads as 0 / "") */
	__u64 ts;			/* ns, the channel's clock (KINSTR_TRACE_F_LOCAL_CLOCK) */
	__u32 pid;			/* thread group id */
	__u32 tid;
	char comm[16];
};

/*
 * Timers (kinstr profile): start/stop probes time intervals per thread, e.g. a function from its
 * entry to each of its returns, or a call instruction to the instruction after it. A thread
 * keeps a stack of the timers it started (interrupt contexts have their own per CPU); a stop
 * pops its timer, with whatever was started above it and never stopped. Wall time is from start
 * to stop; on-CPU time leaves out the time the thread was switched out (the sched_switch
 * tracepoint). A timer started again while it runs (recursion) counts the call but adds time
 * for the outermost activation only. Statistics are per CPU, summed when read.
 */
#define KINSTR_TIMERS_MAX	65536
#define KINSTR_TIMER_HIST	40	/* log2 buckets: [2^i, 2^(i+1)) ns, bucket 0 also 0 ns */

struct kinstr_timers_create {
	__u32 size;
	__u32 count;			/* timers, 1 .. KINSTR_TIMERS_MAX */
	__u32 tgid;			/* only this process's threads (task context only); 0: all */
	__u32 flags;			/* KINSTR_TIMERS_F_* */
};
#define KINSTR_TIMERS_F_PATHS	(1U << 0)	/* also aggregate per path (the timers below) */
#define KINSTR_TIMERS_F_PGRP	(1U << 1)	/* tgid names a process group: all its processes */
/* (ABI 0.18, KINSTR_FEAT_TIMER_BY) also aggregate each stop per key (KINSTR_IOC_TIMER_BY): at most one */
#define KINSTR_TIMERS_F_BY_COMM	(1U << 2)	/* the timed call's task's comm */
#define KINSTR_TIMERS_F_BY_PID	(1U << 3)	/* its process */
#define KINSTR_TIMERS_F_BY_TID	(1U << 4)	/* its thread */
#define KINSTR_TIMERS_CREATE_SIZE_VER0	16

struct kinstr_timer_stats {
	__u64 calls;			/* stops that matched a start */
	__u64 starts;
	__u64 unmatched;		/* stops without a start (e.g. a call in progress at install) */
	__u64 recursive;		/* calls inside a running activation of the same timer */
	__u64 dropped;			/* starts not recorded: stack full, or no room for the thread */
	__u64 wall_ns;			/* sums over the outermost activations */
	__u64 oncpu_ns;
	__u64 wall_min, wall_max;	/* ns; min is ~0ULL before the first call */
	__u64 hist[KINSTR_TIMER_HIST];	/* wall time, log2 */
};

struct kinstr_timers_read {
	__u32 size;
	__u32 first;			/* timer index */
	__u32 count;
	__u32 __reserved;
	__u64 stats;			/* user pointer to struct kinstr_timer_stats[count] */
};
#define KINSTR_TIMERS_READ_SIZE_VER0	24

/*
 * With KINSTR_TIMERS_F_PATHS, each stop (of an outermost activation) is also added to its path:
 * the timers running below it in its context, outermost first, then itself. Per CPU, at most
 * KINSTR_TIMER_PATHS_MAX paths of at most KINSTR_TIMER_PATH_DEPTH timers (deeper paths keep
 * their outermost timers and count in truncated).
 */
#define KINSTR_TIMER_PATH_DEPTH	16
#define KINSTR_TIMER_PATHS_MAX	2048

struct kinstr_timer_path {
	__u32 depth;			/* timers[] used */
	__u32 timers[KINSTR_TIMER_PATH_DEPTH];
	__u32 __pad;
	__u64 calls, wall_ns, oncpu_ns;
};

struct kinstr_timer_paths {
	__u32 size;
	__u32 cpu;
	__u32 count;			/* entries in paths[] */
	__u32 found;			/* out: paths written */
	__u64 paths;			/* user pointer to struct kinstr_timer_path[count] */
	__u64 dropped;			/* out: stops not recorded (table full) on this CPU */
	__u64 truncated;		/* out: paths cut at KINSTR_TIMER_PATH_DEPTH */
};
#define KINSTR_TIMER_PATHS_SIZE_VER0	40

/*
 * With KINSTR_TIMERS_F_BY_*, each stop (of an outermost activation) is also added to its row of
 * (timer, key) in a table per CPU of KINSTR_TIMER_BY_MAX rows (a stop that finds no row counts in
 * dropped). A key may have two rows on one CPU (an interrupt that inserted it meanwhile): the
 * reader sums rows of equal timer and key, as it sums CPUs.
 */
#define KINSTR_TIMER_BY_MAX	4096

struct kinstr_timer_by_row {
	__u32 timer;
	__u32 id;			/* BY_PID, BY_TID: the key */
	char comm[16];			/* BY_COMM: the key; else the last stop's comm */
	__u64 calls, wall_ns, oncpu_ns;
	__u64 wall_min, wall_max;	/* ns */
};

struct kinstr_timer_by {
	__u32 size;
	__u32 cpu;
	__u32 count;			/* rows room at rows */
	__u32 found;			/* out: rows in use on cpu (copied: min(count, found)) */
	__u64 rows;			/* user pointer to struct kinstr_timer_by_row[count] */
	__u64 dropped;			/* out: cpu's stops that found no row */
};
#define KINSTR_TIMER_BY_SIZE_VER0	32

#endif /* _UAPI_LINUX_KINSTR_H */
