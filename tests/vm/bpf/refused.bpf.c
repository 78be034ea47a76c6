// SPDX-License-Identifier: GPL-2.0
/* Programs kinstr attach must refuse, each for its own stated reason (tests/vm/tests/bpf.t). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} slots SEC(".maps");

/* the verifier refuses it: a map value used without the NULL check */
SEC("kprobe")
int unchecked(struct pt_regs *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&slots, &k);

	*v += 1;
	return 0;
}

/* not a kprobe program */
SEC("tracepoint/syscalls/sys_enter_getppid")
int tracepoint(void *ctx)
{
	return 0;
}

/* a kprobe program with a multi-attach run context */
SEC("kprobe.multi")
int multi(struct pt_regs *ctx)
{
	return 0;
}

/* of kprobe type and loadable, but sleepable: the module refuses it */
SEC("uprobe.s")
int sleepy(struct pt_regs *ctx)
{
	return 0;
}

/* too large to load: the verifier explores past its 1,000,000 instructions (E2BIG) */
SEC("kprobe")
int huge(struct pt_regs *ctx)
{
	__u64 s = ctx->di;
	int i;

	for (i = 0; i < 1000000; i++)
		s = (s & 1) ? s * 3 + 1 : s >> 1;
	return (int)s;
}
