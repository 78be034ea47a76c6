// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The planner: specs, entries and timing into the probes of a set (include/kinstr/plan.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/plan.h>
#include <kinstr/pred.h>
#include <uapi/linux/kinstr.h>
#include "lib/opts.h"

struct kinstr_plan {
	struct kinstr_probeset *ps;
	const struct kinstr_kernel *k;
	bool every, ftrace;
	size_t max_probes;
	const char *where;	/* --where: every trace spec's predicate */
};

/* A predicate where none is taken (a spec of count's plain grammar, profile, drill, attach) is named. */
static const char pred_elsewhere[] = "a predicate (SPEC if EXPR) works with count, trace and span only";

static bool spec_has_pred(const char *spec)
{
	return strstr(spec, " if ") || strstr(spec, ") if");
}

int kinstr_spec__parse(const char *spec, struct kinstr_spec *sp, struct kinstr_why *why)
{
	const char *plus = strchr(spec, '+'), *pct = strchr(spec, '%');
	const char *stop = plus && (!pct || plus < pct) ? plus : pct;
	size_t len = stop ? (size_t)(stop - spec) : strlen(spec);

	memset(sp, 0, sizeof(*sp));
	if (spec_has_pred(spec))
		return kinstr_why__fail(why, -EINVAL, "%.300s: %s", spec, pred_elsewhere);
	if (len >= sizeof(sp->name) || strlen(spec) >= sizeof(sp->text))
		return kinstr_why__fail(why, -EINVAL, "%.200s...: name too long", spec);
	strcpy(sp->text, spec);
	memcpy(sp->name, spec, len);
	sp->name[len] = 0;
	if (!len)
		return kinstr_why__fail(why, -EINVAL, "%.200s: no function name (FUNC, FUNC+0xOFF, FUNC%%return, GLOB)",
					spec);
	if (stop == plus && plus) {
		const char *o = plus + 1;
		char *end;

		/* digits only: strtoull would take "-1" as 0xffffffffffffffff */
		errno = 0;
		sp->offset = isdigit((unsigned char)*o) ? strtoull(o, &end, 0) : 0;
		if (!isdigit((unsigned char)*o) || errno || *end)
			return kinstr_why__fail(why, -EINVAL, "%.200s: bad offset '%.100s' (FUNC+0xOFF)", spec, o);
		sp->kind = KINSTR_SPEC_OFFSET;
	} else if (pct) {
		if (strcmp(pct, "%return"))
			return kinstr_why__fail(why, -EINVAL, "%.200s: unknown suffix '%.100s' (FUNC%%return)", spec, pct);
		sp->kind = KINSTR_SPEC_RETURN;
	} else {
		sp->kind = strpbrk(sp->name, "*?[") ? KINSTR_SPEC_GLOB : KINSTR_SPEC_ENTRY;
	}
	if (sp->kind != KINSTR_SPEC_GLOB && strpbrk(sp->name, "*?["))
		return kinstr_why__fail(why, -EINVAL, "%.200s: a glob takes no offset or %%return (FUNC+0xOFF, FUNC%%return)",
					spec);
	return 0;
}

/* Fill why (if not NULL): err, the function and address it is about, and the sentence. */
__attribute__((format(printf, 5, 6)))
static int why_set(struct kinstr_why *why, int err, const struct kinstr_func *f, uint64_t addr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kinstr_why__vfail(why, err, fmt, ap);
	va_end(ap);
	if (why) {
		why->func = f;
		why->addr = addr;
	}
	return err;
}

/* A refusal of the probe set at addr of f, with the site's rule and instruction. */
static int why_probe(struct kinstr_plan *pl, struct kinstr_why *why, int err, const struct kinstr_func *f,
		     uint64_t addr, const char *prefix, const char *msg)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	const struct kinstr_site *s = fn ? kinstr_fn__site_at(fn, addr) : NULL;

	why_set(why, err, f, addr, "%s%s%s", prefix ? prefix : "", prefix ? ": " : "", msg);
	if (why && s) {
		why->rule = s->rule;
		why->insn_len = s->insn_len;
	}
	return err;
}

/* "SPEC: " before why's sentence (a lookup's, which does not know the spec). */
static int why_spec(struct kinstr_why *why, const char *spec, int err)
{
	char m[sizeof(why->msg)];

	if (why) {
		memcpy(m, why->msg, sizeof(m));
		snprintf(why->msg, sizeof(why->msg), "%.250s: %.250s", spec, m);
	}
	return err;
}

const struct kinstr_func *kinstr_plan__func(const struct kinstr_kernel *k, const char *name, struct kinstr_why *why)
{
	const struct kinstr_func *c[8];
	const struct kinstr_func *f = kinstr_kernel__find_func(k, name);
	size_t n, i, len;

	if (f)
		return f;
	if (errno != ENOTUNIQ) {
		why_set(why, -ENOENT, NULL, 0, "no function '%s' in the kernel's symbols", name);
		errno = ENOENT;
		return NULL;
	}
	n = kinstr_kernel__lookup(k, name, c, 8);
	if (why) {
		why_set(why, -ENOTUNIQ, NULL, 0, "%zu functions are named '%s':", n, name);
		for (i = 0; i < n && i < 8; i++) {
			len = strlen(why->msg);
			snprintf(why->msg + len, sizeof(why->msg) - len, "%s %s@0x%llx%s%s%s", i ? "," : "", c[i]->name,
				 (unsigned long long)c[i]->addr, c[i]->module ? " [" : "",
				 c[i]->module ? c[i]->module : "", c[i]->module ? "]" : "");
		}
		len = strlen(why->msg);
		snprintf(why->msg + len, sizeof(why->msg) - len, "%s; name one as NAME@ADDR", n > 8 ? ", ..." : "");
	}
	errno = ENOTUNIQ;
	return NULL;
}

