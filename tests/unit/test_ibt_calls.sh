#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# IBT-safe calls: kinstr.ko never calls a function it resolved through a pointer. On IBT hardware
# an indirect call to a function whose ENDBR the kernel sealed raises #CP; the module calls
# what it resolves through static calls (kmod/ksym.h, kinstr_kcall), which become direct calls.
# From `objdump -dr` of every built kinstr.ko (kmod/ and build/kmod/*/kmod/): each indirect call
# or jump (through a retpoline thunk, or `call *`) must be
#   - a paravirt call (through pv_ops: the kernel patches it to a direct call at load), or
#   - in a function allowed below, with why, and its target not loaded from kinstr_ksyms;
# and nothing reads a function pointer out of kinstr_ksyms to call it. A synthetic listing that
# does shows the check can fail (checker_catches_a_resolved_pointer_call).
# Run from the top of the tree after the build (make all kmods).
set -uo pipefail
cd "$(dirname "$0")/../.."

python3 - <<'EOF'
import glob, re, subprocess, sys

# functions of kinstr.ko that call through a pointer of their own, never one it resolved
ALLOWED = {
    "kinstr_trace_create": "calls the trace clock it chose (a function of the module) once, to start",
    "kinstr_trace_poll": "poll_wait() calls the poll table's own queueing function",
    # the module is one unit (kmod/all.c): GCC may inline kinstr_trace_poll into its callers
    "kinstr_session_poll": "kinstr_trace_poll inlined: poll_wait()'s queueing function",
    "kinstr_poll": "kinstr_session_poll inlined, as it",
    "kr_reserve_slow": "the ring's clock (ring/ring.c's reader and tests pass their own)",
    "kr_switch": "the ring's clock, as kr_reserve_slow",
    "kinstr_bpf_hit": "bpf_prog_run() (kinstr_bpf_run, inline) calls the program's own JIT image (prog->bpf_func), as the kernel's callers do",
    "static_call_targets": "calls its caller's callback (hitpath.c's hp_add_target), a function of the module",
    "kinstr_ksyms_hidden_targets": "calls its caller's callback, as static_call_targets",
    "kinstr_tables_hidden_targets": "calls its caller's callback, as static_call_targets",
    "tracepoint_probes": "calls its caller's callback, as static_call_targets",
    "lookup_target": "calls its caller's callback, as static_call_targets",
    # the probe actions' table (kmod/patch/ops.c): its hooks are functions of the module; install's
    # phases call them (inlined into kinstr_area_install or not), never probe context
    "kinstr_area_install": "the actions' table's take, check and link hooks (patch/ops.c)",
    "take_objects": "the actions' table's take hook, as kinstr_area_install",
    "verify_requests": "the actions' table's check hook, as kinstr_area_install",
    "write_publish_locked": "the actions' table's link hook, as kinstr_area_install",
    "kinstr_slot_write": "the actions' table's prologue writers (patch/slot.c)",
    "kinstr_action_features": "the actions' table's available() (kinstr_bpf_available)",
    "scope_free": "cgroup_put() (css_put, inline) drops the css's percpu_ref, whose release the kernel set, as every caller does",
    "percpu_ref_put_many": "scope_free's cgroup_put, left out of line by the debug kernel's config: the same kernel-set release",
}
INDIRECT = re.compile(r"__x86_indirect_thunk_(\w+)|\b(call|jmp)\s+\*(%\w+|\S+)")

def problems(listing):
    """[(function, why)] for each indirect call that may go through a resolved pointer."""
    bad, fn, recent = [], None, []
    for line in listing.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            fn, recent = m.group(1), []
            continue
        recent = (recent + [line])[-12:]
        m = INDIRECT.search(line)
        if not m or fn is None:
            continue
        ctx = "\n".join(recent)
        if "pv_ops" in ctx and m.group(2):
            continue  # call *pv_ops+N(%rip): paravirt, a direct call once the kernel patched it
        if re.sub(r"(\.(constprop|isra|part)\.\d+)+$", "", fn) not in ALLOWED:  # GCC's clones keep the rule
            bad.append((fn, "an indirect call in a function not known to call only its own pointers: " +
                        line.strip()))
        elif re.search(r"R_X86_64_\w+\s+kinstr_ksyms", ctx):
            bad.append((fn, "calls through a pointer loaded from kinstr_ksyms: " + line.strip()))
    return bad

ok = True
synthetic = """0000000000000010 <kinstr_ksyms_is_bug>:
  10:	48 8b 05 00 00 00 00 	mov    0x0(%rip),%rax
			13: R_X86_64_PC32	kinstr_ksyms+0x2c
  17:	e8 00 00 00 00       	call   1c <kinstr_ksyms_is_bug+0xc>
			18: R_X86_64_PLT32	__x86_indirect_thunk_rax-0x4
0000000000000020 <kr_switch>:
  20:	48 8b 15 00 00 00 00 	mov    0x0(%rip),%rdx
			23: R_X86_64_PC32	kinstr_ksyms+0x8
  27:	ff d2                	call   *%rdx
"""
got = problems(synthetic)
if [f for f, _ in got] == ["kinstr_ksyms_is_bug", "kr_switch"]:
    print("PASS checker_catches_a_resolved_pointer_call: both synthetic calls flagged")
else:
    ok = False
    print("FAIL checker_catches_a_resolved_pointer_call: flagged %s" % got)

kos = sorted(glob.glob("kmod/kinstr.ko") + glob.glob("build/kmod/*/kmod/kinstr.ko"))
if not kos:
    print("FAIL no_indirect_call_to_a_resolved_function: no kinstr.ko built (make all kmods)")
    sys.exit(1)
for ko in kos:
    listing = subprocess.run(["objdump", "-dr", ko], capture_output=True, text=True, check=True).stdout
    n = len([l for l in listing.splitlines() if INDIRECT.search(l)])
    bad = problems(listing)
    name = "no_indirect_call_to_a_resolved_function[%s]" % ko
    if bad:
        ok = False
        print("FAIL %s: %s" % (name, "; ".join("%s: %s" % b for b in bad[:5])))
    else:
        print("PASS %s: %d indirect calls, each paravirt or through the module's own pointers" % (name, n))
sys.exit(0 if ok else 1)
EOF
