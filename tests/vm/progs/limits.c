// SPDX-License-Identifier: GPL-2.0
/*
 * The module's resource limits, hit on purpose. Run with the module's parameters set small
 * (tests/vm/tests/safety.t sets them through /sys/module/kinstr/parameters):
 *   - ALLOC of one slot in a loop (it once ended in "Kernel panic - System is deadlocked on
 *     memory") stops with EDQUOT after exactly max_probes_per_fd slots;
 *   - more descriptors stop with ENOSPC at max_probes in total, not before;
 *   - TRACE_CREATE beyond max_trace_bytes_per_fd, TIMERS_CREATE beyond max_timers_per_fd: EDQUOT;
 *   - closing everything gives every charge back (KINSTR_IOC_LIMITS reads 0 in use).
 *   limits
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/kinstr.h>

#define MAXFD 64

static int failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

static int alloc(int fd, uint32_t count)
{
	struct kinstr_alloc al = { .size = sizeof(al), .count = count };

	return ioctl(fd, KINSTR_IOC_ALLOC, &al) < 0 ? -errno : 0;
}

static int get_limits(struct kinstr_limits *l)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	int err = dev ? kinstr_dev__limits(dev, l) : -errno;

	kinstr_dev__close(dev);
	return err;
}

int main(void)
{
	struct kinstr_limits l;
	uint64_t per_fd, total, n = 0, got = 0;
	int fds[MAXFD], nfd = 0, fd, err = 0, i;
	char what[256];

	if (get_limits(&l)) {
		perror("KINSTR_IOC_LIMITS");
		return 1;
	}
	per_fd = l.max_probes_per_fd;
	total = l.max_probes;
	printf("limits: %llu probes per descriptor, %llu in all; %llu trace bytes per descriptor; "
	       "%llu timers per descriptor; in use: %llu probes\n", (unsigned long long)per_fd,
	       (unsigned long long)total, (unsigned long long)l.max_trace_bytes_per_fd,
	       (unsigned long long)l.max_timers_per_fd, (unsigned long long)l.probes);
	if (per_fd > 100000 || total > 4 * per_fd + 4096 || l.probes) {
		printf("FAIL set small limits first (and no other descriptor holding probes)\n");
		return 1;
	}

	/* 1. the loop that used to exhaust memory: one slot at a time */
	fd = open(KINSTR_DEVICE, O_RDWR);
	while (!(err = alloc(fd, 1)) && n <= per_fd)
		n++;
	snprintf(what, sizeof(what), "ALLOC x1 in a loop: %llu slots, then %s (want %llu, EDQUOT)",
		 (unsigned long long)n, strerror(-err), (unsigned long long)per_fd);
	check(n == per_fd && err == -EDQUOT, what);
	close(fd);

	/* 2. descriptors side by side: each up to its own limit, then all together stop at total */
	for (nfd = 0; nfd < MAXFD; nfd++) {
		uint64_t mine = 0;

		fds[nfd] = open(KINSTR_DEVICE, O_RDWR);
		while (mine < per_fd && !(err = alloc(fds[nfd], 4096 < per_fd - mine ? 4096 : per_fd - mine)))
			mine += 4096 < per_fd - mine ? 4096 : per_fd - mine;
		got += mine;
		if (err == -ENOSPC)
			break;
		err = alloc(fds[nfd], 1);
		if (err != -EDQUOT) {
			snprintf(what, sizeof(what), "descriptor %d: one slot past its %llu: %s, want EDQUOT", nfd,
				 (unsigned long long)per_fd, err ? strerror(-err) : "accepted");
			check(0, what);
			break;
		}
	}
	snprintf(what, sizeof(what), "%d descriptors: %llu slots, then %s (want ENOSPC within %llu of %llu)", nfd + 1,
		 (unsigned long long)got, strerror(-err), (unsigned long long)4096, (unsigned long long)total);
	check(err == -ENOSPC && got <= total && got + 4096 > total, what);
	if (!get_limits(&l)) {
		snprintf(what, sizeof(what), "in use while held: %llu slots, want %llu", (unsigned long long)l.probes,
			 (unsigned long long)got);
		check(l.probes == got, what);
	}
	for (i = 0; i <= nfd && i < MAXFD; i++)
		close(fds[i]);

	/* 3. a trace buffer beyond the descriptor's bound, timers beyond theirs */
	fd = open(KINSTR_DEVICE, O_RDWR);
	{
		struct kinstr_trace_create tc = { .size = sizeof(tc) };
		struct kinstr_timers_create tm = { .size = sizeof(tm), .count = l.max_timers_per_fd + 1 };

		tc.subbuf_size = 1 << 20;
		tc.num_subbufs = 2;
		while (tc.num_subbufs < 4096 && (uint64_t)tc.subbuf_size * tc.num_subbufs * 2 <= l.max_trace_bytes_per_fd)
			tc.num_subbufs *= 2;	/* the first size over the bound (on one CPU already) */
		err = ioctl(fd, KINSTR_IOC_TRACE_CREATE, &tc) < 0 ? -errno : 0;
		snprintf(what, sizeof(what), "TRACE_CREATE of %u x 1 MiB per CPU over %llu bytes: %s, want EDQUOT",
			 tc.num_subbufs, (unsigned long long)l.max_trace_bytes_per_fd, err ? strerror(-err) : "accepted");
		check(err == -EDQUOT, what);
		if (l.max_timers_per_fd < KINSTR_TIMERS_MAX) {
			err = ioctl(fd, KINSTR_IOC_TIMERS_CREATE, &tm) < 0 ? -errno : 0;
			snprintf(what, sizeof(what), "TIMERS_CREATE of %u: %s, want EDQUOT", tm.count,
				 err ? strerror(-err) : "accepted");
			check(err == -EDQUOT, what);
		}
	}
	close(fd);

	/* 4. every charge given back (the worker frees what it holds after quiescence) */
	{
		struct kinstr_dev *dev = kinstr_dev__open(NULL);

		if (dev)
			kinstr_dev__sync(dev);
		kinstr_dev__close(dev);
	}
	if (!get_limits(&l)) {
		snprintf(what, sizeof(what), "in use after close: %llu probes, %llu trace bytes, %llu timers, want 0",
			 (unsigned long long)l.probes, (unsigned long long)l.trace_bytes, (unsigned long long)l.timers);
		check(!l.probes && !l.trace_bytes && !l.timers, what);
	}
	printf("limits: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