const struct kinstr_site *kinstr_plan__entry_site(const struct kinstr_fn *fn, const struct kinstr_func *f,
						  bool ftrace_ok, bool *ftrace)
{
	/* past the ENDBR (rules/entry.h): the fentry NOP, or the first instruction */
	size_t at = f->endbr && kinstr_fn__site_cnt(fn) > 1 ? 1 : 0;
	const struct kinstr_site *nop = kinstr_fn__site(fn, at), *s = nop;

	*ftrace = false;
	if (nop && (nop->reserved & (1u << KINSTR_R_FTRACE)) && kinstr_fn__site_cnt(fn) > at + 1)
		s = kinstr_fn__site(fn, at + 1);
	/* where only an int3 fits after the NOP, and the NOP is ftrace's alone (as add_ftrace requires) */
	if (ftrace_ok && s != nop && s->cls == KINSTR_SITE_TRAP && kinstr_site__ftrace_own(nop, f))
		*ftrace = true;
	return s;
}

struct kinstr_plan *kinstr_plan__new(struct kinstr_probeset *ps, const struct kinstr_plan_opts *opts)
{
	struct kinstr_plan *pl;

	if (!ps || !KINSTR_OPTS_VALID(opts) || KINSTR_OPTS_GET(opts, max_probes, 0) > KINSTR_AREA_MAX_PROBES) {
		errno = EINVAL;
		return NULL;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return NULL;
	pl->ps = ps;
	pl->k = kinstr_probeset__kernel(ps);
	pl->every = KINSTR_OPTS_GET(opts, every, false);
	pl->ftrace = !KINSTR_OPTS_GET(opts, no_ftrace, false);
	pl->max_probes = KINSTR_OPTS_GET(opts, max_probes, 0) ?: KINSTR_PLAN_MAX_PROBES;
	pl->where = KINSTR_OPTS_GET(opts, where, NULL);
	return pl;
}

/* How the cap can be raised, for a refusal's message. */
static const char *raise_hint(const struct kinstr_plan *pl)
{
#define STR_(x) #x
#define STR(x) STR_(x)
	return pl->max_probes < KINSTR_AREA_MAX_PROBES ?
		" (--max-probes raises it, up to " STR(KINSTR_AREA_MAX_PROBES) ")" : "";
}

void kinstr_plan__free(struct kinstr_plan *pl)
{
	free(pl);
}

/* f's entry: through ftrace where that is better (and allowed), else the entry site. */
static int add_entry(struct kinstr_plan *pl, const struct kinstr_func *f, const struct kinstr_fn *fn,
		     struct kinstr_why *why)
{
	bool ftrace;
	const struct kinstr_site *s = kinstr_plan__entry_site(fn, f, pl->ftrace, &ftrace);
	uint64_t at = s ? s->addr : f->addr;
	struct kinstr_why w;
	int ret;

	if (ftrace && kinstr_probeset__add_ftrace(pl->ps, f, NULL) == 0)
		return 0;
	ret = kinstr_probeset__add(pl->ps, f, at, &w);
	return ret ? why_probe(pl, why, ret, f, at, NULL, w.msg) : 0;
}

/* Count a glob refusal's rule (the text after "FUNC+0xOFF: " or "refused: "). */
static void tally_rule(struct kinstr_plan_glob *t, const char *err)
{
	const char *r = strstr(err, "refused: ");
	size_t i;

	r = r ? r + 9 : strstr(err, ": ") ? strstr(err, ": ") + 2 : err;
	for (i = 0; i < t->nrules; i++)
		if (!strncmp(t->rules[i].why, r, sizeof(t->rules[i].why) - 1)) {
			t->rules[i].count++;
			return;
		}
	if (t->nrules == KINSTR_PLAN_GLOB_RULES) {
		t->more = true;
		return;
	}
	snprintf(t->rules[t->nrules].why, sizeof(t->rules[t->nrules].why), "%.159s", r);
	t->rules[t->nrules++].count = 1;
}

static int add_glob(struct kinstr_plan *pl, const char *spec, const char *glob, struct kinstr_why *why,
		    struct kinstr_plan_glob *tally)
{
	struct kinstr_plan_glob local;
	const struct kinstr_kernel *k = pl->k;
	size_t i, cand = 0, have = kinstr_probeset__cnt(pl->ps);
	unsigned long long last = 0;

	if (!tally)
		tally = &local;
	memset(tally, 0, sizeof(*tally));
	/* the batch's limit from the symbols alone, before minutes of analysis */
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *g = kinstr_kernel__func(k, i);

		if (kinstr__glob_match(glob, g->name) && g->addr != last) {
			last = g->addr;
			cand++;
		}
	}
	if (cand + have > pl->max_probes)
		return why_set(why, -E2BIG, NULL, 0, "%s: %zu functions match: %zu probes: at most %zu in one batch%s",
			       spec, cand, cand + have, pl->max_probes, raise_hint(pl));
	last = 0;
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *g = kinstr_kernel__func(k, i);
		const struct kinstr_fn *fn;
		struct kinstr_why w;

		if (!kinstr__glob_match(glob, g->name) || g->addr == last)
			continue;
		last = g->addr;
		fn = kinstr_probeset__analysis(pl->ps, g);
		if (!fn)
			continue;
		if (kinstr_fn__site_cnt(fn) && add_entry(pl, g, fn, &w) == 0) {
			tally->probed++;
		} else {
			tally->refused++;
			tally_rule(tally, kinstr_fn__site_cnt(fn) ? w.msg : "no site");
		}
	}
	if (!tally->probed)
		return why_set(why, -ENOENT, NULL, 0, "%s: no probeable function matches", spec);
	return 0;
}

/* Every return site of f. */
static int add_returns(struct kinstr_plan *pl, const char *spec, const struct kinstr_func *f, struct kinstr_why *why)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	const struct kinstr_cfg *cfg;
	struct kinstr_why w;
	size_t i, n = 0;
	int ret;

	if (!fn)
		return why_set(why, -errno, f, 0, "%s: cannot analyse: %s", spec, strerror(errno));
	cfg = kinstr_fn__cfg(fn);
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

		if (!(in->flags & KINSTR_CFG_I_RETURN))
			continue;
		ret = kinstr_probeset__add(pl->ps, f, in->x.addr, &w);
		if (ret)
			return why_probe(pl, why, ret, f, in->x.addr, spec, w.msg);
		n++;
	}
	if (!n)
		return why_set(why, -ENOENT, f, 0, "%s: %s has no return site (it only tail-calls or never returns)",
			       spec, f->name);
	return 0;
}

