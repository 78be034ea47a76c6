#!/usr/bin/env bash
# Bounded fuzzing of decode + CFG + sites + relocation (tests/fuzz/fuzz_analyze.c) under ASan,
# UBSan and LeakSanitizer: `make fuzz`, then libFuzzer for KINSTR_FUZZ_SECONDS (default 60) on a
# copy of tests/fuzz/corpus in build/fuzz/run/. Prints one line:
#   PASS fuzz_analyze: N runs, M coverage ...
#   FAIL fuzz_analyze: <what broke> (reproduce: build/fuzz/fuzz_analyze ARTIFACT)
#   SKIP fuzz_analyze: <what is missing>     only without clang or its libFuzzer runtime
# then, after a pass, whether the CFG oracle catches a planted bug:
#   PASS fuzz_oracle_planted: ...   or   FAIL fuzz_oracle_planted: ...
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

secs=${KINSTR_FUZZ_SECONDS:-60}
cc=${FUZZ_CC:-$(command -v clang || command -v clang-14 || echo clang)}
run=build/fuzz/run
art=build/fuzz/artifacts
mkdir -p build/fuzz "$art"

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP fuzz_analyze: no $cc (Debian: apt-get install clang-14 libclang-rt-14-dev)"
	exit 0
fi
# The runtimes come in libclang-rt-14-dev, which clang-14 only recommends.
probe=build/fuzz/probe
if ! printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' |
	"$cc" -fsanitize=fuzzer,address,undefined -x c - -o "$probe" >"$probe.log" 2>&1; then
	echo "SKIP fuzz_analyze: $cc cannot link -fsanitize=fuzzer,address,undefined" \
		"($(grep -m1 -iE 'error|cannot|not found' "$probe.log" || head -n1 "$probe.log");" \
		"Debian: apt-get install libclang-rt-14-dev)"
	exit 0
fi

if ! make -s fuzz FUZZ_CC="$cc" >build/fuzz/make.log 2>&1; then
	echo "FAIL fuzz_analyze: make fuzz failed"
	tail -n 20 build/fuzz/make.log | sed 's/^/  /'
	exit 1
fi

rm -rf "$run"
mkdir -p "$run/corpus"
find tests/fuzz/corpus -maxdepth 1 -type f ! -name README -exec cp {} "$run/corpus/" \;
sym=$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -n1)
[ -n "$sym" ] && export ASAN_SYMBOLIZER_PATH="$sym"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# libFuzzer stops on its own after $secs; the outer timeout is for a hung process only.
timeout --kill-after=10 $((secs + 120)) build/fuzz/fuzz_analyze \
	-max_total_time="$secs" -rss_limit_mb=2048 -max_len=4096 -timeout=20 \
	-print_final_stats=1 -artifact_prefix="$art/" "$run/corpus" >"$run/log" 2>&1
rc=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -n1)
cov=$(grep -oE 'cov: [0-9]+' "$run/log" | tail -n1 | cut -d' ' -f2)
ft=$(grep -oE 'ft: [0-9]+' "$run/log" | tail -n1 | cut -d' ' -f2)
corp=$(grep -oE 'corp: [0-9]+' "$run/log" | tail -n1 | cut -d' ' -f2)
took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$run/log" | tail -n1)
seed=$(sed -n 's/^INFO: Seed: //p' "$run/log" | head -n1)

# The oracle can disagree: with a bug planted in lib/analysis/cfg.c (a ud2 ends no block), the
# committed corpus alone (h-ud2-then-code) must fail the CFG's leader check.
planted() {
	local log=build/fuzz/plant.log
	if ! make -s build/fuzz/fuzz_analyze_plant FUZZ_CC="$cc" >"$log" 2>&1; then
		echo "FAIL fuzz_oracle_planted: make build/fuzz/fuzz_analyze_plant failed"
		tail -n 10 "$log" | sed 's/^/  /'
		return 1
	fi
	rm -rf build/fuzz/plant && mkdir -p build/fuzz/plant/corpus build/fuzz/plant/art
	find tests/fuzz/corpus -maxdepth 1 -type f ! -name README -exec cp {} build/fuzz/plant/corpus/ \;
	timeout 120 build/fuzz/fuzz_analyze_plant -runs=0 -artifact_prefix=build/fuzz/plant/art/ \
		build/fuzz/plant/corpus >>"$log" 2>&1
	if grep -q 'invariant violated: .*KINSTR_CFG_I_LEADER' "$log" && grep -q 'flow 9$' "$log"; then
		echo "PASS fuzz_oracle_planted: a ud2 that ends no block (planted in lib/analysis/cfg.c) fails the" \
			"oracle's leader check on the committed corpus: $(grep -m1 'insn at' "$log" | sed 's/^ *//')"
		return 0
	fi
	echo "FAIL fuzz_oracle_planted: the planted bug was not caught (log $log)"
	return 1
}

if [ $rc -eq 0 ] && [ -n "$runs" ] && [ "${runs:-0}" -gt 0 ]; then
	echo "PASS fuzz_analyze: ${runs} runs, ${cov:-?} coverage (${ft:-?} features, corpus ${corp:-?}," \
		"${took:-$secs} s, $((runs / (${took:-$secs} > 0 ? ${took:-$secs} : 1))) exec/s)"
	planted
	exit $?
fi
what=$(grep -m1 -E 'invariant violated|^SUMMARY: |ERROR: libFuzzer: |==ERROR: ' "$run/log" | sed 's/^ *//')
artifact=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$run/log" | tail -n1)
[ -n "$what" ] || what="exit $rc without a crash report"
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	what="hung past $((secs + 120)) s"
fi
echo "FAIL fuzz_analyze: $what${artifact:+ (reproduce: build/fuzz/fuzz_analyze $artifact)} (seed ${seed:-?}, log $run/log)"
grep -E -A3 'invariant violated' "$run/log" | head -n 4 | sed 's/^/  /'
grep -E -A14 '^==[0-9]+==ERROR|runtime error' "$run/log" | head -n 16 | sed 's/^/  /'
exit 1
