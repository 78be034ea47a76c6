#!/usr/bin/python3
"""Check 'kinstr drill --json' output: every measured node's split adds up (its own share plus its
callees' shares is 1, less the callees under 0.5% that drill leaves out, and up to 2% more: calls in
flight when a level's probes go out count their call sites but not their caller), and shares stay
in [0, 1].

  check_drill.py FILE [--path F1,F2,...]   (--path: the hottest chain from the root starts so)
"""
import json
import sys


def fail(why):
    print(f"drill check failed: {why}")
    sys.exit(1)


def walk(n):
    kids = n["callees"]
    if not 0 <= n["share_of_parent"] <= 1.0001 or not 0 <= n["share_of_root"] <= 1.0001:
        fail(f"{n['function']}: share out of range")
    if n["measured"] and kids:
        tot = n["self"] + sum(k["share_of_parent"] for k in kids)
        print(f"split {n['function']}: self {n['self']:.3f} + callees = {tot:.3f}")
        if not 0.95 <= tot <= 1.02:
            fail(f"{n['function']}: split adds up to {tot:.3f}")
    for k in kids:
        walk(k)


d = json.load(open(sys.argv[1]))
walk(d["root"])
if len(sys.argv) > 3 and sys.argv[2] == "--path":
    want = sys.argv[3].split(",")
    n, got = d["root"], [d["root"]["function"]]
    while n["callees"] and len(got) < len(want):
        n = max(n["callees"], key=lambda k: k["share_of_root"])
        got.append(n["function"])
    if got[:len(want)] != want:
        fail(f"hottest chain {got}, expected {want}")
    print("hottest chain:", " > ".join(got))
print("splits add up")
