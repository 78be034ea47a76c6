// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The kernel's code as analysis sees it: functions, live text, reservations. Built from the
 * running kernel or loaded from a snapshot; everything after loading is shared.
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

struct text_chunk {
	unsigned long long addr;
	size_t len;
	unsigned char *bytes;
};

/* A live module whose core text the view holds. */
struct kmod_text {
	struct kinstr_module_info mi;
	bool keep;			/* live, text readable */
};

struct kinstr_kernel {
	char release[65];
	struct kinstr_layout layout;
	unsigned long long return_thunk;	/* a jmp there is a return */
	/* where a relocated bare ret jumps (0: it stays a bare ret), as the module reports */
	unsigned long long ret_to;
	unsigned long long ret_flags;		/* KINSTR_DEBUG_RET_* */
	/* the per-CPU address of the running task's pointer (kallsyms), 0 when unknown */
	unsigned long long current_task;

	struct kinstr_func *funcs;	/* sorted by addr */
	size_t nfuncs;
	/* what other kinstr sessions held when the view was read (KINSTR_IOC_HELD) */
	struct kinstr_held_range *held;
	size_t nheld;
	/* by name: a hash table of each name's first function, then the next of that name by addr */
	uint32_t *name_head;		/* name_slots entries: index + 1 into funcs, 0 empty */
	uint32_t *name_next;		/* per function: the next of that name, NAME_NONE after the last */
	size_t name_slots;		/* a power of 2, at least twice nfuncs */
	char *names;			/* one allocation for every name */
	size_t names_len;

	struct kinstr_reserved *res;	/* sorted by addr */
	unsigned long long *res_maxend;	/* max end of res[0..i] */
	size_t nres, res_cap;

	struct text_chunk *chunks;	/* sorted by addr, disjoint */
	size_t nchunks;

	struct kinstr_cfg_edge *edges;	/* sorted by from */
	size_t nedges, edges_cap;

	struct kmod_text *mods;		/* live view only */
	size_t nmods;

	/* live view only: each jump label's key and branch bit, each static call's key and tail bit */
	struct site_fact *facts;	/* sorted by site after open */
	size_t nfacts, facts_cap;
	struct sck *scks;		/* static call keys (__SCK__<name>), sorted by addr */
	size_t nscks, scks_cap;
};

struct site_fact {
	unsigned long long site, key;	/* key: its low flag bits cleared */
	unsigned int reason;		/* KINSTR_R_JUMP_LABEL or KINSTR_R_STATIC_CALL */
	unsigned int flags;		/* jump_entry: bit 0 branch; static_call_site: bit 0 tail */
};

struct sck {
	unsigned long long addr;
	char name[120];			/* after __SCK__ */
};

