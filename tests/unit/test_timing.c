// SPDX-License-Identifier: GPL-2.0
/* Timing results (lib/results/timing.c): call sites summed by callee, and the table's sort keys. */
#include <string.h>

#include <kinstr/timing.h>
#include "check.h"

static void t_by_callee(void)
{
	static const struct kinstr_func a = { .name = "a" }, b = { .name = "b" };
	const struct kinstr_callsite sites[] = {
#define SITE(a_, c_, t_, timed_) { .addr = (a_), .callee = (c_), .timer = (t_), .timed = (timed_) }
		SITE(0x10, &a, 0, true), SITE(0x20, &b, 1, true), SITE(0x30, &a, 2, true),
		SITE(0x40, NULL, 3, true), SITE(0x50, &b, 4, false), SITE(0x60, NULL, 5, true),
#undef SITE
	};
	struct kinstr_timer_stats st[6];
	struct kinstr_callee_time rows[6];
	unsigned int n, untimed, i;

	memset(st, 0, sizeof(st));
	for (i = 0; i < 6; i++) {
		st[i].calls = i + 1;
		st[i].wall_ns = 100 * (i + 1);
	}
	n = kinstr_timing__by_callee(sites, 6, st, rows, &untimed);
	/* a: sites 0 and 2 (400 ns), b: site 1 (200), indirect: 3 and 5 (1000); site 4 not timed */
	CHECK(n == 3 && untimed == 1, "%u rows, %u untimed", n, untimed);
	CHECK(rows[0].callee == NULL && rows[0].wall_ns == 1000 && rows[0].calls == 10, "first %s %llu",
	      rows[0].callee ? rows[0].callee->name : "(indirect)", (unsigned long long)rows[0].wall_ns);
	CHECK(rows[1].callee == &a && rows[1].wall_ns == 400 && rows[1].calls == 4, "second %llu",
	      (unsigned long long)rows[1].wall_ns);
	CHECK(rows[2].callee == &b && rows[2].wall_ns == 200, "third %llu", (unsigned long long)rows[2].wall_ns);
}

static void t_keys(void)
{
	struct kinstr_timer_stats s;

	memset(&s, 0, sizeof(s));
	s.calls = 10;
	s.recursive = 2;
	s.wall_ns = 800;
	s.oncpu_ns = 500;
	s.wall_max = 300;
	CHECK(kinstr_timing__key(&s, "wall") == 800 && kinstr_timing__key(&s, "oncpu") == 500 &&
	      kinstr_timing__key(&s, "calls") == 10 && kinstr_timing__key(&s, "mean") == 100 &&
	      kinstr_timing__key(&s, "max") == 300, "keys");
	s.recursive = 10;
	CHECK(kinstr_timing__key(&s, "mean") == 0, "mean of no outermost call");
	CHECK(kinstr_timing__key_known("wall") && kinstr_timing__key_known("max") && !kinstr_timing__key_known("cpu") &&
	      !kinstr_timing__key_known(""), "known keys");
}

int main(void)
{
	RUN(t_by_callee);
	RUN(t_keys);
	return check_done();
}
