// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr count --by stack (lib/results/stacks.c): at each hit, the kernel stack from the site's pt_regs
 * (bpf_get_stackid: the kernel's unwinder, no trap), counted per probe (the attach cookie) and
 * stack. Built into libkinstr (lib/bpf/stack_obj.S).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_DEPTH 127	/* PERF_MAX_STACK_DEPTH */

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct stack_key {
	__u32 probe;
	__s32 stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stack_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);		/* [0] no stack id (table full, fault), [1] no room in counts */
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void lose(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &why);

	if (n)
		*n += 1;
}

SEC("kprobe")
int by_stack(struct pt_regs *ctx)
{
	struct stack_key k = { .probe = (__u32)bpf_get_attach_cookie(ctx) };
	__u64 one = 1, *n;

	k.stack = bpf_get_stackid(ctx, &stacks, 0);
	if (k.stack < 0) {
		lose(0);
		return 0;
	}
	n = bpf_map_lookup_elem(&counts, &k);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	if (!bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST))
		return 0;
	n = bpf_map_lookup_elem(&counts, &k);	/* another CPU put it in first, or the table is full */
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		lose(1);
	return 0;
}
