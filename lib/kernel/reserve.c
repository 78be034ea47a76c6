// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What the running kernel reserves, read for the view: ENDBRs, ftrace sites, die notifiers, the
 * kprobe blacklist, what other sessions hold, kinstr's own hit path, kprobes, functions refused by name.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <bpf/btf.h>
#include <kinstr/kernel.h>
#include "rules/entry.h"
#include "rules/symbols.h"
#include "lib/kernel/kernel_priv.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * ftrace sites: core-kernel __mcount_loc is init data, freed after boot, so a site is a function
 * that tracefs lists as traceable and whose live text starts with the 5-byte NOP (or the call)
 * ftrace put there.
 */
/* Does f start (after its ENDBR) like an ftrace site: a 5-byte NOP, or a call while traced? */
static bool entry_like_ftrace(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const unsigned char *b = kinstr_kernel__text(k, f->addr + f->endbr, 5);

	return b && (!memcmp(b, nop5, 5) || b[0] == 0xe8);
}

/*
 * Function entries that are ftrace's records, as tracefs lists them (available_filter_functions:
 * "name" or "name [module]"); without tracefs, every entry that starts like an ftrace site. What
 * an older module makes do with: generating the list costs more than the rest of the start.
 */
static int add_ftrace_tracefs(struct kinstr_kernel *k)
{
	static const char *paths[] = { "/sys/kernel/tracing/available_filter_functions",
				       "/sys/kernel/debug/tracing/available_filter_functions" };
	char *buf = NULL, **names = NULL, *line, *save = NULL;
	size_t n = 0, cap = 0, i;
	int err = 0;

	for (i = 0; i < 2 && !buf; i++)
		buf = kview_read_file(paths[i], NULL);
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			void *p = realloc(names, (cap = cap ? cap * 2 : 65536) * sizeof(*names));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			names = p;
		}
		names[n++] = line;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < k->nfuncs; i++) {
		const struct kinstr_func *f = &k->funcs[i];
		char key[600];
		const char *kp = key;

		if (!entry_like_ftrace(k, f))
			continue;
		if (f->module)
			snprintf(key, sizeof(key), "%s [%s]", f->name, f->module);
		else
			kp = f->name;
		if (buf && !bsearch(&kp, names, n, sizeof(*names), cmp_str))
			continue;
		err = kview_res_add(k, f->addr + f->endbr, 5, KINSTR_R_FTRACE);
		if (err)
			break;
	}
out:
	free(names);
	free(buf);
	return err;
}

/*
 * Ask the module which ranges ftrace holds a record at (ftrace_text_reserved(), the predicate
 * the module re-checks every patch with), and reserve those. 1: the module cannot tell.
 */
static int ftrace_by_module(struct kinstr_kernel *k, struct kinstr_dev *dev, struct kinstr_check_range *r,
			    size_t n)
{
	size_t i;
	int err = 0;

	if (!dev || kinstr_dev__check_only(dev, r, (unsigned int)n, 1u << KINSTR_R_FTRACE))
		return 1;
	for (i = 0; i < n; i++)
		if (r[i].reasons & (1u << KINSTR_R_UNVERIFIABLE))
			return 1;
	for (i = 0; i < n && !err; i++)
		if (r[i].reasons & (1u << KINSTR_R_FTRACE))
			err = kview_res_add(k, r[i].addr, 5, KINSTR_R_FTRACE);
	return err;
}

/* Function entries that are ftrace sites: the module's answer for each that starts like one. */
int kview_add_ftrace(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	struct kinstr_check_range *r = calloc(k->nfuncs + 1, sizeof(*r));
	size_t i, n = 0;
	int err;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < k->nfuncs; i++) {
		const struct kinstr_func *f = &k->funcs[i];

		if ((!i || f->addr != k->funcs[i - 1].addr) && entry_like_ftrace(k, f))
			r[n++] = (struct kinstr_check_range){ .addr = f->addr + f->endbr, .len = 5 };
	}
	err = n ? ftrace_by_module(k, dev, r, n) : 0;
	free(r);
	return err == 1 ? add_ftrace_tracefs(k) : err;
}

