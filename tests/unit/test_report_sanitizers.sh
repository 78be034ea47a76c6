#!/usr/bin/env bash
# 'kinstr report' and the CTF reader (lib/traceread/metadata.c, streams.c) under AddressSanitizer + UndefinedBehavior-
# Sanitizer, over a corpus of corrupted traces. Builds the whole CLI again with clang-14 and
# -fsanitize=address,undefined into build/asan/ (make B=build/asan), writes a valid trace with
# lib/trace/ctf.c and KINSTR_CORPUS_N (default 2500) mutated copies of it (tests/unit/ctf_corpus.c:
# truncations, bit flips, packet fields and metadata numbers set to edge values, dropped metadata
# lines; seed KINSTR_CORPUS_SEED, default fixed), and runs 'kinstr report' on each (and
# 'kinstr report --json', 'kinstr report --html' of the trace's time line and 'kinstr report
# --trace-dat' on every fifth: each sanitized run costs ~30 ms of start-up).
# A clean error exit (1) is fine; any sanitizer report, a crash or another exit status fails.
# Prints one line each:
#   PASS report_asan_build / report_base_trace / report_corpus_clean: N cases ...
#   FAIL ...: what broke (logs in build/asan/)
#   SKIP ...: only when clang-14 or its sanitizer runtimes are missing (Debian: clang-14 libclang-rt-14-dev)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

cc=${REPORT_CC:-$(command -v clang-14 || command -v clang || echo clang-14)}
out=build/asan
n=${KINSTR_CORPUS_N:-2500}
seed=${KINSTR_CORPUS_SEED:-0x6b696e737472}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
mkdir -p "$out"
sym=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -n1)
[ -n "$sym" ] && export ASAN_SYMBOLIZER_PATH="$sym"
# leaks too: report frees what it reads on every path
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=0 exitcode=67"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 exitcode=68"

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP report_asan_build: no clang-14 (Debian: apt-get install clang-14 libclang-rt-14-dev)"
	exit 0
fi
if ! printf 'int main(void) { return 0; }\n' | "$cc" $san -x c - -o "$out/probe" >"$out/probe.log" 2>&1; then
	echo "SKIP report_asan_build: $cc cannot link $san ($(head -n1 "$out/probe.log"); Debian: apt-get install libclang-rt-14-dev)"
	exit 0
fi
if ! make -s B="$out" CC="$cc" CFLAGS="-O1 -g $san" "$out/kinstr" >"$out/build.log" 2>&1 ||
   ! "$cc" -O1 -g $san -Wall -Wextra -Werror -Iinclude -I. -D_GNU_SOURCE -o "$out/ctf_corpus" \
	tests/unit/ctf_corpus.c "$out/libkinstr.a" -lz >>"$out/build.log" 2>&1; then
	echo "FAIL report_asan_build: build failed (log $out/build.log)"
	sed 's/^/  /' "$out/build.log" | head -n 20
	exit 1
fi
echo "PASS report_asan_build: $out/kinstr with $san"

t0=$SECONDS
rm -rf "$out/corpus"
if ! ASAN_OPTIONS=detect_leaks=0 "$out/ctf_corpus" "$out/corpus" "$n" "$seed" >"$out/corpus.log" 2>&1; then
	echo "FAIL report_corpus_clean: the generator failed: $(tail -n1 "$out/corpus.log") (log $out/corpus.log)"
	exit 1
fi
# the uncorrupted trace must read back: 3 CPUs x 4 packets x 12 events
base=$("$out/kinstr" report --json "$out/corpus/base" 2>"$out/base.err")
rc=$?
if [ $rc -ne 0 ] || ! grep -q '"events":144' <<<"$base" || [ -s "$out/base.err" ]; then
	echo "FAIL report_base_trace: exit $rc, $(head -c 200 <<<"$base") $(head -n1 "$out/base.err")"
	exit 1
fi
echo "PASS report_base_trace: 144 events read back clean"

# one case: report (then report --json and the HTML page's time line on every fifth); prints "ok RC"
# or "bad CASE: why"
one() {
	local d=$1 rc log=$1.err flags=("") num=${1##*_}
	(( 10#$num % 5 == 0 )) && flags+=(--json "--html $1.html" "--trace-dat $1.dat")
	for flag in "${flags[@]}"; do
		timeout --kill-after=5 30 "$out/kinstr" report $flag "$d" >/dev/null 2>"$log"
		rc=$?
		if grep -qE 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|SUMMARY: ' "$log"; then
			echo "bad $d: $(grep -m1 -E 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error' "$log")"
			return
		fi
		if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
			echo "bad $d: 'kinstr report $flag' exited $rc ($(head -n1 "$log"))"
			return
		fi
	done
	echo "ok $rc"
	rm -f "$log" "$d.html" "$d.dat"
}
export -f one
export out
ls -d "$out"/corpus/case_* | xargs -P 2 -n 1 bash -c 'one "$0"' >"$out/results.log" 2>&1
ok=$(grep -c '^ok ' "$out/results.log")
rejected=$(grep -c '^ok 1$' "$out/results.log")
bad=$(grep -m1 '^bad ' "$out/results.log")
if [ -n "$bad" ] || [ "$ok" -ne "$n" ]; then
	[ -n "$bad" ] || bad="only $ok of $n cases ran clean"
	echo "FAIL report_corpus_clean: $bad (log $out/results.log)"
	d=$(sed -n 's/^bad \([^:]*\):.*/\1/p' "$out/results.log" | head -n1)
	[ -n "$d" ] && sed 's/^/  /' "$d.err" | head -n 30
	exit 1
fi
# the corruptions must reach the reader's refusals, and some must still read (nothing vital hit)
if [ "$rejected" -eq 0 ] || [ "$rejected" -eq "$n" ]; then
	echo "FAIL report_corpus_clean: $rejected of $n cases refused: the corpus does not exercise the reader"
	exit 1
fi
echo "PASS report_corpus_clean: $n corrupted traces (seed $seed), $rejected refused cleanly, $((n - rejected)) read, no sanitizer report, in $((SECONDS - t0)) s"
