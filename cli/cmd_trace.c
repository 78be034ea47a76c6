// SPDX-License-Identifier: GPL-2.0
/* kinstr trace -o DIR SPEC[(VALUE,...)]...: record every hit, with values, as a CTF trace. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kinstr/btf.h>
#include <kinstr/x86.h>
#include <kinstr/ctf.h>
#include <kinstr/plan.h>
#include <kinstr/record.h>
#include <kinstr/trace.h>
#include "cli.h"

#define MAX_EVENTS 4096


static void trace_usage(FILE *f)
{
	fprintf(f, "usage: kinstr trace [options] SPEC[(VALUE,...)]...\n\n"
		   "Record every hit of the given probes, with time, CPU, pid/tid, comm and the\n"
		   "requested values, into a CTF 1.8 trace directory (babeltrace2 DIR reads it;\n"
		   "'kinstr report DIR' summarises it). SPEC is as for 'kinstr count':\n"
		   "  FUNC, FUNC+0xOFF, FUNC%%return (every return site), GLOB ('vfs_*')\n"
		   "VALUE is one of\n"
		   "  NAME            an argument of FUNC by name (from BTF; at FUNC's entry only)\n"
		   "  %%REG            a register at the site: %%rax .. %%r15, %%rip\n"
		   "  ret             the return value (at FUNC%%return: %%rax)\n"
		   "  +OFF(X)         8 bytes of memory at X + OFF (X: NAME or %%REG; -OFF too),\n"
		   "                  read fault-safely (a fault records 0)\n"
		   "  FIELD=VALUE     name the value's field in the trace (default: from VALUE)\n"
		   "  VALUE:TYPE      u8 u16 u32 u64 s8 s16 s32 s64 x64 (hex), or string: the value\n"
		   "                  is a char pointer (for +OFF(X), the pointer stored there);\n"
		   "                  string[N] keeps at most N-1 chars (default %d)\n"
		   "e.g. kinstr trace -o t 'vfs_read(file,count)' 'vfs_read%%return'\n\n"
		   "  -o, --output DIR      the trace directory (must not exist or be empty;\n"
		   "                        default kinstr-trace-YYYYmmdd-HHMMSS)\n"
		   "  -d, --duration SEC    trace for SEC seconds (> 0); the recording stops within\n"
		   "                        a sub-buffer's work of SEC, however fast events come\n"
		   "  -c, --command CMD     run CMD, trace while it runs, exit with its status\n"
		   "      --live            also print each event as text while recording\n"
		   "      --buffer-size N   bytes of buffer per CPU (default 1M; K/M/G suffixes)\n"
		   "      --subbuf-size N   bytes per sub-buffer (default 64K; a power of two >= 4K)\n"
		   "      --max-size SIZE   cap the trace's stream files at SIZE bytes (K/M/G suffixes,\n"
		   "                        at least 64K; default: the smaller of 1G and half the free\n"
		   "                        space of DIR's file system); events past it are counted\n"
		   "                        as lost, as babeltrace2's discarded count shows\n"
		   "      --overwrite       flight recorder: keep the newest events, overwrite the\n"
		   "                        oldest (default: discard new events when full)\n"
		   "      --clock CLOCK     mono (default): CLOCK_MONOTONIC, one time line for all\n"
		   "                        CPUs; local: the kernel's local_clock() (ftrace's \"local\"),\n"
		   "                        cheaper where the clocksource is slow to read (HPET in an\n"
		   "                        emulator), as synchronised across CPUs as the TSCs\n"
		   "  -k, --keep-going      a SPEC that is refused (or names nothing) is reported and left\n"
		   "                        out; the others are traced (it fails if every one is)\n"
		   CLI_HELP_MAX_PROBES("    ")
		   "      --no-ftrace       where only an int3 fits after a FUNC's ftrace NOP, record its\n"
		   "                        entry with that int3, not with an ftrace direct call from the\n"
		   "                        NOP (the default, as for 'kinstr count'; %%rip then reads\n"
		   "                        FUNC's first byte, the NOP, not the instruction after it)\n"
		   "Without -d or -c, trace until interrupted (Ctrl-C). At the stop (SEC, Ctrl-C or\n"
		   "SIGTERM, CMD's end) the probes are removed first, then only what the buffers\n"
		   "already hold is written. At the end it prints the events recorded and lost per\n"
		   "CPU. Interrupted during -c CMD, CMD gets the signal too and kinstr exits 130\n"
		   "(SIGINT) or 143 (SIGTERM).\n", KINSTR_VALUE_STR_DEFAULT);
}

/* Between two sub-buffers: a deadline, a signal, the command's end (not only when the buffers are empty). */
static bool trace_should_stop(void *run)
{
	return cli_run__done(run);
}

