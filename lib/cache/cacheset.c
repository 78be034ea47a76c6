// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A set of functions run through the code cache (include/kinstr/cache.h): each planned once to
 * learn its size and blocks, then, once the module has given the area's address and counters,
 * built again for exactly there and handed over with its map and entry points in one install.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/kinstr.h>
#include <kinstr/probe.h>

struct cs_fn {
	const struct kinstr_func *func;
	struct kinstr_cache_fn *copy;	/* planned, then as installed */
	uint32_t counter0;		/* its first counter */
	uint64_t offset;		/* its copy's offset in the cache */
	uint32_t timer;			/* KINSTR_CACHE_F_TIMER: its timer, the order it was added in */
	uint32_t *layout;		/* a re-laid copy: its blocks' order (kinstr_cacheset__add_laid()) */
	size_t nlayout;
};

struct kinstr_cacheset {
	struct kinstr_dev *dev;
	const struct kinstr_kernel *k;
	struct cs_fn *fns;
	size_t n, cap;
	uint32_t area;
	uint64_t cache_addr;
	uint64_t *counts;		/* per counter, after __read() */
	uint32_t ncounters;
	kinstr_cacheset_mutate_fn mutate;
	void *mutate_ctx;
	unsigned int flags;		/* KINSTR_CACHE_F_* for every copy */
	uint64_t timer_fn[2];		/* KINSTR_CACHE_F_TIMER: the module's start and stop */
};

/* Every copy's options: its timer's (cache_timer.c), the module's functions it calls. */
static struct kinstr_cache_opts copy_opts(const struct kinstr_cacheset *cs, const struct cs_fn *f)
{
	/* a re-laid copy (kinstr optimize) carries no counters and no timers */
	return (struct kinstr_cache_opts){ .sz = sizeof(struct kinstr_cache_opts), .flags = f->layout ? 0 : cs->flags,
					   .timer = f->timer, .timer_start = cs->timer_fn[0],
					   .timer_stop = cs->timer_fn[1], .layout = f->layout, .nlayout = f->nlayout };
}

struct kinstr_cacheset *kinstr_cacheset__new(struct kinstr_dev *dev, const struct kinstr_kernel *k)
{
	struct kinstr_cacheset *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return NULL;
	cs->dev = dev;
	cs->k = k;
	return cs;
}

void kinstr_cacheset__free(struct kinstr_cacheset *cs)
{
	size_t i;

	if (!cs)
		return;
	kinstr_cacheset__remove(cs);
	for (i = 0; i < cs->n; i++) {
		kinstr_cache_fn__free(cs->fns[i].copy);
		free(cs->fns[i].layout);
	}
	free(cs->fns);
	free(cs->counts);
	free(cs);
}

static int add(struct kinstr_cacheset *cs, const struct kinstr_func *f, const uint32_t *order, size_t norder,
	       struct kinstr_cache_refusal *r)
{
	struct kinstr_cache_fn *c;
	size_t i;

	if (cs->area)
		return -EBUSY;
	for (i = 0; i < cs->n; i++)
		if (cs->fns[i].func->addr == f->addr)
			return -EEXIST;
	/* planned to run at the function itself: in reach of everything it reaches */
	struct cs_fn nf0 = { .func = f, .timer = (uint32_t)cs->n, .layout = (uint32_t *)order, .nlayout = norder };
	struct kinstr_cache_opts o = copy_opts(cs, &nf0);
	uint32_t *lay = NULL;

	c = kinstr_cache_fn__build(cs->k, f, f->addr, &o, r);
	if (!c)
		return -errno;
	if (order && !(lay = malloc(norder * sizeof(*lay)))) {
		kinstr_cache_fn__free(c);
		return -ENOMEM;
	}
	if (order)
		memcpy(lay, order, norder * sizeof(*lay));
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? 2 * cs->cap : 16;
		struct cs_fn *nf = realloc(cs->fns, cap * sizeof(*nf));

		if (!nf) {
			kinstr_cache_fn__free(c);
			free(lay);
			return -ENOMEM;
		}
		cs->fns = nf;
		cs->cap = cap;
	}
	nf0.copy = c;
	nf0.layout = lay;
	cs->fns[cs->n++] = nf0;
	return 0;
}

