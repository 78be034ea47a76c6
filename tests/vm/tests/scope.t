# The scope (issue 32): which threads the probes act for, decided in the module (KINSTR_IOC_SCOPE), and kinstr
# never observing itself unless --self.

NAME scope: kinstr's own polling sleeps are not in a span of clock_nanosleep: exactly the 12 sleeps of -c CMD (about 50 ms each), and kinstr's own appear only with --self
FEATURE scope
SETUP insmod kmod/kinstr.ko
RUN P=build/tests/vm/progs/scope_work; \
	build/kinstr span --json -c "$P nap 12 50" __x64_sys_clock_nanosleep '__x64_sys_clock_nanosleep%return' > /tmp/sc1.json; \
	python3 -c 'import json; d=json.load(open("/tmp/sc1.json")); t=d["total"]; print("spans", t["count"], "mean_ok", 45e6 < t["mean_ns"] < 80e6, "comms", sorted({k["comm"] for k in d["keys"]}))'; \
	build/kinstr span --self --json -c "$P nap 12 50" __x64_sys_clock_nanosleep '__x64_sys_clock_nanosleep%return' > /tmp/sc2.json; \
	python3 -c 'import json; d=json.load(open("/tmp/sc2.json")); c={}; [c.__setitem__(k["comm"], c.get(k["comm"], 0) + k["count"]) for k in d["keys"]]; print("self: scope_work", c.get("scope_work"), "kinstr", c.get("kinstr", 0) > 0)'
EXPECT ^spans 12 mean_ok True comms \['scope_work'\]$
EXPECT ^self: scope_work 12 kinstr True$
TIMEOUT 120

NAME scope: --comm of either of two programs calling getppid 2,000 and 3,000 times at once gives exactly its own calls; --tid and --pid of a process started before kinstr give exactly its calls
SMOKE
FEATURE scope
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/sc_one && cp build/tests/vm/progs/getppid_loop /tmp/sc_two; \
	for c in sc_one sc_two; do \
		build/kinstr count --json --comm $c -c '/tmp/sc_one 2000 >/dev/null & /tmp/sc_two 3000 >/dev/null & wait' __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print(sys.argv[1], sum(p["hits"] for p in d["probes"]))' $c; \
	done; \
	rm -f /tmp/sc_go; build/tests/vm/progs/scope_work wait /tmp/sc_go 2500 > /dev/null & W=$!; \
	build/tests/vm/progs/getppid_loop 100 > /dev/null; \
	build/kinstr count --json --pid $W -c "sh -c 'touch /tmp/sc_go; while kill -0 $W 2>/dev/null; do sleep 0.05; done; /tmp/sc_one 700 >/dev/null'" __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("pid", sum(p["hits"] for p in d["probes"]))'; \
	rm -f /tmp/sc_go; build/tests/vm/progs/scope_work wait /tmp/sc_go 1500 > /dev/null & W=$!; \
	build/kinstr count --json --tid $W -c "sh -c 'touch /tmp/sc_go; while kill -0 $W 2>/dev/null; do sleep 0.05; done; /tmp/sc_one 700 >/dev/null'" __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("tid", sum(p["hits"] for p in d["probes"]))'
EXPECT ^sc_one 2000$
EXPECT ^sc_two 3000$
EXPECT ^pid 2500$
EXPECT ^tid 1500$
TIMEOUT 180

NAME scope: --cgroup of a cgroup v2 holding one of two programs gives exactly its calls; --cpu 1 with two copies of one program pinned to CPUs 0 and 1 gives exactly the second's (with --comm: -c's shell calls getppid once, on either CPU); --follow of a shell that forks both gives both
FEATURE scope
REQUIRES [ "$(nproc)" -ge 2 ]
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/sc_one && cp build/tests/vm/progs/getppid_loop /tmp/sc_two; \
	grep -q cgroup2 /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup; mkdir -p /sys/fs/cgroup/kinstr_sc/inner; \
	build/kinstr count --json --cgroup kinstr_sc -c "sh -c 'echo \$\$ > /sys/fs/cgroup/kinstr_sc/inner/cgroup.procs; exec /tmp/sc_one 1700 >/dev/null' & /tmp/sc_two 2300 >/dev/null & wait" __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("cgroup", sum(p["hits"] for p in d["probes"]))'; \
	build/kinstr count --json --cpu 1 --comm sc_one -c 'taskset -c 0 /tmp/sc_one 1100 >/dev/null & taskset -c 1 /tmp/sc_one 1900 >/dev/null & wait' __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("cpu", sum(p["hits"] for p in d["probes"]))'; \
	rm -f /tmp/sc_go; sh -c 'while [ ! -e /tmp/sc_go ]; do sleep 0.05; done; /tmp/sc_one 1200 >/dev/null; /tmp/sc_two 800 >/dev/null' & S=$!; \
	build/kinstr count --json --pid $S --follow -c "sh -c 'touch /tmp/sc_go; while kill -0 $S 2>/dev/null; do sleep 0.05; done; /tmp/sc_one 500 >/dev/null'" __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("follow", sum(p["hits"] for p in d["probes"]))'
