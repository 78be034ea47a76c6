/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host unit tests: each tests/unit/test_*.c is one program; each case prints one line
 *   PASS name            FAIL name: why            SKIP name: why
 * which tests/run counts. The program exits non-zero when any case failed.
 *
 *   static void t_something(void) { CHECK(x == 1, "x is %d", x); }
 *   int main(void) { RUN(t_something); return check_done(); }
 */
#ifndef KINSTR_TESTS_CHECK_H
#define KINSTR_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failed_total;
static int check_case_failed;
static const char *check_case_skip;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			if (!check_case_failed)                                       \
				printf("FAIL %s: ", check_case_name);                 \
			else                                                          \
				printf("     also: ");                                \
			printf("%s:%d: %s: ", __FILE__, __LINE__, #cond);             \
			printf(__VA_ARGS__);                                          \
			printf("\n");                                                 \
			check_case_failed = 1;                                        \
		}                                                                     \
	} while (0)

/* Skip the current case with a reason (only for a missing optional input, never to hide a bug). */
#define SKIP(why) do { check_case_skip = (why); return; } while (0)

static const char *check_case_name = "";

#define RUN(fn)                                                                       \
	do {                                                                          \
		check_case_name = #fn;                                                \
		check_case_failed = 0;                                                \
		check_case_skip = NULL;                                               \
		fn();                                                                 \
		if (check_case_failed)                                                \
			check_failed_total++;                                         \
		else if (check_case_skip)                                             \
			printf("SKIP %s: %s\n", #fn, check_case_skip);                \
		else                                                                  \
			printf("PASS %s\n", #fn);                                     \
		fflush(stdout);                                                       \
	} while (0)

static inline int check_done(void)
{
	return check_failed_total ? 1 : 0;
}

#endif
