// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The view of the running kernel: kallsyms, the text through the module, the kernel's tables
 * (exceptions, BUG sites, jump labels, static calls), where returns go, the modules kept.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include <bpf/btf.h>
#include <kinstr/kernel.h>
#include <kinstr/x86.h>
#include "rules/entry.h"
#include "rules/symbols.h"
#include "lib/kernel/kernel_priv.h"

/* ---- the live kernel ----------------------------------------------------------------------- */

static struct kmod_text *find_mod(struct kinstr_kernel *k, const char *name)
{
	size_t i;

	/* a module's functions share one copy of its name (load_kallsyms): most lookups end here */
	if (k->mod_last < k->nmods && k->mods[k->mod_last].kname == name)
		return &k->mods[k->mod_last];
	for (i = 0; i < k->nmods; i++)
		if (!strcmp(k->mods[i].mi.name, name)) {
			k->mod_last = i;
			k->mods[i].kname = name;
			return &k->mods[i];
		}
	return NULL;
}

/*
 * Each module named in kallsyms: ask the module for its core text and tables (by the address of
 * one of its text symbols). A module not live (loading, unloading) or unknown is left out.
 */
static int learn_module(struct kinstr_kernel *k, struct kinstr_dev *dev, const struct kinstr_func *f)
{
	struct kmod_text *m;
	void *p;

	if (find_mod(k, f->module))
		return 0;
	p = realloc(k->mods, (k->nmods + 1) * sizeof(*k->mods));
	if (!p)
		return -ENOMEM;
	k->mods = p;
	m = &k->mods[k->nmods++];
	memset(m, 0, sizeof(*m));
	if (!kinstr_dev__module(dev, f->addr, &m->mi) && (m->mi.flags & KINSTR_MODULE_LIVE) &&
	    !strncmp(m->mi.name, f->module, sizeof(m->mi.name) - 1) && m->mi.text.end > m->mi.text.start)
		m->keep = true;
	/* found by name from now on, whether kept or not */
	snprintf(m->mi.name, sizeof(m->mi.name), "%s", f->module);
	return 0;
}

/* Does f lie in text the view holds: core text, or the core text of a kept module? */
static unsigned long long region_end(struct kinstr_kernel *k, const struct kinstr_func *f)
{
	const struct kmod_text *m;

	if (!f->module)
		return f->addr >= k->layout.text.start && f->addr < k->layout.text.end ? k->layout.text.end : 0;
	m = find_mod(k, f->module);
	if (!m || !m->keep || f->addr < m->mi.text.start || f->addr >= m->mi.text.end)
		return 0;
	return m->mi.text.end;
}

/*
 * Text symbols from /proc/kallsyms: the core kernel's, and those of loaded modules ("name
 * [module]"), each sized up to the next higher address, at most to the end of its text (core
 * text, or the module's core text as the module reports it).
 */