CLEANUP rmdir /sys/fs/cgroup/kinstr_sc/inner /sys/fs/cgroup/kinstr_sc 2>/dev/null; true
EXPECT ^cgroup 1700$
EXPECT ^cpu 1900$
EXPECT ^follow 2000$
TIMEOUT 180

NAME scope: trace and profile take the scope too (exactly the comm's events and calls); bad scope options are refused before anything is patched, naming the option
FEATURE scope
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/sc_one && cp build/tests/vm/progs/getppid_loop /tmp/sc_two; \
	build/kinstr trace --comm sc_two -o /tmp/sc_tr -c '/tmp/sc_one 300 >/dev/null & /tmp/sc_two 400 >/dev/null & wait' __x64_sys_getppid > /dev/null 2>&1; \
	python3 tests/vm/progs/check_trace.py /tmp/sc_tr --count __x64_sys_getppid sc_two 400 --total 400 | tail -1; \
	build/kinstr profile --json --comm sc_one -c '/tmp/sc_one 600 >/dev/null & /tmp/sc_two 900 >/dev/null & wait' __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("profile", d["functions"][0]["calls"])'; \
	build/kinstr count --comm 0123456789abcdefg -d 1 vfs_read 2>&1; echo "rc $?"; \
	build/kinstr count --cpu 99 -d 1 vfs_read 2>&1; echo "rc $?"; \
	build/kinstr count --follow -d 1 vfs_read 2>&1; echo "rc $?"; \
	build/kinstr count --pid 99999999 -d 1 vfs_read 2>&1; echo "rc $?"; \
	build/kinstr count --cgroup /no/such/cgroup -d 1 vfs_read 2>&1; echo "rc $?"; \
	build/kinstr count --cgroup /proc -d 1 vfs_read 2>&1; echo "rc $?"
EXPECT ^trace ok$
EXPECT ^profile 600$
EXPECT ^kinstr: --comm: '0123456789abcdefg': a comm is 1 to 15 bytes$
EXPECT ^kinstr: --cpu: CPU 99: this machine has CPUs 0-[0-9]+$
EXPECT ^kinstr: --follow: follows the processes --pid names: give --pid$
EXPECT ^kinstr: --pid: no process 99999999$
EXPECT ^kinstr: --cgroup /no/such/cgroup: No such file or directory$
EXPECT ^kinstr: --cgroup /proc: not a cgroup v2 directory$
EXPECT_NOT ^rc 0$
TIMEOUT 120

NAME scope: drill's levels take the scope too: hrtimer_nanosleep under 'sleep 0.3' is timed for --comm sleep and not called at all for a comm nothing has
FEATURE scope
SETUP insmod kmod/kinstr.ko
RUN build/kinstr drill --json -i 1 -D 1 --comm sleep -c 'sleep 0.3' hrtimer_nanosleep > /tmp/sc_d.json; echo "in rc $?"; \
	python3 -c 'import json; d=json.load(open("/tmp/sc_d.json")); print("root calls", d["root"]["calls"])'; \
	build/kinstr drill -i 1 -D 1 --comm no_such_comm -c 'sleep 0.3' hrtimer_nanosleep 2>&1; echo "out rc $?"
EXPECT ^in rc 0$
EXPECT ^root calls [1-9][0-9]*$
EXPECT ^kinstr: hrtimer_nanosleep was not called in 1\.0 s: nothing to drill into$
EXPECT ^out rc 1$
TIMEOUT 120

NAME scope: --cmd-only counts -c CMD and what it forks, nothing else: beside a program calling getppid all along, the command's shell forking two programs of 3,000 and 2,000 calls gives exactly those under their comms and no row of the other; a CMD run directly gives exactly its 3,000; without -c, or with --pid, it is refused
FEATURE scope
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/co_one && cp build/tests/vm/progs/getppid_loop /tmp/co_two && cp build/tests/vm/progs/getppid_loop /tmp/co_noise; \
	/tmp/co_noise 100000000 > /dev/null & N=$!; \
	build/kinstr count --by comm --json --cmd-only -c "sh -c '/tmp/co_one 3000 >/dev/null; /tmp/co_two 2000 >/dev/null'" __x64_sys_getppid > /tmp/co1.json; echo "rc $?"; \
	python3 -c 'import json; d=json.load(open("/tmp/co1.json")); c={r["comm"]: r["hits"] for r in d["rows"]}; print("co_one", c.get("co_one"), "co_two", c.get("co_two"), "noise", c.get("co_noise", 0))'; \
	build/kinstr count --json --cmd-only -c '/tmp/co_one 3000' __x64_sys_getppid | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("direct", sum(p["hits"] for p in d["probes"]))'; \
	kill $N; wait $N 2>/dev/null; \
	build/kinstr count --cmd-only __x64_sys_getppid 2>&1; echo "rc $?"; \
	build/kinstr count --cmd-only --pid 1 -c true __x64_sys_getppid 2>&1; echo "rc $?"
EXPECT ^rc 0$
EXPECT ^co_one 3000 co_two 2000 noise 0$
EXPECT ^direct 3000$
EXPECT ^kinstr: --cmd-only: restricts to -c CMD's process: give -c CMD$
EXPECT ^kinstr: --cmd-only: -c CMD names the process itself: not with --pid or --tid$
EXPECT ^rc 2$
TIMEOUT 180
