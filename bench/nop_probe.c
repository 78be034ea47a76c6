// SPDX-License-Identifier: GPL-2.0
/*
 * No-op probes (KINSTR_ACTION_NOP: the splice alone, nothing counted, nothing called), for
 * bench/run-splice's row of a probe's bare cost. Needs /dev/kinstr (ABI 0.15).
 *
 *   nop_probe SPEC...
 *	Plans SPEC... (kinstr count's grammar), installs them as no-op probes (returning with the
 *	jumps in), prints "nop: N probes in" and waits for SIGINT or SIGTERM; then removes them.
 *	Exits 1 with a line starting "FAIL" when a step fails.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

int main(int argc, char **argv)
{
	struct kinstr_plan_opts po = { .sz = sizeof(po) };
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	struct kinstr_probeset *ps = k ? kinstr_probeset__new(dev, k) : NULL;
	struct kinstr_plan *pl = ps ? kinstr_plan__new(ps, &po) : NULL;
	struct kinstr_why why;
	size_t i;
	int a;

	if (!pl) {
		printf("FAIL: cannot open /dev/kinstr and the live kernel\n");
		return 1;
	}
	for (a = 1; a < argc; a++)
		if (kinstr_plan__add_spec(pl, argv[a], &why, NULL)) {
			printf("FAIL: %s: %s\n", argv[a], why.msg);
			return 1;
		}
	kinstr_plan__free(pl);
	for (i = 0; i < kinstr_probeset__cnt(ps); i++)
		kinstr_probeset__set_action(ps, i, KINSTR_ACTION_NOP);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!kinstr_probeset__cnt(ps) || kinstr_probeset__install(ps, &why)) {
		printf("FAIL: %s\n", kinstr_probeset__cnt(ps) ? why.msg : "no probe planned");
		return 1;
	}
	printf("nop: %zu probes in\n", kinstr_probeset__cnt(ps));
	fflush(stdout);
	while (!stop)
		pause();
	kinstr_probeset__free(ps);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return 0;
}
