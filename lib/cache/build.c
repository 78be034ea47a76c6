// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The code cache's builder (include/kinstr/cache.h): an instrumented copy of one function. Two
 * passes over the CFG's instructions (place.c, emit.c): the first decides how each appears in the copy
 * and so its size, which places every block's counter and every instruction; the second writes the
 * bytes. Here: what refuses a whole function, the build itself, and the copy's accessors.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/reloc.h>
#include <kinstr/sites.h>
#include <kinstr/x86.h>
#include "lib/opts.h"
#include "lib/cache/cache_priv.h"

/* int3 or a NOP (90, 0f 1f /0, with 66 or 2e prefixes): what the module takes for padding */
static int is_pad(const struct kinstr_x86_insn *x)
{
	unsigned int i = 0;

	while (i < x->len && (x->bytes[i] == 0x66 || x->bytes[i] == 0x2e))
		i++;
	if (i == x->len)
		return 0;
	if (x->len == 1 && x->bytes[0] == 0xcc)
		return 1;
	return x->bytes[i] == 0x90 || (i + 1 < x->len && x->bytes[i] == 0x0f && x->bytes[i + 1] == 0x1f);
}

/* Is f in [START, END) of the kernel's symbols (when the view has both)? */
static int between(const struct kinstr_kernel *k, const struct kinstr_func *f, const char *start, const char *end)
{
	const struct kinstr_func *s = kinstr_kernel__find_func(k, start), *e = kinstr_kernel__find_func(k, end);

	return s && e && f->addr >= s->addr && f->addr < e->addr;
}

static int in_sched_text(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	return between(k, f, "__sched_text_start", "__sched_text_end") ||
	       between(k, f, "__lock_text_start", "__lock_text_end");
}

