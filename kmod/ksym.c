// SPDX-License-Identifier: GPL-2.0
/*
 * Resolve what 6.1 no longer exports to modules. kallsyms_lookup_name is found by registering a
 * kprobe on it and reading back the address kprobes resolved; every other symbol is then looked
 * up through it, once, at load time.
 */
#include <linux/kprobes.h>
#include <linux/module.h>

#include "kinstr.h"

struct kinstr_ksyms kinstr_ksyms;

static unsigned long resolve_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int err;

	err = register_kprobe(&kp);
	if (err) {
		pr_err(KINSTR_PR_PREFIX "cannot resolve kallsyms_lookup_name: register_kprobe: %d\n", err);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return addr;
}

int kinstr_ksyms_init(void)
{
	unsigned long addr = resolve_kallsyms_lookup_name();

	if (!addr)
		return -ENOENT;
	kinstr_ksyms.kallsyms_lookup_name = (void *)addr;
	kinstr_ksyms.stext = kinstr_ksyms.kallsyms_lookup_name("_stext");
	kinstr_ksyms.etext = kinstr_ksyms.kallsyms_lookup_name("_etext");
	if (!kinstr_ksyms.stext || kinstr_ksyms.etext <= kinstr_ksyms.stext) {
		pr_err(KINSTR_PR_PREFIX "kallsyms_lookup_name gave no kernel text bounds\n");
		return -ENOENT;
	}
	return 0;
}
