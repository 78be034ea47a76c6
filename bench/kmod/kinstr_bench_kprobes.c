// SPDX-License-Identifier: GPL-2.0
/*
 * Bench-only: register_kprobes()/unregister_kprobes() of many kprobes at once, timed, for the
 * side-by-side with kinstr's install and remove (bench/run-install). Each kprobe's pre_handler
 * only counts. Interface in debugfs, /sys/kernel/debug/kinstr_bench/:
 *
 *   addrs   write: kernel text addresses, hex, separated by white space (one open = one list)
 *   ctl     write "register": register the listed addresses one by one with register_kprobe()
 *             (the script turns optimization off meanwhile, so that the optimizer does not
 *             contend with the registrations), keeping those kprobes accepts;
 *           then "settle": wait until kprobes' optimizer has settled (3 s without progress),
 *             keep the addresses whose kprobe was optimized, unregister everything and wait
 *             until the text is back;
 *           write "go": register_kprobes() of all the listed addresses at once, wait until every
 *             one is optimized, unregister_kprobes() and wait until the text is back, timed
 *   result  read: the outcome of the last command ("register", "settle": '#' lines, then after
 *             "settle" the kept addresses, one a line; "go": one "kprobes ..." line of figures
 *             in ms)
 *
 * Whether a kprobe is optimized is read from the text, as no exported interface tells (the flag
 * sits on kprobes' internal aggregate probe): optimized when the site holds a jmp rel32 (e9) that
 * was not there before; restored when the first 5 bytes equal the original again. The waits poll
 * every 1-2 ms.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define MAX_ADDRS	20000
#define IN_MAX		(MAX_ADDRS * 24)
#define OUT_MAX		(MAX_ADDRS * 20 + 4096)
#define CMP_LEN		5			/* an optprobe's jmp rel32 */
#define WAIT_MAX_MS	(10 * 60 * 1000)	/* give up waiting for the optimizer after this */

static struct dentry *dir;
static DEFINE_MUTEX(lock);
static char *in_buf, *out_buf;
static size_t in_len, out_len;
static unsigned long *addrs;
static unsigned int n;
static struct kprobe *kps;
static struct kprobe **kpp;
static u8 (*orig)[CMP_LEN];
static bool *ok;			/* "register": kprobes accepted addrs[i] */
static struct kprobe **regd;		/* the registered ones */
static unsigned int n_reg;
static atomic_long_t hits;

static int pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&hits);
	return 0;
}

static __printf(1, 2) void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_len += vscnprintf(out_buf + out_len, OUT_MAX - out_len, fmt, ap);
	va_end(ap);
}

enum state { ST_OTHER, ST_INT3, ST_OPTIMIZED, ST_RESTORED };

static enum state state_of(unsigned int i)
{
	u8 b[CMP_LEN];

	if (copy_from_kernel_nofault(b, (void *)addrs[i], CMP_LEN))
		return ST_OTHER;
	if (!memcmp(b, orig[i], CMP_LEN))
		return ST_RESTORED;
	if (b[0] == 0xe9)
		return ST_OPTIMIZED;
	if (b[0] == 0xcc)
		return ST_INT3;
	return ST_OTHER;
}

/* How many of the sites with use[i] (all if use is NULL) are in state st. */
static unsigned int count_state(const bool *use, enum state st)
{
	unsigned int i, c = 0;

	for (i = 0; i < n; i++)
		if ((!use || use[i]) && state_of(i) == st)
			c++;
	return c;
}

/*
 * Poll until want of the sites are in state st; with settle_ms, stop also once the count has
 * not changed for that long. Returns the count reached.
 */
static unsigned int wait_state(const bool *use, enum state st, unsigned int want, unsigned int settle_ms)
{
	u64 start = ktime_get_ns(), last_change = start;
	unsigned int c = count_state(use, st), prev = c;

	while (c < want) {
		u64 t = ktime_get_ns();

		if (t - start > (u64)WAIT_MAX_MS * NSEC_PER_MSEC)
			break;
		if (settle_ms && t - last_change > (u64)settle_ms * NSEC_PER_MSEC)
			break;
		usleep_range(1000, 2000);
		c = count_state(use, st);
		if (c != prev) {
			prev = c;
			last_change = ktime_get_ns();
		}
	}
	return c;
}

