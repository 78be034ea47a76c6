// SPDX-License-Identifier: GPL-2.0
/*
 * The options several subcommands share, declared once: their names, letters, arguments, checks
 * and help; and one parser and one --help printer for every subcommand, drawn from its table of
 * shared and own options (so that --help lists exactly what the parser takes).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/pred.h>
#include "cli.h"

/* The shared options, by CLI_OPT_* (a bit each: the index is its bit's position). */
static const struct cli_opt common[] = {
	[0] = { CLI_OPT_DURATION, "duration", 'd', "SEC",
		"%V for SEC seconds (> 0; without -c or -d: until Ctrl-C)" },
	[1] = { CLI_OPT_COMMAND, "command", 'c', "CMD",
		"run CMD, %V while it runs, exit with its status (plain words are exec'ed directly; anything "
		"with shell syntax runs under /bin/sh -c)" },
	[2] = { CLI_OPT_INTERVAL, "interval", 'i', "SEC", "refresh the live table every SEC seconds (default 1)" },
	[3] = { CLI_OPT_KEEP_GOING, "keep-going", 'k', NULL,
		"a SPEC that is refused (or names nothing) is reported and left out; the others are %P (it "
		"fails if every one is)" },
	[4] = { CLI_OPT_JSON, "json", CLI_KEY_JSON, NULL,
		"print the totals as one JSON object (on stdout alone: -c CMD's own output goes to stderr)" },
	[5] = { CLI_OPT_OUTPUT, "output", 'o', "FILE", "write the totals to FILE, not stdout (which -c CMD shares)" },
	[6] = { CLI_OPT_DRY_RUN, "dry-run", CLI_KEY_DRY_RUN, NULL, "show what would be patched and why; touch nothing" },
	[7] = { CLI_OPT_MAX_PROBES, "max-probes", CLI_KEY_MAX_PROBES, "N",
		"a glob may take up to N probes (default 4096, at most 65536): until its jumps are in, each "
		"probe is an int3" },
	[8] = { CLI_OPT_NO_FTRACE, "no-ftrace", CLI_KEY_NO_FTRACE, NULL,
		"where only an int3 fits after a function's ftrace NOP, %V its entry with that int3, not with "
		"an ftrace direct call from the NOP (the default; as cheap as a jump)" },
	[9] = { CLI_OPT_METRICS, "metrics", CLI_KEY_METRICS, "ADDR:PORT",
		"serve the results to Prometheus while the run goes on, as 'kinstr serve' does (GET /metrics; "
		"e.g. " CLI_METRICS_DEFAULT ")" },
	[10] = { CLI_OPT_SNAPSHOT, "snapshot", CLI_KEY_SNAPSHOT, "FILE",
		 "analyse a snapshot ('kinstr snapshot') instead of the running kernel" },
	[11] = { CLI_OPT_PID, "pid", 'p', "PID[,PID]",
		 "%V only while a thread of process PID runs (interrupts included; repeatable; each must exist)" },
	[12] = { CLI_OPT_TID, "tid", CLI_KEY_TID, "TID[,TID]", "%V only while thread TID runs (with --pid: either)" },
	[13] = { CLI_OPT_COMM, "comm", CLI_KEY_COMM, "NAME",
		 "%V only while a thread whose comm is exactly NAME runs (decided again when it renames itself, "
		 "e.g. at exec)" },
	[14] = { CLI_OPT_CGROUP, "cgroup", CLI_KEY_CGROUP, "PATH",
		 "%V only while a thread of cgroup v2 PATH (absolute, or under /sys/fs/cgroup) or a cgroup "
		 "below it runs" },
	[15] = { CLI_OPT_CPU, "cpu", CLI_KEY_CPU, "LIST", "%V only on these CPUs (e.g. 0,2-3)" },
	[16] = { CLI_OPT_FOLLOW, "follow", CLI_KEY_FOLLOW, NULL,
		 "with --pid: a process that one of them forks from now on is in too" },
	[17] = { CLI_OPT_SELF, "self", CLI_KEY_SELF, NULL,
		 "%V kinstr's own process too (by default what kinstr does to read its results is never in them)" },
	[18] = { CLI_OPT_WHERE, "where", CLI_KEY_WHERE, "EXPR",
		 "%V only hits where EXPR holds, at every SPEC (as 'SPEC(VALUE,...) if EXPR' does for one; "
		 "both: both must hold), decided in the module before anything is recorded: EXPR compares "
		 "the spec's VALUEs by name, pid, tid, cpu and comm with constants (count > 4096, ret < 0, "
		 "comm == \"nginx\"; strings with == and != only; a number signed where its type is: "
		 "s8..s64, or a signed argument or ret by BTF; else unsigned), joined by &&, || and ! with "
		 "parentheses; a hit it rejects is counted as filtered, not as a hit" },
	[19] = { CLI_OPT_CMD_ONLY, "cmd-only", CLI_KEY_CMD_ONLY, NULL,
		 "with -c CMD: %V only while CMD's process or one it forks from then on runs (as --pid of "
		 "CMD --follow, from CMD's first instruction: CMD waits until the probes are in)" },
};
#define NCOMMON (sizeof(common) / sizeof(common[0]))

