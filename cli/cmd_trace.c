// SPDX-License-Identifier: GPL-2.0
/* kinstr trace -o DIR SPEC[(VALUE,...)]...: record every hit, with values, as a CTF trace. */
#include <errno.h>
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


#define STR_(x) #x
#define STR(x) STR_(x)

enum { O_LIVE = CLI_KEY_OWN, O_BUFFER_SIZE, O_SUBBUF_SIZE, O_MAX_SIZE, O_OVERWRITE, O_CLOCK, O_RELAYD, O_RELAYD_SESSION };

static const struct cli_opt trace_opts[] = {
	{ .common = CLI_OPT_OUTPUT, .arg = "DIR", .help = "the trace directory (must not exist or be empty; default "
							  "kinstr-trace-YYYYmmdd-HHMMSS)" },
	{ .common = CLI_OPT_DURATION, .help = "trace for SEC seconds (> 0); the recording stops within a sub-buffer's "
					      "work of SEC, however fast events come" },
	{ .common = CLI_OPT_COMMAND, .help = "run CMD, trace while it runs, exit with its status" },
	{ 0, "live", O_LIVE, NULL, "also print each event as text while recording" },
	{ 0, "relayd", O_RELAYD, "HOST[:PORT]", "stream the trace live to the lttng-relayd (lttng-tools 2.11+) at HOST, "
						 "control port PORT (default 5342; its data port is PORT+1, or give "
						 "HOST:PORT:DATAPORT): 'babeltrace2 --input-format=lttng-live "
						 "net://HOST/host/HOSTNAME/SESSION' "
						 "shows the events as they come, and the relay's output folder holds the "
						 "trace; with -o DIR as well, DIR gets the same trace, else no folder is "
						 "written here. If the relay goes away, the recording stops with an error "
						 "(what it received stays)" },
	{ 0, "relayd-session", O_RELAYD_SESSION, "NAME", "the relay session's name (default "
							   "kinstr-YYYYmmdd-HHMMSS; the relay files it under "
							   "HOSTNAME/NAME-YYYYmmdd-HHMMSS)" },
	{ 0, "buffer-size", O_BUFFER_SIZE, "N", "bytes of buffer per CPU (default 1M; K/M/G suffixes)" },
	{ 0, "subbuf-size", O_SUBBUF_SIZE, "N", "bytes per sub-buffer (default 64K; a power of two >= 4K)" },
	{ 0, "max-size", O_MAX_SIZE, "SIZE", "cap the trace's stream files at SIZE bytes (K/M/G suffixes, at least "
					     "64K; default: the smaller of 1G and half the free space of DIR's file "
					     "system); events past it are counted as lost, as babeltrace2's discarded "
					     "count shows" },
	{ 0, "overwrite", O_OVERWRITE, NULL, "flight recorder: keep the newest events, overwrite the oldest (default: "
					     "discard new events when full)" },
	{ 0, "clock", O_CLOCK, "CLOCK", "mono (default): CLOCK_MONOTONIC, one time line for all CPUs; local: the "
					"kernel's local_clock() (ftrace's \"local\"), cheaper where the clocksource is "
					"slow to read (HPET in an emulator), as synchronised across CPUs as the TSCs" },
	{ .common = CLI_OPT_KEEP_GOING },
	{ .common = CLI_OPT_MAX_PROBES },
	{ .common = CLI_OPT_NO_FTRACE, .help = "where only an int3 fits after a FUNC's ftrace NOP, record its entry with "
					       "that int3, not with an ftrace direct call from the NOP (the default, as "
					       "for 'kinstr count'; %rip then reads FUNC's first byte, the NOP, not the "
					       "instruction after it)" },
	{ .common = CLI_OPT_WHERE },
	CLI_OPTS_SCOPE,
	{ .common = CLI_OPT_CMD_ONLY },
	{ 0 },
};

