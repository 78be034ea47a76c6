// SPDX-License-Identifier: GPL-2.0
/*
 * What kinstr cover (and count --every-block) prints: the functions' plans (--dry-run), where their
 * source lines come from, and after a run each function's blocks with their counts, edges and
 * source lines, or with --once each block hit or not, as text or JSON (cover_run.c runs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/cover.h>
#include <kinstr/kinstr.h>
#include <kinstr/lines.h>
#include "cli/cli.h"
#include "cli/cover.h"

struct cover_sum {
	size_t blocks, pushf, insns, bytes, how[KINSTR_CACHE_NR_HOW], jumps, int3s;
};

static void summarise(const struct kinstr_cache_fn *c, struct cover_sum *s)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->blocks = kinstr_cache_fn__block_cnt(c);
	for (i = 0; i < s->blocks; i++)
		s->pushf += kinstr_cache_fn__block(c, i)->saves_flags;
	s->insns = kinstr_cache_fn__insn_cnt(c);
	for (i = 0; i < s->insns; i++)
		s->how[kinstr_cache_fn__insn(c, i)->how]++;
	s->bytes = kinstr_cache_fn__size(c);
	for (i = 0; i < kinstr_cache_fn__reentry_cnt(c); i++) {
		if (kinstr_cache_fn__reentry(c, i)->jump)
			s->jumps++;
		else
			s->int3s++;
	}
}

static void print_json(const struct kinstr_kernel *k, const struct kinstr_func *f, const struct kinstr_cache_fn *c,
		       const struct cover_sum *s, const struct kinstr_cache_refusal *r)
{
	size_t i, n = 0;

	printf("{\"function\":");
	cli_json_str(f->name);
	printf(",\"addr\":\"0x%llx\"", f->addr);
	if (!c) {
		printf(",\"refused\":\"%s\",\"at\":\"0x%llx\",\"why\":", kinstr_cache_refusal__id((unsigned int)r->code),
		       (unsigned long long)r->addr);
		cli_json_str(r->why);
		printf("}");
		return;
	}
	printf(",\"blocks\":%zu,\"saves_flags\":%zu,\"instructions\":%zu,\"copy_bytes\":%zu,", s->blocks,
	       s->pushf, s->insns, s->bytes);
	if (kinstr_cache_fn__edge_cnt(c))
		printf("\"edges\":%zu,", kinstr_cache_fn__edge_cnt(c));
	printf("\"how\":{");
	for (i = 0; i < KINSTR_CACHE_NR_HOW; i++)
		printf("%s\"%s\":%zu", i ? "," : "", kinstr_cache_how__str((unsigned int)i), s->how[i]);
	printf("},\"reentries\":[");
	for (i = 0; i < kinstr_cache_fn__reentry_cnt(c); i++) {
		const struct kinstr_cache_reentry *re = kinstr_cache_fn__reentry(c, i);

		printf("%s{\"offset\":%llu,\"why\":\"%s\",\"kind\":\"%s\"}", i ? "," : "",
		       (unsigned long long)(re->addr - f->addr), kinstr_cache_why__str(re->why), re->jump ? "jump" : "int3");
	}
	/* blocks the original runs into or starts: counted where control comes back to the copy */
	printf("],\"counted_after\":[");
	for (i = 0; i < kinstr_cache_fn__block_cnt(c); i++) {
		const struct kinstr_cache_block *bl = kinstr_cache_fn__block(c, i);

		if (bl->counted_after)
			printf("%s%llu", n++ ? "," : "", (unsigned long long)(bl->addr - f->addr));
	}
	n = 0;
	/* the kernel's facts the copy relies on: each jump label's key, each static call's trampoline */
	printf("],\"facts\":[");
	for (i = 0; i < kinstr_cache_fn__insn_cnt(c); i++) {
		const struct kinstr_cache_insn *in = kinstr_cache_fn__insn(c, i);
		unsigned long long v;
		int bit;

		if (in->how == KINSTR_CACHE_JUMP_LABEL && !kinstr_kernel__jump_label(k, in->addr, &v, &bit))
			printf("%s{\"offset\":%llu,\"jump_label_key\":\"0x%llx\",\"branch\":%d}", n++ ? "," : "",
			       (unsigned long long)(in->addr - f->addr), v, bit);
		else if (in->how == KINSTR_CACHE_STATIC_CALL && !kinstr_kernel__static_call(k, in->addr, &v, &bit))
			printf("%s{\"offset\":%llu,\"static_call_trampoline\":\"0x%llx\",\"tail\":%d}", n++ ? "," : "",
			       (unsigned long long)(in->addr - f->addr), v, bit);
	}
	printf("]}");
}

