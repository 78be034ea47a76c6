#!/bin/sh
# The test module's workload for cover.t (tests/vm/modules/kinstr_test_cache.c): each command
# through /sys/kernel/debug/kinstr_tc/run, then its result line. "warn" only when asked ($1),
# since WARN_ON_ONCE fires once per module load.
R=/sys/kernel/debug/kinstr_tc
run() { echo "$*" > $R/run && cat $R/last; }
run loop 100
run branch 64
run fault 10
run get 7
[ "$1" = warn ] && run warn 5
run key 50
run key_on
run key 40
run key_off
run key 30
run call 30
run sc_b
run call 20
run sc_a
exit 0
