# kinstr attach (issue 16): BPF programs of kprobe type run at kinstr's sites.

NAME attach on every kernel: one BPF program at an entry, an interior jump site and an interior trap site counts exactly what kinstr count counts there for the same workload, per probe and in its map (by the SPEC's cookie)
SMOKE
SETUP insmod kmod/kinstr.ko
RUN sites=$(tests/vm/checks/pick_sites.py --need trap,jump urandom_read_iter) || exit 1; echo "sites: $sites"; \
	w='dd if=/dev/urandom of=/dev/null bs=16 count=20000 status=none'; \
	build/kinstr count --json -o /tmp/c.json -c "$w" urandom_read_iter $sites; \
	build/kinstr attach --json build/examples/branch_count.bpf.o urandom_read_iter $sites -c "$w" > /tmp/a.json; \
	python3 -c 'import json; c=json.load(open("/tmp/c.json")); a=json.load(open("/tmp/a.json")); \
	cnt={p["probe"]: p["hits"] for p in c["probes"]}; m={e["key"]: e["value"] for e in a["maps"]["hits"]}; \
	[print(p["probe"], p["class"], "bpf", p["hits"], "count", cnt[p["probe"]], "map", m.get(i), "not_run", p["not_run"]) for i, p in enumerate(a["probes"])]; \
	assert a["command_status"] == 0 and len(a["probes"]) == 3; \
	assert all(p["hits"] == cnt[p["probe"]] == m.get(i) == 20000 and p["not_run"] == 0 for i, p in enumerate(a["probes"])), "counts differ"; \
	assert {"jump", "trap"} <= {p["class"] for p in a["probes"]}; print("exact")'
TIMEOUT 240
EXPECT ^sites: urandom_read_iter\+0x[0-9a-f]+ urandom_read_iter\+0x[0-9a-f]+$
EXPECT ^urandom_read_iter\+0x[0-9a-f]+ trap bpf 20000 count 20000 map 20000 not_run 0$
EXPECT ^urandom_read_iter\+0x[0-9a-f]+ jump bpf 20000 count 20000 map 20000 not_run 0$
EXPECT ^exact$

NAME attach: the latency example between getppid's entry and its return keys every call by comm, its histogram adds up to the calls, and the program's maps print as @NAME[KEY]: VALUE
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/lat_loop; \
	build/kinstr attach --json build/examples/latency_by_comm.bpf.o __x64_sys_getppid '__x64_sys_getppid%return' \
		-c '/tmp/lat_loop 3000 >/dev/null' > /tmp/l.json; \
	python3 -c 'import json; d=json.load(open("/tmp/l.json")); m=d["maps"]; \
	calls={e["key"]: e["value"] for e in m["calls"]}; h=sum(e["value"] for e in m["usecs"] if e["key"]["comm"] == "lat_loop"); \
	print("calls", calls.get("lat_loop"), "hist", h, "start map printed", "start" in m)'; \
	build/kinstr attach build/examples/latency_by_comm.bpf.o __x64_sys_getppid '__x64_sys_getppid%return' -c '/tmp/lat_loop 10' | \
		grep -E '^@(calls\["lat_loop"\]: 10|usecs\[\{comm: "lat_loop", bucket: [0-9]+\}\]: [0-9]+)$' | sed 's/bucket: [0-9]*}]: [0-9]*/bucket/' | sort -u
TIMEOUT 180
EXPECT ^calls 3000 hist 3000 start map printed True$
EXPECT ^@calls\["lat_loop"\]: 10$
EXPECT ^@usecs\[\{comm: "lat_loop", bucket$

NAME attach refuses with its own reason: the verifier's refusal with its log, a program too large (its log full: ENOSPC, not the reason), a program of another type, a multi-attach one, a sleepable one (the module's refusal), an unknown program name, an object that is not one; --dry-run verifies and patches nothing
SETUP insmod kmod/kinstr.ko
RUN o=build/tests/vm/bpf/refused.bpf.o; before=$(build/tests/vm/progs/textsum '__x64_sys_getppid'); \
	build/kinstr attach $o:unchecked __x64_sys_getppid -d 1 > /tmp/v.txt 2>&1; echo "rc $?"; head -1 /tmp/v.txt; \
	grep -c 'R0 invalid mem access\|invalid mem access .map_value_or_null' /tmp/v.txt; \
	for p in tracepoint multi sleepy nothere; do build/kinstr attach $o:$p __x64_sys_getppid -d 1 2>&1; echo "rc $?"; done; \
	build/kinstr attach $o:huge __x64_sys_getppid -d 1 2>&1 | head -1; \
	build/kinstr attach $o __x64_sys_getppid -d 1 2>&1; echo "rc $?"; \
	build/kinstr attach /etc/hostname __x64_sys_getppid -d 1 2>&1; \
	build/kinstr attach --dry-run build/examples/branch_count.bpf.o __x64_sys_getppid | head -1; \
	test "$before" = "$(build/tests/vm/progs/textsum '__x64_sys_getppid')" && echo text-untouched
TIMEOUT 180
EXPECT ^rc 1$
EXPECT ^kinstr: build/tests/vm/bpf/refused.bpf.o: the verifier refused program 'unchecked': Permission denied \(its log follows\)$
EXPECT ^[1-9]$
EXPECT ^kinstr: build/tests/vm/bpf/refused.bpf.o: program 'tracepoint' is of type tracepoint, not kprobe: write it as SEC\("kprobe"\)$
EXPECT ^kinstr: build/tests/vm/bpf/refused.bpf.o: program 'multi' is a multi-attach kprobe program \(trace_kprobe_multi\): kinstr runs plain SEC\("kprobe"\) programs$
EXPECT ^kinstr: __x64_sys_getppid\+0x[0-9a-f]+: the module refused: the BPF program may not run there: a sleepable program: probe context may not sleep$
EXPECT ^kinstr: build/tests/vm/bpf/refused.bpf.o: no program called 'nothere'$
EXPECT ^kinstr: build/tests/vm/bpf/refused.bpf.o: (the verifier refused program 'huge': its log passed 4 MiB, where the kernel stops it and says ENOSPC instead of the reason: a log that long means the program is too large|program 'huge' is too large for the kernel)
EXPECT ^kinstr: build/tests/vm/bpf/refused.bpf.o: 4 kprobe programs \(unchecked, huge, multi, sleepy\): name one as build/tests/vm/bpf/refused.bpf.o:PROG$
EXPECT ^kinstr: /etc/hostname: cannot open the BPF object: not a BPF ELF object \(libbpf: elf: 
EXPECT ^program 'count' of build/examples/branch_count.bpf.o: the verifier accepts it$
EXPECT ^text-untouched$

NAME the module refuses, each with its own reason, program fds kinstr attach would not pass: a socket filter, a map, a closed fd, a kprobe.multi program
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/bpf_check refusals build/tests/vm/bpf/refused.bpf.o; echo "rc $?"
TIMEOUT 120
EXPECT ^refused a socket filter: __x64_sys_getppid\+0x[0-9a-f]+: the module refused: the BPF program may not run there: not a BPF program of kprobe type \(fd [0-9]+ is a BPF program of type socket_filter\)$
EXPECT ^refused a map's fd: .*: not a BPF program of kprobe type \(fd [0-9]+ is not a BPF program\)$
EXPECT ^refused a closed fd: .*: the program's fd is not open \(fd 999 is not open\)$
EXPECT ^refused a kprobe.multi program: .*: a multi-attach kprobe program \(its helpers need their own run context\)$
EXPECT ^rc 0$

NAME 1,000 rounds of attach and detach of one program leave nothing held (areas back, the program freed once its last probe is removed, kept alive by the module while attached with its fd closed)
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/bpf_check cycles 1000 build/examples/branch_count.bpf.o; echo "rc $?"
TIMEOUT 180
EXPECT ^cycles: 1000 install/remove rounds in [0-9.]+ s, areas back to 0$
EXPECT ^held: program [0-9]+ alive with its fd closed, [0-9]+ hits$
EXPECT ^freed: program [0-9]+ gone once its probes were removed$
EXPECT ^rc 0$

NAME kill -9 of kinstr attach restores the text, frees the program, and rmmod then succeeds
SETUP insmod kmod/kinstr.ko
RUN before=$(build/tests/vm/progs/textsum 'vfs_read,ksys_read'); ids0=$(bpftool prog show | grep -c '^[0-9]*: kprobe'); \
	build/kinstr attach -d 300 build/examples/branch_count.bpf.o vfs_read ksys_read > /dev/null 2>&1 & pid=$!; \
	for i in $(seq 50); do during=$(build/tests/vm/progs/textsum 'vfs_read,ksys_read'); \
	test "$during" != "$before" && break; kill -0 $pid || break; sleep 0.2; done; \
	test "$during" != "$before" && echo patched-while-running; \
	kill -9 $pid; wait $pid; \
	after=$(build/tests/vm/progs/textsum 'vfs_read,ksys_read'); \
	test "$before" = "$after" && echo restored-after-kill; \
	for i in $(seq 50); do test "$(bpftool prog show | grep -c '^[0-9]*: kprobe')" = "$ids0" && break; sleep 0.1; done; \
	test "$(bpftool prog show | grep -c '^[0-9]*: kprobe')" = "$ids0" && echo program-freed; \
	rmmod kinstr && echo rmmod-ok
TIMEOUT 180
EXPECT ^patched-while-running$
EXPECT ^restored-after-kill$
EXPECT ^program-freed$
EXPECT ^rmmod-ok$

NAME a kprobe added while kinstr attach holds a site is refused on its bytes, and accepted there once kinstr attach is gone
FEATURE kprobe_fence
SETUP insmod kmod/kinstr.ko
RUN addr=$(build/kinstr count --dry-run vfs_read | awk 'NR == 2 { print $3 }'); echo "site $addr"; \
	before=$(build/tests/vm/progs/textsum 'vfs_read'); \
	build/kinstr attach -d 300 build/examples/branch_count.bpf.o vfs_read > /dev/null 2>&1 & pid=$!; \
	for i in $(seq 100); do test "$(build/tests/vm/progs/textsum 'vfs_read')" != "$before" && break; sleep 0.2; done; \
	echo "p:kinstr_fence $addr" >> /sys/kernel/tracing/kprobe_events 2>/dev/null && echo kprobe-accepted-during || echo kprobe-refused-during; \
	kill $pid; wait $pid; \
	echo "p:kinstr_fence $addr" >> /sys/kernel/tracing/kprobe_events && echo kprobe-accepted-after; \
	echo '-:kinstr_fence' >> /sys/kernel/tracing/kprobe_events
TIMEOUT 180
EXPECT ^site 0x[0-9a-f]+$
EXPECT ^kprobe-refused-during$
EXPECT ^kprobe-accepted-after$
EXPECT_NOT ^kprobe-accepted-during$
