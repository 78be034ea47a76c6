// SPDX-License-Identifier: GPL-2.0
/*
 * Resolve what 6.1 no longer exports to modules. kallsyms_lookup_name is found by registering a
 * kprobe on it and reading back the address kprobes resolved; every other symbol is then looked
 * up through it, once, at load time.
 */
#include <linux/bug.h>
#include <linux/extable.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/bsearch.h>
#include <linux/sort.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>
#include <asm/insn.h>
#include <asm/text-patching.h>

#include "base.h"
#include "ksym.h"
#include "compat.h"

struct kinstr_ksyms kinstr_ksyms;
#define KINSTR_KFUNC_DEFINE(f) DEFINE_STATIC_CALL_NULL(kinstr_k_##f, f);
KINSTR_KFUNCS(KINSTR_KFUNC_DEFINE)

static unsigned long resolve_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int err;

	err = register_kprobe(&kp);
	if (err) {
		pr_err(KINSTR_PR_PREFIX "cannot resolve kallsyms_lookup_name: register_kprobe: %d\n", err);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return addr;
}

static unsigned long lookup(const char *name)
{
	return kinstr_kcall(kallsyms_lookup_name)(name);
}

static void span(struct kinstr_span *s, const char *start, const char *end)
{
	s->start = lookup(start);
	s->end = lookup(end);
	if (!s->start || s->end < s->start)
		s->start = s->end = 0;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* The core kernel's __bug_table never changes after boot: index it once. */
static void index_bugs(struct kinstr_ksyms *k)
{
	const struct bug_entry *b = (const struct bug_entry *)k->bug_table.start;
	size_t i, n = (k->bug_table.end - k->bug_table.start) / sizeof(*b);

	if (!k->bug_table.start || !n)
		return;
	k->bug_addrs = vmalloc(array_size(n, sizeof(*k->bug_addrs)));
	if (!k->bug_addrs)
		return;
	for (i = 0; i < n; i++)
		k->bug_addrs[i] = (unsigned long)&b[i].bug_addr_disp + b[i].bug_addr_disp;
	sort(k->bug_addrs, n, sizeof(*k->bug_addrs), cmp_ulong, NULL);
	k->nbug_addrs = n;
}

bool kinstr_ksyms_can_patch(void)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;

	return k->text_mutex && kinstr_khas(insn_decode) && kinstr_khas(kallsyms_lookup_size_offset) &&
	       kinstr_khas(text_poke) && kinstr_khas(text_poke_sync) && kinstr_text_alloc_resolved() &&
	       k->kprobe_blacklist && k->kprobe_mutex && kinstr_khas(get_kprobe);
}

/* Self-relative __s32 at off in each entry of a table, as an address. */
static unsigned long rel_at(const struct kinstr_span *t, unsigned long e, unsigned int off)
{
	return e + off + *(const s32 *)(e + off);
}

/* The index of the first of the sorted a[0, n) at or above key (n: none). */
static size_t first_at_or_above(const unsigned long *a, size_t n, unsigned long key)
{
	size_t l = 0, h = n;

	while (l < h) {
		size_t m = l + (h - l) / 2;

		if (a[m] < key)
			l = m + 1;
		else
			h = m;
	}
	return l;
}

/* A BUG site at some byte of [a, a + len): one search of the index in core text, else find_bug() per byte. */
bool kinstr_ksyms_bug_in(unsigned long a, unsigned int len)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	unsigned int i;

	if (k->bug_addrs && kinstr_span_has(&k->text, a, len)) {
		size_t l = first_at_or_above(k->bug_addrs, k->nbug_addrs, a);

		return l < k->nbug_addrs && k->bug_addrs[l] < a + len;
	}
	for (i = 0; i < len; i++)
		if (kinstr_khas(find_bug) && kinstr_kcall(find_bug)(a + i))
			return true;
	return false;
}

bool kinstr_ksyms_table_target_in(unsigned long lo, unsigned long hi, unsigned long *target)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	size_t l = first_at_or_above(k->core_targets, k->ncore_targets, lo + 1);

	if (l == k->ncore_targets || k->core_targets[l] >= hi)
		return false;
	*target = k->core_targets[l];
	return true;
}

