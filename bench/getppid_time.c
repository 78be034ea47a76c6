// SPDX-License-Identifier: GPL-2.0
/*
 * ns per getppid() syscall over N calls, best of R runs: the loop the per-hit costs are read from.
 *   getppid_time [N [R [SETS]]]: SETS lines (default 1), each the best of its own R runs (so that a
 *   tool's -c CMD can take the two "with" measurements of an A B B A row in one process).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, i;
	int runs = argc > 2 ? atoi(argv[2]) : 5, sets = argc > 3 ? atoi(argv[3]) : 1, r, s;

	for (s = 0; s < sets; s++) {
		double best = 1e30;

		for (r = 0; r < runs; r++) {
			struct timespec a, b;
			double ns;

			clock_gettime(CLOCK_MONOTONIC, &a);
			for (i = 0; i < n; i++)
				syscall(SYS_getppid);
			clock_gettime(CLOCK_MONOTONIC, &b);
			ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
			if (ns < best)
				best = ns;
		}
		printf("%.1f\n", best);
		fflush(stdout);
	}
	return 0;
}
