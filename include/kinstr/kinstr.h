/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libkinstr: the user-space half of kinstr. Objects are opaque; functions are named
 * kinstr_<object>__<verb>(). Functions returning int return 0 or a negative errno; functions
 * returning a pointer return NULL and set errno.
 */
#ifndef KINSTR_KINSTR_H
#define KINSTR_KINSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uapi/linux/kinstr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's (and CLI's) version string, e.g. "0.1.0". */
const char *kinstr__version(void);

/* An open /dev/kinstr. Everything a process installs through it belongs to it. */
struct kinstr_dev;

/* path NULL means KINSTR_DEVICE. On failure NULL with errno set; see kinstr_dev__open_hint(). */
struct kinstr_dev *kinstr_dev__open(const char *path);
void kinstr_dev__close(struct kinstr_dev *dev);
int kinstr_dev__fd(const struct kinstr_dev *dev);
/* Every ioctl of the library goes through here: 0, or -errno (errno left as the ioctl set it). */
int kinstr_dev__ioctl(struct kinstr_dev *dev, unsigned long cmd, void *arg);

/* One line telling a person why opening the device failed with errno err and what to do. */
const char *kinstr_dev__open_hint(int err);

/* KINSTR_IOC_VERSION / KINSTR_IOC_DEBUG_INFO; the struct's size field is set here. */
int kinstr_dev__version(struct kinstr_dev *dev, struct kinstr_version *v);
int kinstr_dev__debug_info(struct kinstr_dev *dev, struct kinstr_debug_info *d);

/*
 * KINSTR_IOC_READ: copy len bytes of live kernel memory at addr into buf. Only core text, live
 * modules' core text and the reservation tables are readable (-ERANGE otherwise); -EIO when kernel memory faulted.
 */
int kinstr_dev__read(struct kinstr_dev *dev, unsigned long long addr, void *buf, size_t len);

/* KINSTR_IOC_LAYOUT: where the kernel's text and reservation tables are. */
int kinstr_dev__layout(struct kinstr_dev *dev, struct kinstr_layout *l);

/* KINSTR_IOC_MODULE: the loaded module holding addr (-ENOENT: none), its text and tables. */
int kinstr_dev__module(struct kinstr_dev *dev, unsigned long long addr, struct kinstr_module_info *mi);

/* KINSTR_IOC_CHECK: fill ranges[i].reasons with the module's verdict for each range. */
/* Wait until the module's worker has completed every queued jump and freed every removed slot. */
int kinstr_dev__sync(struct kinstr_dev *dev);
/*
 * Which threads the device's probes act for (KINSTR_IOC_SCOPE), set before the device's first
 * probe set is installed (-EBUSY after, or when set before): by default kinstr's own process is
 * left out, so that what kinstr does to read its results is never in them. A condition not given
 * does not restrict; those given must all hold. Counting, tracing, timing and BPF probes are
 * scoped; a code cache's block counts are not. -EOPNOTSUPP from a module without the scope
 * (KINSTR_FEAT_SCOPE); -EINVAL for options out of range (ids 0, more than the module takes, a
 * comm of 16 bytes or more).
 */
struct kinstr_scope_opts {
	size_t sz;		/* sizeof(struct kinstr_scope_opts) */
	bool self;		/* observe kinstr's own process (this one) too */
	bool follow;		/* a process that one of pids forks joins them (pids needed) */
	const uint32_t *pids;	/* processes (thread group ids) ... */
	size_t npids;
	const uint32_t *tids;	/* ... or threads */
	size_t ntids;
	const char *comm;	/* exactly this comm (NULL: any) */
	const char *cgroup;	/* a cgroup v2 directory: its threads and its descendants' (NULL: any) */
	const uint64_t *cpus;	/* a bitmap of the CPUs (bit c of word c / 64) ... */
	size_t ncpus;		/* ... of ncpus bits (0: every CPU) */
};
int kinstr_dev__scope(struct kinstr_dev *dev, const struct kinstr_scope_opts *opts);
/* Does the module offer every KINSTR_FEAT_* bit of feature? */
bool kinstr_dev__has(struct kinstr_dev *dev, uint64_t feature);
/* The name of feature bit `bit` (KINSTR_FEAT_PROBES is bit 4: "probes"), NULL past the last known. */
const char *kinstr_feature__str(unsigned int bit);
/*
 * The functions kinstr's own probe context reaches (KINSTR_R_HIT_PATH), sorted; free() the array.
 * *incomplete: the module could not compute them and refuses every range. NULL with errno set.
 */
