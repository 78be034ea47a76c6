// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* /dev/kinstr: open it, ask it things. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <kinstr/kinstr.h>
#include "../opts.h"

struct kinstr_dev {
	int fd;
	int have_features;
	uint64_t features;	/* KINSTR_FEAT_*, asked once */
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

int kinstr_dev__ioctl(struct kinstr_dev *dev, unsigned long cmd, void *arg)
{
	if (ioctl(dev->fd, cmd, arg) < 0)
		return -errno;
	return 0;
}

int kinstr_dev__version(struct kinstr_dev *dev, struct kinstr_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	return kinstr_dev__ioctl(dev, KINSTR_IOC_VERSION, v);
}

int kinstr_dev__debug_info(struct kinstr_dev *dev, struct kinstr_debug_info *d)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	return kinstr_dev__ioctl(dev, KINSTR_IOC_DEBUG_INFO, d);
}

int kinstr_dev__read(struct kinstr_dev *dev, unsigned long long addr, void *buf, size_t len)
{
	struct kinstr_read r = {
		.size = sizeof(r),
		.addr = addr,
		.len = len,
		.buf = (unsigned long)buf,
	};

	return kinstr_dev__ioctl(dev, KINSTR_IOC_READ, &r);
}

int kinstr_dev__layout(struct kinstr_dev *dev, struct kinstr_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	return kinstr_dev__ioctl(dev, KINSTR_IOC_LAYOUT, l);
}

int kinstr_dev__module(struct kinstr_dev *dev, unsigned long long addr, struct kinstr_module_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->size = sizeof(*mi);
	mi->addr = addr;
	return kinstr_dev__ioctl(dev, KINSTR_IOC_MODULE, mi);
}

bool kinstr_dev__has(struct kinstr_dev *dev, uint64_t feature)
{
	struct kinstr_version v;

	if (!dev->have_features && !kinstr_dev__version(dev, &v)) {
		dev->features = v.features;
		dev->have_features = 1;
	}
	return (dev->features & feature) == feature;
}

const char *kinstr_feature__str(unsigned int bit)
{
	static const char *const names[] = {
		"debug_info", "read", "check", "layout", "probes", "module_text", "ftrace_probes",
		"ftrace_trace", "verify_only", "hit_path", "missed", "limits", "kprobe_fence", "code_cache", "disarm", "bpf",
		"check_only", "held", "nop", "scope", "pred", "tally", "span", "timer_by",
		"cache_timer", "laid_copy",
	};

	return bit < sizeof(names) / sizeof(names[0]) ? names[bit] : NULL;
}

struct kinstr_span64 *kinstr_dev__hit_path(struct kinstr_dev *dev, size_t *n, bool *incomplete)
{
	struct kinstr_hit_path h = { .size = sizeof(h) };
	struct kinstr_span64 *spans = NULL;
	int err;

	*n = 0;
	*incomplete = false;
	for (;;) {	/* ask for the count, then for that many (it is fixed after load) */
		h.spans = (uintptr_t)spans;
		err = kinstr_dev__ioctl(dev, KINSTR_IOC_HIT_PATH, &h);
		if (err) {
			free(spans);
			errno = -err;
			return NULL;
		}
		if (spans && h.count <= h.cap)
			break;
		free(spans);
		h.cap = h.count;
		h.count = 0;
		h.flags = 0;
		spans = calloc(h.cap ? h.cap : 1, sizeof(*spans));
		if (!spans)
			return NULL;
	}
	*n = h.count;
	*incomplete = h.flags & KINSTR_HIT_PATH_F_INCOMPLETE;
	return spans;
}

struct kinstr_held_range *kinstr_dev__held(struct kinstr_dev *dev, size_t *n)
{
	struct kinstr_held h = { .size = sizeof(h) };
	struct kinstr_held_range *r = NULL;
	int err;

	*n = 0;
	for (;;) {	/* ask for the count, then for that many (more if it grew meanwhile) */
		h.ranges = (uintptr_t)r;
		err = kinstr_dev__ioctl(dev, KINSTR_IOC_HELD, &h);
		if (err) {
			free(r);
			errno = -err;
			return NULL;
		}
		if (r && h.count <= *n)
			break;
		free(r);
		*n = h.count + 16;
		h.count = (uint32_t)*n;
		r = calloc(*n, sizeof(*r));
		if (!r)
			return NULL;
	}
	*n = h.count;
	return r;
}

int kinstr_dev__limits(struct kinstr_dev *dev, struct kinstr_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	return kinstr_dev__ioctl(dev, KINSTR_IOC_LIMITS, l);
}

