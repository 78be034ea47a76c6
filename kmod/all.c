// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr.ko's C files as one translation unit (kmod/Kbuild). DKMS rebuilds the module on the
 * user's machine for every kernel update: parsed once, the kernel's headers make a third of the
 * compile time of one unit per file. Each file still compiles alone with only its own includes
 * (KINSTR_SEPARATE=1, which make kmods builds for one kernel): that is what keeps the files' DAG
 * and their static names honest. Kbuild's per-file object list is read from the lines below.
 * The order is Kbuild's old link order; patch/entry.S and text_end.c stay objects of their own.
 */
#include "abi.c"
#include "main.c"
#include "ksym.c"
#include "session.c"
#include "limits.c"
#include "compat.c"
#include "check/policy.c"
#include "check/verify.c"
#include "check/cache.c"
#include "check/cache_timer.c"
#include "check/laid.c"
#include "check/modtext.c"
#include "check/hitpath.c"
#include "check/fence.c"
#include "patch/protocol.c"
#include "patch/area.c"
#include "patch/install.c"
#include "patch/ops.c"
#include "patch/slot.c"
#include "actions/hit.c"
#include "actions/trace.c"
#include "actions/ring.c"
#include "actions/timing.c"
#include "actions/bpf.c"
#include "actions/scope.c"
#include "actions/pred.c"
#include "actions/fetch.c"
#include "actions/tally.c"
#include "actions/span.c"