/* The length of the instruction at addr, by the kernel's decoder; 0 if it does not decode. */
int kinstr_ksyms_insn_len(unsigned long addr)
{
	struct insn insn;
	u8 buf[MAX_INSN_SIZE];

	if (!kinstr_khas(insn_decode) || copy_from_kernel_nofault(buf, (void *)addr, sizeof(buf)) ||
	    kinstr_kcall(insn_decode)(&insn, buf, sizeof(buf), INSN_MODE_64) < 0)
		return 0;
	return insn.length;
}

int kinstr_jump_entry_in(const struct kinstr_span *t, unsigned long code, unsigned long *key, bool *branch,
			 unsigned long *target)
{
	unsigned long e;

	/* once per jump label of a function copied: a scan of the table is cheap enough */
	for (e = t->start; e && e < t->end; e += sizeof(struct jump_entry)) {
		const struct jump_entry *je = (const struct jump_entry *)e;

		if (jump_entry_code(je) != code)
			continue;
		*key = (unsigned long)jump_entry_key(je);
		*branch = jump_entry_is_branch(je);
		*target = jump_entry_target(je);
		return 0;
	}
	return -ENOENT;
}

int kinstr_static_call_site_in(const struct kinstr_span *t, unsigned long addr, unsigned long *key, bool *tail)
{
	unsigned long e;

	for (e = t->start; e && e < t->end; e += sizeof(struct static_call_site)) {
		const struct static_call_site *s = (const struct static_call_site *)e;
		unsigned long kf;

		if (rel_at(t, e, offsetof(struct static_call_site, addr)) != addr)
			continue;
		/* the key is self-relative, its low bits flags (static_call_types.h) */
		kf = (unsigned long)&s->key + (long)s->key;
		*key = kf & ~(unsigned long)STATIC_CALL_SITE_FLAGS;
		*tail = kf & STATIC_CALL_SITE_TAIL;
		return 0;
	}
	return -ENOENT;
}

unsigned long kinstr_static_call_trampoline(unsigned long key)
{
	char sym[KSYM_SYMBOL_LEN], name[KSYM_NAME_LEN + 8];
	char *sp;

	sprint_symbol_no_offset(sym, key);
	sp = strchr(sym, ' ');	/* a module's symbol: "name [module]" */
	if (sp)
		*sp = 0;
	if (strncmp(sym, "__SCK__", 7) || strlen(sym) >= KSYM_NAME_LEN)
		return 0;
	snprintf(name, sizeof(name), "__SCT__%s", sym + 7);
	return kinstr_kcall(kallsyms_lookup_name)(name);
}

static void lookup_target(const char *prefix, const char *name, kinstr_target_fn fn, void *ctx)
{
	char full[KSYM_NAME_LEN + 32];
	unsigned long a;

	snprintf(full, sizeof(full), "%s%s", prefix, name);
	a = lookup(full);
	if (a)
		fn(ctx, a);
}

/*
 * A tracepoint's static call goes straight to its probe while it has only one, and a probe can
 * be registered at any time after load: enabling the event (6.12's notifier_run, in the die
 * chain, put trace_event_raw_event_notifier_info under every int3 kinstr takes: a probe there
 * recursed until the kernel died). The probes the kernel itself can register are followed: its
 * trace event's (trace_event_raw_event_<class>), perf's (perf_trace_<class>) and BPF's raw
 * tracepoint's (__bpf_trace_<class>, or __bpf_trace_<tp> with no event). Another module's probe
 * cannot be known here.
 */
