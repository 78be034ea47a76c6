#!/bin/sh
# After the VM suite: the whole-kernel snapshot taken in the guest, classified here on the host,
# gives exactly what the live kernel gave in the guest (no drift between live and test data).
# $1: the suite's job folder (the guest wrote live-sites.json and whole.snap there).
job=$1
name=sites_live_equals_host
if [ ! -s "$job/whole.snap" ] || [ ! -s "$job/live-sites.json" ]; then
	echo "FAIL $name: the guest left no whole.snap/live-sites.json in $job (did the kinstr sites --all VM test run?)"
	exit 0
fi
got=$(build/kinstr sites --all --json --snapshot "$job/whole.snap" 2>&1)
if [ "$got" = "$(cat "$job/live-sites.json")" ]; then
	echo "PASS $name: $(echo "$got" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["functions"], "functions,", d["instructions"], "instructions,", d["jump"], "jump", d["trap"], "trap", d["refused"], "refused")')"
else
	echo "FAIL $name: host classification of the guest's snapshot differs from the live one"
	echo "  live: $(cat "$job/live-sites.json")"
	echo "  host: $got"
fi
