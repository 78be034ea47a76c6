// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* /dev/kinstr: open it, ask it things. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/kinstr.h>

struct kinstr_dev {
	int fd;
};

const char *kinstr__version(void)
{
	return KINSTR_VERSION;
}

struct kinstr_dev *kinstr_dev__open(const char *path)
{
	struct kinstr_dev *dev;
	int fd, err;

	fd = open(path ? path : KINSTR_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	dev->fd = fd;
	return dev;
}

void kinstr_dev__close(struct kinstr_dev *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

int kinstr_dev__fd(const struct kinstr_dev *dev)
{
	return dev->fd;
}

const char *kinstr_dev__open_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return "the kinstr module is not loaded: load it with 'insmod kmod/kinstr.ko' "
		       "(from the build tree) or 'modprobe kinstr' (installed)";
	case EACCES:
	case EPERM:
		return "kinstr needs root (CAP_SYS_ADMIN) to open " KINSTR_DEVICE;
	default:
		return "cannot open " KINSTR_DEVICE;
	}
}

static int dev_ioctl(struct kinstr_dev *dev, unsigned long cmd, void *arg)
{
	if (ioctl(dev->fd, cmd, arg) < 0)
		return -errno;
	return 0;
}

int kinstr_dev__version(struct kinstr_dev *dev, struct kinstr_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	return dev_ioctl(dev, KINSTR_IOC_VERSION, v);
}

int kinstr_dev__debug_info(struct kinstr_dev *dev, struct kinstr_debug_info *d)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	return dev_ioctl(dev, KINSTR_IOC_DEBUG_INFO, d);
}
