#!/usr/bin/env python3
"""Check the kernel facts in `kinstr cover --dry-run --json` (read from stdin) against /proc/kallsyms:
each jump label's key lies in a kernel data symbol (a static key, alone or inside a struct such as a
tracepoint), each static call's trampoline is a __SCT__ symbol."""
import bisect
import json
import sys

d = json.load(sys.stdin)
syms = []
for line in open("/proc/kallsyms"):
    a, t, name = line.split()[:3]
    a = int(a, 16)
    if a:
        syms.append((a, t, name))
syms.sort()
addrs = [s[0] for s in syms]


def symbol_at(a):
    i = bisect.bisect_right(addrs, a) - 1
    return syms[i] if i >= 0 else (0, "?", "?")


facts = [(f["function"], x) for f in d["functions"] for x in f.get("facts", [])]
jl = [(fn, x) for fn, x in facts if "jump_label_key" in x]
sc = [(fn, x) for fn, x in facts if "static_call_trampoline" in x]
bad = [(fn, x, symbol_at(int(x["jump_label_key"], 16))[2]) for fn, x in jl
       if symbol_at(int(x["jump_label_key"], 16))[1] not in "dDbBrR"]
bad += [(fn, x, symbol_at(int(x["static_call_trampoline"], 16))[2]) for fn, x in sc
        if symbol_at(int(x["static_call_trampoline"], 16))[2][:7] != "__SCT__" or
        symbol_at(int(x["static_call_trampoline"], 16))[0] != int(x["static_call_trampoline"], 16)]
print("copied", sum("blocks" in f for f in d["functions"]), "of", len(d["functions"]))
print("jump labels", len(jl), "static calls", len(sc))
print("bad facts", len(bad), bad[:3])
