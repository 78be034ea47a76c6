// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr.ko: the small, auditable half of kinstr. This file is the top of the module's call
 * graph: module init/exit, /dev/kinstr and its ioctl dispatch, and the read-only ioctls
 * (version, debug info, text reads, layout, hit path, limits). It calls down into every other
 * file; none calls back (tests/unit/test_layers.sh).
 */
#include <linux/bug.h>
#include <linux/capability.h>
#include <linux/extable.h>
#include <linux/jump_label.h>
#include <linux/static_call_types.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/security.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include <uapi/linux/kinstr.h>
#include "patch/patch.h"
#include "base.h"
#include "ksym.h"
#include "limits.h"
#include "check/check.h"
#include "actions/actions.h"
#include "actions/pred.h"
#include "session.h"
#include "abi.h"

static bool kinstr_readable(unsigned long a, unsigned long len)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;

	return kinstr_span_has(&k->text, a, len) || kinstr_span_has(&k->ex_table, a, len) ||
	       kinstr_span_has(&k->jump_table, a, len) ||
	       kinstr_span_has(&k->static_call_sites, a, len) || kinstr_span_has(&k->bug_table, a, len);
}

static long kinstr_ioctl_read(void __user *uarg)
{
	struct module *mod = NULL;
	struct kinstr_read r;
	void *bounce;
	u64 done = 0;
	long err;

	err = kinstr_get_struct(&r, sizeof(r), uarg, KINSTR_READ_SIZE_VER0);
	if (err)
		return err;
	if (r.flags)
		return -EINVAL;
	if (r.len > KINSTR_READ_MAX)
		return -E2BIG;
	/* a module's text or tables: pinned for the copy */
	if (!r.len || (!kinstr_readable(r.addr, r.len) && !kinstr_module_readable(r.addr, r.len, &mod)))
		return -ERANGE;
	bounce = (void *)__get_free_page(GFP_KERNEL);
	if (!bounce) {
		module_put(mod);
		return -ENOMEM;
	}
	while (done < r.len) {
		size_t n = min_t(u64, r.len - done, PAGE_SIZE);

		/* text can be unmapped under us (init text, a module going away): never fault */
		if (copy_from_kernel_nofault(bounce, (void *)(unsigned long)(r.addr + done), n)) {
			err = -EIO;
			break;
		}
		if (copy_to_user(u64_to_user_ptr(r.buf) + done, bounce, n)) {
			err = -EFAULT;
			break;
		}
		done += n;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	free_page((unsigned long)bounce);
	module_put(mod);
	if (put_user(done, (u64 __user *)(uarg + offsetof(struct kinstr_read, copied))))
		return -EFAULT;
	return err;
}

static void layout_span(struct kinstr_span64 *d, const struct kinstr_span *s)
{
	d->start = s->start;
	d->end = s->end;
}

static long kinstr_ioctl_layout(void __user *uarg)
{
	const struct kinstr_ksyms *k = &kinstr_ksyms;
	struct kinstr_layout l = {};

	layout_span(&l.text, &k->text);
	layout_span(&l.entry_text, &k->entry_text);
	layout_span(&l.irqentry_text, &k->irqentry_text);
	layout_span(&l.noinstr_text, &k->noinstr_text);
	layout_span(&l.kprobes_text, &k->kprobes_text);
	kinstr_layout_table(&l.ex_table, &k->ex_table, sizeof(struct exception_table_entry),
		     offsetof(struct exception_table_entry, insn),
		     offsetof(struct exception_table_entry, fixup));
	kinstr_layout_table(&l.jump_table, &k->jump_table, sizeof(struct jump_entry),
		     offsetof(struct jump_entry, code), offsetof(struct jump_entry, target));
	kinstr_layout_table(&l.static_call_sites, &k->static_call_sites, sizeof(struct static_call_site),
		     offsetof(struct static_call_site, addr), -1);
	kinstr_layout_table(&l.bug_table, &k->bug_table, sizeof(struct bug_entry),
		     offsetof(struct bug_entry, bug_addr_disp), -1);
	return kinstr_put_struct(uarg, &l, sizeof(l), KINSTR_LAYOUT_SIZE_VER0);
}

static long kinstr_ioctl_module(void __user *uarg)
{
	struct kinstr_module_info mi;
	long err;

	err = kinstr_get_struct(&mi, sizeof(mi), uarg, KINSTR_MODULE_INFO_SIZE_VER0);
	if (err)
		return err;
	if (mi.flags)
		return -EINVAL;
	memset((char *)&mi + offsetof(struct kinstr_module_info, name), 0,
	       sizeof(mi) - offsetof(struct kinstr_module_info, name));
	err = kinstr_module_info(&mi);
	if (err)
		return err;
	return kinstr_put_struct(uarg, &mi, sizeof(mi), KINSTR_MODULE_INFO_SIZE_VER0);
}

static long kinstr_ioctl_hit_path(void __user *uarg)
{
	const struct kinstr_span *spans;
	struct kinstr_hit_path h;
	size_t n, i;
	long err;

	err = kinstr_get_struct(&h, sizeof(h), uarg, KINSTR_HIT_PATH_SIZE_VER0);
	if (err)
		return err;
	if (h.flags || h.count)
		return -EINVAL;
	if (!kinstr_hitpath_spans(&spans, &n))
		h.flags |= KINSTR_HIT_PATH_F_INCOMPLETE;
	for (i = 0; i < n && i < h.cap; i++) {
		struct kinstr_span64 s = { .start = spans[i].start, .end = spans[i].end };

		if (copy_to_user(u64_to_user_ptr(h.spans) + i * sizeof(s), &s, sizeof(s)))
			return -EFAULT;
	}
	h.count = n;
	return kinstr_put_struct(uarg, &h, sizeof(h), KINSTR_HIT_PATH_SIZE_VER0);
}

static long kinstr_ioctl_limits(void __user *uarg)
{
	struct kinstr_limits l;
	long err;

	err = kinstr_get_struct(&l, sizeof(l), uarg, KINSTR_LIMITS_SIZE_VER0);
	if (err)
		return err;
	if (l.flags)
		return -EINVAL;
	kinstr_limits_read(&l);
	return kinstr_put_struct(uarg, &l, sizeof(l), KINSTR_LIMITS_SIZE_VER0);
}

/* The ABI major the version ioctl answers: another in a KINSTR_PLANT=abi test build (kmod/Kbuild) */
#ifdef KINSTR_PLANT_ABI
#define KINSTR_ANSWERED_ABI_MAJOR (KINSTR_ABI_MAJOR + 1)
#else
#define KINSTR_ANSWERED_ABI_MAJOR KINSTR_ABI_MAJOR
#endif

static long kinstr_ioctl_version(void __user *uarg)
{
	struct kinstr_version v = {
		.abi_major = KINSTR_ANSWERED_ABI_MAJOR,
		.abi_minor = KINSTR_ABI_MINOR,
		.features = KINSTR_FEAT_DEBUG_INFO | KINSTR_FEAT_READ | KINSTR_FEAT_CHECK |
			    KINSTR_FEAT_LAYOUT | KINSTR_FEAT_PROBES | KINSTR_FEAT_FTRACE_PROBES |
			    KINSTR_FEAT_FTRACE_TRACE | KINSTR_FEAT_VERIFY_ONLY | KINSTR_FEAT_HIT_PATH |
			    KINSTR_FEAT_MISSED | KINSTR_FEAT_LIMITS | KINSTR_FEAT_KPROBE_FENCE |
			    KINSTR_FEAT_CODE_CACHE | KINSTR_FEAT_DISARM | KINSTR_FEAT_CHECK_ONLY | KINSTR_FEAT_HELD |
			    KINSTR_FEAT_SCOPE | KINSTR_FEAT_PRED | KINSTR_FEAT_TIMER_BY | KINSTR_FEAT_CACHE_TIMER |
			    KINSTR_FEAT_LAID_COPY |
			    kinstr_action_features() |	/* BPF where the kernel can run programs */
			    (kinstr_khas(__module_address) ? KINSTR_FEAT_MODULE_TEXT : 0),
	};

	strscpy(v.module_version, KINSTR_VERSION, sizeof(v.module_version));
	strscpy(v.kernel_release, utsname()->release, sizeof(v.kernel_release));
	return kinstr_put_struct(uarg, &v, sizeof(v), KINSTR_VERSION_SIZE_VER0);
}

static long kinstr_ioctl_debug_info(void __user *uarg)
{
	struct kinstr_debug_info d = {
		.kallsyms_lookup_name = kinstr_kaddr(kallsyms_lookup_name),
		.stext = kinstr_ksyms.text.start,
		.etext = kinstr_ksyms.text.end,
		.return_thunk = kinstr_ksyms.return_thunk,
		.return_thunk_sym = kinstr_ksyms.return_thunk_sym,
	};

	if (security_locked_down(LOCKDOWN_DEV_MEM))
		d.flags |= KINSTR_DEBUG_LOCKDOWN;
	if (!kinstr_ksyms.return_thunk)
		d.flags |= KINSTR_DEBUG_RET_BARE;
	if (kinstr_ksyms.return_thunk_its)
		d.flags |= KINSTR_DEBUG_RET_ITS;
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT))
		d.flags |= KINSTR_DEBUG_IBT;
	return kinstr_put_struct(uarg, &d, sizeof(d), KINSTR_DEBUG_INFO_SIZE_VER0);
}