int kinstr_cacheset__add(struct kinstr_cacheset *cs, const struct kinstr_func *f, struct kinstr_cache_refusal *r)
{
	return add(cs, f, NULL, 0, r);
}

int kinstr_cacheset__add_laid(struct kinstr_cacheset *cs, const struct kinstr_func *f, const uint32_t *order,
			      size_t n, struct kinstr_cache_refusal *r)
{
	return order && n ? add(cs, f, order, n, r) : -EINVAL;
}

size_t kinstr_cacheset__cnt(const struct kinstr_cacheset *cs)
{
	return cs->n;
}

const struct kinstr_func *kinstr_cacheset__func(const struct kinstr_cacheset *cs, size_t i)
{
	return i < cs->n ? cs->fns[i].func : NULL;
}

const struct kinstr_cache_fn *kinstr_cacheset__fn(const struct kinstr_cacheset *cs, size_t i)
{
	return i < cs->n ? cs->fns[i].copy : NULL;
}

void kinstr_cacheset__set_mutate(struct kinstr_cacheset *cs, kinstr_cacheset_mutate_fn fn, void *ctx)
{
	cs->mutate = fn;
	cs->mutate_ctx = ctx;
}

static int cmp_fn(const void *a, const void *b)
{
	const struct cs_fn *x = a, *y = b;

	return x->func->addr < y->func->addr ? -1 : x->func->addr > y->func->addr;
}

static const char *const rules[KINSTR_CACHE_RULE_NR] = {
	[KINSTR_CACHE_RULE_NONE] = "no rule",
	[KINSTR_CACHE_RULE_REQUEST] = "a malformed map entry",
	[KINSTR_CACHE_RULE_FUNCTION] = "the function may not be copied",
	[KINSTR_CACHE_RULE_BOUNDARY] = "the map is not the function's instructions back to back",
	[KINSTR_CACHE_RULE_END] = "the copied code does not end where the function's does",
	[KINSTR_CACHE_RULE_LAYOUT] = "the copy is not the map's counterparts back to back (re-laid: tiling it in some order)",
	[KINSTR_CACHE_RULE_COUNTER] = "a counter is not the counter sequence on a counter of its own",
	[KINSTR_CACHE_RULE_FLAGS] = "a counter without pushfq where the flags may be live",
	[KINSTR_CACHE_RULE_COPY] = "copied bytes differ, or the instruction may not be copied",
	[KINSTR_CACHE_RULE_RELOC] = "a re-aimed branch or operand goes elsewhere",
	[KINSTR_CACHE_RULE_CALL] = "a call is not pushed with the original's return address to its target",
	[KINSTR_CACHE_RULE_NATIVE] = "a native instruction's jmp is not to the instruction",
	[KINSTR_CACHE_RULE_JUMP_LABEL] = "a jump label's test is not its entry's key, branch and target",
	[KINSTR_CACHE_RULE_STATIC_CALL] = "a static call does not go through its trampoline",
	[KINSTR_CACHE_RULE_REENTRY] = "an entry point is not where the map says, or covers what it must not",
	[KINSTR_CACHE_RULE_EXIT] = "control comes back to the original where no entry point is",
	[KINSTR_CACHE_RULE_TIMER] = "a timer is not the timer sequence on a timer of the session",
	[KINSTR_CACHE_RULE_TIMER_PLACE] = "a timer where no entry or exit is, an exit without its stop, an entry past it",
	[KINSTR_CACHE_RULE_FALL] = "in a re-laid copy, control runs on past a counterpart to another than its next instruction's",
};

static const char *const rule_ids[KINSTR_CACHE_RULE_NR] = {
	"none", "request", "function", "boundary", "end", "layout", "counter", "flags", "copy", "reloc",
	"call", "native", "jump-label", "static-call", "reentry", "exit", "timer", "timer-place", "fall",
};

const char *kinstr_cache_rule__str(unsigned int rule)
{
	return rule < KINSTR_CACHE_RULE_NR ? rules[rule] : "unknown rule";
}

const char *kinstr_cache_rule__id(unsigned int rule)
{
	return rule < KINSTR_CACHE_RULE_NR ? rule_ids[rule] : "?";
}

