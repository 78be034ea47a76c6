// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: functions with known behaviour for kinstr to probe in module text, and to
 * time (the profiler's tests). Each is noipa (never inlined, cloned or specialised), so its
 * symbol, entry and returns are exactly those of the source.
 *
 *   kinstr_test_busy(ns)       busy-waits until ktime_get_ns() advanced by ns (reads it every ~10 us)
 *   kinstr_test_outer()        busy-waits 1 ms itself, then calls kinstr_test_inner() (100 us)
 *   kinstr_test_sleep()        busy-waits 100 us, then msleep(10)
 *   kinstr_test_multi_ret(x)   several return sites (checked with objdump and kinstr disasm)
 *   kinstr_test_static_key(x)  holds a jump label (a static key): refused with its rule
 *   kinstr_test_extable(p)     holds an exception-table entry (unsafe_get_user): refused too
 *   kinstr_test_dispatch()     an indirect call: 3 in 4 to kinstr_test_ind_a, 1 in 4 to _ind_b (100 us each)
 *   kinstr_test_tail()         spins 20,000 rounds, then a tail call (jmp) to kinstr_test_tail_callee (60,000)
 *   kinstr_test_handoff_send(o) / kinstr_test_handoff_recv(o): an object handed from the writer
 *                              to a work item queued on another CPU, which receives it there
 *                              (span.t keys a span on the pointer)
 *
 * Trigger: write "CMD N" to /sys/kernel/debug/kinstr_test/run to run CMD N times in the writer's
 * context (outer, sleep, multi, busy, key, ext, dispatch, tail, handoff); /sys/kernel/debug/kinstr_test/last reads the
 * module's own measurements of that run (local_clock() around each call); ind_a, ind_b, tail_ns and
 * tail_total_ns the references of drill's tests (write 0 to reset):
 *   cmd=outer calls=N total_ns=... outer_ns=... inner_ns=... sleep_ns=... inner_max_ns=... multi_sum=...
 *
 * The windows read local_clock(), the clock kinstr's timers read, not ktime_get_ns(): where the
 * TSC is marked unstable (QEMU TCG with 2 CPUs) local_clock() is sched_clock() pinned to the
 * clocksource once a tick and may step by up to a tick against ktime, so two different clocks
 * around the same 100 us would disagree by more than the probes under test. With one clock,
 * kinstr's window (inside the module's, on the same CPU: nothing here sleeps or is preempted
 * mid-busy-wait) can only be shorter, by the probes' own cost.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/clock.h>
#include <linux/timex.h>
#include <asm/tsc.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#define KT_FN __attribute__((__noipa__)) __used

static DEFINE_MUTEX(kt_lock);
static struct dentry *kt_dir;
static DEFINE_STATIC_KEY_FALSE(kinstr_test_key);

struct kt_result {
	char cmd[16];
	u64 calls, total_ns, outer_ns, inner_ns, inner_max, sleep_ns;
	long long multi_sum;
};
static struct kt_result kt_last;
static u64 kt_inner_ns;	/* measured inside kinstr_test_outer around its call of the inner one */
static u64 kt_inner_max;	/* the longest of those windows: a stall shows here */
/* Bumped after the last call of inner and sleep, so that neither ends in a tail call: both return. */
static u64 kt_inner_calls, kt_sleep_calls;

/*
 * Between two clock reads it spins about 10 us on the TSC (inline RDTSC, no call), so that the
 * wait is the function's own time, not ktime_get()'s: with one PAUSE between reads, about half of
 * it was in ktime_get (more once drill probes ktime_get too), and drill's hot path went on into
 * ktime_get on some runs. The deadline stays on ktime_get_ns(); the spin's length only sets the
 * granularity.
 */
static u64 kt_spin_cycles;

KT_FN void kinstr_test_busy(u64 ns);
KT_FN void kinstr_test_busy(u64 ns)
{
	u64 end = ktime_get_ns() + ns;

	do {
		u64 t0 = get_cycles();
		unsigned int i;

		/* bounded: an unstable TSC may stall or step back under an emulator */
		for (i = 0; i < 100000 && get_cycles() - t0 < kt_spin_cycles; i++)
			cpu_relax();
	} while (ktime_get_ns() < end);
}

KT_FN void kinstr_test_inner(void);
KT_FN void kinstr_test_inner(void)
{
	kinstr_test_busy(100 * NSEC_PER_USEC);
	WRITE_ONCE(kt_inner_calls, kt_inner_calls + 1);
}

KT_FN void kinstr_test_outer(void);
KT_FN void kinstr_test_outer(void)
{
	u64 t0;

	kinstr_test_busy(NSEC_PER_MSEC);
	t0 = local_clock();
	kinstr_test_inner();
	t0 = local_clock() - t0;
	kt_inner_ns += t0;
	if (t0 > kt_inner_max)
		kt_inner_max = t0;
}

KT_FN void kinstr_test_sleep(void);
KT_FN void kinstr_test_sleep(void)
{
	kinstr_test_busy(100 * NSEC_PER_USEC);
	msleep(10);
	WRITE_ONCE(kt_sleep_calls, kt_sleep_calls + 1);
}

