#!/bin/sh
# The cover sweep's background workload (tests/vm/progs/sweep.py --mode cover): the kernel
# exercised broadly, on both CPUs, until killed (run it in a process group of its own and kill
# the group): file I/O with fsync and directory walks, pipes, fork/exec of short commands, TCP
# and UDP over loopback, AF_UNIX sockets, anonymous memory, nanosleep timers (all of them in
# ref_workload's rounds), plus tests/vm/progs/workload.sh (two writers) and a timer loop.
#   broad_workload.sh BUILD_PROGS_DIR
p=${1:-build/tests/vm/progs}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# the syscall mix, networking and fork/exec of ref_workload, round after round
(while :; do "$p/ref_workload" 50 > /dev/null || sleep 1; done) &
# file I/O, pipes and fork/exec through the shell
(while :; do sh tests/vm/progs/workload.sh > /dev/null; done) &
(while :; do
	dd if=/dev/zero of="$d/f" bs=64k count=8 conv=fsync 2> /dev/null
	cat "$d/f" | md5sum > /dev/null
	ls -lR /etc > /dev/null 2>&1
	rm -f "$d/f"
done) &
# timers: short sleeps (hrtimers, the scheduler's wake-ups)
(while :; do sleep 0.02; done) &
wait