/* The function whose copy holds original address a (its index), or the last one. */
static size_t fn_of(const struct kinstr_cacheset *cs, uint64_t a)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (a >= cs->fns[i].func->addr && a < cs->fns[i].func->addr + cs->fns[i].func->size)
			return i;
	return cs->n - 1;
}

/* The entry points' probes: a jmp over whole instructions where it fits, else an int3. */
static int entry_probe(const struct kinstr_cacheset *cs, const struct kinstr_cache_fn *c, size_t fi,
		       const struct kinstr_cache_reentry *re, struct kinstr_probe *p)
{
	size_t i, n = kinstr_cache_fn__insn_cnt(c);
	const unsigned char *text;
	unsigned int len = 0;

	for (i = 0; i < n && kinstr_cache_fn__insn(c, i)->addr != re->addr; i++)
		;
	if (i == n)
		return -EINVAL;
	for (; i < n && (len == 0 || (re->jump && len < 5)); i++)
		len += kinstr_cache_fn__insn(c, i)->len;
	if (len > KINSTR_MAX_DISPLACED || (re->jump && len < 5))
		return -EINVAL;
	text = kinstr_kernel__text(cs->k, re->addr, len);
	if (!text)
		return -ERANGE;
	memset(p, 0, sizeof(*p));
	p->site = re->addr;
	p->kind = re->jump ? KINSTR_PROBE_JUMP : KINSTR_PROBE_TRAP;
	p->action = KINSTR_ACTION_ENTER;
	p->displaced_len = (uint8_t)len;
	p->arg = (uint32_t)(cs->fns[fi].offset + (re->copy - kinstr_cache_fn__copy_addr(c)));
	memcpy(p->expected, text, len);
	return 0;
}

static int refusal_msg(const struct kinstr_cacheset *cs, const struct kinstr_install *in,
		       const struct kinstr_cache_map *map, size_t nmap, const struct kinstr_probe *req, size_t nreq,
		       struct kinstr_why *why, int ret)
{
	uint64_t a = in->refusal_addr;
	const struct kinstr_func *f;
	char extra[200] = "";
	unsigned int b;

	if (!a && in->refusal != KINSTR_REFUSE_BAD_COPY && in->refused_index < nreq)
		a = req[in->refused_index].site;
	if (!a && in->refusal == KINSTR_REFUSE_BAD_COPY && in->refused_index < nmap)
		a = map[in->refused_index].addr;
	f = kinstr_kernel__func_at(cs->k, a);
	if (in->refusal == KINSTR_REFUSE_BAD_COPY)
		snprintf(extra, sizeof(extra), ": %s [%s] (cache offset 0x%x)", kinstr_cache_rule__str(in->refusal_reasons),
			 kinstr_cache_rule__id(in->refusal_reasons), in->refusal_offset);
	else if (in->refusal == KINSTR_REFUSE_RESERVED)
		for (b = 0; b < KINSTR_R_NR; b++)
			if (in->refusal_reasons & (1u << b))
				snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ": %s",
					 kinstr_site_reason__str(b));
	if (f)
		return kinstr_why__fail(why, ret, "%s+0x%llx: the module refused the code cache: %s%s", f->name,
					(unsigned long long)(a - f->addr), kinstr_refusal__str(in->refusal), extra);
	return kinstr_why__fail(why, ret, "0x%llx: the module refused the code cache: %s%s", (unsigned long long)a,
				kinstr_refusal__str(in->refusal), extra);
}