/* Plan f as the module's area would hold it and print its row (or JSON object); shown and refused count. */
static void plan_one(const struct kinstr_kernel *k, const struct kinstr_func *f, bool json, bool edges,
		     size_t *shown, size_t *refused, int *rc)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o), .flags = edges ? KINSTR_CACHE_F_EDGES : 0 };
	struct kinstr_cache_refusal r;
	struct kinstr_cache_fn *cf;
	struct cover_sum s;

	/* the plan for an area where the module's would be: within +-2 GiB of the text */
	cf = kinstr_cache_fn__build(k, f, (f->addr & ~((1ULL << 30) - 1)) + (1ULL << 30), &o, &r);
	if (!cf && errno != EPERM) {
		cli_err("cover: %s: %s", f->name, strerror(errno));
		*rc = CLI_FAIL;
		return;
	}
	if (cf)
		summarise(cf, &s);
	else
		(*refused)++;
	if (json) {
		printf("%s", (*shown)++ ? "," : "");
		print_json(k, f, cf, &s, &r);
	} else {
		(*shown)++;
		if (cf)
			printf("%-36s %6zu %6zu %6zu %7zu %6zu %6zu %6zu %4zu/%-4zu\n", f->name, s.blocks, s.pushf, s.insns,
			       s.bytes, s.how[KINSTR_CACHE_CALL] + s.how[KINSTR_CACHE_STATIC_CALL], s.how[KINSTR_CACHE_NATIVE],
			       s.how[KINSTR_CACHE_JUMP_LABEL], s.jumps, s.int3s);
		else
			printf("%-36s refused (%s) at %s+0x%llx: %s\n", f->name, kinstr_cache_refusal__id((unsigned int)r.code),
			       f->name, (unsigned long long)(r.addr - f->addr), r.why);
	}
	kinstr_cache_fn__free(cf);
}

int cli_cover__dry_run(const struct kinstr_kernel *k, const struct kinstr_cover *cv, bool json, bool edges)
{
	size_t refused = 0, shown = 0, i;
	int rc = CLI_OK;

	if (json)
		printf("{\"kernel\":\"%s\",\"functions\":[", kinstr_kernel__release(k));
	else
		printf("%-36s %6s %6s %6s %7s %6s %6s %6s %9s\n", "FUNCTION", "BLOCKS", "PUSHF", "INSNS", "BYTES", "CALLS",
		       "NATIVE", "JLABEL", "REENTRY");
	for (i = 0; i < kinstr_cover__func_cnt(cv); i++)
		plan_one(k, kinstr_cover__func(cv, i), json, edges, &shown, &refused, &rc);
	if (json)
		printf("],\"refused\":%zu}\n", refused);
	else
		printf("kinstr: dry run, nothing installed: %zu planned, %zu refused; REENTRY is jumps/int3s the "
		       "original would get\n", shown - refused, refused);
	return rc;
}

