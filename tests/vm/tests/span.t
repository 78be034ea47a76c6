# kinstr span A B (issue 16): the time between two points, paired per thread or by a value.

NAME span from the test module's busy-waits to their returns (100 us, 1 ms + 100 us): one span per call, none unmatched or lost, the mean within 10% of the module's own clock (allowing for the probes' cost, measured in the run)
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
CLEANUP i=0; until rmmod kinstr_test_timing 2>/dev/null; do i=$((i + 1)); [ $i -lt 50 ] || exit 1; sleep 0.2; done
RUN sh tests/vm/progs/span_accuracy.sh; echo "rc=$?"
EXPECT ^probe cost [0-9]+$
EXPECT ^kinstr_test_inner: ok on attempt [123]$
EXPECT ^kinstr_test_outer: ok on attempt [123]$
EXPECT ^rc=0$
TIMEOUT 300

NAME span per thread: two programs calling getppid 2,000 and 3,000 times at once get exactly that many spans each from the entry to the return, no start or stop left unpaired; A = B and an unknown key are refused
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/sp_one && cp build/tests/vm/progs/getppid_loop /tmp/sp_two; \
	build/kinstr span --json -c '/tmp/sp_one 2000 >/dev/null & /tmp/sp_two 3000 >/dev/null & wait' \
		__x64_sys_getppid '__x64_sys_getppid%return' > /tmp/spt.json; \
	python3 -c 'import json; d=json.load(open("/tmp/spt.json")); [print(k["comm"], k["count"]) for k in sorted(d["keys"], key=lambda k: k["comm"]) if k["comm"].startswith("sp_")]; print("unmatched", d["unmatched_starts"], d["unmatched_stops"], "lost", d["lost"])'; \
	build/kinstr span --hist -c '/tmp/sp_one 100' __x64_sys_getppid '__x64_sys_getppid%return' | grep -cE '^  \[[0-9]+, [0-9]+\) ns +[0-9]+ \|@*'; \
	build/kinstr span __x64_sys_getppid __x64_sys_getppid 2>&1; echo "rc $?"; \
	build/kinstr span --key comm a b 2>&1; echo "rc $?"
EXPECT ^sp_one 2000$
EXPECT ^sp_two 3000$
EXPECT ^unmatched 0 0 lost 0$
EXPECT ^[1-9][0-9]*$
EXPECT ^kinstr: span: A and B are the same point \('__x64_sys_getppid'\)$
EXPECT ^kinstr: --key: tid, pid or value, not 'comm'$
EXPECT ^rc 2$
TIMEOUT 300

NAME span keyed by a pointer: the test module hands an object from the writer to a work item on the other CPU 200 times; span by value from the send's %rdi to the receive's %rdi pairs every handoff (the stop in the kworker), none unmatched, and the module says each was received on another CPU
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
CLEANUP i=0; until rmmod kinstr_test_timing 2>/dev/null; do i=$((i + 1)); [ $i -lt 50 ] || exit 1; sleep 0.2; done
RUN build/kinstr span --json --key value -c "sh -c 'echo handoff 200 > /sys/kernel/debug/kinstr_test/run'" \
		'kinstr_test_handoff_send(%rdi)' 'kinstr_test_handoff_recv(%rdi)' > /tmp/sph.json; \
	python3 -c 'import json; d=json.load(open("/tmp/sph.json")); print("spans", d["total"]["count"], "keys", len(d["keys"]), "unmatched", d["unmatched_starts"], d["unmatched_stops"], "lost", d["lost"]); print("stop comms", sorted({k["comm"].split("/")[0] for k in d["keys"]}))'; \
	sed -n 's/.*calls=\([0-9]*\).*multi_sum=\([0-9]*\).*/module: \1 handoffs, \2 received on another CPU/p' /sys/kernel/debug/kinstr_test/last
EXPECT ^spans 200 keys 8 unmatched 0 0 lost 0$
EXPECT ^stop comms \['kworker'\]$
EXPECT ^module: 200 handoffs, 200 received on another CPU$
TIMEOUT 300

NAME span pairs and sums in kinstr.ko, not through the trace buffers: with buffers of 8 KiB a trace of 50,000 getppid calls loses most of them, while span of the same calls from entry to return counts every one (50,000 for the program, none lost, unmatched or past the bounds)
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/gp_alpha; \
	rm -rf /tmp/tr-span; build/kinstr trace --buffer-size 8K --subbuf-size 4K -o /tmp/tr-span -c '/tmp/gp_alpha 50000 >/dev/null' __x64_sys_getppid 2>&1 | sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost, .*/trace \1 \2/p' | awk '{ print "trace lost some:", ($3 > 0) }'; \
	build/kinstr span --json -c '/tmp/gp_alpha 50000 >/dev/null' __x64_sys_getppid '__x64_sys_getppid%return' >/tmp/sp.json; echo "rc $?"; \
	python3 -c 'import json; d=json.load(open("/tmp/sp.json")); print("spans", sum(k["count"] for k in d["keys"] if k["comm"] == "gp_alpha"), "unmatched", d["unmatched_starts"], d["unmatched_stops"], "lost", d["lost"], "overflow", d["overflow"])'
EXPECT ^trace lost some: 1$
EXPECT ^rc 0$
EXPECT ^spans 50000 unmatched 0 0 lost 0 overflow 0$