/*
 * Four ways out, none of which needs a stack frame, so the compiler ends each path with its own
 * return (`jmp __x86_return_thunk` in Debian's build) instead of joining them.
 */
KT_FN int kinstr_test_multi_ret(int x);
KT_FN int kinstr_test_multi_ret(int x)
{
	if (x < 0)
		return -1;
	if (x & 1)
		return x * 3;
	if (x > 100)
		return x - 7;
	return x / 2;
}

KT_FN int kinstr_test_static_key(int x);
KT_FN int kinstr_test_static_key(int x)
{
	if (static_branch_unlikely(&kinstr_test_key))
		return x + 1;
	return x - 1;
}

/* unsafe_get_user: an inline load with an exception-table fixup in this module's __ex_table */
KT_FN int kinstr_test_extable(const int __user *p);
KT_FN int kinstr_test_extable(const int __user *p)
{
	int v;

	if (!user_access_begin(p, sizeof(*p)))
		return -EFAULT;
	unsafe_get_user(v, p, efault);
	user_access_end();
	return v;
efault:
	user_access_end();
	return -EFAULT;
}

/*
 * An indirect call with a known split (drill follows it): kinstr_test_dispatch() calls through a
 * function pointer, 3 calls in 4 to kinstr_test_ind_a, 1 in 4 to kinstr_test_ind_b, each a
 * 100 us busy-wait. The pointers are read with READ_ONCE from a writable table, so the
 * compiler cannot turn the call into a direct one (a retpoline thunk call in Debian's 6.1 build).
 */
static u64 kt_ind_a, kt_ind_b, kt_dispatch_n, kt_tail_n;
/* the tail callee's own windows, and the whole of each kinstr_test_tail call (kt_run's): the reference split */
static u64 kt_tail_ns, kt_tail_total_ns;

KT_FN void kinstr_test_ind_a(void);
KT_FN void kinstr_test_ind_a(void)
{
	kinstr_test_busy(100 * NSEC_PER_USEC);
	WRITE_ONCE(kt_ind_a, kt_ind_a + 1);
}

KT_FN void kinstr_test_ind_b(void);
KT_FN void kinstr_test_ind_b(void)
{
	kinstr_test_busy(100 * NSEC_PER_USEC);
	WRITE_ONCE(kt_ind_b, kt_ind_b + 1);
}

static void (*kt_ind_ops[4])(void) = { kinstr_test_ind_a, kinstr_test_ind_a, kinstr_test_ind_a, kinstr_test_ind_b };

KT_FN void kinstr_test_dispatch(void);
KT_FN void kinstr_test_dispatch(void)
{
	u64 n = READ_ONCE(kt_dispatch_n);

	WRITE_ONCE(kt_dispatch_n, n + 1);
	READ_ONCE(kt_ind_ops[n & 3])();
	WRITE_ONCE(kt_dispatch_n, READ_ONCE(kt_dispatch_n));	/* a return, not a tail call */
}

/*
 * A tail call with a known split: kinstr_test_tail() spins 20,000 rounds of a loop, counts, then
 * ends in a jmp to kinstr_test_tail_callee(), which spins 60,000 of the same: 3/4 of
 * kinstr_test_tail's work (its caller's view of it) is the tail call's. Rounds, not deadlines: a
 * busy-wait to a deadline that an emulator's host preempts overshoots by the preemption, which
 * moves a split of two short waits far more than it moves a split of work. The count between the
 * loop and the jmp keeps the jmp apart from the loop (drill's stop for the caller's own part goes
 * on the instruction before the jmp).
 */
static u64 kt_sink;

static __always_inline void kt_spin(unsigned int rounds)
{
	unsigned int i;

	for (i = 0; i < rounds; i++)
		WRITE_ONCE(kt_sink, kt_sink + i);
}

KT_FN void kinstr_test_tail_callee(void);
KT_FN void kinstr_test_tail_callee(void)
{
	u64 t0 = local_clock();

	kt_spin(60000);
	WRITE_ONCE(kt_tail_ns, kt_tail_ns + local_clock() - t0);
}

KT_FN void kinstr_test_tail(void);
KT_FN void kinstr_test_tail(void)
{
	kt_spin(20000);
	WRITE_ONCE(kt_tail_n, kt_tail_n + 1);
	kinstr_test_tail_callee();
}

struct kt_obj {
	struct work_struct work;
	int send_cpu, recv_cpu;
};
static struct kt_obj kt_objs[8];

KT_FN void kinstr_test_handoff_send(struct kt_obj *o);
KT_FN void kinstr_test_handoff_send(struct kt_obj *o)
{
	WRITE_ONCE(o->send_cpu, raw_smp_processor_id());
}

KT_FN void kinstr_test_handoff_recv(struct kt_obj *o);
KT_FN void kinstr_test_handoff_recv(struct kt_obj *o)
{
	WRITE_ONCE(o->recv_cpu, raw_smp_processor_id());
}

static void kt_handoff_work(struct work_struct *w)
{
	kinstr_test_handoff_recv(container_of(w, struct kt_obj, work));
}

