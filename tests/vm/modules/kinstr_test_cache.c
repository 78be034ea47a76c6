// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the code cache (issue 15): functions whose runs a test controls, each
 * holding one of the hazards a copy must survive. Each is noipa, so its symbol is its code.
 *
 *   kinstr_tc_loop(n)      a loop of n passes with a branch inside (i % 3)
 *   kinstr_tc_branch(x)    a tree of branches on x's low bits
 *   kinstr_tc_copy(p)      copy_from_user() of p: -EFAULT for a bad pointer (the fault in the callee)
 *   kinstr_tc_get(p)       unsafe_get_user() of p inline: its extable entry and fixup in this function
 *   kinstr_tc_warn(x)      WARN_ON_ONCE(x == 1) (a BUG-table ud2)
 *   kinstr_tc_key()        a static branch (a jump label) of kinstr_tc_on
 *   kinstr_tc_call()       a static call of kinstr_tc_sc (target a or b)
 *   kinstr_tc_sleep(ms)    sleeps ms milliseconds (msleep_interruptible) inside
 *
 * Write "CMD N" to /sys/kernel/debug/kinstr_tc/run; read /sys/kernel/debug/kinstr_tc/last:
 *   cmd=CMD n=N sum=S efault=E taken=T a=A b=B ns=NS reliable=R (NS: ktime over the command)
 * Commands: loop N, branch N (x = 0..N-1), fault N, get N, warn N (x = 0..N-1), key N, key_on, key_off,
 * call N, sc_a, sc_b, sleep MS, reliable PID (a reliable stack walk of task PID, as livepatch
 * does: R is its depth, or the negative errno).
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/stacktrace.h>
#include <linux/static_call.h>
#include <linux/uaccess.h>

#define TC_FN __attribute__((__noipa__)) __used

static struct dentry *tc_dir;
static DEFINE_MUTEX(tc_lock);
static DEFINE_STATIC_KEY_FALSE(kinstr_tc_on);
static u64 tc_a, tc_b, tc_taken;
static volatile int tc_sink;

static char tc_last[256];

TC_FN int kinstr_tc_loop(int n);
TC_FN int kinstr_tc_loop(int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++) {
		if (i % 3 == 0)
			s += i;
		else
			s -= 1;
	}
	return s;
}

TC_FN int kinstr_tc_branch(int x);
TC_FN int kinstr_tc_branch(int x)
{
	int r = 0;

	if (x & 1) {
		r += 10;
		if (x & 2)
			r += 1;
		else
			r += 2;
	} else if (x & 4) {
		r += 20;
	} else {
		r += 30;
	}
	tc_sink = r;
	return r;
}

TC_FN int kinstr_tc_copy(const void __user *p);
TC_FN int kinstr_tc_copy(const void __user *p)
{
	char buf[16];

	if (copy_from_user(buf, p, sizeof(buf)))
		return -EFAULT;
	tc_sink = buf[0];
	return 0;
}

/* The faulting load inline, with its exception-table entry and fixup inside this function. */
TC_FN int kinstr_tc_get(const int __user *p);
TC_FN int kinstr_tc_get(const int __user *p)
{
	int v;

	if (!user_access_begin(p, sizeof(*p)))
		return -EFAULT;
	unsafe_get_user(v, p, efault);
	user_access_end();
	tc_sink = v;
	return 0;
efault:
	user_access_end();
	return -EFAULT;
}

TC_FN int kinstr_tc_warn(int x);
TC_FN int kinstr_tc_warn(int x)
{
	WARN_ON_ONCE(x == 1);
	tc_sink = x;
	return x + 1;
}

TC_FN int kinstr_tc_key(void);
TC_FN int kinstr_tc_key(void)
{
	if (static_branch_unlikely(&kinstr_tc_on)) {
		tc_taken++;
		return 1;
	}
	tc_sink = 0;
	return 0;
}

static int kinstr_tc_target_a(void)
{
	tc_a++;
	return 1;
}

static int kinstr_tc_target_b(void)
{
	tc_b++;
	return 2;
}

DEFINE_STATIC_CALL(kinstr_tc_sc, kinstr_tc_target_a);

TC_FN int kinstr_tc_call(void);
TC_FN int kinstr_tc_call(void)
{
	int r = static_call(kinstr_tc_sc)();

	tc_sink = r;	/* not a tail call: the call site returns here */
	return r;
}

TC_FN long kinstr_tc_sleep(int ms);
TC_FN long kinstr_tc_sleep(int ms)
{
	long left = msleep_interruptible(ms);

	tc_sink = (int)left;	/* the sleep's return address is inside this function */
	return left;
}

/* stack_trace_save_tsk_reliable() is not exported: found as kinstr finds kallsyms_lookup_name. */
typedef unsigned long (*lookup_fn)(const char *);
typedef int (*reliable_fn)(struct task_struct *, unsigned long *, unsigned int);

static int tc_reliable(pid_t nr)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long entries[64];
	struct task_struct *t;
	reliable_fn walk;
	lookup_fn lookup;
	int ret;

	if (register_kprobe(&kp))
		return -ENOSYS;
	lookup = (lookup_fn)kp.addr;
	unregister_kprobe(&kp);
	walk = (reliable_fn)lookup("stack_trace_save_tsk_reliable");
	if (!walk)
		return -ENOSYS;
	t = get_pid_task(find_get_pid(nr), PIDTYPE_PID);
	if (!t)
		return -ESRCH;
	ret = walk(t, entries, ARRAY_SIZE(entries));
	put_task_struct(t);
	return ret;
}