static const struct cli_usage trace_usage = {
	.name = "trace", .synopsis = "[options] SPEC[(VALUE,...)][ if EXPR]...", .verb = "trace", .done = "traced",
	.intro = "Record every hit of the given probes, with time, CPU, pid/tid, comm and the\n"
		 "requested values, into a CTF 1.8 trace directory (babeltrace2 DIR reads it;\n"
		 "'kinstr report DIR' summarises it). SPEC is as for 'kinstr count':\n"
		 "  FUNC, FUNC+0xOFF, FUNC%return (every return site), GLOB ('vfs_*')\n"
		 "VALUE is one of\n"
		 "  NAME            an argument of FUNC by name (from BTF; at FUNC's entry only)\n"
		 "  %REG            a register at the site: %rax .. %r15, %rip\n"
		 "  ret             the return value (at FUNC%return: %rax)\n"
		 "  +OFF(X)         8 bytes of memory at X + OFF (X: NAME or %REG; -OFF too),\n"
		 "                  read fault-safely (a fault records 0)\n"
		 "  FIELD=VALUE     name the value's field in the trace (default: from VALUE)\n"
		 "  VALUE:TYPE      u8 u16 u32 u64 s8 s16 s32 s64 x64 (hex), or string: the value\n"
		 "                  is a char pointer (for +OFF(X), the pointer stored there);\n"
		 "                  string[N] keeps at most N-1 chars (default " STR(KINSTR_VALUE_STR_DEFAULT) ")\n"
		 "SPEC(VALUE,...) if EXPR records only the hits where EXPR holds (as --where, for\n"
		 "that SPEC alone): e.g. 'vfs_read(count) if count > 4096 && comm == \"cat\"'\n\n",
	.outro = "Without -d or -c, trace until interrupted (Ctrl-C). At the stop (SEC, Ctrl-C or\n"
		 "SIGTERM, CMD's end) the probes are removed first, then only what the buffers\n"
		 "already hold is written. At the end it prints the events recorded and lost per\n"
		 "CPU. Interrupted during -c CMD, CMD gets the signal too and kinstr exits 130\n"
		 "(SIGINT) or 143 (SIGTERM).\n",
	.opts = trace_opts, .min_args = 1, .max_args = -1,
	.examples = "kinstr trace -o t 'vfs_read(file,count)' 'vfs_read%return'\n"
		    "record vfs_read's file and count at its entry, and its returns, into t until Ctrl-C\n"
		    "kinstr trace -o /tmp/t -c ls 'vfs_read(count)' 'vfs_read%return(ret)'\n"
		    "the same with the return value, while ls runs; then 'babeltrace2 /tmp/t'\n",
};

struct trace_own {
	uint32_t bufsize, subbuf;
	unsigned long long max_size;
	bool overwrite, live;
	const char *relayd, *relayd_session;
	struct kinstr_trace_opts *topts;
};

static int trace_opt(void *ctx, int key, const char *arg)
{
	struct trace_own *o = ctx;
	unsigned long long v;

	switch (key) {
	case O_LIVE: o->live = true; break;
	case O_RELAYD: o->relayd = arg; break;
	case O_RELAYD_SESSION: o->relayd_session = arg; break;
	case O_OVERWRITE: o->overwrite = true; break;
	case O_BUFFER_SIZE:
		if (cli_parse_bytes("--buffer-size", arg, 8 << 10, UINT32_MAX, &v))
			return CLI_USAGE;
		o->bufsize = (uint32_t)v;
		break;
	case O_SUBBUF_SIZE:
		if (cli_parse_bytes("--subbuf-size", arg, 4 << 10, 1u << 30, &v))
			return CLI_USAGE;
		o->subbuf = (uint32_t)v;
		break;
	case O_MAX_SIZE:
		if (cli_parse_bytes("--max-size", arg, 64 << 10, 1ull << 50, &o->max_size))
			return CLI_USAGE;
		break;
	case O_CLOCK:
		if (cli_parse_clock(arg, &o->topts->local_clock))
			return CLI_USAGE;
		break;
	}
	return 0;
}

/* Between two sub-buffers: a deadline, a signal, the command's end (not only when the buffers are empty). */
static bool trace_should_stop(void *run)
{
	return cli_run__done(run);
}

