#!/usr/bin/env python3
"""The code cache on the test module (cover.t, issue 15): tests/vm/modules/kinstr_test_cache.ko.

cover_module.py hazards: `kinstr cover --json` over the module's functions while
cover_module.sh runs them (with the WARN): prints the workload's own results (the fault's
-EFAULT count, the static branch's and static call's effect while the copies run) and each
function's entry-block count.
cover_module.py kprobes: the same workload (no WARN) under the cache, then again under kprobe
events on every block's first instruction: prints the blocks compared and those that differ.
cover_module.py flow: the same workload under `kinstr cover --edges`: per block, the edges into
it and out of it against its count (flow conservation), the blocks whose ways the counters do
not all see (a fault's fixup) left out and counted; and the block counts equal those of a run
without edges.
cover_module.py lines: the same workload with --debuginfo the module's .ko (built with DWARF):
each block's source line against the function's lines in kinstr_test_cache.c.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs"))
from tracefs import TR, write_tr as write  # noqa: E402

FUNCS = ["kinstr_tc_loop", "kinstr_tc_branch", "kinstr_tc_copy", "kinstr_tc_get", "kinstr_tc_warn", "kinstr_tc_key",
         "kinstr_tc_call", "kinstr_tc_sleep"]
WORK = "tests/vm/checks/cover_module.sh"


def cover(arg, extra=()):
    out = subprocess.run(["build/kinstr", "cover", "--json", *extra, "-c", f"sh {WORK} {arg}"] + FUNCS,
                         capture_output=True, text=True, check=False)
    lines = out.stdout.splitlines()
    doc = next((json.loads(l) for l in lines if l.startswith("{")), None)
    if out.returncode or not doc:
        sys.exit(f"kinstr cover failed ({out.returncode}): {out.stderr.strip()}")
    # with --json the workload's own output goes to stderr
    return [l for l in out.stderr.splitlines() if l.startswith("cmd=")], doc


def counts(doc):
    return {(f["function"], b["offset"]): b["count"] for f in doc["functions"] for b in f["counts"]}


def hazards():
    results, doc = cover("warn")
    for line in results:
        print(line)
    if doc["refused"]:
        print("refused", doc["refused"])
    c = counts(doc)
    for f in doc["functions"]:
        print(f"entry {f['function']} {f['counts'][0]['count']} blocks {f['blocks']} covered {f['covered']}")
        print(f"blocks {f['function']} " + ",".join(str(b["count"]) for b in f["counts"]))
    print(f"functions {len(doc['functions'])}")


def kprobes():
    _, doc = cover("")
    c = counts(doc)
    write(f"{TR}/kprobe_events", "")
    names = {}
    for i, (fn, off) in enumerate(sorted(c)):
        try:
            write(f"{TR}/kprobe_events", f"p:kcm/k{i} {fn}+{off}\n", append=True)
            names[f"k{i}"] = (fn, off)
        except OSError:
            pass
    write(f"{TR}/events/kcm/enable", "1")
    subprocess.run(["sh", WORK], capture_output=True, check=True)
    write(f"{TR}/events/kcm/enable", "0")
    hits = {}
    with open(f"{TR}/kprobe_profile") as f:
        for line in f:
            p = line.split()
            if p[0].split("/")[-1] in names:
                hits[names[p[0].split("/")[-1]]] = int(p[1])
    write(f"{TR}/kprobe_events", "")
    bad = [f"{b[0]}+0x{b[1]:x}: cache {c[b]} kprobe {hits[b]}" for b in sorted(hits) if c[b] != hits[b]]
    print(f"blocks {len(c)} compared {len(hits)} ran {sum(1 for b in hits if hits[b])} mismatches {len(bad)}")
    for line in bad[:20]:
        print("mismatch", line)


def flow():
    _, plain = cover("")
    _, doc = cover("", ["--edges"])
    blocks = ok = unseen = ran = ran_ok = 0
    bad = []
    for f in doc["functions"]:
        for b in f["counts"]:
            blocks += 1
            ran += b["count"] != 0
            if b["flow"].startswith("unseen"):
                unseen += 1
            elif b["flow"] == "conserved" and b["in"] == b["count"] == b["out"]:
                ok += 1
                ran_ok += b["count"] != 0
            else:
                bad.append(f"{f['function']}+0x{b['offset']:x}: in {b['in']} count {b['count']} out {b['out']}")
    edges = sum(len(f["edges"]) for f in doc["functions"])
    same = counts(plain) == counts(doc)
    print(f"flow blocks {blocks} ran {ran} edges {edges} conserved {ok} ({ran_ok} that ran) differ {len(bad)} unseen {unseen}")
    print(f"summary conserved {doc.get('flow_conserved')} differs {doc.get('flow_differs')} unseen {doc.get('flow_unseen')}")
    print("block counts " + ("the same as without edges" if same else "differ from a run without edges"))
    for line in bad[:20]:
        print("differs", line)


def source_ranges(path):
    """Each test function's region of the source: after the code before it (the closing brace of the
    function or declaration above: its comment and prototype are its) to its own closing brace;
    and the line of its definition."""
    lines = open(path).read().splitlines()
    ranges = {}
    for i, l in enumerate(lines, 1):
        m = re.match(r"TC_FN \w+ (kinstr_tc_\w+)\(.*\)$", l)
        if m:
            end = next(j for j in range(i, len(lines) + 1) if lines[j - 1] == "}")
            start = next(j for j in range(i - 1, 0, -1) if lines[j - 1].startswith("}") or lines[j - 1].endswith(";")
                         and not lines[j - 1].startswith("TC_FN")) + 1
            ranges[m.group(1)] = (start, end, i)
    return ranges


def lines():
    src = "tests/vm/modules/kinstr_test_cache.c"
    ko = "tests/vm/modules/kinstr_test_cache.ko"
    ranges = source_ranges(src)
    _, doc = cover("", ["--debuginfo", ko])
    blocks = with_line = inside = 0
    bad, seen = [], set()
    inlined = 0
    for f in doc["functions"]:
        lo, hi, at = ranges[f["function"]]
        for b in f["counts"]:
            blocks += 1
            if "line" not in b:
                continue
            with_line += 1
            if b["source"].endswith("/kinstr_test_cache.c"):
                ok = lo <= b["line"] <= hi
                seen.add((f["function"], b["line"]))
            else:  # code a header's inline function put there (uaccess, smap): the line table says so
                ok = b["source"].endswith(".h")
                inlined += ok
            inside += ok
            if not ok:
                bad.append(f"{f['function']}+0x{b['offset']:x}: {b['source']}:{b['line']}, the function is {lo}..{hi}")
        first = f["counts"][0].get("line")
        print(f"entry {f['function']} line {first} defined {at}")
    print(f"lines blocks {blocks} with a line {with_line} in their function {inside} ({inlined} inlined from headers)"
          f" distinct {len(seen)}")
    for line in bad[:10]:
        print("outside", line)


if __name__ == "__main__":
    {"hazards": hazards, "kprobes": kprobes, "flow": flow, "lines": lines}[sys.argv[1]]()