/* Each jump site not sharing bytes with the last one taken (they overlap one another). */
static int add_every(struct kinstr_plan *pl, const struct kinstr_func *f, struct kinstr_why *why)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	uint64_t end = 0;
	struct kinstr_why w;
	size_t i, n = 0;
	int ret;

	if (!fn)
		return why_set(why, -errno, f, 0, "%s: cannot analyse: %s", f->name, strerror(errno));
	for (i = 0; i < kinstr_fn__site_cnt(fn); i++) {
		const struct kinstr_site *s = kinstr_fn__site(fn, i);

		if (s->cls != KINSTR_SITE_JUMP || s->addr < end)
			continue;
		ret = kinstr_probeset__add(pl->ps, f, s->addr, &w);
		if (ret)
			return why_probe(pl, why, ret, f, s->addr, NULL, w.msg);
		end = s->addr + s->displaced_len;
		n++;
	}
	if (!n)
		return why_set(why, -ENOENT, f, 0, "%s: no jump site", f->name);
	return 0;
}

static int add_spec(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_why *why,
		    struct kinstr_plan_glob *glob)
{
	const struct kinstr_fn *fn;
	const struct kinstr_func *f;
	struct kinstr_why w;
	int ret;

	if (sp->kind == KINSTR_SPEC_GLOB)
		return add_glob(pl, sp->text, sp->name, why, glob);
	f = kinstr_plan__func(pl->k, sp->name, why);
	if (!f) {
		return why_spec(why, sp->text, -errno);
	}
	switch (sp->kind) {
	case KINSTR_SPEC_RETURN:
		return add_returns(pl, sp->text, f, why);
	case KINSTR_SPEC_OFFSET:
		ret = kinstr_probeset__add(pl->ps, f, f->addr + sp->offset, &w);
		return ret ? why_probe(pl, why, ret, f, f->addr + sp->offset, NULL, w.msg) : 0;
	default:
		if (pl->every)
			return add_every(pl, f, why);
		fn = kinstr_probeset__analysis(pl->ps, f);
		if (fn)
			return add_entry(pl, f, fn, why);
		ret = kinstr_probeset__add(pl->ps, f, f->addr, &w);
		return ret ? why_probe(pl, why, ret, f, f->addr, NULL, w.msg) : 0;
	}
}

/* All or nothing: a spec refused halfway (a return site after others) leaves no probe behind. */
int kinstr_plan__add(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_why *why,
		     struct kinstr_plan_glob *glob)
{
	size_t n0 = kinstr_probeset__cnt(pl->ps);
	int ret = add_spec(pl, sp, why, glob);

	if (ret)
		kinstr_probeset__truncate(pl->ps, n0);
	return ret;
}

int kinstr_plan__add_spec(struct kinstr_plan *pl, const char *spec, struct kinstr_why *why,
			  struct kinstr_plan_glob *glob)
{
	struct kinstr_spec sp;
	int ret = kinstr_spec__parse(spec, &sp, why);

	return ret ? ret : kinstr_plan__add(pl, &sp, why, glob);
}

/*
 * Where f switches the CPU to another thread: a store to the per-CPU current-task pointer (what
 * the kernel's __switch_to does), or, up to 3 tail calls deep, a jump to a function that does
 * (__switch_to_asm). 0 when it does not, or when the pointer's address is unknown (a snapshot).
 */
uint64_t kinstr_plan__switch_at(struct kinstr_plan *pl, const struct kinstr_func *f, bool tail_calls)
{
	const unsigned long long cur = kinstr_kernel__current_task(pl->k);
	const struct kinstr_fn *fn;
	const struct kinstr_cfg *cfg;
	unsigned int depth;
	size_t i;

	for (depth = 0; f && cur && depth <= (tail_calls ? 3 : 0); depth++) {
		const struct kinstr_func *next = NULL;

		fn = kinstr_probeset__analysis(pl->ps, f);
		if (!fn)
			return 0;
		cfg = kinstr_fn__cfg(fn);
		for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++) {
			const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
			uint64_t a;

			if (kinstr_x86__gs_store64(&in->x, &a) && a == cur)
				return in->x.addr;
			if ((in->flags & KINSTR_CFG_I_TAIL_CALL) && in->x.flow == KINSTR_X86_FLOW_JMP && !next)
				next = kinstr_kernel__func_at(pl->k, in->x.target);
		}
		f = next;
	}
	return 0;
}

/*
 * A conditional jump to a GCC .cold fragment is the function's own rarely run code placed apart
 * (a debug build's lockdep and RCU checks put one in most functions): not an exit when every way
 * out of the fragment is a jump back into f. Anything else (a return, an indirect jump, a jump
 * elsewhere, code that does not decode, a last instruction that runs on past the fragment) and it
 * is an exit, which cannot be timed.
 */
static bool cold_comes_back(struct kinstr_plan *pl, const struct kinstr_func *f, uint64_t target)
{
	const struct kinstr_func *c = kinstr_kernel__func_at(pl->k, target);
	const struct kinstr_cfg_insn *last = NULL;
	const struct kinstr_fn *fn;
	const struct kinstr_cfg *cfg;
	size_t i;

	if (!c || c == f || !strstr(c->name, ".cold") || c->module != f->module)
		return false;
	fn = kinstr_probeset__analysis(pl->ps, c);
	if (!fn)
		return false;
	cfg = kinstr_fn__cfg(fn);
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

		if (in->flags & KINSTR_CFG_I_PADDING)
			continue;
		last = in;
		if ((in->flags & (KINSTR_CFG_I_RETURN | KINSTR_CFG_I_INVALID)) || in->x.flow == KINSTR_X86_FLOW_JMP_IND ||
		    in->x.flow == KINSTR_X86_FLOW_RET || in->x.flow == KINSTR_X86_FLOW_EXIT)
			return false;
		if ((in->flags & KINSTR_CFG_I_TAIL_CALL) && (in->x.target < f->addr || in->x.target >= f->addr + f->size))
			return false;
	}
	/* nor may it run on past its end, into code of no one's (or another fragment's) */
	return last && !kinstr_x86__falls_through(&last->x);
}

