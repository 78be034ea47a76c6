// SPDX-License-Identifier: GPL-2.0
/*
 * How long a command takes to its first output, and to its end (bench/run-startup).
 *   first_output [-o FILE] -- CMD [ARG...]
 * Runs CMD with its stdout and stderr on one pipe, and prints "FIRST_S TOTAL_S STATUS": the seconds
 * (CLOCK_MONOTONIC) from just before fork() to the first byte CMD wrote on either, and to its exit;
 * FIRST_S is -1 when it wrote nothing. What it wrote goes to FILE (default /dev/null).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *out = "/dev/null";
	double t0, first = -1;
	char buf[65536];
	int p[2], fd, st, i = 1;
	pid_t pid;
	ssize_t n;

	if (i + 1 < argc && !strcmp(argv[i], "-o")) {
		out = argv[i + 1];
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: first_output [-o FILE] -- CMD [ARG...]\n");
		return 2;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || pipe2(p, O_CLOEXEC)) {
		perror("first_output");
		return 2;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		perror("first_output: fork");
		return 2;
	}
	if (!pid) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(argv[i], argv + i);
		fprintf(stderr, "first_output: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("first_output: read");
			return 2;
		}
		if (first < 0)
			first = now() - t0;
		if (write(fd, buf, (size_t)n) != n) {
			perror("first_output: write");
			return 2;
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("first_output: waitpid");
			return 2;
		}
	printf("%.4f %.4f %d\n", first, now() - t0, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