/* Hand o to another CPU's work item and wait for it: 1 if it was received on another CPU. */
static int kt_handoff(struct kt_obj *o)
{
	int cpu = get_cpu(), to = cpumask_next(cpu, cpu_online_mask);

	if (to >= nr_cpu_ids)
		to = cpumask_first(cpu_online_mask);
	kinstr_test_handoff_send(o);
	queue_work_on(to, system_wq, &o->work);
	put_cpu();
	flush_work(&o->work);
	return READ_ONCE(o->recv_cpu) != READ_ONCE(o->send_cpu);
}

static int kt_run(const char *cmd, u64 n)
{
	struct kt_result r = {};
	u64 i, t0, t1;

	strscpy(r.cmd, cmd, sizeof(r.cmd));
	kt_inner_ns = 0;
	kt_inner_max = 0;
	for (i = 0; i < n; i++) {
		t0 = local_clock();
		if (!strcmp(cmd, "outer"))
			kinstr_test_outer();
		else if (!strcmp(cmd, "sleep"))
			kinstr_test_sleep();
		else if (!strcmp(cmd, "multi"))
			/* every return site, in turn: x = -1, 0, 1, ..., 201, then again */
			r.multi_sum += kinstr_test_multi_ret((int)(i % 204) - 1);
		else if (!strcmp(cmd, "busy"))
			kinstr_test_busy(100 * NSEC_PER_USEC);
		else if (!strcmp(cmd, "key"))
			r.multi_sum += kinstr_test_static_key((int)i);
		else if (!strcmp(cmd, "ext"))
			r.multi_sum += kinstr_test_extable(NULL);	/* faults: the fixup returns -EFAULT */
		else if (!strcmp(cmd, "dispatch"))
			kinstr_test_dispatch();
		else if (!strcmp(cmd, "tail"))
			kinstr_test_tail();
		else if (!strcmp(cmd, "handoff"))
			r.multi_sum += kt_handoff(&kt_objs[i % ARRAY_SIZE(kt_objs)]);	/* received elsewhere */
		else
			return -EINVAL;
		t1 = local_clock();
		r.total_ns += t1 - t0;
		if (!strcmp(cmd, "outer"))
			r.outer_ns += t1 - t0;
		else if (!strcmp(cmd, "sleep"))
			r.sleep_ns += t1 - t0;
		else if (!strcmp(cmd, "tail"))
			WRITE_ONCE(kt_tail_total_ns, kt_tail_total_ns + t1 - t0);
		r.calls++;
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	r.inner_ns = kt_inner_ns;
	r.inner_max = kt_inner_max;
	kt_last = r;
	return 0;
}

static ssize_t kt_run_write(struct file *file, const char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[64], cmd[16];
	unsigned long long n;
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%15s %llu", cmd, &n) != 2 || n > 10000000)
		return -EINVAL;
	mutex_lock(&kt_lock);
	err = kt_run(cmd, n);
	mutex_unlock(&kt_lock);
	return err ? err : len;
}

static ssize_t kt_last_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[256];
	int n;

	mutex_lock(&kt_lock);
	n = scnprintf(buf, sizeof(buf),
		      "cmd=%s calls=%llu total_ns=%llu outer_ns=%llu inner_ns=%llu sleep_ns=%llu inner_max_ns=%llu multi_sum=%lld\n",
		      kt_last.cmd[0] ? kt_last.cmd : "none", kt_last.calls, kt_last.total_ns,
		      kt_last.outer_ns, kt_last.inner_ns, kt_last.sleep_ns, kt_last.inner_max,
		      kt_last.multi_sum);
	mutex_unlock(&kt_lock);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations kt_run_fops = {
	.owner = THIS_MODULE,
	.write = kt_run_write,
	.llseek = noop_llseek,
};

static const struct file_operations kt_last_fops = {
	.owner = THIS_MODULE,
	.read = kt_last_read,
	.llseek = default_llseek,
};

static int __init kt_init(void)
{
	int i;

	kt_spin_cycles = tsc_khz / 100;	/* 10 us */
	for (i = 0; i < ARRAY_SIZE(kt_objs); i++)
		INIT_WORK(&kt_objs[i].work, kt_handoff_work);
	kt_dir = debugfs_create_dir("kinstr_test", NULL);
	debugfs_create_file("run", 0200, kt_dir, NULL, &kt_run_fops);
	debugfs_create_file("last", 0400, kt_dir, NULL, &kt_last_fops);
	/* drill's references (0 written to reset): the targets' calls, the tail call's split */
	debugfs_create_u64("ind_a", 0600, kt_dir, &kt_ind_a);
	debugfs_create_u64("ind_b", 0600, kt_dir, &kt_ind_b);
	debugfs_create_u64("tail_ns", 0600, kt_dir, &kt_tail_ns);
	debugfs_create_u64("tail_total_ns", 0600, kt_dir, &kt_tail_total_ns);
	return 0;
}

static void __exit kt_exit(void)
{
	debugfs_remove_recursive(kt_dir);
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr test-only module: functions with known timing and shape, in module text");