static bool ksym_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Each byte's value as a hex digit + 1, 0 for any other byte. */
static const unsigned char hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9,
	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * One /proc/kallsyms line [line, eol) (eol: its '\n', or the buffer's end, where a NUL is): its
 * address, type and name (*name, *nlen: at most 511 characters, as %511s took), *rest what
 * follows the name (a module's " [NAME]", or eol). 0, or -1 for a line of another form.
 */
static int parse_kallsyms_line(const char *line, const char *eol, unsigned long long *addr, char *type,
			       const char **name, size_t *nlen, const char **rest)
{
	const char *p = line, *e, *t;
	unsigned long long a = 0;
	unsigned int v;

	while (ksym_space(*p))
		p++;
	for (e = p; (v = hex1[(unsigned char)*e]); e++)
		a = a << 4 | (v - 1);
	if (e == p || e - p > 16 || !ksym_space(*e))
		return -1;
	for (p = e; ksym_space(*p); p++)
		;
	if (p >= eol || !*p || ksym_space(*p))
		return -1;
	*type = *p++;
	if (!ksym_space(*p))
		return -1;
	while (ksym_space(*p))
		p++;
	/* the name ends at the first blank or the line's end (memchr: the names are most of the bytes) */
	e = eol;
	if ((t = memchr(p, '\t', (size_t)(e - p))))
		e = t;
	if ((t = memchr(p, ' ', (size_t)(e - p))))
		e = t;
	if ((t = memchr(p, 0, (size_t)(e - p))))
		e = t;
	if (e == p)
		return -1;
	*name = p;
	*nlen = (size_t)(e - p) < 511 ? (size_t)(e - p) : 511;
	*addr = a;
	*rest = e;
	return 0;
}

/* " [NAME]" (NAME up to len - 1 characters, not ']'): 0, or -1. */
static int parse_kallsyms_module(const char *p, char *mod, size_t len)
{
	size_t n = 0;

	while (ksym_space(*p))
		p++;
	if (*p++ != '[')
		return -1;
	while (p[n] && p[n] != ']' && p[n] != '\n' && n < len - 1)
		n++;
	if (!n || p[n] != ']')
		return -1;
	memcpy(mod, p, n);
	mod[n] = 0;
	return 0;
}

static bool name_is(const char *name, size_t nlen, const char *what)
{
	size_t w = strlen(what);

	return nlen == w && !memcmp(name, what, w);
}

static int load_kallsyms(struct kinstr_kernel *k, struct kinstr_dev *dev, const char *path)
{
	char *buf, *line, *eol, *lend, *np, lastmod[64] = "";
	size_t cap = 0, i, j, len, nlen = 0, lastmodoff = 0;
	int err = 0;

	buf = kview_read_file(path, &len);
	if (!buf)
		return -errno;
	k->names = malloc(len + 1);
	if (!k->names) {
		free(buf);
		return -ENOMEM;
	}
	np = k->names;
	for (line = buf; line < buf + len; line = eol) {
		unsigned long long addr;
		char type, mod[64];
		size_t nameoff, modoff = 0, n;
		const char *rest, *name;
		bool inmod;

		lend = memchr(line, '\n', (size_t)(buf + len - line));
		if (!lend)
			lend = buf + len;
		eol = lend + (lend < buf + len);
		/* "ADDR T NAME" or "ADDR T NAME\t[MODULE]", by hand: sscanf is most of the parse on TCG */
		if (parse_kallsyms_line(line, lend, &addr, &type, &name, &n, &rest))
			continue;
		inmod = rest < lend;
		if (n > 7 && !memcmp(name, "__SCK__", 7) && n - 7 < sizeof(k->scks->name) && strchr("dDbB", type)) {
			if (kview_grow((void **)&k->scks, k->nscks, &k->scks_cap, 256, sizeof(*k->scks))) {
				free(buf);
				return -ENOMEM;
			}
			k->scks[k->nscks].addr = addr;
			memcpy(k->scks[k->nscks].name, name + 7, n - 7);
			k->scks[k->nscks++].name[n - 7] = 0;
			continue;
		}
		/*
		 * the per-CPU pointer to the running task: current_task until 6.2, then pcpu_hot,
		 * whose first member it is (arch/x86/include/asm/current.h)
		 */
		if (!inmod && strchr("aAdDbB", type) && (name_is(name, n, "current_task") || name_is(name, n, "pcpu_hot"))) {
			k->current_task = addr;
			continue;
		}
		/* weak definitions ('W') are functions too */
		if (!strchr("tTwW", type))
			continue;
		if (inmod) {	/* "[module]" follows */
			if (parse_kallsyms_module(rest, mod, sizeof(mod)))
				continue;
		} else if (addr < k->layout.text.start || addr >= k->layout.text.end) {
			continue;
		}
		if (k->nfuncs == cap) {
			void *p = realloc(k->funcs, (cap = cap ? cap * 2 : 65536) * sizeof(*k->funcs));

			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			k->funcs = p;
		}
		nameoff = nlen;
		memcpy(np + nlen, name, n);
		np[nlen + n] = 0;
		nlen += n + 1;
		if (inmod) {	/* the module's name follows (never at offset 0), once per run of its lines */
			if (!lastmodoff || strcmp(mod, lastmod)) {
				lastmodoff = nlen;
				strcpy(lastmod, mod);
				strcpy(np + nlen, mod);
				nlen += strlen(mod) + 1;
			}
			modoff = lastmodoff;
		}
		k->funcs[k->nfuncs++] = (struct kinstr_func){ .addr = addr, .type = type,
							      .name = (const char *)(uintptr_t)nameoff,
							      .module = (const char *)(uintptr_t)modoff };
	}
	free(buf);
	k->names_len = nlen;
	for (i = 0; i < k->nfuncs; i++) {
		uintptr_t mo = (uintptr_t)k->funcs[i].module;

		k->funcs[i].name = np + (uintptr_t)k->funcs[i].name;
		k->funcs[i].module = mo ? np + mo : NULL;
	}
	for (i = 0; i < k->nfuncs && !err; i++)
		if (k->funcs[i].module)
			err = learn_module(k, dev, &k->funcs[i]);
	if (err)
		return err;
	/* keep what lies in text the view holds (a module's init text is gone, say) */
	for (i = j = 0; i < k->nfuncs; i++)
		if (region_end(k, &k->funcs[i]))
			k->funcs[j++] = k->funcs[i];
	k->nfuncs = j;
	if (kview_sort(k->funcs, k->nfuncs, sizeof(*k->funcs), kview_cmp_func_addr))
		return -ENOMEM;
	/* size: distance to the next distinct address (aliases share their size), within its text */
	for (i = 0; i < k->nfuncs; i = j) {
		unsigned long long next, end = region_end(k, &k->funcs[i]);

		for (j = i; j < k->nfuncs && k->funcs[j].addr == k->funcs[i].addr; j++)
			;
		next = j < k->nfuncs && k->funcs[j].addr < end ? k->funcs[j].addr : end;
		for (size_t m = i; m < j; m++)
			k->funcs[m].size = next - k->funcs[i].addr;
	}
	return k->nfuncs ? 0 : -ENOENT;
}

static int read_table(struct kinstr_dev *dev, const struct kinstr_table *t, unsigned char **out)
{
	int err;

	*out = NULL;
	if (!t->addr || !t->bytes)
		return 0;
	if (!t->entry_size || t->addr_off + 4 > t->entry_size || t->bytes % t->entry_size ||
	    ((t->flags & KINSTR_TABLE_HAS_TARGET) && t->target_off + 4 > t->entry_size))
		return -EPROTO;
	*out = malloc(t->bytes);
	if (!*out)
		return -ENOMEM;
	err = kinstr_dev__read(dev, t->addr, *out, t->bytes);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

/* Each entry's self-relative __s32 gives a text address; len_of() says how many bytes it covers. */
static int add_table(struct kinstr_kernel *k, struct kinstr_dev *dev, const struct kinstr_table *t,
		     const struct kinstr_span64 *text, unsigned int reason, unsigned int (*len_of)(const struct kinstr_kernel *k,
								  unsigned long long addr))
{
	unsigned char *buf;
	size_t off;
	int err = read_table(dev, t, &buf);

	if (err || !buf)
		return err;
	for (off = 0; off < t->bytes; off += t->entry_size) {
		int32_t rel;
		unsigned long long at = t->addr + off + t->addr_off;

		unsigned long long site, len;

		memcpy(&rel, buf + off + t->addr_off, 4);
		site = at + (long long)rel;
		/* entries of __init code point into text freed after boot (or after module init) */
		if (site < text->start || site >= text->end)
			continue;
		len = len_of(k, site);
		err = kview_res_add(k, site, len, reason);
		/*
		 * The key, self-relative, its low bits flags: x86-64's struct jump_entry { s32 code,
		 * target; long key; } (bit 0: branch) and struct static_call_site { s32 addr, key; }
		 * (bit 0: tail call).
		 */
		if (!err && reason == KINSTR_R_JUMP_LABEL && t->entry_size == 16) {
			int64_t kr;

			memcpy(&kr, buf + off + 8, 8);
			err = kview_fact_add(k, site, t->addr + off + 8 + (unsigned long long)kr, reason);
		} else if (!err && reason == KINSTR_R_STATIC_CALL && t->entry_size == 8) {
			memcpy(&rel, buf + off + 4, 4);
			err = kview_fact_add(k, site, t->addr + off + 4 + (long long)rel, reason);
		}
		if (!err && (t->flags & KINSTR_TABLE_HAS_TARGET)) {
			unsigned long long tat = t->addr + off + t->target_off;

			memcpy(&rel, buf + off + t->target_off, 4);
			err = kview_edge_add(k, site, tat + (long long)rel);
			/* a jump label may be a nop now and a jmp later, or the reverse */
			if (!err && reason == KINSTR_R_JUMP_LABEL)
				err = kview_edge_add(k, site, site + len);
		}
		if (err)
			break;
	}
	free(buf);
	return err;
}

/* An exception-table entry or a BUG site is found by the address of one instruction. */
static unsigned int len_point(const struct kinstr_kernel *k, unsigned long long addr)
{
	return 1;
}

static unsigned int len_ud2(const struct kinstr_kernel *k, unsigned long long addr)
{
	return 2;
}

static unsigned int len_call5(const struct kinstr_kernel *k, unsigned long long addr)
{
	return 5;
}

/* x86 jump labels are 2 bytes (jmp rel8 / 66 90) or 5 (jmp rel32 / nopl 0(%rax,%rax,1)). */
static unsigned int len_jump_label(const struct kinstr_kernel *k, unsigned long long addr)
{
	const unsigned char *b = kinstr_kernel__text(k, addr, 2);

	if (b && (b[0] == 0xeb || (b[0] == 0x66 && b[1] == 0x90)))
		return 2;
	return 5;
}

/*
 * Where returns go, as the module saw the kernel patch them at boot (ABI 0.6): the thunk it
 * chose, or none (bare rets). An older module says nothing: returns then move as the compiler
 * wrote them, `jmp __x86_return_thunk`.
 */
static void learn_returns(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	struct kinstr_debug_info d;

	k->ret_to = k->return_thunk;
	if (kinstr_dev__debug_info(dev, &d) || d.size < KINSTR_DEBUG_INFO_SIZE_VER1)
		return;
	k->ret_flags = d.flags & (KINSTR_DEBUG_RET_BARE | KINSTR_DEBUG_RET_ITS);
	k->ret_to = d.flags & KINSTR_DEBUG_RET_BARE ? 0 : d.return_thunk;
	if (d.return_thunk)
		k->return_thunk = d.return_thunk;
}

/*
 * Where f's code ends when zero fill follows it: after the instruction that holds its last
 * non-zero byte (code may end in zero bytes itself: "nopl 0(%rax,%rax)", an imm32 of 0). Decoded
 * from f's start; what does not decode keeps the whole size.
 */
static size_t code_before_zero_fill(const unsigned char *b, unsigned long long addr, size_t size)
{
	struct kinstr_x86_insn insn;
	size_t last = size, off = 0;

	while (last > 0 && !b[last - 1])
		last--;
	if (last == size)
		return size;
	while (off < last) {
		if (kinstr_x86__decode(b + off, size - off, addr + off, &insn))
			return size;
		off += insn.len;
	}
	return off;
}

/*
 * A module's text may run past its last function to a page end (6.12 page-aligns each module
 * memory); sized by the next symbol, that function would run up to there. The zero fill is no
 * function's code, and the module's verifier refuses every site in it: none is offered.
 */
static void trim_module_tails(struct kinstr_kernel *k)
{
	size_t i, j;

	for (i = 0; i < k->nfuncs; i = j) {
		struct kinstr_func *f = &k->funcs[i];
		const unsigned char *b;
		size_t size;

		for (j = i; j < k->nfuncs && k->funcs[j].addr == f->addr; j++)
			;
		if (!f->module || f->addr + f->size != region_end(k, f) ||
		    !(b = kinstr_kernel__text(k, f->addr, f->size)))
			continue;
		size = code_before_zero_fill(b, f->addr, f->size);
		for (size_t m = i; m < j; m++)
			k->funcs[m].size = size;
	}
}

/*
 * The text of every live module the view keeps, read through the module, with the reservations
 * its own tables and sections make (kinstr.ko's own text is all reserved: never patched).
 */
static int add_modules(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	size_t i;
	int err = 0;

	for (i = 0; i < k->nmods && !err; i++) {
		const struct kinstr_module_info *mi = &k->mods[i].mi;
		struct text_chunk *c;
		void *p;

		if (!k->mods[i].keep)
			continue;
		p = realloc(k->chunks, (k->nchunks + 1) * sizeof(*k->chunks));
		if (!p)
			return -ENOMEM;
		k->chunks = p;
		c = &k->chunks[k->nchunks];
		c->addr = mi->text.start;
		c->len = mi->text.end - mi->text.start;
		c->bytes = malloc(c->len);
		if (!c->bytes)
			return -ENOMEM;
		k->nchunks++;
		err = kinstr_dev__read(dev, c->addr, c->bytes, c->len);
	}
	if (err)
		return err;
	qsort(k->chunks, k->nchunks, sizeof(*k->chunks), kview_cmp_chunk);
	for (i = 0; i < k->nmods && !err; i++) {
		const struct kinstr_module_info *mi = &k->mods[i].mi;

		if (!k->mods[i].keep)
			continue;
		if (mi->flags & KINSTR_MODULE_OWN)
			err = kview_add_span(k, &mi->text, KINSTR_R_OWN_MODULE);
		err = err ?: kview_add_span(k, &mi->noinstr_text, KINSTR_R_NOINSTR_TEXT);
		err = err ?: kview_add_span(k, &mi->kprobes_text, KINSTR_R_KPROBES_TEXT);
		err = err ?: add_table(k, dev, &mi->ex_table, &mi->text, KINSTR_R_EXTABLE, len_point);
		err = err ?: add_table(k, dev, &mi->bug_table, &mi->text, KINSTR_R_BUG, len_ud2);
		err = err ?: add_table(k, dev, &mi->static_call_sites, &mi->text, KINSTR_R_STATIC_CALL,
				       len_call5);
		err = err ?: add_table(k, dev, &mi->jump_table, &mi->text, KINSTR_R_JUMP_LABEL,
				       len_jump_label);
	}
	return err;
}

/*
 * KINSTR_PHASES=1 in the environment: each step of reading the live view, timed on stderr
 * ("kinstr: phase NAME SECONDS"), to see where a command's start-up goes.
 */
static void phase(const char *name)
{
	static int on = -1;
	static double last;
	struct timespec t;
	double now;

	if (on < 0) {
		const char *e = getenv("KINSTR_PHASES");

		on = e && *e && strcmp(e, "0");
	}
	if (!on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	now = t.tv_sec + t.tv_nsec / 1e9;
	if (name)
		fprintf(stderr, "kinstr: phase %-16s %.4f\n", name, now - last);
	last = now;
}

struct kinstr_kernel *kinstr_kernel__open_live(struct kinstr_dev *dev)
{
	struct kinstr_kernel *k = calloc(1, sizeof(*k));
	struct kinstr_version v;
	unsigned long long tlen;
	int err;

	phase(NULL);
	if (!k)
		return kview_fail(k, ENOMEM);
	err = kinstr_dev__version(dev, &v);
	if (!err)
		err = kinstr_dev__layout(dev, &k->layout);
	if (err)
		return kview_fail(k, err);
	memcpy(k->release, v.kernel_release, sizeof(k->release) - 1);
	tlen = k->layout.text.end - k->layout.text.start;
	k->chunks = calloc(1, sizeof(*k->chunks));
	if (!k->chunks || !(k->chunks[0].bytes = malloc(tlen)))
		return kview_fail(k, ENOMEM);
	k->nchunks = 1;
	k->chunks[0].addr = k->layout.text.start;
	k->chunks[0].len = tlen;
	err = kinstr_dev__read(dev, k->layout.text.start, k->chunks[0].bytes, tlen);
	phase("text");
	if (!err)
		err = load_kallsyms(k, dev, "/proc/kallsyms");
	phase("kallsyms");
	if (!err)
		err = add_modules(k, dev);
	phase("modules");
	if (!err)
		trim_module_tails(k);
	phase("trim");
	if (!err)
		err = kview_add_span(k, &k->layout.entry_text, KINSTR_R_ENTRY_TEXT);
	if (!err)
		err = kview_add_span(k, &k->layout.irqentry_text, KINSTR_R_ENTRY_TEXT);
	if (!err)
		err = kview_add_span(k, &k->layout.noinstr_text, KINSTR_R_NOINSTR_TEXT);
	if (!err)
		err = kview_add_span(k, &k->layout.kprobes_text, KINSTR_R_KPROBES_TEXT);
	if (!err)
		err = add_table(k, dev, &k->layout.ex_table, &k->layout.text, KINSTR_R_EXTABLE, len_point);
	if (!err)
		err = add_table(k, dev, &k->layout.bug_table, &k->layout.text, KINSTR_R_BUG, len_ud2);
	if (!err)
		err = add_table(k, dev, &k->layout.static_call_sites, &k->layout.text, KINSTR_R_STATIC_CALL, len_call5);
	if (!err)
		err = add_table(k, dev, &k->layout.jump_table, &k->layout.text, KINSTR_R_JUMP_LABEL, len_jump_label);
	phase("tables");
	if (!err)
		err = kview_mark_endbr(k, true);
	phase("endbr");
	if (!err)
		err = kview_add_ftrace(k, dev);
	phase("ftrace");
	if (!err)
		err = kview_add_stray_ftrace(k, dev);
	phase("stray_ftrace");
	if (!err)
		err = kview_index_names(k);
	phase("index");
	if (!err) {
		err = kview_sort(k->facts, k->nfacts, sizeof(*k->facts), kview_cmp_fact) ?:
		      kview_sort(k->scks, k->nscks, sizeof(*k->scks), kview_cmp_sck);
		phase("sort_facts");
	}
	if (!err)
		err = kview_add_die_notifiers(k, dev);
	phase("die_notifiers");
	if (!err)
		err = kview_add_blacklist(k);
	phase("blacklist");
	if (!err)
		err = kview_add_kprobes(k);
	phase("kprobes");
	if (!err)
		err = kview_add_hit_path(k, dev);
	phase("hit_path");
	if (!err)
		err = kview_add_held(k, dev);
	phase("held");
	if (!err)
		err = kview_add_symbol_rules(k);
	phase("symbol_rules");
	if (!err)
		learn_returns(k, dev);
	phase("returns");
	if (!err)
		err = kview_finish(k);
	phase("finish");
	return err ? kview_fail(k, err) : k;
}