/*
 * A function that switches threads is entered in one and returns in another (on that one's
 * stack, to its caller): per-thread timers cannot pair the two. A conditional exit (jcc out of
 * the function) cannot be timed: the stop would also run when the branch is not taken. Nor an
 * entry the function branches back to: calls could not be told apart.
 */
/* Tail calls kinstr_plan__time_func_tails follows: where they go, what timers they take. */
struct tails {
	unsigned int *ntimers, max, n;
	struct kinstr_callsite *out;
	const struct kinstr_cfg_insn *at[64];	/* the jmps whose time goes to f's stop before them */
};

#define TAIL_STOPS 64

/*
 * Where a tail call's timer stops: every way out of G (its returns; where G tail-calls H in turn,
 * H's ways out, up to 3 deep), none conditional unless into a .cold fragment that comes back, no
 * indirect jump. Their addresses (and functions) into at[]/in[] from *n on; false when some way
 * out cannot stop it.
 */
static bool tail_stops(struct kinstr_plan *pl, const struct kinstr_func *f, const struct kinstr_func *g,
		       unsigned int depth, uint64_t *at, const struct kinstr_func **in, size_t *n)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, g);
	const struct kinstr_cfg *cfg = fn ? kinstr_fn__cfg(fn) : NULL;
	size_t i, n0 = *n;

	if (!cfg)
		return false;
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++) {
		const struct kinstr_cfg_insn *x = kinstr_cfg__insn(cfg, i);
		const struct kinstr_func *h;

		if (x->x.flow == KINSTR_X86_FLOW_JMP_IND)
			return false;	/* an indirect jump leaves G unseen */
		if (!(x->flags & (KINSTR_CFG_I_RETURN | KINSTR_CFG_I_TAIL_CALL)))
			continue;
		if (x->x.flow == KINSTR_X86_FLOW_JCC) {
			if ((x->flags & KINSTR_CFG_I_TAIL_CALL) && cold_comes_back(pl, g, x->x.target))
				continue;
			return false;
		}
		h = (x->flags & KINSTR_CFG_I_TAIL_CALL) ? kinstr_kernel__func_at(pl->k, x->x.target) : NULL;
		/* G's own tail call: the time goes on in H, whose return is G's */
		if (h && h != f && h != g && h->addr == x->x.target && strncmp(h->name, "__x86_", 6) && depth < 3 &&
		    tail_stops(pl, f, h, depth + 1, at, in, n))
			continue;
		if (*n == TAIL_STOPS)
			return false;
		at[*n] = x->x.addr;
		in[(*n)++] = g;
	}
	return *n > n0;
}

/*
 * Is exit i of f a direct tail call whose time can be its own: a jmp to another function's start,
 * that no branch lands on, after an instruction of the same block (f's stop goes there) that is
 * neither a call nor right after one (a call's timer stops there), into a function whose every
 * exit can stop a timer?
 */
static bool tail_followed(struct kinstr_plan *pl, const struct kinstr_func *f, const struct kinstr_cfg *cfg, size_t i)
{
	const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i), *prev = i ? kinstr_cfg__insn(cfg, i - 1) : NULL;
	const struct kinstr_func *g;

	if (!(in->flags & KINSTR_CFG_I_TAIL_CALL) || in->x.flow != KINSTR_X86_FLOW_JMP || (in->flags & KINSTR_CFG_I_TARGET) ||
	    !prev || prev->x.addr + prev->x.len != in->x.addr || prev->x.flow != KINSTR_X86_FLOW_NEXT ||
	    (prev->flags & KINSTR_CFG_I_TARGET) || i < 2)
		return false;
	if (kinstr_cfg__insn(cfg, i - 2)->x.flow == KINSTR_X86_FLOW_CALL ||
	    kinstr_cfg__insn(cfg, i - 2)->x.flow == KINSTR_X86_FLOW_CALL_IND)
		return false;
	g = kinstr_kernel__func_at(pl->k, in->x.target);
	/* a thunk's callee is known at run time only; a .cold fragment is f's own code */
	{
		uint64_t at[TAIL_STOPS];
		const struct kinstr_func *fs[TAIL_STOPS];
		size_t n = 0;

		return g && g != f && g->addr == in->x.target && strncmp(g->name, "__x86_", 6) &&
		       !strstr(g->name, ".cold") && tail_stops(pl, f, g, 0, at, fs, &n);
	}
}

/* A followed tail call's timer: a start at the jmp, a stop at each exit of the callee. */
static void time_tail(struct kinstr_plan *pl, const struct kinstr_func *f, const struct kinstr_cfg_insn *j,
		      struct tails *t)
{
	const struct kinstr_func *g = kinstr_kernel__func_at(pl->k, j->x.target), *fs[TAIL_STOPS];
	uint64_t at[TAIL_STOPS];
	struct kinstr_callsite *s;
	size_t n0 = kinstr_probeset__cnt(pl->ps), i, k, n = 0;
	int ret;

	if (t->n == t->max)
		return;
	s = &t->out[t->n++];
	memset(s, 0, sizeof(*s));
	s->addr = j->x.addr;
	s->callee = g;
	s->tail = true;
	ret = tail_stops(pl, f, g, 0, at, fs, &n) ? kinstr_probeset__add(pl->ps, f, j->x.addr, NULL) : -EPERM;
	for (i = 0; !ret && i < n; i++)
		ret = kinstr_probeset__add(pl->ps, fs[i], at[i], NULL);
	if (ret) {
		kinstr_probeset__truncate(pl->ps, n0);	/* its time is then missing from f's: said so */
		return;
	}
	s->timer = (*t->ntimers)++;
	s->timed = true;
	for (k = n0; k < kinstr_probeset__cnt(pl->ps); k++)
		kinstr_probeset__set_timer(pl->ps, k, k == n0, s->timer);
}

