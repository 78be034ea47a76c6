// SPDX-License-Identifier: GPL-2.0
/*
 * BPF programs of kprobe type run at kinstr's sites. The program sees what a kprobe's sees: the
 * site's pt_regs, the kernel's run context (its cookie), and the same guard that keeps one
 * tracing program from running inside another on a CPU (bpf_prog_active, as trace_call_bpf()
 * takes it). The verifier already proved the program safe for a kprobe's context; what a kprobe
 * at an arbitrary instruction cannot give is refused here: multi-attach run contexts, the
 * override of a return, sleeping.
 */
#include <linux/bpf.h>

#include <uapi/linux/kinstr.h>
#include "base.h"
#include "ksym.h"
#include "actions/actions.h"
#include "compat.h"
#include "actions/bpf.h"

bool kinstr_bpf_available(void)
{
	return kinstr_ksyms.bpf_prog_active != NULL;
}

struct bpf_prog *kinstr_bpf_prog_get(const struct kinstr_bpf_attach *at, u32 *reason)
{
	struct bpf_prog *prog;

	if (!kinstr_bpf_available()) {
		*reason = KINSTR_BPF_R_UNAVAILABLE;
		return NULL;
	}
	prog = bpf_prog_get_type_dev(at->prog_fd, BPF_PROG_TYPE_KPROBE, false);
	if (IS_ERR(prog)) {
		*reason = PTR_ERR(prog) == -EBADF ? KINSTR_BPF_R_BAD_FD : KINSTR_BPF_R_NOT_KPROBE;
		return NULL;
	}
	/* kprobe.multi, kprobe.session, uprobe.multi: helpers would read another run context */
	if (prog->expected_attach_type)
		*reason = KINSTR_BPF_R_ATTACH_TYPE;
	else if (prog->kprobe_override)
		*reason = KINSTR_BPF_R_OVERRIDE;
	else if (kinstr_bpf_prog_sleepable(prog))
		*reason = KINSTR_BPF_R_SLEEPABLE;
	else
		return prog;
	bpf_prog_put(prog);
	return NULL;
}

void kinstr_bpf_prog_put(struct bpf_prog *prog)
{
	if (prog)
		bpf_prog_put(prog);
}
