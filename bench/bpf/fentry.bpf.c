// SPDX-License-Identifier: GPL-2.0
/*
 * The strongest peer for timing a function: BPF trampolines (fentry/fexit). Two pairs of
 * programs, attached by bench/fentry_time.c to one function chosen at load time:
 *   count_entry/count_exit  a per-CPU counter at the entry and at the exit (what `kinstr count
 *                           FUNC FUNC%return` does)
 *   time_entry/time_exit    a start time per thread at the entry; at the exit the duration's
 *                           log2 bucket, count and sum (what `kinstr profile FUNC` keeps)
 * No kernel type is needed: the programs read no argument.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define BUCKETS 64

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);		/* [0] entries, [1] exits */
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* thread id */
	__type(value, __u64);		/* bpf_ktime_get_ns() at the entry */
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BUCKETS + 2);	/* log2 buckets, then calls, then the sum of ns */
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline void bump(void *map, __u32 k, __u64 by)
{
	__u64 *v = bpf_map_lookup_elem(map, &k);

	if (v)
		*v += by;
}

SEC("fentry")
int count_entry(void *ctx)
{
	bump(&counts, 0, 1);
	return 0;
}

SEC("fexit")
int count_exit(void *ctx)
{
	bump(&counts, 1, 1);
	return 0;
}

SEC("fentry")
int time_entry(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 t = bpf_ktime_get_ns();

	bpf_map_update_elem(&start, &tid, &t, BPF_ANY);
	return 0;
}

/* floor(log2(v)), 0 for v <= 1: six steps, no loop */
static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 b = 0;

	if (v >> 32) { v >>= 32; b += 32; }
	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) b += 1;
	return b;
}

SEC("fexit")
int time_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *t = bpf_map_lookup_elem(&start, &tid), d;

	if (!t)
		return 0;
	d = bpf_ktime_get_ns() - *t;
	bpf_map_delete_elem(&start, &tid);
	bump(&hist, log2_bucket(d), 1);
	bump(&hist, BUCKETS, 1);
	bump(&hist, BUCKETS + 1, d);
	return 0;
}
