#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# docs/design.md's map names every source file of lib/, kmod/ and cli/ (.c and .S): a file of lib/
# in its folder's lines of the map, a file of kmod/ or cli/ in the map or in its table (by name, or
# by its path below kmod/). Prints PASS, or FAIL with the files it does not name.
set -uo pipefail
cd "$(dirname "$0")/../.."

python3 - <<'PY'
import glob, os, re, sys

doc = open("docs/design.md").read()
a, b = doc.index("## The map"), doc.index("## libkinstr, layer by layer")
m = doc[a:b]
lines = m.split("\n")

def folder_block(prefix):
    """the map's lines from '  prefix/' up to the next folder line"""
    out, on = [], False
    for l in lines:
        if re.match(r"^  ?\S", l):	# a folder's first line (continuations are indented further)
            on = l.startswith("  %s/ " % prefix) or l.startswith("  %s/\t" % prefix)
        if on:
            out.append(l)
    return "\n".join(out)

def named(stem, text):
    return re.search(r"(?<![\w.-])%s(?![\w-])" % re.escape(stem), text) is not None

missing, n = [], 0
for p in sorted(glob.glob("lib/*/*.c") + glob.glob("lib/*/*.S")):
    if p.endswith(".bpf.c"):
        continue
    n += 1
    folder, f = p.split("/")[1], os.path.basename(p)
    stem = f.rsplit(".", 1)[0]
    if not (named(stem, folder_block(folder)) or named(f, folder_block(folder)) or p in doc):
        missing.append(p)
for p in sorted(glob.glob("kmod/*.c") + glob.glob("kmod/*/*.c") + glob.glob("kmod/*/*.S") + glob.glob("cli/*.c") + glob.glob("cli/*/*.c")):
    if p.endswith(".mod.c"):
        continue
    n += 1
    rel = p.split("/", 1)[1]
    # cli's subcommand files as the table names them all: `cmd_*.c`
    glob_named = rel.startswith("cmd_") and "`cmd_*.c`" in m
    if not ("`%s`" % rel in m or named(rel, m) or p in doc or glob_named):
        missing.append(p)
if missing:
    print("FAIL design_map_names_every_file: docs/design.md's map does not name %s" % ", ".join(missing))
    sys.exit(1)
print("PASS design_map_names_every_file: the map names all %d source files of lib/, kmod/ and cli/" % n)
PY
