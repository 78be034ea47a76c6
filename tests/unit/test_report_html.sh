#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kinstr report --html in a real browser: the page made from saved outputs of real runs
# (tests/data/report/) opens in headless Chromium (Debian's chromium) with no console message, with
# the network cut (every request through a proxy that does not exist, and the page names no URL);
# the DOM it builds is read back: the flame graph's frame of kinstr_test_inner has the width share
# its samples give it in the folded file, each histogram as many bars as the profile JSON has
# non-empty buckets, the stack file's flame graph its frames, the cover JSON's functions their
# blocks (hit or not as the JSON says), the trace's time line a lane per CPU and a count per probe
# equal to what babeltrace2 reads from the same trace; a screenshot is kept in build/tests/report/. Inputs that are neither JSON nor folded stacks are refused.
# Run from the top of the tree after the build.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=build/tests/report
mkdir -p "$out"
fail=0
pass() { echo "PASS $1${2:+: $2}"; }
failed() { echo "FAIL $1: $2"; fail=1; }
chrome=$(command -v chromium || command -v chromium-browser) || { failed chromium "no chromium (scripts/setup installs it)"; exit 1; }
d=tests/data/report
html=$PWD/$out/report.html
if ! build/kinstr report --html "$html" --title "test module" $d/profile.json $d/profile.folded $d/stacks.folded \
	$d/cover.json $d/trace 2>"$out/err"; then
	failed write "$(cat "$out/err")"
	exit 1
fi
# no URL the page could fetch: everything inline
if grep -Eq '(src|href)="(https?:)?//' "$html"; then failed offline "the page references a URL"; else pass offline "no src/href URL in $(wc -c <"$html") bytes"; fi
run_chrome() {	# ARGS...: headless, no network, logs to $out/chrome.log
	"$chrome" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$out/profile" \
		--proxy-server=http://127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
		--enable-logging=stderr --log-level=0 --window-size=1280,1000 --virtual-time-budget=5000 "$@" 2>>"$out/chrome.log"
}
# the console check can fail: a page that logs an error is caught
printf '<html><body><script>console.error("kinstr-test-error")</script></body></html>' >"$out/console.html"
: >"$out/chrome.log"
run_chrome --dump-dom "file://$PWD/$out/console.html" >/dev/null
grep -q 'INFO:CONSOLE.*kinstr-test-error' "$out/chrome.log" && pass console_check_catches "an error a page logs is seen" ||
	failed console_check_catches "chromium's log did not show a page's console.error"
: >"$out/chrome.log"
run_chrome --dump-dom "file://$html" >"$out/dom.html"
run_chrome --screenshot="$PWD/$out/report.png" "file://$html" >/dev/null
if grep -q 'INFO:CONSOLE' "$out/chrome.log"; then
	failed console "$(grep 'INFO:CONSOLE' "$out/chrome.log" | head -3)"
else
	pass console "no console message"
fi
[ -s "$out/report.png" ] && pass screenshot "$out/report.png" || failed screenshot "none written"
babeltrace2 $d/trace >"$out/bt2.txt" 2>"$out/bt2.err" || failed babeltrace2 "$(head -n1 "$out/bt2.err")"
python3 - "$out/dom.html" $d "$out/bt2.txt" <<'PY'
import collections, json, re, sys
dom, d = open(sys.argv[1]).read(), sys.argv[2]
def out(ok, name, why):
    print(("PASS " if ok else "FAIL ") + name + ": " + why)
out('data-rendered="yes"' in dom, "rendered", "the drawing code ran to its end")
# the flame graph of profile.folded: its frames' width shares against the file's samples
folded = [l.rsplit(" ", 1) for l in open(f"{d}/profile.folded").read().split("\n") if l.strip()]
total = sum(int(n) for _, n in folded)
inner = sum(int(n) for s, n in folded if s.split(";")[-1] == "kinstr_test_inner")
frames = re.findall(r'<g [^>]*width="([0-9.]+)"[^>]*name="([^"]*)" class="frame"', dom)
first = re.search(r'data-source="profile.folded".*?</section>', dom, re.S)
fr = re.findall(r'<g [^>]*width="([0-9.]+)"[^>]*name="([^"]*)" class="frame"', first.group(0)) if first else []
w = {n: float(x) for x, n in fr}
share = w.get("kinstr_test_inner", 0) / w["all"] if w.get("all") else 0
out(abs(share - inner / total) < 0.005, "flame_width_share",
    f"kinstr_test_inner {share:.4f} of the graph, {inner}/{total} = {inner / total:.4f} in the file")
