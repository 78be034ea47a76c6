// SPDX-License-Identifier: GPL-2.0
/*
 * The setup every patching subcommand does, once: the output file, then the metrics endpoint (both
 * before anything is patched: a path that cannot be written or an address that cannot be bound
 * fails first), then the kernel view and its device, then the probe set and its planner. Closed in
 * the reverse order by one call, whatever was reached.
 */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include "cli.h"

int cli_session__open(struct cli_session *s, const struct cli_session_opts *o)
{
	int ret;

	*s = (struct cli_session)CLI_SESSION_INIT;
	if (o->output && (s->out_fd = cli_open_output(o->output)) < 0)
		return CLI_FAIL;
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
	if (o->popts) {
		s->ps = kinstr_probeset__new(s->dev, s->k);
		s->pl = s->ps ? kinstr_plan__new(s->ps, o->popts) : NULL;
		if (!s->pl) {
			cli_err("cannot plan: %s", strerror(errno));
			cli_session__close(s);
			return CLI_FAIL;
		}
	}
	return CLI_OK;
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
	if (s->k)
		cli_close_kernel(s->k, s->dev);
	cli_metrics__close(&s->m);
	if (s->out_fd >= 0)
		close(s->out_fd);
	*s = (struct cli_session)CLI_SESSION_INIT;
}
