#!/usr/bin/env bash
# Every code block of README.md, docs/*.md and examples/README.md that holds a kinstr command is run
# by a VM test (tests/vm/tests/*.t: 'doc_block.py FILE N', tests/vm/tests/docs.t), which checks that
# its output shows what the text says; or it is one of the few named here that are not runnable
# examples (a synopsis, a run's saved output, a build step), each with its reason. A block added
# to the docs without a test, or a test pointing at a block that no longer holds a command (the
# docs' blocks renumbered), fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
exec python3 - <<'EOF2'
import glob, re, subprocess, sys

# (file, block): why it is not run
NOT_RUN = {
    ("docs/case-study-gilk.md", 2): "a saved run's output (bench/gilk prints it; the case study's numbers)",
    ("docs/prometheus.md", 1): "the synopsis of kinstr serve",
    ("examples/README.md", 1): "make examples, a build step ('make all' builds the examples)",
    ("README.md", 2): "building and installing the Debian packages on one's own machine: install.t runs its steps in "
                      "the 6.1 and 6.12 guests (make deb's packages, apt install, DKMS, modprobe, doctor, a count)",
}
files = ["README.md"] + sorted(glob.glob("docs/*.md")) + ["examples/README.md"]
with_cmd = set()
for f in files:
    out = subprocess.run(["python3", "tests/vm/checks/doc_block.py", f, "--list"], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        n, kind = line.split()[:2]
        if kind == "kinstr":
            with_cmd.add((f, int(n)))
run = {}
for t in sorted(glob.glob("tests/vm/tests/*.t")):
    for m in re.finditer(r"doc_block\.py\s+(\S+)\s+(\d+)", open(t).read()):
        run.setdefault((m.group(1), int(m.group(2))), t)
fails = 0
missing = sorted(b for b in with_cmd if b not in run and b not in NOT_RUN)
stale = sorted(b for b in list(run) + list(NOT_RUN) if b not in with_cmd)
ok = not missing
print(f"{'PASS' if ok else 'FAIL'} doc_examples_run: {len(with_cmd)} blocks with a kinstr command, "
      f"{len([b for b in with_cmd if b in run])} run by a VM test, {len([b for b in with_cmd if b in NOT_RUN])} named "
      f"as not runnable" + (f"; run by no test: {missing}" if missing else ""))
fails += not ok
print(f"{'PASS' if not stale else 'FAIL'} doc_examples_current: every block a test or this list names holds a kinstr "
      f"command" + (f"; not: {stale} (renumbered?)" if stale else ""))
fails += bool(stale)
sys.exit(1 if fails else 0)
EOF2
