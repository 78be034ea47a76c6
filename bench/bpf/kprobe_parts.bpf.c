// SPDX-License-Identifier: GPL-2.0
/*
 * Parts of examples/branch_count.bpf.c's `count`, to split bench/run-bpf's per-hit cost into the
 * way the program is called and what it does (bench/run-bpf --obj build/bench/kprobe_parts.bpf.o:PROG):
 *   nop     returns at once: only the cost of reaching the program
 *   count0  the per-CPU counter at key 0, without bpf_get_attach_cookie()
 * No kernel type is needed: the programs read nothing of the context.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("kprobe")
int nop(void *ctx)
{
	return 0;
}

SEC("kprobe")
int count0(void *ctx)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&hits, &k);

	if (n)
		*n += 1;
	return 0;
}
