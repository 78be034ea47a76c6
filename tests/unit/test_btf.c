// SPDX-License-Identifier: GPL-2.0
/* Prototypes from BTF with SysV registers: against the host's own kernel BTF when it has one. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/btf.h>
#include <kinstr/x86.h>
#include "check.h"

static struct kinstr_btf *host_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) ? NULL : kinstr_btf__open(NULL);
}

static void t_vfs_read_maps_to_rdi_rsi_rdx_rcx(void)
{
	struct kinstr_btf *b = host_btf();
	struct kinstr_proto p;
	char text[512];
	int err;

	if (!b)
		SKIP("this host has no /sys/kernel/btf/vmlinux (the VM test covers the target kernel)");
	err = kinstr_btf__proto(b, "vfs_read", &p);
	CHECK(err == 0, "vfs_read: %s", strerror(-err));
	if (!err) {
		CHECK(p.nargs == 4, "nargs %u", p.nargs);
		CHECK(!strcmp(p.args[0].name, "file") && !strcmp(p.args[0].type, "struct file *"), "%s %s",
		      p.args[0].type, p.args[0].name);
		CHECK(p.args[0].reg[0] == KINSTR_X86_RDI && p.args[1].reg[0] == KINSTR_X86_RSI &&
		      p.args[2].reg[0] == KINSTR_X86_RDX && p.args[3].reg[0] == KINSTR_X86_RCX, "registers");
		CHECK(!strcmp(p.args[2].name, "count"), "arg 2 %s", p.args[2].name);
		CHECK(!strcmp(p.ret, "ssize_t"), "ret %s", p.ret);
		kinstr_proto__format(&p, "vfs_read", text, sizeof(text));
		CHECK(strstr(text, "ssize_t vfs_read(struct file *file /rdi/, ") == text, "%s", text);
	}
	CHECK(kinstr_btf__proto(b, "no_such_function_here", &p) == -ENOENT, "missing function");
	CHECK(kinstr_btf__proto(b, "vfs_read.constprop.0", &p) == -EOPNOTSUPP, "clone");
	kinstr_btf__close(b);
}

static void t_seventh_argument_is_on_the_stack(void)
{
	struct kinstr_btf *b = host_btf();
	struct kinstr_proto p;
	unsigned int i;

	if (!b)
		SKIP("this host has no /sys/kernel/btf/vmlinux");
	/* do_mmap(file, addr, len, prot, flags, vm_flags, pgoff, populate, uf): 9 arguments */
	CHECK(kinstr_btf__proto(b, "do_mmap", &p) == 0 && p.nargs >= 7, "do_mmap nargs %u", p.nargs);
	for (i = 0; i < p.nargs; i++)
		CHECK((i < 6) == !p.args[i].on_stack, "arg %u on_stack %d", i, p.args[i].on_stack);
	kinstr_btf__close(b);
}

static void t_missing_file_sets_errno(void)
{
	errno = 0;
	CHECK(kinstr_btf__open("/nonexistent/btf") == NULL && errno != 0, "errno %d", errno);
}

int main(void)
{
	RUN(t_vfs_read_maps_to_rdi_rsi_rdx_rcx);
	RUN(t_seventh_argument_is_on_the_stack);
	RUN(t_missing_file_sets_errno);
	return check_done();
}