static int time_func(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int timer, unsigned int *exits,
		     struct kinstr_why *why, struct tails *tails);

int kinstr_plan__time_func(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int timer,
			   unsigned int *exits, struct kinstr_why *why)
{
	return time_func(pl, f, timer, exits, why, NULL);
}

int kinstr_plan__time_func_tails(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int timer,
				 unsigned int *exits, unsigned int *ntimers, struct kinstr_callsite *tails,
				 unsigned int max, unsigned int *ntails, struct kinstr_why *why)
{
	struct tails t = { .ntimers = ntimers, .max = max, .out = tails };
	int ret = time_func(pl, f, timer, exits, why, &t);

	*ntails = ret ? 0 : t.n;
	return ret;
}

static int time_func(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int timer, unsigned int *exits,
		     struct kinstr_why *why, struct tails *tails)
{
	unsigned int nat = 0;
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	const struct kinstr_cfg *cfg;
	const struct kinstr_site *s;
	size_t i, n0 = kinstr_probeset__cnt(pl->ps), j;
	uint64_t at = f->addr, where = 0;
	bool ftrace;
	struct kinstr_why w;
	int ret = 0;

	*exits = 0;
	if (!fn)
		return why_set(why, -errno, f, 0, "%s: cannot analyse: %s", f->name, strerror(errno));
	cfg = kinstr_fn__cfg(fn);
	where = kinstr_plan__switch_at(pl, f, false);
	if (where) {
		kinstr_why__fail(&w, -EOPNOTSUPP, "%s+0x%llx: switches threads (stores the CPU's current task): entered "
				 "in one thread, it returns in another, which per-thread timers cannot pair", f->name,
				 (unsigned long long)(where - f->addr));
		return why_probe(pl, why, -EOPNOTSUPP, f, where, NULL, w.msg);
	}
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

		if ((in->flags & (KINSTR_CFG_I_TAIL_CALL | KINSTR_CFG_I_RETURN)) && in->x.flow == KINSTR_X86_FLOW_JCC) {
			if ((in->flags & KINSTR_CFG_I_TAIL_CALL) && cold_comes_back(pl, f, in->x.target))
				continue;
			kinstr_why__fail(&w, -EOPNOTSUPP, "%s+0x%llx: a conditional %s: exits there cannot be timed", f->name,
					 (unsigned long long)(in->x.addr - f->addr),
					 in->flags & KINSTR_CFG_I_RETURN ? "return" : "tail call");
			return why_probe(pl, why, -EOPNOTSUPP, f, in->x.addr, NULL, w.msg);
		}
	}
	s = kinstr_plan__entry_site(fn, f, pl->ftrace, &ftrace);
	if (s)
		at = s->addr;
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg); i++)
		if (kinstr_cfg__insn(cfg, i)->x.addr == at && (kinstr_cfg__insn(cfg, i)->flags & KINSTR_CFG_I_TARGET)) {
			kinstr_why__fail(&w, -EOPNOTSUPP,
					 "%s+0x%llx: the function branches back to its entry: calls cannot be told apart",
					 f->name, (unsigned long long)(at - f->addr));
			return why_probe(pl, why, -EOPNOTSUPP, f, at, NULL, w.msg);
		}
	/* where only an int3 fits after the ftrace NOP: from the NOP, a trap costs ten times more */
	ret = -1;
	if (ftrace)
		ret = kinstr_probeset__add_ftrace(pl->ps, f, &w);
	if (ret) {
		where = at;
		ret = kinstr_probeset__add(pl->ps, f, at, &w);
	}
	for (i = 0; !ret && i < kinstr_cfg__insn_cnt(cfg); i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

		if (!(in->flags & (KINSTR_CFG_I_RETURN | KINSTR_CFG_I_TAIL_CALL)))
			continue;
		if (in->x.flow == KINSTR_X86_FLOW_JCC)
			continue;	/* into its .cold fragment, which comes back (above) */
		++*exits;
		/* a followed tail call: f's part ends at the instruction before the jmp */
		if (tails && nat < 64 && tails->n + nat < tails->max && tail_followed(pl, f, cfg, i) &&
		    !kinstr_probeset__add(pl->ps, f, kinstr_cfg__insn(cfg, i - 1)->x.addr, NULL)) {
			tails->at[nat++] = in;
			continue;
		}
		where = in->x.addr;
		ret = kinstr_probeset__add(pl->ps, f, in->x.addr, &w);
	}
	if (!ret && !*exits) {
		ret = kinstr_why__fail(&w, -ENOENT, "%s: no exit site (it never returns)", f->name);
		where = 0;
	}
	if (ret) {
		kinstr_probeset__truncate(pl->ps, n0);
		*exits = 0;
		return why_probe(pl, why, ret, f, where, NULL, w.msg);
	}
	for (j = n0; j < kinstr_probeset__cnt(pl->ps); j++)
		kinstr_probeset__set_timer(pl->ps, j, j == n0, timer);
	for (j = 0; j < nat; j++)
		time_tail(pl, f, tails->at[j], tails);
	return 0;
}

/* enum kinstr_reg by its name ("rax" .. "r15"), or -1. */
static int reg_by_name(const char *name)
{
	static const char *const names[] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
					     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	int r;

	for (r = 0; r < 16; r++)
		if (!strcmp(name, names[r]))
			return r;
	return -1;
}

int kinstr_plan__indirect_target(const struct kinstr_x86_insn *x, const struct kinstr_func *callee,
				 struct kinstr_trace_val *v)
{
	unsigned int i = 0, rex = 0, mod, reg, rm, base;
	int32_t disp = 0;

