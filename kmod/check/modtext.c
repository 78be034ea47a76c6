// SPDX-License-Identifier: GPL-2.0
/*
 * The text of loaded modules. A module's core text may be read, checked and patched while the
 * module is live (MODULE_STATE_LIVE); never its init text (freed after init), never a module
 * that is still coming or already going, never kinstr.ko itself. A probe in a module's text
 * holds a reference on it (try_module_get at install, module_put when the worker frees the
 * area after quiescence), so the module cannot be unloaded under a probe.
 *
 * Module lookups run with preemption disabled, as __module_address() requires: a module is
 * freed only after an RCU-sched grace period once it left the module list.
 */
#include <linux/bug.h>
#include <linux/extable.h>
#include <linux/uaccess.h>
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/static_call_types.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "check/check.h"
#include "abi.h"
#include "compat.h"

#define R(x) (1U << KINSTR_R_##x)

/* The module holding a (any part of it), or NULL. Preemption disabled. */
static struct module *module_at(unsigned long a)
{
	return kinstr_khas(__module_address) ? kinstr_kcall(__module_address)(a) : NULL;
}

static bool within(unsigned long a, unsigned long len, unsigned long start, unsigned long size)
{
	return start && a >= start && len <= size && a - start <= size - len;
}

static bool in_mod_core(const struct module *mod, unsigned long a, unsigned long len)
{
	unsigned long base, size;

	kinstr_module_core_text(mod, &base, &size);
	return within(a, len, base, size);
}

static bool overlaps_section(unsigned long a, unsigned long len, const void *start, unsigned long size)
{
	unsigned long s = (unsigned long)start;

	return s && size && a < s + size && a + len > s;
}

/*
 * Reasons against patching [a, a + len) when it is not core kernel text: NOT_TEXT unless it lies
 * in the core text of one module, MODULE_STATE unless that module is live, and the module's own
 * noinstr and kprobes text. The other predicates (ftrace, jump labels, static calls, extable,
 * BUG, blacklist, kprobes) cover modules themselves.
 */
u32 kinstr_module_policy(unsigned long a, unsigned int len)
{
	struct module *mod;
	u32 r = 0;

	preempt_disable();
	mod = module_at(a);
	if (!mod || mod == THIS_MODULE || !in_mod_core(mod, a, len)) {
		r = R(NOT_TEXT);
	} else if (mod->state != MODULE_STATE_LIVE) {
		r = R(MODULE_STATE);
	} else {
		if (overlaps_section(a, len, mod->noinstr_text_start, mod->noinstr_text_size))
			r |= R(NOINSTR_TEXT);
#ifdef CONFIG_KPROBES
		if (overlaps_section(a, len, mod->kprobes_text_start, mod->kprobes_text_size))
			r |= R(KPROBES_TEXT);
#endif
	}
	preempt_enable();
	return r;
}

/* The reservation tables of a module, as (start, bytes). */
static void module_tables(const struct module *mod, struct kinstr_span *ex, struct kinstr_span *jl,
			  struct kinstr_span *sc, struct kinstr_span *bug)
{
	*ex = (struct kinstr_span){ (unsigned long)mod->extable,
				    (unsigned long)(mod->extable + mod->num_exentries) };
	*jl = (struct kinstr_span){};
	*sc = (struct kinstr_span){};
	*bug = (struct kinstr_span){};
#ifdef CONFIG_JUMP_LABEL
	*jl = (struct kinstr_span){ (unsigned long)mod->jump_entries,
				    (unsigned long)(mod->jump_entries + mod->num_jump_entries) };
#endif
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	if (mod->num_static_call_sites > 0)
		*sc = (struct kinstr_span){ (unsigned long)mod->static_call_sites,
					    (unsigned long)(mod->static_call_sites + mod->num_static_call_sites) };
#endif
#ifdef CONFIG_GENERIC_BUG
	*bug = (struct kinstr_span){ (unsigned long)mod->bug_table,
				     (unsigned long)(mod->bug_table + mod->num_bugs) };
#endif
}

/*
 * May READ copy [a, a + len)? Core text or one table of a live module (ours too: reading is
 * harmless, and user space then names the rule that refuses to patch it). On
 * success the module is pinned: the caller drops *modp with module_put() after the copy.
 */
bool kinstr_module_readable(unsigned long a, unsigned long len, struct module **modp)
{
	struct kinstr_span t[4];
	struct module *mod;
	bool ok = false;
	int i;

	*modp = NULL;
	preempt_disable();
	mod = module_at(a);
	if (mod && mod->state == MODULE_STATE_LIVE) {
		ok = in_mod_core(mod, a, len);
		module_tables(mod, &t[0], &t[1], &t[2], &t[3]);
		for (i = 0; i < 4 && !ok; i++)
			ok = kinstr_span_has(&t[i], a, len);
		if (ok && !try_module_get(mod))
			ok = false;
	}
	preempt_enable();
	if (ok)
		*modp = mod;
	return ok;
}

/*
 * Pin the module whose text holds site. 0 with *modp NULL for anything else (the policy decides
 * about core text, kinstr's own text and non-text); -EBUSY when the module is not live.
 */
int kinstr_module_pin(unsigned long site, struct module **modp)
{
	struct module *mod;
	int err = 0;

	*modp = NULL;
	preempt_disable();
	mod = module_at(site);
	if (mod && mod != THIS_MODULE && in_mod_core(mod, site, 1)) {
		if (mod->state != MODULE_STATE_LIVE || !try_module_get(mod))
			err = -EBUSY;
		else
			*modp = mod;
	}
	preempt_enable();
	return err;
}

/* Self-relative __s32 at off of entry e, as an address. */
static unsigned long mod_rel_at(unsigned long e, unsigned int off)
{
	return e + off + *(const s32 *)(e + off);
}

