#!/usr/bin/env python3
"""One-shot coverage against the code cache (cover.t, issue 15).

cover_once.py KINSTR WORKLOAD FUNC...: `kinstr cover --json` (the cache's counts) and `kinstr
cover --once --json` (a probe per block, each taken out after its first hit) on the same
workload; prints how many probed blocks agree on hit or not, and how many probes were still in
at the end against the probed blocks that never ran.
"""
import json
import subprocess
import sys


def run(kinstr, workload, funcs, once):
    cmd = [kinstr, "cover", "--json", "-c", f"{workload} 300"] + (["--once"] if once else []) + funcs
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    kinstr, workload, funcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    cache = run(kinstr, workload, funcs, False)
    once = run(kinstr, workload, funcs, True)
    ran = {(f["function"], b["offset"]): b["count"] > 0 for f in cache["functions"] for b in f["counts"]}
    probed = {(f["function"], b["offset"]): bool(b["hit"]) for f in once["functions"] for b in f["counts"]
              if b["probed"]}
    same = sum(1 for b in probed if b in ran and ran[b] == probed[b])
    differ = [b for b in probed if b not in ran or ran[b] != probed[b]]
    never = sum(1 for b in probed if not probed[b])
    print(f"blocks {len(ran)} probed {len(probed)} hit {sum(probed.values())} same {same} differ {len(differ)}")
    for b in differ[:10]:
        print(f"differ {b[0]}+0x{b[1]:x}: cache {ran.get(b)} once {probed[b]}")
    print(f"probes {once['probes']} taken out {once['disarmed']} left {once['left']} never hit {never}")


if __name__ == "__main__":
    main()
