// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic workload that reaches broadly into the kernel, for the cover sweep's kprobe
 * reference (tests/vm/progs/sweep.py --mode cover): N rounds of exactly the same system calls,
 * each round: getppid, a 1-byte read of /dev/zero, open and close of /dev/null, 64 bytes through
 * a pipe, through an AF_UNIX socket pair, through a TCP connection and a UDP socket over
 * loopback, stat, a 512-byte pwrite, fsync and pread of a file in /tmp, an anonymous page
 * mapped, touched and unmapped, a 10 us nanosleep, a fork whose child exits at once, and a fork
 * and exec of /bin/true. The set-up before the rounds and the clean-up after are the same for
 * every N, so what differs between two N is the rounds alone.
 *   ref_workload N
 */
#include <arpa/inet.h>
#include <linux/membarrier.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
	perror(what);
	exit(1);
}

/* 64 bytes out of w and back in from r, whole. */
static void through(int w, int r, char *buf)
{
	size_t got = 0;
	ssize_t n;

	if (write(w, buf, 64) != 64)
		die("write");
	while (got < 64) {
		n = read(r, buf + got, 64 - got);
		if (n <= 0)
			die("read");
		got += (size_t)n;
	}
}

int main(int argc, char **argv)
{
	long i, n = argc == 2 ? atol(argv[1]) : 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	char buf[512], path[] = "/tmp/ref_workload.XXXXXX";
	int zero, p[2], sp[2], ls, tc, ts, us, file, one = 1;
	struct timespec ts10 = { 0, 10000 };
	struct stat st;

	if (n <= 0) {
		fprintf(stderr, "usage: ref_workload N\n");
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	zero = open("/dev/zero", O_RDONLY);
	file = mkstemp(path);
	if (zero < 0 || file < 0 || pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		die("setup");
	unlink(path);
	/* TCP: a listener on an ephemeral loopback port, one connection, accepted */
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &al))
		die("tcp listen");
	tc = socket(AF_INET, SOCK_STREAM, 0);
	if (tc < 0 || connect(tc, (struct sockaddr *)&a, sizeof(a)) || (ts = accept(ls, NULL, NULL)) < 0)
		die("tcp connect");
	setsockopt(tc, IPPROTO_TCP, 1 /* TCP_NODELAY */, &one, sizeof(one));
	/* UDP: one socket sending to itself */
	a.sin_port = 0;
	us = socket(AF_INET, SOCK_DGRAM, 0);
	al = sizeof(a);
	if (us < 0 || bind(us, (struct sockaddr *)&a, sizeof(a)) || getsockname(us, (struct sockaddr *)&a, &al))
		die("udp");
	for (i = 0; i < n; i++) {
		char *m;
		pid_t c;
		int status;

		syscall(SYS_getppid);
		if (read(zero, buf, 1) != 1)
			die("read /dev/zero");
		close(open("/dev/null", O_RDONLY));
		through(p[1], p[0], buf);
		through(sp[0], sp[1], buf);
		through(tc, ts, buf);
		if (sendto(us, buf, 64, 0, (struct sockaddr *)&a, sizeof(a)) != 64 || recv(us, buf, 64, 0) != 64)
			die("udp round");
		if (stat("/tmp", &st))
			die("stat");
		if (pwrite(file, buf, 512, 0) != 512 || fsync(file) || pread(file, buf, 512, 0) != 512)
			die("file");
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			die("mmap");
		m[0] = 1;
		munmap(m, 4096);
		nanosleep(&ts10, NULL);
		c = fork();
		if (c == 0)
			_exit(0);
		if (c < 0 || waitpid(c, &status, 0) != c)
			die("fork");
		c = fork();
		if (c == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (c < 0 || waitpid(c, &status, 0) != c || status)
			die("exec");
	}
	close(tc);
	close(ts);
	close(ls);
	close(us);
	/*
	 * What the rounds left to RCU callbacks (the children's task structs: __put_task_struct runs
	 * from delayed_put_task_struct) is done before the run ends, whatever the timing: two grace
	 * periods (MEMBARRIER_CMD_GLOBAL is a synchronize_rcu()), then a moment for the callbacks.
	 * Else a free falls inside or outside the count by chance, the same under cover and kprobes.
	 */
	syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	return 0;
}
