/* SPDX-License-Identifier: GPL-2.0 */
/* vfs_read(struct file *file, char *buf, size_t count, loff_t *pos), as BTF gives it: the host tests' prototype. */
#ifndef KINSTR_TESTS_VFS_READ_PROTO_H
#define KINSTR_TESTS_VFS_READ_PROTO_H

#include <kinstr/btf.h>
#include <kinstr/x86.h>

static const struct kinstr_proto proto = {
	.ret = "ssize_t",
	.nargs = 4,
	.args = {
		{ "file", "struct file *", 8, { KINSTR_X86_RDI, -1 }, false },
		{ "buf", "char *", 8, { KINSTR_X86_RSI, -1 }, false },
		{ "count", "size_t", 8, { KINSTR_X86_RDX, -1 }, false },
		{ "pos", "loff_t *", 8, { KINSTR_X86_RCX, -1 }, false },
	},
};

#endif
