/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the parts of kinstr.ko. */
#ifndef KINSTR_KMOD_H
#define KINSTR_KMOD_H

#include <linux/types.h>

#define KINSTR_PR_PREFIX "kinstr: "

struct exception_table_entry;
struct bug_entry;
struct mutex;

/* An address range of the running kernel, [start, end). */
struct kinstr_span {
	unsigned long start, end;
};

/*
 * ksym.c: what kinstr needs but 6.1 does not export to modules, resolved once at load through
 * kallsyms_lookup_name. Only kallsyms_lookup_name and the text bounds are required; a missing
 * predicate makes every range it would decide unverifiable (refused), never unchecked.
 */
struct kinstr_ksyms {
	unsigned long (*kallsyms_lookup_name)(const char *name);
	int (*ftrace_text_reserved)(const void *start, const void *end);
	int (*jump_label_text_reserved)(void *start, void *end);
	int (*static_call_text_reserved)(void *start, void *end);
	int (*alternatives_text_reserved)(void *start, void *end);
	const struct exception_table_entry *(*search_exception_tables)(unsigned long addr);
	struct bug_entry *(*find_bug)(unsigned long addr);
	bool (*within_kprobe_blacklist)(unsigned long addr);
	struct mutex *text_mutex;
	struct kinstr_span text, entry_text, irqentry_text, noinstr_text, kprobes_text;
	/* the read-only tables user space may read to classify sites itself */
	struct kinstr_span ex_table, jump_table, static_call_sites, bug_table;
	/* find_bug() scans the whole table per call: a sorted index of core BUG sites instead */
	unsigned long *bug_addrs;
	size_t nbug_addrs;
};
extern struct kinstr_ksyms kinstr_ksyms;
int kinstr_ksyms_init(void);
void kinstr_ksyms_exit(void);
bool kinstr_ksyms_is_bug(unsigned long addr);

static inline bool kinstr_span_has(const struct kinstr_span *s, unsigned long a, unsigned long len)
{
	return s->start && a >= s->start && len <= s->end - s->start && a - s->start <= s->end - s->start - len;
}

/* policy.c: the site-safety predicates, each one rule. */
u32 kinstr_policy_check(unsigned long addr, unsigned int len);
long kinstr_ioctl_check(void __user *uarg);

/* main.c */
int kinstr_get_struct(void *kbuf, u32 ksize, const void __user *uarg, u32 min_size);

#endif
