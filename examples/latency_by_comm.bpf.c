// SPDX-License-Identifier: GPL-2.0
/*
 * A latency histogram by command name between two points of the kernel, either of them any
 * instruction: the first SPEC starts the clock for the thread, the second stops it. Each
 * interval lands in @usecs[{comm, log2 bucket}] (bucket b: [2^(b-1), 2^b) microseconds, 0 for
 * under 1 us), and @calls[comm] counts them.
 *
 *   kinstr attach build/examples/latency_by_comm.bpf.o 'vfs_read+0x3c' 'vfs_read%return' -d 5   (6.12: +0x40)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct hist_key {
	char comm[16];
	__u32 bucket;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* thread id */
	__type(value, __u64);		/* bpf_ktime_get_ns() at the first point */
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hist_key);
	__type(value, __u64);
} usecs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, char[16]);
	__type(value, __u64);
} calls SEC(".maps");

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 b = 0;

	/* bounded for the verifier: 64 steps at most */
	for (int i = 0; i < 64 && v; i++) {
		v >>= 1;
		b++;
	}
	return b;
}

static __always_inline void bump(void *map, const void *key)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(map, key);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(map, key, &one, BPF_NOEXIST);
}

SEC("kprobe")
int latency(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns(), *t0;
	struct hist_key k = {};

	if (bpf_get_attach_cookie(ctx) == 0) {		/* the first SPEC: start */
		bpf_map_update_elem(&start, &tid, &now, BPF_ANY);
		return 0;
	}
	t0 = bpf_map_lookup_elem(&start, &tid);		/* the second: stop */
	if (!t0)
		return 0;
	k.bucket = log2_bucket((now - *t0) / 1000);
	bpf_map_delete_elem(&start, &tid);
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	bump(&usecs, &k);
	bump(&calls, k.comm);
	return 0;
}
