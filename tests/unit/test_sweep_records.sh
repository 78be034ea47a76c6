#!/usr/bin/env bash
# The sweep records (tests/vm/sweep-records/NAME: a whole-kernel sweep's state and listing, kept in
# the tree so that a sweep longer than a session goes on from any machine): each restores with
# `restore NAME DIR`, and `tests/vm/sweep --summary --out DIR` reads it back, with no kernel
# installed: it names the kernel's functions and the slices' figures, and exits 0 exactly when
# every function was swept in a slice that passed. restore refuses to overwrite a state.
# One line per case: PASS name / FAIL name: why.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0 n=0
for rec in tests/vm/sweep-records/*/; do
	name=$(basename "$rec")
	n=$((n + 1))
	if ! tests/vm/sweep-records/restore "$name" "$d/$name" >/dev/null; then
		echo "FAIL record_$name: restore failed"; fail=1; continue
	fi
	out=$(timeout 120 tests/vm/sweep --summary --out "$d/$name" 2>&1); rc=$?
	lists=$(printf '%s\n' "$out" | grep -E '^sweep: the kernel lists [0-9]+ probeable functions' || true)
	figures=$(printf '%s\n' "$out" | grep -E '^sweep: the slices that passed: .* on [0-9a-f]{7,}' || true)
	total=$(zcat "$rec/listing.txt.gz" | wc -w)
	if [ -z "$lists" ] || [ -z "$figures" ]; then
		echo "FAIL record_$name: the summary lacks the listing or the figures: $out"; fail=1
	elif ! printf '%s\n' "$lists" | grep -q "lists $total probeable"; then
		echo "FAIL record_$name: the summary's listing is not the record's $total functions: $lists"; fail=1
	elif printf '%s\n' "$lists" | grep -qE ': [0-9]+ ok$' && [ $rc -ne 0 ]; then
		echo "FAIL record_$name: every function ok but exit $rc"; fail=1
	elif ! printf '%s\n' "$lists" | grep -qE ': [0-9]+ ok$' && [ $rc -eq 0 ]; then
		echo "FAIL record_$name: not every function ok but exit 0"; fail=1
	elif tests/vm/sweep-records/restore "$name" "$d/$name" >/dev/null 2>&1; then
		echo "FAIL record_$name: restore overwrote a state"; fail=1
	else
		echo "PASS record_$name: ${lists#sweep: }"
	fi
done
if [ $n -eq 0 ]; then
	echo "FAIL sweep_records: no record in tests/vm/sweep-records"; fail=1
fi
exit $fail
