/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF programs as probe actions (bpf.c): the program a KINSTR_ACTION_BPF request names, checked
 * and referenced at install, run in probe context with the site's pt_regs, put after quiescence.
 * Calls down only: the resolved symbols (ksym.c) and compat.
 */
#ifndef KINSTR_KMOD_BPF_H
#define KINSTR_KMOD_BPF_H
#include <linux/types.h>

struct bpf_prog;
struct pt_regs;
struct kinstr_bpf_attach;

/* Is everything found that running a program as the kernel runs a kprobe's needs? */
bool kinstr_bpf_available(void);
/*
 * The program at->prog_fd names, referenced, if it may run at any probe site; else NULL with
 * *reason its enum kinstr_bpf_reason. In the caller's context (its fd table).
 */
struct bpf_prog *kinstr_bpf_prog_get(const struct kinstr_bpf_attach *at, u32 *reason);
void kinstr_bpf_prog_put(struct bpf_prog *prog);
/*
 * Probe context, preemption off, inside kinstr's own recursion guard: run prog on regs unless
 * another tracing program runs on this CPU or RCU does not watch here. false: it did not run.
 */
bool kinstr_bpf_run(const struct bpf_prog *prog, u64 cookie, struct pt_regs *regs);

#endif