static void tracepoint_probes(const char *tp, kinstr_target_fn fn, void *ctx)
{
	char name[KSYM_NAME_LEN + 16], sym[KSYM_SYMBOL_LEN];
	struct trace_event_call *call;
	struct trace_event_class *class;
	struct tracepoint *tpp;
	void *probe = NULL, *perf_probe = NULL;
	unsigned long tpa;
	int flags;

	lookup_target("__bpf_trace_", tp, fn, ctx);
	snprintf(name, sizeof(name), "event_%s", tp);
	call = (struct trace_event_call *)lookup(name);
	snprintf(name, sizeof(name), "__tracepoint_%s", tp);
	tpa = lookup(name);
	/*
	 * event_<tp> is the trace event of this tracepoint only if it says so (a static symbol may share
	 * the name); the fields one by one (a debug kernel's struct is too big for the stack)
	 */
	if (!call || !tpa || copy_from_kernel_nofault(&flags, &call->flags, sizeof(flags)) ||
	    !(flags & TRACE_EVENT_FL_TRACEPOINT) || copy_from_kernel_nofault(&tpp, &call->tp, sizeof(tpp)) ||
	    (unsigned long)tpp != tpa || copy_from_kernel_nofault(&class, &call->class, sizeof(class)) || !class ||
	    copy_from_kernel_nofault(&probe, &class->probe, sizeof(probe)))
		return;
	if (probe) {
		fn(ctx, (unsigned long)probe);
		sprint_symbol_no_offset(sym, (unsigned long)probe);
		if (!strncmp(sym, "trace_event_raw_event_", 22) && !strchr(sym, ' '))
			lookup_target("__bpf_trace_", sym + 22, fn, ctx);
	}
#ifdef CONFIG_PERF_EVENTS
	if (!copy_from_kernel_nofault(&perf_probe, &class->perf_probe, sizeof(perf_probe)) && perf_probe)
		fn(ctx, (unsigned long)perf_probe);
#endif
}

/* A static call key's possible targets the call site's bytes need not show. */
static void static_call_targets(unsigned long key, kinstr_target_fn fn, void *ctx)
{
	char sym[KSYM_SYMBOL_LEN], name[KSYM_NAME_LEN + 16];
	unsigned long t = kinstr_static_call_trampoline(key);

	if (t)
		fn(ctx, t);
	/* a tracepoint's static call goes to its one probe, or to its iterator when it has more */
	sprint_symbol_no_offset(sym, key);
	if (!strncmp(sym, "__SCK__tp_func_", 15) && !strchr(sym, ' ') && strlen(sym) < KSYM_NAME_LEN) {
		snprintf(name, sizeof(name), "__traceiter_%s", sym + 15);
		t = kinstr_kcall(kallsyms_lookup_name)(name);
		if (t)
			fn(ctx, t);
		tracepoint_probes(sym + 15, fn, ctx);
	}
}

/* The index of the first of the sorted sites s[0, n) whose code is at or above a. */
static size_t first_site(const struct kinstr_jl_site *s, size_t n, unsigned long a)
{
	size_t l = 0, h = n;

	while (l < h) {
		size_t m = l + (h - l) / 2;

		if (s[m].code < a)
			l = m + 1;
		else
			h = m;
	}
	return l;
}

void kinstr_ksyms_hidden_targets(unsigned long lo, unsigned long hi, kinstr_target_fn fn, void *ctx)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	size_t i;

	for (i = first_site(k->jl_sites, k->njl_sites, lo); i < k->njl_sites && k->jl_sites[i].code < hi; i++)
		fn(ctx, k->jl_sites[i].other);
	for (i = first_site(k->sc_sites, k->nsc_sites, lo); i < k->nsc_sites && k->sc_sites[i].code < hi; i++)
		static_call_targets(k->sc_sites[i].other, fn, ctx);
}

void kinstr_tables_hidden_targets(const struct kinstr_span *jl, const struct kinstr_span *sc, unsigned long lo,
				  unsigned long hi, kinstr_target_fn fn, void *ctx)
{
	unsigned long e, a, key;
	bool tail;

	for (e = jl->start; e && e < jl->end; e += sizeof(struct jump_entry)) {
		a = rel_at(jl, e, offsetof(struct jump_entry, code));
		if (a >= lo && a < hi)
			fn(ctx, rel_at(jl, e, offsetof(struct jump_entry, target)));
	}
	for (e = sc->start; e && e < sc->end; e += sizeof(struct static_call_site)) {
		a = rel_at(sc, e, offsetof(struct static_call_site, addr));
		if (a >= lo && a < hi && !kinstr_static_call_site_in(sc, a, &key, &tail))
			static_call_targets(key, fn, ctx);
	}
}