int cmd_trace(int argc, char **argv)
{
	const char *dir;
	char specs_env[1024] = "";
	struct kinstr_why why;
	struct cli_common co;
	struct kinstr_plan_opts popts = { .sz = sizeof(popts) };
	struct kinstr_trace_opts topts = { .sz = sizeof(topts) };
	struct trace_own o = { .bufsize = 1 << 20, .subbuf = 64 << 10, .topts = &topts };
	struct cli_run run;
	struct kinstr_recording_opts ropts = { .sz = sizeof(ropts), .trace = &topts, .should_stop = trace_should_stop,
					       .ctx = &run };
	struct kinstr_recording *rec = NULL;
	struct kinstr_rec_cpu *cpus = NULL;
	struct kinstr_trace_stats *st = NULL;
	struct kinstr_ctf_env env[1];
	struct kinstr_probeset *ps = NULL;
	struct cli_session se = CLI_SESSION_INIT;
	struct cli_session_opts so;
	struct kinstr_dev *dev;
	struct kinstr_relayd *relay;
	char where[1024];
	int i, ret = CLI_FAIL, r;
	uint64_t missed = 0, filtered = 0;
	unsigned int nr_cpus;

	cli_common__init(&co);
	ret = cli_opts__parse(&trace_usage, argc, argv, &co, trace_opt, &o);
	if (ret != CLI_GO_ON)
		return ret;
	ret = CLI_FAIL;
	cli_common__plan_opts(&co, &popts);
	dir = co.output;
	r = kinstr_trace_opts__geometry(&topts, o.bufsize, o.subbuf);
	if (r) {
		if (r == -EDOM)
			cli_err("--subbuf-size: a power of two of at least 4K");
		else
			cli_err("--buffer-size: 2 to 256 sub-buffers of %u bytes per CPU", o.subbuf);
		return CLI_USAGE;
	}
	topts.overwrite = o.overwrite;
	cli_run__init(&run, co.command, co.duration, false);
	so = (struct cli_session_opts){ .popts = &popts, .trace_events = MAX_EVENTS, .scope = co.dry ? NULL : &co,
					.specs = argv + optind, .nspecs = argc - optind, .trace_specs = true, .run = &run };
	if ((r = cli_session__open(&se, &so)) != CLI_OK)
		return r;
	dev = se.dev, ps = se.ps;
	for (i = optind; i < argc; i++) {
		if (cli_session__add_trace(&se, &se.sp[i - optind])) {
			if (co.keep)
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
	ropts.max_size = o.max_size;
	ropts.on_event = o.live ? cli_trace__event : NULL;
	ropts.relayd = o.relayd;
	ropts.relayd_session = o.relayd_session;
	if (o.relayd_session && !o.relayd) {
		cli_err("--relayd-session needs --relayd");
		ret = CLI_USAGE;
		goto out;
	}
	rec = kinstr_recording__new(dev, dir, se.ev, se.nev, &ropts, &why);
	if (!rec) {
		cli_err("%s", why.msg);
		goto out;
	}
	dir = kinstr_recording__dir(rec);
	relay = kinstr_recording__relayd(rec);
	if (relay) {
		snprintf(where, sizeof(where), "%s%slttng-relayd at %s (session %s of host %s, in its output folder's %s)",
			 dir ? dir : "", dir ? " and " : "", kinstr_relayd__addr(relay), kinstr_relayd__session(relay),
			 kinstr_relayd__hostname(relay), kinstr_relayd__output_path(relay));
		dir = where;
	}
	cli_catch_signals();
	if (kinstr_probeset__install(ps, &why)) {
		cli_err("%s", why.msg);
		goto out;
	}
	fprintf(stderr, "kinstr: tracing %zu probes (%u events) into %s%s\n", kinstr_probeset__cnt(ps), se.nev, dir,
		co.command || co.duration > 0 ? "" : "; Ctrl-C to stop");
	if (relay)
		fprintf(stderr, "kinstr: live: babeltrace2 net://%s/host/%s/%s (the relay's live port: 5344 unless "
			"it has another)\n", kinstr_relayd__host(relay),
			kinstr_relayd__hostname(relay), kinstr_relayd__session(relay));
	cli_run__begin(&run);
	/* -c CMD: started now, or released now if --cmd-only started it gated before the probes */
	if (co.command && (run.child > 0 ? cli_run__go(&run) : cli_run__spawn(&run)))
		goto out;
	r = kinstr_recording__run(rec, o.live, co.command ? 20 : 100, &why);
	cli_trace__capped(rec);
	if (r) {
		cli_err("%s", why.msg);
		goto out;
	}
	missed = kinstr_probeset__missed_total(ps);
	filtered = kinstr_probeset__filtered_total(ps);
	cli_run__stop(&run);
	/* probes out, every handler finished (quiescence), then what the buffers already hold */
	kinstr_probeset__remove(ps);
	kinstr_dev__sync(dev);
	nr_cpus = kinstr_recording__nr_cpus(rec);
	cpus = calloc(nr_cpus, sizeof(*cpus));
	st = calloc(nr_cpus, sizeof(*st));
	if (!cpus || !st)
		goto out;
	r = kinstr_recording__drain(rec, cpus, st, &why);
	cli_trace__capped(rec);
	if (r || kinstr_recording__close(rec, &why)) {
		cli_err("%s", why.msg);
		goto out;
	}
	cli_trace__summary(cpus, st, nr_cpus, dir, missed);
	if (co.where || filtered)
		fprintf(stderr, "kinstr: %llu hits filtered out by the predicates\n", (unsigned long long)filtered);
	ret = cli_run__status(&run);
out:
	cli_run__cleanup(&run);
	kinstr_recording__free(rec);
	cli_session__close(&se);	/* removes the probes */
	free(cpus);
	free(st);
	return ret;
}
