/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Instruments in C: BPF programs of kprobe type (SEC("kprobe")), loaded with libbpf and run by
 * kinstr.ko at any jump, trap or ftrace site with the site's pt_regs. The kernel's verifier proves
 * the program safe; kinstr.ko refuses what a site mid-function cannot give it (multi-attach run
 * contexts, bpf_override_return, sleeping). bpf_get_attach_cookie() returns the cookie given at
 * attach (kinstr attach: the index of the SPEC on the command line).
 */
#ifndef KINSTR_BPF_H
#define KINSTR_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_probeset;
struct kinstr_bpf_obj;

/*
 * Open the BPF object file at path and load its program prog (NULL: the object must hold just one
 * program of kprobe type). NULL with errno on failure, and why: the verifier's refusal
 * (-EACCES/-EINVAL from the kernel) gives its log in *log (malloc'ed, may be NULL; the caller frees).
 */
struct kinstr_bpf_obj *kinstr_bpf_obj__open(const char *path, const char *prog, struct kinstr_why *why,
					     char **log);
/* The same from an object in memory (name: how errors call it). */
struct kinstr_bpf_obj *kinstr_bpf_obj__open_mem(const void *buf, size_t len, const char *name, const char *prog,
						 struct kinstr_why *why, char **log);
void kinstr_bpf_obj__close(struct kinstr_bpf_obj *o);
int kinstr_bpf_obj__prog_fd(const struct kinstr_bpf_obj *o);
const char *kinstr_bpf_obj__prog_name(const struct kinstr_bpf_obj *o);
/* The fd of the object's map called name, or -ENOENT. */
int kinstr_bpf_obj__map_fd(const struct kinstr_bpf_obj *o, const char *name);
/*
 * Print every map of the object but its internal ones (.bss, .data, .rodata) and those that hold
 * no values (stack traces, ring buffers, perf arrays), like bpftrace's @maps: "@NAME[KEY]: VALUE"
 * lines, a char array as a string, a per-CPU value summed over CPUs, a struct field by field
 * (from the object's BTF); with json, one JSON object {"NAME":[{"key":..,"value":..},..],..}.
 * Entries that are all zero in an array map are left out. 0 or -errno.
 */
int kinstr_bpf_obj__print_maps(const struct kinstr_bpf_obj *o, FILE *out, bool json);

/*
 * Make probe i of ps (before install) run the program prog_fd with cookie; every probe of the set
 * with kinstr_probeset__attach_bpf. The program is referenced by the module from install until the
 * set is removed: the fd may be closed after install.
 */
int kinstr_probeset__set_bpf(struct kinstr_probeset *ps, size_t i, int prog_fd, uint64_t cookie);
int kinstr_probeset__attach_bpf(struct kinstr_probeset *ps, int prog_fd, uint64_t cookie);

/* The stable text of a module refusal reason (enum kinstr_bpf_reason). */
const char *kinstr_bpf_reason__str(unsigned int reason);
/*
 * What prog_fd is, for a refusal (KINSTR_BPF_R_NOT_KPROBE): "a BPF program of type T" or "not a
 * BPF program", into buf.
 */
const char *kinstr_bpf_fd__describe(int prog_fd, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
