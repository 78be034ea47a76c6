// SPDX-License-Identifier: GPL-2.0
/* kinstr doctor: is this machine ready, and if not, what to do (lib/kernel/doctor.c checks). */
#include <stdio.h>

#include <kinstr/doctor.h>
#include "cli.h"

static const struct cli_opt doctor_opts[] = {
	{ .common = CLI_OPT_JSON, .help = "one JSON object: ok (true when nothing failed) and checks, each with "
				"name, status (ok, warn, fail, skip), detail and fix" },
	{ 0 },
};

static const struct cli_usage doctor_usage = {
	.name = "doctor", .synopsis = "[--json]", .verb = "check",
	.intro = "Check, in order, what kinstr needs on this machine and say what to do for each\n"
		 "failure: kinstr.ko installed for the running kernel (by DKMS or not), loadable\n"
		 "(its signature, Secure Boot and sig_enforce), the kernel not locked down, the\n"
		 "module loaded, its ABI this kinstr's, the kernel's BTF, tracefs (ftrace's\n"
		 "functions), debugfs's kprobes files, the clock the timers will read (an invariant\n"
		 "TSC or not), and whether the kernel is one kinstr is tested on. Nothing is changed.\n"
		 "A check is ok, warn (commands work, with the caveat said), FAIL (some command\n"
		 "cannot work until it is fixed) or skip (an earlier failure decides it).\n\n",
	.outro = "Exit status: 0 when no check failed (warnings allowed), 1 when one did.\n",
	.opts = doctor_opts, .min_args = 0, .max_args = 0,
};

int cmd_doctor(int argc, char **argv)
{
	struct kinstr_doctor_check c[KINSTR_DOCTOR_MAX];
	struct cli_common co;
	int err, n, i, failed = 0;

	cli_common__init(&co);
	err = cli_opts__parse(&doctor_usage, argc, argv, &co, NULL, NULL);
	if (err != CLI_GO_ON)
		return err;
	n = kinstr_doctor__run(c, KINSTR_DOCTOR_MAX);
	if (n < 0) {
		cli_err("doctor: %d checks do not fit", KINSTR_DOCTOR_MAX);
		return CLI_FAIL;
	}
	for (i = 0; i < n; i++)
		failed += c[i].status == KINSTR_DOCTOR_FAIL;
	if (co.json) {
		printf("{\"ok\":%s,\"checks\":[", failed ? "false" : "true");
		for (i = 0; i < n; i++) {
			printf("%s{\"name\":", i ? "," : "");
			cli_json_str(c[i].name);
			printf(",\"status\":");
			cli_json_str(c[i].status == KINSTR_DOCTOR_FAIL ? "fail" : kinstr_doctor__status_str(c[i].status));
			printf(",\"detail\":");
			cli_json_str(c[i].detail);
			printf(",\"fix\":");
			cli_json_str(c[i].fix);
			printf("}");
		}
		printf("]}\n");
	} else {
		for (i = 0; i < n; i++) {
			printf("%-5s %-10s %s\n", kinstr_doctor__status_str(c[i].status), c[i].name, c[i].detail);
			if (c[i].fix[0] && c[i].status != KINSTR_DOCTOR_OK)
				printf("      %-10s -> %s\n", "", c[i].fix);
		}
		printf("%s\n", failed ? "kinstr doctor: something a command needs is missing (FAIL above)" :
		       "kinstr doctor: ready");
	}
	return failed ? CLI_FAIL : CLI_OK;
}
