/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A view of the kernel's code for analysis: its functions, their live text, and the ranges the
 * kernel reserves (ftrace, jump labels, static calls, BUG sites, exception-table entries, entry
 * and noinstr text, the kprobe blacklist). It comes either from the running kernel (through
 * /dev/kinstr, /proc/kallsyms, tracefs and debugfs) or from a snapshot file taken of one, so
 * that host tests analyse exactly what the live kernel showed.
 */
#ifndef KINSTR_KERNEL_H
#define KINSTR_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <kinstr/kinstr.h>
#include <kinstr/edge.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_func {
	unsigned long long addr;
	unsigned int size;	/* up to the next symbol at a higher address (aliases share) */
	char type;		/* 't' or 'T' as in /proc/kallsyms */
	const char *name;
	const char *module;	/* the loaded module it belongs to; NULL: core kernel (or a snapshot) */
	unsigned char endbr;	/* bytes of ENDBR it starts with (rules/entry.h): its fentry NOP
				 * would be at addr + endbr */
};

/* A reserved range and the reason (enum kinstr_site_reason) it is reserved. */
struct kinstr_reserved {
	unsigned long long addr;
	unsigned int len;
	unsigned int reason;
};

struct kinstr_kernel;

/* Does name match globs, a comma-separated list of shell globs ("vfs_*,tcp_sendmsg")? */
int kinstr__glob_match(const char *globs, const char *name);

/*
 * Read the running kernel's code through dev: core text and the core text of every live module
 * (functions from /proc/kallsyms, "name [module]"). NULL with errno set on failure.
 */
struct kinstr_kernel *kinstr_kernel__open_live(struct kinstr_dev *dev);
/* Read a snapshot written by kinstr_kernel__save(). NULL with errno set (EINVAL: not one). */
struct kinstr_kernel *kinstr_kernel__open_snapshot(const char *path);
/*
 * Write a snapshot (gzip-compressed) holding the functions whose names match glob (a
 * comma-separated list of shell globs; NULL: all),
 * their text and the reservations inside them. Module functions are saved like core ones,
 * without the name of their module.
 */
int kinstr_kernel__save(const struct kinstr_kernel *k, const char *path, const char *glob);
void kinstr_kernel__close(struct kinstr_kernel *k);

const char *kinstr_kernel__release(const struct kinstr_kernel *k);
const struct kinstr_layout *kinstr_kernel__layout(const struct kinstr_kernel *k);
/*
 * The per-CPU address of the running task's pointer (kallsyms' current_task, or pcpu_hot whose
 * first member it is; 0 when unknown, as in a snapshot): a function storing there switches
 * threads (lib/plan/plan.c).
 */
unsigned long long kinstr_kernel__current_task(const struct kinstr_kernel *k);
/* The return thunk (0 if the kernel has none): `jmp` to it is a return. */
unsigned long long kinstr_kernel__return_thunk(const struct kinstr_kernel *k);
/*
 * How a bare ret moves out of line, as the kernel's own patch_return() writes returns: 0 with
 * *to the thunk to jmp to, or 0 for a ret that stays bare (the CPU needs no thunk); -EPERM when
 * the thunk depends on the return's address (ITS), -ENOENT when the kernel has no thunk known.
 */
int kinstr_kernel__ret_relocation(const struct kinstr_kernel *k, unsigned long long *to);

size_t kinstr_kernel__func_cnt(const struct kinstr_kernel *k);
/* Functions sorted by address; i < func_cnt. */
const struct kinstr_func *kinstr_kernel__func(const struct kinstr_kernel *k, size_t i);
/*
 * The functions a name denotes, in address order, each once (aliases at one address are one):
 * NAME, or NAME@ADDR (ADDR in hex, 0x optional) for the one of that name at that address. Fills up
 * to max of out (out may be NULL) and returns how many there are.
 */
size_t kinstr_kernel__lookup(const struct kinstr_kernel *k, const char *name, const struct kinstr_func **out,
			     size_t max);
/* The one function a name (or NAME@ADDR) denotes, or NULL: errno ENOENT, or ENOTUNIQ when several do. */
const struct kinstr_func *kinstr_kernel__find_func(const struct kinstr_kernel *k, const char *name);
/* Is f the only function of its name? (Else -l and error messages name it NAME@ADDR.) */
bool kinstr_kernel__name_unique(const struct kinstr_kernel *k, const struct kinstr_func *f);
/* The function containing addr, or NULL. */
const struct kinstr_func *kinstr_kernel__func_at(const struct kinstr_kernel *k, unsigned long long addr);

/* The live bytes of [addr, addr + len), or NULL (errno ERANGE) when the view does not hold them. */
const unsigned char *kinstr_kernel__text(const struct kinstr_kernel *k, unsigned long long addr,
					 size_t len);

/* Bitmask (1 << enum kinstr_site_reason) of every reservation overlapping [addr, addr + len). */
unsigned int kinstr_kernel__reserved(const struct kinstr_kernel *k, unsigned long long addr,
				     unsigned int len);
/*
 * Control transfers the instruction bytes do not show, whose source lies in [start, end): a
 * jump label's site to its target and to its fall-through (it may be flipped at any time), and
 * an exception-table entry's instruction to its fixup. Sets *edges to a sorted slice.
 */
size_t kinstr_kernel__edges(const struct kinstr_kernel *k, unsigned long long start,
			    unsigned long long end, const struct kinstr_cfg_edge **edges);
/*
 * What the bytes do not say, live view only (a snapshot holds neither: -ENOENT). The key (struct
 * static_key *) of the jump label at site and its entry's branch bit; the trampoline (__SCT__*)
 * of the static call at site, found from its key's symbol, and whether the site is a tail call.
 * 0, or -ENOENT.
 */
int kinstr_kernel__jump_label(const struct kinstr_kernel *k, unsigned long long site, unsigned long long *key,
			      int *branch);
int kinstr_kernel__static_call(const struct kinstr_kernel *k, unsigned long long site, unsigned long long *tramp,
			       int *tail);
/*
 * The process of another kinstr session that held part of [addr, addr + len) when the live view
 * was read (KINSTR_R_HELD: its probe's patched bytes, a function its code cache runs), or 0.
 */
int kinstr_kernel__held_by(const struct kinstr_kernel *k, unsigned long long addr, unsigned long long len);
size_t kinstr_kernel__reserved_cnt(const struct kinstr_kernel *k);
const struct kinstr_reserved *kinstr_kernel__reserved_at(const struct kinstr_kernel *k, size_t i);

#ifdef __cplusplus
}
#endif
#endif
