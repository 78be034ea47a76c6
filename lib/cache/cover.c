// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Coverage through the code cache (include/kinstr/cover.h): the functions named, their source
 * lines, their cache set planned and installed (keep: a copy refused at install left out, the
 * rest installed again), read; and the one-shot probes of --once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/cache.h>
#include <kinstr/cover.h>
#include <kinstr/kernel.h>
#include <kinstr/lines.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include "lib/opts.h"

struct kinstr_cover {
	struct kinstr_dev *dev;
	const struct kinstr_kernel *k;
	unsigned int cache_flags;
	bool keep;
	int (*left_out)(const struct kinstr_func *f, const char *why, void *ctx);
	void *ctx;
	const struct kinstr_func **fs;	/* named, each once, in order */
	size_t n, cap;
	struct kinstr_cacheset *cs;
	bool *dropped;			/* per function: left out of cs */
	struct kinstr_cover_refusal *rf;	/* at most one per function */
	size_t nrf;
};

/* why (if not NULL) about f: err and the sentence. Returns err. */
__attribute__((format(printf, 4, 5)))
static int fail(struct kinstr_why *why, int err, const struct kinstr_func *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kinstr_why__vfail(why, err, fmt, ap);
	va_end(ap);
	if (why)
		why->func = f;
	return err;
}

struct kinstr_cover *kinstr_cover__new(struct kinstr_dev *dev, const struct kinstr_kernel *k,
				       const struct kinstr_cover_opts *opts)
{
	struct kinstr_cover *cv;

	if (!k || !KINSTR_OPTS_VALID(opts) || (KINSTR_OPTS_GET(opts, cache_flags, 0) & ~(KINSTR_CACHE_F_EDGES | KINSTR_CACHE_F_TIMER))) {
		errno = EINVAL;
		return NULL;
	}
	cv = calloc(1, sizeof(*cv));
	if (!cv)
		return NULL;
	cv->dev = dev;
	cv->k = k;
	cv->cache_flags = KINSTR_OPTS_GET(opts, cache_flags, 0);
	cv->keep = KINSTR_OPTS_GET(opts, keep, false);
	cv->left_out = KINSTR_OPTS_GET(opts, left_out, NULL);
	cv->ctx = KINSTR_OPTS_GET(opts, ctx, NULL);
	return cv;
}

void kinstr_cover__free(struct kinstr_cover *cv)
{
	size_t i;

	if (!cv)
		return;
	kinstr_cacheset__free(cv->cs);
	for (i = 0; i < cv->nrf; i++)
		free(cv->rf[i].at_install);
	free(cv->rf);
	free(cv->dropped);
	free(cv->fs);
	free(cv);
}

/* f at the end of the list unless it is there already. */
static int add_func(struct kinstr_cover *cv, const struct kinstr_func *f, struct kinstr_why *why)
{
	size_t i;

	for (i = 0; i < cv->n; i++)
		if (cv->fs[i] == f)
			return 0;
	if (cv->n == cv->cap) {
		size_t cap = cv->cap ? 2 * cv->cap : 64;
		const struct kinstr_func **v = realloc(cv->fs, cap * sizeof(*v));

		if (!v)
			return fail(why, -ENOMEM, f, "%s", strerror(ENOMEM));
		cv->fs = v;
		cv->cap = cap;
	}
	cv->fs[cv->n++] = f;
	return 0;
}

int kinstr_cover__add(struct kinstr_cover *cv, const char *name, struct kinstr_why *why)
{
	const struct kinstr_func *f;
	size_t j, matched = 0;
	int err;

	if (!cv || !name)
		return fail(why, -EINVAL, NULL, "%s", strerror(EINVAL));
	if (cv->cs)
		return fail(why, -EBUSY, NULL, "functions added after the plan");
	if (!strpbrk(name, "*?[,")) {
		f = kinstr_plan__func(cv->k, name, why);
		return f ? add_func(cv, f, why) : -errno;
	}
	for (j = 0; j < kinstr_kernel__func_cnt(cv->k); j++) {
		f = kinstr_kernel__func(cv->k, j);
		if (!kinstr__glob_match(name, f->name))
			continue;
		matched++;
		err = add_func(cv, f, why);
		if (err)
			return err;
	}
	return matched ? 0 : fail(why, -ENOENT, NULL, "no function matches '%s'", name);
}

size_t kinstr_cover__func_cnt(const struct kinstr_cover *cv)
{
	return cv ? cv->n : 0;
}

