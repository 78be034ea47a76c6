// SPDX-License-Identifier: GPL-2.0
/*
 * Slot bodies (lib/plan/probe.c) of jump probes that displace a direct call, over the shipped snapshots
 * of live kernel functions (tests/data/sample-*.snap): what runs before the call moves relocated,
 * instruction for instruction; the call itself becomes `push $return; jmp callee`, the return
 * address being the first byte after the patched ones, so that the callee returns to the kernel's
 * own code. The module checks the same shape with its own decoder (kmod/check/verify.c) before patching.
 */
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <string.h>

#include <kinstr/probe.h>
#include <kinstr/sites.h>
#include <kinstr/x86.h>
#include "check.h"

/* Where the module's patch space would be for this text: within +-2 GiB of it. */
static uint64_t patch_space(uint64_t text)
{
	return (text & ~((1ULL << 30) - 1)) + (1ULL << 30) + (16ULL << 20);
}

/* The index of the last instruction jump site s of fn displaces. */
static size_t last_displaced(const struct kinstr_fn *fn, size_t s)
{
	const struct kinstr_cfg *cfg = kinstr_fn__cfg(fn);
	const struct kinstr_site *st = kinstr_fn__site(fn, s);
	size_t j = s;

	while (j + 1 < kinstr_cfg__insn_cnt(cfg) && kinstr_cfg__insn(cfg, j + 1)->x.addr < st->addr + st->displaced_len)
		j++;
	return j;
}

/* Check the body of jump site s of fn (which ends with a direct call); 1 if checked. */
static int check_body(const struct kinstr_kernel *k, const struct kinstr_func *f, const struct kinstr_fn *fn,
		      size_t s)
{
	const struct kinstr_cfg *cfg = kinstr_fn__cfg(fn);
	const struct kinstr_site *st = kinstr_fn__site(fn, s);
	const struct kinstr_x86_insn *call = &kinstr_cfg__insn(cfg, last_displaced(fn, s))->x;
	struct kinstr_probeset *ps = kinstr_probeset__new(NULL, k);
	uint64_t at = patch_space(st->addr), ret_addr = st->addr + st->displaced_len;
	struct kinstr_x86_insn x;
	uint8_t body[256];
	size_t off = 0, prefix = 0;
	struct kinstr_why why;
	int len;

	CHECK(ps != NULL, "probe set");
	if (!ps)
		return 0;
	if (kinstr_probeset__add(ps, f, st->addr, &why)) {
		CHECK(0, "%s+0x%llx: a jump site user space refuses: %s", f->name,
		      (unsigned long long)(st->addr - f->addr), why.msg);
		kinstr_probeset__free(ps);
		return 0;
	}
	len = kinstr_probeset__body(ps, 0, at, body, sizeof(body), &why);
	kinstr_probeset__free(ps);
	CHECK(len >= 10, "%s+0x%llx: body: %d %s", f->name, (unsigned long long)(st->addr - f->addr), len,
	      len < 0 ? why.msg : "");
	if (len < 10)
		return 0;
	/* the relocated instructions before the call: as many as the site displaces before it */
	while (off < (size_t)len - 10 && kinstr_x86__decode(body + off, len - off, at + off, &x) == 0) {
		CHECK(x.flow != KINSTR_X86_FLOW_CALL && x.flow != KINSTR_X86_FLOW_CALL_IND, "%s: a call relocated",
		      f->name);
		off += x.len;
		prefix++;
	}
	CHECK(off == (size_t)len - 10, "%s+0x%llx: the relocated part ends at %zu of %d", f->name,
	      (unsigned long long)(st->addr - f->addr), off, len);
	CHECK(prefix == last_displaced(fn, s) - s, "%s+0x%llx: %zu relocated instructions for %zu displaced", f->name,
	      (unsigned long long)(st->addr - f->addr), prefix, last_displaced(fn, s) - s);
	/* push $imm32 (sign-extended): the original return address */
	CHECK(body[off] == 0x68 && (uint64_t)(int64_t)(int32_t)(body[off + 1] | body[off + 2] << 8 |
		body[off + 3] << 16 | (uint32_t)body[off + 4] << 24) == ret_addr,
	      "%s+0x%llx: no push of the return address 0x%llx", f->name, (unsigned long long)(st->addr - f->addr),
	      (unsigned long long)ret_addr);
	CHECK(call->addr + call->len == ret_addr, "%s: the call is not the last displaced", f->name);
	/* jmp rel32 to the callee */
	CHECK(kinstr_x86__decode(body + off + 5, 5, at + off + 5, &x) == 0 && x.flow == KINSTR_X86_FLOW_JMP &&
	      x.len == 5 && x.target == call->target, "%s+0x%llx: no jmp to the callee 0x%llx", f->name,
	      (unsigned long long)(st->addr - f->addr), (unsigned long long)call->target);
	return 1;
}

static void t_displaced_call_bodies(void)
{
	glob_t g;
	size_t p, checked_all = 0;

	if (glob("tests/data/sample-*.snap", 0, NULL, &g) || !g.gl_pathc)
		SKIP("no snapshot in tests/data");
	for (p = 0; p < g.gl_pathc; p++) {
		struct kinstr_kernel *k = kinstr_kernel__open_snapshot(g.gl_pathv[p]);
		size_t i, checked = 0, with_prefix = 0;

		CHECK(k != NULL, "%s: %s", g.gl_pathv[p], strerror(errno));
		if (!k)
			continue;
		for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
			const struct kinstr_func *f = kinstr_kernel__func(k, i);
			struct kinstr_fn *fn = kinstr_fn__analyze(k, f);
			size_t s;

			for (s = 0; fn && s < kinstr_fn__site_cnt(fn); s++) {
				const struct kinstr_site *st = kinstr_fn__site(fn, s);

				if (st->cls != KINSTR_SITE_JUMP ||
				    kinstr_cfg__insn(kinstr_fn__cfg(fn), last_displaced(fn, s))->x.flow != KINSTR_X86_FLOW_CALL)
					continue;
				checked += check_body(k, f, fn, s);
				with_prefix += last_displaced(fn, s) > s;
			}
			kinstr_fn__free(fn);
		}
		printf("     %s: %zu bodies of jumps that displace a call (%zu with instructions before it)\n",
		       g.gl_pathv[p], checked, with_prefix);
		CHECK(checked > 100 && with_prefix > 10, "%s: only %zu bodies, %zu with a prefix", g.gl_pathv[p],
		      checked, with_prefix);
		checked_all += checked;
		kinstr_kernel__close(k);
	}
	globfree(&g);
	CHECK(checked_all > 0, "no body checked");
}

int main(void)
{
	RUN(t_displaced_call_bodies);
	return check_done();
}