static int parse(void)
{
	char *p = in_buf, *tok;

	in_buf[in_len] = 0;
	n = 0;
	while ((tok = strsep(&p, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (n == MAX_ADDRS || kstrtoul(tok, 16, &addrs[n]))
			return -EINVAL;
		n++;
	}
	in_len = 0;	/* strsep cut the text: write the list again for the next command */
	return n ? 0 : -ENOENT;
}

static void prepare(unsigned int i)
{
	memset(&kps[i], 0, sizeof(kps[i]));
	kps[i].addr = (kprobe_opcode_t *)addrs[i];
	kps[i].pre_handler = pre;
	kpp[i] = &kps[i];
	if (copy_from_kernel_nofault(orig[i], (void *)addrs[i], CMP_LEN))
		memset(orig[i], 0, CMP_LEN);
}

/* "register": each address alone, keeping those kprobes accepts (in ok[]). */
static int do_register(void)
{
	unsigned int i, errs[5] = { 0 };
	u64 t0 = ktime_get_ns();

	n_reg = 0;
	for (i = 0; i < n; i++) {
		int ret;

		prepare(i);
		ok[i] = false;
		ret = register_kprobe(&kps[i]);
		if (ret) {
			errs[ret == -EINVAL ? 0 : ret == -EILSEQ ? 1 : ret == -EBUSY ? 2 : ret == -ENOENT ? 3 : 4]++;
			continue;
		}
		ok[i] = true;
		regd[n_reg++] = &kps[i];
		cond_resched();
	}
	out("# %u addresses: %u registered one by one in %llu ms; refused: %u EINVAL, %u EILSEQ, "
	    "%u EBUSY, %u ENOENT, %u other\n", n, n_reg, div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC),
	    errs[0], errs[1], errs[2], errs[3], errs[4]);
	return 0;
}

/*
 * "settle", after "register": wait until kprobes' optimizer is done (3 s without progress), keep
 * the addresses whose kprobe it optimized, unregister everything and wait until the text is back.
 */
static int do_settle(void)
{
	unsigned int i, opt, back;
	u64 t0 = ktime_get_ns();

	opt = wait_state(ok, ST_OPTIMIZED, n_reg, 3000);
	for (i = 0; i < n; i++)
		if (ok[i] && state_of(i) != ST_OPTIMIZED)
			ok[i] = false;
	if (n_reg)
		unregister_kprobes(regd, n_reg);
	back = wait_state(NULL, ST_RESTORED, n, 0);
	out("# %u of %u registered kprobes optimized; text restored at %u of %u after unregistering "
	    "(%llu ms)\n", opt, n_reg, back, n, div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC));
	for (i = 0; i < n; i++)
		if (ok[i])
			out("0x%lx\n", addrs[i]);
	n_reg = 0;
	return back == n ? 0 : -EIO;
}

/* ns as milliseconds with one decimal: two arguments for "%llu.%llu" */
#define TENTHS(ns)	div_u64((ns) + 50000, 100000) / 10, div_u64((ns) + 50000, 100000) % 10

static int do_go(void)
{
	u64 t0, t1, t2, t3, t4, t5;
	unsigned int i, armed, opt, back;
	int ret;

	for (i = 0; i < n; i++)
		prepare(i);
	atomic_long_set(&hits, 0);
	t0 = ktime_get_ns();
	ret = register_kprobes(kpp, n);
	t1 = ktime_get_ns();
	if (ret) {
		out("kprobes FAIL register_kprobes of %u: %d\n", n, ret);
		return ret;
	}
	armed = n - count_state(NULL, ST_RESTORED);
	opt = wait_state(NULL, ST_OPTIMIZED, n, 0);
	t2 = ktime_get_ns();
	t3 = ktime_get_ns();
	unregister_kprobes(kpp, n);
	t4 = ktime_get_ns();
	back = wait_state(NULL, ST_RESTORED, n, 0);
	t5 = ktime_get_ns();
	out("kprobes n=%u register=%llu.%llu optimized=%llu.%llu unregister=%llu.%llu restored=%llu.%llu "
	    "armed=%u n_optimized=%u n_restored=%u hits=%ld verify=%s\n", n,
	    TENTHS(t1 - t0), TENTHS(t2 - t0), TENTHS(t4 - t3), TENTHS(t5 - t3), armed, opt, back,
	    atomic_long_read(&hits), armed == n && opt == n && back == n ? "ok" : "FAILED");
	return back == n ? 0 : -EIO;
}