const struct kinstr_func *kinstr_cover__func(const struct kinstr_cover *cv, size_t i)
{
	return cv && i < cv->n ? cv->fs[i] : NULL;
}

/* The module a .ko file is for: its name up to ".ko", '-' as '_'; NULL for anything else (a vmlinux). */
static char *module_of_file(const char *path)
{
	const char *base = strrchr(path, '/'), *ko;
	char *m, *p;

	base = base ? base + 1 : path;
	ko = strstr(base, ".ko");
	if (!ko || (ko[3] && ko[3] != '.'))
		return NULL;
	m = strndup(base, (size_t)(ko - base));
	for (p = m; p && *p; p++)
		if (*p == '-')
			*p = '_';
	return m;
}

static bool same_module(const struct kinstr_func *a, const struct kinstr_func *b)
{
	return a->module == b->module || (a->module && b->module && !strcmp(a->module, b->module));
}

struct kinstr_lines *kinstr_cover__lines(const struct kinstr_cover *cv, const char *const *files, size_t nfiles,
					 size_t *bad, struct kinstr_why *why)
{
	struct kinstr_lines *l;
	size_t i, j;

	if (!cv || (nfiles && !files)) {
		fail(why, -EINVAL, NULL, "%s", strerror(EINVAL));
		return NULL;
	}
	l = kinstr_lines__new(kinstr_kernel__release(cv->k));
	if (!l) {
		fail(why, -errno, NULL, "%s", strerror(errno));
		return NULL;
	}
	for (i = 0; i < nfiles; i++) {
		char *m = module_of_file(files[i]);
		int err = kinstr_lines__add(l, m, files[i]);

		free(m);
		if (err) {
			fail(why, err, NULL, "%s: %s", files[i],
			     err == -ENODATA ? "no DWARF line table in it" :
			     err == -ENOEXEC ? "not an ELF file with debug info" :
			     err == -EEXIST ? "a second file for the same module" : strerror(-err));
			kinstr_lines__free(l);
			if (bad)
				*bad = i;
			return NULL;
		}
	}
	/* the usual paths once per module (a search that finds nothing is not repeated) */
	for (i = 0; i < cv->n; i++) {
		for (j = 0; j < i && !same_module(cv->fs[j], cv->fs[i]); j++)
			;
		if (j == i && !kinstr_lines__path(l, cv->fs[i]->module))
			kinstr_lines__add_default(l, cv->fs[i]->module);
	}
	return l;
}

/*
 * cv->cs: a cache set of the functions not dropped. With list, a function whose plan the library
 * refuses is listed and dropped; without, that fails like any other error.
 */
static int new_set(struct kinstr_cover *cv, bool list, struct kinstr_why *why)
{
	struct kinstr_cacheset *cs;
	struct kinstr_cache_refusal r;
	size_t i;
	int e;

	kinstr_cacheset__free(cv->cs);
	cv->cs = cs = kinstr_cacheset__new(cv->dev, cv->k);
	if (!cs)
		return fail(why, -ENOMEM, NULL, "%s", strerror(ENOMEM));
	if (cv->cache_flags && (e = kinstr_cacheset__set_flags(cs, cv->cache_flags)))
		return fail(why, e, NULL, "%s", strerror(-e));
	for (i = 0; i < cv->n; i++) {
		if (cv->dropped[i])
			continue;
		e = kinstr_cacheset__add(cs, cv->fs[i], &r);
		if (e == -EPERM && list) {
			cv->rf[cv->nrf].f = cv->fs[i];
			cv->rf[cv->nrf++].r = r;
			cv->dropped[i] = true;
		} else if (e && e != -EEXIST) {
			return fail(why, e, cv->fs[i], "%s: %s", cv->fs[i]->name, e == -EPERM ? r.why : strerror(-e));
		}
	}
	return 0;
}

int kinstr_cover__plan(struct kinstr_cover *cv, struct kinstr_why *why)
{
	int e;

	if (!cv)
		return fail(why, -EINVAL, NULL, "%s", strerror(EINVAL));
	if (cv->cs)
		return fail(why, -EBUSY, NULL, "planned already");
	cv->rf = calloc(cv->n ? cv->n : 1, sizeof(*cv->rf));
	cv->dropped = calloc(cv->n ? cv->n : 1, sizeof(*cv->dropped));
	if (!cv->rf || !cv->dropped)
		return fail(why, -ENOMEM, NULL, "%s", strerror(ENOMEM));
	e = new_set(cv, true, why);
	if (e)
		return e;
	if (!kinstr_cacheset__cnt(cv->cs))
		return fail(why, -ENOENT, NULL, "no function left to cover (%zu refused%s%s)", cv->nrf,
			    cv->nrf ? ", the first: " : "", cv->nrf ? cv->rf[0].r.why : "");
	return 0;
}

