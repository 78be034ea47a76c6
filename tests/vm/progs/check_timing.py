#!/usr/bin/python3
"""Compare 'kinstr profile --json' of the test module's functions with the module's own
measurements (/sys/kernel/debug/kinstr_test/last: local_clock() around each call, the clock
kinstr's timers read; under TCG the TSC is unstable and local_clock() may step by up to a tick
against ktime_get_ns(), so the reference must be the same clock).

The module's clock runs around the call, so it also counts the probes kinstr puts at the entry
and exits (and call sites) inside that window; kinstr's own timers do not. Under an emulator
that cost is not small beside 100 us, so it is measured in the same run ('busy' mode: the same
function shape, one entry and one exit probe) and allowed for, once per pair of probes. The
runs are 100 calls or more, so that one stall of the emulated CPU (host load) inside one
window does not decide the sum.

  check_timing.py busy  PROFILE.json LAST              prints the probes' cost per call (ns)
  check_timing.py outer PROFILE.json LAST COST [split]  outer's and inner's wall time within 10%
                                              (+ COST per probe pair in the window); split: the
                                              --calls run, outer = busy + inner + own
  check_timing.py sleep PROFILE.json LAST COST         wall within 10%; on-CPU leaves the sleep out
"""
import json
import sys


def fail(why):
    print(f"timing check failed: {why}")
    sys.exit(1)


def near(name, got, want, allowance=0.0, tol=0.10):
    r = got / want if want else 0
    print(f"{name}: kinstr {got / 1e6:.3f} ms, module {want / 1e6:.3f} ms, ratio {r:.3f}"
          f" (probe allowance {allowance / 1e6:.3f} ms)")
    if abs(got - want) > tol * want + allowance:
        fail(f"{name}: not within {tol:.0%} of the module's own measurement")


mode, prof, last = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read().split()
cost = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
m = {k: int(v) for k, v in (x.split("=", 1) for x in last) if v.lstrip("-").isdigit()}
f = {x["function"]: x for x in prof["functions"]}
if mode == "busy":
    b = f["kinstr_test_busy"]
    if b["calls"] != m["calls"]:
        fail(f"calls: {b['calls']}, module {m['calls']}")
    per = max(0.0, (m["total_ns"] - b["wall_ns"]) / b["calls"])
    print(f"busy: kinstr {b['wall_ns'] / b['calls'] / 1e3:.1f} us a call, module {m['total_ns'] / m['calls'] / 1e3:.1f} us")
    print(f"probe cost {per:.0f}")
    sys.exit(0)
n = m["calls"]
if mode == "outer":
    o, i = f["kinstr_test_outer"], f["kinstr_test_inner"]
    if o["calls"] != n or i["calls"] != n or o["unmatched"] or i["unmatched"]:
        fail(f"calls: outer {o['calls']}, inner {i['calls']}, module {n}")
    split = len(sys.argv) > 5
    # probe pairs inside the module's windows: outer: its own, inner's (and with --calls, the
    # call sites' of busy and inner); inner: its own (and with --calls, its call site's in
    # outer, and the two local_clock() call sites' around it: the stop of the one and the start
    # of the other)
    near("outer (inclusive)", o["wall_ns"], m["outer_ns"], cost * n * (4 if split else 2))
    print(f"inner's longest call: kinstr {i['max_ns'] / 1e3:.1f} us, module {m.get('inner_max_ns', 0) / 1e3:.1f} us")
    near("inner (inclusive)", i["wall_ns"], m["inner_ns"], cost * n * (3 if split else 1))
    if split:
        calls = {c["callee"]: c["wall_ns"] for c in o["callees"]}
        busy, inner = calls.get("kinstr_test_busy", 0), calls.get("kinstr_test_inner", 0)
        other = sum(calls.values()) - busy - inner  # its two local_clock() calls
        print(f"outer = busy {busy / 1e6:.3f} + inner {inner / 1e6:.3f} + other calls {other / 1e6:.3f}"
              f" + own {o['self_ns'] / 1e6:.3f} ms (of {o['wall_ns'] / 1e6:.3f})")
        if abs(busy + inner + other + o["self_ns"] - o["wall_ns"]) > 0.01 * o["wall_ns"]:
            fail("outer's split does not add up")
        near("outer's own busy-wait, as its callee", busy, m["outer_ns"] - m["inner_ns"], cost * n * 3)
        near("inner, as outer's callee", inner, m["inner_ns"], cost * n * 2)
elif mode == "sleep":
    s = f["kinstr_test_sleep"]
    if s["calls"] != n:
        fail(f"calls: {s['calls']}, module {n}")
    near("sleep (wall)", s["wall_ns"], m["sleep_ns"], cost * n)
    per = s["oncpu_ns"] / s["calls"]
    print(f"sleep on-CPU: {per / 1e3:.1f} us a call (busy-waits 100 us, then sleeps 10 ms)")
    if not 90_000 <= per <= 0.2 * s["wall_ns"] / s["calls"]:
        fail("on-CPU time should be about the 100 us busy-wait, the sleep left out")
print("timing ok")
