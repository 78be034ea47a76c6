#!/usr/bin/env bash
# The VM harness's planning, on the host: which tests a suite runs (SMOKE, ONCE, KERNEL, -k) as
# tests/vm/guest-runner decides it, and how tests/runner.py splits a full suite into parts.
# One line per case: PASS name / FAIL name: why.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
check() {	# NAME GOT WANT
	if [ "$2" = "$3" ]; then echo "PASS $1"; else echo "FAIL $1: got '$2', want '$3'"; fail=1; fi
}

cat > "$d/a.t" <<'T'
NAME plain
RUN echo plain-ran

NAME smoke one
SMOKE
RUN echo smoke-ran

NAME once one
ONCE
RUN echo once-ran

NAME once and smoke
ONCE
SMOKE
RUN echo both-ran

NAME another series
KERNEL 9.99
RUN echo never
T
# runs the guest runner on the host with ENV...: the planned names, then each test's status
plan() {
	env KINSTR_TEST_KMSG="$d/kmsg" "$@" /usr/bin/python3 tests/vm/guest-runner "$d/r.jsonl" "$d/a.t" > /dev/null 2>&1
	python3 -c 'import json,sys; L=[json.loads(l) for l in open(sys.argv[1])]; \
		print("|".join(L[0]["planned"]) + " / " + " ".join(r["status"] for r in L[1:]))' "$d/r.jsonl"
}
check once_planned_by_default "$(plan)" \
	"plain|smoke one|once one|once and smoke|another series / pass pass pass pass skip"
check once_planned_in_first_full "$(plan KINSTR_TEST_ONCE=1)" \
	"plain|smoke one|once one|once and smoke|another series / pass pass pass pass skip"
check once_not_planned_elsewhere "$(plan KINSTR_TEST_ONCE=0)" "plain|smoke one|another series / pass pass skip"
check smoke_suite "$(plan KINSTR_TEST_SUITE=smoke KINSTR_TEST_ONCE=0)" "smoke one / pass"
check filter_after_once "$(plan KINSTR_TEST_ONCE=0 KINSTR_TEST_FILTER='once')" " / "
check markers_written "$(grep -c '^kinstr-test: begin' "$d/kmsg")" 14

# the split, for each series: every file once, analysis.t in the first part, every file weighed, and
# the two parts at least as even as the greedy split (heaviest first to the lighter part) makes them
out=$(python3 - <<'P'
import sys
sys.argv = ["runner"]
sys.path.insert(0, "tests")
import runner
files = runner.vm_files()
res = []
for series in ("6.1", "6.12"):
    w = runner.measured_weights(series)
    parts = runner.split_files(files, 2, series)
    flat = sorted(f for p in parts for f in p)
    sums = [sum(w.get(f.split("/")[-1], 0) for f in p) for p in parts]
    # the greedy split (heaviest first to the lighter part) as the bar to meet
    g = [0.0, 0.0]
    for f in sorted(files, key=lambda f: (not f.endswith("/analysis.t"), -w.get(f.split("/")[-1], 0))):
        g[0 if f.endswith("/analysis.t") else g.index(min(g))] += w.get(f.split("/")[-1], 0)
    ok = [flat == sorted(files), any(f.endswith("/analysis.t") for f in parts[0]),
          all(f.split("/")[-1] in w for f in files), abs(sums[0] - sums[1]) <= abs(g[0] - g[1])]
    res.append(series + (":ok" if all(ok) else f":bad {ok} {sums} greedy {g}"))
print(" ".join(res))
P
)
check split "$out" "6.1:ok 6.12:ok"
exit $fail