/* keep: f, whose copy was refused at install for the reason err, listed and dropped; the set planned again. */
static int leave_out(struct kinstr_cover *cv, const struct kinstr_func *f, const char *err, struct kinstr_why *why)
{
	size_t i;
	int e;

	for (i = 0; i < cv->n && cv->fs[i] != f; i++)
		;
	if (i == cv->n || cv->dropped[i])
		return fail(why, -ESRCH, f, "the module's refusal names no function left to drop");
	cv->rf[cv->nrf].at_install = strdup(err);
	if (!cv->rf[cv->nrf].at_install)
		return fail(why, -ENOMEM, f, "%s", strerror(ENOMEM));
	cv->rf[cv->nrf].by_module = strstr(err, "the module refused") != NULL;
	cv->rf[cv->nrf++].f = f;
	cv->dropped[i] = true;
	e = new_set(cv, false, why);
	if (e)
		return e;
	if (!kinstr_cacheset__cnt(cv->cs))
		return fail(why, -ENOENT, NULL, "no function left to cover (%zu refused, the last by the module)", cv->nrf);
	return 0;
}

int kinstr_cover__install(struct kinstr_cover *cv, unsigned int flags, struct kinstr_why *why)
{
	struct kinstr_why refusal;

	if (!cv || !cv->cs || !cv->dev)
		return fail(why, -EINVAL, NULL, "%s", strerror(EINVAL));
	for (;;) {
		const struct kinstr_func *f;
		size_t bad = SIZE_MAX;
		int e;

		e = kinstr_cacheset__install(cv->cs, flags, &bad, &refusal);
		if (!e)
			return 0;
		f = bad < kinstr_cacheset__cnt(cv->cs) ? kinstr_cacheset__func(cv->cs, bad) : NULL;
		if (!cv->keep || !f || (cv->left_out && cv->left_out(f, refusal.msg, cv->ctx)))
			return fail(why, e, f, "%s", refusal.msg);
		e = leave_out(cv, f, refusal.msg, why);
		if (e)
			return e;
	}
}

int kinstr_cover__read(struct kinstr_cover *cv)
{
	int e;

	if (!cv || !cv->cs)
		return -EINVAL;
	e = kinstr_cacheset__read(cv->cs);
	if (e)
		return e;
	kinstr_cacheset__remove(cv->cs);
	return 0;
}

const struct kinstr_cacheset *kinstr_cover__set(const struct kinstr_cover *cv)
{
	return cv ? cv->cs : NULL;
}

const struct kinstr_cover_refusal *kinstr_cover__refused(const struct kinstr_cover *cv, size_t *n)
{
	*n = cv ? cv->nrf : 0;
	return cv ? cv->rf : NULL;
}

/* --once: a probe at every block's first instruction, each taken out at the first tick after its hit. */
struct once_fn {
	const struct kinstr_func *f;
	struct kinstr_cache_fn *plan;
	size_t *probe;			/* per block: its probe, or SIZE_MAX (no probe fits there) */
};

struct kinstr_cover_once {
	struct kinstr_probeset *ps;
	struct once_fn *fns;
	size_t nf;
	struct kinstr_cover_refusal *rf;
	size_t nrf;
	uint64_t *counts;		/* per probe */
	uint8_t *out;			/* per probe: taken out */
	uint32_t *batch;
	size_t n, disarmed, unprobed;
	int err;			/* a tick's */
};

/* f's plan and its blocks' probes. -ENOMEM, else 0 (a refused f listed). */
static int once_add(struct kinstr_cover_once *o, const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	struct kinstr_cache_refusal r = { 0 };
	struct once_fn *x = &o->fns[o->nf];
	size_t b, nb;

	x->f = f;
	x->plan = kinstr_cache_fn__build(k, f, f->addr, NULL, &r);
	if (!x->plan) {
		o->rf[o->nrf].f = f;
		o->rf[o->nrf++].r = r;
		return 0;
	}
	o->nf++;
	nb = kinstr_cache_fn__block_cnt(x->plan);
	x->probe = calloc(nb + 1, sizeof(*x->probe));
	if (!x->probe)
		return -ENOMEM;
	for (b = 0; b < nb; b++) {
		if (kinstr_probeset__add(o->ps, f, kinstr_cache_fn__block(x->plan, b)->addr, NULL)) {
			x->probe[b] = SIZE_MAX;
			o->unprobed++;
		} else {
			x->probe[b] = kinstr_probeset__cnt(o->ps) - 1;
		}
	}
	return 0;
}