	memset(v, 0, sizeof(*v));
	if (x->flow == KINSTR_X86_FLOW_CALL || x->flow == KINSTR_X86_FLOW_JMP) {
		/* a retpoline thunk (__x86_indirect_thunk_REG and its call-depth and ITS forms): REG */
		const char *u = callee ? strrchr(callee->name, '_') : NULL;
		int r;

		if (!callee || strncmp(callee->name, "__x86_indirect_", 15) || callee->addr != x->target || !u ||
		    (r = reg_by_name(u + 1)) < 0)
			return -ENOENT;
		v->kind = KINSTR_VAL_REG;
		v->reg = (uint8_t)r;
		return 0;
	}
	if (x->flow != KINSTR_X86_FLOW_CALL_IND && x->flow != KINSTR_X86_FLOW_JMP_IND)
		return -ENOENT;
	/* legacy prefixes (a cs prefix pads some), then REX, then FF /2 (call) or FF /4 (jmp) */
	while (i < x->len && strchr("\x26\x2e\x36\x3e\x64\x65\x66\x67\xf2\xf3", x->bytes[i]) && x->bytes[i])
		i++;
	if (i < x->len && (x->bytes[i] & 0xf0) == 0x40)
		rex = x->bytes[i++];
	if (i + 2 > x->len || x->bytes[i] != 0xff)
		return -EOPNOTSUPP;
	mod = x->bytes[i + 1] >> 6;
	reg = (x->bytes[i + 1] >> 3) & 7;
	rm = x->bytes[i + 1] & 7;
	i += 2;
	if (reg != 2 && reg != 4)
		return -EOPNOTSUPP;	/* far forms: FLOW_EXIT, never here */
	if (mod == 3) {
		v->kind = KINSTR_VAL_REG;
		v->reg = (uint8_t)(rm | (rex & 1) << 3);
		return 0;
	}
	v->kind = KINSTR_VAL_MEM;
	v->size = 8;
	if (mod == 0 && rm == 5) {
		/* RIP-relative: the probe's RIP is the instruction's own address */
		v->reg = KINSTR_REG_RIP;
		v->offset = (int32_t)(int64_t)(x->rip_target - x->addr);
		return 0;
	}
	base = rm;
	if (rm == 4) {
		/* SIB: only a base with no index (index 100 without REX.X), and not the disp32-only form */
		if (i >= x->len)
			return -EOPNOTSUPP;
		if (((x->bytes[i] >> 3) & 7) != 4 || (rex & 2) || (mod == 0 && (x->bytes[i] & 7) == 5))
			return -EOPNOTSUPP;
		base = x->bytes[i++] & 7;
	}
	if (mod == 1 && i < x->len)
		disp = (int8_t)x->bytes[i];
	else if (mod == 2 && i + 4 <= x->len)
		memcpy(&disp, &x->bytes[i], 4);
	else if (mod != 0)
		return -EOPNOTSUPP;
	v->reg = (uint8_t)(base | (rex & 1) << 3);
	v->offset = disp;
	return 0;
}

int kinstr_plan__tally_target(struct kinstr_plan *pl, const struct kinstr_func *f, uint64_t addr, uint16_t event,
			      struct kinstr_trace_event *ev, struct kinstr_why *why)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	const struct kinstr_cfg *cfg = fn ? kinstr_fn__cfg(fn) : NULL;
	const struct kinstr_cfg_insn *in = NULL;
	struct kinstr_trace_spec spec;
	size_t i, n0 = kinstr_probeset__cnt(pl->ps);
	struct kinstr_why w;
	int ret;

	for (i = 0; cfg && i < kinstr_cfg__insn_cnt(cfg); i++)
		if (kinstr_cfg__insn(cfg, i)->x.addr == addr)
			in = kinstr_cfg__insn(cfg, i);
	if (!in)
		return why_set(why, -EILSEQ, f, addr, "%s+0x%llx: no instruction there", f->name,
			       (unsigned long long)(addr - f->addr));
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s+0x%llx", f->name, (unsigned long long)(addr - f->addr));
	ret = kinstr_plan__indirect_target(&in->x, kinstr_kernel__func_at(pl->k, in->x.target), &ev->vals[0].v);
	if (ret)
		return why_set(why, ret, f, addr, "%s: %s", ev->name, ret == -ENOENT ? "no indirect call or jump" :
			       "its target's operand has an index register: no value reads it");
	snprintf(ev->vals[0].name, sizeof(ev->vals[0].name), "target");
	ev->vals[0].type = KINSTR_CTF_U64;
	ev->vals[0].hex = true;
	ev->nvals = 1;
	memset(&spec, 0, sizeof(spec));
	spec.event = event;
	spec.nvals = 1;
	spec.vals[0] = ev->vals[0].v;
	ret = kinstr_probeset__add(pl->ps, f, addr, &w);
	if (ret)
		return why_probe(pl, why, ret, f, addr, NULL, w.msg);
	if (kinstr_probeset__set_trace(pl->ps, n0, &spec) || kinstr_probeset__set_tally(pl->ps, n0)) {
		kinstr_probeset__truncate(pl->ps, n0);
		return why_set(why, -EINVAL, f, addr, "%s: cannot tally its target", ev->name);
	}
	return 0;
}

/* Call instruction in of f into *s, timed from the call to the instruction after it where both can be probed. */
static void time_call(struct kinstr_plan *pl, const struct kinstr_func *f, const struct kinstr_cfg_insn *in,
		      unsigned int *ntimers, struct kinstr_callsite *s)
{
	size_t n0;

	memset(s, 0, sizeof(*s));
	s->addr = in->x.addr;
	if (in->x.flow == KINSTR_X86_FLOW_CALL) {
		s->callee = kinstr_kernel__func_at(pl->k, in->x.target);
		/* a retpoline thunk's callee (any of its forms) is known only at run time */
		if (s->callee && !strncmp(s->callee->name, "__x86_indirect_", 15))
			s->callee = NULL;
		s->switches = s->callee && kinstr_plan__switch_at(pl, s->callee, true);
	}
	if (!s->callee)
		s->target_ok = !kinstr_plan__indirect_target(&in->x, kinstr_kernel__func_at(pl->k, in->x.target),
							     &s->target);
	n0 = kinstr_probeset__cnt(pl->ps);
	if (kinstr_probeset__add(pl->ps, f, in->x.addr, NULL) ||
	    kinstr_probeset__add(pl->ps, f, in->x.addr + in->x.len, NULL)) {
		kinstr_probeset__truncate(pl->ps, n0);
		return;
	}
	s->timer = (*ntimers)++;
	s->timed = true;
	kinstr_probeset__set_timer(pl->ps, n0, true, s->timer);
	kinstr_probeset__set_timer(pl->ps, n0 + 1, false, s->timer);
}

