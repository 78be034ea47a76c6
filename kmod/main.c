// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr.ko: the small, auditable half of kinstr. For now it offers /dev/kinstr with the version
 * and debug-info ioctls; patching comes with the splice engine.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/security.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include <uapi/linux/kinstr.h>
#include "kinstr.h"

/*
 * Copy an output struct to user space following the ABI's size rules: read the caller's size,
 * refuse one below the first version, fill min(caller, ours), zero the caller's bytes beyond
 * ours, and report the bytes filled in the size field.
 */
static int kinstr_put_struct(void __user *uarg, void *kbuf, u32 ksize, u32 min_size)
{
	u32 usize, n;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	if (usize > KINSTR_MAX_STRUCT_SIZE)
		return -E2BIG;
	n = min(usize, ksize);
	*(u32 *)kbuf = n;
	if (copy_to_user(uarg, kbuf, n))
		return -EFAULT;
	if (usize > n && clear_user(uarg + n, usize - n))
		return -EFAULT;
	return 0;
}

static long kinstr_ioctl_version(void __user *uarg)
{
	struct kinstr_version v = {
		.abi_major = KINSTR_ABI_MAJOR,
		.abi_minor = KINSTR_ABI_MINOR,
		.features = KINSTR_FEAT_DEBUG_INFO,
	};

	strscpy(v.module_version, KINSTR_VERSION, sizeof(v.module_version));
	strscpy(v.kernel_release, utsname()->release, sizeof(v.kernel_release));
	return kinstr_put_struct(uarg, &v, sizeof(v), KINSTR_VERSION_SIZE_VER0);
}

static long kinstr_ioctl_debug_info(void __user *uarg)
{
	struct kinstr_debug_info d = {
		.kallsyms_lookup_name = (unsigned long)kinstr_ksyms.kallsyms_lookup_name,
		.stext = kinstr_ksyms.stext,
		.etext = kinstr_ksyms.etext,
	};

	if (security_locked_down(LOCKDOWN_DEV_MEM))
		d.flags |= KINSTR_DEBUG_LOCKDOWN;
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
	default:
		return -ENOTTY;
	}
}

static int kinstr_open(struct inode *inode, struct file *file)
{
	/* The device node is 0600 root; this also stops a root process without the capability. */
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return 0;
}

static const struct file_operations kinstr_fops = {
	.owner = THIS_MODULE,
	.open = kinstr_open,
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

static int __init kinstr_init(void)
{
	int err;

	err = kinstr_ksyms_init();
	if (err)
		return err;
	err = misc_register(&kinstr_miscdev);
	if (err) {
		pr_err(KINSTR_PR_PREFIX "cannot register /dev/kinstr: %d\n", err);
		return err;
	}
	pr_info(KINSTR_PR_PREFIX "%s loaded (abi %d.%d), kallsyms_lookup_name resolved, text %lu KiB\n",
		KINSTR_VERSION, KINSTR_ABI_MAJOR, KINSTR_ABI_MINOR,
		(kinstr_ksyms.etext - kinstr_ksyms.stext) >> 10);
	return 0;
}

static void __exit kinstr_exit(void)
{
	misc_deregister(&kinstr_miscdev);
	pr_info(KINSTR_PR_PREFIX "unloaded\n");
}

module_init(kinstr_init);
module_exit(kinstr_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr: fine-grained dynamic instrumentation of the running kernel");
MODULE_VERSION(KINSTR_VERSION);
