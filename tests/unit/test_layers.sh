#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The module's files, and the library's, call down a DAG: from the built objects (nm), file A calls file B when A
# uses a symbol B defines; no two files may reach each other. Prints the graph's edges. And no subcommand file of
# the CLI (cli/cmd_*.c) calls a function another one defines: what two subcommands need lives in the library or
# in a shared file of cli/ (run.c, kview.c, parse.c, main.c).
# Run from the top of the tree after the build (make all).
set -uo pipefail
cd "$(dirname "$0")/../.."

python3 - <<'EOF'
import glob, os, subprocess, sys

def syms(o):
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    d, u = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRBW":
            d.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            u.add(p[1])
    return d, u

def check(name, pattern, skip):
    objs = sorted(o for o in glob.glob(pattern) if os.path.basename(o) not in skip)
    if len(objs) < 3:
        print("FAIL %s: only %d objects in %s: build first" % (name, len(objs), pattern))
        return False
    s = {os.path.basename(o)[:-2]: syms(o) for o in objs}
    edges = {a: sorted(b for b in s if b != a and s[a][1] & s[b][0]) for a in s}
    # a cycle: depth-first search with colours
    colour, stack, cycle = {}, [], []

    def dfs(a):
        colour[a] = 1
        stack.append(a)
        for b in edges[a]:
            if colour.get(b) == 1 and not cycle:
                cycle.extend(stack[stack.index(b):] + [b])
            elif b not in colour:
                dfs(b)
        stack.pop()
        colour[a] = 2

    for a in sorted(s):
        if a not in colour:
            dfs(a)
    for a in sorted(edges):
        if edges[a]:
            print("     %s -> %s" % (a, " ".join(edges[a])))
    if cycle:
        print("FAIL %s: a cycle: %s" % (name, " -> ".join(cycle)))
        return False
    print("PASS %s: %d files, %d calls between them, no cycle" % (name, len(s), sum(map(len, edges.values()))))
    return True

def subcommands_apart():
    objs = sorted(glob.glob("build/cli/cmd_*.o"))
    if len(objs) < 5:
        print("FAIL cli_subcommands_call_no_other: only %d cmd_*.o: build first" % len(objs))
        return False
    s = {os.path.basename(o)[:-2]: syms(o) for o in objs}
    bad = ["%s calls %s of %s" % (a, " ".join(sorted(s[a][1] & s[b][0])), b)
           for a in sorted(s) for b in sorted(s) if a != b and s[a][1] & s[b][0]]
    if bad:
        print("FAIL cli_subcommands_call_no_other: " + "; ".join(bad))
        return False
    print("PASS cli_subcommands_call_no_other: %d subcommand files, none calls another" % len(s))
    return True

ok = check("kmod_calls_down_a_dag", "kmod/*.o", {"kinstr.o", "kinstr.mod.o"})
ok = check("lib_calls_down_a_dag", "build/lib/*.o", set()) and ok
ok = subcommands_apart() and ok
sys.exit(0 if ok else 1)
EOF
