// SPDX-License-Identifier: GPL-2.0
/*
 * Reads of known sizes, for predicates on vfs_read's count: read_sizes N BIG M SMALL [E] reads BIG
 * bytes N times, then SMALL bytes M times, from /dev/zero; then E reads of /dev/null opened
 * write-only, each failing (vfs_read returns -EBADF).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long n, m, big, small, e, i;
	int fd;

	if (argc != 5 && argc != 6)
		return 2;
	n = atol(argv[1]), big = atol(argv[2]), m = atol(argv[3]), small = atol(argv[4]);
	e = argc == 6 ? atol(argv[5]) : 0;
	if (big < 1 || small < 1 || big > (long)sizeof(buf) || small > (long)sizeof(buf))
		return 2;
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (read(fd, buf, big) != big)
			return 1;
	for (i = 0; i < m; i++)
		if (read(fd, buf, small) != small)
			return 1;
	close(fd);
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	for (i = 0; i < e; i++)
		if (read(fd, buf, small) != -1)
			return 1;
	return 0;
}
