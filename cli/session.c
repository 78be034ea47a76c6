// SPDX-License-Identifier: GPL-2.0
/*
 * The setup every patching subcommand does, once: the output file, then the metrics endpoint (both
 * before anything is patched: a path that cannot be written or an address that cannot be bound
 * fails first), then the kernel view and its device, then the probe set and its planner, and for
 * trace probes their events, the kernel's BTF and the trace buffers. Closed in the reverse order by
 * one call, whatever was reached.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include <kinstr/btf.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include <kinstr/trace.h>
#include "cli.h"

/*
 * The scope, before any probe: kinstr's own process out unless --self, and the options' filters;
 * with --cmd-only, -c CMD started now, gated (run: it runs once the probes are in), and its
 * process followed.
 */
static int apply_scope(struct kinstr_dev *dev, const struct cli_common *co, struct cli_run *run)
{
	const struct cli_scope *sc = &co->scope;
	struct kinstr_scope_opts so;
	uint32_t child;
	int ret;

	cli_common__scope_opts(co, &so);
	if (sc->cmd_only) {
		if (!run) {
			cli_err("--cmd-only: not for this subcommand");
			return CLI_USAGE;
		}
		run->group = true;	/* gated, in a group of its own: cli_run__start releases it */
		if (cli_run__spawn(run))
			return CLI_FAIL;
		child = (uint32_t)run->child;
		so.pids = &child;
		so.npids = 1;
		so.follow = true;
	}
	ret = kinstr_dev__scope(dev, &so);
	if (!ret || (ret == -EOPNOTSUPP && !(co->given & CLI_OPT_SCOPE)))
		return CLI_OK;	/* an older module and no option: every thread, kinstr's own included */
	if (ret == -EOPNOTSUPP)
		cli_err("the loaded kinstr.ko has no scope (ABI 0.16): --pid, --tid, --comm, --cgroup, --cpu and "
			"--follow need it");
	else if (sc->cgroup && (ret == -ENOENT || ret == -ENOTDIR || ret == -EACCES || ret == -EBADF))
		cli_err("--cgroup %s: %s", sc->cgroup, ret == -EBADF ? "not a cgroup v2 directory" : strerror(-ret));
	else
		cli_err("cannot set the scope of the probes: %s", strerror(-ret));
	return CLI_FAIL;
}

int cli_session__open(struct cli_session *s, const struct cli_session_opts *o)
{
	int ret;

	*s = (struct cli_session)CLI_SESSION_INIT;
	if (o->nspecs) {
		s->sp = cli_specs__parse(o->nspecs, o->specs, o->trace_specs);
		if (!s->sp)
			return CLI_USAGE;
		s->nsp = o->nspecs;
	}
	if (o->output && (s->out_fd = cli_open_output(o->output)) < 0) {
		cli_session__close(s);
		return CLI_FAIL;
	}
	if (o->metrics_at) {
		ret = cli_metrics__open(&s->m, o->metrics_opt ? o->metrics_opt : "--metrics", o->metrics_at,
					o->metrics_write, o->metrics_ctx);
		if (ret != CLI_OK) {
			cli_session__close(s);
			return ret;
		}
	}
	s->k = cli_open_kernel(NULL, &s->dev);
	if (!s->k) {
		cli_session__close(s);
		return CLI_FAIL;
	}
	if (o->scope && (ret = apply_scope(s->dev, o->scope, o->run)) != CLI_OK) {
		cli_session__close(s);
		return ret;
	}
	if (o->popts) {
		s->ps = kinstr_probeset__new(s->dev, s->k);
		s->pl = s->ps ? kinstr_plan__new(s->ps, o->popts) : NULL;
		if (!s->pl) {
			cli_err("cannot plan: %s", strerror(errno));
			cli_session__close(s);
			return CLI_FAIL;
		}
	}
	if (o->trace_events) {
		s->ev = calloc(o->trace_events, sizeof(*s->ev));
		if (!s->ev) {
			cli_session__close(s);
			return CLI_FAIL;
		}
		s->maxev = o->trace_events;
		s->btf = kinstr_btf__open(NULL);	/* NULL: registers only */
	}
	return CLI_OK;
}

int cli_session__add_trace(struct cli_session *s, const struct kinstr_spec *sp)
{
	return cli_add_trace(s->pl, sp, s->btf, s->ev, &s->nev, s->maxev);
}

int cli_session__trace(struct cli_session *s, const struct kinstr_trace_opts *topts, const char *what)
{
	s->t = kinstr_trace__create(s->dev, topts);
	if (!s->t) {
		cli_err("cannot create the trace buffers for %s: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

void cli_session__quiesce(struct cli_session *s)
{
	kinstr_probeset__remove(s->ps);
	kinstr_dev__sync(s->dev);
}

void cli_session__unplan(struct cli_session *s)
{
	kinstr_plan__free(s->pl);
	kinstr_probeset__free(s->ps);	/* removes the probes still in */
	s->pl = NULL;
	s->ps = NULL;
}

void cli_session__close(struct cli_session *s)
{
	cli_session__unplan(s);
	kinstr_trace__free(s->t);	/* after the probes that wrote into it */
	kinstr_btf__close(s->btf);
	free(s->ev);
	if (s->k)
		cli_close_kernel(s->k, s->dev);
	cli_metrics__close(&s->m);
	if (s->out_fd >= 0)
		close(s->out_fd);
	free(s->sp);
	*s = (struct cli_session)CLI_SESSION_INIT;
}