int kinstr_dev__scope(struct kinstr_dev *dev, const struct kinstr_scope_opts *opts)
{
	struct kinstr_scope sc = { .size = sizeof(sc), .cgroup_fd = -1 };
	const char *comm = KINSTR_OPTS_GET(opts, comm, NULL), *cgroup = KINSTR_OPTS_GET(opts, cgroup, NULL);
	uint32_t self = (uint32_t)getpid();
	int ret;

	if (!KINSTR_OPTS_VALID(opts) || (comm && strlen(comm) >= sizeof(sc.comm)) ||
	    KINSTR_OPTS_GET(opts, npids, 0) > KINSTR_SCOPE_MAX_PIDS ||
	    KINSTR_OPTS_GET(opts, ntids, 0) > KINSTR_SCOPE_MAX_IDS || KINSTR_OPTS_GET(opts, ncpus, 0) > UINT32_MAX)
		return -EINVAL;
	if (KINSTR_OPTS_GET(opts, self, false) && !KINSTR_OPTS_GET(opts, npids, 0) &&
	    !KINSTR_OPTS_GET(opts, ntids, 0) && !comm && !cgroup && !KINSTR_OPTS_GET(opts, ncpus, 0))
		return 0;	/* every thread: no scope, no test in probe context */
	if (!kinstr_dev__has(dev, KINSTR_FEAT_SCOPE))
		return -EOPNOTSUPP;
	sc.flags = KINSTR_OPTS_GET(opts, follow, false) ? KINSTR_SCOPE_F_FOLLOW : 0;
	sc.pids = (unsigned long)KINSTR_OPTS_GET(opts, pids, NULL);
	sc.npids = (uint32_t)KINSTR_OPTS_GET(opts, npids, 0);
	sc.tids = (unsigned long)KINSTR_OPTS_GET(opts, tids, NULL);
	sc.ntids = (uint32_t)KINSTR_OPTS_GET(opts, ntids, 0);
	sc.cpus = (unsigned long)KINSTR_OPTS_GET(opts, cpus, NULL);
	sc.ncpus = (uint32_t)KINSTR_OPTS_GET(opts, ncpus, 0);
	if (!KINSTR_OPTS_GET(opts, self, false)) {
		sc.self = (unsigned long)&self;
		sc.nself = 1;
	}
	if (comm)
		memcpy(sc.comm, comm, strlen(comm));
	if (cgroup) {
		sc.cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sc.cgroup_fd < 0)
			return -errno;
	}
	ret = kinstr_dev__ioctl(dev, KINSTR_IOC_SCOPE, &sc);
	if (cgroup)
		close(sc.cgroup_fd);
	return ret;
}

int kinstr_dev__sync(struct kinstr_dev *dev)
{
	struct kinstr_sync sy = { .size = sizeof(sy) };

	return kinstr_dev__ioctl(dev, KINSTR_IOC_SYNC, &sy);
}

int kinstr_dev__check_flags(struct kinstr_dev *dev, struct kinstr_check_range *ranges, unsigned int count,
			    unsigned int flags)
{
	struct kinstr_check c = {
		.size = sizeof(c),
		.flags = flags,
		.ranges = (unsigned long)ranges,
		.count = count,
	};

	return kinstr_dev__ioctl(dev, KINSTR_IOC_CHECK, &c);
}

int kinstr_dev__check_only(struct kinstr_dev *dev, struct kinstr_check_range *ranges, unsigned int count,
			   unsigned int only)
{
	struct kinstr_check c = {
		.size = sizeof(c),
		.ranges = (unsigned long)ranges,
		.count = count,
		.only = only,
	};

	if (!kinstr_dev__has(dev, KINSTR_FEAT_CHECK_ONLY))
		return -EOPNOTSUPP;
	return kinstr_dev__ioctl(dev, KINSTR_IOC_CHECK, &c);
}

int kinstr_dev__check(struct kinstr_dev *dev, struct kinstr_check_range *ranges, unsigned int count)
{
	return kinstr_dev__check_flags(dev, ranges, count, 0);
}

