// SPDX-License-Identifier: GPL-2.0
/* Call getppid() exactly N times (the syscall itself, never a cached libc value). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1000;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("getppid called %ld times\n", n);
	return 0;
}
