// SPDX-License-Identifier: GPL-2.0
/*
 * Which functions of the running kernel switch threads: every core-kernel function decoded
 * linearly, instruction by instruction, for a 64-bit store to the per-CPU current-task pointer
 * (kinstr_kernel__current_task), a view independent of the CFG that the planner's rule
 * (kinstr_plan__switch_at) walks; then the planner is asked about each function found.
 * Prints "current_task 0x..", one "switches NAME+0xOFF plan agrees|differs" line per function found,
 * and "functions N scanned, M switch".
 */
#include <stdio.h>
#include <stdlib.h>

#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>
#include <kinstr/x86.h>

#include "live_plan.h"

int main(void)
{
	struct live_plan v;
	struct kinstr_kernel *k;
	struct kinstr_plan *pl;
	unsigned long long cur, last = 0;
	size_t i, scanned = 0, found = 0;

	if (live_plan_open(&v, "switchers: open"))
		return 1;
	k = v.k;
	pl = v.pl;
	cur = kinstr_kernel__current_task(k);
	printf("current_task %#llx\n", cur);
	if (!cur)
		return 1;
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		const unsigned char *b = f->module || f->addr == last ? NULL : kinstr_kernel__text(k, f->addr, f->size);
		unsigned long long off = 0;

		last = f->addr;
		if (!b)
			continue;
		scanned++;
		while (off < f->size) {
			struct kinstr_x86_insn in;
			uint64_t a;

			if (kinstr_x86__decode(b + off, f->size - off, f->addr + off, &in)) {
				off++;
				continue;
			}
			if (kinstr_x86__gs_store64(&in, &a) && a == cur) {
				uint64_t at = kinstr_plan__switch_at(pl, f, false);

				printf("switches %s+%#llx plan %s\n", f->name, off, at == f->addr + off ? "agrees" : "differs");
				found++;
				break;
			}
			off += in.len;
		}
	}
	printf("functions %zu scanned, %zu switch\n", scanned, found);
	live_plan_close(&v);
	return 0;
}
