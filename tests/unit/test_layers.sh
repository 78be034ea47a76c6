#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The layers, read from the built objects (nm): file A calls file B when A uses a symbol B defines.
#  - kmod/, lib/ and cli/ each call down a DAG: no two files reach each other (a cycle fails).
#  - kmod/'s parts are layers too (KMOD_LAYERS: its top's low files, actions/ and check/, patch/,
#    then main and session), with the same rule as lib/'s.
#  - lib/'s folders are layers, bottom to top in LIB_LAYERS: a file calls only its own folder or a folder
#    of a lower layer; an arrow up, or sideways between two folders of one layer, fails. Every folder of
#    lib/ must have a layer.
#  - no subcommand file of the CLI (cli/cmd_*.c) calls a function another one defines: what two
#    subcommands need lives in the library or in a shared file of cli/.
#  - the checks themselves can fail: each is run again on the real graph with a cycle or an upward
#    arrow planted, and must fail there.
# Prints the graphs' edges. Run from the top of the tree after the build (make all kmods): kmod/'s
# objects are those of make kmods' build with each file alone (build/kmod-separate/RELEASE/kmod):
# the module itself is one unit (kmod/all.c), whose object shows no call between files.
set -uo pipefail
cd "$(dirname "$0")/../.."

python3 - <<'EOF'
import glob, os, subprocess, sys

# lib/'s layers, lowest first; folders on one line form one layer (they may not call each other)
LIB_LAYERS = [
    ["base"],                       # what every layer uses: the error report (kinstr_why)
    ["isa"],                        # x86 decoding, relocation
    ["kernel"],                     # the device, the kernel view, BTF, DWARF lines
    ["analysis", "bpf", "trace"],   # CFG and sites; BPF programs; trace writing
    ["plan", "traceread"],          # specs, planning, probes; trace reading
    ["cache"],                      # the code cache
    ["results"],                    # tallies, spans, timing, stacks, lcov, Prometheus
    ["report"],                     # kinstr report
]
RANK = {f: i for i, layer in enumerate(LIB_LAYERS) for f in layer}
# kmod/'s layers, lowest first: folders (NAME/) and the files at kmod/'s top by name
KMOD_LAYERS = [
    ["abi", "compat", "ksym", "limits", "text_end"],  # the ABI's size rules, kernel differences, symbols
    ["actions/", "check/"],                          # what probes do; what may be patched
    ["patch/"],                                      # areas, the protocol, slots, entry stubs
    ["main", "session"],                             # the device, its ioctls, a session's state
]
KRANK = {f.rstrip("/"): i for i, layer in enumerate(KMOD_LAYERS) for f in layer}

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

def graph(s):
    return {a: sorted(b for b in s if b != a and s[a][1] & s[b][0]) for a in s}

def find_cycle(edges):
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

    for a in sorted(edges):
        if a not in colour:
            dfs(a)
    return cycle

def upward(edges, rank=RANK, what="LIB_LAYERS"):
    """the arrows that do not run down the layers: [(a, b, why)]; a node's unit is its folder, or at
    the top its own name (kmod/'s top holds both the lowest files and the highest)"""
    bad = []
    for a in sorted(edges):
        fa = a.split("/")[0]
        for b in edges[a]:
            fb = b.split("/")[0]
            if fa == fb or ("/" not in a and "/" not in b and rank.get(fa) == rank.get(fb)):
                continue
            if fa not in rank or fb not in rank:
                bad.append((a, b, "%s has no layer in %s" % (fa if fa not in rank else fb, what)))
            elif rank[fb] > rank[fa]:
                bad.append((a, b, "runs up from layer %d to %d" % (rank[fa], rank[fb])))
            elif rank[fb] == rank[fa]:
                bad.append((a, b, "runs sideways within layer %d" % rank[fa]))
    return bad

def has_source(o, root, src):
    base = os.path.join(src, os.path.relpath(o, root)[:-2])
    return os.path.exists(base + ".c") or os.path.exists(base + ".S")

def load(pattern, root, skip=(), src=None):
    # BPF programs link nothing; an object whose source is gone (a file split or moved) is stale
    objs = sorted(o for o in glob.glob(pattern, recursive=True)
                  if os.path.basename(o) not in skip and not o.endswith(".bpf.o")
                  and (src is None or has_source(o, root, src)))
    return {os.path.relpath(o, root)[:-2]: syms(o) for o in objs}

