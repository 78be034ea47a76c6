// SPDX-License-Identifier: GPL-2.0
/*
 * A per-CPU counter per attach point: which way a branch goes, counted exactly. Attach it at the
 * instruction a branch jumps to and at the one it falls through to (or at any sites): each SPEC's
 * hits land in @hits[SPEC's index], summed over CPUs when printed.
 *
 *   kinstr disasm get_random_bytes_user      # a jbe (Debian's 6.1: +0x77 jbe +0x13e), its fall-through +0x7d
 *   kinstr attach build/examples/branch_count.bpf.o get_random_bytes_user+0x13e get_random_bytes_user+0x7d -c 'dd if=/dev/urandom of=/dev/null bs=16 count=1000; dd if=/dev/urandom of=/dev/null bs=512 count=1000'
 *
 * (examples/README.md; on 6.12 +0x13d and +0x7c)
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