static bool same_module(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

void cli_cover__lines_from(const struct kinstr_kernel *k, const struct kinstr_cover *cv,
			   const struct kinstr_lines *l)
{
	size_t i, j;

	for (i = 0; i < kinstr_cover__func_cnt(cv); i++) {
		const struct kinstr_func *f = kinstr_cover__func(cv, i);
		const char *m = f->module;

		for (j = 0; j < i && !same_module(kinstr_cover__func(cv, j)->module, m); j++)
			;
		if (j < i)
			continue;	/* its module's said */
		if (kinstr_lines__path(l, m))
			fprintf(stderr, "kinstr: source lines of %s%s from %s\n", m ? "module " : "the core kernel",
				m ? m : "", kinstr_lines__path(l, m));
		else if (!m)
			fprintf(stderr, "kinstr: no DWARF for the core kernel (install linux-image-%s-dbg, or give "
				"--debuginfo VMLINUX): its blocks are function+offset\n", kinstr_kernel__release(k));
		else
			fprintf(stderr, "kinstr: no DWARF for module %s (its .ko from the -dbg package, or --debuginfo "
				"%s.ko): its blocks are function+offset\n", m, m);
	}
}

/*
 * Function i's head, its nb blocks hit blocks covered (counted into the totals): its JSON object up
 * to its counts' '[', or its text line.
 */
static void fn_head(const struct kinstr_func *f, size_t i, size_t nb, size_t hit, bool json, size_t *fcov,
		    size_t *bcov, size_t *btot)
{
	*fcov += hit != 0;
	*bcov += hit;
	*btot += nb;
	if (json) {
		printf("%s{\"function\":", i ? "," : "");
		cli_json_str(f->name);
		printf(",\"addr\":\"0x%llx\",\"blocks\":%zu,\"covered\":%zu,\"counts\":[", f->addr, nb, hit);
	} else {
		printf("%s: %zu/%zu blocks (%.1f%%)\n", f->name, hit, nb, nb ? 100.0 * (double)hit / (double)nb : 0.0);
	}
}

/* A function the library refused when planned. */
static void print_refused(const struct kinstr_cover_refusal *rf)
{
	printf("%s: not covered: refused (%s) at +0x%llx: %s\n", rf->f->name, kinstr_cache_refusal__id((unsigned int)rf->r.code),
	       (unsigned long long)(rf->r.addr - rf->f->addr), rf->r.why);
}

void cli_cover__once_refused(const struct kinstr_cover_once *o)
{
	size_t i, n;
	const struct kinstr_cover_refusal *rf = kinstr_cover_once__refused(o, &n);

	for (i = 0; i < n; i++)
		print_refused(&rf[i]);
}

void cli_cover__once_results(const struct kinstr_cover_once *o, bool json, double secs, int status)
{
	struct kinstr_cover_once_sum s;
	const struct kinstr_cache_fn *c;
	const struct kinstr_func *f;
	size_t i, b, fcov = 0, bcov = 0, btot = 0;

	kinstr_cover_once__sum(o, &s);
	if (json)
		printf("{\"seconds\":%.3f,\"once\":true,\"functions\":[", secs);
	for (i = 0; (c = kinstr_cover_once__fn(o, i, &f)); i++) {
		size_t nb = kinstr_cache_fn__block_cnt(c), hit = 0;

		for (b = 0; b < nb; b++)
			hit += kinstr_cover_once__hit(o, i, b) > 0;
		fn_head(f, i, nb, hit, json, &fcov, &bcov, &btot);
		for (b = 0; b < nb; b++) {
			unsigned long long off = kinstr_cache_fn__block(c, b)->addr - f->addr;
			int h = kinstr_cover_once__hit(o, i, b);

			if (json)
				printf("%s{\"offset\":%llu,\"hit\":%d,\"probed\":%d}", b ? "," : "", off, h > 0, h >= 0);
			else
				printf("  +0x%-6llx %s\n", off, h < 0 ? "unprobed" : h ? "hit" : "-");
		}
		if (json)
			printf("]}");
	}
	if (json)
		printf("],\"probes\":%zu,\"disarmed\":%zu,\"left\":%zu,\"unprobed\":%zu,\"refused\":%zu,"
		       "\"functions_covered\":%zu,\"blocks_covered\":%zu,\"blocks_total\":%zu,\"status\":%d}\n",
		       s.probes, s.disarmed, s.probes - s.disarmed, s.unprobed, s.refused, fcov, bcov, btot, status);
	else
		printf("kinstr: one-shot: covered %zu/%zu functions, %zu/%zu blocks (%.1f%%); %zu probes: %zu taken out "
		       "after their first hit, %zu never hit; %zu blocks without a probe, %zu functions refused\n",
		       fcov, s.funcs, bcov, btot, btot ? 100.0 * (double)bcov / (double)btot : 0.0, s.probes, s.disarmed,
		       s.probes - s.disarmed, s.unprobed, s.refused);
}

/* With edges: "in = count = out" of block b, or what differs, or what the counters do not see. */
static const char *flow_of(const struct kinstr_cacheset *cs, size_t i, size_t b, uint64_t *in, uint64_t *out)
{
	uint64_t v = kinstr_cacheset__block_count(cs, i, b);
	int u = kinstr_cacheset__block_flow(cs, i, b, in, out);

	if (u < 0)
		return NULL;
	if (u)
		return u == KINSTR_CACHE_B_IN_UNSEEN ? "unseen-in" : u == KINSTR_CACHE_B_OUT_UNSEEN ? "unseen-out" : "unseen";
	return *in == v && *out == v ? "conserved" : "differs";
}


void cli_cover__results(const struct kinstr_cacheset *cs, const struct kinstr_cover_refusal *rf, size_t nrf,
			bool json, bool hit_only, double secs, int status, struct kinstr_lines *lines)
{
	const char *src;
	int ln;
	size_t i, b, fcov = 0, bcov = 0, btot = 0, fl_ok = 0, fl_bad = 0, fl_unseen = 0, nmod = 0;
	uint64_t in, out;
	const char *fl;

	if (json)
		printf("{\"seconds\":%.3f,\"functions\":[", secs);
	for (i = 0; i < kinstr_cacheset__cnt(cs); i++) {
		const struct kinstr_func *f = kinstr_cacheset__func(cs, i);
		const struct kinstr_cache_fn *c = kinstr_cacheset__fn(cs, i);
		size_t nb = kinstr_cache_fn__block_cnt(c), hit = 0;

		for (b = 0; b < nb; b++)
			hit += kinstr_cacheset__block_count(cs, i, b) != 0;
		fn_head(f, i, nb, hit, json, &fcov, &bcov, &btot);
		if (json) {
			for (b = 0; b < nb; b++) {
				const struct kinstr_cache_block *bl = kinstr_cache_fn__block(c, b);
				uint64_t v = kinstr_cacheset__block_count(cs, i, b);

				printf("%s{\"offset\":%llu,\"%s\":%llu", b ? "," : "",
				       (unsigned long long)(bl->addr - f->addr), hit_only ? "hit" : "count",
				       (unsigned long long)(hit_only ? v != 0 : v));
				if (!kinstr_lines__find(lines, f, bl->addr, &src, &ln)) {
					printf(",\"source\":");
					cli_json_str(src);
					printf(",\"line\":%d", ln);
				}
				if (bl->counted_after)
					printf(",\"counted_after\":true");
				if ((fl = flow_of(cs, i, b, &in, &out))) {
					printf(",\"in\":%llu,\"out\":%llu,\"flow\":\"%s\"", (unsigned long long)in,
					       (unsigned long long)out, fl);
					fl_ok += !strcmp(fl, "conserved");
					fl_bad += !strcmp(fl, "differs");
					fl_unseen += !strncmp(fl, "unseen", 6);
				}
				printf("}");
			}
			printf("]");
			if (kinstr_cache_fn__edge_cnt(c)) {
				printf(",\"edges\":[");
				for (b = 0; b < kinstr_cache_fn__edge_cnt(c); b++) {
					const struct kinstr_cache_edge *e = kinstr_cache_fn__edge(c, b);

					printf("%s{\"kind\":\"%s\",\"from\":", b ? "," : "", kinstr_cache_edge_kind__str(e->kind));
					if (e->from == KINSTR_CACHE_OUTSIDE)
						printf("null");
					else
						printf("%llu", (unsigned long long)(kinstr_cache_fn__block(c, e->from)->addr - f->addr));
					printf(",\"to\":");
					if (e->to == KINSTR_CACHE_OUTSIDE)
						printf("null");
					else
						printf("%llu", (unsigned long long)(kinstr_cache_fn__block(c, e->to)->addr - f->addr));
					printf(",\"count\":%llu}", (unsigned long long)kinstr_cacheset__edge_count(cs, i, b));
				}
				printf("]");
			}
			printf("}");
			continue;
		}
		for (b = 0; b < nb; b++) {
			const struct kinstr_cache_block *bl = kinstr_cache_fn__block(c, b);
			uint64_t v = kinstr_cacheset__block_count(cs, i, b);

			if (hit_only)
				printf("  +0x%-6llx %s", (unsigned long long)(bl->addr - f->addr), v ? "hit" : "-");
			else
				printf("  +0x%-6llx %llu", (unsigned long long)(bl->addr - f->addr), (unsigned long long)v);
			if (!kinstr_lines__find(lines, f, bl->addr, &src, &ln))
				printf("  %s:%d", src, ln);
			if ((fl = flow_of(cs, i, b, &in, &out))) {
				printf("  in %llu out %llu %s", (unsigned long long)in, (unsigned long long)out, fl);
				fl_ok += !strcmp(fl, "conserved");
				fl_bad += !strcmp(fl, "differs");
				fl_unseen += !strncmp(fl, "unseen", 6);
			}
			printf("\n");
		}
	}
	if (json) {
		printf("],\"refused\":[");
		for (i = 0; i < nrf; i++) {
			printf("%s{\"function\":", i ? "," : "");
			cli_json_str(rf[i].f->name);
			printf(",\"addr\":\"0x%llx\"", rf[i].f->addr);
			if (rf[i].at_install) {
				printf(",\"refused\":\"%s\",\"by\":\"%s\",\"why\":", rf[i].by_module ? "module" : "install",
				       rf[i].by_module ? "module" : "library");
				cli_json_str(rf[i].at_install);
			} else {
				printf(",\"refused\":\"%s\",\"by\":\"library\",\"why\":",
				       kinstr_cache_refusal__id((unsigned int)rf[i].r.code));
				cli_json_str(rf[i].r.why);
			}
			printf("}");
		}
		for (i = 0; i < nrf; i++)
			nmod += rf[i].at_install != NULL;
		printf("],\"refused_at_install\":%zu,\"functions_covered\":%zu,\"functions_total\":%zu,"
		       "\"blocks_covered\":%zu,\"blocks_total\":%zu", nmod, fcov, kinstr_cacheset__cnt(cs), bcov, btot);
		if (fl_ok + fl_bad + fl_unseen)
			printf(",\"flow_conserved\":%zu,\"flow_differs\":%zu,\"flow_unseen\":%zu", fl_ok, fl_bad, fl_unseen);
		printf(",\"status\":%d}\n", status);
		return;
	}
	for (i = 0; i < nrf; i++) {
		if (rf[i].at_install) {
			printf("%s: not covered: refused %s: %s\n", rf[i].f->name,
			       rf[i].by_module ? "by the module" : "at install", rf[i].at_install);
			nmod++;
		} else {
			print_refused(&rf[i]);
		}
	}
	printf("kinstr: covered %zu/%zu functions, %zu/%zu blocks (%.1f%%) in %.1f s; %zu refused", fcov,
	       kinstr_cacheset__cnt(cs), bcov, btot, btot ? 100.0 * (double)bcov / (double)btot : 0.0, secs, nrf);
	if (nmod)
		printf(" (%zu at install, left out)", nmod);
	printf("\n");
	if (fl_ok + fl_bad + fl_unseen)
		printf("kinstr: flow: in = count = out in %zu blocks, differs in %zu (passes in flight while the counters "
		       "were read, or a kinstr bug), %zu with a way in or out no counter sees\n", fl_ok, fl_bad, fl_unseen);
}