int kinstr_plan__time_call(struct kinstr_plan *pl, const struct kinstr_func *f, uint64_t addr, unsigned int *ntimers,
			   struct kinstr_callsite *s)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	const struct kinstr_cfg *cfg = fn ? kinstr_fn__cfg(fn) : NULL;
	size_t i;

	for (i = 0; cfg && i < kinstr_cfg__insn_cnt(cfg); i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

		if (in->x.addr != addr)
			continue;
		if (in->x.flow != KINSTR_X86_FLOW_CALL && in->x.flow != KINSTR_X86_FLOW_CALL_IND)
			return -ENOENT;
		time_call(pl, f, in, ntimers, s);
		return s->timed ? 0 : -EPERM;
	}
	return -ENOENT;
}

unsigned int kinstr_plan__time_calls(struct kinstr_plan *pl, const struct kinstr_func *f, unsigned int *ntimers,
				     struct kinstr_callsite *sites, unsigned int max)
{
	const struct kinstr_fn *fn = kinstr_probeset__analysis(pl->ps, f);
	const struct kinstr_cfg *cfg;
	unsigned int n = 0;
	size_t i;

	if (!fn)
		return 0;
	cfg = kinstr_fn__cfg(fn);
	for (i = 0; i < kinstr_cfg__insn_cnt(cfg) && n < max; i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);

		if (in->x.flow == KINSTR_X86_FLOW_CALL || in->x.flow == KINSTR_X86_FLOW_CALL_IND)
			time_call(pl, f, in, ntimers, &sites[n++]);
	}
	return n;
}

int kinstr_plan__time_spec(struct kinstr_plan *pl, const char *spec, unsigned int first_timer,
			   struct kinstr_timed *out, size_t max, size_t *n, size_t *skipped, struct kinstr_why *why)
{
	const struct kinstr_kernel *k = pl->k;
	bool glob = strpbrk(spec, "*?[") != NULL;
	const struct kinstr_func *want = NULL;
	unsigned long long last = 0;
	size_t j, cand = 0;
	int ret;

	*n = *skipped = 0;
	if (spec_has_pred(spec))
		return kinstr_why__fail(why, -EINVAL, "%.300s: %s", spec, pred_elsewhere);
	if (!glob) {
		want = kinstr_plan__func(k, spec, why);
		if (!want) {
			return why_spec(why, spec, -errno);
		}
	}
	/* the batch's limit from the symbols alone (an entry and an exit each at least) */
	for (j = 0; glob && j < kinstr_kernel__func_cnt(k); j++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, j);

		if (kinstr__glob_match(spec, f->name) && f->addr != last) {
			last = f->addr;
			cand++;
		}
	}
	if (2 * cand + kinstr_probeset__cnt(pl->ps) > pl->max_probes || cand > max)
		return why_set(why, -E2BIG, NULL, 0, "%s: %zu functions match: at least %zu probes: at most %zu in one batch%s",
			       spec, cand, 2 * cand + kinstr_probeset__cnt(pl->ps), pl->max_probes, raise_hint(pl));
	if (!glob) {
		ret = kinstr_plan__time_func(pl, want, first_timer, &out[0].exits, why);
		if (ret)
			return ret;
		out[0].f = want;
		out[0].timer = first_timer;
		*n = 1;
		return 0;
	}
	last = 0;
	for (j = 0; j < kinstr_kernel__func_cnt(k); j++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, j);

		if (!kinstr__glob_match(spec, f->name) || f->addr == last)
			continue;	/* or an alias of the previous one */
		last = f->addr;
		if (kinstr_plan__time_func(pl, f, first_timer + (unsigned int)*n, &out[*n].exits, NULL)) {
			++*skipped;
			continue;
		}
		out[*n].f = f;
		out[*n].timer = first_timer + (unsigned int)*n;
		++*n;
	}
	if (!*n && !*skipped)
		return why_set(why, -ENOENT, NULL, 0, "%s: no function matches", spec);
	if (!*n)
		return why_set(why, -EPERM, NULL, 0, "%s: none of the %zu matching functions can be timed", spec,
			       *skipped);
	return 0;
}

/* Probe i's event: found by name in ev[*nev], or made with its values. */
/*
 * Event ev's predicate: the spec's own (if EXPR) and --where, both when both are given. 0, or
 * -errno and why, naming which of the two and where in it.
 */
static int event_pred(const struct kinstr_plan *pl, const char *expr, struct kinstr_trace_event *ev,
		      struct kinstr_why *why)
{
	struct kinstr_pred where;
	struct kinstr_why w;
	int ret;

	ev->has_pred = expr || pl->where;
	if (expr && (ret = kinstr_pred__compile(expr, ev->vals, ev->nvals, &ev->pred, &w)))
		return kinstr_why__fail(why, ret, "%s: if '%.200s': %s", ev->name, expr, w.msg);
	if (pl->where && (ret = kinstr_pred__compile(pl->where, ev->vals, ev->nvals, expr ? &where : &ev->pred, &w)))
		return kinstr_why__fail(why, ret, "%s: --where '%.200s': %s", ev->name, pl->where, w.msg);
	if (expr && pl->where && (ret = kinstr_pred__and(&ev->pred, &where, &w)))
		return kinstr_why__fail(why, ret, "%s: if '%.150s' --where '%.150s': %s", ev->name, expr, pl->where,
					w.msg);
	return 0;
}

