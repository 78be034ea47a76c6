// SPDX-License-Identifier: GPL-2.0
/*
 * Exercise /dev/kinstr's struct-size rules from user space (run in the guest, module loaded):
 * each line printed is "ok ..." or "not ok ..."; exit 1 on any "not ok".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <uapi/linux/kinstr.h>

static int failed;

static void expect(int cond, const char *what)
{
	printf("%s %s\n", cond ? "ok" : "not ok", what);
	failed |= !cond;
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int main(void)
{
	unsigned char big[256];
	struct kinstr_version v;
	int fd, err;
	size_t i;

	fd = open(KINSTR_DEVICE, O_RDWR);
	if (fd < 0) {
		perror(KINSTR_DEVICE);
		return 1;
	}

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	err = ioc(fd, KINSTR_IOC_VERSION, &v);
	expect(err == 0 && v.size == sizeof(v), "exact size accepted, size reports bytes filled");
	expect(v.module_version[0] != 0 && memchr(v.module_version, 0, sizeof(v.module_version)),
	       "module_version is a NUL-terminated string");

	memset(&v, 0, sizeof(v));
	v.size = 8;
	expect(ioc(fd, KINSTR_IOC_VERSION, &v) == -EINVAL, "size below the first version: EINVAL");
	v.size = 0;
	expect(ioc(fd, KINSTR_IOC_VERSION, &v) == -EINVAL, "zero size: EINVAL");

	/* a caller from the future: bytes beyond what the module knows come back zeroed */
	memset(big, 0xa5, sizeof(big));
	*(__u32 *)big = sizeof(big);
	err = ioc(fd, KINSTR_IOC_VERSION, big);
	expect(err == 0 && *(__u32 *)big == sizeof(struct kinstr_version),
	       "larger size accepted, size reports the module's size");
	for (i = sizeof(struct kinstr_version); i < sizeof(big) && big[i] == 0; i++)
		;
	expect(i == sizeof(big), "caller's bytes beyond the module's struct are zeroed");

	*(__u32 *)big = KINSTR_MAX_STRUCT_SIZE + 1;
	expect(ioc(fd, KINSTR_IOC_VERSION, big) == -E2BIG, "size beyond the maximum: E2BIG");

	expect(ioc(fd, KINSTR_IOC_VERSION, (void *)16) == -EFAULT, "bad pointer: EFAULT");
	expect(ioc(fd, _IO(KINSTR_IOC_MAGIC, 0x7f), &v) == -ENOTTY, "unknown ioctl: ENOTTY");
	expect(ioc(fd, _IO('T', 0x01), &v) == -ENOTTY, "foreign ioctl: ENOTTY");

	close(fd);
	return failed;
}
