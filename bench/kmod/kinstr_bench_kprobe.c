// SPDX-License-Identifier: GPL-2.0
/*
 * Bench-only: one kprobe whose pre_handler only counts, at sym+offset, for the side-by-side
 * per-hit cost against kinstr's probes. Whether kprobes optimizes it (an optprobe jump) or keeps
 * the int3 is set with /proc/sys/debug/kprobes-optimization before loading; a kprobe at a
 * function's ftrace site goes through ftrace.
 */
#include <linux/kprobes.h>
#include <linux/module.h>

static char *sym = "__do_sys_getppid";
static unsigned int offset = 0xb;
module_param(sym, charp, 0444);
module_param(offset, uint, 0444);

static unsigned long hits;
module_param(hits, ulong, 0444);

static int pre(struct kprobe *p, struct pt_regs *regs)
{
	hits++;
	return 0;
}

static struct kprobe kp = { .pre_handler = pre };

static int __init bench_init(void)
{
	kp.symbol_name = sym;
	kp.offset = offset;
	return register_kprobe(&kp);
}

static void __exit bench_exit(void)
{
	unregister_kprobe(&kp);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr benchmark: a counting kprobe");
