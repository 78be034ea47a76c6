// SPDX-License-Identifier: GPL-2.0
/*
 * The no-op action (KINSTR_ACTION_NOP, tests/vm/tests/count.t), through libkinstr: nop_check N SPEC...
 * plans SPEC... (kinstr count's grammar), installs them as counting probes and runs N getppid()
 * calls (each probe must see N hits: the workload runs every site), then as no-op probes: each site
 * spliced (a jmp, an int3 or ftrace's call in the live text), N more calls returning what they did
 * before, no probe counting one, and once removed every site's bytes back as they were.
 * Prints one line per check; exits 1 at the first that fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); exit(1); } while (0)

static struct kinstr_dev *dev;
static struct kinstr_kernel *k;

/* SPEC... planned into a new set, each probe given action. */
static struct kinstr_probeset *planned(char **specs, int n, unsigned int action)
{
	struct kinstr_plan_opts po = { .sz = sizeof(po) };
	struct kinstr_probeset *ps = kinstr_probeset__new(dev, k);
	struct kinstr_plan *pl = ps ? kinstr_plan__new(ps, &po) : NULL;
	struct kinstr_why why;
	size_t i;

	if (!pl)
		FAIL("cannot make a plan");
	for (i = 0; i < (size_t)n; i++)
		if (kinstr_plan__add_spec(pl, specs[i], &why, NULL))
			FAIL("%s: %s", specs[i], why.msg);
	kinstr_plan__free(pl);
	for (i = 0; i < kinstr_probeset__cnt(ps); i++)
		if (kinstr_probeset__set_action(ps, i, action))
			FAIL("kinstr_probeset__set_action(%zu, %u)", i, action);
	return ps;
}

static void install(struct kinstr_probeset *ps)
{
	struct kinstr_why why;

	if (kinstr_probeset__install(ps, &why))
		FAIL("install: %s", why.msg);
}

/* n getppid() calls, each returning ppid. */
static void calls(long n, long ppid)
{
	long i, r;

	for (i = 0; i < n; i++) {
		r = syscall(SYS_getppid);
		if (r != ppid)
			FAIL("getppid() gave %ld, not %ld", r, ppid);
	}
}

static const char *where(const struct kinstr_probe_info *in, char *buf, size_t len)
{
	snprintf(buf, len, "%s+0x%llx", in->func->name, (unsigned long long)(in->addr - in->func->addr));
	return buf;
}

int main(int argc, char **argv)
{
	struct kinstr_probeset *ps;
	struct kinstr_probe_info info[64];
	uint8_t orig[64][KINSTR_MAX_DISPLACED], live[KINSTR_MAX_DISPLACED];
	uint64_t counts[64];
	long n = argc > 2 ? atol(argv[1]) : 0, ppid = syscall(SYS_getppid);
	size_t i, cnt;
	char w[160];

	if (n <= 0)
		FAIL("usage: nop_check N SPEC...");
	dev = kinstr_dev__open(NULL);
	k = dev ? kinstr_kernel__open_live(dev) : NULL;
	if (!k)
		FAIL("cannot open /dev/kinstr and the live kernel");
	if (!kinstr_dev__has(dev, KINSTR_FEAT_NOP))
		FAIL("the module does not announce KINSTR_FEAT_NOP");

	/* counting first: every site runs on the workload */
	ps = planned(argv + 2, argc - 2, KINSTR_ACTION_COUNT);
	cnt = kinstr_probeset__cnt(ps);
	if (!cnt || cnt > 64)
		FAIL("%zu probes planned", cnt);
	for (i = 0; i < cnt; i++) {
		info[i] = *kinstr_probeset__info(ps, i);
		if (kinstr_dev__read(dev, info[i].addr, orig[i], info[i].displaced_len))
			FAIL("reading the text: %s", strerror(errno));
	}
	install(ps);
	calls(n, ppid);
	if (kinstr_probeset__counts(ps, counts))
		FAIL("kinstr_probeset__counts");
	for (i = 0; i < cnt; i++)
		if (counts[i] != (uint64_t)n)
			FAIL("count probe %s: %llu hits of %ld calls", where(kinstr_probeset__info(ps, i), w, sizeof(w)),
			     (unsigned long long)counts[i], n);
	printf("count: %zu probes, %ld hits each\n", cnt, n);
	kinstr_probeset__free(ps);

	/* then no-op probes on the same sites */
	ps = planned(argv + 2, argc - 2, KINSTR_ACTION_NOP);
	install(ps);
	for (i = 0; i < cnt; i++) {
		const struct kinstr_probe_info *in = kinstr_probeset__info(ps, i);
		/* the splice: a jmp (install waits for the worker's), an int3, or ftrace's call */
		uint8_t want = in->kind == KINSTR_PROBE_JUMP ? 0xe9 : in->kind == KINSTR_PROBE_TRAP ? 0xcc : 0xe8;

		if (in->addr != info[i].addr)
			FAIL("planned again at 0x%llx, not 0x%llx", (unsigned long long)in->addr,
			     (unsigned long long)info[i].addr);
		if (kinstr_dev__read(dev, in->addr, live, 1))
			FAIL("reading the text: %s", strerror(errno));
		if (live[0] != want || in->inline_count || in->saves_flags)
			FAIL("nop probe %s (%s): first byte %02x, not %02x; inline %d, saves flags %d", where(in, w, sizeof(w)),
			     kinstr_probe_kind__str(in->kind), live[0], want, in->inline_count, in->saves_flags);
		printf("installed: %s %s, first byte %02x\n", where(in, w, sizeof(w)), kinstr_probe_kind__str(in->kind),
		       live[0]);
	}
	calls(n, ppid);
	if (kinstr_probeset__counts(ps, counts))
		FAIL("kinstr_probeset__counts");
	for (i = 0; i < cnt; i++)
		if (counts[i])
			FAIL("nop probe %s counted %llu hits", where(kinstr_probeset__info(ps, i), w, sizeof(w)),
			     (unsigned long long)counts[i]);
	printf("nop: %ld calls, getppid() unchanged, no probe counted\n", n);
	kinstr_probeset__free(ps);	/* removes them */
	if (kinstr_dev__sync(dev))
		FAIL("kinstr_dev__sync");
	for (i = 0; i < cnt; i++)
		if (kinstr_dev__read(dev, info[i].addr, live, info[i].displaced_len) ||
		    memcmp(live, orig[i], info[i].displaced_len))
			FAIL("%s: the text is not restored", where(&info[i], w, sizeof(w)));
	printf("removed: the text of all %zu sites restored\n", cnt);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return 0;
}