out(abs(w.get("kinstr_test_outer", 0) - w.get("all", -1)) < 0.01, "flame_root", "kinstr_test_outer spans the whole graph")
# each histogram: as many bars as non-empty buckets
prof = json.load(open(f"{d}/profile.json"))
for f in prof["functions"]:
    want = sum(1 for c in f["hist_log2_ns"] if c)
    m = re.search(r'<div class="hist" data-name="%s" data-bars="(\d+)">(.*?)</div>' % re.escape(f["function"]), dom, re.S)
    bars = len(re.findall(r'<rect class="bar"', m.group(2))) if m else -1
    out(bars == want, f"histogram_{f['function']}", f"{bars} bars drawn, {want} non-empty buckets")
# the stack file: every frame of it in its graph
st = re.search(r'data-source="stacks.folded".*?</section>', dom, re.S)
names = set(re.findall(r'name="([^"]*)" class="frame"', st.group(0))) if st else set()
want = {f for l in open(f"{d}/stacks.folded") if l.strip() for f in l.rsplit(" ", 1)[0].split(";")}
out(want <= names, "flame_stacks", f"{len(want & names)} of the file's {len(want)} frames drawn")
# the coverage view: per function as many cells as blocks, the hit ones those the JSON counts
cov = json.load(open(f"{d}/cover.json"))
sec = re.search(r'data-source="cover.json".*?</section>', dom, re.S)
sec = sec.group(0) if sec else ""
for f in cov["functions"]:
    m = re.search(r'<div class="cover-fn" data-function="%s" data-blocks="(\d+)" data-covered="(\d+)">(.*?)</div></div>'
                  % re.escape(f["function"]), sec, re.S)
    cells = re.findall(r'<span class="block (\w+)" data-offset="(\d+)" data-hit="(\d)" data-count="(\d+)"', m.group(3)) if m else []
    hit = {int(o) for k, o, h, c in cells if k == "hit"}
    want = {b["offset"] for b in f["counts"] if b.get("count", b.get("hit", 0)) > 0}
    out(m is not None and int(m.group(1)) == f["blocks"] == len(cells) and int(m.group(2)) == f["covered"] and hit == want,
        f"cover_{f['function']}", f"{len(cells)} cells, {len(hit)} hit; the JSON: {f['blocks']} blocks, {f['covered']} covered")
# the time line: each CPU's lane and each probe's count as babeltrace2 reads the trace, a tick per event
bt = [re.search(r'\s(\S+): \{ cpu_id = (\d+) \}', l) for l in open(sys.argv[3])]
bt = [m.groups() for m in bt if m]
per_cpu = collections.Counter(int(c) for _, c in bt)
per_ev = collections.Counter(e for e, _ in bt)
sec = re.search(r'data-source="trace".*?</section>', dom, re.S)
sec = sec.group(0) if sec else ""
tl = re.search(r'<div class="timeline" data-trace="trace" data-events="(\d+)" data-shown="(\d+)" data-cpus="(\d+)">', sec)
lanes = {int(c): int(n) for c, n in re.findall(r'<g class="lane" data-cpu="(\d+)" data-events="(\d+)"', sec)}
legend = {e: int(n) for e, n in re.findall(r'<span class="legend-item" data-class="([^"]*)" data-events="(\d+)"', sec)}
ticks = len(re.findall(r'<rect class="ev"', sec))
out(tl is not None and int(tl.group(1)) == len(bt) > 0, "timeline_events",
    f"{tl.group(1) if tl else 'no time line'} events, babeltrace2 {len(bt)}")
out(lanes == dict(per_cpu), "timeline_lanes", f"lanes {sorted(lanes.items())}, babeltrace2 {sorted(per_cpu.items())}")
out(legend == dict(per_ev), "timeline_probes", f"legend {sorted(legend.items())}, babeltrace2 {sorted(per_ev.items())}")
out(tl is not None and ticks == int(tl.group(2)) == len(bt), "timeline_ticks", f"{ticks} ticks drawn for {len(bt)} events")
PY
[ $? -eq 0 ] || fail=1
# a file that is neither: refused, nothing written
printf 'hello\n' >"$out/bad.txt"
if build/kinstr report --html "$out/bad.html" "$out/bad.txt" 2>"$out/err"; then
	failed refuse "accepted a text file"
elif grep -q "^kinstr: bad.txt: neither kinstr's JSON nor folded stacks" "$out/err" && [ ! -e "$out/bad.html" ]; then
	pass refuse "$(cat "$out/err")"
else
	failed refuse "$(cat "$out/err")"
fi
exit $fail
