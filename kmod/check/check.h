/* SPDX-License-Identifier: GPL-2.0 */
/* check/: modules' text, the hit path, fences, the address policy and the verifier (what may be patched). */
#ifndef KINSTR_KMOD_CHECK_H
#define KINSTR_KMOD_CHECK_H

#include "base.h"
#include "ksym.h"

/* modtext.c: the core text of live modules (never init text, never ours). */
u32 kinstr_module_policy(unsigned long addr, unsigned int len);
bool kinstr_module_readable(unsigned long addr, unsigned long len, struct module **modp);
int kinstr_module_pin(unsigned long site, struct module **modp);
bool kinstr_module_sites_in(enum kinstr_patch_sites which, unsigned long a, unsigned int len);
bool kinstr_module_target_in(unsigned long lo, unsigned long hi, unsigned long *target);
void kinstr_module_table_of(unsigned long a, enum kinstr_patch_sites which, struct kinstr_span *t);
/* kinstr.ko's own jump entries and static call sites (the hit path's closure reads them). */
void kinstr_module_own_tables(struct kinstr_span *jl, struct kinstr_span *sc);
int kinstr_module_info(struct kinstr_module_info *mi);

/*
 * hitpath.c: the functions kinstr's probe context can reach (KINSTR_R_HIT_PATH), closed over
 * direct branches from the roots each part of the module names (kinstr_*_hit_roots()).
 */
#define KINSTR_HIT_ROOTS_MAX 40
int kinstr_hitpath_init(const unsigned long *roots, size_t nroots);
void kinstr_hitpath_exit(void);
bool kinstr_hitpath_has(unsigned long a, unsigned int len);
bool kinstr_hitpath_spans(const struct kinstr_span **spans, size_t *n);


/* fence.c: kprobes refuse the bytes of kinstr's sites (entries on the kprobe blacklist). */
struct kinstr_fence {
	struct kprobe_blacklist_entry e;
	struct hlist_node node;
	bool in;
};
bool kinstr_fence_available(void);
void kinstr_fence_lock(void);
void kinstr_fence_unlock(void);
bool kinstr_fence_kprobed(unsigned long a, unsigned int len);
void kinstr_fence_add(struct kinstr_fence *f, unsigned long site, unsigned int len);
void kinstr_fence_del(struct kinstr_fence *f);
bool kinstr_fence_blacklisted(unsigned long a, const char *sym);
int kinstr_fence_init(void);
void kinstr_fence_exit(void);


/* policy.c: the site-safety predicates, each one rule. */
u32 kinstr_policy_check(unsigned long addr, unsigned int len);
long kinstr_ioctl_check(void __user *uarg);
/* KINSTR_IOC_HELD (patch/protocol.c): what every session holds now. */
long kinstr_ioctl_held(void __user *uarg);

/* verify.c: one probe request against the kernel's decoder and the site-safety rules. */
struct kinstr_probe;
struct kinstr_verdict {
	u32 refusal;		/* enum kinstr_refusal */
	u32 reasons;		/* KINSTR_REFUSE_RESERVED */
	u32 offset;		/* from the symbol: the instruction containing site, or a target */
	u32 insn_len;
	unsigned long addr;
	bool flags_dead;	/* accepted: the flags are dead at the site (its instruction, or the C ABI) */
};
struct kinstr_action_ops;
/* One request, its action's entry ops (NULL: no such action; the caller looks it up). */
int kinstr_verify_probe(const struct kinstr_probe *p, const struct kinstr_action_ops *ops, unsigned long body_addr,
			struct kinstr_verdict *v);
/* The decoder's helpers, for cache.c (enum: 0 none, 1 jmp, 2 jcc, 3 call, 4 loop/jrcxz). */
enum kinstr_branch { KINSTR_BR_NONE, KINSTR_BR_JMP, KINSTR_BR_JCC, KINSTR_BR_CALL, KINSTR_BR_LOOP };
int kinstr_decode_live(struct insn *insn, unsigned long addr);
void kinstr_decoder_selftest(void);
int kinstr_decode_bytes(struct insn *insn, const u8 *buf, int len);
int kinstr_branch_of(const struct insn *insn, int *cc);
unsigned long kinstr_branch_target(const struct insn *insn, unsigned long addr);
bool kinstr_rip_relative(const struct insn *insn);
bool kinstr_indirect_branch(const struct insn *insn);
bool kinstr_function_of(unsigned long site, unsigned long *start, unsigned long *size);
unsigned long kinstr_fentry_of(unsigned long start);
/* The flags are dead at site by the C ABI (a verified probe's verdict also says so: flags_dead). */
bool kinstr_flags_dead_by_abi(unsigned long site);

#endif
