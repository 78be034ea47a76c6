// SPDX-License-Identifier: GPL-2.0
/*
 * Random requests against /dev/kinstr: random commands (ours and others), sizes, fields and
 * pointers, with INSTALL requests aimed at real kernel text. Nothing may be accepted that
 * changes the text (checked by the caller with textsum), and the log must stay clean.
 *   ioctl_fuzz ITERATIONS [SEED]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/kernel.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	static const unsigned int cmds[] = { KINSTR_IOC_VERSION, KINSTR_IOC_DEBUG_INFO, KINSTR_IOC_READ,
					     KINSTR_IOC_CHECK, KINSTR_IOC_LAYOUT, KINSTR_IOC_ALLOC,
					     KINSTR_IOC_INSTALL, KINSTR_IOC_REMOVE, KINSTR_IOC_COUNTS,
					     KINSTR_IOC_HELD, KINSTR_IOC_TALLY_CREATE, KINSTR_IOC_TALLY_READ,
					     KINSTR_IOC_SPAN_CREATE, KINSTR_IOC_SPAN_READ,
					     KINSTR_IOC_TIMER_BY,
					     _IO(KINSTR_IOC_MAGIC, 0x14), _IO('T', 1) };
	long n = argc > 1 ? atol(argv[1]) : 100000, i, accepted = 0, installed = 0;
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	static unsigned char buf[8192], probes[64 * sizeof(struct kinstr_probe)], out[4096];
	uint32_t areas[16] = { 0 };
	int fd;

	if (argc > 2)
		rng = strtoull(argv[2], NULL, 0) | 1;
	if (!k) {
		perror("setup");
		return 1;
	}
	fd = open(KINSTR_DEVICE, O_RDWR);
	for (i = 0; i < n; i++) {
		unsigned int cmd = cmds[rnd() % (sizeof(cmds) / sizeof(cmds[0]))];
		uint32_t size = rnd() % 4 ? (uint32_t)(rnd() % 256) : (uint32_t)rnd();
		const struct kinstr_func *f = kinstr_kernel__func(k, rnd() % kinstr_kernel__func_cnt(k));
		size_t j;
		void *arg = buf;

		for (j = 0; j < 256; j += 8)
			*(uint64_t *)(buf + j) = rnd() % 3 ? rnd() % 4096 : rnd();
		memcpy(buf, &size, 4);
		/* point the pointer fields at our buffers most of the time */
		if (rnd() % 2)
			*(uint64_t *)(buf + 16) = (uintptr_t)(rnd() % 2 ? (void *)probes : (void *)out);
		if (rnd() % 2)
			*(uint64_t *)(buf + 8) = f->addr + rnd() % (f->size + 1);
		if (cmd == KINSTR_IOC_INSTALL || cmd == KINSTR_IOC_REMOVE || cmd == KINSTR_IOC_COUNTS)
			memcpy(buf + 4, &areas[rnd() % 16], 4);
		for (j = 0; j < sizeof(probes); j += 8) {
			/* half the probes aim at real text with (usually wrong) random bytes */
			uint64_t v = rnd();

			if (j % sizeof(struct kinstr_probe) == 0 && rnd() % 2)
				v = f->addr + rnd() % (f->size + 1);
			memcpy(probes + j, &v, 8);
		}
		if (rnd() % 50 == 0)
			arg = (void *)(uintptr_t)(rnd() % 2 ? 0 : rnd());
		if (ioctl(fd, cmd, arg) == 0) {
			accepted++;
			if (cmd == KINSTR_IOC_ALLOC)
				areas[rnd() % 16] = ((struct kinstr_alloc *)buf)->area;
			if (cmd == KINSTR_IOC_INSTALL)
				installed++;
		}
		if (i % 5000 == 4999) {	/* drop everything this fd allocated */
			close(fd);
			fd = open(KINSTR_DEVICE, O_RDWR);
			memset(areas, 0, sizeof(areas));
		}
	}
	close(fd);
	printf("%ld requests, %ld accepted, %ld installs accepted\n", n, accepted, installed);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return installed ? 1 : 0;
}
