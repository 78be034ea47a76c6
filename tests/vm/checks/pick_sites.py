#!/usr/bin/python3
"""Print probe specs inside FUNC, picked from the live kernel's own analysis ('kinstr disasm
--json'), so that a test names no offset of one kernel build: the first jump site and the first
trap site past the entry (its ENDBR, fentry NOP and first instruction), as FUNC+0xOFF each.
Exit 1 when FUNC has no site of a kind asked for (--need jump,trap)."""
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
picked = {}
for i in insns[k + 1:]:
    if i["class"] in ("jump", "trap") and i["class"] not in picked:
        picked[i["class"]] = i["offset"]
out = []
for kind in args.need.split(","):
    if kind not in picked:
        sys.exit(f"pick_sites: {args.func} has no {kind} site past its entry")
    out.append("%s+0x%x" % (args.func, picked[kind]))
print(" ".join(out))