bool kinstr_ksyms_sched_or_lock_text(unsigned long a, unsigned long len)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;

	return (k->sched_text.start && a < k->sched_text.end && a + len > k->sched_text.start) ||
	       (k->lock_text.start && a < k->lock_text.end && a + len > k->lock_text.start);
}

static int cmp_jl(const void *a, const void *b)
{
	const struct kinstr_jl_site *x = a, *y = b;

	return x->code < y->code ? -1 : x->code > y->code;
}

/*
 * The core kernel's jump entries whose code is live text (init text is gone), each with the
 * length of its jmp or NOP as the kernel's arch_jump_entry_size() decodes it; and the sorted
 * targets of its jump labels and exception fixups. Neither table changes after boot.
 */
static int index_tables(struct kinstr_ksyms *k)
{
	size_t nj = k->jump_table.start ? (k->jump_table.end - k->jump_table.start) / sizeof(struct jump_entry) : 0;
	size_t ne = k->ex_table.start ?
		(k->ex_table.end - k->ex_table.start) / sizeof(struct exception_table_entry) : 0;
	size_t ns = k->static_call_sites.start ?
		(k->static_call_sites.end - k->static_call_sites.start) / sizeof(struct static_call_site) : 0;
	unsigned long e;
	size_t n = 0;

	k->jl_sites = nj ? vmalloc(array_size(nj, sizeof(*k->jl_sites))) : NULL;
	k->core_targets = nj + ne ? vmalloc(array_size(nj + ne, sizeof(*k->core_targets))) : NULL;
	k->ex_addrs = ne ? vmalloc(array_size(ne, sizeof(*k->ex_addrs))) : NULL;
	k->sc_sites = ns ? vmalloc(array_size(ns, sizeof(*k->sc_sites))) : NULL;
	if ((nj && !k->jl_sites) || (nj + ne && !k->core_targets) || (ne && !k->ex_addrs) || (ns && !k->sc_sites))
		return -ENOMEM;	/* freed by kinstr_ksyms_exit() */
	/* static_call_text_reserved() counts CALL_INSN_SIZE bytes from each site's address */
	for (e = k->static_call_sites.start; ns && e < k->static_call_sites.end; e += sizeof(struct static_call_site)) {
		unsigned long site = rel_at(&k->static_call_sites, e, offsetof(struct static_call_site, addr));

		if (kinstr_span_has(&k->text, site, 1))
			k->sc_sites[k->nsc_sites++] = (struct kinstr_jl_site){ site, CALL_INSN_SIZE,
				rel_at(&k->static_call_sites, e, offsetof(struct static_call_site, key)) &
				~(unsigned long)STATIC_CALL_SITE_FLAGS };
	}
	sort(k->sc_sites, k->nsc_sites, sizeof(*k->sc_sites), cmp_jl, NULL);
	for (e = k->jump_table.start; nj && e < k->jump_table.end; e += sizeof(struct jump_entry)) {
		unsigned long code = rel_at(&k->jump_table, e, offsetof(struct jump_entry, code));
		unsigned long target = rel_at(&k->jump_table, e, offsetof(struct jump_entry, target));
		int len;

		k->core_targets[k->ncore_targets++] = target;
		if (!kinstr_span_has(&k->text, code, 1))
			continue;
		len = kinstr_ksyms_insn_len(code);
		/* what the kernel could not decode it reserves whole: as long as an instruction may be */
		k->jl_sites[n++] = (struct kinstr_jl_site){ code, len ? len : MAX_INSN_SIZE, target };
	}
	k->njl_sites = n;
	for (e = k->ex_table.start; ne && e < k->ex_table.end; e += sizeof(struct exception_table_entry)) {
		k->core_targets[k->ncore_targets++] =
			rel_at(&k->ex_table, e, offsetof(struct exception_table_entry, fixup));
		k->ex_addrs[k->nex_addrs++] = rel_at(&k->ex_table, e, offsetof(struct exception_table_entry, insn));
	}
	sort(k->ex_addrs, k->nex_addrs, sizeof(*k->ex_addrs), cmp_ulong, NULL);
	sort(k->jl_sites, k->njl_sites, sizeof(*k->jl_sites), cmp_jl, NULL);
	sort(k->core_targets, k->ncore_targets, sizeof(*k->core_targets), cmp_ulong, NULL);
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct kinstr_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The kernel's blacklist entries that start in core text, read once under kprobe_mutex. */
static int index_blacklist(struct kinstr_ksyms *k)
{
	struct kprobe_blacklist_entry *e;
	size_t n = 0, i;

	if (!k->kprobe_blacklist || !k->kprobe_mutex)
		return 0;
	mutex_lock(k->kprobe_mutex);
	list_for_each_entry(e, k->kprobe_blacklist, list)
		n += kinstr_span_has(&k->text, e->start_addr, 1);
	k->bl_core = n ? vmalloc(array_size(n, sizeof(*k->bl_core))) : NULL;
	list_for_each_entry(e, k->kprobe_blacklist, list)
		if (k->bl_core && k->nbl_core < n && kinstr_span_has(&k->text, e->start_addr, 1))
			k->bl_core[k->nbl_core++] = (struct kinstr_span){ e->start_addr, e->end_addr };
	mutex_unlock(k->kprobe_mutex);
	if (n && !k->bl_core)
		return -ENOMEM;
	sort(k->bl_core, k->nbl_core, sizeof(*k->bl_core), cmp_span, NULL);
	for (i = 1; i < k->nbl_core; i++)	/* entries may nest: each end becomes the furthest so far */
		k->bl_core[i].end = max(k->bl_core[i].end, k->bl_core[i - 1].end);
	return 0;
}

/*
 * Is a in one of the kernel's blacklist entries for core text? (kprobes add entries for core
 * text only at boot; a module's entries cover its own text.)
 */
bool kinstr_ksyms_core_blacklist_has(unsigned long a)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	size_t l = 0, h = k->nbl_core;

	while (l < h) {		/* past the last entry that starts at or below a */
		size_t m = l + (h - l) / 2;

		if (k->bl_core[m].start <= a)
			l = m + 1;
		else
			h = m;
	}
	return l && a < k->bl_core[l - 1].end;
}