static const struct {
	const char *id, *str;
} reasons[KINSTR_R_NR] = {
	[KINSTR_R_NOT_TEXT] = { "not-text", "not in kernel or module text" },
	[KINSTR_R_OWN_MODULE] = { "own-module", "inside kinstr.ko itself" },
	[KINSTR_R_ENTRY_TEXT] = { "entry-text", "in entry text (.entry.text)" },
	[KINSTR_R_NOINSTR_TEXT] = { "noinstr-text", "in .noinstr.text" },
	[KINSTR_R_KPROBES_TEXT] = { "kprobes-text", "in .kprobes.text" },
	[KINSTR_R_KPROBE_BLACKLIST] = { "kprobe-blacklist", "on the kprobe blacklist" },
	[KINSTR_R_CFI_SYMBOL] = { "cfi-symbol", "in a __cfi_/__pfx_ symbol" },
	[KINSTR_R_FTRACE] = { "ftrace", "overlaps an ftrace site" },
	[KINSTR_R_JUMP_LABEL] = { "jump-label", "overlaps a jump label" },
	[KINSTR_R_STATIC_CALL] = { "static-call", "overlaps a static call site" },
	[KINSTR_R_ALTERNATIVE] = { "alternative", "overlaps an alternative" },
	[KINSTR_R_BUG] = { "bug", "overlaps a BUG/WARN site (ud2)" },
	[KINSTR_R_EXTABLE] = { "extable", "holds an instruction with an exception-table fixup" },
	[KINSTR_R_UNVERIFIABLE] = { "unverifiable", "cannot be verified (a kernel check is unavailable)" },
	[KINSTR_R_KPROBE] = { "kprobe", "a kprobe is already there" },
	[KINSTR_R_MODULE_STATE] = { "module-state", "in a module that is loading or unloading" },
	[KINSTR_R_HIT_PATH] = { "hit-path", "reached by kinstr's own probe context (its clock, timers, tracer or the kernel's int3 delivery)" },
	[KINSTR_R_DIE_NOTIFIER] = { "die-notifier", "in a die notifier, which every int3 runs (notify_die)" },
	[KINSTR_R_ENDBR] = { "endbr", "a function's ENDBR, where indirect calls land" },
	[KINSTR_R_SC_TRAMPOLINE] = { "sc-trampoline", "a static call's trampoline, which static_call_update() rewrites" },
	[KINSTR_R_HELD] = { "held", "held by another kinstr session (its probe or its code cache is there)" },
};

const char *kinstr_site_reason__str(unsigned int reason)
{
	return reason < KINSTR_R_NR && reasons[reason].str ? reasons[reason].str : "unknown reason";
}

const char *kinstr_site_reason__id(unsigned int reason)
{
	return reason < KINSTR_R_NR && reasons[reason].id ? reasons[reason].id : "unknown";
}

/* The device's timers (include/uapi/linux/kinstr.h, "Timers"). */
int kinstr_timers__create(struct kinstr_dev *dev, uint32_t count, uint32_t tgid, uint32_t flags)
{
	struct kinstr_timers_create tc = { .size = sizeof(tc), .count = count, .tgid = tgid, .flags = flags };

	return kinstr_dev__ioctl(dev, KINSTR_IOC_TIMERS_CREATE, &tc);
}

int kinstr_timers__read(struct kinstr_dev *dev, uint32_t first, uint32_t count, struct kinstr_timer_stats *out)
{
	struct kinstr_timers_read rd = { .size = sizeof(rd), .first = first, .count = count,
					 .stats = (uintptr_t)out };

	return kinstr_dev__ioctl(dev, KINSTR_IOC_TIMERS_READ, &rd);
}

int kinstr_timers__by(struct kinstr_dev *dev, unsigned int cpu, struct kinstr_timer_by_row *rows, uint32_t count,
		      uint32_t *found, uint64_t *dropped)
{
	struct kinstr_timer_by tb = { .size = sizeof(tb), .cpu = cpu, .count = count, .rows = (uintptr_t)rows };
	int ret = kinstr_dev__ioctl(dev, KINSTR_IOC_TIMER_BY, &tb);

	if (ret)
		return ret;
	*found = tb.found;
	*dropped = tb.dropped;
	return 0;
}

int kinstr_timers__paths(struct kinstr_dev *dev, unsigned int cpu, struct kinstr_timer_path *paths,
			 uint32_t count, uint32_t *found, uint64_t *dropped, uint64_t *truncated)
{
	struct kinstr_timer_paths tp = { .size = sizeof(tp), .cpu = cpu, .count = count, .paths = (uintptr_t)paths };

	if (kinstr_dev__ioctl(dev, KINSTR_IOC_TIMER_PATHS, &tp) < 0)
		return -errno;
	*found = tp.found;
	*dropped = tp.dropped;
	*truncated = tp.truncated;
	return 0;
}