/*
 * kinstr_tc_skew(x), command skew N (x = 0..N-1; kinstr optimize's test, after the others so
 * that their source lines stay where cover.t expects them): skewed branches laid out against
 * the odds: each test tells GCC that its common way is unlikely (x % 8 != 0 on 7 calls of 8, x % 64 != 0 on 63 of 64), so the original jumps out of
 * line and back on 7 calls of 8 (GCC 12 turns the second test into a cmov); a copy laid out by
 * the measured counts falls through.
 */
TC_FN int kinstr_tc_skew(int x);
TC_FN int kinstr_tc_skew(int x)
{
	int r = x;

	if (__builtin_expect(x % 8 != 0, 0))
		r = r * 3 + 1;
	else
		r -= 5;
	if (__builtin_expect(x % 64 != 0, 0))
		r ^= 0x55;
	else
		r += 100;
	tc_sink = r;
	return r;
}

static ssize_t tc_run_write(struct file *file, const char __user *ubuf, size_t len, loff_t *off)
{
	char buf[64], cmd[16];
	long n = 0, i, sum = 0, efault = 0, rel = 0;
	u64 t0, ns;

	if (len >= sizeof(buf) || copy_from_user(buf, ubuf, len))
		return -EINVAL;
	buf[len] = 0;
	if (sscanf(buf, "%15s %ld", cmd, &n) < 1 || n < 0)
		return -EINVAL;
	mutex_lock(&tc_lock);
	tc_a = tc_b = tc_taken = 0;
	t0 = ktime_get_ns();
	if (!strcmp(cmd, "skew")) {
		for (i = 0; i < n; i++)
			sum += kinstr_tc_skew((int)i);
	} else if (!strcmp(cmd, "loop")) {
		for (i = 0; i < n; i++)
			sum += kinstr_tc_loop(10);
	} else if (!strcmp(cmd, "branch")) {
		for (i = 0; i < n; i++)
			sum += kinstr_tc_branch((int)i);
	} else if (!strcmp(cmd, "fault")) {
		for (i = 0; i < n; i++)
			efault += kinstr_tc_copy((const void __user *)16) == -EFAULT;
	} else if (!strcmp(cmd, "get")) {
		for (i = 0; i < n; i++)
			efault += kinstr_tc_get((const int __user *)16) == -EFAULT;
	} else if (!strcmp(cmd, "warn")) {
		for (i = 0; i < n; i++)
			sum += kinstr_tc_warn((int)i);
	} else if (!strcmp(cmd, "key")) {
		for (i = 0; i < n; i++)
			sum += kinstr_tc_key();
	} else if (!strcmp(cmd, "key_on")) {
		static_branch_enable(&kinstr_tc_on);
	} else if (!strcmp(cmd, "key_off")) {
		static_branch_disable(&kinstr_tc_on);
	} else if (!strcmp(cmd, "call")) {
		for (i = 0; i < n; i++)
			sum += kinstr_tc_call();
	} else if (!strcmp(cmd, "sc_a")) {
		static_call_update(kinstr_tc_sc, kinstr_tc_target_a);
	} else if (!strcmp(cmd, "sc_b")) {
		static_call_update(kinstr_tc_sc, kinstr_tc_target_b);
	} else if (!strcmp(cmd, "sleep")) {
		mutex_unlock(&tc_lock);	/* others may run while this one sleeps */
		sum = kinstr_tc_sleep((int)n);
		mutex_lock(&tc_lock);
	} else if (!strcmp(cmd, "reliable")) {
		rel = tc_reliable((pid_t)n);
	} else {
		mutex_unlock(&tc_lock);
		return -EINVAL;
	}
	ns = ktime_get_ns() - t0;
	snprintf(tc_last, sizeof(tc_last),
		 "cmd=%s n=%ld sum=%ld efault=%ld taken=%llu a=%llu b=%llu ns=%llu reliable=%ld\n",
		 cmd, n, sum, efault, tc_taken, tc_a, tc_b, ns, rel);
	mutex_unlock(&tc_lock);
	return len;
}

static ssize_t tc_last_read(struct file *file, char __user *ubuf, size_t len, loff_t *off)
{
	char buf[sizeof(tc_last)];
	ssize_t r;

	mutex_lock(&tc_lock);
	memcpy(buf, tc_last, sizeof(buf));
	mutex_unlock(&tc_lock);
	r = simple_read_from_buffer(ubuf, len, off, buf, strlen(buf));
	return r;
}

static const struct file_operations tc_run_fops = { .owner = THIS_MODULE, .write = tc_run_write };
static const struct file_operations tc_last_fops = { .owner = THIS_MODULE, .read = tc_last_read };

static int __init tc_init(void)
{
	tc_dir = debugfs_create_dir("kinstr_tc", NULL);
	debugfs_create_file("run", 0200, tc_dir, NULL, &tc_run_fops);
	debugfs_create_file("last", 0400, tc_dir, NULL, &tc_last_fops);
	return 0;
}

static void __exit tc_exit(void)
{
	debugfs_remove_recursive(tc_dir);
}

module_init(tc_init);
module_exit(tc_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr test functions for the code cache");
