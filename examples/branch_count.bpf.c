// SPDX-License-Identifier: GPL-2.0
/*
 * A per-CPU counter per attach point: which way a branch goes, counted exactly. Attach it at the
 * instruction a branch jumps to and at the one it falls through to (or at any sites): each SPEC's
 * hits land in @hits[SPEC's index], summed over CPUs when printed.
 *
 *   kinstr disasm urandom_read_iter          # a jcc (Debian's 6.1: +0x43 jle +0x61), its fall-through +0x45
 *   kinstr attach build/examples/branch_count.bpf.o urandom_read_iter+0x61 urandom_read_iter+0x45 \
 *       -c 'dd if=/dev/urandom of=/dev/null bs=16 count=1000'
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_POINTS 64

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_POINTS);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("kprobe")
int count(struct pt_regs *ctx)
{
	__u32 point = (__u32)bpf_get_attach_cookie(ctx);	/* kinstr attach: the SPEC's index */
	__u64 *n = bpf_map_lookup_elem(&hits, &point);

	if (n)
		*n += 1;	/* this CPU's own slot: no atomic needed */
	return 0;
}