enum cli_help_form cli_help_form = CLI_HELP_TEXT;
void (*cli_help_print)(const struct cli_usage *u, FILE *f);
#define MAX_OPTS 64

static const struct cli_opt *common_opt(unsigned int bit)
{
	unsigned int i;

	for (i = 0; i < NCOMMON; i++)
		if (common[i].common == bit)
			return &common[i];
	return NULL;
}

struct cli_opt cli_opts__resolve(const struct cli_opt *o)
{
	struct cli_opt r;
	const struct cli_opt *c;

	if (!o->common || !(c = common_opt(o->common)))
		return *o;
	r = *c;
	if (o->key)
		r.key = o->key;
	if (o->arg)
		r.arg = o->arg;
	if (o->help)
		r.help = o->help;
	return r;
}

void cli_common__init(struct cli_common *co)
{
	memset(co, 0, sizeof(*co));
	co->interval = 1;
}

void cli_common__plan_opts(const struct cli_common *co, struct kinstr_plan_opts *popts)
{
	if (co->max_probes)
		popts->max_probes = co->max_probes;
	popts->no_ftrace = co->no_ftrace;
	popts->where = co->where;
}

/*
 * LIST of ids (NAME: the option, WHAT: "process", "thread") appended to ids[max], each alive: 0, or
 * CLI_USAGE / CLI_FAIL (printed).
 */
