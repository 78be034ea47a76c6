/* SPDX-License-Identifier: GPL-2.0 */
/* The ABI's size rules (abi.c): every size-prefixed struct in and out of the module. */
#ifndef KINSTR_KMOD_ABI_H
#define KINSTR_KMOD_ABI_H
#include <linux/types.h>
#include <linux/compiler.h>

/*
 * In: EINVAL below min_size (the first version), E2BIG above KINSTR_MAX_STRUCT_SIZE or when the
 * caller's bytes beyond ksize are not zero; a shorter struct is zero-filled.
 */
int kinstr_get_struct(void *kbuf, u32 ksize, const void __user *uarg, u32 min_size);
/*
 * Out (and back, for a struct that came in): fill min(caller's size, ksize), zero the caller's
 * bytes beyond, store the bytes filled in the size field.
 */
int kinstr_put_struct(void __user *uarg, void *kbuf, u32 ksize, u32 min_size);

struct kinstr_table;
struct kinstr_span;
/* Describe a read-only table of the kernel for user space (KINSTR_IOC_LAYOUT, KINSTR_IOC_MODULE). */
void kinstr_layout_table(struct kinstr_table *t, const struct kinstr_span *s, u32 entry_size, u32 addr_off,
			 s32 target_off);

#endif