int kinstr_cacheset__install(struct kinstr_cacheset *cs, unsigned int flags, size_t *refused, struct kinstr_why *why)
{
	struct kinstr_alloc al = { .size = sizeof(al) };
	struct kinstr_install in = { .size = sizeof(in) };
	struct kinstr_cache_image img = { .size = sizeof(img) };
	struct kinstr_remove rm = { .size = sizeof(rm) };
	struct kinstr_cache_map *map = NULL;
	struct kinstr_probe *req = NULL;
	uint64_t *chunks = NULL, size = 0;
	uint8_t *bytes = NULL;
	uint32_t counters = 0;
	size_t i, j, nmap = 0, nreq = 0;
	int ret;

	if (!cs->dev || !cs->n || cs->area)
		return kinstr_why__fail(why, -EINVAL, "%s", strerror(EINVAL));
	/* re-laid copies go in as a whole image (KINSTR_CACHE_IMAGE_LAID), never beside counted ones */
	for (i = 1; i < cs->n; i++)
		if (!cs->fns[i].layout != !cs->fns[0].layout)
			return kinstr_why__fail(why, -EINVAL, "%s and %s: re-laid and counted copies in one code cache",
						cs->fns[0].func->name, cs->fns[i].func->name);
	img.flags = cs->fns[0].layout ? KINSTR_CACHE_IMAGE_LAID : 0;
	/* ascending addresses, as the module wants the map; no copy's counters across two chunks */
	qsort(cs->fns, cs->n, sizeof(*cs->fns), cmp_fn);
	for (i = 0; i < cs->n; i++) {
		const struct kinstr_cache_fn *c = cs->fns[i].copy;
		uint32_t nb = (uint32_t)kinstr_cache_fn__counter_cnt(c);

		if (nb > KINSTR_CACHE_CHUNK) {
			if (refused)
				*refused = i;
			return kinstr_why__fail(why, -E2BIG, "%s: %u counters (blocks, edges), more than a counter chunk (%d)",
						cs->fns[i].func->name, nb, KINSTR_CACHE_CHUNK);
		}
		if (counters / KINSTR_CACHE_CHUNK != (counters + nb - 1) / KINSTR_CACHE_CHUNK)
			counters = (counters / KINSTR_CACHE_CHUNK + 1) * KINSTR_CACHE_CHUNK;
		cs->fns[i].counter0 = counters;
		counters += nb;
		cs->fns[i].offset = size;
		size += kinstr_cache_fn__size(c);
		nmap += kinstr_cache_fn__insn_cnt(c);
		nreq += kinstr_cache_fn__reentry_cnt(c);
	}
	if (size > KINSTR_CACHE_MAX_BYTES || counters > KINSTR_CACHE_MAX_COUNTERS || nreq > KINSTR_AREA_MAX_PROBES)
		return kinstr_why__fail(why, -E2BIG, "%zu functions: %llu bytes of copies, %u counters, %zu entry points: "
					"beyond one area's limits", cs->n, (unsigned long long)size, counters, nreq);
	chunks = calloc((counters + KINSTR_CACHE_CHUNK - 1) / KINSTR_CACHE_CHUNK + 1, sizeof(*chunks));
	if (!chunks)
		return kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
	al.count = (uint32_t)nreq;
	al.cache_size = size;
	al.cache_counters = counters;
	al.cache_chunks = (uintptr_t)chunks;
	if (kinstr_dev__ioctl(cs->dev, KINSTR_IOC_ALLOC, &al) < 0) {
		ret = -errno;
		kinstr_why__fail(why, ret, "cannot reserve a code cache of %llu bytes and %u counters: %s%s",
				 (unsigned long long)size, counters, strerror(-ret),
				 ret == -EINVAL && !kinstr_dev__has(cs->dev, KINSTR_FEAT_CODE_CACHE) ?
				 " (the loaded kinstr.ko has no code cache: load this version's)" : "");
		free(chunks);
		return ret;
	}
	bytes = malloc(size);
	map = calloc(nmap, sizeof(*map));
	req = calloc(nreq, sizeof(*req));
	if (!bytes || !map || !req) {
		ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		goto undo;
	}
	/* built again for where the module put the cache and the counters */
	for (i = 0, nmap = 0, nreq = 0; i < cs->n; i++) {
		struct cs_fn *f = &cs->fns[i];
		struct kinstr_cache_opts o = copy_opts(cs, f);
		struct kinstr_cache_refusal r;
		struct kinstr_cache_fn *c;

		o.counters = chunks[f->counter0 / KINSTR_CACHE_CHUNK] + 8ull * (f->counter0 % KINSTR_CACHE_CHUNK);
		c = kinstr_cache_fn__build(cs->k, f->func, al.cache_addr + f->offset, &o, &r);
		if (!c || kinstr_cache_fn__size(c) != kinstr_cache_fn__size(f->copy)) {
			ret = kinstr_why__fail(why, c ? -EAGAIN : -errno, "%s: the copy changed between plan and install: %s",
					       f->func->name, c ? "another size" : r.why);
			if (refused)
				*refused = i;
			kinstr_cache_fn__free(c);
			goto undo;
		}
		kinstr_cache_fn__free(f->copy);
		f->copy = c;
		memcpy(bytes + f->offset, kinstr_cache_fn__bytes(c), kinstr_cache_fn__size(c));
		for (j = 0; j < kinstr_cache_fn__insn_cnt(c); j++) {
			const struct kinstr_cache_insn *ci = kinstr_cache_fn__insn(c, j);
			const struct kinstr_cache_block *b = kinstr_cache_fn__block(c, ci->block);
			struct kinstr_cache_map *m = &map[nmap++];

			m->addr = ci->addr;
			m->copy = (uint32_t)(ci->copy - al.cache_addr);
			m->len = ci->len;
			m->copy_len = ci->copy_len;
			m->form = ci->how;	/* enum kinstr_cache_how is the ABI's form order */
			m->flags = (j == 0 ? KINSTR_CACHE_M_FUNC : 0) |
				   (ci->counted ? KINSTR_CACHE_M_COUNTED | (b->saves_flags ? KINSTR_CACHE_M_PUSHF : 0) : 0);
			m->counter = ci->counted ? f->counter0 + ci->block : 0;
			if (ci->edges) {
				const struct kinstr_cache_edge *e = kinstr_cache_fn__edge(c, ci->edge);

				m->flags |= (ci->edges & KINSTR_CACHE_I_EDGE_IN ? KINSTR_CACHE_M_EDGE_IN : 0) |
					    (ci->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF ? KINSTR_CACHE_M_EDGE_IN_PUSHF : 0) |
					    (ci->edges & KINSTR_CACHE_I_EDGE_OUT ? KINSTR_CACHE_M_EDGE_OUT : 0) |
					    (ci->edges & KINSTR_CACHE_I_EDGE_OUT_PUSHF ? KINSTR_CACHE_M_EDGE_OUT_PUSHF : 0);
				/* the edge-in's counter (or a block's, counted after it), then the out's */
				m->edge = f->counter0 + (ci->edges & KINSTR_CACHE_I_EDGE_IN ? ci->in_counter : e->counter);
			}
			if (ci->timer)
				m->flags |= KINSTR_CACHE_M_TIMER;
		}
		for (j = 0; j < kinstr_cache_fn__reentry_cnt(c); j++) {
			ret = entry_probe(cs, c, i, kinstr_cache_fn__reentry(c, j), &req[nreq++]);
			if (ret) {
				kinstr_why__fail(why, ret, "%s: an entry point at 0x%llx cannot be made: %s", f->func->name,
						 (unsigned long long)kinstr_cache_fn__reentry(c, j)->addr, strerror(-ret));
				if (refused)
					*refused = i;
				goto undo;
			}
		}
	}
	if (cs->mutate)
		cs->mutate(bytes, size, map, nmap, req, nreq, cs->mutate_ctx);
	img.bytes = (uintptr_t)bytes;
	img.len = size;
	img.map = (uintptr_t)map;
	img.nmap = (uint32_t)nmap;
	in.area = al.area;
	in.count = (uint32_t)nreq;
	in.flags = flags;
	in.probes = (uintptr_t)req;
	in.cache = (uintptr_t)&img;
	if (kinstr_dev__ioctl(cs->dev, KINSTR_IOC_INSTALL, &in) < 0) {
		ret = -errno;
		if (in.refusal) {
			refusal_msg(cs, &in, map, nmap, req, nreq, why, ret);
			if (refused)
				*refused = fn_of(cs, in.refusal == KINSTR_REFUSE_BAD_COPY && in.refused_index < nmap ?
						 map[in.refused_index].addr : in.refused_index < nreq ?
						 req[in.refused_index].site : in.refusal_addr);
		} else {
			kinstr_why__fail(why, ret, "installing the code cache of %zu functions failed: %s", cs->n,
					 strerror(-ret));
		}
		goto undo;
	}
	if (flags & KINSTR_INSTALL_F_VERIFY_ONLY) {
		ret = 0;
		goto undo;
	}
	free(bytes);
	free(map);
	free(req);
	free(chunks);
	cs->area = al.area;
	cs->cache_addr = al.cache_addr;
	cs->ncounters = counters;
	return 0;
undo:
	free(bytes);
	free(map);
	free(req);
	free(chunks);
	rm.area = al.area;
	kinstr_dev__ioctl(cs->dev, KINSTR_IOC_REMOVE, &rm);
	return ret;
}

