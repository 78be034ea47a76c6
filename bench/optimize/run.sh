#!/bin/sh
# In the guest (bench/run-optimize): vfs_read's ns per pread64 call in ROUNDS rounds of (original,
# copy in the original order, re-laid copy) in one run, each the best of R runs of N calls, then
# the medians; then the layout's taken branches per call, predicted and measured by a second,
# separate cover --edges run (bench/optimize/taken.py).
set -e
insmod kmod/kinstr.ko
P=build/bench/pread_time
N=${N:-200000} R=${R:-5} ROUNDS=${ROUNDS:-3}
WORK="$P 20000 1"
echo "kernel $(uname -r) icount ${KINSTR_ICOUNT:-0} function $FN: ns per pread64 call (best of $R runs of $N; under icount: instructions)"
build/kinstr optimize --dry-run --json -c "$WORK" "$FN" > /tmp/layout.json
: > /tmp/a; : > /tmp/o; : > /tmp/l
r=0
while [ $r -lt "$ROUNDS" ]; do
	a=$($P "$N" "$R")
	o=$(build/kinstr optimize --original-order -c "$WORK" --while "$P $N $R" "$FN" 2>/dev/null | tail -n1)
	l=$(build/kinstr optimize -c "$WORK" --while "$P $N $R" "$FN" 2>/dev/null | tail -n1)
	echo "round $r: original $a | copy in the original order $o | re-laid copy $l"
	echo "$a" >> /tmp/a; echo "$o" >> /tmp/o; echo "$l" >> /tmp/l
	r=$((r + 1))
done
med() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ma=$(med /tmp/a) mo=$(med /tmp/o) ml=$(med /tmp/l)
echo "median: original $ma | copy in the original order $mo ($(echo "$mo $ma" | awk '{printf "%.3f", $1/$2}')x) | re-laid copy $ml ($(echo "$ml $ma" | awk '{printf "%.3f", $1/$2}')x; $(echo "$ml $mo" | awk '{printf "%.3f", $1/$2}')x the original-order copy)"
build/kinstr cover --edges --json -c "$WORK" "$FN" > /tmp/edges.json 2>/dev/null
python3 bench/optimize/taken.py /tmp/layout.json /tmp/edges.json
