// SPDX-License-Identifier: GPL-2.0
/* Test-only: WARNs once at load so that the harness's splat scan can be shown to fail a run. */
#include <linux/bug.h>
#include <linux/module.h>

static int __init kinstr_test_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit kinstr_test_warn_exit(void)
{
}

module_init(kinstr_test_warn_init);
module_exit(kinstr_test_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kinstr test: WARN_ON(1) at load");
