// SPDX-License-Identifier: GPL-2.0
/*
 * Calls with arguments a trace test can check: prints its tid and parent's pid, then calls
 * getppid() N times, lseek(fd, 1000 + i, SEEK_SET) for i < 100, and opens
 * /tmp/kinstr-trace-probe 10 times.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1000;
	int fd;

	printf("tid %ld ppid %ld\n", (long)syscall(SYS_gettid), (long)syscall(SYS_getppid));
	fflush(stdout);
	for (i = 1; i < n; i++)		/* the printf's call above was the first */
		syscall(SYS_getppid);
	fd = open("/tmp/kinstr-trace-probe", O_CREAT | O_RDWR, 0600);
	if (fd < 0)
		return 1;
	for (i = 0; i < 100; i++)
		lseek(fd, 1000 + i, SEEK_SET);
	close(fd);
	for (i = 1; i < 10; i++) {	/* the O_CREAT open above was the first */
		fd = open("/tmp/kinstr-trace-probe", O_RDONLY);
		if (fd < 0)
			return 1;
		close(fd);
	}
	return 0;
}
