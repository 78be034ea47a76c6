/* SPDX-License-Identifier: GPL-2.0 */
/* The kinstr command: one file per subcommand, dispatched from main.c. */
#ifndef KINSTR_CLI_H
#define KINSTR_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the subcommand's name */
	const char *summary;
};

/* Exit statuses shared by every subcommand. */
enum {
	CLI_OK = 0,
	CLI_FAIL = 1,	/* the work failed (e.g. module missing, kernel refused) */
	CLI_USAGE = 2,	/* bad command line */
};

int cmd_version(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_disasm(int argc, char **argv);
int cmd_cover(int argc, char **argv);
int cmd_optimize(int argc, char **argv);

/* The code cache's run (cli/cover_run.c), shared by cover and count --every-block. */
struct cli_cover_args {
	char **funcs;		/* FUNC or GLOB each */
	int nfuncs;
	const char *snapshot;	/* --dry-run only */
	const char *command;	/* -c CMD */
	double duration;	/* -d SEC, 0: none */
	const char *lcov;	/* --lcov FILE */
	bool json, dry, hit_only, once, edges;
	bool keep;		/* -k: a name that matches nothing, a copy the module refuses: reported, left out */
	const char **debuginfo;	/* --debuginfo FILE each: a vmlinux or a NAME.ko with DWARF */
	int ndebuginfo;
};
int cli_cover__run(const struct cli_cover_args *a);
int cmd_sites(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_span(int argc, char **argv);
int cmd_serve(int argc, char **argv);
struct kinstr_kernel;
/* kinstr count's printers (cli/out/count.c): the table (rates: HITS/S since prev over dt), JSON, the plan. */
struct kinstr_probeset;
void cli_count__table(const struct kinstr_probeset *ps, const uint64_t *hits, const uint64_t *prev, double dt,
		      bool rates);
void cli_count__json(const struct kinstr_probeset *ps, const uint64_t *hits, const uint64_t *filtered, double secs,
		     int status);
void cli_count__plan(const struct kinstr_probeset *ps, const struct kinstr_kernel *k);
/* --by KEY's rows, --by stack's stacks (JSON, folded or bpftrace-like); what was lost on stderr. */
struct kinstr_tally;
struct kinstr_trace_event;
struct kinstr_stack_row;
void cli_count__by_print(const struct kinstr_tally *ta, const struct kinstr_trace_event *ev, unsigned int key,
			 bool json, double secs, int status,
			 uint64_t filtered);
void cli_count__stacks_print(const struct kinstr_probeset *ps, const struct kinstr_kernel *k,
			     const struct kinstr_stack_row *rows, int n, uint64_t lost, bool json, bool folded,
			     double secs, int status);
/* kinstr count's --by KEY and --by stack runs (cli/count_by.c): the exit status. */
struct cli_common;
struct kinstr_plan_opts;
int cli_count__by(int n, char **specs, const struct cli_common *co, const struct kinstr_plan_opts *popts,
		  unsigned int key);
int cli_count__by_stack(int n, char **specs, const struct cli_common *co, const struct kinstr_plan_opts *popts,
			bool folded);
/* Once the specs are in: none left fails, --dry-run prints the plan (CLI_OK); else CLI_GO_ON. */
int cli_count__planned(const struct kinstr_probeset *ps, const struct kinstr_kernel *k, bool dry);
int cmd_attach(int argc, char **argv);
/* kinstr span's table (or JSON) at the end (cli/out/span.c). */
struct kinstr_spanner;
void cli_span__print(const struct kinstr_spanner *s, const char *a, const char *b, unsigned int key, bool hist,
		     bool json, double secs, int status, uint64_t filtered);
/* kinstr attach's totals (cli/out/count.c): hits and not-run per probe, then the program's maps. */
struct kinstr_bpf_obj;
void cli_attach__print(const struct kinstr_probeset *ps, const uint64_t *hits, const uint64_t *missed,
		       const struct kinstr_bpf_obj *o, bool json, double secs, int status);
int cmd_list(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* kinstr report --html (cli/report_html.c): the page of the saved outputs (or traces) files, the exit status. */
int cli_report__html(const char *out, const char *title, int n, char **files);
int cmd_trace(int argc, char **argv);
/* kinstr trace's printing besides the trace (cli/out/trace.c). */
struct kinstr_trace_event;
struct kinstr_trace_rec;
struct kinstr_trace_stats;
struct kinstr_rec_cpu;
struct kinstr_recording;
union kinstr_ctf_value;
/* --live: an event as it is written (a kinstr_recording_opts on_event). */
void cli_trace__event(void *ctx, const struct kinstr_trace_event *e, unsigned int cpu, const struct kinstr_trace_rec *r,
		      const union kinstr_ctf_value *vals);
/* The first time the trace is found cut by --max-size, say so. */
void cli_trace__capped(struct kinstr_recording *rec);
/* Each CPU's events recorded and lost, their totals, and the hits the recursion guard missed. */
void cli_trace__summary(const struct kinstr_rec_cpu *cpus, const struct kinstr_trace_stats *st, unsigned int nr_cpus,
			const char *dir, uint64_t missed);
int cmd_batch(int argc, char **argv);
/*
 * The dispatch of one command line, argv[0] the subcommand (or -l): main.c's, set before it runs a
 * command (a callback, so that batch, which main.c dispatches to, does not call back into main.c).
 */
extern int (*cli_batch_dispatch)(int argc, char **argv);
/*
 * kinstr batch: cli_open_kernel() opens the live kernel once and hands every later caller the
 * same view (with a device of its own); cli_close_kernel() then closes only the device.
 */
extern bool cli_keep_kernel;
struct kinstr_kernel *cli_kept_kernel(void);
void cli_release_kernel(void);

struct kinstr_kernel;
struct kinstr_dev;
struct kinstr_plan;
struct kinstr_spec;
/*
 * One parsed SPEC (FUNC, FUNC+0xOFF, FUNC%return, GLOB) into probes through the planner: 0, or
 * prints why and returns -errno. A glob's refused functions are skipped and counted on stderr.
 */
int cli_add_spec(struct kinstr_plan *pl, const struct kinstr_spec *sp);
/*
 * The specs parsed, once (trace: with their values, SPEC(VALUE,...)), before anything is opened:
 * an array of n to free(), or NULL (the first bad one printed).
 */
struct kinstr_spec *cli_specs__parse(int n, char *const *specs, bool trace);
/* Does trace spec text carry a predicate (SPEC if EXPR)? */
bool cli_spec_has_pred(const char *spec);
/* The same for a parsed trace spec, SPEC(VALUE,...): kinstr_plan__add_traced, printing why. */
struct kinstr_btf;
struct kinstr_trace_event;
int cli_add_trace(struct kinstr_plan *pl, const struct kinstr_spec *sp, struct kinstr_btf *btf,
		  struct kinstr_trace_event *ev, unsigned int *nev, unsigned int max);
int cmd_profile(int argc, char **argv);
/* A timed function of kinstr profile, and its printers (cli/out/profile.c). */
#define CLI_MAX_CALLS 256
struct kinstr_callsite;
struct kinstr_timer_stats;
struct cli_pfunc {
	const struct kinstr_func *f;
	unsigned int exits;
	struct kinstr_callsite *sites;	/* --calls */
	unsigned int nsites;
};
void cli_profile__table(const struct cli_pfunc *pf, unsigned int n, const struct kinstr_timer_stats *st, bool hist,
			bool show_calls, const char *key);
/* profile --by KEY: each function's time per comm, process or thread (kinstr_timing__by's rows). */
struct cli_profile_by {
	const char *key;			/* "comm", "pid" or "tid" */
	const struct kinstr_timer_by_row *rows;
	size_t n;
	uint64_t dropped;
};
void cli_profile__by_table(const struct cli_pfunc *pf, unsigned int n, const struct cli_profile_by *by);
/* by: NULL, or --by's rows (a "by" object) */
void cli_profile__json(const struct cli_pfunc *pf, unsigned int n, const struct kinstr_timer_stats *st, double secs,
		       int status, bool show_calls, const struct cli_profile_by *by);
/* Folded stacks of the device's timer paths on stdout: 0, or -errno (printed). */
int cli_profile__folded(struct kinstr_dev *dev, const struct cli_pfunc *pf, unsigned int n);
/* The live table, refreshed (a cli_run__wait tick; ctx a struct cli_profile_live). */
struct cli_profile_live {
	struct kinstr_dev *dev;
	const struct cli_pfunc *pf;
	unsigned int n, ntimers;
	struct kinstr_timer_stats *st;
	bool calls;
	const char *key;
};
void cli_profile__live(void *ctx, double dt);
/* "timing N functions with M probes (...)", and "; Ctrl-C to stop" unless the run ends by itself. */
void cli_profile__installed(const struct kinstr_probeset *ps, unsigned int n, bool ends);
/*
 * profile --cache (profile_cache.c): the functions names[] name, planned through the code cache
 * with a timer each (refused ones said; without keep, any fails it), into *pf at their timers
 * (*n of them); NULL on failure, said. Then installed (with keep, one the module refuses left
 * out and *pf, *n redone): 0, or -1 said.
 */
struct kinstr_cover;
/* A code-cache run's -k (kinstr_cover_opts.left_out; ctx: the command's name, "cover"): said, left out. */
int cli_cache__left_out(const struct kinstr_func *f, const char *why, void *ctx);
struct kinstr_cover *cli_profile_cache__plan(struct kinstr_dev *dev, const struct kinstr_kernel *k, char **names,
					     int nnames, bool keep, struct cli_pfunc **pf, unsigned int *n);
int cli_profile_cache__install(struct kinstr_cover *cv, struct cli_pfunc *pf, unsigned int *n, bool quiet,
			       bool ends);
int cmd_drill(int argc, char **argv);
/*
 * The kernel to analyse: the snapshot file if one is named, else the running kernel through
 * /dev/kinstr (kept open in *devp, may be NULL). Prints the error and returns NULL on failure.
 */
struct kinstr_kernel *cli_open_kernel(const char *snapshot, struct kinstr_dev **devp);
void cli_close_kernel(struct kinstr_kernel *k, struct kinstr_dev *dev);
/*
 * The one function NAME (or NAME@ADDR) denotes; else NULL (errno ENOENT or ENOTUNIQ) after saying
 * why on stderr, prefixed with "SPEC: " when spec is not NULL ("N functions are named 'NAME': ...,
 * name one as NAME@ADDR").
 */
const struct kinstr_func *cli_find_func(const struct kinstr_kernel *k, const char *spec, const char *name);
/* How to name f in a spec: its name, or NAME@0xADDR when the name is not unique (buf holds it). */
const char *cli_func_spec(const struct kinstr_kernel *k, const struct kinstr_func *f, char *buf, size_t len);
/* Colours for a terminal (empty strings when stdout is not one, or NO_COLOR is set). */
struct cli_colors {
	const char *jump, *trap, *refused, *dim, *reset;
};
const struct cli_colors *cli_colors(void);

/* SIGINT/SIGTERM set cli_stop to the signal's number (the long-running commands poll it). */
#include <signal.h>
extern volatile sig_atomic_t cli_stop;
void cli_catch_signals(void);
/* CLOCK_MONOTONIC in seconds. */
double cli_now(void);
/* The exit status for an interrupted command: 128 + the signal that set cli_stop. */
int cli_stop_status(void);

/*
 * A run (cli/run.c), the same for every subcommand that patches: init, spawn -c CMD (plain words
 * exec'ed directly, else under /bin/sh -c; with group, in a process group of its own that waits
 * for cli_run__go), begin once the probes are in, wait, stop, print, status; cleanup on every
 * way out (a CMD still running gets SIGTERM and is reaped).
 */
struct cli_run {
	const char *command;	/* -c CMD, or NULL */
	double duration;	/* -d SEC, 0: none */
	bool group;		/* CMD gated, in a group of its own; signals go to the group */
	pid_t child;		/* 0: no CMD (yet) */
	int status;		/* CMD's exit status or 128 + signal; -1 while it runs */
	int gate;		/* group: the write end CMD waits on, -1 once released */
	double t0, deadline;	/* from cli_run__begin; deadline 0: none */
	int watch_fd;		/* -1, or a descriptor cli_run__wait serves when readable */
	void (*on_ready)(void *ctx);
	void *watch_ctx;
	bool cmd_to_stderr;	/* CMD's stdout is kinstr's stderr: kinstr's stdout is JSON alone */
};
void cli_run__init(struct cli_run *r, const char *command, double duration, bool group);
/*
 * --json printed on stdout (no -o FILE): CMD's own stdout goes to stderr, so that
 * 'kinstr ... --json -c CMD > FILE' leaves JSON alone in FILE.
 */
void cli_run__json(struct cli_run *r, bool json, const char *output);
/* While cli_run__wait waits: on_ready(ctx) whenever fd is readable (a metrics endpoint's socket). */
void cli_run__watch(struct cli_run *r, int fd, void (*on_ready)(void *ctx), void *ctx);

/*
 * A metrics endpoint (cli/metrics.c): GET /metrics on ADDR:PORT answered with what write() puts
 * in Prometheus's text format (lib/results/prom.c); connections served side by side (libmicrohttpd), an
 * idle one closed after CLI_METRICS_TIMEOUT seconds, at most CLI_METRICS_CONNECTIONS at once.
 */
#define CLI_METRICS_DEFAULT "127.0.0.1:9464"
#define CLI_METRICS_TIMEOUT 5
#define CLI_METRICS_CONNECTIONS 256
struct MHD_Daemon;
struct cli_metrics {
	int fd;				/* what the run's wait watches (the server's epoll fd) */
	int listen_fd;
	struct MHD_Daemon *d;
	int (*write)(void *ctx, FILE *out);	/* 0, or -errno: a 500 answer */
	void *ctx;
	uint64_t scrapes;
};
/*
 * Bound and listening before anything is patched: CLI_OK, CLI_USAGE (not ADDR:PORT) or CLI_FAIL
 * (printed, naming the option opt: --listen, --metrics).
 */
int cli_metrics__open(struct cli_metrics *m, const char *opt, const char *listen_at,
		     int (*write)(void *ctx, FILE *out), void *ctx);
/* Serve what is ready and time out idle connections (a cli_run__watch on_ready, ctx the struct cli_metrics). */
void cli_metrics__ready(void *m);
void cli_metrics__close(struct cli_metrics *m);
/* The common families: kinstr_info, then per probe [0, ncount) its hits, missed hits, the timers' histograms. */
struct kinstr_dev;
struct kinstr_probeset;
struct cli_metrics_src {
	struct kinstr_dev *dev;
	struct kinstr_probeset *ps;
	size_t ncount;			/* counting probes: the set's first ncount */
	const char *const *timed;	/* timer i times function timed[i] */
	size_t ntimed;
	uint64_t *scrapes;
};
int cli_metrics__probes(void *src, FILE *out);
/* kinstr span's families: what a scrape reads, the spans settled so far (lib/results/span.c). */
struct kinstr_spanner;
struct cli_span_metrics {
	struct kinstr_dev *dev;
	struct kinstr_spanner *sp;
	const char *a, *b;		/* the points' specs, the labels from and to */
	uint64_t scrapes;
};
int cli_metrics__span(void *ctx, FILE *out);
/* kinstr_info{version,module,abi,kernel} 1 */
void cli_metrics__info(struct kinstr_dev *dev, FILE *out);
/* -o FILE opened (created, truncated) before anything is patched: its fd, or -1 (printed). */
int cli_open_output(const char *path);
/*
 * An output written only at the end (--lcov FILE) checked before anything is patched, without
 * touching what is there: its folder a writable folder, FILE (if it exists) a writable file. 0, or
 * -1 (printed, naming opt).
 */
int cli_check_writable(const char *opt, const char *path);
/* The totals go to fd (>= 0: -o path) from here on, not stdout: 0, or -1 (printed). */
int cli_output_begin(int fd, const char *path);
/* Every byte of the totals written (to path, or stdout when NULL): 0, or -1 (printed). */
int cli_output_end(const char *path);
/* Start CMD: 0, or -1 (printed). */
int cli_run__spawn(struct cli_run *r);
struct kinstr_probeset;
/* Signals caught, ps's probes in, the run begun and CMD (if any) started: 0, or -1 (printed). */
int cli_run__start(struct cli_run *r, struct kinstr_probeset *ps);
/* --clock mono|local: 0 with *local set, or -1 (printed). */
int cli_parse_clock(const char *s, bool *local);
/* Let a gated CMD run: 0, or -1 (printed). */
int cli_run__go(struct cli_run *r);
/* The run starts now: -d counts from here. */
void cli_run__begin(struct cli_run *r);
/* Is it over: Ctrl-C/SIGTERM, the deadline, or CMD's end (its status taken)? */
bool cli_run__done(struct cli_run *r);
/* Until cli_run__done, calling tick (if not NULL) every interval seconds. */
void cli_run__wait(struct cli_run *r, double interval, void (*tick)(void *ctx, double dt), void *ctx);
/* Interrupted with CMD running: pass the signal on (SIGINT, else SIGTERM; SIGKILL after 5 s), reap it. */
void cli_run__stop(struct cli_run *r);
/* The exit status: CMD's, or 128 + the signal when interrupted (saying CMD's status), else CLI_OK. */
int cli_run__status(const struct cli_run *r);
void cli_run__cleanup(struct cli_run *r);

/*
 * Strict parsing of option values (cli/parse.c): the whole word must be the value. Each prints
 * "kinstr: OPT: why" and returns -EINVAL (not a number) or -ERANGE (out of range); 0 on success.
 */
#define CLI_MAX_SECONDS 31536000	/* a year */
int cli_parse_seconds(const char *opt, const char *s, double *out);	/* > 0 */
/* --max-probes N: 1 to KINSTR_AREA_MAX_PROBES (the planner's opts.max_probes) */
int cli_parse_max_probes(const char *s, size_t *out);
int cli_parse_double(const char *opt, const char *s, double min, double max, double *out); /* (min, max) */
int cli_parse_long(const char *opt, const char *s, long min, long max, long *out);	/* [min, max], base 10 */
/* --pid PID: a number (-EINVAL, usage) naming a live process (-ESRCH); each printed, errno set too. */
int cli_parse_pid(const char *s, long *pid);
/*
 * cli/session.c: what a patching subcommand opens before its work, in order (output, metrics, the
 * kernel and its device, the probe set and its planner), and closes with one call.
 */
struct cli_session {
	int out_fd;			/* -o FILE, or -1 */
	struct cli_metrics m;		/* m.fd -1: no endpoint */
	struct kinstr_kernel *k;
	struct kinstr_dev *dev;
	struct kinstr_probeset *ps;	/* with pl: NULL unless popts was given */
	struct kinstr_plan *pl;
	/* trace_events > 0: the trace specs' events and the kernel's BTF (for their values by name) */
	struct kinstr_trace_event *ev;
	unsigned int nev, maxev;
	struct kinstr_btf *btf;
	struct kinstr_trace *t;		/* cli_session__trace's buffers */
	struct kinstr_spec *sp;		/* the specs, parsed once (cli_session_opts.specs) */
	int nsp;
};
/* Nothing opened yet: what a session starts as, so that a close before any open is safe. */
#define CLI_SESSION_INIT { .out_fd = -1, .m = { .fd = -1, .listen_fd = -1 } }
struct cli_session_opts {
	const char *output;		/* -o FILE (NULL: stdout) */
	const char *metrics_opt;	/* the option's name in messages (NULL: --metrics) */
	const char *metrics_at;		/* ADDR:PORT (NULL: no endpoint) */
	int (*metrics_write)(void *ctx, FILE *out);
	void *metrics_ctx;
	const struct kinstr_plan_opts *popts;	/* NULL: no probe set, no planner */
	unsigned int trace_events;		/* room for this many trace events (with popts) */
	/* the specs, parsed first (a bad one: CLI_USAGE before anything is opened) into s->sp[nspecs] */
	char *const *specs;
	int nspecs;
	bool trace_specs;			/* SPEC(VALUE,...) (kinstr_spec__parse_trace) */
	/* the scope of the session's probes (cli_common__scope_opts); NULL: every thread (or --dry-run) */
	const struct cli_common *scope;
	struct cli_run *run;			/* -c CMD's run, for --cmd-only (NULL: refused) */
};
/* CLI_OK, or the exit code (printed; whatever was opened is closed). */
int cli_session__open(struct cli_session *s, const struct cli_session_opts *o);
/* A trace spec, SPEC(VALUE,...), into the session's events and probes: 0, or -errno (printed). */
int cli_session__add_trace(struct cli_session *s, const struct kinstr_spec *sp);
/* The trace buffers the session's trace probes write into: 0, or -1 (printed, naming what for). */
struct kinstr_trace_opts;
int cli_session__trace(struct cli_session *s, const struct kinstr_trace_opts *topts, const char *what);
/*
 * The probes out, every handler finished (quiescence): what the trace buffers hold is all there
 * will be.
 */
void cli_session__quiesce(struct cli_session *s);
/* The planner and the probe set (the probes out): before what hits wrote into (a trace) is freed. */
void cli_session__unplan(struct cli_session *s);
/* Everything the session opened, in reverse; safe after a failed open and twice. */
void cli_session__close(struct cli_session *s);

/*
 * The command line (cli/opts.c): each subcommand lists its options in a table, the shared ones
 * (CLI_OPT_*: their names, letters, checks and help declared once there) and its own; one parser
 * and one --help printer read that table.
 */
enum {
	CLI_OPT_DURATION = 1u << 0,	/* -d, --duration SEC */
	CLI_OPT_COMMAND = 1u << 1,	/* -c, --command CMD */
	CLI_OPT_INTERVAL = 1u << 2,	/* -i, --interval SEC */
	CLI_OPT_KEEP_GOING = 1u << 3,	/* -k, --keep-going */
	CLI_OPT_JSON = 1u << 4,		/* --json */
	CLI_OPT_OUTPUT = 1u << 5,	/* -o, --output FILE */
	CLI_OPT_DRY_RUN = 1u << 6,	/* --dry-run */
	CLI_OPT_MAX_PROBES = 1u << 7,	/* --max-probes N */
	CLI_OPT_NO_FTRACE = 1u << 8,	/* --no-ftrace */
	CLI_OPT_METRICS = 1u << 9,	/* --metrics ADDR:PORT */
	CLI_OPT_SNAPSHOT = 1u << 10,	/* --snapshot FILE */
	/* the scope: which threads the probes act for (kinstr_dev__scope) */
	CLI_OPT_PID = 1u << 11,		/* -p, --pid PID[,PID...] */
	CLI_OPT_TID = 1u << 12,		/* --tid TID[,TID...] */
	CLI_OPT_COMM = 1u << 13,	/* --comm NAME */
	CLI_OPT_CGROUP = 1u << 14,	/* --cgroup PATH */
	CLI_OPT_CPU = 1u << 15,		/* --cpu LIST */
	CLI_OPT_FOLLOW = 1u << 16,	/* --follow */
	CLI_OPT_SELF = 1u << 17,	/* --self */
	CLI_OPT_WHERE = 1u << 18,	/* --where EXPR */
	CLI_OPT_CMD_ONLY = 1u << 19,	/* --cmd-only */
};
#define CLI_OPT_SCOPE (CLI_OPT_PID | CLI_OPT_TID | CLI_OPT_COMM | CLI_OPT_CGROUP | CLI_OPT_CPU | CLI_OPT_FOLLOW | \
		       CLI_OPT_SELF | CLI_OPT_CMD_ONLY)
/* The scope's options, as entries of a subcommand's table. */
#define CLI_OPTS_SCOPE                                                                                         \
	{ .common = CLI_OPT_PID }, { .common = CLI_OPT_TID }, { .common = CLI_OPT_COMM },                      \
	{ .common = CLI_OPT_CGROUP }, { .common = CLI_OPT_CPU }, { .common = CLI_OPT_FOLLOW },                 \
	{ .common = CLI_OPT_SELF }
/* getopt's values of the long-only shared options; a subcommand's own long-only ones start at CLI_KEY_OWN */
enum {
	CLI_KEY_JSON = 256, CLI_KEY_DRY_RUN, CLI_KEY_MAX_PROBES, CLI_KEY_NO_FTRACE, CLI_KEY_METRICS, CLI_KEY_SNAPSHOT,
	CLI_KEY_TID, CLI_KEY_COMM, CLI_KEY_CGROUP, CLI_KEY_CPU, CLI_KEY_FOLLOW, CLI_KEY_SELF,
	CLI_KEY_WHERE, CLI_KEY_CMD_ONLY,
	CLI_KEY_OWN = 300
};
/* The scope's options as given (CLI_OPT_PID ...). */
#define CLI_SCOPE_MAX_PIDS 256
#define CLI_SCOPE_MAX_CPUS 4096
#define CLI_SCOPE_MAX_TIDS 64	/* the module's KINSTR_SCOPE_MAX_IDS */
struct cli_scope {
	uint32_t pids[CLI_SCOPE_MAX_PIDS], tids[CLI_SCOPE_MAX_TIDS];
	size_t npids, ntids;
	uint64_t cpus[CLI_SCOPE_MAX_CPUS / 64];
	size_t ncpus;			/* bits up to the highest CPU given + 1 (0: every CPU) */
	const char *comm, *cgroup;
	char cgroup_path[4096];		/* a relative PATH under /sys/fs/cgroup */
	bool follow, self;
	bool cmd_only;			/* --cmd-only: -c CMD's process and what it forks (cli_session__open) */
};
/* The shared options' values (cli_common__init: none given, interval 1 s). */
struct cli_common {
	double duration, interval;	/* duration 0: none */
	const char *command, *output, *metrics_at, *snapshot;
	const char *where;		/* --where EXPR: every trace spec's predicate */
	bool keep, json, dry, no_ftrace;
	size_t max_probes;		/* 0: the planner's default */
	struct cli_scope scope;
	unsigned int given;		/* CLI_OPT_* given on the command line */
};
/*
 * The scope the options ask for into o (pointing into co): kinstr's own process left out unless
 * --self. Its arrays stay co's.
 */
struct kinstr_scope_opts;
void cli_common__scope_opts(const struct cli_common *co, struct kinstr_scope_opts *o);
void cli_common__init(struct cli_common *co);
/* --max-probes and --no-ftrace into the planner's options. */
struct kinstr_plan_opts;
void cli_common__plan_opts(const struct cli_common *co, struct kinstr_plan_opts *popts);
/*
 * One entry of a subcommand's table. A shared option: common = its CLI_OPT_*, and key, arg or help
 * when this subcommand has them otherwise (0/NULL: the shared ones). Its own: common 0, name, key (a
 * letter is also its short option; long-only from CLI_KEY_OWN), arg (NULL: takes none) and help.
 * Help is one paragraph (wrapped to 80 columns; '\n' breaks a line), %V the subcommand's verb, %P
 * its participle.
 */
struct cli_opt {
	unsigned int common;
	const char *name;
	int key;
	const char *arg;
	const char *help;
};
struct cli_usage {
	const char *name;		/* the subcommand */
	const char *synopsis;		/* after "usage: kinstr NAME " */
	const char *intro, *outro;	/* printed as they are, before and after the options (or NULL) */
	const char *verb, *done;	/* "count", "counted" */
	const struct cli_opt *opts;	/* in the order --help lists them, ending with { 0 } */
	int min_args, max_args;		/* operands after the options; max -1: any number */
	/*
	 * Optional: a line "kinstr ..." each, the lines under it (none or more) say what it does.
	 * --help lists them last, the manual page as its EXAMPLES.
	 */
	const char *examples;
};
/*
 * Options (anywhere among the operands) into co and, for the subcommand's own, own(ctx, key, arg)
 * (0, or CLI_USAGE printed); -h/--help prints the usage. CLI_GO_ON (operands from optind),
 * CLI_OK after --help, or CLI_USAGE (printed).
 */
#define CLI_GO_ON (-1)
int cli_opts__parse(const struct cli_usage *u, int argc, char **argv, struct cli_common *co,
		    int (*own)(void *ctx, int key, const char *arg), void *ctx);
void cli_opts__usage(const struct cli_usage *u, FILE *f);
/* An entry as the subcommand sees it (a shared one with the entry's own key, arg or help). */
struct cli_opt cli_opts__resolve(const struct cli_opt *o);
/* text with %V (the subcommand's verb) and %P (its participle) filled in, into buf */
void cli_opts__fill(char *buf, size_t len, const char *text, const struct cli_usage *u);

/*
 * What -h/--help prints (kinstr help sets it before running a subcommand with --help, so that
 * every form is drawn from the table the subcommand's parser reads): the text, the getopt table
 * for a completion script, or what cli_help_print prints (the manual page: cli/help.c's, which
 * calls down to cli/man.c; a pointer, so that opts.c calls nothing above it).
 */
enum cli_help_form { CLI_HELP_TEXT, CLI_HELP_PRINT, CLI_HELP_OPTIONS };
extern enum cli_help_form cli_help_form;
extern void (*cli_help_print)(const struct cli_usage *u, FILE *f);
/* main.c's table of subcommands, n of them, handed to kinstr help (cli/help.c) before dispatch. */
void cli_help__table(const struct cli_cmd *cmds, size_t n);
int cmd_help(int argc, char **argv);
/* kinstr's own usage (kinstr --help), or kinstr(8) with man. */
void cli_help__main(FILE *f, bool man);
/*
 * A subcommand's manual page (cli/man.c): u's table as roff, summary its NAME line; the commands
 * (cmds[n], and -l) its text names are in SEE ALSO.
 */
void cli_man__page(const struct cli_usage *u, const char *summary, const struct cli_cmd *cmds, size_t n, FILE *f);
/* Its parts, for kinstr(8): text escaped (bol: at a line's start), .TH, --help's pre-wrapped text. */
void cli_man__put(FILE *f, const char *s, size_t len, bool bol);
void cli_man__title(FILE *f, const char *page);
void cli_man__blocks(FILE *f, const char *text);
/* kinstr-NAME (kinstr-list for -l) into buf */
const char *cli_man__page_name(const char *name, char *buf, size_t len);

/* Bytes with an optional K, M or G suffix (powers of 1024), in [min, max]. */
int cli_parse_bytes(const char *opt, const char *s, unsigned long long min, unsigned long long max,
		    unsigned long long *out);
/* stdout is a terminal that takes escape codes (not TERM=dumb, TERM set). */
bool cli_term_ok(void);
/* "kinstr: " + message on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write s as a JSON string literal (quotes included) to stdout. */
void cli_json_str(const char *s);

#endif