/* search_exception_tables() for some byte of a range of core text */
bool kinstr_ksyms_extable_in(unsigned long a, unsigned int len)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	size_t l = first_at_or_above(k->ex_addrs, k->nex_addrs, a);

	return l < k->nex_addrs && k->ex_addrs[l] < a + len;
}

/* Does one of the sorted sites s[0, n) have a byte in [a, a + len)? */
static bool sites_overlap(const struct kinstr_jl_site *s, size_t n, unsigned long a, unsigned int len)
{
	size_t l = 0, h = n;

	while (l < h) {		/* the first site whose code is at or above a - MAX_INSN_SIZE */
		size_t m = l + (h - l) / 2;

		if (s[m].code + MAX_INSN_SIZE <= a)
			l = m + 1;
		else
			h = m;
	}
	for (; l < n && s[l].code < a + len; l++)
		if (s[l].code + s[l].len > a)
			return true;
	return false;
}

/*
 * jump_label_text_reserved() or static_call_text_reserved() for a range of core text: some
 * jump entry's or call site's bytes in [a, a + len)?
 */
bool kinstr_ksyms_sites_in(enum kinstr_patch_sites which, unsigned long a, unsigned int len)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;

	if (which == KINSTR_SITES_JUMP_LABEL)
		return sites_overlap(k->jl_sites, k->njl_sites, a, len);
	return sites_overlap(k->sc_sites, k->nsc_sites, a, len);
}

/*
 * Where the kernel sends a return, as its own patch_return() does: nowhere (0, a bare `ret`)
 * when the CPU needs no return thunk, else the thunk it chose at boot (x86_return_thunk's
 * value: __x86_return_thunk, or srso_return_thunk, retbleed_return_thunk, ...). Returns of
 * compiled code name __x86_return_thunk; the kernel rewrote each to this at boot, and on 6.12
 * __x86_return_thunk itself WARNs when run. ITS thunks depend on the return's address: where
 * the kernel chose one, relocated returns are refused (return_thunk_its).
 */
