#!/usr/bin/python3
"""Split the functions matching GLOBS into groups whose every jump site fits one batch of probes
(--budget; the module's batch holds 4096), counting each function's jump sites as
'kinstr count --every --dry-run' plans them (one dry run for all). Prints one group per line;
exit 1 when fewer than --min functions have a jump site."""
import argparse
import collections
import json
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("globs")
ap.add_argument("--budget", type=int, default=4000)
ap.add_argument("--min", type=int, default=200)
a = ap.parse_args()
ls = json.loads(subprocess.run(["build/kinstr", "-l", "--json", a.globs], capture_output=True, text=True,
                               check=True).stdout)
funcs = [x.get("spec", x["function"]) for x in ls if ".cold" not in x["function"]]
plan = subprocess.run(["build/kinstr", "count", "--every", "--dry-run", *funcs], capture_output=True, text=True)
per = collections.Counter()
for line in plan.stdout.splitlines():
    m = re.match(r"^(\S+?)(\+0x[0-9a-f]+)?\s+(jump|trap|ftrace)\s", line)
    if m:
        per[m.group(1)] += 1
groups, cur, total, n_all = [], [], 0, 0
for f in funcs:
    n = per[f.split("@")[0]]
    if not n or n > a.budget:
        continue
    if total + n > a.budget:
        groups.append(cur)
        cur, total = [], 0
    cur.append(f)
    total += n
    n_all += 1
if cur:
    groups.append(cur)
if n_all < a.min:
    sys.exit(f"batches: only {n_all} functions with a jump site")
for g in groups:
    print(" ".join(g))
print(f"batches: {n_all} functions, {sum(per[f.split('@')[0]] for g in groups for f in g)} jump sites, "
      f"{len(groups)} groups", file=sys.stderr)
