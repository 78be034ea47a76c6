#!/bin/sh
# The shipped snapshot of live kernel functions classifies exactly as the live kernel did.
cd "$(dirname "$0")/../.." || exit 1
globs=$(cat tests/data/sample.globs)
n=0
for snap in tests/data/sample-*.snap; do
	[ -e "$snap" ] || continue
	n=$((n + 1))
	rel=${snap#tests/data/sample-}; rel=${rel%.snap}
	want=tests/data/sample-$rel.sites.json
	got=$(build/kinstr sites --json --snapshot "$snap" "$globs" 2>&1)
	if [ "$got" = "$(cat "$want")" ]; then
		echo "PASS snapshot_$rel: host classification equals the live kernel's"
	else
		echo "FAIL snapshot_$rel: host classification differs from the live kernel's:"
		echo "  live: $(cat "$want")"
		echo "  host: $got"
	fi
	bad=$(build/kinstr sites --snapshot tests/data/README.md --all 2>&1 >/dev/null)
	case "$bad" in
	*"not a kinstr snapshot"*) echo "PASS snapshot_rejects_garbage" ;;
	*) echo "FAIL snapshot_rejects_garbage: $bad" ;;
	esac
	trunc=$(mktemp)
	head -c 20000 "$snap" >"$trunc"
	bad=$(build/kinstr sites --snapshot "$trunc" --all 2>&1 >/dev/null; echo "rc=$?")
	rm -f "$trunc"
	case "$bad" in
	*"cannot read snapshot"*"rc=1") echo "PASS snapshot_rejects_truncated" ;;
	*) echo "FAIL snapshot_rejects_truncated: $bad" ;;
	esac
done
[ $n -gt 0 ] || echo "FAIL snapshot: no tests/data/sample-*.snap"
