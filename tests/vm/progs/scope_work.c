// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads for scope.t, each making a known number of system calls:
 *   scope_work nap N MS        N sleeps of MS milliseconds (clock_nanosleep)
 *   scope_work wait FILE N     wait (polling) until FILE exists, then call getppid() N times: a
 *                              process started before kinstr, whose calls all come after it
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	long i, n;

	if (argc == 4 && !strcmp(argv[1], "nap")) {
		long ms = atol(argv[3]);
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

		n = atol(argv[2]);
		for (i = 0; i < n; i++)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		printf("slept %ld times\n", n);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "wait")) {
		const struct timespec poll = { .tv_nsec = 10000000L };

		while (stat(argv[2], &st))
			nanosleep(&poll, NULL);
		n = atol(argv[3]);
		for (i = 0; i < n; i++)
			syscall(SYS_getppid);
		printf("getppid called %ld times\n", n);
		return 0;
	}
	fprintf(stderr, "usage: scope_work nap N MS | wait FILE N\n");
	return 2;
}