/* Does a reservation start at a? (k->res sorted by address) */
static bool res_starts_at(const struct kinstr_kernel *k, unsigned long long a)
{
	size_t lo = 0, hi = k->nres;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (k->res[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->nres && k->res[lo].addr == a;
}

/*
 * ftrace sites that are no function's start: a __weak function the linker overrode leaves its
 * body, and its __fentry__ NOP, inside the symbol before it (tracefs lists the record as
 * __ftrace_invalid_address___N, with no address). A function's NOP sits at its 16-byte
 * aligned start, so every aligned 5-byte NOP inside a symbol is asked of the module (ftrace's
 * own records: ftrace_text_reserved()); the few that are ftrace's become reservations.
 */
int kview_add_stray_ftrace(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	struct kinstr_check_range *r = NULL;
	size_t i, n = 0, cap = 0;
	unsigned long long last = 0;
	int err = 0;

	/* most such NOPs are jump labels, known already: sorted, the reservations tell them apart */
	if (kview_sort(k->res, k->nres, sizeof(*k->res), kview_cmp_res))
		return -ENOMEM;
	for (i = 0; i < k->nfuncs; i++) {
		const struct kinstr_func *f = &k->funcs[i];
		unsigned long long a;

		if (f->addr == last)	/* an alias: asked already */
			continue;
		last = f->addr;
		const unsigned char *fb = kinstr_kernel__text(k, f->addr, f->size);

		for (a = (f->addr + 16) & ~15ULL; fb && a + 5 <= f->addr + f->size; a += 16) {
			const unsigned char *b = fb + (a - f->addr);
			unsigned long long at = a;

			/* neither the NOP nor an ENDBR (f3 0f 1e fa, or sealed: 66 0f 1f 00) starts here */
			if (b[0] != nop5[0] && b[0] != 0xf3 && b[0] != 0x66)
				continue;
			/* a stray body's NOP follows its ENDBR, as a function's does */
			if (kinstr_entry_endbr_len(b) && a + 9 <= f->addr + f->size) {
				at = a + KINSTR_ENDBR_LEN;
				b += KINSTR_ENDBR_LEN;
			}
			if (memcmp(b, nop5, 5) || res_starts_at(k, at))
				continue;
			if (n == cap) {
				void *p = realloc(r, (cap = cap ? cap * 2 : 1024) * sizeof(*r));

				if (!p) {
					free(r);
					return -ENOMEM;
				}
				r = p;
			}
			r[n++] = (struct kinstr_check_range){ .addr = at, .len = 5 };
		}
	}
	/* ftrace's predicate alone; from an older module the whole check */
	err = n ? ftrace_by_module(k, dev, r, n) : 0;
	if (err == 1) {
		err = 0;
		/* an older module, or none: nothing more is known (the module still refuses these) */
		if (kinstr_dev__check(dev, r, (unsigned int)n) == 0)
			for (i = 0; i < n && !err; i++)
				if (r[i].reasons & (1u << KINSTR_R_FTRACE))
					err = kview_res_add(k, r[i].addr, 5, KINSTR_R_FTRACE);
	}
	free(r);
	return err;
}

/* Is BTF type id (after typedefs and qualifiers) a pointer, and to what? */
static const struct btf_type *btf_pointee(const struct btf *btf, __u32 id, __u32 *to)
{
	const struct btf_type *t;
	int r = btf__resolve_type(btf, id);

	if (r < 0 || !(t = btf__type_by_id(btf, (__u32)r)) || !btf_is_ptr(t))
		return NULL;
	r = btf__resolve_type(btf, t->type);
	*to = r < 0 ? 0 : (__u32)r;
	return *to ? btf__type_by_id(btf, *to) : t;	/* void *: the pointer itself */
}

/* Has the BTF function fn a notifier's prototype, int (struct notifier_block *, unsigned long, void *)? */
static bool btf_notifier_shaped(const struct btf *btf, const struct btf_type *fn)
{
	const struct btf_type *proto = btf__type_by_id(btf, fn->type), *nb;
	const struct btf_param *p;
	__u32 to = 0;

	if (!proto || !btf_is_func_proto(proto) || btf_vlen(proto) != 3)
		return false;
	p = btf_params(proto);
	nb = btf_pointee(btf, p[0].type, &to);
	return nb && to && btf_is_struct(nb) && !strcmp(btf__name_by_offset(btf, nb->name_off), "notifier_block");
}

/*
 * Die notifiers (rule KINSTR_R_DIE_NOTIFIER): notify_die() runs every block of the kernel's
 * die_chain for every kernel int3, before or after kinstr's own notifier, so an int3 in one of
 * those functions recurses on the next int3 (and a BUG's report runs the chain again: the
 * "kernel BUG at kernel/entry/common.c:463!" loop of hw_breakpoint_exceptions_notify). Only the
 * module can walk the chain; user space asks it about every function (CHECK for that reason
 * alone: the module gathers the chain once per call), and reserves the whole function of each
 * one the module names. A module older than ABI 0.12 checks everything per range, so there
 * only functions whose BTF prototype is a notifier's are asked (parsing BTF costs more than
 * the chain's check). Needs the index by name (kview_index_names()).
 */
int kview_add_die_notifiers(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	bool only = kinstr_dev__has(dev, KINSTR_FEAT_CHECK_ONLY);
	struct kinstr_check_range *r = NULL;
	size_t i, n = 0, cap = 0;
	struct btf *btf = only ? NULL : btf__parse("/sys/kernel/btf/vmlinux", NULL);
	int err = 0;

	for (i = 0; i < k->nfuncs; i++) {
		const struct kinstr_func *f = &k->funcs[i];

		if (btf || (i && f->addr == k->funcs[i - 1].addr))
			continue;
		if (n == cap) {
			void *p = realloc(r, (cap = cap ? cap * 2 : 1024) * sizeof(*r));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			r = p;
		}
		r[n++] = (struct kinstr_check_range){ .addr = f->addr, .len = 1 };
	}
	for (i = 1; btf && i < btf__type_cnt(btf); i++) {
		const struct btf_type *t = btf__type_by_id(btf, (__u32)i);
		const char *name;
		uint32_t hit;

		if (!t || !btf_is_func(t) || !btf_notifier_shaped(btf, t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		for (hit = name ? kview_first_named(k, name) : NAME_NONE; hit != NAME_NONE; hit = k->name_next[hit]) {
			if (n == cap) {
				void *p = realloc(r, (cap = cap ? cap * 2 : 256) * sizeof(*r));

				if (!p) {
					err = -ENOMEM;
					goto out;
				}
				r = p;
			}
			r[n++] = (struct kinstr_check_range){ .addr = k->funcs[hit].addr, .len = 1 };
		}
	}
	/* no module: nothing more is known (a newer module still refuses them) */
	if (n && (only ? kinstr_dev__check_only(dev, r, (unsigned int)n, 1u << KINSTR_R_DIE_NOTIFIER) :
		  kinstr_dev__check(dev, r, (unsigned int)n)) == 0) {
		for (i = 0; i < n && !err; i++) {
			const struct kinstr_func *f;

			if (!(r[i].reasons & (1u << KINSTR_R_DIE_NOTIFIER)))
				continue;
			f = kinstr_kernel__func_at(k, r[i].addr);
			if (f)
				err = kview_res_add(k, f->addr, f->size, KINSTR_R_DIE_NOTIFIER);
		}
	}
out:
	free(r);
	btf__free(btf);
	return err;
}

struct range {
	unsigned long long s, e;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

static bool in_ranges(const struct range *r, size_t n, unsigned long long a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {	/* first range starting above a */
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].s <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < r[lo - 1].e;
}

/*
 * debugfs kprobes/blacklist: "0xSTART-0xEND\tsymbol" per line. Like the kernel's
 * within_kprobe_blacklist(), a compiler clone ("foo.part.0", "foo.cold") is blacklisted when
 * the function it was split from is.
 */
int kview_add_blacklist(struct kinstr_kernel *k)
{
	char *buf = kview_read_file("/sys/kernel/debug/kprobes/blacklist", NULL), *line, *save = NULL;
	struct range *r = NULL;
	size_t n = 0, cap = 0, i;
	int err = 0;

	if (!buf)
		return -errno;
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		const struct kinstr_func *fn;
		unsigned long long s, e;

		if (sscanf(line, "0x%llx-0x%llx", &s, &e) != 2 || e <= s)
			continue;
		/*
		 * The kernel blacklists whole symbols; kinstr's fences (kprobes keep off the sites another
		 * kinstr descriptor holds) start past a symbol's start. The module refuses the bytes those
		 * hold as busy, not as blacklisted.
		 */
		fn = kinstr_kernel__func_at(k, s);
		if (fn && fn->addr != s)
			continue;
		if (n == cap) {
			void *p = realloc(r, (cap = cap ? cap * 2 : 1024) * sizeof(*r));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			r = p;
		}
		r[n++] = (struct range){ s, e };
		err = kview_res_add(k, s, e - s, KINSTR_R_KPROBE_BLACKLIST);
	}
	free(buf);
	if (!err)
		qsort(r, n, sizeof(*r), cmp_range);
	for (i = 0; i < k->nfuncs && !err; i++) {
		const struct kinstr_func *f = &k->funcs[i], *base;
		const char *dot = strchr(f->name, '.');
		char name[512];

		if (!dot || dot == f->name || (size_t)(dot - f->name) >= sizeof(name))
			continue;
		memcpy(name, f->name, dot - f->name);
		name[dot - f->name] = 0;
		base = kview_find_first(k, name);
		if (base && in_ranges(r, n, base->addr))
			err = kview_res_add(k, f->addr, f->size, KINSTR_R_KPROBE_BLACKLIST);
	}
	free(r);
	return err;
}

/* The functions kinstr's own probe context reaches, as the module found them at load. */
/*
 * What other kinstr sessions hold (their probes' patched bytes, the functions their code caches
 * run): KINSTR_R_HELD, so that the view never reads another session's splice as the kernel's
 * code. A probe through ftrace holds only the ftrace site, which is reserved already.
 */
int kview_add_held(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	size_t i;
	int err = 0;

	if (!kinstr_dev__has(dev, KINSTR_FEAT_HELD))
		return 0;	/* an older module: it still refuses what is held, as busy */
	k->held = kinstr_dev__held(dev, &k->nheld);
	if (!k->held)
		return -errno;
	for (i = 0; i < k->nheld && !err; i++)
		if (k->held[i].kind != KINSTR_HELD_FTRACE && k->held[i].len)
			err = kview_res_add(k, k->held[i].addr, k->held[i].len, KINSTR_R_HELD);
	return err;
}

int kview_add_hit_path(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	struct kinstr_span64 *spans;
	bool incomplete;
	size_t n, i;
	int err = 0;

	if (!kinstr_dev__has(dev, KINSTR_FEAT_HIT_PATH))
		return 0;	/* an older module: it has no such rule to agree with */
	spans = kinstr_dev__hit_path(dev, &n, &incomplete);
	if (!spans)
		return -errno;
	if (incomplete)
		err = kview_res_add(k, k->layout.text.start, k->layout.text.end - k->layout.text.start,
			      KINSTR_R_HIT_PATH);
	for (i = 0; i < n && !err; i++) {
		size_t m;
		bool own = false;

		/* kinstr.ko's own functions are refused as its own text already: one rule is enough */
		for (m = 0; m < k->nmods; m++)
			own |= (k->mods[m].mi.flags & KINSTR_MODULE_OWN) && spans[i].start >= k->mods[m].mi.text.start &&
			       spans[i].start < k->mods[m].mi.text.end;
		if (!own && spans[i].end > spans[i].start)
			err = kview_res_add(k, spans[i].start, spans[i].end - spans[i].start, KINSTR_R_HIT_PATH);
	}
	free(spans);
	return err;
}

/*
 * debugfs kprobes/list: "ADDR  k  sym+off  [FLAGS]" per kprobe. Their int3 (or optimized jmp)
 * already changed those bytes: another splice must keep off.
 */
int kview_add_kprobes(struct kinstr_kernel *k)
{
	char *buf = kview_read_file("/sys/kernel/debug/kprobes/list", NULL), *line, *save = NULL;
	int err = 0;

	if (!buf)
		return 0;	/* no kprobes registered, or no debugfs: the module checks anyway */
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;

		if (strstr(line, "[FTRACE]"))	/* patches only the ftrace site, reserved anyway */
			continue;
		/* in core text or a module's text the view holds */
		if (sscanf(line, "%llx", &a) == 1 && kinstr_kernel__text(k, a, 1))
			err = kview_res_add(k, a, 5, KINSTR_R_KPROBE);
	}
	free(buf);
	return err;
}

int kview_add_span(struct kinstr_kernel *k, const struct kinstr_span64 *s, unsigned int reason)
{
	return s->end > s->start ? kview_res_add(k, s->start, s->end - s->start, reason) : 0;
}

int kview_add_symbol_rules(struct kinstr_kernel *k)
{
	size_t i;
	int err = 0;

	for (i = 0; i < k->nfuncs && !err; i++) {
		const struct kinstr_func *f = &k->funcs[i];

		if (kinstr_rule_cfi_symbol(f->name))
			err = kview_res_add(k, f->addr, f->size, KINSTR_R_CFI_SYMBOL);
		if (!err && kinstr_rule_sc_trampoline(f->name))
			err = kview_res_add(k, f->addr, f->size, KINSTR_R_SC_TRAMPOLINE);
		if (!err && !strcmp(f->name, "__x86_return_thunk"))
			k->return_thunk = f->addr;
	}
	return err;
}
