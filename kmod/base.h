/* SPDX-License-Identifier: GPL-2.0 */
/* What every part of kinstr.ko includes: the kernel's headers it builds on, the log prefix. */
#ifndef KINSTR_KMOD_BASE_H
#define KINSTR_KMOD_BASE_H


#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/types.h>
#include <linux/bug.h>
#include <linux/extable.h>
#include <linux/ftrace.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/static_call.h>
#include <asm/alternative.h>
#include <asm/insn.h>
#include <asm/text-patching.h>

#define KINSTR_PR_PREFIX "kinstr: "

struct insn;
enum insn_mode;
struct exception_table_entry;
struct bug_entry;
struct mutex;
struct kprobe;
struct module;
struct kinstr_module_info;

#endif