int kinstr_cacheset__read(struct kinstr_cacheset *cs)
{
	struct kinstr_cache_counts cc = { .size = sizeof(cc) };
	uint64_t *counts;

	if (!cs->area || !cs->ncounters)
		return -EINVAL;
	counts = cs->counts ? cs->counts : calloc(cs->ncounters, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	cs->counts = counts;
	cc.area = cs->area;
	cc.first = 0;
	cc.count = cs->ncounters;
	cc.counts = (uintptr_t)counts;
	return kinstr_dev__ioctl(cs->dev, KINSTR_IOC_CACHE_COUNTS, &cc);
}

int kinstr_cacheset__set_flags(struct kinstr_cacheset *cs, unsigned int flags)
{
	static const char *const fn[2] = { "kinstr_cache_timer_start", "kinstr_cache_timer_stop" };
	int i;

	if (cs->n || (flags & ~(KINSTR_CACHE_F_EDGES | KINSTR_CACHE_F_TIMER)))
		return -EINVAL;
	for (i = 0; i < 2 && (flags & KINSTR_CACHE_F_TIMER); i++) {
		const struct kinstr_func *f = kinstr_kernel__find_func(cs->k, fn[i]);

		if (!f || (cs->dev && !kinstr_dev__has(cs->dev, KINSTR_FEAT_CACHE_TIMER)))
			return -EOPNOTSUPP;	/* the loaded kinstr.ko has no timers in its code cache */
		cs->timer_fn[i] = f->addr;
	}
	cs->flags = flags;
	return 0;
}

uint32_t kinstr_cacheset__timer(const struct kinstr_cacheset *cs, size_t i)
{
	return i < cs->n ? cs->fns[i].timer : UINT32_MAX;
}

uint64_t kinstr_cacheset__edge_count(const struct kinstr_cacheset *cs, size_t i, size_t edge)
{
	const struct kinstr_cache_edge *e;

	if (!cs->counts || i >= cs->n || !(e = kinstr_cache_fn__edge(cs->fns[i].copy, edge)))
		return 0;
	return cs->counts[cs->fns[i].counter0 + e->counter];
}

int kinstr_cacheset__block_flow(const struct kinstr_cacheset *cs, size_t i, size_t block, uint64_t *in, uint64_t *out)
{
	const struct kinstr_cache_fn *c;
	size_t e;

	if (!cs->counts || i >= cs->n || block >= kinstr_cache_fn__block_cnt(c = cs->fns[i].copy) ||
	    !kinstr_cache_fn__edge_cnt(c))
		return -EINVAL;
	*in = *out = 0;
	for (e = 0; e < kinstr_cache_fn__edge_cnt(c); e++) {
		const struct kinstr_cache_edge *ed = kinstr_cache_fn__edge(c, e);

		if (ed->to == block)
			*in += kinstr_cacheset__edge_count(cs, i, e);
		if (ed->from == block)
			*out += kinstr_cacheset__edge_count(cs, i, e);
	}
	return kinstr_cache_fn__block(c, block)->unseen;
}

uint64_t kinstr_cacheset__block_count(const struct kinstr_cacheset *cs, size_t i, size_t block)
{
	if (!cs->counts || i >= cs->n || block >= kinstr_cache_fn__block_cnt(cs->fns[i].copy))
		return 0;
	return cs->counts[cs->fns[i].counter0 + kinstr_cache_fn__block(cs->fns[i].copy, block)->ctr];
}

int kinstr_cacheset__remove(struct kinstr_cacheset *cs)
{
	struct kinstr_remove rm = { .size = sizeof(rm) };

	if (!cs->area)
		return 0;
	rm.area = cs->area;
	cs->area = 0;
	return kinstr_dev__ioctl(cs->dev, KINSTR_IOC_REMOVE, &rm);
}
