// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI's size rules, in one place: every struct that crosses /dev/kinstr starts with its size
 * (include/uapi/linux/kinstr.h), and comes in and goes out through these two helpers only. They
 * call nothing else of the module's.
 */
#include <linux/uaccess.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "abi.h"

/*
 * Copy an output struct to user space following the ABI's size rules: read the caller's size,
 * refuse one below the first version, fill min(caller, ours), zero the caller's bytes beyond
 * ours, and report the bytes filled in the size field.
 */
int kinstr_put_struct(void __user *uarg, void *kbuf, u32 ksize, u32 min_size)
{
	u32 usize, n;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	if (usize > KINSTR_MAX_STRUCT_SIZE)
		return -E2BIG;
	n = min(usize, ksize);
	*(u32 *)kbuf = n;
	if (copy_to_user(uarg, kbuf, n))
		return -EFAULT;
	if (usize > n && clear_user(uarg + n, usize - n))
		return -EFAULT;
	return 0;
}

/*
 * Copy an input struct from user space following the ABI's size rules: EINVAL below the first
 * version, E2BIG above the maximum or when bytes beyond what the module knows are non-zero.
 */
int kinstr_get_struct(void *kbuf, u32 ksize, const void __user *uarg, u32 min_size)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	if (usize > KINSTR_MAX_STRUCT_SIZE)
		return -E2BIG;
	return copy_struct_from_user(kbuf, ksize, uarg, usize);
}

/* Describe a read-only table of the kernel for user space (KINSTR_IOC_LAYOUT, KINSTR_IOC_MODULE). */
void kinstr_layout_table(struct kinstr_table *t, const struct kinstr_span *s, u32 entry_size,
			 u32 addr_off, s32 target_off)
{
	t->addr = s->start;
	t->bytes = s->end - s->start;
	t->entry_size = entry_size;
	t->addr_off = addr_off;
	if (target_off >= 0) {
		t->target_off = target_off;
		t->flags |= KINSTR_TABLE_HAS_TARGET;
	}
}