static unsigned long effective_return_thunk(struct kinstr_ksyms *k)
{
	unsigned long var = lookup("x86_return_thunk"), its = lookup("its_return_thunk"), t;

	if (!cpu_feature_enabled(X86_FEATURE_RETHUNK))
		return 0;
	if (!var || copy_from_kernel_nofault(&t, (void *)var, sizeof(t)) || !t)
		t = k->return_thunk_sym;
	k->return_thunk_its = its && t == its;
	return t;
}

void kinstr_ksyms_exit(void)
{
	struct kinstr_ksyms *k = &kinstr_ksyms;
	void **index[] = { (void **)&k->bug_addrs, (void **)&k->jl_sites, (void **)&k->sc_sites,
			   (void **)&k->core_targets, (void **)&k->ex_addrs, (void **)&k->bl_core };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(index); i++) {
		vfree(*index[i]);
		*index[i] = NULL;
	}
}

int kinstr_ksyms_init(void)
{
	struct kinstr_ksyms *k = &kinstr_ksyms;
	unsigned long addr = resolve_kallsyms_lookup_name();

	if (!addr)
		return -ENOENT;
	static_call_update(kinstr_k_kallsyms_lookup_name, (typeof(&kallsyms_lookup_name))addr);
	/* kprobes skip an ENDBR (addr may be sym+4): kallsyms itself knows the symbol's start */
	addr = lookup("kallsyms_lookup_name");
	if (!addr)
		return -ENOENT;
	static_call_update(kinstr_k_kallsyms_lookup_name, (typeof(&kallsyms_lookup_name))addr);
	span(&k->text, "_stext", "_etext");
	if (!k->text.start) {
		pr_err(KINSTR_PR_PREFIX "kallsyms_lookup_name gave no kernel text bounds\n");
		return -ENOENT;
	}
#define KINSTR_KFUNC_RESOLVE(f) static_call_update(kinstr_k_##f, (typeof(&f))lookup(#f));
	KINSTR_KFUNCS(KINSTR_KFUNC_RESOLVE)
	{
		struct kinstr_compat_syms cs = {
			.text_alloc = lookup(KINSTR_TEXT_ALLOC_NAME),
			.text_free = lookup(KINSTR_TEXT_FREE_NAME),
			.set_memory_ro = lookup("set_memory_ro"),
			.set_memory_x = lookup("set_memory_x"),
		};

		kinstr_compat_resolve(&cs);
	}
	k->text_mutex = (void *)lookup("text_mutex");
	k->return_thunk_sym = lookup("__x86_return_thunk");
	k->return_thunk = effective_return_thunk(k);
	k->die_chain = (void *)lookup("die_chain");
	/* kernel/kprobes.c's statics (CONFIG_KALLSYMS_ALL): without both, no fence, no patching */
	k->kprobe_blacklist = (void *)lookup("kprobe_blacklist");
	k->kprobe_mutex = (void *)lookup("kprobe_mutex");
	/* a per-CPU symbol: kallsyms gives its offset in the per-CPU area */
	k->bpf_prog_active = (int __percpu *)lookup("bpf_prog_active");
	span(&k->entry_text, "__entry_text_start", "__entry_text_end");
	span(&k->irqentry_text, "__irqentry_text_start", "__irqentry_text_end");
	span(&k->noinstr_text, "__noinstr_text_start", "__noinstr_text_end");
	span(&k->kprobes_text, "__kprobes_text_start", "__kprobes_text_end");
	span(&k->sched_text, "__sched_text_start", "__sched_text_end");
	span(&k->lock_text, "__lock_text_start", "__lock_text_end");
	span(&k->ex_table, "__start___ex_table", "__stop___ex_table");
	span(&k->jump_table, "__start___jump_table", "__stop___jump_table");
	span(&k->static_call_sites, "__start_static_call_sites", "__stop_static_call_sites");
	span(&k->bug_table, "__start___bug_table", "__stop___bug_table");
	index_bugs(k);
	if (index_tables(k) || index_blacklist(k)) {
		kinstr_ksyms_exit();
		return -ENOMEM;
	}
	return 0;
}
