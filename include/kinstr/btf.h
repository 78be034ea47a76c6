/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Function prototypes from the kernel's BTF (/sys/kernel/btf/vmlinux, read with libbpf), and
 * where each argument lives at the function's entry under the SysV x86-64 ABI: vfs_read(file,
 * buf, count, pos) is rdi, rsi, rdx, rcx.
 */
#ifndef KINSTR_BTF_H
#define KINSTR_BTF_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KINSTR_PROTO_MAX_ARGS 16

struct kinstr_proto_arg {
	char name[64];
	char type[128];		/* C spelling, e.g. "struct file *" */
	unsigned int size;	/* bytes */
	int reg[2];		/* enum kinstr_x86_reg, -1 when unused */
	bool on_stack;		/* past the six argument registers, or larger than 16 bytes */
};

struct kinstr_proto {
	char ret[128];
	unsigned int nargs;
	bool variadic;
	struct kinstr_proto_arg args[KINSTR_PROTO_MAX_ARGS];
};

struct kinstr_btf;

/* path NULL: /sys/kernel/btf/vmlinux. NULL with errno set on failure. */
struct kinstr_btf *kinstr_btf__open(const char *path);
void kinstr_btf__close(struct kinstr_btf *b);

/*
 * The prototype of func. -ENOENT when BTF has no such function; -EOPNOTSUPP for a compiler
 * clone ("foo.constprop.0", "foo.isra.0", ...) whose calling convention may differ from foo's.
 */
int kinstr_btf__proto(struct kinstr_btf *b, const char *func, struct kinstr_proto *out);

/* "ssize_t vfs_read(struct file *file /rdi/, char *buf /rsi/, ...)" into buf. */
int kinstr_proto__format(const struct kinstr_proto *p, const char *func, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
