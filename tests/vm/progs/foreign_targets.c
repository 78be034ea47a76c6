// SPDX-License-Identifier: GPL-2.0
/*
 * Branches between functions that land past the other's start (asm that shares code between
 * symbols: copy_user_generic_unrolled into copy_user_short_string, the .E_* labels), and
 * whether any such target lies inside the displaced bytes of a jump site of the function it
 * lands in, past the site's first byte: a probe there would be entered in its middle from the
 * other function, which that function's own analysis cannot see. Decodes every function of the
 * live kernel with the library (Zydis, the CFG). Prints each target and what covers it; exit 1
 * when a jump site covers one. Before the library took a function's .cold part's branches into
 * account (KINSTR_RULE_FOREIGN_TARGET), Debian 6.1 had 8,058 such branches and 945 inside a jump
 * site, 943 of them between a function and its .cold part (perf_event_print_debug.cold+0x158
 * into the jump site perf_event_print_debug+0x4a) and one from an asm label (.E_trailing_bytes
 * into copy_mc_fragile); analysis.t requires none of those. What is left is not seen by the
 * rule: Zydis's reading of Xen's emulate prefix in xen_cpuid (6.1), soft_restart_cpu into
 * common_startup_64 (6.12 head code).
 *   foreign_targets
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/cfg.h>
#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>
#include <kinstr/sites.h>

int main(void)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	size_t i, j, n = 0, covered = 0, cold = 0;

	if (!k) {
		perror("foreign_targets: open the live kernel");
		return 1;
	}
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_fn *fn = kinstr_fn__analyze(k, f);
		const struct kinstr_cfg *cfg = fn ? kinstr_fn__cfg(fn) : NULL;

		for (j = 0; cfg && j < kinstr_cfg__insn_cnt(cfg); j++) {
			const struct kinstr_x86_insn *x = &kinstr_cfg__insn(cfg, j)->x;
			const struct kinstr_func *g;
			struct kinstr_fn *gn;
			size_t s;

			if (x->flow != KINSTR_X86_FLOW_JMP && x->flow != KINSTR_X86_FLOW_JCC && x->flow != KINSTR_X86_FLOW_CALL)
				continue;
			if (x->target >= f->addr && x->target < f->addr + f->size)
				continue;
			g = kinstr_kernel__func_at(k, x->target);
			if (!g || g->addr == x->target)
				continue;
			n++;
			gn = kinstr_fn__analyze(k, g);
			for (s = 0; gn && s < kinstr_fn__site_cnt(gn); s++) {
				const struct kinstr_site *st = kinstr_fn__site(gn, s);

				if (st->cls == KINSTR_SITE_JUMP && x->target > st->addr &&
				    x->target < st->addr + st->displaced_len) {
					covered++;
					cold += strstr(f->name, ".cold") || strstr(g->name, ".cold") || f->name[0] == '.' ||
						g->name[0] == '.';
					printf("COVERED: %s+0x%llx branches to %s+0x%llx, inside the jump site %s+0x%llx (%u bytes)\n",
					       f->name, (unsigned long long)(x->addr - f->addr), g->name,
					       (unsigned long long)(x->target - g->addr), g->name,
					       (unsigned long long)(st->addr - g->addr), st->displaced_len);
				}
			}
			printf("  %s+0x%llx -> %s+0x%llx\n", f->name, (unsigned long long)(x->addr - f->addr), g->name,
			       (unsigned long long)(x->target - g->addr));
			kinstr_fn__free(gn);
		}
		kinstr_fn__free(fn);
	}
	printf("foreign_targets: %zu branches into another function past its start, %zu inside a jump site's displaced bytes, "
	       "%zu of them between a function and its .cold part or an asm label\n", n, covered, cold);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return covered ? 1 : 0;
}
