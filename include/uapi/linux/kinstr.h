/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kinstr's ioctl ABI on /dev/kinstr, shared by kinstr.ko and libkinstr.
 *
 * Every argument struct starts with a __u32 size that the caller sets to sizeof() of the struct
 * as it knows it, so that structs can grow (as perf_event_attr and libbpf's opts do):
 *   - input fields the module does not know must be zero, or the call fails with E2BIG;
 *   - output structs are filled up to min(caller's size, module's size); the module writes the
 *     number of bytes it filled back into size and zeroes the caller's bytes beyond that;
 *   - a size smaller than the first published version of the struct fails with EINVAL.
 */
#ifndef _UAPI_LINUX_KINSTR_H
#define _UAPI_LINUX_KINSTR_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KINSTR_DEVICE		"/dev/kinstr"
#define KINSTR_ABI_MAJOR	0	/* incompatible changes */
#define KINSTR_ABI_MINOR	1	/* compatible additions */

/* The ioctl numbers carry no size: the struct's leading size field says how much there is. */
#define KINSTR_IOC_MAGIC	0xb7
#define KINSTR_IOC_VERSION	_IO(KINSTR_IOC_MAGIC, 0x01)	/* struct kinstr_version */
#define KINSTR_IOC_DEBUG_INFO	_IO(KINSTR_IOC_MAGIC, 0x02)	/* struct kinstr_debug_info */

/* Largest struct size accepted at all; beyond it E2BIG without reading the tail. */
#define KINSTR_MAX_STRUCT_SIZE	4096

/* KINSTR_IOC_VERSION: output only. */
struct kinstr_version {
	__u32 size;
	__u16 abi_major;
	__u16 abi_minor;
	__u64 features;			/* KINSTR_FEAT_* */
	char module_version[32];	/* NUL-terminated, e.g. "0.1.0" */
	char kernel_release[65];	/* utsname()->release of the running kernel */
	__u8 __reserved[7];
};
#define KINSTR_VERSION_SIZE_VER0	120

/* Nothing is offered yet but the version and debug ioctls; bits appear as features land. */
#define KINSTR_FEAT_DEBUG_INFO	(1ULL << 0)

/* KINSTR_IOC_DEBUG_INFO: output only; addresses the module resolved at load time. */
struct kinstr_debug_info {
	__u32 size;
	__u32 flags;			/* KINSTR_DEBUG_* */
	__u64 kallsyms_lookup_name;	/* found through a kprobe on it (it is not exported) */
	__u64 stext;			/* _stext */
	__u64 etext;			/* _etext */
};
#define KINSTR_DEBUG_INFO_SIZE_VER0	32

#define KINSTR_DEBUG_LOCKDOWN	(1U << 0)	/* the kernel is locked down: patching refused */

#endif /* _UAPI_LINUX_KINSTR_H */
