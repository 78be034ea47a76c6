// SPDX-License-Identifier: GPL-2.0
/* kinstr attach OBJ[:PROG] SPEC...: a BPF program of kprobe type run at kinstr's probes (lib/bpf/bpf.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/bpf.h>
#include <kinstr/plan.h>
#include "cli.h"

static void attach_usage(FILE *f)
{
	fprintf(f, "usage: kinstr attach [-c CMD|-d SEC] [--json] [--dry-run] OBJ[:PROG] SPEC...\n\n"
		   "Run the BPF program PROG of the object file OBJ (built with clang -target bpf; the\n"
		   "object's only SEC(\"kprobe\") program when PROG is not named) at every probe of the\n"
		   "SPECs: FUNC, FUNC+0xOFF (any instruction), FUNC%%return, a glob. The program gets the\n"
		   "site's struct pt_regs as a kprobe's would, and bpf_get_attach_cookie() returns the\n"
		   "index of the SPEC it was attached by (0 for the first). The kernel's verifier checks\n"
		   "the program first; its log is printed when it refuses. At the end: each probe's hits\n"
		   "and how many of them did not run the program (another tracing program was running on\n"
		   "that CPU), then the program's maps, @NAME[KEY]: VALUE (examples/README.md).\n\n"
		   "  -c, --command CMD   run CMD, attach while it runs, exit with its status\n"
		   "  -d, --duration SEC  attach for SEC seconds (without -c or -d: until Ctrl-C)\n"
		   "      --json          one JSON object: the probes and the maps\n"
		   "                      (on stdout alone: -c CMD's own output goes to stderr)\n"
		   "      --dry-run       load (verify) the program and show the probes; patch nothing\n"
		   CLI_HELP_MAX_PROBES("    "));
}

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
	static const struct option opts[] = {
		{ "command", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "max-probes", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_bpf_obj *obj = NULL;
	struct kinstr_probeset *ps = NULL;
	struct kinstr_plan *pl = NULL;
	struct kinstr_kernel *k = NULL;
	struct kinstr_dev *dev = NULL;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	const char *command = NULL, *path, *prog;
	uint64_t *hits = NULL, *missed = NULL;
	double duration = 0;
	bool json = false, dry = false;
	int c, i, ret = CLI_FAIL;
	struct cli_run run;
	char err[512], *log = NULL;

	while ((c = getopt_long(argc, argv, "c:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': command = optarg; break;
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				return CLI_USAGE;
			break;
		case 'j': json = true; break;
		case 'n': dry = true; break;
		case 'M':
			if (cli_parse_max_probes(optarg, &popts.max_probes))
				return CLI_USAGE;
			break;
		case 'h': attach_usage(stdout); return CLI_OK;
		default: attach_usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind < 2) {
		attach_usage(stderr);
		return CLI_USAGE;
	}
	for (i = optind + 1; i < argc; i++) {	/* the specs' syntax before anything is opened */
		struct kinstr_spec sp;

		if (kinstr_spec__parse(argv[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_USAGE;
		}
	}
	split_obj(argv[optind], &path, &prog);
	cli_run__init(&run, command, duration, false);
	cli_run__json(&run, json, NULL);
	obj = kinstr_bpf_obj__open(path, prog, err, sizeof(err), &log);
	if (!obj) {
		cli_err("%s", err);
		if (log)
			fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
		free(log);
		return CLI_FAIL;
	}
	so = (struct cli_session_opts){ .popts = &popts };
	if (cli_session__open(&se, &so) != CLI_OK)
		goto out;
	k = se.k, dev = se.dev, ps = se.ps, pl = se.pl;
	for (i = optind + 1; i < argc; i++) {
		size_t first = kinstr_probeset__cnt(ps), j;

		if (cli_add_spec(pl, argv[i]))
			goto out;
		for (j = first; j < kinstr_probeset__cnt(ps); j++)
			kinstr_probeset__set_bpf(ps, j, kinstr_bpf_obj__prog_fd(obj), (uint64_t)(i - optind - 1));
	}
	if (dry) {
		printf("program '%s' of %s: the verifier accepts it\n", kinstr_bpf_obj__prog_name(obj), path);
		cli_count__plan(ps, k);
		ret = CLI_OK;
		goto out;
	}
	hits = calloc(kinstr_probeset__cnt(ps), sizeof(*hits));
	missed = calloc(kinstr_probeset__cnt(ps), sizeof(*missed));
	if (!hits || !missed)
		goto out;
	if (!json)
		fprintf(stderr, "kinstr: attach %s: program '%s' at %zu probe%s%s\n", path, kinstr_bpf_obj__prog_name(obj),
			kinstr_probeset__cnt(ps), kinstr_probeset__cnt(ps) == 1 ? "" : "s",
			command || duration ? "" : "; Ctrl-C to stop");
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
	cli_attach__print(ps, hits, missed, obj, json, cli_now() - run.t0, run.status);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	free(hits);
	free(missed);
	cli_session__close(&se);
	kinstr_bpf_obj__close(obj);
	return ret;
}
