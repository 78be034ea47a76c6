// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic syscall workload for the code cache's counts (cover.t): N times getppid(), a
 * 1-byte read of /dev/zero and an open and close of /dev/null, nothing else in the loop.
 *   cover_workload N   (or COVER_WORKLOAD_N=N cover_workload)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* N from the environment when not given (kinstr batch passes no quoted -c 'CMD ARG') */
	long i, n = argc == 2 ? atol(argv[1]) : getenv("COVER_WORKLOAD_N") ? atol(getenv("COVER_WORKLOAD_N")) : 0;
	int zero = open("/dev/zero", O_RDONLY);
	char c;

	if (n <= 0 || zero < 0) {
		fprintf(stderr, "usage: cover_workload N (or COVER_WORKLOAD_N=N cover_workload)\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		int fd;

		getppid();
		if (read(zero, &c, 1) != 1)
			return 1;
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			return 1;
		close(fd);
	}
	return 0;
}
