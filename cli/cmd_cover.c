// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr cover --dry-run FUNC...: the code cache's plan for each function (lib/cache.c): its
 * blocks and their counters, how its instructions appear in the copy, the re-entry points the
 * original would get, or why it is refused. Installing needs the module's side of the code
 * cache, which is not built yet (docs/design.md, "The code cache").
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/cache.h>
#include "cli.h"

static void cover_usage(FILE *f)
{
	fprintf(f, "usage: kinstr cover --dry-run [--json] [--snapshot FILE] FUNC|GLOB...\n\n"
		   "Block coverage through the code cache: each FUNC runs as an instrumented copy, entered\n"
		   "through a splice at its entry, with a counter at every basic block and no trap.\n"
		   "Only the plan can be shown yet (--dry-run): per function its blocks (and how many\n"
		   "counters must save the flags), how its instructions appear in the copy (copied,\n"
		   "re-aimed, calls with the original's return address, left to the original, jump labels\n"
		   "tested at run time, static calls through their trampoline), the re-entry points the\n"
		   "original gets (a jmp where 5 bytes fit, else an int3), or why it is refused. A GLOB\n"
		   "('vfs_*', comma-separated lists too) takes every function it matches.\n\n"
		   "  --dry-run        show the plan; install nothing (required for now)\n"
		   "  --json           one JSON object\n"
		   "  --snapshot FILE  plan from a snapshot ('kinstr snapshot') instead of the running kernel\n"
		   "                   (it holds no jump-label keys: functions with a jump label are refused)\n");
}

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
	printf(",\"blocks\":%zu,\"saves_flags\":%zu,\"instructions\":%zu,\"copy_bytes\":%zu,\"how\":{", s->blocks,
	       s->pushf, s->insns, s->bytes);
	for (i = 0; i < KINSTR_CACHE_NR_HOW; i++)
		printf("%s\"%s\":%zu", i ? "," : "", kinstr_cache_how__str((unsigned int)i), s->how[i]);
	printf("},\"reentries\":[");
	for (i = 0; i < kinstr_cache_fn__reentry_cnt(c); i++) {
		const struct kinstr_cache_reentry *re = kinstr_cache_fn__reentry(c, i);

		printf("%s{\"offset\":%llu,\"why\":\"%s\",\"kind\":\"%s\"}", i ? "," : "",
		       (unsigned long long)(re->addr - f->addr), kinstr_cache_why__str(re->why), re->jump ? "jump" : "int3");
	}
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

/* Plan f and print the row (or JSON object); shown and refused count the functions. */
static void plan_one(const struct kinstr_kernel *k, const struct kinstr_func *f, bool json, size_t *shown,
		     size_t *refused, int *rc)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o) };
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

int cmd_cover(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *snapshot = NULL;
	bool json = false, dry = false;
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	size_t refused = 0, shown = 0;
	int c, i, rc = CLI_OK;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': dry = true; break;
		case 'j': json = true; break;
		case 's': snapshot = optarg; break;
		case 'h': cover_usage(stdout); return CLI_OK;
		default: cover_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind == argc) {
		cover_usage(stderr);
		return CLI_USAGE;
	}
	if (!dry) {
		cli_err("cover: installing a code cache needs the module's side, not built yet; --dry-run shows the plan");
		return CLI_USAGE;
	}
	k = cli_open_kernel(snapshot, &dev);
	if (!k)
		return CLI_FAIL;
	if (json)
		printf("{\"kernel\":\"%s\",\"functions\":[", kinstr_kernel__release(k));
	else
		printf("%-36s %6s %6s %6s %7s %6s %6s %6s %9s\n", "FUNCTION", "BLOCKS", "PUSHF", "INSNS", "BYTES", "CALLS",
		       "NATIVE", "JLABEL", "REENTRY");
	for (i = optind; i < argc; i++) {
		size_t j, n = 0;

		if (!strpbrk(argv[i], "*?[,")) {
			const struct kinstr_func *f = cli_find_func(k, NULL, argv[i]);

			if (f)
				plan_one(k, f, json, &shown, &refused, &rc);
			else
				rc = CLI_FAIL;
			continue;
		}
		for (j = 0; j < kinstr_kernel__func_cnt(k); j++) {
			const struct kinstr_func *f = kinstr_kernel__func(k, j);

			if (kinstr__glob_match(argv[i], f->name)) {
				plan_one(k, f, json, &shown, &refused, &rc);
				n++;
			}
		}
		if (!n) {
			cli_err("no function matches '%s'", argv[i]);
			rc = CLI_FAIL;
		}
	}
	if (json)
		printf("],\"refused\":%zu}\n", refused);
	else
		printf("kinstr: dry run, nothing installed: %zu planned, %zu refused; REENTRY is jumps/int3s the "
		       "original would get\n", shown - refused, refused);
	cli_close_kernel(k, dev);
	return rc;
}