static int scope_ids(const char *name, const char *what, const char *arg, uint32_t *ids, size_t *n, size_t max)
{
	const char *p = arg;

	do {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || (*end && *end != ',') || errno || v <= 0 || v > INT32_MAX) {
			cli_err("%s: not a %s id: '%s'", name, what, arg);
			return CLI_USAGE;
		}
		if (kill((pid_t)v, 0) && errno == ESRCH) {
			cli_err("%s: no %s %ld", name, what, v);
			return CLI_FAIL;
		}
		if (*n == max) {
			cli_err("%s: more than %zu ids", name, max);
			return CLI_USAGE;
		}
		ids[(*n)++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/* --cpu LIST (0,2-3) into the scope's bitmap. */
static int scope_cpus(struct cli_scope *sc, const char *arg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	const char *p = arg;

	do {
		char *end;
		unsigned long lo, hi, c;

		errno = 0;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (end != p && *end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
		}
		if (end == p || (*end && *end != ',') || errno || hi < lo || !isdigit((unsigned char)*arg)) {
			cli_err("--cpu: not a list of CPUs (e.g. 0,2-3): '%s'", arg);
			return CLI_USAGE;
		}
		if (hi >= CLI_SCOPE_MAX_CPUS || (ncpu > 0 && hi >= (unsigned long)ncpu)) {
			cli_err("--cpu: CPU %lu: this machine has CPUs 0-%ld", hi, ncpu - 1);
			return CLI_USAGE;
		}
		for (c = lo; c <= hi; c++)
			sc->cpus[c / 64] |= 1ULL << (c % 64);
		if (hi + 1 > sc->ncpus)
			sc->ncpus = hi + 1;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

static int scope_set(struct cli_scope *sc, unsigned int bit, const char *arg)
{
	switch (bit) {
	case CLI_OPT_PID:
		return scope_ids("--pid", "process", arg, sc->pids, &sc->npids, CLI_SCOPE_MAX_PIDS);
	case CLI_OPT_TID:
		return scope_ids("--tid", "thread", arg, sc->tids, &sc->ntids, CLI_SCOPE_MAX_TIDS);
	case CLI_OPT_CPU:
		return scope_cpus(sc, arg);
	case CLI_OPT_COMM:
		if (!*arg || strlen(arg) >= 16) {
			cli_err("--comm: '%s': a comm is 1 to 15 bytes", arg);
			return CLI_USAGE;
		}
		sc->comm = arg;
		return 0;
	case CLI_OPT_CGROUP:
		if (*arg != '/') {
			snprintf(sc->cgroup_path, sizeof(sc->cgroup_path), "/sys/fs/cgroup/%s", arg);
			arg = sc->cgroup_path;
		}
		sc->cgroup = arg;
		return 0;
	case CLI_OPT_FOLLOW: sc->follow = true; return 0;
	case CLI_OPT_SELF: sc->self = true; return 0;
	case CLI_OPT_CMD_ONLY: sc->cmd_only = true; return 0;
	}
	return 0;
}

void cli_common__scope_opts(const struct cli_common *co, struct kinstr_scope_opts *o)
{
	const struct cli_scope *sc = &co->scope;

	*o = (struct kinstr_scope_opts){ .sz = sizeof(*o), .self = sc->self, .follow = sc->follow,
					 .pids = sc->npids ? sc->pids : NULL, .npids = sc->npids,
					 .tids = sc->ntids ? sc->tids : NULL, .ntids = sc->ntids, .comm = sc->comm,
					 .cgroup = sc->cgroup, .cpus = sc->ncpus ? sc->cpus : NULL, .ncpus = sc->ncpus };
}

/* A shared option's value into co: 0, or CLI_USAGE (printed). */
static int common_set(struct cli_common *co, unsigned int bit, const char *arg)
{
	int ret;

	if (bit & CLI_OPT_SCOPE) {
		ret = scope_set(&co->scope, bit, arg);
		if (!ret)
			co->given |= bit;
		return ret;
	}
	switch (bit) {
	case CLI_OPT_DURATION:
		return cli_parse_seconds("--duration", arg, &co->duration) ? CLI_USAGE : 0;
	case CLI_OPT_INTERVAL:
		return cli_parse_seconds("--interval", arg, &co->interval) ? CLI_USAGE : 0;
	case CLI_OPT_MAX_PROBES:
		return cli_parse_max_probes(arg, &co->max_probes) ? CLI_USAGE : 0;
	case CLI_OPT_COMMAND: co->command = arg; break;
	case CLI_OPT_OUTPUT: co->output = arg; break;
	case CLI_OPT_METRICS: co->metrics_at = arg; break;
	case CLI_OPT_SNAPSHOT: co->snapshot = arg; break;
	case CLI_OPT_KEEP_GOING: co->keep = true; break;
	case CLI_OPT_JSON: co->json = true; break;
	case CLI_OPT_DRY_RUN: co->dry = true; break;
	case CLI_OPT_NO_FTRACE: co->no_ftrace = true; break;
	case CLI_OPT_WHERE: {
		struct kinstr_pred syntax;
		struct kinstr_why why;

		/* the syntax now; the names when each spec's values are known */
		if (kinstr_pred__compile(arg, NULL, 0, &syntax, &why)) {
			cli_err("--where '%s': %s", arg, why.msg);
			return CLI_USAGE;
		}
		co->where = arg;
		break;
	}
	}
	co->given |= bit;
	return 0;
}

/*
 * The getopt table as built (lo[n], help last), for completion scripts: the synopsis, then a
 * line per option, --NAME[=ARG] [-X]; ARG the table's name for it, as --help shows it.
 */
static void options_print(const struct cli_usage *u, const struct option *lo, size_t n)
{
	const char *s;
	size_t i, j;

	/* the synopsis on one line (the man page's operand kinds for the script: SPEC, FUNC, FILE...) */
	printf("usage: kinstr %s", u->name);
	for (s = u->synopsis; *s; s += strspn(s, " \n")) {
		size_t w = strcspn(s, " \n");

		printf(" %.*s", (int)w, s);
		s += w;
	}
	putchar('\n');
	for (i = 0; i < n; i++) {
		const char *arg = NULL;

		for (j = 0; lo[i].has_arg && (u->opts[j].name || u->opts[j].common); j++) {
			struct cli_opt o = cli_opts__resolve(&u->opts[j]);

			if (!strcmp(o.name, lo[i].name))
				arg = o.arg;
		}
		printf("--%s", lo[i].name);
		if (lo[i].has_arg)
			printf("=%s", arg ? arg : "ARG");
		if (lo[i].val > 0 && lo[i].val < 128)
			printf(" -%c", lo[i].val);
		putchar('\n');
	}
}

int cli_opts__parse(const struct cli_usage *u, int argc, char **argv, struct cli_common *co,
		    int (*own)(void *ctx, int key, const char *arg), void *ctx)
{
	struct option lo[MAX_OPTS + 2];
	unsigned int bits[MAX_OPTS + 2] = { 0 };
	char shorts[2 * MAX_OPTS + 3] = "h", *sp = shorts + 1;
	size_t n = 0, i;
	int c, idx, ret;

	for (i = 0; u->opts[i].name || u->opts[i].common; i++) {
		struct cli_opt o = cli_opts__resolve(&u->opts[i]);

		if (n == MAX_OPTS) {
			cli_err("%s: more than %d options", u->name, MAX_OPTS);	/* a bug of the table */
			return CLI_FAIL;
		}
		lo[n] = (struct option){ o.name, o.arg ? required_argument : no_argument, NULL, o.key };
		bits[n++] = u->opts[i].common;
		if (o.key > 0 && o.key < 128) {
			*sp++ = (char)o.key;
			if (o.arg)
				*sp++ = ':';
		}
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ 0 };
	*sp = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, &idx)) != -1) {
		if (c == 'h' && cli_help_form == CLI_HELP_OPTIONS) {
			options_print(u, lo, n);
			return CLI_OK;
		}
		if (c == 'h') {
			cli_opts__usage(u, stdout);
			return CLI_OK;
		}
		for (i = 0; i + 1 < n && lo[i].val != c; i++)
			;
		if (c == '?' || i + 1 == n) {
			cli_opts__usage(u, stderr);
			return CLI_USAGE;
		}
		ret = bits[i] ? common_set(co, bits[i], optarg) : own ? own(ctx, c, optarg) : 0;
		if (ret)
			return ret;
	}
	if (co->scope.cmd_only && (!co->command || co->scope.npids || co->scope.ntids)) {
		cli_err("--cmd-only: %s", !co->command ? "restricts to -c CMD's process: give -c CMD" :
			"-c CMD names the process itself: not with --pid or --tid");
		return CLI_USAGE;
	}
	if (co->scope.follow && !co->scope.npids) {
		cli_err("--follow: follows the processes --pid names: give --pid");
		return CLI_USAGE;
	}
	if (argc - optind < u->min_args || (u->max_args >= 0 && argc - optind > u->max_args)) {
		cli_opts__usage(u, stderr);
		return CLI_USAGE;
	}
	return CLI_GO_ON;
}

void cli_opts__fill(char *buf, size_t len, const char *text, const struct cli_usage *u)
{
	size_t o = 0;

	for (; *text && o + 1 < len; text++) {
		const char *w = NULL;

		if (text[0] == '%' && (text[1] == 'V' || text[1] == 'P'))
			w = text[1] == 'V' ? u->verb : u->done;
		if (!w) {
			buf[o++] = *text;
			continue;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s", w ? w : "");
		if (o >= len)
			o = len - 1;
		text++;
	}
	buf[o] = 0;
}

#define HELP_COL_MIN 20
#define HELP_COL_MAX 24
#define HELP_WIDTH 80

/* words of text from column col (the cursor at column at), wrapped at HELP_WIDTH; '\n' breaks a line */
static void wrap(FILE *f, const char *text, int col, int at)
{
	bool first = true;	/* of its line */

	while (*text) {
		size_t w = strcspn(text, " \n");

		if (!first && at + 1 + (int)w > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		} else if (!first) {
			fputc(' ', f);
			at++;
		}
		fprintf(f, "%.*s", (int)w, text);
		at += (int)w;
		first = false;
		text += w;
		if (*text == '\n') {
			fprintf(f, "\n%*s", col, "");
			at = col;
			first = true;
		}
		text += strspn(text, " \n");
	}
	fputc('\n', f);
}

/* "  -d, --duration SEC": its width */
static int left_len(const struct cli_opt *o)
{
	return 8 + (int)strlen(o->name) + (o->arg ? 1 + (int)strlen(o->arg) : 0);
}

void cli_opts__usage(const struct cli_usage *u, FILE *f)
{
	int col = HELP_COL_MIN;
	char buf[1024];
	size_t i;

	if (cli_help_form == CLI_HELP_PRINT && cli_help_print) {
		cli_help_print(u, f);
		return;
	}
	/* the text's column: after the longest option that leaves it room, the longer ones on their own */
	for (i = 0; u->opts[i].name || u->opts[i].common; i++) {
		struct cli_opt o = cli_opts__resolve(&u->opts[i]);

		if (left_len(&o) + 2 <= HELP_COL_MAX && left_len(&o) + 2 > col)
			col = left_len(&o) + 2;
	}

	fprintf(f, "usage: kinstr %s %s\n\n", u->name, u->synopsis);
	if (u->intro)
		fputs(u->intro, f);
	for (i = 0; u->opts[i].name || u->opts[i].common; i++) {
		struct cli_opt o = cli_opts__resolve(&u->opts[i]);
		int n;

		if (o.key > 0 && o.key < 128)
			n = fprintf(f, "  -%c, --%s", o.key, o.name);
		else
			n = fprintf(f, "      --%s", o.name);
		if (o.arg)
			n += fprintf(f, " %s", o.arg);
		if (n + 2 > col) {	/* a long one: its text two spaces after it */
			fputs("  ", f);
			n += 2;
		} else {
			fprintf(f, "%*s", col - n, "");
			n = col;
		}
		cli_opts__fill(buf, sizeof(buf), o.help ? o.help : "", u);
		wrap(f, buf, col, n);
	}
	if (u->outro)
		fputs(u->outro, f);
	if (u->examples) {
		const char *l, *e;

		fputs("\nexamples:\n", f);
		for (l = u->examples; *l; l = *e ? e + 1 : e) {
			e = l + strcspn(l, "\n");
			if (!strncmp(l, "kinstr ", 7)) {
				fprintf(f, "  %.*s\n", (int)(e - l), l);
			} else {	/* what the command above does */
				snprintf(buf, sizeof(buf), "%.*s", (int)(e - l), l);
				fprintf(f, "      ");
				wrap(f, buf, 6, 6);
			}
		}
	}
}