def check(name, s, layered=None, quiet=False):
    if len(s) < 3:
        print("FAIL %s: only %d objects: build first" % (name, len(s)))
        return False
    edges = graph(s)
    if not quiet:
        for a in sorted(edges):
            if edges[a]:
                print("     %s -> %s" % (a, " ".join(edges[a])))
    cycle = find_cycle(edges)
    if cycle:
        if not quiet:
            print("FAIL %s: a cycle: %s" % (name, " -> ".join(cycle)))
        return False
    if layered:
        bad = upward(edges, layered[0], layered[1])
        if bad:
            if not quiet:
                print("FAIL %s: %s" % (name, "; ".join("%s -> %s %s" % x for x in bad)))
            return False
    if not quiet:
        print("PASS %s: %d files, %d calls between them, no cycle%s" % (
            name, len(s), sum(map(len, edges.values())),
            ", every arrow down the layers %s" % " < ".join("+".join(l) for l in layered[2]) if layered else ""))
    return True

def subcommands_apart(s):
    cmds = {a: v for a, v in s.items() if a.startswith("cmd_")}
    if len(cmds) < 5:
        print("FAIL cli_subcommands_call_no_other: only %d cmd_*.o: build first" % len(cmds))
        return False
    bad = ["%s calls %s of %s" % (a, " ".join(sorted(cmds[a][1] & cmds[b][0])), b)
           for a in sorted(cmds) for b in sorted(cmds) if a != b and cmds[a][1] & cmds[b][0]]
    if bad:
        print("FAIL cli_subcommands_call_no_other: " + "; ".join(bad))
        return False
    print("PASS cli_subcommands_call_no_other: %d subcommand files, none calls another" % len(cmds))
    return True

def planted(name, s, a, b, layered):
    """the check on s with a call from a to b added must fail"""
    t = {k: (set(v[0]), set(v[1])) for k, v in s.items()}
    sym = sorted(t[b][0])[0]
    t[a][1].add(sym)
    if check(name, t, layered, quiet=True):
        print("FAIL %s_planted: a call %s -> %s (%s) was not caught" % (name, a, b, sym))
        return False
    print("PASS %s_planted: a call %s -> %s (%s) planted in the real graph fails it" % (name, a, b, sym))
    return True

sep = sorted(glob.glob("build/kmod-separate/*/kmod"), key=os.path.getmtime)
kroot = sep[-1] if sep else "build/kmod-separate/RELEASE/kmod"
kmod = load(kroot + "/**/*.o", kroot, {"kinstr.o", "kinstr.mod.o"}, src="kmod")
LIB = (RANK, "LIB_LAYERS", LIB_LAYERS)
KMOD = (KRANK, "KMOD_LAYERS", KMOD_LAYERS)
lib = load("build/lib/**/*.o", "build/lib", src="lib")
cli = load("build/cli/**/*.o", "build/cli", src="cli")
ok = check("kmod_calls_down_its_layers", kmod, layered=KMOD)
ok = check("lib_calls_down_its_layers", lib, layered=LIB) and ok
folders = sorted({a.split("/")[0] for a in lib})
missing = [f for f in folders if f not in RANK]
if missing or any("/" not in a for a in lib):
    print("FAIL lib_every_file_in_a_layer: %s" % (", ".join(missing) or "a file at lib/'s top"))
    ok = False
else:
    print("PASS lib_every_file_in_a_layer: %d folders: %s" % (len(folders), " ".join(folders)))
ok = check("cli_calls_down_a_dag", cli) and ok
ok = subcommands_apart(cli) and ok
# the checks can disagree: a cycle in kmod and cli, an arrow up and one sideways in lib
if all(k in kmod for k in ("main", "check/verify", "actions/hit", "patch/slot", "ksym")):
    ok = planted("kmod_calls_down_its_layers", kmod, "check/verify", "main", KMOD) and ok
    ok = planted("kmod_calls_down_its_layers", kmod, "actions/hit", "check/verify", KMOD) and ok
    ok = planted("kmod_calls_down_its_layers", kmod, "ksym", "patch/slot", KMOD) and ok
else:
    print("FAIL kmod_planted: main, check/verify, actions/hit, patch/slot or ksym not built")
    ok = False
if all(k in lib for k in ("isa/x86", "plan/plan", "trace/ctf", "analysis/cfg")):
    ok = planted("lib_calls_down_its_layers", lib, "isa/x86", "plan/plan", LIB) and ok
    ok = planted("lib_calls_down_its_layers", lib, "analysis/cfg", "trace/ctf", LIB) and ok
else:
    print("FAIL lib_planted: isa/x86, plan/plan, trace/ctf or analysis/cfg not built")
    ok = False
if all(k in cli for k in ("util", "main")):
    ok = planted("cli_calls_down_a_dag", cli, "util", "main", None) and ok
sys.exit(0 if ok else 1)
EOF
