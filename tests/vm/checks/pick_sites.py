#!/usr/bin/python3
"""Print probe specs inside FUNC, picked from the live kernel's own analysis ('kinstr disasm
--json'), so that a test names no offset of one kernel build: for each kind asked for (--need,
default jump,trap), the first site of that kind past the entry (its ENDBR, fentry NOP and first
instruction) that shares no byte with the entry's probe or another pick, as FUNC+0xOFF each.
Exit 1 when FUNC has no site of a kind asked for.

Kinds:
  jump       a jump site whose displaced bytes hold no call
  trap       a trap site
  call       a jump site whose displaced bytes end with a direct call (the slot emulates it: push
             the return address, jmp to the callee)
  jump-dead  a jump site where the module will count inline: its instruction writes the flags
             without reading them (add/or/and/sub/xor/cmp/test, as kmod/check/verify.c's kills_flags()),
             or it is a return, and the analysis has the flags dead there (for bench/run-splice)
  jump-live  a jump site where the analysis has the flags live (the probe must save them)
With several FUNCs, each kind comes from the first FUNC that has it (a FUNC the kernel does not
have is skipped). --at-entry also considers the entry's first instruction (the one right after
the ENDBR and the fentry NOP), and then the entry is not kept free; KIND@entry does so for that
kind alone. --json prints one object, each kind asked for mapped to its function, offset, spec,
instruction and live flags, or to null (exit 0) with --missing-ok, and "functions" to the FUNCs
looked at that the kernel has."""
import argparse
import json
import subprocess
import sys

PREFIXES = {0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65, 0xf0}


def kills_flags(hexbytes):
    """kmod/check/verify.c's kills_flags(): writes every flag without reading one."""
    b = bytes.fromhex(hexbytes)
    i = 0
    while i < len(b) and b[i] in PREFIXES:
        i += 1
    if i < len(b) and 0x40 <= b[i] <= 0x4f:
        i += 1
    if i >= len(b):
        return False
    op = b[i]
    reg = (b[i + 1] >> 3) & 7 if i + 1 < len(b) else None
    if op < 0x40 and (op & 7) <= 5:  # the ALU block, not adc (2) or sbb (3); 0x0f is two-byte
        return op != 0x0f and (op >> 3) not in (2, 3)
    if op in (0x84, 0x85, 0xa8, 0xa9):
        return True
    if op in (0x80, 0x81, 0x83):
        return reg is not None and reg not in (2, 3)
    if op in (0xf6, 0xf7):
        return reg == 0
    return False


def is_return(i):
    return i["bytes"] == "c3" or (i["bytes"].startswith("e9") and "return_thunk" in i["text"])


def span(i):
    """The bytes a probe at i covers: the displaced ones of a jump, the instruction of a trap."""
    return (i["offset"], i["offset"] + (i.get("displaced", 0) if i["class"] == "jump" else i["len"]))


def matches(kind, i, ends):
    flags_live = "flags" in i["live_in"]
    if kind == "trap":
        return i["class"] == "trap"
    if i["class"] != "jump":
        return False
    last = ends.get(span(i)[1])
    ends_in_call = last is not None and last["text"].startswith("call ")
    if kind == "jump":
        return not ends_in_call
    if kind == "call":
        return ends_in_call
    if kind == "jump-dead":
        return not flags_live and (kills_flags(i["bytes"]) or is_return(i))
    if kind == "jump-live":
        return flags_live
    sys.exit(f"pick_sites: unknown kind {kind}")


ap = argparse.ArgumentParser()
ap.add_argument("funcs", nargs="+", metavar="func")
ap.add_argument("--need", default="jump,trap")
ap.add_argument("--snapshot", help="a snapshot instead of the running kernel")
ap.add_argument("--at-entry", action="store_true", help="the entry's first instruction may be picked")
ap.add_argument("--json", action="store_true")
ap.add_argument("--missing-ok", action="store_true", help="with --json: null for a kind none has")
args = ap.parse_intermixed_args()
snap = ["--snapshot", args.snapshot] if args.snapshot else []
kinds = args.need.split(",")
at_entry = {kind: args.at_entry or kind.endswith("@entry") for kind in kinds}
picked = {}
errors = []
have = []
for func in args.funcs:
    p = subprocess.run(["build/kinstr", "disasm", "--json", *snap, func], capture_output=True, text=True)
    if p.returncode:
        errors.append(f"kinstr disasm {func}: {p.stderr.strip()}")
        continue
    d = json.loads(p.stdout)
    have.append(func)
    insns = sorted((i for b in d["blocks"] for i in b["insns"]), key=lambda i: i["offset"])
    # past the entry: whatever is refused at the start (ENDBR, fentry NOP), then one instruction
    k = 0
    while k < len(insns) and insns[k]["class"] == "refused":
        k += 1
    ends = {i["offset"] + i["len"]: i for i in insns}
    # kinstr refuses two probes on one byte: a pick shares none with the entry's probe (which the
    # callers probe too, unless the entry itself may be picked) or with another pick
    taken = [span(insns[k])] if k < len(insns) and not any(at_entry.values()) else []
    for n, i in enumerate(insns[k:]):
        a, b = span(i)
        for kind in kinds:
            if kind not in picked and (n or at_entry[kind]) and matches(kind.removesuffix("@entry"), i, ends) \
                    and all(b <= x or a >= y for x, y in taken):
                picked[kind] = {"func": func, "offset": i["offset"], "spec": "%s+0x%x" % (func, i["offset"]),
                                "text": i["text"], "bytes": i["bytes"], "class": i["class"],
                                "flags": "live" if "flags" in i["live_in"] else "dead"}
                taken.append((a, b))
                break
    if all(kind in picked for kind in kinds):
        break
missing = [kind for kind in kinds if kind not in picked]
if missing and not (args.json and args.missing_ok):
    if len(errors) == len(args.funcs):
        sys.exit("pick_sites: " + "; ".join(errors))
    sys.exit(f"pick_sites: {', '.join(args.funcs)}: no {' or '.join(missing)} site"
             f"{'' if all(at_entry[m] for m in missing) else ' past the entry'}")
if args.json:
    print(json.dumps({**{kind: picked.get(kind) for kind in kinds}, "functions": have}))
else:
    print(" ".join(picked[kind]["spec"] for kind in kinds))