static int addrs_open(struct inode *inode, struct file *file)
{
	mutex_lock(&lock);
	in_len = 0;
	mutex_unlock(&lock);
	return 0;
}

static ssize_t addrs_write(struct file *file, const char __user *buf, size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&lock);
	ret = simple_write_to_buffer(in_buf, IN_MAX - 1, ppos, buf, count);
	if (ret > 0 && *ppos > in_len)
		in_len = *ppos;
	mutex_unlock(&lock);
	return ret;
}

static ssize_t ctl_write(struct file *file, const char __user *buf, size_t count, loff_t *ppos)
{
	char cmd[16] = "";
	int ret;

	if (copy_from_user(cmd, buf, min(count, sizeof(cmd) - 1)))
		return -EFAULT;
	strim(cmd);
	mutex_lock(&lock);
	out_len = 0;
	out_buf[0] = 0;
	if (!strcmp(cmd, "settle")) {
		ret = n_reg ? do_settle() : -ENOENT;
	} else if (n_reg) {
		ret = -EBUSY;		/* "register" must be followed by "settle" */
	} else {
		ret = parse();
		if (ret)
			out("kprobes FAIL: no address list (%d)\n", ret);
		else if (!strcmp(cmd, "register"))
			ret = do_register();
		else if (!strcmp(cmd, "go"))
			ret = do_go();
		else
			ret = -EINVAL;
	}
	mutex_unlock(&lock);
	return ret ? ret : count;
}

static ssize_t result_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&lock);
	ret = simple_read_from_buffer(buf, count, ppos, out_buf, out_len);
	mutex_unlock(&lock);
	return ret;
}

static const struct file_operations addrs_fops = {
	.owner = THIS_MODULE, .open = addrs_open, .write = addrs_write, .llseek = noop_llseek,
};
static const struct file_operations ctl_fops = { .owner = THIS_MODULE, .write = ctl_write };
static const struct file_operations result_fops = { .owner = THIS_MODULE, .read = result_read };

static int __init bench_init(void)
{
	in_buf = vmalloc(IN_MAX);
	out_buf = vmalloc(OUT_MAX);
	addrs = vmalloc_array(MAX_ADDRS, sizeof(*addrs));
	kps = vmalloc_array(MAX_ADDRS, sizeof(*kps));
	kpp = vmalloc_array(MAX_ADDRS, sizeof(*kpp));
	orig = vmalloc_array(MAX_ADDRS, sizeof(*orig));
	ok = vzalloc(MAX_ADDRS * sizeof(*ok));
	regd = vmalloc_array(MAX_ADDRS, sizeof(*regd));
	if (!in_buf || !out_buf || !addrs || !kps || !kpp || !orig || !ok || !regd)
		goto nomem;
	dir = debugfs_create_dir("kinstr_bench", NULL);
	debugfs_create_file("addrs", 0200, dir, NULL, &addrs_fops);
	debugfs_create_file("ctl", 0200, dir, NULL, &ctl_fops);
	debugfs_create_file("result", 0400, dir, NULL, &result_fops);
	return 0;
nomem:
	vfree(in_buf);
	vfree(out_buf);
	vfree(addrs);
	vfree(kps);
	vfree(kpp);
	vfree(orig);
	vfree(ok);
	vfree(regd);
	return -ENOMEM;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(dir);
	if (n_reg)
		unregister_kprobes(regd, n_reg);
	vfree(ok);
	vfree(regd);
	vfree(in_buf);
	vfree(out_buf);
	vfree(addrs);
	vfree(kps);
	vfree(kpp);
	vfree(orig);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr benchmark: register_kprobes() of many counting kprobes, timed");
