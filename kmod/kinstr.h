/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the parts of kinstr.ko. */
#ifndef KINSTR_KMOD_H
#define KINSTR_KMOD_H

#include <linux/types.h>

#define KINSTR_PR_PREFIX "kinstr: "

/* ksym.c: the kernel symbols kinstr needs but the kernel does not export to modules. */
struct kinstr_ksyms {
	unsigned long (*kallsyms_lookup_name)(const char *name);
	unsigned long stext, etext;
};
extern struct kinstr_ksyms kinstr_ksyms;
int kinstr_ksyms_init(void);

#endif
