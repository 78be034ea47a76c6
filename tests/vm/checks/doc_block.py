#!/usr/bin/python3
"""Print code block N (from 1) of a Markdown file as a shell script, for the tests that run the
documentation's examples (tests/vm/tests/docs.t; tests/unit/test_doc_examples.sh checks that every
block with a kinstr command is run by one).

  doc_block.py FILE N [--prompt] [--skip REGEX] [--list]

Blocks are fenced (```) or indented by four spaces, numbered in order. --prompt keeps only the lines
with a root prompt ("# kinstr ...", the prompt taken off): blocks that show a command and its output.
--skip drops the lines matching REGEX (a GUI, say). kinstr at a command's start becomes the source
tree's build/kinstr, by its absolute path (the tests run from the tree, and a block may cd elsewhere). --list prints each block's number, first line and whether it
holds a kinstr command, and nothing else.
"""
import argparse
import os
import re
import sys

CMD = re.compile(r"^(?:# )?(?:build/)?kinstr\s")
# the tree's CLI, by its absolute path: a block may cd elsewhere
KINSTR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "build", "kinstr"))


def blocks(path):
    out, cur, fenced = [], None, False
    for line in open(path).read().split("\n"):
        if line.startswith("```"):
            if fenced:
                out.append(cur)
                cur, fenced = None, False
            else:
                if cur is not None:
                    out.append(cur)
                cur, fenced = [], True
            continue
        if fenced:
            cur.append(line)
        elif line.startswith("    ") or (cur is not None and line.strip() == ""):
            if cur is None:
                if line.strip() == "":
                    continue
                cur = []
            cur.append(line[4:])
        elif cur is not None:
            out.append(cur)
            cur = None
    if cur is not None:
        out.append(cur)
    return [[l for l in b] for b in out if any(l.strip() for l in b)]


def has_kinstr(block):
    return any(CMD.match(l.strip()) for l in block)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("n", type=int, nargs="?")
    ap.add_argument("--prompt", action="store_true")
    ap.add_argument("--skip")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    bs = blocks(a.file)
    if a.list:
        for i, b in enumerate(bs, 1):
            print(i, "kinstr" if has_kinstr(b) else "-", b[0][:70])
        return 0
    if not a.n or not 1 <= a.n <= len(bs):
        print(f"doc_block.py: {a.file} has {len(bs)} code blocks, not {a.n}", file=sys.stderr)
        return 2
    for l in bs[a.n - 1]:
        if a.prompt:
            if not l.startswith("# "):
                continue
            l = l[2:]
        if a.skip and re.search(a.skip, l):
            continue
        print(re.sub(r"(^|[;&|(]\s*)kinstr\s", lambda m: m.group(1) + KINSTR + " ", l))
    return 0


sys.exit(main())
