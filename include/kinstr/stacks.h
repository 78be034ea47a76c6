/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Hits counted by kernel stack (kinstr count --by stack): kinstr's own BPF program (built in) at
 * every probe of a set, taking the stack from the site's pt_regs with the kernel's unwinder
 * (bpf_get_stackid), no trap; read after the run, symbolized over the kernel view.
 */
#ifndef KINSTR_STACKS_H
#define KINSTR_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_probeset;
struct kinstr_kernel;
struct kinstr_stacks;

#define KINSTR_STACK_MAX_DEPTH 127

struct kinstr_stack_row {
	uint32_t probe;			/* index in the set */
	uint32_t depth;
	uint64_t hits;
	uint64_t ips[KINSTR_STACK_MAX_DEPTH];	/* [0] the site, then each return address outwards */
};

/* The built-in program, loaded (verified); NULL with errno and why. */
struct kinstr_stacks *kinstr_stacks__new(struct kinstr_why *why);
void kinstr_stacks__free(struct kinstr_stacks *s);
/* Run it at every probe of ps (before install), probe i with cookie i. */
int kinstr_stacks__attach(struct kinstr_stacks *s, struct kinstr_probeset *ps);
/*
 * After the run (the probes removed and synced): every (probe, stack) with its hits, most hits
 * first, in *rows (malloc'ed; the caller frees), their count returned, or -errno. *lost: hits
 * whose stack was not kept (the stack table or the count table full).
 */
int kinstr_stacks__read(struct kinstr_stacks *s, struct kinstr_stack_row **rows, uint64_t *lost);
/* "func+0xoff" (or "0xaddr" outside every function) of ip into buf. */
const char *kinstr_stacks__sym(const struct kinstr_kernel *k, uint64_t ip, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
