// SPDX-License-Identifier: GPL-2.0
/*
 * ns per pread64() syscall over N calls, best of R runs: the loop the tracer's per-event costs are read from
 * (bench/run-trace). Reads COUNT bytes at offset i (the loop counter) from an empty memfd (shmem), so every
 * call returns 0 at once. In Debian's 6.1 ksys_pread64 is inlined into __x64_sys_pread64, which calls
 * vfs_read(file, buf, count, &pos): four arguments the loop sets (fd's file, buf, count, a pointer to i).
 *   pread_time [N [RUNS [COUNT]]]      prints the best ns/call; -v first: also "fd F buf 0x... count C" on stderr
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[4096];
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	char **av = argv + verbose;
	int ac = argc - verbose;
	long n = ac > 1 ? atol(av[1]) : 200000, i;
	int runs = ac > 2 ? atoi(av[2]) : 5, r;
	long count = ac > 3 ? atol(av[3]) : 64;
	double best = 1e30;
	int fd = memfd_create("pread_time", 0);

	if (fd < 0 || count < 0 || count > (long)sizeof(buf)) {
		perror("memfd_create");
		return 1;
	}
	if (verbose)
		fprintf(stderr, "fd %d buf %p count %ld pos 0..%ld\n", fd, (void *)buf, count, n - 1);
	for (r = 0; r < runs; r++) {
		struct timespec a, b;
		double ns;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < n; i++)
			if (syscall(SYS_pread64, fd, buf, count, i) != 0) {
				perror("pread64");
				return 1;
			}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
		if (ns < best)
			best = ns;
	}
	printf("%.1f\n", best);
	return 0;
}