static long kinstr_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KINSTR_IOC_VERSION:
		return kinstr_ioctl_version(uarg);
	case KINSTR_IOC_DEBUG_INFO:
		return kinstr_ioctl_debug_info(uarg);
	case KINSTR_IOC_READ:
		return kinstr_ioctl_read(uarg);
	case KINSTR_IOC_CHECK:
		return kinstr_ioctl_check(uarg);
	case KINSTR_IOC_LAYOUT:
		return kinstr_ioctl_layout(uarg);
	case KINSTR_IOC_MODULE:
		return kinstr_ioctl_module(uarg);
	case KINSTR_IOC_HIT_PATH:
		return kinstr_ioctl_hit_path(uarg);
	case KINSTR_IOC_LIMITS:
		return kinstr_ioctl_limits(uarg);
	case KINSTR_IOC_HELD:
		return kinstr_ioctl_held(uarg);
	default:
		return kinstr_session_ioctl(file->private_data, cmd, uarg);
	}
}

static int kinstr_open(struct inode *inode, struct file *file)
{
	/* The device node is 0600 root; this also stops a root process without the capability. */
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	file->private_data = kinstr_session_new();
	return file->private_data ? 0 : -ENOMEM;
}

/* Last close of the file (exit and kill -9 included): undo everything it installed. */
static int kinstr_release(struct inode *inode, struct file *file)
{
	kinstr_session_free(file->private_data);
	return 0;
}

