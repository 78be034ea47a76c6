#!/bin/sh
# span.t: kinstr span from the test module's kinstr_test_inner (a 100 us busy-wait) and
# kinstr_test_outer (1 ms + inner) to their returns, over "outer 100", against the module's own
# clock (local_clock() around each call; the span reads the same clock: --clock local). Every
# call one span, nothing unmatched or lost, the mean within 10% once the probes' own cost is
# allowed for: the module's window holds both probes, kinstr's about one less, so that cost is
# measured first, as profile.t does, from kinstr_test_busy alone (100 us, "busy 100": module
# mean - span mean). As in profile.t, a stall of the emulated CPU inside the module's window
# but outside kinstr's can move a sum, so each check gets up to three runs.
R=/sys/kernel/debug/kinstr_test
K=build/kinstr

check() {	# FUNC FIELD CMD
	$K span --json --clock local -c "sh -c 'echo $3 > $R/run'" "$1" "$1%return" > /tmp/sp.json || return 1
	python3 - "$1" "$2" "$R/last" "${cost:-}" <<'PY'
import json, re, sys
d = json.load(open("/tmp/sp.json"))
m = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", open(sys.argv[3]).read())}
calls, want, got = m["calls"], m[sys.argv[2]] / m["calls"], d["total"]["mean_ns"]
print(f"{sys.argv[1]}: {d['total']['count']} spans, {calls} calls; mean {got / 1e3:.1f} us, module {want / 1e3:.1f} us;"
      f" unmatched {d['unmatched_starts']} starts {d['unmatched_stops']} stops; lost {d['lost']}")
if not sys.argv[4]:  # the calibration: the probes' cost per span
    print(f"probe cost {max(0, want - got):.0f}")
    sys.exit(0 if d["total"]["count"] == calls else 1)
cost = float(sys.argv[4])
ok = (d["total"]["count"] == calls and abs(got + cost - want) <= 0.1 * want and d["unmatched_starts"] == 0
      and d["unmatched_stops"] == 0 and d["lost"] == 0 and len(d["keys"]) == 1)
sys.exit(0 if ok else 1)
PY
}

attempt() {	# FUNC FIELD CMD
	for a in 1 2 3; do
		if check "$1" "$2" "$3" > /tmp/attempt.txt 2>&1; then
			cat /tmp/attempt.txt
			echo "$1: ok on attempt $a"
			return 0
		fi
		sed "s/^/attempt $a: /" /tmp/attempt.txt
	done
	echo "$1: failed 3 attempts"
	return 1
}

# The calibration is a window sum too: one stall inside a probe inflates it, and an inflated
# cost then fails every attempt. A stall can only add, so the least of three runs is the cost.
cost=
: > /tmp/costs.txt
for a in 1 2 3; do
	check kinstr_test_busy total_ns "busy 100" > /tmp/busy.txt || { cat /tmp/busy.txt; echo "busy run failed"; exit 1; }
	sed 's/^probe cost /calibration: /' /tmp/busy.txt
	sed -n 's/^probe cost //p' /tmp/busy.txt >> /tmp/costs.txt
done
cost=$(sort -n /tmp/costs.txt | head -1)
echo "probe cost $cost"
st=0
attempt kinstr_test_inner inner_ns "outer 100" || st=1
attempt kinstr_test_outer outer_ns "outer 100" || st=1
exit $st
