#!/usr/bin/env python3
"""The code cache's block counts against the kernel's own kprobes (cover.t, issue 15).

cover_vs_kprobes.py [--n A,B] [--counted-after] KINSTR WORKLOAD FUNC...: for N = 1000 and 2000 (or
A and B) runs of the workload,
`kinstr cover --json -c 'WORKLOAD N' FUNC...` gives every block's count; then, in separate runs
of the same workload, a kprobe event on each block's first instruction gives its hits. Both are
system-wide, so the comparison is of the differences between the two N: whatever else ran
(the workload's start, its dynamic loading) is the same in both and cancels out. Prints the
blocks compared and every block whose two differences disagree.

--counted-after: FUNC are globs; only the functions they match whose plan has blocks counted
after a native run (the original runs into them: `kinstr cover --dry-run --json`'s
counted_after) are compared, and how many of those blocks were compared and ran is printed.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "progs"))
from tracefs import TR, quiet_event, write_tr  # noqa: E402


def cover(kinstr, workload, funcs, n):
    with quiet_event():  # what the kprobe runs' events turn on (tracefs.py)
        out = subprocess.run([kinstr, "cover", "--json", "-c", f"{workload} {n}"] + funcs,
                             capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(f"kinstr cover failed ({out.returncode}): {out.stderr.strip()}")
    doc = json.loads(out.stdout)
    cover.after = {(f["function"], b["offset"]) for f in doc["functions"] for b in f["counts"]
                   if b.get("counted_after")}
    return {(f["function"], b["offset"]): b["count"] for f in doc["functions"] for b in f["counts"]}


def counted_after(kinstr, globs):
    """The functions the globs match whose copies count a block after a native run."""
    out = subprocess.run([kinstr, "cover", "--dry-run", "--json"] + globs, capture_output=True, text=True,
                         check=False)
    if out.returncode:
        sys.exit(f"kinstr cover --dry-run failed ({out.returncode}): {out.stderr.strip()}")
    return [f["function"] for f in json.loads(out.stdout)["functions"] if f.get("counted_after")]


def kprobes(workload, blocks, n):
    """Hits per block from kprobe events, in one run of the workload; blocks kprobes refuse are left out."""
    write_tr(f"{TR}/kprobe_events", "")
    names = {}
    for i, (fn, off) in enumerate(blocks):
        name = f"kc{i}"
        try:
            write_tr(f"{TR}/kprobe_events", f"p:kcov/{name} {fn}+{off}\n", append=True)
        except OSError as e:
            if not names and not getattr(kprobes, "said", False):
                print(f"kprobe refused: {fn}+{off}: {e}", file=sys.stderr)
                kprobes.said = True
            continue
        names[name] = (fn, off)
    write_tr(f"{TR}/events/kcov/enable", "1")
    pid = os.posix_spawn(workload, [workload, str(n)], os.environ)
    _, status = os.waitpid(pid, 0)
    write_tr(f"{TR}/events/kcov/enable", "0")
    if status:
        sys.exit(f"workload failed: {status}")
    hits = {}
    with open(f"{TR}/kprobe_profile") as f:
        for line in f:
            parts = line.split()
            name = parts[0].split("/")[-1]
            if name in names:
                hits[names[name]] = int(parts[1])
    write_tr(f"{TR}/kprobe_events", "")
    return hits


def main():
    args, na, nb, after = sys.argv[1:], 1000, 2000, False
    while args and args[0].startswith("--"):
        if args[0] == "--n":
            na, nb = (int(v) for v in args[1].split(","))
            args = args[2:]
        elif args[0] == "--counted-after":
            after, args = True, args[1:]
        else:
            sys.exit(f"unknown option {args[0]}")
    kinstr, workload, funcs = args[0], args[1], args[2:]
    if after:
        funcs = counted_after(kinstr, funcs)
        print(f"functions with blocks counted after a native run {len(funcs)}")
        if not funcs:
            sys.exit("no function of those globs counts a block after a native run")
    c1 = cover(kinstr, workload, funcs, na)
    c2 = cover(kinstr, workload, funcs, nb)
    blocks = sorted(c1)
    k1 = kprobes(workload, blocks, na)
    k2 = kprobes(workload, blocks, nb)
    compared, bad = 0, []
    for b in blocks:
        if b not in k1 or b not in k2:
            continue
        compared += 1
        dc, dk = c2[b] - c1[b], k2[b] - k1[b]
        if dc != dk:
            bad.append(f"{b[0]}+0x{b[1]:x}: cache {dc} kprobe {dk}")
    ran = sum(1 for b in blocks if c2[b] - c1[b] > 0)
    print(f"blocks {len(blocks)} compared {compared} ran {ran} mismatches {len(bad)}")
    if after:
        ca = [b for b in blocks if b in cover.after and b in k1 and b in k2]
        print(f"counted after compared {len(ca)} ran {sum(1 for b in ca if c2[b] - c1[b] > 0)}")
    for line in bad[:20]:
        print("mismatch", line)
    entry = [c2[b] - c1[b] for b in blocks if b[0] == "__x64_sys_getppid"]
    print(f"getppid first block difference {entry[0] if entry else None}")


if __name__ == "__main__":
    main()