struct kinstr_span64 *kinstr_dev__hit_path(struct kinstr_dev *dev, size_t *n, bool *incomplete);
/*
 * What every kinstr session holds now (KINSTR_IOC_HELD): probes' patched bytes, functions code
 * caches run, each with its process; free() the array. NULL with errno set (EOPNOTSUPP, ENOTTY
 * from a module older than ABI 0.14).
 */
struct kinstr_held_range *kinstr_dev__held(struct kinstr_dev *dev, size_t *n);
/* The module's resource limits and what all descriptors use now. */
int kinstr_dev__limits(struct kinstr_dev *dev, struct kinstr_limits *l);
int kinstr_dev__check(struct kinstr_dev *dev, struct kinstr_check_range *ranges, unsigned int count);
/* The same with KINSTR_CHECK_F_* flags (KINSTR_CHECK_F_KERNEL: the kernel's own predicates). */
int kinstr_dev__check_flags(struct kinstr_dev *dev, struct kinstr_check_range *ranges, unsigned int count,
			    unsigned int flags);
/*
 * Only the reasons in the mask only (1 << KINSTR_R_*), plus KINSTR_R_UNVERIFIABLE: cheap for the
 * ftrace site and the die notifier. -EOPNOTSUPP from a module older than ABI 0.12.
 */
int kinstr_dev__check_only(struct kinstr_dev *dev, struct kinstr_check_range *ranges, unsigned int count,
			   unsigned int only);

/* The stable name of one reason bit (enum kinstr_site_reason), e.g. "ftrace site". */
const char *kinstr_site_reason__str(unsigned int reason);
/* The short identifier of one reason, e.g. "ftrace", for --json output. */
const char *kinstr_site_reason__id(unsigned int reason);

/*
 * The device's timers (include/uapi/linux/kinstr.h, "Timers"): count of them, for the threads of
 * process tgid only (0: every thread and interrupt context); flags KINSTR_TIMERS_F_*. Once per
 * device.
 */
struct kinstr_timer_stats;
struct kinstr_timer_path;
int kinstr_timers__create(struct kinstr_dev *dev, uint32_t count, uint32_t tgid, uint32_t flags);
/* One CPU's paths (KINSTR_TIMERS_F_PATHS): -ENOSPC if count is too small, -EINVAL past the last CPU. */
int kinstr_timers__paths(struct kinstr_dev *dev, unsigned int cpu, struct kinstr_timer_path *paths,
			 uint32_t count, uint32_t *found, uint64_t *dropped, uint64_t *truncated);
/*
 * One CPU's rows per (timer, key) (KINSTR_TIMERS_F_BY_*): *found rows in use (rows[] holds the
 * first count of them), *dropped stops that found none; -EINVAL past the last CPU.
 */
struct kinstr_timer_by_row;
int kinstr_timers__by(struct kinstr_dev *dev, unsigned int cpu, struct kinstr_timer_by_row *rows, uint32_t count,
		      uint32_t *found, uint64_t *dropped);
/* Statistics of timers [first, first + count), summed over CPUs. */
int kinstr_timers__read(struct kinstr_dev *dev, uint32_t first, uint32_t count, struct kinstr_timer_stats *out);

#ifdef __cplusplus
}
#endif
#endif