/* Room for one more element in *arr (n in use, *cap allocated, doubling from first): 0 or -ENOMEM. */
static int grow(void **arr, size_t n, size_t *cap, size_t first, size_t elem)
{
	size_t c = *cap ? *cap * 2 : first;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static int fact_add(struct kinstr_kernel *k, unsigned long long site, unsigned long long key, unsigned int reason)
{
	if (grow((void **)&k->facts, k->nfacts, &k->facts_cap, 4096, sizeof(*k->facts)))
		return -ENOMEM;
	k->facts[k->nfacts++] = (struct site_fact){ site, key & ~3ull, reason, (unsigned int)(key & 3) };
	return 0;
}

static int cmp_fact(const void *a, const void *b)
{
	const struct site_fact *x = a, *y = b;

	return x->site < y->site ? -1 : x->site > y->site;
}

static int cmp_sck(const void *a, const void *b)
{
	const struct sck *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The first of n elements (sorted by a 64-bit key at their start) whose key is >= key. */
static size_t lower_bound(const void *base, size_t n, size_t elem, unsigned long long key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		unsigned long long v;

		memcpy(&v, (const char *)base + mid * elem, sizeof(v));
		if (v < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct site_fact *fact_at(const struct kinstr_kernel *k, unsigned long long site, unsigned int reason)
{
	size_t lo = lower_bound(k->facts, k->nfacts, sizeof(*k->facts), site);

	for (; lo < k->nfacts && k->facts[lo].site == site; lo++)
		if (k->facts[lo].reason == reason)
			return &k->facts[lo];
	return NULL;
}

int kinstr_kernel__jump_label(const struct kinstr_kernel *k, unsigned long long site, unsigned long long *key,
			      int *branch)
{
	const struct site_fact *f = fact_at(k, site, KINSTR_R_JUMP_LABEL);

	if (!f)
		return -ENOENT;
	*key = f->key;
	*branch = f->flags & 1;
	return 0;
}

int kinstr_kernel__static_call(const struct kinstr_kernel *k, unsigned long long site, unsigned long long *tramp,
			       int *tail)
{
	const struct site_fact *f = fact_at(k, site, KINSTR_R_STATIC_CALL);
	const struct kinstr_func *t;
	char name[160];
	size_t lo;

	if (!f)
		return -ENOENT;
	lo = lower_bound(k->scks, k->nscks, sizeof(*k->scks), f->key);
	if (lo == k->nscks || k->scks[lo].addr != f->key)
		return -ENOENT;
	/* the key __SCK__<name> has the trampoline __SCT__<name>, which static_call_update() keeps current */
	snprintf(name, sizeof(name), "__SCT__%s", k->scks[lo].name);
	t = kinstr_kernel__find_func(k, name);
	if (!t)
		return -ENOENT;
	*tramp = t->addr;
	*tail = f->flags & 1;
	return 0;
}

static int edge_add(struct kinstr_kernel *k, unsigned long long from, unsigned long long to)
{
	if (grow((void **)&k->edges, k->nedges, &k->edges_cap, 4096, sizeof(*k->edges)))
		return -ENOMEM;
	k->edges[k->nedges++] = (struct kinstr_cfg_edge){ from, to };
	return 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct kinstr_cfg_edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

size_t kinstr_kernel__edges(const struct kinstr_kernel *k, unsigned long long start,
			    unsigned long long end, const struct kinstr_cfg_edge **edges)
{
	size_t lo = lower_bound(k->edges, k->nedges, sizeof(*k->edges), start), first = lo;

	while (lo < k->nedges && k->edges[lo].from < end)
		lo++;
	*edges = k->edges ? k->edges + first : NULL;
	return lo - first;
}

/* ---- shared helpers ---------------------------------------------------------------------- */

static int cmp_func_addr(const void *a, const void *b)
{
	const struct kinstr_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct text_chunk *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_res(const void *a, const void *b)
{
	const struct kinstr_reserved *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int res_add(struct kinstr_kernel *k, unsigned long long addr, unsigned long long len,
		   unsigned int reason)
{
	if (!len)
		return 0;
	if (k->nres == k->res_cap) {
		size_t cap = k->res_cap ? k->res_cap * 2 : 4096;
		void *p = realloc(k->res, cap * sizeof(*k->res));

		if (!p)
			return -ENOMEM;
		k->res = p;
		k->res_cap = cap;
	}
	k->res[k->nres++] = (struct kinstr_reserved){ addr, len > UINT32_MAX ? UINT32_MAX : len, reason };
	return 0;
}

#define NAME_NONE UINT32_MAX

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* The slot that holds name's chain, or the empty one where it would go. */
static size_t name_slot(const struct kinstr_kernel *k, const char *name)
{
	size_t m = k->name_slots - 1, i = name_hash(name) & m;

	while (k->name_head[i] && strcmp(k->funcs[k->name_head[i] - 1].name, name))
		i = (i + 1) & m;
	return i;
}

/*
 * Index the functions by name: one pass in address order, so each name's chain is in address
 * order too (sorting the names took 0.2 s of every start under TCG).
 */
static int index_names(struct kinstr_kernel *k)
{
	uint32_t *tail;
	size_t i;

	free(k->name_head);
	free(k->name_next);
	for (k->name_slots = 1024; k->name_slots < 2 * k->nfuncs; k->name_slots *= 2)
		;
	k->name_head = calloc(k->name_slots, sizeof(*k->name_head));
	k->name_next = calloc(k->nfuncs + 1, sizeof(*k->name_next));
	tail = calloc(k->nfuncs + 1, sizeof(*tail));	/* per chain head: its last function */
	if (!k->name_head || !k->name_next || !tail || k->nfuncs >= NAME_NONE) {
		free(tail);
		free(k->name_head);
		free(k->name_next);
		k->name_head = k->name_next = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < k->nfuncs; i++) {
		size_t s = name_slot(k, k->funcs[i].name);

		k->name_next[i] = NAME_NONE;
		if (!k->name_head[s]) {
			k->name_head[s] = (uint32_t)i + 1;
			tail[i] = (uint32_t)i;
		} else {
			uint32_t h = k->name_head[s] - 1;

			k->name_next[tail[h]] = (uint32_t)i;
			tail[h] = (uint32_t)i;
		}
	}
	free(tail);
	return 0;
}

/* The first function named name in address order (NAME_NONE if none); name_next[] goes on. */
static uint32_t first_named(const struct kinstr_kernel *k, const char *name)
{
	size_t s;

	if (!k->name_head)
		return NAME_NONE;
	s = name_slot(k, name);
	return k->name_head[s] ? k->name_head[s] - 1 : NAME_NONE;
}

/* Sort and deduplicate the reservations, index functions by name: the view is then complete. */
static int finish(struct kinstr_kernel *k)
{
	size_t i, j;

	qsort(k->res, k->nres, sizeof(*k->res), cmp_res);
	for (i = j = 0; i < k->nres; i++)
		if (!j || cmp_res(&k->res[j - 1], &k->res[i]))
			k->res[j++] = k->res[i];
	k->nres = j;
	qsort(k->edges, k->nedges, sizeof(*k->edges), cmp_edge);
	k->res_maxend = calloc(k->nres + 1, sizeof(*k->res_maxend));
	if (!k->res_maxend)
		return -ENOMEM;
	for (i = 0; i < k->nres; i++) {
		unsigned long long end = k->res[i].addr + k->res[i].len;

		k->res_maxend[i] = i && k->res_maxend[i - 1] > end ? k->res_maxend[i - 1] : end;
	}

	return k->name_head ? 0 : index_names(k);	/* the functions are fixed once indexed */
}

void kinstr_kernel__close(struct kinstr_kernel *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nchunks; i++)
		free(k->chunks[i].bytes);
	free(k->chunks);
	free(k->funcs);
	free(k->held);
	free(k->name_head);
	free(k->name_next);
	free(k->names);
	free(k->res);
	free(k->res_maxend);
	free(k->edges);
	free(k->mods);
	free(k->facts);
	free(k->scks);
	free(k);
}

static struct kinstr_kernel *fail(struct kinstr_kernel *k, int err)
{
	kinstr_kernel__close(k);
	errno = err < 0 ? -err : err;
	return NULL;
}

/* ---- queries --------------------------------------------------------------------------- */

const char *kinstr_kernel__release(const struct kinstr_kernel *k)
{
	return k->release;
}

const struct kinstr_layout *kinstr_kernel__layout(const struct kinstr_kernel *k)
{
	return &k->layout;
}

unsigned long long kinstr_kernel__current_task(const struct kinstr_kernel *k)
{
	return k->current_task;
}

unsigned long long kinstr_kernel__return_thunk(const struct kinstr_kernel *k)
{
	return k->return_thunk;
}

size_t kinstr_kernel__func_cnt(const struct kinstr_kernel *k)
{
	return k->nfuncs;
}

const struct kinstr_func *kinstr_kernel__func(const struct kinstr_kernel *k, size_t i)
{
	return i < k->nfuncs ? &k->funcs[i] : NULL;
}

/* The first function of that name in address order, ambiguous or not (internal use). */
static const struct kinstr_func *find_first(const struct kinstr_kernel *k, const char *name)
{
	uint32_t i = first_named(k, name);

	return i != NAME_NONE ? &k->funcs[i] : NULL;
}

size_t kinstr_kernel__lookup(const struct kinstr_kernel *k, const char *name, const struct kinstr_func **out,
			     size_t max)
{
	const char *at = strchr(name, '@');
	unsigned long long addr = 0;
	char base[512];
	uint32_t i, prev;
	size_t n = 0;

	if (at) {
		char *end;

		if ((size_t)(at - name) >= sizeof(base) || !at[1] || at[1] == '-')
			return 0;
		memcpy(base, name, at - name);
		base[at - name] = 0;
		errno = 0;
		addr = strtoull(at + 1, &end, 16);
		if (errno || *end)
			return 0;
		name = base;
	}
	for (i = first_named(k, name), prev = NAME_NONE; i != NAME_NONE; prev = i, i = k->name_next[i]) {
		const struct kinstr_func *f = &k->funcs[i];

		/* another address; or the same function listed twice (a chain is in address order) */
		if ((at && f->addr != addr) || (prev != NAME_NONE && k->funcs[prev].addr == f->addr))
			continue;
		if (out && n < max)
			out[n] = f;
		n++;
	}
	return n;
}

const struct kinstr_func *kinstr_kernel__find_func(const struct kinstr_kernel *k, const char *name)
{
	const struct kinstr_func *f[2];
	size_t n = kinstr_kernel__lookup(k, name, f, 2);

	if (n == 1)
		return f[0];
	errno = n ? ENOTUNIQ : ENOENT;
	return NULL;
}

bool kinstr_kernel__name_unique(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	return kinstr_kernel__lookup(k, f->name, NULL, 0) <= 1;
}

const struct kinstr_func *kinstr_kernel__func_at(const struct kinstr_kernel *k, unsigned long long addr)
{
	size_t lo = 0, hi = k->nfuncs;

	while (lo < hi) {	/* first function starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr - k->funcs[lo - 1].addr < k->funcs[lo - 1].size)
		return &k->funcs[lo - 1];
	return NULL;
}

const unsigned char *kinstr_kernel__text(const struct kinstr_kernel *k, unsigned long long addr,
					 size_t len)
{
	size_t lo = 0, hi = k->nchunks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->chunks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct text_chunk *c = &k->chunks[lo - 1];

		if (addr - c->addr <= c->len && len <= c->len - (addr - c->addr))
			return c->bytes + (addr - c->addr);
	}
	errno = ERANGE;
	return NULL;
}

unsigned int kinstr_kernel__reserved(const struct kinstr_kernel *k, unsigned long long addr,
				     unsigned int len)
{
	unsigned long long end = addr + len;
	size_t lo = 0, hi = k->nres;
	unsigned int r = 0;

	while (lo < hi) {	/* first reservation starting at or after end */
		size_t mid = lo + (hi - lo) / 2;

		if (k->res[mid].addr < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back while something that starts earlier can still reach addr */
	while (lo > 0 && k->res_maxend[lo - 1] > addr) {
		const struct kinstr_reserved *e = &k->res[--lo];

		if (e->addr + e->len > addr)
			r |= 1u << e->reason;
	}
	return r;
}

size_t kinstr_kernel__reserved_cnt(const struct kinstr_kernel *k)
{
	return k->nres;
}

const struct kinstr_reserved *kinstr_kernel__reserved_at(const struct kinstr_kernel *k, size_t i)
{
	return i < k->nres ? &k->res[i] : NULL;
}

/* ---- the live kernel ----------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *lenp)
{
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap + 1);
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f || !buf) {
		int err = errno ? errno : ENOMEM;

		if (f)
			fclose(f);
		free(buf);
		errno = err;
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *p = realloc(buf, cap * 2 + 1);

			if (!p) {
				fclose(f);
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = p;
			cap *= 2;
		}
	}
	fclose(f);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}

static struct kmod_text *find_mod(struct kinstr_kernel *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->nmods; i++)
		if (!strcmp(k->mods[i].mi.name, name))
			return &k->mods[i];
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

/*
 * One /proc/kallsyms line: its address, type and name (at most 511 characters, as %511s took),
 * *rest what follows the name (a module's " [NAME]", or ""). 0, or -1 for a line of another form.
 */
static int parse_kallsyms_line(const char *line, unsigned long long *addr, char *type, char *name, const char **rest)
{
	const char *p = line, *e;
	unsigned long long a = 0;
	size_t n;

	while (ksym_space(*p))
		p++;
	for (e = p; isxdigit((unsigned char)*e); e++)
		a = a << 4 | (unsigned long long)(isdigit((unsigned char)*e) ? *e - '0' : (tolower((unsigned char)*e) - 'a' + 10));
	if (e == p || e - p > 16 || !ksym_space(*e))
		return -1;
	for (p = e; ksym_space(*p); p++)
		;
	if (!*p || ksym_space(*p))
		return -1;
	*type = *p++;
	if (!ksym_space(*p))
		return -1;
	while (ksym_space(*p))
		p++;
	for (e = p; *e && !ksym_space(*e); e++)
		;
	if (e == p)
		return -1;
	n = (size_t)(e - p) < 511 ? (size_t)(e - p) : 511;
	memcpy(name, p, n);
	name[n] = 0;
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
	while (p[n] && p[n] != ']' && n < len - 1)
		n++;
	if (!n || p[n] != ']')
		return -1;
	memcpy(mod, p, n);
	mod[n] = 0;
	return 0;
}

static int load_kallsyms(struct kinstr_kernel *k, struct kinstr_dev *dev, const char *path)
{
	char *buf, *line, *save = NULL, *np;
	size_t cap = 0, i, j, len, nlen = 0;
	int err = 0;

	buf = read_file(path, &len);
	if (!buf)
		return -errno;
	k->names = malloc(len + 1);
	if (!k->names) {
		free(buf);
		return -ENOMEM;
	}
	np = k->names;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		char type, name[512], mod[64];
		size_t nameoff, modoff = 0;
		const char *rest;

		/* "ADDR T NAME" or "ADDR T NAME\t[MODULE]", by hand: sscanf is most of the parse on TCG */
		if (parse_kallsyms_line(line, &addr, &type, name, &rest))
			continue;
		if (!strncmp(name, "__SCK__", 7) && strlen(name + 7) < sizeof(k->scks->name) && strchr("dDbB", type)) {
			if (grow((void **)&k->scks, k->nscks, &k->scks_cap, 256, sizeof(*k->scks))) {
				free(buf);
				return -ENOMEM;
			}
			k->scks[k->nscks].addr = addr;
			strcpy(k->scks[k->nscks++].name, name + 7);
			continue;
		}
		/*
		 * the per-CPU pointer to the running task: current_task until 6.2, then pcpu_hot,
		 * whose first member it is (arch/x86/include/asm/current.h)
		 */
		if (!*rest && strchr("aAdDbB", type) && (!strcmp(name, "current_task") || !strcmp(name, "pcpu_hot"))) {
			k->current_task = addr;
			continue;
		}
		/* weak definitions ('W') are functions too */
		if (!strchr("tTwW", type))
			continue;
		if (*rest) {	/* "[module]" follows */
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
		strcpy(np + nlen, name);
		nlen += strlen(name) + 1;
		if (*rest) {	/* the module's name follows (never at offset 0) */
			modoff = nlen;
			strcpy(np + nlen, mod);
			nlen += strlen(mod) + 1;
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
	qsort(k->funcs, k->nfuncs, sizeof(*k->funcs), cmp_func_addr);
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
		err = res_add(k, site, len, reason);
		/*
		 * The key, self-relative, its low bits flags: x86-64's struct jump_entry { s32 code,
		 * target; long key; } (bit 0: branch) and struct static_call_site { s32 addr, key; }
		 * (bit 0: tail call).
		 */
		if (!err && reason == KINSTR_R_JUMP_LABEL && t->entry_size == 16) {
			int64_t kr;

			memcpy(&kr, buf + off + 8, 8);
			err = fact_add(k, site, t->addr + off + 8 + (unsigned long long)kr, reason);
		} else if (!err && reason == KINSTR_R_STATIC_CALL && t->entry_size == 8) {
			memcpy(&rel, buf + off + 4, 4);
			err = fact_add(k, site, t->addr + off + 4 + (long long)rel, reason);
		}
		if (!err && (t->flags & KINSTR_TABLE_HAS_TARGET)) {
			unsigned long long tat = t->addr + off + t->target_off;

			memcpy(&rel, buf + off + t->target_off, 4);
			err = edge_add(k, site, tat + (long long)rel);
			/* a jump label may be a nop now and a jmp later, or the reverse */
			if (!err && reason == KINSTR_R_JUMP_LABEL)
				err = edge_add(k, site, site + len);
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Each function's ENDBR (rules/entry.h), which its fentry NOP follows; reserved (reserve) when
 * the view is made from the live kernel (a snapshot holds its reservations already).
 */
static int mark_endbr(struct kinstr_kernel *k, bool reserve)
{
	size_t i;
	int err = 0;

	for (i = 0; i < k->nfuncs && !err; i++) {
		struct kinstr_func *f = &k->funcs[i];
		const unsigned char *b = f->size >= KINSTR_ENDBR_LEN ? kinstr_kernel__text(k, f->addr, KINSTR_ENDBR_LEN) : NULL;

		f->endbr = b && !kinstr_rule_cfi_symbol(f->name) ?
			   (unsigned char)kinstr_entry_endbr_len(b) : 0;
		if (f->endbr && reserve && (i == 0 || k->funcs[i - 1].addr != f->addr))
			err = res_add(k, f->addr, f->endbr, KINSTR_R_ENDBR);
	}
	return err;
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
		buf = read_file(paths[i], NULL);
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
		err = res_add(k, f->addr + f->endbr, 5, KINSTR_R_FTRACE);
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
			err = res_add(k, r[i].addr, 5, KINSTR_R_FTRACE);
	return err;
}

/* Function entries that are ftrace sites: the module's answer for each that starts like one. */
static int add_ftrace(struct kinstr_kernel *k, struct kinstr_dev *dev)
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
static int add_stray_ftrace(struct kinstr_kernel *k, struct kinstr_dev *dev)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	struct kinstr_check_range *r = NULL;
	size_t i, n = 0, cap = 0;
	unsigned long long last = 0;
	int err = 0;

	/* most such NOPs are jump labels, known already: sorted, the reservations tell them apart */
	qsort(k->res, k->nres, sizeof(*k->res), cmp_res);
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
					err = res_add(k, r[i].addr, 5, KINSTR_R_FTRACE);
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
 * the chain's check). Needs the index by name (index_names()).
 */
static int add_die_notifiers(struct kinstr_kernel *k, struct kinstr_dev *dev)
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
		for (hit = name ? first_named(k, name) : NAME_NONE; hit != NAME_NONE; hit = k->name_next[hit]) {
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
				err = res_add(k, f->addr, f->size, KINSTR_R_DIE_NOTIFIER);
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
static int add_blacklist(struct kinstr_kernel *k)
{
	char *buf = read_file("/sys/kernel/debug/kprobes/blacklist", NULL), *line, *save = NULL;
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
		err = res_add(k, s, e - s, KINSTR_R_KPROBE_BLACKLIST);
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
		base = find_first(k, name);
		if (base && in_ranges(r, n, base->addr))
			err = res_add(k, f->addr, f->size, KINSTR_R_KPROBE_BLACKLIST);
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
static int add_held(struct kinstr_kernel *k, struct kinstr_dev *dev)
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
			err = res_add(k, k->held[i].addr, k->held[i].len, KINSTR_R_HELD);
	return err;
}

int kinstr_kernel__held_by(const struct kinstr_kernel *k, unsigned long long addr, unsigned long long len)
{
	size_t i;

	for (i = 0; k && i < k->nheld; i++)
		if (k->held[i].kind != KINSTR_HELD_FTRACE && addr < k->held[i].addr + k->held[i].len &&
		    addr + len > k->held[i].addr)
			return (int)k->held[i].pid;
	return 0;
}

static int add_hit_path(struct kinstr_kernel *k, struct kinstr_dev *dev)
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
		err = res_add(k, k->layout.text.start, k->layout.text.end - k->layout.text.start,
			      KINSTR_R_HIT_PATH);
	for (i = 0; i < n && !err; i++) {
		size_t m;
		bool own = false;

		/* kinstr.ko's own functions are refused as its own text already: one rule is enough */
		for (m = 0; m < k->nmods; m++)
			own |= (k->mods[m].mi.flags & KINSTR_MODULE_OWN) && spans[i].start >= k->mods[m].mi.text.start &&
			       spans[i].start < k->mods[m].mi.text.end;
		if (!own && spans[i].end > spans[i].start)
			err = res_add(k, spans[i].start, spans[i].end - spans[i].start, KINSTR_R_HIT_PATH);
	}
	free(spans);
	return err;
}

/*
 * debugfs kprobes/list: "ADDR  k  sym+off  [FLAGS]" per kprobe. Their int3 (or optimized jmp)
 * already changed those bytes: another splice must keep off.
 */
static int add_kprobes(struct kinstr_kernel *k)
{
	char *buf = read_file("/sys/kernel/debug/kprobes/list", NULL), *line, *save = NULL;
	int err = 0;

	if (!buf)
		return 0;	/* no kprobes registered, or no debugfs: the module checks anyway */
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;

		if (strstr(line, "[FTRACE]"))	/* patches only the ftrace site, reserved anyway */
			continue;
		/* in core text or a module's text the view holds */
		if (sscanf(line, "%llx", &a) == 1 && kinstr_kernel__text(k, a, 1))
			err = res_add(k, a, 5, KINSTR_R_KPROBE);
	}
	free(buf);
	return err;
}

static int add_span(struct kinstr_kernel *k, const struct kinstr_span64 *s, unsigned int reason)
{
	return s->end > s->start ? res_add(k, s->start, s->end - s->start, reason) : 0;
}

static int add_symbol_rules(struct kinstr_kernel *k)
{
	size_t i;
	int err = 0;

	for (i = 0; i < k->nfuncs && !err; i++) {
		const struct kinstr_func *f = &k->funcs[i];

		if (kinstr_rule_cfi_symbol(f->name))
			err = res_add(k, f->addr, f->size, KINSTR_R_CFI_SYMBOL);
		if (!err && kinstr_rule_sc_trampoline(f->name))
			err = res_add(k, f->addr, f->size, KINSTR_R_SC_TRAMPOLINE);
		if (!err && !strcmp(f->name, "__x86_return_thunk"))
			k->return_thunk = f->addr;
	}
	return err;
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

int kinstr_kernel__ret_relocation(const struct kinstr_kernel *k, unsigned long long *to)
{
	*to = k->ret_to;
	if (k->ret_flags & KINSTR_DEBUG_RET_ITS)
		return -EPERM;
	return k->ret_to || (k->ret_flags & KINSTR_DEBUG_RET_BARE) ? 0 : -ENOENT;
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
	qsort(k->chunks, k->nchunks, sizeof(*k->chunks), cmp_chunk);
	for (i = 0; i < k->nmods && !err; i++) {
		const struct kinstr_module_info *mi = &k->mods[i].mi;

		if (!k->mods[i].keep)
			continue;
		if (mi->flags & KINSTR_MODULE_OWN)
			err = add_span(k, &mi->text, KINSTR_R_OWN_MODULE);
		err = err ?: add_span(k, &mi->noinstr_text, KINSTR_R_NOINSTR_TEXT);
		err = err ?: add_span(k, &mi->kprobes_text, KINSTR_R_KPROBES_TEXT);
		err = err ?: add_table(k, dev, &mi->ex_table, &mi->text, KINSTR_R_EXTABLE, len_point);
		err = err ?: add_table(k, dev, &mi->bug_table, &mi->text, KINSTR_R_BUG, len_ud2);
		err = err ?: add_table(k, dev, &mi->static_call_sites, &mi->text, KINSTR_R_STATIC_CALL,
				       len_call5);
		err = err ?: add_table(k, dev, &mi->jump_table, &mi->text, KINSTR_R_JUMP_LABEL,
				       len_jump_label);
	}
	return err;
}

struct kinstr_kernel *kinstr_kernel__open_live(struct kinstr_dev *dev)
{
	struct kinstr_kernel *k = calloc(1, sizeof(*k));
	struct kinstr_version v;
	unsigned long long tlen;
	int err;

	if (!k)
		return fail(k, ENOMEM);
	err = kinstr_dev__version(dev, &v);
	if (!err)
		err = kinstr_dev__layout(dev, &k->layout);
	if (err)
		return fail(k, err);
	memcpy(k->release, v.kernel_release, sizeof(k->release) - 1);
	tlen = k->layout.text.end - k->layout.text.start;
	k->chunks = calloc(1, sizeof(*k->chunks));
	if (!k->chunks || !(k->chunks[0].bytes = malloc(tlen)))
		return fail(k, ENOMEM);
	k->nchunks = 1;
	k->chunks[0].addr = k->layout.text.start;
	k->chunks[0].len = tlen;
	err = kinstr_dev__read(dev, k->layout.text.start, k->chunks[0].bytes, tlen);
	if (!err)
		err = load_kallsyms(k, dev, "/proc/kallsyms");
	if (!err)
		err = add_modules(k, dev);
	if (!err)
		trim_module_tails(k);
	if (!err)
		err = add_span(k, &k->layout.entry_text, KINSTR_R_ENTRY_TEXT);
	if (!err)
		err = add_span(k, &k->layout.irqentry_text, KINSTR_R_ENTRY_TEXT);
	if (!err)
		err = add_span(k, &k->layout.noinstr_text, KINSTR_R_NOINSTR_TEXT);
	if (!err)
		err = add_span(k, &k->layout.kprobes_text, KINSTR_R_KPROBES_TEXT);
	if (!err)
		err = add_table(k, dev, &k->layout.ex_table, &k->layout.text, KINSTR_R_EXTABLE, len_point);
	if (!err)
		err = add_table(k, dev, &k->layout.bug_table, &k->layout.text, KINSTR_R_BUG, len_ud2);
	if (!err)
		err = add_table(k, dev, &k->layout.static_call_sites, &k->layout.text, KINSTR_R_STATIC_CALL, len_call5);
	if (!err)
		err = add_table(k, dev, &k->layout.jump_table, &k->layout.text, KINSTR_R_JUMP_LABEL, len_jump_label);
	if (!err)
		err = mark_endbr(k, true);
	if (!err)
		err = add_ftrace(k, dev);
	if (!err)
		err = add_stray_ftrace(k, dev);
	if (!err)
		err = index_names(k);
	if (!err) {
		qsort(k->facts, k->nfacts, sizeof(*k->facts), cmp_fact);
		qsort(k->scks, k->nscks, sizeof(*k->scks), cmp_sck);
	}
	if (!err)
		err = add_die_notifiers(k, dev);
	if (!err)
		err = add_blacklist(k);
	if (!err)
		err = add_kprobes(k);
	if (!err)
		err = add_hit_path(k, dev);
	if (!err)
		err = add_held(k, dev);
	if (!err)
		err = add_symbol_rules(k);
	if (!err)
		learn_returns(k, dev);
	if (!err)
		err = finish(k);
	return err ? fail(k, err) : k;
}

/* ---- snapshots -------------------------------------------------------------------------------- */

#define SNAP_MAGIC "KINSNAP3"	/* 3: where returns go (KINSNAP2 still read) */
#define SNAP_MAGIC2 "KINSNAP2"

static int put(gzFile f, const void *p, size_t n)
{
	return n && gzwrite(f, p, n) != (int)n ? -EIO : 0;
}

static int put_u32(gzFile f, uint32_t v)
{
	return put(f, &v, 4);
}

static int put_u64(gzFile f, uint64_t v)
{
	return put(f, &v, 8);
}

int kinstr__glob_match(const char *globs, const char *name)
{
	char one[256];
	const char *p = globs, *comma;

	for (;;) {
		size_t n;

		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		if (n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = 0;
			if (n && !fnmatch(one, name, 0))
				return 1;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static bool in_glob(const struct kinstr_func *f, const char *glob)
{
	return !glob || kinstr__glob_match(glob, f->name);
}

/* Does the reservation overlap a function that the glob keeps? (spans cover many functions) */
static bool res_in_glob(const struct kinstr_kernel *k, const struct kinstr_reserved *e,
			const char *glob)
{
	unsigned long long end = e->addr + e->len;
	size_t lo = 0, hi = k->nfuncs;

	while (lo < hi) {	/* first function starting at or after e->addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->funcs[mid].addr < e->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && k->funcs[lo - 1].addr + k->funcs[lo - 1].size > e->addr && in_glob(&k->funcs[lo - 1], glob))
		return true;
	for (; lo < k->nfuncs && k->funcs[lo].addr < end; lo++)
		if (in_glob(&k->funcs[lo], glob))
			return true;
	return false;
}

int kinstr_kernel__save(const struct kinstr_kernel *k, const char *path, const char *glob)
{
	gzFile f = gzopen(path, "wb6");
	uint32_t nf = 0, nr = 0;
	size_t i, r;
	int err = 0;

	if (!f)
		return -(errno ? errno : EIO);
	for (i = 0; i < k->nfuncs; i++)
		nf += in_glob(&k->funcs[i], glob);
	err = put(f, SNAP_MAGIC, 8);
	err = err ?: put(f, k->release, sizeof(k->release));
	err = err ?: put(f, &k->layout, sizeof(k->layout));
	err = err ?: put_u64(f, k->return_thunk);
	err = err ?: put_u64(f, k->ret_to);
	err = err ?: put_u64(f, k->ret_flags);
	err = err ?: put_u32(f, nf);
	for (i = 0; i < k->nfuncs && !err; i++) {
		const struct kinstr_func *fn = &k->funcs[i];
		const unsigned char *text;
		uint16_t nl = strlen(fn->name);

		if (!in_glob(fn, glob))
			continue;
		text = kinstr_kernel__text(k, fn->addr, fn->size);
		err = put_u64(f, fn->addr);
		err = err ?: put_u32(f, fn->size);
		err = err ?: put(f, &fn->type, 1);
		err = err ?: put(f, &nl, 2);
		err = err ?: put(f, fn->name, nl);
		err = err ?: put_u32(f, text ? fn->size : 0);
		err = err ?: put(f, text, text ? fn->size : 0);
	}
	/* reservations: all of them for a whole-kernel snapshot, else those inside a kept function */
	for (r = 0; r < k->nres; r++)
		nr += !glob || res_in_glob(k, &k->res[r], glob);
	err = err ?: put_u32(f, nr);
	for (r = 0; r < k->nres && !err; r++) {
		if (glob && !res_in_glob(k, &k->res[r], glob))
			continue;
		err = put_u64(f, k->res[r].addr);
		err = err ?: put_u32(f, k->res[r].len);
		err = err ?: put_u32(f, k->res[r].reason);
	}
	nr = 0;
	for (r = 0; r < k->nedges; r++) {
		const struct kinstr_func *fn = kinstr_kernel__func_at(k, k->edges[r].from);

		nr += !glob || (fn && in_glob(fn, glob));
	}
	err = err ?: put_u32(f, nr);
	for (r = 0; r < k->nedges && !err; r++) {
		const struct kinstr_func *fn = kinstr_kernel__func_at(k, k->edges[r].from);

		if (glob && !(fn && in_glob(fn, glob)))
			continue;
		err = put_u64(f, k->edges[r].from);
		err = err ?: put_u64(f, k->edges[r].to);
	}
	if (gzclose(f) != Z_OK && !err)
		err = -EIO;
	return err;
}

static int get(gzFile f, void *p, size_t n)
{
	return n && gzread(f, p, n) != (int)n ? -EINVAL : 0;
}

struct kinstr_kernel *kinstr_kernel__open_snapshot(const char *path)
{
	struct kinstr_kernel *k = calloc(1, sizeof(*k));
	char magic[8];
	uint32_t nf, nr, i;
	size_t nl_total = 0;
	gzFile f;
	int err;

	if (!k)
		return fail(k, ENOMEM);
	f = gzopen(path, "rb");
	if (!f)
		return fail(k, errno ? errno : EIO);
	err = get(f, magic, 8);
	if (!err && memcmp(magic, SNAP_MAGIC, 8) && memcmp(magic, SNAP_MAGIC2, 8))
		err = -EINVAL;
	err = err ?: get(f, k->release, sizeof(k->release));
	err = err ?: get(f, &k->layout, sizeof(k->layout));
	err = err ?: get(f, &k->return_thunk, 8);
	k->ret_to = k->return_thunk;
	if (!err && !memcmp(magic, SNAP_MAGIC, 8)) {
		err = get(f, &k->ret_to, 8);
		err = err ?: get(f, &k->ret_flags, 8);
	}
	err = err ?: get(f, &nf, 4);
	if (!err && nf > (1u << 24))
		err = -EINVAL;
	if (!err) {
		k->funcs = calloc(nf + 1, sizeof(*k->funcs));
		k->chunks = calloc(nf + 1, sizeof(*k->chunks));
		if (!k->funcs || !k->chunks)
			err = -ENOMEM;
	}
	for (i = 0; i < nf && !err; i++) {
		struct kinstr_func *fn = &k->funcs[i];
		uint16_t nl;
		uint32_t tl;

		err = get(f, &fn->addr, 8);
		err = err ?: get(f, &fn->size, 4);
		err = err ?: get(f, &fn->type, 1);
		err = err ?: get(f, &nl, 2);
		if (!err && nl_total + nl + 1 > k->names_len) {
			size_t cap = (k->names_len + nl + 1) * 2;
			char *p = realloc(k->names, cap);

			if (!p)
				err = -ENOMEM;
			else
				k->names = p, k->names_len = cap;
		}
		err = err ?: get(f, k->names + nl_total, nl);
		if (err)
			break;
		k->names[nl_total + nl] = 0;
		fn->name = (const char *)(uintptr_t)nl_total;
		nl_total += nl + 1;
		err = get(f, &tl, 4);
		if (!err && tl) {
			if (tl != fn->size || tl > (64u << 20)) {
				err = -EINVAL;
				break;
			}
			k->chunks[k->nchunks].addr = fn->addr;
			k->chunks[k->nchunks].len = tl;
			k->chunks[k->nchunks].bytes = malloc(tl);
			if (!k->chunks[k->nchunks].bytes) {
				err = -ENOMEM;
				break;
			}
			err = get(f, k->chunks[k->nchunks++].bytes, tl);
		}
	}
	k->nfuncs = nf;
	for (i = 0; i < nf && !err; i++)
		k->funcs[i].name = k->names + (uintptr_t)k->funcs[i].name;
	err = err ?: get(f, &nr, 4);
	for (i = 0; i < nr && !err; i++) {
		uint64_t a;
		uint32_t l, r;

		err = get(f, &a, 8);
		err = err ?: get(f, &l, 4);
		err = err ?: get(f, &r, 4);
		if (!err && r >= KINSTR_R_NR)
			err = -EINVAL;
		err = err ?: res_add(k, a, l, r);
	}
	err = err ?: get(f, &nr, 4);
	for (i = 0; i < nr && !err; i++) {
		uint64_t from, to;

		err = get(f, &from, 8);
		err = err ?: get(f, &to, 8);
		err = err ?: edge_add(k, from, to);
	}
	gzclose(f);
	if (err) {
		k->nfuncs = 0;	/* names were not all rebased */
		return fail(k, err);
	}
	/* aliases share one text chunk: keep the first of each address */
	qsort(k->chunks, k->nchunks, sizeof(*k->chunks), cmp_chunk);
	{
		size_t a, b;

		for (a = b = 0; a < k->nchunks; a++) {
			if (b && k->chunks[b - 1].addr + k->chunks[b - 1].len > k->chunks[a].addr) {
				free(k->chunks[a].bytes);
				continue;
			}
			k->chunks[b++] = k->chunks[a];
		}
		k->nchunks = b;
	}
	qsort(k->funcs, k->nfuncs, sizeof(*k->funcs), cmp_func_addr);
	err = mark_endbr(k, false);
	err = err ?: finish(k);
	return err ? fail(k, err) : k;
}