/* The trace buffers, read-only (a mapping also keeps the file, so the session, alive). */
static int kinstr_mmap(struct file *file, struct vm_area_struct *vma)
{
	return kinstr_session_mmap(file->private_data, vma);
}

static __poll_t kinstr_poll(struct file *file, struct poll_table_struct *pt)
{
	return kinstr_session_poll(file->private_data, file, pt);
}

static const struct file_operations kinstr_fops = {
	.owner = THIS_MODULE,
	.open = kinstr_open,
	.release = kinstr_release,
	.mmap = kinstr_mmap,
	.poll = kinstr_poll,
	.unlocked_ioctl = kinstr_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice kinstr_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kinstr",
	.fops = &kinstr_fops,
	.mode = 0600,
};

/* The closure of what probe context reaches, from the roots each part names. */
static int hit_path_init(void)
{
	unsigned long roots[KINSTR_HIT_ROOTS_MAX];
	size_t n = 0;

	n += kinstr_probes_hit_roots(roots + n);
	n += kinstr_timing_hit_roots(roots + n);
	n += kinstr_trace_hit_roots(roots + n);
	n += kinstr_pred_hit_roots(roots + n);
	BUG_ON(n > KINSTR_HIT_ROOTS_MAX);
	return kinstr_hitpath_init(roots, n);
}

static bool decoder_selftest;
module_param(decoder_selftest, bool, 0444);
MODULE_PARM_DESC(decoder_selftest, "at load, read every instruction of the core text with both of the verifier's decoders and compare");

static int __init kinstr_init(void)
{
	int err;

	err = kinstr_ksyms_init();
	if (err)
		return err;
	kinstr_limits_init();
	err = kinstr_fence_init();
	if (err) {
		kinstr_ksyms_exit();
		return err;
	}
	err = hit_path_init();
	if (err) {
		kinstr_fence_exit();
		kinstr_ksyms_exit();
		return err;
	}
	err = kinstr_probes_init();
	if (err) {
		kinstr_hitpath_exit();
		kinstr_fence_exit();
		kinstr_ksyms_exit();
		return err;
	}
	kinstr_timing_init();	/* without sched_switch, only the timers are unavailable */
	err = misc_register(&kinstr_miscdev);
	if (err) {
		pr_err(KINSTR_PR_PREFIX "cannot register /dev/kinstr: %d\n", err);
		kinstr_probes_exit();
		kinstr_timing_exit();
		kinstr_hitpath_exit();
		kinstr_fence_exit();
		kinstr_ksyms_exit();
		return err;
	}
	{
		const struct kinstr_span *hp;
		size_t nhp;
		bool whole = kinstr_hitpath_spans(&hp, &nhp);

		pr_info(KINSTR_PR_PREFIX "%s loaded (abi %d.%d), kallsyms_lookup_name resolved, text %lu KiB, "
			"hit path %zu functions%s\n", KINSTR_VERSION, KINSTR_ABI_MAJOR, KINSTR_ABI_MINOR,
			(kinstr_ksyms.text.end - kinstr_ksyms.text.start) >> 10, nhp,
			whole ? "" : " (incomplete: every probe refused)");
	}
	if (decoder_selftest)
		kinstr_decoder_selftest();
	return 0;
}

static void __exit kinstr_exit(void)
{
	misc_deregister(&kinstr_miscdev);
	kinstr_probes_exit();	/* frees every area: the timers' last references go */
	kinstr_timing_exit();
	kinstr_scope_exit();
	kinstr_hitpath_exit();
	kinstr_fence_exit();
	kinstr_ksyms_exit();
	pr_info(KINSTR_PR_PREFIX "unloaded\n");
}

module_init(kinstr_init);
module_exit(kinstr_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr: fine-grained dynamic instrumentation of the running kernel");
MODULE_VERSION(KINSTR_VERSION);
