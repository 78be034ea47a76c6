// SPDX-License-Identifier: GPL-2.0
/*
 * Cut fuzz seeds out of a kernel snapshot ('kinstr snapshot'): for each feature below, the
 * smallest function of MIN_SIZE..MAX_SIZE bytes that shows it, written as DIR/k-FEATURE in
 * fuzz_analyze's input format (8-byte header, then the function's live bytes), and each
 * function named on the command line as DIR/k-NAME.
 *   cut_seeds SNAPSHOT DIR [NAME...]
 * Used by tests/fuzz/mkcorpus.sh; the output is kernel text, hence GPL-2.0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/kernel.h>
#include <kinstr/sites.h>

#define MIN_SIZE 40
#define MAX_SIZE 400

static const char *const features[] = {
	"backward-branch", "loop-insn", "jcc8-last", "riprel-imm", "riprel", "indirect-jmp",
	"indirect-call", "internal-call", "ud2-inside", "int3-inside", "return-thunk",
	"hidden-edges", "branch-target-trap", "displaces-call", "not-relocatable",
	"unsafe-insn", "many-jump-sites", "rep-or-lock", "jcc32-backward", "long-padding",
};
#define NR_FEATURES (sizeof(features) / sizeof(features[0]))

static uint32_t features_of(const struct kinstr_kernel *k, const struct kinstr_func *f,
			    const struct kinstr_fn *fn)
{
	const struct kinstr_cfg *cfg = kinstr_fn__cfg(fn);
	const struct kinstr_cfg_edge *edges;
	size_t n = kinstr_cfg__insn_cnt(cfg), i, last = 0, jumps = 0, pad = 0;
	uint32_t m = 0;

	for (i = 0; i < n; i++) {
		const struct kinstr_cfg_insn *in = kinstr_cfg__insn(cfg, i);
		const struct kinstr_x86_insn *x = &in->x;
		const struct kinstr_site *s = kinstr_fn__site(fn, i);
		int direct = x->flow == KINSTR_X86_FLOW_JMP || x->flow == KINSTR_X86_FLOW_JCC;

		if (in->flags & KINSTR_CFG_I_PADDING) {
			pad++;
			continue;
		}
		last = i;
		if (direct && x->target < x->addr && x->target >= f->addr)
			m |= 1u << (x->branch_size == 4 && x->flow == KINSTR_X86_FLOW_JCC ? 18 : 0);
		if (x->attr & KINSTR_X86_A_LOOP)
			m |= 1u << 1;
		if (x->attr & KINSTR_X86_A_RIP_REL)
			m |= 1u << (x->imm_size ? 3 : 4);
		if (x->flow == KINSTR_X86_FLOW_UD2 && i + 1 < n)
			m |= 1u << 8;
		if (x->flow == KINSTR_X86_FLOW_INT3)
			m |= 1u << 9;
		if (in->flags & KINSTR_CFG_I_RETURN && x->flow != KINSTR_X86_FLOW_RET)
			m |= 1u << 10;
		if (x->attr & (KINSTR_X86_A_REP | KINSTR_X86_A_LOCK))
			m |= 1u << 17;
		if (s->cls == KINSTR_SITE_JUMP)
			jumps++;
		if (s->rule == KINSTR_RULE_BRANCH_TARGET)
			m |= 1u << 12;
		if (s->rule == KINSTR_RULE_DISPLACES_CALL && s->rule_addr != s->addr)
			m |= 1u << 13;
		if (s->rule == KINSTR_RULE_NOT_RELOCATABLE)
			m |= 1u << 14;
		if (s->rule == KINSTR_RULE_UNSAFE_INSN)
			m |= 1u << 15;
	}
	if (kinstr_x86__falls_through(&kinstr_cfg__insn(cfg, last)->x) == 0 &&
	    kinstr_cfg__insn(cfg, last)->x.flow == KINSTR_X86_FLOW_JCC)
		m |= 1u << 2;
	if (last && (kinstr_cfg__insn(cfg, last)->x.attr & KINSTR_X86_A_BRANCH_REL8) &&
	    kinstr_cfg__insn(cfg, last)->x.flow == KINSTR_X86_FLOW_JCC)
		m |= 1u << 2;
	if (kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INDIRECT_JMP)
		m |= 1u << 5;
	if (kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INDIRECT_CALL)
		m |= 1u << 6;
	if (kinstr_cfg__flags(cfg) & KINSTR_CFG_F_INTERNAL_CALL)
		m |= 1u << 7;
	if (kinstr_kernel__edges(k, f->addr, f->addr + f->size, &edges))
		m |= 1u << 11;
	if (jumps >= 10)
		m |= 1u << 16;
	if (pad >= 8)
		m |= 1u << 19;
	/* int3 only counts inside the code, not as its padding */
	return m;
}

int main(int argc, char **argv)
{
	const struct kinstr_func *best[NR_FEATURES] = { 0 };
	struct kinstr_kernel *k;
	size_t i, j;

	if (argc < 3) {
		fprintf(stderr, "usage: cut_seeds SNAPSHOT DIR [NAME...]\n");
		return 2;
	}
	k = kinstr_kernel__open_snapshot(argv[1]);
	if (!k) {
		fprintf(stderr, "cut_seeds: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_fn *fn;
		uint32_t m;

		if (f->size < MIN_SIZE || f->size > MAX_SIZE)
			continue;
		fn = kinstr_fn__analyze(k, f);
		if (!fn)
			continue;
		m = features_of(k, f, fn);
		kinstr_fn__free(fn);
		for (j = 0; j < NR_FEATURES; j++)
			if ((m & (1u << j)) && (!best[j] || f->size < best[j]->size))
				best[j] = f;
	}
	for (j = 0; j < NR_FEATURES + argc - 3; j++) {
		const struct kinstr_func *f = j < NR_FEATURES ? best[j] :
					      kinstr_kernel__find_func(k, argv[3 + j - NR_FEATURES]);
		const char *what = j < NR_FEATURES ? features[j] : argv[3 + j - NR_FEATURES];
		const unsigned char *code;
		unsigned char hdr[8];
		char path[4096];
		FILE *out;

		if (!f)
			continue;
		code = kinstr_kernel__text(k, f->addr, f->size);
		if (!code)
			continue;
		/* kernel text region, start's low 24 bits; even features get a few extra edges */
		hdr[0] = f->addr & 0xff;
		hdr[1] = f->addr >> 8 & 0xff;
		hdr[2] = f->addr >> 16 & 0xff;
		hdr[3] = j & 1 ? 0 : (j % 8) << 4 | 4;
		memcpy(hdr + 4, &f->addr, 4);
		snprintf(path, sizeof(path), "%s/k-%s", argv[2], what);
		out = fopen(path, "wb");
		if (!out || fwrite(hdr, 8, 1, out) != 1 || fwrite(code, f->size, 1, out) != 1 ||
		    fclose(out)) {
			fprintf(stderr, "cut_seeds: %s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("%-20s %s (%u bytes)\n", what, f->name, f->size);
	}
	kinstr_kernel__close(k);
	return 0;
}
