// SPDX-License-Identifier: GPL-2.0
/* The two ways of each kernel difference compat.h names; nothing else of kmod/ tests a version. */
#include <linux/bpf.h>
#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/static_call.h>
#include <linux/version.h>
#include <asm/set_memory.h>

#include "compat.h"

/* Prototypes of functions one kernel has and the other lacks: only their type is used. */
void *kinstr_proto_module_alloc(unsigned long size);
void kinstr_proto_module_memfree(void *p);
void *kinstr_proto_execmem_alloc(int type, size_t size);
void kinstr_proto_execmem_free(void *p);
int kinstr_proto_set_memory(unsigned long addr, int numpages);

/* Called directly, through static calls: a call through a pointer to a function whose ENDBR the kernel sealed faults on IBT hardware. */
DEFINE_STATIC_CALL_NULL(kinstr_k_text_alloc_old, kinstr_proto_module_alloc);
DEFINE_STATIC_CALL_NULL(kinstr_k_text_free_old, kinstr_proto_module_memfree);
DEFINE_STATIC_CALL_NULL(kinstr_k_text_alloc_new, kinstr_proto_execmem_alloc);
DEFINE_STATIC_CALL_NULL(kinstr_k_text_free_new, kinstr_proto_execmem_free);
DEFINE_STATIC_CALL_NULL(kinstr_k_set_memory_ro, kinstr_proto_set_memory);
DEFINE_STATIC_CALL_NULL(kinstr_k_set_memory_x, kinstr_proto_set_memory);

#define EXECMEM KINSTR_EXECMEM
#define EXECMEM_KPROBES_TYPE 1	/* enum execmem_type: EXECMEM_DEFAULT, then EXECMEM_KPROBES */

void kinstr_compat_resolve(const struct kinstr_compat_syms *s)
{
	if (EXECMEM) {
		static_call_update(kinstr_k_text_alloc_new, (typeof(&kinstr_proto_execmem_alloc))s->text_alloc);
		static_call_update(kinstr_k_text_free_new, (typeof(&kinstr_proto_execmem_free))s->text_free);
	} else {
		static_call_update(kinstr_k_text_alloc_old, (typeof(&kinstr_proto_module_alloc))s->text_alloc);
		static_call_update(kinstr_k_text_free_old, (typeof(&kinstr_proto_module_memfree))s->text_free);
	}
	static_call_update(kinstr_k_set_memory_ro, (typeof(&kinstr_proto_set_memory))s->set_memory_ro);
	static_call_update(kinstr_k_set_memory_x, (typeof(&kinstr_proto_set_memory))s->set_memory_x);
}

bool kinstr_text_alloc_resolved(void)
{
	bool alloc = EXECMEM ? static_call_query(kinstr_k_text_alloc_new) && static_call_query(kinstr_k_text_free_new)
			     : static_call_query(kinstr_k_text_alloc_old) && static_call_query(kinstr_k_text_free_old);

	return alloc && static_call_query(kinstr_k_set_memory_ro) && static_call_query(kinstr_k_set_memory_x);
}

void *kinstr_text_alloc(unsigned long bytes)
{
	if (EXECMEM)
		return static_call(kinstr_k_text_alloc_new)(EXECMEM_KPROBES_TYPE, bytes);
	return static_call(kinstr_k_text_alloc_old)(bytes);
}

void kinstr_text_free(void *p)
{
	if (EXECMEM)
		static_call(kinstr_k_text_free_new)(p);
	else
		static_call(kinstr_k_text_free_old)(p);
}

void kinstr_text_seal(void *p, unsigned int pages)
{
	static_call(kinstr_k_set_memory_ro)((unsigned long)p, pages);
	static_call(kinstr_k_set_memory_x)((unsigned long)p, pages);
}

void kinstr_module_core_text(const struct module *mod, unsigned long *base, unsigned long *size)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	*base = (unsigned long)mod->mem[MOD_TEXT].base;
	*size = mod->mem[MOD_TEXT].size;
#else
	*base = (unsigned long)mod->core_layout.base;
	*size = mod->core_layout.text_size;
#endif
}

void kinstr_vma_clear_flags(struct vm_area_struct *vma, unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

int kinstr_direct_add(struct kinstr_direct *d, unsigned long ip, unsigned long addr)
{
	int err;

	d->ip = ip;
	d->addr = addr;
#if KINSTR_DIRECT_OPS
	memset(&d->ops, 0, sizeof(d->ops));
	err = ftrace_set_filter_ip(&d->ops, ip, 0, 0);
	if (!err) {
		err = register_ftrace_direct(&d->ops, addr);
		if (err)
			ftrace_free_filter(&d->ops);
	}
#else
	err = register_ftrace_direct(ip, addr);
#endif
	d->on = !err;
	return err;
}

int kinstr_direct_add_ips(struct kinstr_direct *d, unsigned long *ips, unsigned int n, unsigned long addr)
{
#if KINSTR_DIRECT_SHARED
	int err;

	d->ip = ips[0];
	d->addr = addr;
	memset(&d->ops, 0, sizeof(d->ops));
	err = ftrace_set_filter_ips(&d->ops, ips, n, 0, 0);
	if (!err) {
		err = register_ftrace_direct(&d->ops, addr);
		if (err)
			ftrace_free_filter(&d->ops);
	}
	d->on = !err;
	return err;
#else
	return -EOPNOTSUPP;
#endif
}

void kinstr_direct_del_all(struct kinstr_direct *d0, size_t n, size_t stride)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct kinstr_direct *d = (void *)((char *)d0 + i * stride);

		if (!d->on)
			continue;
#if KINSTR_DIRECT_OPS
		unregister_ftrace_direct(&d->ops, d->addr, true);
#else
		unregister_ftrace_direct(d->ip, d->addr);
#endif
		d->on = false;
	}
}

bool kinstr_bpf_prog_sleepable(const struct bpf_prog *prog)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	return prog->sleepable;
#else
	return prog->aux->sleepable;
#endif
}