int cmd_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "command", required_argument, NULL, 'c' },
		{ "live", no_argument, NULL, 'l' },
		{ "buffer-size", required_argument, NULL, 'B' },
		{ "subbuf-size", required_argument, NULL, 'S' },
		{ "overwrite", no_argument, NULL, 'O' },
		{ "no-ftrace", no_argument, NULL, 'N' },
		{ "max-probes", required_argument, NULL, 'P' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "clock", required_argument, NULL, 'C' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = NULL, *command = NULL;
	char err[512], specs_env[1024] = "";
	double duration = 0;
	uint32_t bufsize = 1 << 20, subbuf = 64 << 10;
	unsigned long long v, max_size = 0;
	bool overwrite = false, live = false, keep = false;
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_plan *pl = NULL;
	struct kinstr_trace_event *ev = NULL;
	unsigned int nev = 0;
	struct kinstr_trace_opts topts = { .sz = sizeof(topts) };
	struct cli_run run;
	struct kinstr_recording_opts ropts = { .sz = sizeof(ropts), .trace = &topts, .should_stop = trace_should_stop,
					       .ctx = &run };
	struct kinstr_recording *rec = NULL;
	struct kinstr_rec_cpu *cpus = NULL;
	struct kinstr_trace_stats *st = NULL;
	struct kinstr_ctf_env env[1];
	struct kinstr_probeset *ps = NULL;
	struct kinstr_btf *btf;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct kinstr_dev *dev;
	int c, i, ret = CLI_FAIL, r;
	uint64_t missed = 0;
	unsigned int nr_cpus;

	while ((c = getopt_long(argc, argv, "o:d:c:kh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dir = optarg; break;
		case 'd':
			if (cli_parse_seconds("--duration", optarg, &duration))
				return CLI_USAGE;
			break;
		case 'c': command = optarg; break;
		case 'l': live = true; break;
		case 'B':
			if (cli_parse_bytes("--buffer-size", optarg, 8 << 10, UINT32_MAX, &v))
				return CLI_USAGE;
			bufsize = (uint32_t)v;
			break;
		case 'S':
			if (cli_parse_bytes("--subbuf-size", optarg, 4 << 10, 1u << 30, &v))
				return CLI_USAGE;
			subbuf = (uint32_t)v;
			break;
		case 'M':
			if (cli_parse_bytes("--max-size", optarg, 64 << 10, 1ull << 50, &max_size))
				return CLI_USAGE;
			break;
		case 'O': overwrite = true; break;
		case 'N': popts.no_ftrace = true; break;
		case 'P':
			if (cli_parse_max_probes(optarg, &popts.max_probes))
				return CLI_USAGE;
			break;
		case 'k': keep = true; break;
		case 'C':
			if (cli_parse_clock(optarg, &topts.local_clock))
				return CLI_USAGE;
			break;
		case 'h': trace_usage(stdout); return CLI_OK;
		default: trace_usage(stderr); return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		trace_usage(stderr);
		return CLI_USAGE;
	}
	for (i = optind; i < argc; i++) {	/* the specs' syntax before anything is opened */
		struct kinstr_spec sp;

		if (kinstr_spec__parse_trace(argv[i], &sp, err, sizeof(err))) {
			cli_err("%s", err);
			return CLI_USAGE;
		}
	}
	r = kinstr_trace_opts__geometry(&topts, bufsize, subbuf);
	if (r) {
		if (r == -EDOM)
			cli_err("--subbuf-size: a power of two of at least 4K");
		else
			cli_err("--buffer-size: 2 to 256 sub-buffers of %u bytes per CPU", subbuf);
		return CLI_USAGE;
	}
	topts.overwrite = overwrite;
	cli_run__init(&run, command, duration, false);
	ev = calloc(MAX_EVENTS, sizeof(*ev));
	if (!ev)
		return CLI_FAIL;
	so = (struct cli_session_opts){ .popts = &popts };
	if (cli_session__open(&se, &so) != CLI_OK) {
		free(ev);
		return CLI_FAIL;
	}
	dev = se.dev, ps = se.ps, pl = se.pl;
	btf = kinstr_btf__open(NULL);	/* NULL: registers only */
	for (i = optind; i < argc; i++) {
		if (cli_add_trace(pl, argv[i], btf, ev, &nev, MAX_EVENTS)) {
			if (keep)
				continue;
			goto out;
		}
		snprintf(specs_env + strlen(specs_env), sizeof(specs_env) - strlen(specs_env), "%s%s",
			 specs_env[0] ? " " : "", argv[i]);
	}
	if (!kinstr_probeset__cnt(ps)) {	/* --keep-going: each one said why */
		cli_err("no spec left to trace");
		goto out;
	}
	env[0] = (struct kinstr_ctf_env){ "kinstr_probes", specs_env };
	ropts.env = env;
	ropts.env_cnt = 1;
	ropts.max_size = max_size;
	ropts.on_event = live ? cli_trace__event : NULL;
	rec = kinstr_recording__new(dev, dir, ev, nev, &ropts, err, sizeof(err));
	if (!rec) {
		cli_err("%s", err);
		goto out;
	}
	dir = kinstr_recording__dir(rec);
	cli_catch_signals();
	if (kinstr_probeset__install(ps, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	fprintf(stderr, "kinstr: tracing %zu probes (%u events) into %s%s\n", kinstr_probeset__cnt(ps), nev, dir,
		command || duration > 0 ? "" : "; Ctrl-C to stop");
	cli_run__begin(&run);
	if (command && cli_run__spawn(&run))
		goto out;
	r = kinstr_recording__run(rec, live, command ? 20 : 100, err, sizeof(err));
	cli_trace__capped(rec);
	if (r) {
		cli_err("%s", err);
		goto out;
	}
	missed = kinstr_probeset__missed_total(ps);
	cli_run__stop(&run);
	/* probes out, every handler finished (quiescence), then what the buffers already hold */
	kinstr_probeset__remove(ps);
	kinstr_dev__sync(dev);
	nr_cpus = kinstr_recording__nr_cpus(rec);
	cpus = calloc(nr_cpus, sizeof(*cpus));
	st = calloc(nr_cpus, sizeof(*st));
	if (!cpus || !st)
		goto out;
	r = kinstr_recording__drain(rec, cpus, st, err, sizeof(err));
	cli_trace__capped(rec);
	if (r || kinstr_recording__close(rec, err, sizeof(err))) {
		cli_err("%s", err);
		goto out;
	}
	cli_trace__summary(cpus, st, nr_cpus, dir, missed);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	kinstr_recording__free(rec);
	cli_session__close(&se);	/* removes the probes */
	kinstr_btf__close(btf);
	free(ev);
	free(cpus);
	free(st);
	return ret;
}
