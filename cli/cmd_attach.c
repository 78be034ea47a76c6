// SPDX-License-Identifier: GPL-2.0
/* kinstr attach OBJ[:PROG] SPEC...: a BPF program of kprobe type run at kinstr's probes (lib/bpf/bpf.c). */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/bpf.h>
#include <kinstr/plan.h>
#include "cli.h"

static const struct cli_opt attach_opts[] = {
	{ .common = CLI_OPT_COMMAND, .help = "run CMD, attach while it runs, exit with its status" },
	{ .common = CLI_OPT_DURATION },
	{ .common = CLI_OPT_JSON, .help = "one JSON object: the probes and the maps (on stdout alone: -c CMD's own "
					  "output goes to stderr)" },
	{ .common = CLI_OPT_DRY_RUN, .help = "load (verify) the program and show the probes; patch nothing" },
	{ .common = CLI_OPT_MAX_PROBES },
	CLI_OPTS_SCOPE,
	{ .common = CLI_OPT_CMD_ONLY },
	{ 0 },
};

static const struct cli_usage attach_usage = {
	.name = "attach", .synopsis = "[-c CMD|-d SEC] [--json] [--dry-run] OBJ[:PROG] SPEC...", .verb = "attach",
	.intro = "Run the BPF program PROG of the object file OBJ (built with clang -target bpf; the\n"
		 "object's only SEC(\"kprobe\") program when PROG is not named) at every probe of the\n"
		 "SPECs: FUNC, FUNC+0xOFF (any instruction), FUNC%return, a glob. The program gets the\n"
		 "site's struct pt_regs as a kprobe's would, and bpf_get_attach_cookie() returns the\n"
		 "index of the SPEC it was attached by (0 for the first). The kernel's verifier checks\n"
		 "the program first; its log is printed when it refuses. At the end: each probe's hits\n"
		 "and how many of them did not run the program (another tracing program was running on\n"
		 "that CPU), then the program's maps, @NAME[KEY]: VALUE (examples/README.md).\n\n",
	.opts = attach_opts, .min_args = 2, .max_args = -1,
};

/* OBJ[:PROG]: a colon after the last slash names the program. */
static void split_obj(char *arg, const char **path, const char **prog)
{
	char *c = strrchr(arg, ':');

	*path = arg;
	*prog = NULL;
	if (c && !strchr(c, '/') && c[1]) {
		*c = 0;
		*prog = c + 1;
	}
}

int cmd_attach(int argc, char **argv)
{
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_bpf_obj *obj = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	struct kinstr_kernel *k = NULL;
	struct kinstr_dev *dev = NULL;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	const char *path, *prog;
	struct cli_common co;
	uint64_t *hits = NULL, *missed = NULL;
	int i, ret;
	struct cli_run run;
	struct kinstr_why why;
	char *log = NULL;
	struct kinstr_spec *sp;

	cli_common__init(&co);
	ret = cli_opts__parse(&attach_usage, argc, argv, &co, NULL, NULL);
	if (ret != CLI_GO_ON)
		return ret;
	ret = CLI_FAIL;
	/* parsed before the program is loaded: a bad spec costs no verifier run */
	sp = cli_specs__parse(argc - optind - 1, argv + optind + 1, false);
	if (!sp)
		return CLI_USAGE;
	cli_common__plan_opts(&co, &popts);
	split_obj(argv[optind], &path, &prog);
	cli_run__init(&run, co.command, co.duration, false);
	cli_run__json(&run, co.json, NULL);
	obj = kinstr_bpf_obj__open(path, prog, &why, &log);
	if (!obj) {
		cli_err("%s", why.msg);
		if (log)
			fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
		free(log);
		free(sp);
		return CLI_FAIL;
	}
	so = (struct cli_session_opts){ .popts = &popts, .scope = co.dry ? NULL : &co, .run = &run };
	if (cli_session__open(&se, &so) != CLI_OK)
		goto out;
	k = se.k, dev = se.dev, ps = se.ps, pl = se.pl;
	for (i = optind + 1; i < argc; i++) {
		size_t first = kinstr_probeset__cnt(ps), j;

		if (cli_add_spec(pl, &sp[i - optind - 1]))
			goto out;
		for (j = first; j < kinstr_probeset__cnt(ps); j++)
			kinstr_probeset__set_bpf(ps, j, kinstr_bpf_obj__prog_fd(obj), (uint64_t)(i - optind - 1));
	}
	if (co.dry) {
		printf("program '%s' of %s: the verifier accepts it\n", kinstr_bpf_obj__prog_name(obj), path);
		cli_count__plan(ps, k);
		ret = CLI_OK;
		goto out;
	}
	hits = calloc(kinstr_probeset__cnt(ps), sizeof(*hits));
	missed = calloc(kinstr_probeset__cnt(ps), sizeof(*missed));
	if (!hits || !missed)
		goto out;
	if (!co.json)
		fprintf(stderr, "kinstr: attach %s: program '%s' at %zu probe%s%s\n", path, kinstr_bpf_obj__prog_name(obj),
			kinstr_probeset__cnt(ps), kinstr_probeset__cnt(ps) == 1 ? "" : "s",
			co.command || co.duration ? "" : "; Ctrl-C to stop");
	if (cli_run__start(&run, ps))
		goto out;
	cli_run__wait(&run, 0.2, NULL, NULL);
	cli_run__stop(&run);
	if (kinstr_probeset__counts_missed(ps, hits, missed)) {
		cli_err("cannot read the counters: %s", strerror(errno));
		goto out;
	}
	/* out, every handler finished: the maps hold everything the program wrote */
	kinstr_probeset__remove(ps);
	kinstr_dev__sync(dev);
	cli_attach__print(ps, hits, missed, obj, co.json, cli_now() - run.t0, run.status);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(hits);
	free(missed);
	cli_session__close(&se);
	kinstr_bpf_obj__close(obj);
	free(sp);
	return ret;
}
