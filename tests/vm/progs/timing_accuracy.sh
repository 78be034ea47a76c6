#!/bin/sh
# The profile accuracy test (profile.t): time the test module's functions with kinstr profile
# and compare with the module's own clock (check_timing.py).
#
# A window's sum is only as steady as the host: one stall of the emulated CPU inside a probe
# (outside kinstr's window, inside the module's) moves a 100 us x 100 sum by more than 10%,
# while a stall inside a busy-wait is absorbed. So each comparison gets up to three runs; a run
# that fails is printed with an "attempt N:" prefix and the next one decides. A systematic
# error fails all three.
R=/sys/kernel/debug/kinstr_test
P=tests/vm/progs/check_timing.py
K=build/kinstr

# attempt NAME CMD...: run CMD (a profile run and its check) up to three times
attempt() {
	name=$1
	shift
	for a in 1 2 3; do
		if "$@" > /tmp/attempt.txt 2>&1; then
			cat /tmp/attempt.txt
			echo "$name: ok on attempt $a"
			return 0
		fi
		sed "s/^/attempt $a: /" /tmp/attempt.txt
	done
	echo "$name: failed 3 attempts"
	return 1
}

busy() {
	$K profile --json -o /tmp/b.json -c "sh -c 'echo busy 200 > $R/run'" kinstr_test_busy &&
		python3 $P busy /tmp/b.json $R/last > /tmp/busy.txt && cat /tmp/busy.txt
}
outer() {
	$K profile --json -o /tmp/o.json -c "sh -c 'echo outer 100 > $R/run'" kinstr_test_outer kinstr_test_inner &&
		echo "rc=0" && python3 $P outer /tmp/o.json $R/last "$c"
}
split() {
	$K profile --calls --json -o /tmp/c.json -c "sh -c 'echo outer 100 > $R/run'" kinstr_test_outer kinstr_test_inner &&
		python3 $P outer /tmp/c.json $R/last "$c" split
}
sleeper() {
	$K profile --json -o /tmp/s.json -c "sh -c 'echo sleep 10 > $R/run'" kinstr_test_sleep &&
		python3 $P sleep /tmp/s.json $R/last "$c"
}

# The calibration is a window sum too: one stall inside a probe inflates it, and an inflated
# cost then fails every attempt. A stall can only add, so the least of three runs is the cost.
: > /tmp/costs.txt
for a in 1 2 3; do
	busy > /tmp/busy_out.txt || { cat /tmp/busy_out.txt; echo "busy run failed"; exit 1; }
	sed 's/^probe cost /calibration: /' /tmp/busy_out.txt
	sed -n 's/^probe cost //p' /tmp/busy.txt >> /tmp/costs.txt
done
c=$(sort -n /tmp/costs.txt | head -1)
[ -n "$c" ] || { echo "busy run failed"; exit 1; }
echo "probe cost $c"
st=0
attempt outer outer || st=1
attempt split split || st=1
attempt sleep sleeper || st=1
exit $st
