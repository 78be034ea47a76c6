// SPDX-License-Identifier: GPL-2.0
/*
 * KINSTR_IOC_SYMBOLS: the symbols /proc/kallsyms lists, as packed records instead of text.
 * Formatting /proc/kallsyms costs more than the rest of a kinstr start under TCG; the walk itself
 * (kallsyms_on_each_symbol(), module_kallsyms_on_each_symbol(): compat.c) is cheap. The records
 * go to a kernel buffer first: the module walk holds module_mutex, under which no user page
 * may fault in.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"
#include "abi.h"
#include "compat.h"

struct sym_out {
	char *buf;
	u64 cap, len, count;
	bool core;
};

static bool core_wanted(const char *name, unsigned long addr)
{
	return kinstr_span_has(&kinstr_ksyms.text, addr, 1) || !strncmp(name, "__SCK__", 7);
}

static int sym_add(void *data, const char *name, unsigned long addr)
{
	struct sym_out *o = data;
	u64 n = sizeof(u64) + ALIGN(strlen(name) + 1, sizeof(u64));

	if (!name[0] || (o->core && !core_wanted(name, addr)))
		return 0;
	if (o->len + n <= o->cap) {
		memcpy(o->buf + o->len, &addr, sizeof(u64));
		strscpy_pad(o->buf + o->len + sizeof(u64), name, n - sizeof(u64));
	}
	o->len += n;
	o->count++;
	return 0;
}

long kinstr_ioctl_symbols(void __user *uarg)
{
	struct kinstr_symbols s;
	struct sym_out o = { 0 };
	long err;

	err = kinstr_get_struct(&s, sizeof(s), uarg, KINSTR_SYMBOLS_SIZE_VER0);
	if (err)
		return err;
	if (s.flags || !memchr(s.module, 0, sizeof(s.module)))
		return -EINVAL;
	if (s.cap > KINSTR_SYMBOLS_MAX)
		return -E2BIG;
	if (!kinstr_kallsyms_each_resolved())
		return -EOPNOTSUPP;
	o.core = !s.module[0];
	o.cap = s.cap;
	if (o.cap) {
		o.buf = kvmalloc(o.cap, GFP_KERNEL);
		if (!o.buf)
			return -ENOMEM;
	}
	err = kinstr_kallsyms_each(o.core ? NULL : s.module, sym_add, &o);
	if (!err && !o.core && !o.count)
		err = -ENOENT;
	if (!err && o.len <= o.cap && o.len && copy_to_user(u64_to_user_ptr(s.buf), o.buf, o.len))
		err = -EFAULT;
	kvfree(o.buf);
	if (err)
		return err;
	s.len = o.len;
	s.count = o.count;
	err = kinstr_put_struct(uarg, &s, sizeof(s), KINSTR_SYMBOLS_SIZE_VER0);
	return err ?: (o.len > o.cap ? -ENOSPC : 0);
}
