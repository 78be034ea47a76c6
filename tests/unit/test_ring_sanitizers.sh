#!/usr/bin/env bash
# The ring buffer's host test (tests/unit/test_ring.c + ring/ring.c) under ThreadSanitizer and under
# AddressSanitizer + UndefinedBehaviorSanitizer, built with clang-14 into build/ring/. Prints one line each:
#   PASS ring_tsan / ring_asan_ubsan     FAIL ...: what broke (log build/ring/*.log)
#   SKIP ...: only when clang-14 or its sanitizer runtimes are missing (Debian: clang-14 libclang-rt-14-dev)
# KR_STRESS_MS (default 500 here) sets each stress run's length; the whole script takes well under 60 s.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

cc=${RING_CC:-$(command -v clang-14 || command -v clang || echo clang-14)}
out=build/ring
mkdir -p "$out"
export KR_STRESS_MS=${KR_STRESS_MS:-500}
flags=(-O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -Itests/unit
	-pthread)
sym=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -n1)
[ -n "$sym" ] && export TSAN_SYMBOLIZER_PATH="$sym" ASAN_SYMBOLIZER_PATH="$sym"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=1"
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=0 exitcode=67"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
fail=0

run() { # name sanitizer-flags
	local name=$1 san=$2 bin=$out/test_ring_$1 log=$out/$1.log probe=$out/probe_$1
	if ! command -v "$cc" >/dev/null 2>&1; then
		echo "SKIP $name: no clang-14 (Debian: apt-get install clang-14 libclang-rt-14-dev)"
		return
	fi
	if ! printf 'int main(void) { return 0; }\n' | "$cc" $san -x c - -o "$probe" >"$probe.log" 2>&1; then
		echo "SKIP $name: $cc cannot link $san ($(grep -m1 -iE 'error|cannot|not found' "$probe.log" ||
			head -n1 "$probe.log"); Debian: apt-get install libclang-rt-14-dev)"
		return
	fi
	if ! "$cc" "${flags[@]}" $san -o "$bin" tests/unit/test_ring.c ring/ring.c >"$log" 2>&1; then
		echo "FAIL $name: build failed (log $log)"
		sed 's/^/  /' "$log" | head -n 20
		fail=1
		return
	fi
	local t0=$SECONDS
	timeout --kill-after=5 120 "$bin" >"$log" 2>&1
	local rc=$? cases bad
	cases=$(grep -c '^PASS ' "$log")
	bad=$(grep -m1 -E '^FAIL |WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error|ERROR: LeakSanitizer' "$log")
	if [ $rc -eq 0 ] && [ -z "$bad" ] && [ "$cases" -gt 0 ]; then
		echo "PASS $name: $cases cases clean in $((SECONDS - t0)) s"
	else
		[ -n "$bad" ] || bad="exit $rc"
		[ $rc -eq 124 ] || [ $rc -eq 137 ] && bad="hung past 120 s"
		echo "FAIL $name: $bad (log $log)"
		grep -E -A14 '^FAIL |WARNING: ThreadSanitizer|==ERROR|runtime error' "$log" | head -n 30 | sed 's/^/  /'
		fail=1
	fi
}

run ring_tsan "-fsanitize=thread"
run ring_asan_ubsan "-fsanitize=address,undefined -fno-sanitize-recover=undefined"
exit $fail