/* GCC's .cold part of f ("f.cold"), a symbol of its own whose jumps come back into f's middle. */
static int name_has_cold_part(const struct kinstr_kernel *k, const char *fname)
{
	char name[512];

	if (strlen(fname) + 6 > sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%s.cold", fname);
	/* by name, as the module asks kallsyms: any function's of that name (duplicates too) */
	return kinstr_kernel__lookup(k, name, NULL, 0) > 0;
}

/* f, or an alias at its address (the module names whichever kallsyms gives: init_module's virtio_init) */
static int has_cold_part(const struct kinstr_kernel *k, const struct kinstr_func *f)
{
	const struct kinstr_func *g = kinstr_kernel__func_at(k, f->addr);
	size_t i, n = kinstr_kernel__func_cnt(k);

	if (name_has_cold_part(k, f->name))
		return 1;
	if (!g)
		return 0;
	for (i = (size_t)(g - kinstr_kernel__func(k, 0)); i && kinstr_kernel__func(k, i - 1)->addr == f->addr; i--)
		;
	for (; i < n && kinstr_kernel__func(k, i)->addr == f->addr; i++)
		if (name_has_cold_part(k, kinstr_kernel__func(k, i)->name))
			return 1;
	return 0;
}

/*
 * Does control fall off the function's last instruction into whatever follows (an asm function
 * whose next label is a symbol of its own: __put_user_1 into __put_user_nocheck_1)? The
 * module's rule (kmod/check/cache.c, check_function): the code ends on a ret, a jmp, an indirect
 * branch, an int3, a call (noreturn) or a BUG's ud2.
 */
static int runs_off_end(const struct kinstr_x86_insn *x)
{
	switch (x->flow) {
	case KINSTR_X86_FLOW_JMP: case KINSTR_X86_FLOW_JMP_IND: case KINSTR_X86_FLOW_CALL:
	case KINSTR_X86_FLOW_CALL_IND: case KINSTR_X86_FLOW_INT3:
		return 0;
	case KINSTR_X86_FLOW_UD2:	/* ud2 only: the kernel's BUG */
		return !(x->len == 2 && x->bytes[0] == 0x0f && x->bytes[1] == 0x0b);
	case KINSTR_X86_FLOW_RET:	/* the module's own reading: a bare ret */
		return !(x->len == 1 && x->bytes[0] == 0xc3);
	default:
		return 1;
	}
}

/* A function's .cold part itself: entered and left by jumps from and to its function. */
static int is_cold_part(const struct kinstr_func *f)
{
	const char *c = strstr(f->name, ".cold");

	return c && (c[5] == 0 || c[5] == '.');
}

struct kinstr_cache_fn *kinstr_cache_fn__build(const struct kinstr_kernel *k, const struct kinstr_func *f,
					       uint64_t copy_addr, const struct kinstr_cache_opts *opts,
					       struct kinstr_cache_refusal *r)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o) };
	struct kinstr_cache_fn *c = NULL;
	const struct kinstr_cfg *cfg;
	struct kinstr_fn *fn = NULL;
	struct plan *p = NULL;
	struct kinstr_cache_edge *edges = NULL;
	uint8_t *unseen = NULL;
	uint64_t entry, abi_entry, code_end, at, pre[8];
	size_t first, n, i, nb = 0, nr = 0, total = 0, npre = 0, ne = 0;
	uint32_t res;
	int e;

	if (r)
		memset(r, 0, sizeof(*r));
	if (!k || !f || !KINSTR_OPTS_VALID(opts)) {	/* a non-zero tail we do not know: EINVAL */
		errno = EINVAL;
		return NULL;
	}
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (kinstr_kernel__reserved(k, f->addr, f->size) & (1u << KINSTR_R_HELD)) {
		cc_refuse(r, KINSTR_CACHE_R_HELD, f->addr, 1u << KINSTR_R_HELD,
		       "held by another kinstr session (pid %d): its probe or its code cache is in the function",
		       kinstr_kernel__held_by(k, f->addr, f->size));
		return NULL;
	}
	res = kinstr_kernel__reserved(k, f->addr, f->size) & POLICY_REASONS;
	if (res) {
		cc_refuse(r, KINSTR_CACHE_R_POLICY, f->addr, res, "the function's text is reserved");
		return NULL;
	}
	if (in_sched_text(k, f)) {
		cc_refuse(r, KINSTR_CACHE_R_SCHED_TEXT, f->addr, 0,
		       ".sched.text or lock text: wchan and profile_pc look for these functions by address");
		return NULL;
	}
	if (is_cold_part(f)) {
		cc_refuse(r, KINSTR_CACHE_R_COLD, f->addr, 0, "a .cold part: its function jumps into it and it jumps back");
		return NULL;
	}
	if (has_cold_part(k, f)) {
		cc_refuse(r, KINSTR_CACHE_R_COLD, f->addr, 0, "a .cold part of the function may jump back into the original");
		return NULL;
	}
	fn = kinstr_fn__analyze(k, f);
	if (!fn)
		return NULL;
	cfg = kinstr_fn__cfg(fn);
	entry = cc_entry_of(k, f);
	e = kinstr_cfg__find_insn(cfg, entry);
	if (e < 0) {
		cc_refuse(r, KINSTR_CACHE_R_NO_CODE, f->addr, 0, "no instruction at the entry");
		goto fail;
	}
	first = (size_t)e;
	/*
	 * Native instructions at the entry (cli in _raw_spin_lock_irq), and a jump label or a
	 * static call there (the kernel rewrites them in place), run in the original before the
	 * splice: a splice on one would enter a copy that jumps straight back to it, and none fits
	 * on a rewritten site. A jump label's target becomes a re-entry point.
	 */
	while (first < kinstr_cfg__insn_cnt(cfg)) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first)->x;
		uint32_t rs = kinstr_kernel__reserved(k, x->addr, x->len);
		int site = !!(rs & ((1u << KINSTR_R_JUMP_LABEL) | (1u << KINSTR_R_STATIC_CALL)));

		if ((!cc_runs_native(x, rs) && !site) || (!kinstr_x86__falls_through(x) && !(rs & (1u << KINSTR_R_JUMP_LABEL))))
			break;
		if (rs & (1u << KINSTR_R_JUMP_LABEL)) {
			const struct kinstr_cfg_edge *je;
			size_t nje = kinstr_kernel__edges(k, x->addr, x->addr + x->len, &je), j;

			for (j = 0; j < nje && npre < sizeof(pre) / sizeof(pre[0]); j++)
				if (je[j].to != x->addr + x->len)
					pre[npre++] = je[j].to;
		}
		first++;
	}
	if (first == kinstr_cfg__insn_cnt(cfg) || (kinstr_cfg__insn(cfg, first)->flags & KINSTR_CFG_I_PADDING)) {
		cc_refuse(r, KINSTR_CACHE_R_NO_CODE, f->addr, 0, "nothing after the entry");
		goto fail;
	}
	/* compiled C (an ftrace NOP): the flags are dead at the instruction after the NOP */
	abi_entry = entry != f->addr + f->endbr ? entry : 0;
	entry = kinstr_cfg__insn(cfg, first)->x.addr;
	/* the code ends before the trailing padding (int3s and NOPs: a last BUG's ud2 is code) */
	for (n = kinstr_cfg__insn_cnt(cfg); n > first && (kinstr_cfg__insn(cfg, n - 1)->flags & KINSTR_CFG_I_PADDING) &&
	     is_pad(&kinstr_cfg__insn(cfg, n - 1)->x); n--)
		;
	n -= first;
	if (!n) {
		cc_refuse(r, KINSTR_CACHE_R_NO_CODE, f->addr, 0, "nothing after the entry");
		goto fail;
	}
	code_end = kinstr_cfg__insn(cfg, first + n - 1)->x.addr + kinstr_cfg__insn(cfg, first + n - 1)->x.len;
	if (runs_off_end(&kinstr_cfg__insn(cfg, first + n - 1)->x)) {
		cc_refuse(r, KINSTR_CACHE_R_RUNS_ON, kinstr_cfg__insn(cfg, first + n - 1)->x.addr, 0,
		       "the code runs on past the function's end (into the next symbol)");
		goto fail;
	}
	p = calloc(n, sizeof(*p));
	if (!p)
		goto fail;
	for (i = 0; i < n; i++)
		if (cc_plan_insn(k, cfg, &o, p, first, i, entry, abi_entry, f->addr, f->addr + f->size, r))
			goto fail;
	cc_plan_reentries(k, cfg, p, first, n, entry);
	for (i = 0; i < npre; i++) {	/* where the entry's jump labels go */
		int t = kinstr_cfg__find_insn(cfg, pre[i]);

		if (t >= 0 && (size_t)t >= first && (size_t)t < first + n)
			cc_mark(p, n, (size_t)t - first, KINSTR_CACHE_AFTER_NATIVE);
	}
	if (o.layout) {	/* re-laid, without counters (layout.c) */
		c = cc_build_laid(k, f, cfg, p, first, n, code_end, copy_addr, &o, r);
		e = c ? 0 : errno;
		free(p);
		kinstr_fn__free(fn);
		errno = e;
		return c;
	}
	if (cc_place_counters(k, cfg, p, first, n, abi_entry, f->addr, f->addr + f->size, r))
		goto fail;
	for (i = 0; i < n; i++) {
		if (p[i].leader)
			nb++;
		p[i].block = (uint32_t)(nb - 1);
	}
	if (!(unseen = calloc(nb, 1)))
		goto fail;
	if (o.flags & KINSTR_CACHE_F_EDGES) {
		if (!(edges = calloc(2 * n, sizeof(*edges))))
			goto fail;
		ne = cc_plan_edges(k, cfg, p, first, n, abi_entry, nb, edges, unseen);
	}
	if (cc_carry_counters(k, cfg, p, first, n, abi_entry, !!(o.flags & KINSTR_CACHE_F_EDGES), r))
		goto fail;
	if ((o.flags & KINSTR_CACHE_F_TIMER) && cc_plan_timers(cfg, p, first, n, r))
		goto fail;
	for (i = 0, at = copy_addr; i < n; i++) {
		p[i].copy = at;
		at += p[i].size;
		nr += !!p[i].reentry;
	}
	total = (size_t)(at - copy_addr);

	c = calloc(1, sizeof(*c));
	if (!c || !(c->bytes = malloc(total)) || !(c->insns = calloc(n, sizeof(*c->insns))) ||
	    !(c->blocks = calloc(nb, sizeof(*c->blocks))) || !(c->reentries = calloc(nr ? nr : 1, sizeof(*c->reentries))))
		goto fail;
	c->copy_addr = copy_addr;
	c->size = total;
	for (i = 0; i < n; i++) {
		const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, first + i)->x;
		struct kinstr_cache_insn *ci = &c->insns[i];

		if (cc_emit_insn(cfg, &o, p, first, n, i, c->bytes + (p[i].copy - copy_addr), r))
			goto fail;
		ci->addr = x->addr;
		ci->len = x->len;
		ci->how = p[i].how;
		ci->block = p[i].block;
		ci->copy = p[i].copy + cc_edge_in_len(&p[i]) + (p[i].counter ? COUNTER_LEN + 2 * p[i].saves_flags : 0);
		ci->copy_len = (uint8_t)(p[i].copy + p[i].size - ci->copy);
		ci->counted = p[i].counter;
		ci->edges = p[i].edges;
		ci->edge = p[i].edge;
		ci->in_counter = p[i].in_ctr;
		ci->timer = p[i].timer;
		if (p[i].leader) {
			c->blocks[p[i].block].addr = x->addr;
			c->blocks[p[i].block].copy = p[i].copy + cc_edge_in_len(&p[i]);
			c->blocks[p[i].block].first = (uint32_t)i;
			c->blocks[p[i].block].unseen = unseen[p[i].block];
			c->blocks[p[i].block].ctr = p[i].block;
			c->blocks[p[i].block].counted_after = p[i].counted_after;
		}
		if (p[i].counter) {
			c->blocks[p[i].block].counter = p[i].copy + cc_edge_in_len(&p[i]);
			c->blocks[p[i].block].saves_flags = p[i].saves_flags;
		}
		c->blocks[p[i].block].count++;
		if (p[i].reentry) {
			struct kinstr_cache_reentry *re = &c->reentries[c->nr_reentries++];

			re->addr = x->addr;
			/* a path continued lands on the edge into it, a branch from the original after it */
			re->copy = p[i].copy + (p[i].fall_re ? 0 : cc_edge_in_len(&p[i]));
			re->why = p[i].reentry - 1;
			re->jump = cc_reentry_jump_fits(k, cfg, p, first, n, i, code_end, f);
			if (!re->jump && (kinstr_kernel__reserved(k, x->addr, 1))) {
				cc_refuse(r, KINSTR_CACHE_R_REENTRY, x->addr, kinstr_kernel__reserved(k, x->addr, 1),
				       "a re-entry point the kernel reserves");
				goto fail;
			}
		}
	}
	/* blocks counted after a native run: by the counter before it all of a block that carries them, or another's */
	for (i = 0; i < n; i++) {
		struct kinstr_cache_block *bl = &c->blocks[p[i].block];
		const struct plan *pk;

		if (!p[i].leader || !p[i].count_at)
			continue;
		pk = &p[p[i].count_at - 1];
		if (pk->carries) {
			bl->counter = pk->copy;
			bl->saves_flags = !!(pk->edges & KINSTR_CACHE_I_EDGE_IN_PUSHF);
			bl->ctr = pk->in_ctr;
		} else if (pk->block != p[i].block) {
			bl->counter = c->blocks[pk->block].counter;
			bl->saves_flags = c->blocks[pk->block].saves_flags;
			bl->ctr = pk->block;
		}
	}
	c->nr_insns = n;
	c->nr_blocks = nb;
	c->edges = edges;
	c->nr_edges = ne;
	free(unseen);
	free(p);
	kinstr_fn__free(fn);
	return c;
