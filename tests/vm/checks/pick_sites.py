#!/usr/bin/python3
"""Print probe specs inside FUNC, picked from the live kernel's own analysis ('kinstr disasm
--json'), so that a test names no offset of one kernel build: for each kind asked for (--need,
in that order), the first site of that kind past the entry (its ENDBR, fentry NOP and first
instruction) that shares no byte with the entry probe or an earlier pick, as FUNC+0xOFF. Kinds:
`jump` (a jump site that displaces no call), `trap`, and `call` (a jump site whose displaced
bytes end with a direct call, which the slot emulates: push the return address, jmp to the
callee). Exit 1 when FUNC has no site of a kind asked for (default --need jump,trap)."""
import argparse
import json
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("func")
ap.add_argument("--need", default="jump,trap")
ap.add_argument("--snapshot", help="a snapshot instead of the running kernel")
args = ap.parse_args()
snap = ["--snapshot", args.snapshot] if args.snapshot else []
p = subprocess.run(["build/kinstr", "disasm", "--json", *snap, args.func], capture_output=True, text=True)
if p.returncode:
    sys.exit(f"pick_sites: kinstr disasm {args.func}: {p.stderr.strip()}")
d = json.loads(p.stdout)
insns = sorted((i for b in d["blocks"] for i in b["insns"]), key=lambda i: i["offset"])
# past the entry: whatever is refused at the start (ENDBR, fentry NOP), then one instruction
k = 0
while k < len(insns) and insns[k]["class"] == "refused":
    k += 1
ends = {i["offset"] + i["len"]: i for i in insns}


def span(i):
    return (i["offset"], i["offset"] + (i.get("displaced", 0) if i["class"] == "jump" else i["len"]))


def ends_in_call(i):
    last = ends.get(span(i)[1])
    return i["class"] == "jump" and last is not None and last["text"].startswith("call ")


def kind_of(i):
    return "call" if ends_in_call(i) else i["class"]


# each pick shares no byte with the entry probe's or another pick's (kinstr refuses overlaps)
taken = [span(insns[k])] if k < len(insns) else []
picked = {}
for want in args.need.split(","):
    for i in insns[k + 1:]:
        a, b = span(i)
        if kind_of(i) == want and all(b <= x or a >= y for x, y in taken):
            picked[want] = i["offset"]
            taken.append((a, b))
            break
out = []
for kind in args.need.split(","):
    if kind not in picked:
        sys.exit(f"pick_sites: {args.func} has no {kind} site past its entry")
    out.append("%s+0x%x" % (args.func, picked[kind]))
print(" ".join(out))