struct kinstr_cover_once *kinstr_cover_once__new(const struct kinstr_cover *cv)
{
	struct kinstr_cover_once *o;
	size_t i, n;

	if (!cv || !cv->dev) {
		errno = EINVAL;
		return NULL;
	}
	n = cv->n ? cv->n : 1;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->fns = calloc(n, sizeof(*o->fns));
	o->rf = calloc(n, sizeof(*o->rf));
	o->ps = kinstr_probeset__new(cv->dev, cv->k);
	for (i = 0; o->fns && o->rf && o->ps && i < cv->n; i++)
		if (once_add(o, cv->k, cv->fs[i]))
			break;
	o->n = o->ps ? kinstr_probeset__cnt(o->ps) : 0;
	if (o->n) {
		o->counts = calloc(o->n, sizeof(*o->counts));
		o->out = calloc(o->n, 1);
		o->batch = calloc(o->n, sizeof(*o->batch));
	}
	if (!o->fns || !o->rf || !o->ps || i < cv->n || (o->n && (!o->counts || !o->out || !o->batch))) {
		int e = o->ps ? ENOMEM : errno;

		kinstr_cover_once__free(o);
		errno = e;
		return NULL;
	}
	return o;
}

void kinstr_cover_once__free(struct kinstr_cover_once *o)
{
	size_t i;

	if (!o)
		return;
	kinstr_probeset__free(o->ps);	/* removes what is left */
	for (i = 0; o->fns && i < o->nf; i++) {
		kinstr_cache_fn__free(o->fns[i].plan);
		free(o->fns[i].probe);
	}
	free(o->fns);
	free(o->rf);
	free(o->counts);
	free(o->out);
	free(o->batch);
	free(o);
}

void kinstr_cover_once__sum(const struct kinstr_cover_once *o, struct kinstr_cover_once_sum *s)
{
	*s = (struct kinstr_cover_once_sum){ .funcs = o->nf, .refused = o->nrf, .probes = o->n,
					     .unprobed = o->unprobed, .disarmed = o->disarmed };
}

const struct kinstr_cache_fn *kinstr_cover_once__fn(const struct kinstr_cover_once *o, size_t i,
						    const struct kinstr_func **f)
{
	if (i >= o->nf)
		return NULL;
	if (f)
		*f = o->fns[i].f;
	return o->fns[i].plan;
}

const struct kinstr_cover_refusal *kinstr_cover_once__refused(const struct kinstr_cover_once *o, size_t *n)
{
	*n = o->nrf;
	return o->rf;
}

int kinstr_cover_once__install(struct kinstr_cover_once *o, struct kinstr_why *why)
{
	if (!o->n)
		return fail(why, -ENOENT, NULL, "no block left to probe (%zu functions refused)", o->nrf);
	return kinstr_probeset__install(o->ps, why);
}

void kinstr_cover_once__tick(struct kinstr_cover_once *o)
{
	size_t i, m = 0, d = 0;
	int e;

	if (o->err || kinstr_probeset__counts(o->ps, o->counts))
		return;
	for (i = 0; i < o->n; i++)
		if (o->counts[i] && !o->out[i]) {
			o->batch[m++] = (uint32_t)i;
			o->out[i] = 1;
		}
	if (!m)
		return;
	e = kinstr_probeset__disarm(o->ps, o->batch, m, &d);
	if (e)
		o->err = e;
	o->disarmed += d;
}

int kinstr_cover_once__read(struct kinstr_cover_once *o)
{
	int e;

	kinstr_cover_once__tick(o);	/* the last batch: what is left in now never ran */
	e = kinstr_probeset__counts(o->ps, o->counts);
	return o->err ? o->err : e;
}

int kinstr_cover_once__hit(const struct kinstr_cover_once *o, size_t i, size_t b)
{
	const struct once_fn *x = &o->fns[i];

	if (x->probe[b] == SIZE_MAX)
		return -1;
	return o->counts[x->probe[b]] != 0;
}
