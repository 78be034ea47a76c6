#!/usr/bin/env bash
# tests/vm/splat-scan on the host: one report of each kind the kernels print (the stock kernels'
# oopses and WARNINGs, and the debug kernel's checkers: KASAN, lockdep, RCU, UBSAN, DEBUG_LIST,
# DEBUG_ATOMIC_SLEEP, DEBUG_PREEMPT, kmemleak's list), each alone in an otherwise clean log, must
# fail the scan and be printed; clean boot logs of the stock 6.1 kernel and of the debug kernel
# (tests/data/boot-*.log, as the harness captured them) and the boot advice of splat-allow pass.
# tests/runner.py reads the same patterns: its matcher must agree line by line.
# One line per case: PASS name / FAIL name: why.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
clean='[    0.000000] Linux version 6.1.192-kinstr-debug (root@host) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0)
[    2.101000] kinstr: loading out-of-tree module taints kernel.
[    2.102000] kinstr: module verification failed: signature and/or required key missing - tainting kernel
[    3.000000] kinstr-vm: kmemleak: 0 unreferenced objects after the job'
# name|line: what the 6.1 tree prints (kernel/locking/lockdep.c, mm/kasan/report.c, lib/ubsan.c,
# lib/list_debug.c, mm/kmemleak.c, kernel/sched/core.c, lib/smp_processor_id.c, kernel/hung_task.c)
while IFS='|' read -r name line; do
	[ -n "$name" ] || continue
	{ printf '%s\n' "$clean"; printf '[   12.345678] %s\n' "$line"; printf '%s\n' "$clean"; } >"$d/log"
	out=$(tests/vm/splat-scan "$d/log"); rc=$?
	py=$(python3 -c 'import sys; sys.path.insert(0, "tests"); import runner; print(bool(runner.SPLAT.search(sys.argv[1])))' "$line" 2>&1)
	if [ $rc -ne 1 ]; then
		echo "FAIL splat_$name: splat-scan exit $rc, want 1, for: $line"; fail=1
	elif [ "$out" != "[   12.345678] $line" ]; then
		echo "FAIL splat_$name: splat-scan printed '$out', want the report's line only"; fail=1
	elif [ "$py" != True ]; then
		echo "FAIL splat_$name: tests/runner.py's matcher does not see it ($py)"; fail=1
	else
		echo "PASS splat_$name"
	fi
done <<'LINES'
kasan_uaf|BUG: KASAN: use-after-free in kinstr_slot_put+0x4c/0x90 [kinstr]
kasan_oob|BUG: KASAN: slab-out-of-bounds in kinstr_area_write+0x21/0x60 [kinstr]
kasan_null|KASAN: null-ptr-deref in range [0x0000000000000008-0x000000000000000f]
lockdep_circular|WARNING: possible circular locking dependency detected
lockdep_recursive|WARNING: possible recursive locking detected
lockdep_inconsistent|WARNING: inconsistent lock state
lockdep_irq_inversion|WARNING: possible irq lock inversion dependency detected
lockdep_safe_unsafe|WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected
lockdep_bad_unlock|WARNING: bad unlock balance detected!
lockdep_held_freed|WARNING: held lock freed!
lockdep_wait_context|[ BUG: Invalid wait context ]
lockdep_turned_off|turning off the locking correctness validator.
rcu_suspicious|WARNING: suspicious RCU usage
rcu_stall|rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
atomic_sleep|BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580
preempt_smp_processor_id|BUG: using smp_processor_id() in preemptible [00000000] code: kinstr/231
ubsan_shift|UBSAN: shift-out-of-bounds in kmod/actions/ring.c:120:22
ubsan_bounds|UBSAN: array-index-out-of-bounds in kmod/site.c:88:9
list_add|list_add corruption. prev->next should be next (ffff888004a1c200), but was ffff888004a1c2c0. (prev=ffff888004a1c200).
list_del|list_del corruption, ffff888004a1c200->next is LIST_POISON1 (dead000000000100)
kmemleak|unreferenced object 0xffff888004a1c200 (size 64):
hung_task|INFO: task kinstr:231 blocked for more than 120 seconds.
soft_lockup|watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [kinstr:312]
warn|WARNING: CPU: 1 PID: 231 at kmod/patch/patch.c:410 kinstr_install+0x1f0/0x400 [kinstr]
oops|Oops: 0003 [#1] PREEMPT SMP KASAN PTI
gpf|general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN PTI
panic|Kernel panic - not syncing: Fatal exception
LINES

# clean logs pass: the synthetic one, boot advice splat-allow lists, and real boot logs
printf '%s\n' "$clean" 'Speculative Return Stack Overflow: WARNING: See https://kernel.org/doc/html/latest/admin-guide/hw-vuln/srso.html for mitigation options.' >"$d/clean"
if out=$(tests/vm/splat-scan "$d/clean" "$d/absent"); then echo "PASS clean_synthetic"
else echo "FAIL clean_synthetic: splat-scan failed a clean log (and a missing file): $out"; fail=1; fi
n=0
for f in tests/data/boot-*.log; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	if out=$(tests/vm/splat-scan "$f"); then echo "PASS clean_$(basename "$f" .log)"
	else echo "FAIL clean_$(basename "$f" .log): splat-scan failed a clean boot log: $out"; fail=1; fi
done
[ $n -gt 0 ] || { echo "FAIL clean_boot_logs: no tests/data/boot-*.log to check"; fail=1; }
exit $fail