static int trace_event(struct kinstr_plan *pl, size_t i, const char *values, const char *pred, bool at_return,
		       bool offset, struct kinstr_btf *btf, struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max,
		       struct kinstr_why *why)
{
	const struct kinstr_probe_info *p = kinstr_probeset__info(pl->ps, i);
	struct kinstr_proto proto, *pp = NULL;
	struct kinstr_trace_spec spec;
	struct kinstr_why w;
	char name[192];
	unsigned int e, j;

	if (at_return)
		snprintf(name, sizeof(name), "%s%%return", p->func->name);
	else if (offset)
		snprintf(name, sizeof(name), "%s+0x%llx", p->func->name, (unsigned long long)(p->addr - p->func->addr));
	else
		snprintf(name, sizeof(name), "%s", p->func->name);
	for (e = 0; e < *nev; e++)
		if (!strcmp(ev[e].name, name))
			break;
	if (e == *nev) {
		if (*nev == max)
			return why_set(why, -E2BIG, p->func, p->addr, "more than %u events", max);
		memset(&ev[e], 0, sizeof(ev[e]));
		snprintf(ev[e].name, sizeof(ev[e].name), "%s", name);
		if (btf && kinstr_btf__proto(btf, p->func->name, &proto) == 0)
			pp = &proto;
		if (kinstr_values__parse(values, pp, !at_return && !offset, at_return, p->func->name, ev[e].vals,
					 &ev[e].nvals, &w))
			return why_set(why, -EINVAL, p->func, p->addr, "%s: %s", name, w.msg);
		if (event_pred(pl, pred, &ev[e], &w))
			return why_set(why, w.err, p->func, p->addr, "%s", w.msg);
		++*nev;
	}
	memset(&spec, 0, sizeof(spec));
	spec.event = (uint16_t)e;
	spec.nvals = (uint8_t)ev[e].nvals;
	for (j = 0; j < ev[e].nvals; j++)
		spec.vals[j] = ev[e].vals[j].v;
	if (kinstr_probeset__set_trace(pl->ps, i, &spec) ||
	    (ev[e].has_pred && (!kinstr_pred__valid(&ev[e].pred, &spec) ||
				kinstr_probeset__set_pred(pl->ps, i, &ev[e].pred))))
		return why_set(why, -EINVAL, p->func, p->addr, "%s: cannot record these values", name);
	return 0;
}

/* Where the '(' at open closes (nested ones counted), or NULL. */
static const char *closing_paren(const char *open)
{
	int depth = 0;

	for (; *open; open++)
		if (*open == '(')
			depth++;
		else if (*open == ')' && !--depth)
			return open;
	return NULL;
}

int kinstr_spec__parse_trace(const char *text, struct kinstr_spec *sp, struct kinstr_why *why)
{
	char probe[512];
	size_t n = strlen(text), cut = strcspn(text, "( \t");
	const char *open = text[cut] == '(' ? text + cut : NULL, *close = open ? closing_paren(open) : NULL;
	const char *rest = close ? close + 1 : text + cut;
	int ret;

	if (n >= sizeof(probe))
		return kinstr_why__fail(why, -EINVAL, "%.200s...: spec too long", text);
	snprintf(probe, sizeof(probe), "%.*s", (int)cut, text);
	ret = kinstr_spec__parse(probe, sp, why);
	if (ret)
		return ret;
	if (open && !close)
		return kinstr_why__fail(why, -EINVAL, "%.400s: expected SPEC(VALUE,...) [if EXPR]", text);
	if (open) {
		/* the values between the parentheses (shorter than the whole text, which fits probe[]) */
		snprintf(sp->values, sizeof(sp->values), "%.*s", (int)(close - (open + 1)), open + 1);
		sp->has_values = true;
	}
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (!*rest)
		return 0;
	if (strncmp(rest, "if", 2) || (rest[2] != ' ' && rest[2] != '\t' && rest[2] != '(' && rest[2] != '!'))
		return kinstr_why__fail(why, -EINVAL, "%.400s: at column %zu: expected 'if EXPR' after the spec, not '%.40s'",
					text, (size_t)(rest - text) + 1, rest);
	rest += 2;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (!*rest)
		return kinstr_why__fail(why, -EINVAL, "%.400s: at column %zu: expected an expression after 'if'", text,
					(size_t)(rest - text) + 1);
	snprintf(sp->pred, sizeof(sp->pred), "%s", rest);
	sp->has_pred = true;
	{
		struct kinstr_pred syntax;
		struct kinstr_why w;

		/* the syntax now; the names when the values are planned */
		if ((ret = kinstr_pred__compile(sp->pred, NULL, 0, &syntax, &w)))
			return kinstr_why__fail(why, ret, "%.300s: if '%.100s': %s", sp->text, sp->pred, w.msg);
	}
	return 0;
}

int kinstr_plan__add_traced(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_btf *btf,
			    struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max, struct kinstr_why *why,
			    struct kinstr_plan_glob *glob)
{
	size_t n0 = kinstr_probeset__cnt(pl->ps), i;
	int ret;

	ret = kinstr_plan__add(pl, sp, why, glob);
	for (i = n0; !ret && i < kinstr_probeset__cnt(pl->ps); i++)
		ret = trace_event(pl, i, sp->has_values ? sp->values : NULL, sp->has_pred ? sp->pred : NULL,
				  sp->kind == KINSTR_SPEC_RETURN,
				  sp->kind == KINSTR_SPEC_OFFSET, btf, ev, nev, max, why);
	if (ret)
		kinstr_probeset__truncate(pl->ps, n0);
	return ret;
}

int kinstr_plan__add_trace(struct kinstr_plan *pl, const char *text, struct kinstr_btf *btf,
			   struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max, struct kinstr_why *why,
			   struct kinstr_plan_glob *glob)
{
	struct kinstr_spec sp;
	int ret = kinstr_spec__parse_trace(text, &sp, why);

	return ret ? ret : kinstr_plan__add_traced(pl, &sp, btf, ev, nev, max, why, glob);
}
