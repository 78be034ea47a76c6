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

int main(void)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	struct kinstr_probeset *ps = k ? kinstr_probeset__new(dev, k) : NULL;
	struct kinstr_plan *pl = ps ? kinstr_plan__new(ps, NULL) : NULL;
	unsigned long long cur, last = 0;
	size_t i, scanned = 0, found = 0;

	if (!pl) {
		perror("switchers: open");
		return 1;
	}
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
	kinstr_plan__free(pl);
	kinstr_probeset__free(ps);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return 0;
}