/*
 * jump_label_text_reserved() or static_call_text_reserved() for a range of a module's text: the
 * module's own jump entries (each as long as the instruction the kernel decodes there) or
 * static call sites (CALL_INSN_SIZE bytes each).
 */
bool kinstr_module_sites_in(enum kinstr_patch_sites which, unsigned long a, unsigned int len)
{
	struct kinstr_span ex, jl, sc, bug, t;
	bool jump = which == KINSTR_SITES_JUMP_LABEL;
	unsigned long e, step = jump ? sizeof(struct jump_entry) : sizeof(struct static_call_site);
	unsigned int off = jump ? offsetof(struct jump_entry, code) : offsetof(struct static_call_site, addr);
	struct module *mod;
	bool hit = false;

	preempt_disable();
	mod = module_at(a);
	if (mod) {
		module_tables(mod, &ex, &jl, &sc, &bug);
		t = jump ? jl : sc;
		for (e = t.start; e && e < t.end && !hit; e += step) {
			unsigned long site = mod_rel_at(e, off);
			int n = CALL_INSN_SIZE;

			if (site >= a + len || site + MAX_INSN_SIZE <= a)
				continue;
			if (jump)
				n = kinstr_ksyms_insn_len(site) ?: MAX_INSN_SIZE;
			hit = site + n > a;
		}
	}
	preempt_enable();
	return hit;
}

/*
 * The jump entries or static call sites of the module holding a, into *t (empty: none). The
 * caller holds the module (its probes pin it) so that the table stays.
 */
void kinstr_module_table_of(unsigned long a, enum kinstr_patch_sites which, struct kinstr_span *t)
{
	struct kinstr_span ex, jl, sc, bug;
	struct module *mod;

	*t = (struct kinstr_span){};
	preempt_disable();
	mod = module_at(a);
	if (mod && mod != THIS_MODULE && in_mod_core(mod, a, 1)) {
		module_tables(mod, &ex, &jl, &sc, &bug);
		*t = which == KINSTR_SITES_JUMP_LABEL ? jl : sc;
	}
	preempt_enable();
}

void kinstr_module_own_tables(struct kinstr_span *jl, struct kinstr_span *sc)
{
	struct kinstr_span ex, bug;

	module_tables(THIS_MODULE, &ex, jl, sc, &bug);
}

/* Does a jump label or an exception fixup of the module holding lo aim into (lo, hi)? */
bool kinstr_module_target_in(unsigned long lo, unsigned long hi, unsigned long *target)
{
	struct kinstr_span ex, jl, sc, bug;
	struct module *mod;
	unsigned long e, t;
	bool hit = false;

	preempt_disable();
	mod = module_at(lo);
	if (mod) {
		module_tables(mod, &ex, &jl, &sc, &bug);
		for (e = jl.start; e && e < jl.end && !hit; e += sizeof(struct jump_entry)) {
			t = mod_rel_at(e, offsetof(struct jump_entry, target));
			hit = t > lo && t < hi;
		}
		for (e = ex.start; e && e < ex.end && !hit; e += sizeof(struct exception_table_entry)) {
			t = mod_rel_at(e, offsetof(struct exception_table_entry, fixup));
			hit = t > lo && t < hi;
		}
	}
	preempt_enable();
	if (hit)
		*target = t;
	return hit;
}

static void span64(struct kinstr_span64 *d, const void *start, unsigned long size)
{
	if (start && size) {
		d->start = (unsigned long)start;
		d->end = d->start + size;
	}
}

/* A module's table, described like the core's (kinstr_layout_table), if it has one. */
static void table(struct kinstr_table *t, const struct kinstr_span *s, u32 entry_size, u32 addr_off,
		  s32 target_off)
{
	if (s->start && s->end > s->start)
		kinstr_layout_table(t, s, entry_size, addr_off, target_off);
}

/* KINSTR_IOC_MODULE: fill mi (addr set by the caller) or fail with ENOENT. */
int kinstr_module_info(struct kinstr_module_info *mi)
{
	struct kinstr_span ex, jl, sc, bug;
	unsigned long base, size;
	struct module *mod;
	int err = 0;

	preempt_disable();
	mod = module_at(mi->addr);
	if (!mod) {
		err = -ENOENT;
		goto out;
	}
	strscpy(mi->name, mod->name, sizeof(mi->name));
	if (mod->state == MODULE_STATE_LIVE)
		mi->flags |= KINSTR_MODULE_LIVE;
	if (mod == THIS_MODULE)
		mi->flags |= KINSTR_MODULE_OWN;
	kinstr_module_core_text(mod, &base, &size);
	span64(&mi->text, (void *)base, size);
	span64(&mi->noinstr_text, mod->noinstr_text_start, mod->noinstr_text_size);
#ifdef CONFIG_KPROBES
	span64(&mi->kprobes_text, mod->kprobes_text_start, mod->kprobes_text_size);
#endif
	module_tables(mod, &ex, &jl, &sc, &bug);
	table(&mi->ex_table, &ex, sizeof(struct exception_table_entry),
	      offsetof(struct exception_table_entry, insn), offsetof(struct exception_table_entry, fixup));
	table(&mi->jump_table, &jl, sizeof(struct jump_entry), offsetof(struct jump_entry, code),
	      offsetof(struct jump_entry, target));
	table(&mi->static_call_sites, &sc, sizeof(struct static_call_site),
	      offsetof(struct static_call_site, addr), -1);
	table(&mi->bug_table, &bug, sizeof(struct bug_entry), offsetof(struct bug_entry, bug_addr_disp), -1);
out:
	preempt_enable();
	return err;
}
