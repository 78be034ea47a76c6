/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the kernels kinstr supports differ (Debian's 6.1 and 6.12, generic and rt), each
 * difference behind one function named by what differs. No other file of kmod/ tests a kernel
 * version; compat.c holds the two ways of each.
 */
#ifndef KINSTR_COMPAT_H
#define KINSTR_COMPAT_H

#include <linux/ftrace.h>
#include <linux/types.h>
#include <linux/version.h>

struct module;
struct vm_area_struct;
struct bpf_prog;

/*
 * Patch space near the kernel text: module_alloc() until 6.10, execmem_alloc(EXECMEM_KPROBES)
 * since (neither exported: resolved by kinstr_compat_resolve()). Writable and not executable
 * on return; kinstr_text_seal() makes it read-only and executable; kinstr_text_free() gives it
 * back with its permissions reset (both allocators' memory is VM_FLUSH_RESET_PERMS).
 */
bool kinstr_text_alloc_resolved(void);
void *kinstr_text_alloc(unsigned long bytes);
void kinstr_text_free(void *p);
void kinstr_text_seal(void *p, unsigned int pages);

/* A module's core text: core_layout until 6.4, mem[MOD_TEXT] since. */
void kinstr_module_core_text(const struct module *mod, unsigned long *base, unsigned long *size);

/* Take flags off a mapping: vm_flags was writable until 6.3, vm_flags_clear() since. */
void kinstr_vma_clear_flags(struct vm_area_struct *vma, unsigned long flags);

/*
 * An ftrace direct call from the fentry site ip to addr: register_ftrace_direct(ip, addr) until
 * 6.4; since, an ftrace_ops per call, filtered on ip. A module's ops is dynamic: each unregister
 * waits for two RCU-tasks grace periods, so callers take many out in one kinstr_direct_del_all().
 */
#define KINSTR_DIRECT_OPS (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0))
struct kinstr_direct {
#if KINSTR_DIRECT_OPS
	struct ftrace_ops ops;
#endif
	unsigned long ip, addr;
	bool on;
};
int kinstr_direct_add(struct kinstr_direct *d, unsigned long ip, unsigned long addr);
/*
 * Since 6.4 one ftrace_ops carries many ips to one address, registered and taken out at once
 * (one pair of RCU-tasks waits for all): KINSTR_DIRECT_SHARED. d then stands for all of ips[].
 */
#define KINSTR_DIRECT_SHARED KINSTR_DIRECT_OPS
int kinstr_direct_add_ips(struct kinstr_direct *d, unsigned long *ips, unsigned int n, unsigned long addr);
/* Take out each of d[0..n) that is on, stride bytes apart. */
void kinstr_direct_del_all(struct kinstr_direct *d, size_t n, size_t stride);

/* A sleepable BPF program: prog->aux->sleepable until 6.10, prog->sleepable since. */
bool kinstr_bpf_prog_sleepable(const struct bpf_prog *prog);

/*
 * The unexported functions above, resolved by ksym.c (compat calls nothing above it): the
 * allocator's names are KINSTR_TEXT_ALLOC_NAME and KINSTR_TEXT_FREE_NAME.
 */
#define KINSTR_EXECMEM (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0))
#define KINSTR_TEXT_ALLOC_NAME (KINSTR_EXECMEM ? "execmem_alloc" : "module_alloc")
#define KINSTR_TEXT_FREE_NAME (KINSTR_EXECMEM ? "execmem_free" : "module_memfree")
struct kinstr_compat_syms {
	unsigned long text_alloc, text_free, set_memory_ro, set_memory_x;
};
void kinstr_compat_resolve(const struct kinstr_compat_syms *s);

#endif