fail:
	e = errno ? errno : ENOMEM;
	free(unseen);
	free(edges);	/* not yet c's */
	free(p);
	kinstr_cache_fn__free(c);
	kinstr_fn__free(fn);
	errno = e;
	return NULL;
}

void kinstr_cache_fn__free(struct kinstr_cache_fn *c)
{
	if (!c)
		return;
	free(c->bytes);
	free(c->insns);
	free(c->blocks);
	free(c->reentries);
	free(c->edges);
	free(c->laid);
	free(c);
}

uint64_t kinstr_cache_fn__copy_addr(const struct kinstr_cache_fn *c)
{
	return c->copy_addr;
}

size_t kinstr_cache_fn__size(const struct kinstr_cache_fn *c)
{
	return c->size;
}

const uint8_t *kinstr_cache_fn__bytes(const struct kinstr_cache_fn *c)
{
	return c->bytes;
}

size_t kinstr_cache_fn__insn_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_insns;
}

const struct kinstr_cache_insn *kinstr_cache_fn__insn(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_insns ? &c->insns[i] : NULL;
}

size_t kinstr_cache_fn__block_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_blocks;
}

const struct kinstr_cache_block *kinstr_cache_fn__block(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_blocks ? &c->blocks[i] : NULL;
}

size_t kinstr_cache_fn__edge_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_edges;
}

const struct kinstr_cache_edge *kinstr_cache_fn__edge(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_edges ? &c->edges[i] : NULL;
}

size_t kinstr_cache_fn__counter_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_blocks + c->nr_edges;
}

size_t kinstr_cache_fn__reentry_cnt(const struct kinstr_cache_fn *c)
{
	return c->nr_reentries;
}

const struct kinstr_cache_reentry *kinstr_cache_fn__reentry(const struct kinstr_cache_fn *c, size_t i)
{
	return i < c->nr_reentries ? &c->reentries[i] : NULL;
}

const char *kinstr_cache_how__str(unsigned int how)
{
	static const char *const s[] = { "copy", "reloc", "call", "native", "jump-label", "static-call" };

	return how < KINSTR_CACHE_NR_HOW ? s[how] : "?";
}

const char *kinstr_cache_why__str(unsigned int why)
{
	static const char *const s[] = { "entry", "return", "after-native", "fixup" };

	return why < KINSTR_CACHE_NR_WHY ? s[why] : "?";
}

const char *kinstr_cache_edge_kind__str(unsigned int kind)
{
	static const char *const s[KINSTR_CACHE_NR_EDGE] = { "entry", "fall", "taken", "exit" };

	return kind < KINSTR_CACHE_NR_EDGE ? s[kind] : "?";
}

const char *kinstr_cache_refusal__id(unsigned int code)
{
	static const char *const s[] = {
		"ok", "policy", "undecodable", "int3", "indirect-jmp", "indirect-call", "internal-call", "loop",
		"endbr", "reserved", "jump-label", "static-call", "reentry", "range", "no-code", "return", "cold-part", "sched-text",
		"far-transfer", "runs-on", "foreign-branch", "uncounted-block", "held", "timer",
	};

	return code < KINSTR_CACHE_R_NR ? s[code] : "?";
}
