# kinstr count: the splice engine (issue 4).

NAME on every kernel: exact counts at the entry, an interior jump site, a jump site that displaces a call (emulated in the slot) and every return (sites picked from the live analysis), equal to a kprobe event's count
SMOKE
SETUP insmod kmod/kinstr.ko && echo 'p:kinstr_ref __x64_sys_getppid comm=$comm:string' > /sys/kernel/tracing/kprobe_events && \
	echo 'hist:keys=comm' > /sys/kernel/tracing/events/kprobes/kinstr_ref/trigger && \
	echo 1 > /sys/kernel/tracing/events/kprobes/kinstr_ref/enable
RUN sites=$(tests/vm/checks/pick_sites.py --need jump,call __x64_sys_getppid) || exit 1; echo "sites: $sites"; \
	build/kinstr count --json -o /tmp/c.json -c 'build/tests/vm/progs/getppid_loop 50000' __x64_sys_getppid \
	$sites '__x64_sys_getppid%return'; \
	ref=$(sed -n 's/.*comm: getppid_loop *} hitcount: *\([0-9]*\).*/\1/p' /sys/kernel/tracing/events/kprobes/kinstr_ref/hist); \
	python3 -c 'import json,sys; d=json.load(open("/tmp/c.json")); ref=int(sys.argv[1]); \
	[print(p["probe"], p["class"], p["action"], p["hits"], "kprobe", ref) for p in d["probes"]]; \
	assert d["command_status"] == 0; assert len(d["probes"]) >= 4; \
	assert all(p["hits"] == 50000 == ref for p in d["probes"]), "counts differ"; \
	assert "jump" in {p["class"] for p in d["probes"]}; print("exact")' "$ref"
CLEANUP echo 0 > /sys/kernel/tracing/events/kprobes/kinstr_ref/enable; \
	echo '!hist:keys=comm' > /sys/kernel/tracing/events/kprobes/kinstr_ref/trigger; echo > /sys/kernel/tracing/kprobe_events
TIMEOUT 180
EXPECT ^sites: __x64_sys_getppid\+0x[0-9a-f]+ __x64_sys_getppid\+0x[0-9a-f]+$
EXPECT ^__x64_sys_getppid(\+0x[59])? (ftrace|jump|trap) (inline|pushf) 50000 kprobe 50000$
EXPECT ^exact$

NAME a no-op probe (KINSTR_ACTION_NOP through libkinstr) at the entry, an interior jump site and a jump site that displaces a call: spliced in, hit without effect (getppid's result unchanged, nothing counted, where counting probes on the same sites saw every call), the text restored once removed
SETUP insmod kmod/kinstr.ko
RUN sites=$(tests/vm/checks/pick_sites.py --need jump,call __x64_sys_getppid) || exit 1; \
	build/tests/vm/progs/nop_check 20000 __x64_sys_getppid $sites; echo "rc $?"
TIMEOUT 120
EXPECT ^count: 3 probes, 20000 hits each$
EXPECT ^installed: __x64_sys_getppid\+0x[0-9a-f]+ (ftrace|jump|trap), first byte (e8|e9|cc)$
EXPECT ^installed: __x64_sys_getppid\+0x[0-9a-f]+ jump, first byte e9$
EXPECT ^nop: 20000 calls, getppid\(\) unchanged, no probe counted$
EXPECT ^removed: the text of all 3 sites restored$
EXPECT ^rc 0$

NAME on every kernel: exact counts at an entry where only an int3 fits after the ftrace NOP (taken through ftrace), an interior trap site and an interior jump site, equal to a kprobe event's count
SMOKE
SETUP insmod kmod/kinstr.ko && echo 'p:kinstr_ref urandom_read_iter comm=$comm:string' > /sys/kernel/tracing/kprobe_events && \
	echo 'hist:keys=comm' > /sys/kernel/tracing/events/kprobes/kinstr_ref/trigger && \
	echo 1 > /sys/kernel/tracing/events/kprobes/kinstr_ref/enable
RUN sites=$(tests/vm/checks/pick_sites.py --need trap,jump urandom_read_iter) || exit 1; echo "sites: $sites"; \
	build/kinstr count --json -o /tmp/c.json -c 'dd if=/dev/urandom of=/dev/null bs=16 count=20000 status=none' \
	urandom_read_iter $sites; \
	ref=$(sed -n 's/.*comm: dd *} hitcount: *\([0-9]*\).*/\1/p' /sys/kernel/tracing/events/kprobes/kinstr_ref/hist); \
	python3 -c 'import json,sys; d=json.load(open("/tmp/c.json")); ref=int(sys.argv[1]); \
	[print(p["probe"], p["class"], p["action"], p["hits"], "kprobe", ref) for p in d["probes"]]; \
	assert d["command_status"] == 0; assert len(d["probes"]) == 3; \
	assert all(p["hits"] == 20000 == ref for p in d["probes"]), "counts differ"; \
	assert {p["class"] for p in d["probes"]} == {"ftrace", "jump", "trap"}; print("exact")' "$ref"
CLEANUP echo 0 > /sys/kernel/tracing/events/kprobes/kinstr_ref/enable; \
	echo '!hist:keys=comm' > /sys/kernel/tracing/events/kprobes/kinstr_ref/trigger; echo > /sys/kernel/tracing/kprobe_events
TIMEOUT 180
EXPECT ^sites: urandom_read_iter\+0x[0-9a-f]+ urandom_read_iter\+0x[0-9a-f]+$
EXPECT ^urandom_read_iter ftrace inline 20000 kprobe 20000$
EXPECT ^exact$

NAME exact counts at entry, interior and every return, equal to a kprobe event's count for the same process
STOCK
# the offsets and classes of Debian 6.1's build of __x64_sys_getppid (the test above derives them)
KERNEL 6.1
SETUP insmod kmod/kinstr.ko && echo 'p:kinstr_ref __x64_sys_getppid comm=$comm:string' > /sys/kernel/tracing/kprobe_events && \
	echo 'hist:keys=comm' > /sys/kernel/tracing/events/kprobes/kinstr_ref/trigger && \
	echo 1 > /sys/kernel/tracing/events/kprobes/kinstr_ref/enable
RUN build/kinstr count --json -o /tmp/c.json -c 'build/tests/vm/progs/getppid_loop 50000' __x64_sys_getppid \
	__x64_sys_getppid+0xb '__x64_sys_getppid%return' __x64_sys_getppid+0x12 __x64_sys_getppid+0x22; \
	ref=$(sed -n 's/.*comm: getppid_loop *} hitcount: *\([0-9]*\).*/\1/p' /sys/kernel/tracing/events/kprobes/kinstr_ref/hist); \
	python3 -c 'import json,sys; d=json.load(open("/tmp/c.json")); ref=int(sys.argv[1]); \
	[print(p["probe"], p["class"], p["action"], p["hits"], "kprobe", ref) for p in d["probes"]]; \
	assert d["command_status"] == 0; \
	assert all(p["hits"] == 50000 == ref for p in d["probes"]), "counts differ"; \
	assert {p["class"] for p in d["probes"]} == {"jump"}; print("exact"); \
	r=[p for p in d["probes"] if p["probe"] not in ("__x64_sys_getppid+0x5", "__x64_sys_getppid+0xb", \
	"__x64_sys_getppid+0x12", "__x64_sys_getppid+0x22")]; \
	print("returns:", " ".join(p["class"] + "/" + p["action"] for p in r))' "$ref"
CLEANUP echo 0 > /sys/kernel/tracing/events/kprobes/kinstr_ref/enable; \
	echo '!hist:keys=comm' > /sys/kernel/tracing/events/kprobes/kinstr_ref/trigger; echo > /sys/kernel/tracing/kprobe_events
TIMEOUT 180
EXPECT ^__x64_sys_getppid\+0xb jump inline 50000 kprobe 50000$
# the entry, +0x5: `push rbx; call` displaced by the jmp, the call emulated in the slot (push the
# return address +0xb, jmp to the callee); the flags are dead there by the C calling convention
EXPECT ^__x64_sys_getppid\+0x5 jump inline 50000 kprobe 50000$
# the return (`ret; int3 x4` after boot on a CPU without the return thunk) is a jump over its filler
EXPECT ^returns: jump/inline$
# mid-function, after a mov: the inline counter between pushfq and popfq (the flags are live)
EXPECT ^__x64_sys_getppid\+0x12 jump pushf 50000 kprobe 50000$
# a call alone (to __task_pid_nr_ns), emulated likewise
EXPECT ^__x64_sys_getppid\+0x22 jump (inline|pushf) 50000 kprobe 50000$
EXPECT ^exact$

NAME count FUNC where only an int3 fits after the ftrace NOP: the entry through an ftrace direct call (exact), the int3 with --no-ftrace, and -l says which
FEATURE ftrace_probes
SETUP insmod kmod/kinstr.ko
# urandom_read_iter begins `push rbx; mov rbx, rsi` and then a jump label: only an int3 fits
RUN L='dd if=/dev/urandom of=/dev/null bs=16 count=3000 status=none'; build/kinstr -l urandom_read_iter; \
	build/kinstr -l --json urandom_read_iter; echo; \
	build/kinstr count -c "$L" urandom_read_iter | grep urandom; \
	build/kinstr count --no-ftrace -c "$L" urandom_read_iter | grep urandom; \
	build/kinstr count --dry-run urandom_read_iter | grep urandom; \
	grep -c urandom_read_iter /sys/kernel/tracing/enabled_functions; true
EXPECT ^urandom_read_iter +ftrace +[0-9]+ jump +[1-9][0-9]* trap$
# the fentry NOP: +0x0, or after the ENDBR on an IBT kernel (6.12)
EXPECT "function":"urandom_read_iter","entry":"ftrace","entry_offset":(0|4),
EXPECT ^urandom_read_iter +ftrace +inline +3000$
EXPECT ^urandom_read_iter\+0x(5|9) +trap +inline +3000$
EXPECT ^urandom_read_iter +ftrace +0x[0-9a-f]{16} 0f 1f 44 00 00 $
# ftrace's direct call is gone with the probe
EXPECT ^0$

NAME kinstr -l lists probeable functions with the class of their entry probe
SETUP insmod kmod/kinstr.ko
RUN build/kinstr -l 'vfs_*'; build/kinstr -l --all 'entry_SYSCALL_64'; build/kinstr -l 'entry_SYSCALL_64'; \
	echo "rc=$?"
EXPECT ^vfs_read +jump +[1-9][0-9]* jump +[0-9]+ trap$
EXPECT ^entry_SYSCALL_64 +refused +0 jump +0 trap  in entry text
EXPECT ^kinstr: no probeable function matches 'entry_SYSCALL_64'$
EXPECT ^rc=1$

NAME many ftrace entries at once: 15 to 60 functions taken through ftrace direct calls in one install, each hit counted at its own probe (urandom_read_iter's exactly), removed together, ftrace left as it was
FEATURE ftrace_probes
SETUP insmod kmod/kinstr.ko
# every function of the kernel whose entry is taken through ftrace (167 on 6.1, 251 on 6.12)
RUN F=$(build/kinstr -l --json | \
	python3 -c 'import json,sys; \
	f=[x["function"] for x in json.load(sys.stdin) if x["entry"] == "ftrace" and "spec" not in x]; \
	f=["urandom_read_iter"] + [n for n in f if n != "urandom_read_iter"][:59]; print(" ".join(f))'); \
	set -- $F; echo "functions $#"; e0=$(wc -l < /sys/kernel/tracing/enabled_functions); \
	t0=$(date +%s%N); build/kinstr count --json -o /tmp/ft.json -c 'dd if=/dev/urandom of=/dev/null bs=16 count=5000 status=none' $F; \
	echo "count rc=$?"; t1=$(date +%s%N); echo "install, run and removal $(( (t1 - t0) / 1000000 )) ms"; \
	python3 -c 'import json; d=json.load(open("/tmp/ft.json"))["probes"]; \
	print(len(d), "probes,", sum(p["class"] == "ftrace" for p in d), "through ftrace"); \
	print("urandom", [p["hits"] for p in d if p["probe"] == "urandom_read_iter"])'; \
	echo "enabled functions $e0 -> $(wc -l < /sys/kernel/tracing/enabled_functions)"
TIMEOUT 300
EXPECT ^count rc=0$
EXPECT ^(1[5-9]|[2-5][0-9]|60) probes, \1 through ftrace$
EXPECT ^urandom \[5000\]$
EXPECT ^enabled functions ([0-9]+) -> \1$

NAME count -c exits with the command's status and prints the totals
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -c 'sh -c "exit 7"' vfs_read
EXIT 7
EXPECT ^PROBE +CLASS +ACTION +HITS$
# the entry, after the fentry NOP (after the ENDBR too on an IBT kernel: 6.12)
EXPECT ^vfs_read\+0x(5|9) +jump +inline +[0-9]+$

NAME count --dry-run shows the plan and patches nothing
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum 'vfs_*'); build/kinstr count --dry-run 'vfs_*' | tail -3; \
	b=$(build/tests/vm/progs/textsum 'vfs_*'); test "$a" = "$b" && echo unchanged
EXPECT ^dry run: [1-9][0-9]* probes, nothing patched$
EXPECT ^unchanged$

NAME errors name the rule: mid-instruction offset, refused site, unknown function, bad offset
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count vfs_read+0x2; build/kinstr count vfs_read+0x0; \
	build/kinstr count no_such_fn; build/kinstr count vfs_read+zz; build/kinstr count entry_SYSCALL_64; echo done
# inside the fentry NOP (5 bytes), or the ENDBR before it (4 bytes) on an IBT kernel
EXPECT ^kinstr: vfs_read\+0x2: not an instruction boundary \(instruction at \+0x0, [45] bytes\)$
EXPECT ^kinstr: vfs_read\+0x0: refused: (overlaps an ftrace site|a function's ENDBR, where indirect calls land)$
EXPECT ^kinstr: no_such_fn: no function 'no_such_fn' in the kernel's symbols$
EXPECT ^kinstr: vfs_read\+zz: bad offset 'zz' \(FUNC\+0xOFF\)$
EXPECT ^kinstr: entry_SYSCALL_64\+0x[0-9a-f]+: refused: in entry text
EXPECT ^done$

NAME many sites: every non-overlapping jump site of 20 busy functions while a 2-CPU workload runs; text restored after
STOCK
SETUP insmod kmod/kinstr.ko
RUN F="vfs_read vfs_write do_sys_openat2 ksys_read ksys_write security_file_permission fput do_filp_open \
	path_openat getname_flags kfree kmem_cache_free __x64_sys_getppid tcp_sendmsg \
	filp_close do_sys_poll vfs_fstatat __do_sys_newfstatat dput __x64_sys_read"; \
	before=$(build/tests/vm/progs/textsum "$(echo $F | tr ' ' ,)"); \
	want=$(sh tests/vm/progs/workload.sh); \
	build/kinstr count --every --json -o /tmp/many.json -c 'sh tests/vm/progs/workload.sh' $F > /dev/null; \
	got=$(sh tests/vm/progs/workload.sh); \
	after=$(build/tests/vm/progs/textsum "$(echo $F | tr ' ' ,)"); \
	python3 -c 'import json; d=json.load(open("/tmp/many.json")); p=d["probes"]; \
	print(len(p), "probes,", sum(x["hits"] > 0 for x in p), "hit,", sum(x["hits"] for x in p), "hits")'; \
	test "$before" = "$after" && echo text-restored; test "$want" = "$got" && echo output-unchanged; \
	python3 -c 'import json; d=json.load(open("/tmp/many.json")); assert len(d["probes"]) >= 300 \
	and d["command_status"] == 0; print("ok")'
TIMEOUT 600
EXPECT ^[0-9]+ probes, [1-9][0-9]* hit, [1-9][0-9]* hits$
EXPECT ^text-restored$
EXPECT ^output-unchanged$
EXPECT ^ok$

NAME kill -9 of kinstr count leaves no patched byte, and rmmod then succeeds
SMOKE
SETUP insmod kmod/kinstr.ko
RUN before=$(build/tests/vm/progs/textsum 'vfs_*,ksys_*'); \
	build/kinstr count --every -d 300 'vfs_read' 'vfs_write' 'ksys_read' > /dev/null 2>&1 & pid=$!; \
	for i in $(seq 30); do during=$(build/tests/vm/progs/textsum 'vfs_*,ksys_*'); \
	test "$during" != "$before" && break; kill -0 $pid || break; sleep 0.2; done; \
	test "$during" != "$before" && echo patched-while-running; \
	kill -9 $pid; wait $pid; \
	after=$(build/tests/vm/progs/textsum 'vfs_*,ksys_*'); \
	test "$before" = "$after" && echo restored-after-kill; rmmod kinstr && echo rmmod-ok
TIMEOUT 180
EXPECT ^patched-while-running$
EXPECT ^restored-after-kill$
EXPECT ^rmmod-ok$

NAME rmmod while a file descriptor holds probes is refused clearly, and works after close
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -d 30 vfs_read > /dev/null 2>&1 & pid=$!; sleep 5; \
	rmmod kinstr 2>&1; echo "rmmod-while-open=$?"; kill $pid; wait $pid; rmmod kinstr && echo rmmod-after-close
TIMEOUT 120
EXPECT in use
EXPECT ^rmmod-while-open=1$
EXPECT ^rmmod-after-close$

NAME refused requests: each gets its documented errno and refusal, and nothing is patched
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum '*'); build/tests/vm/progs/bad_requests; r=$?; \
	b=$(build/tests/vm/progs/textsum '*'); test "$a" = "$b" && echo text-unchanged; exit $r
TIMEOUT 120
EXPECT_NOT ^not ok
EXPECT ^ok mid-instruction site \(errno EILSEQ, refusal 2\)$
EXPECT ^ok SCOPE after the descriptor's ALLOC( \(|$)
EXPECT ^ok SCOPE of a directory not a cgroup( \(|$)
EXPECT ^ok SCOPE twice( \(|$)
EXPECT ^ok TALLY_CREATE twice( \(|$)
EXPECT ^ok TALLY_READ of an empty tally( \(|$)
EXPECT ^ok a tally probe without the descriptor's tally \(errno ENODEV, refusal 10\)$
EXPECT ^ok a span probe without the descriptor's spans \(errno ENODEV, refusal 10\)$
EXPECT ^ok SPAN_CREATE twice( \(|$)
EXPECT ^ok SPAN_READ of empty spans( \(|$)
EXPECT ^ok TIMERS_CREATE by two keys( \(|$)
EXPECT ^ok TIMER_BY of timers that timed nothing( \(|$)
EXPECT ^ok SYNC after the scope's descriptor closed
EXPECT ^ok a predicate count > 4096 installs$
EXPECT ^ok a predicate with an unknown op \(errno EINVAL, refusal 10\)$
EXPECT ^ok a predicate whose jump goes backward \(b = 0xffff: out of range\) \(errno EINVAL, refusal 10\)$
EXPECT ^ok a predicate with a value index past nvals \(errno EINVAL, refusal 10\)$
EXPECT ^ok a predicate with a non-zero tail \(errno EINVAL, refusal 10\)$
EXPECT ^ok a predicate deeper than the stack \(errno EINVAL, refusal 10\)$
EXPECT ^ok SYNC after the predicates$
EXPECT ^ok kinstr.ko's own text \(errno EFAULT, refusal 1\)$
EXPECT ^ok jump label site \(errno EPERM, refusal 1\)$
EXPECT ^ok a jump over an instruction and a call, the call emulated, installs
EXPECT ^ok a displaced call that pushes another return address \(errno ENOEXEC
EXPECT ^ok a jump that displaces a call and the instruction after it \(errno EPERM
EXPECT ^ok an action past the last one \(errno EINVAL, refusal 10\)$
EXPECT ^ok a no-op jump probe installs
EXPECT ^ok arg set on a no-op probe \(errno EINVAL, refusal 10\)$
EXPECT ^ok a no-op ftrace probe installs
EXPECT ^ok unknown non-zero tail
EXPECT ^ok HELD with an unknown flag
EXPECT ^ok HELD with its reserved field set
EXPECT ^ok HELD with nothing held: count 0$
EXPECT ^text-unchanged$

NAME an ioctl fuzzer's 100,000 random requests install nothing and leave the text and log clean
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum '*'); build/tests/vm/progs/ioctl_fuzz 100000 0x$(date +%s); r=$?; \
	b=$(build/tests/vm/progs/textsum '*'); test "$a" = "$b" && echo text-unchanged; exit $r
TIMEOUT 300
EXPECT ^100000 requests, [0-9]+ accepted, 0 installs accepted$
EXPECT ^text-unchanged$

NAME storm: 10,000 probe installs and removals in 200 batches on hot functions while both CPUs work; no leak
SETUP insmod kmod/kinstr.ko
BEFORE (while :; do sh tests/vm/progs/workload.sh > /dev/null; done) & \
	while :; do build/tests/vm/progs/getppid_loop 20000 > /dev/null; done
RUN a=$(build/tests/vm/progs/textsum '*'); \
	build/tests/vm/progs/storm 200 50 vfs_read vfs_write ksys_read ksys_write security_file_permission fput \
	__x64_sys_getppid do_sys_openat2 kfree kmem_cache_free path_openat dput; r=$?; \
	b=$(build/tests/vm/progs/textsum '*'); test "$a" = "$b" && echo text-restored; exit $r
TIMEOUT 900
EXPECT ^10000 installs and 10000 removals in 200 batches of 50 over [0-9]+ sites
EXPECT ^leak none$
EXPECT ^text-restored$

NAME one set of 10,000 jump probes (one per function, kernel order): installed, jumps in, removed, installed with wait, removed; every byte of every site checked after each step
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum '*'); build/bench/install_time pick 12600 /tmp/cand.txt && \
	build/bench/install_time time 10000 /tmp/cand.txt; r=$?; \
	b=$(build/tests/vm/progs/textsum '*'); test "$a" = "$b" && echo text-restored; exit $r
TIMEOUT 600
EXPECT ^kinstr: 10000 jump probes in 1 sets;
EXPECT ^kinstr-install n=10000 sets=1 .* verify=ok$
EXPECT_NOT FAIL
EXPECT ^text-restored$

NAME a name kallsyms holds for several functions is refused with each candidate; -l names each as NAME@ADDR, which count takes
STOCK
SETUP insmod kmod/kinstr.ko
RUN echo "kallsyms has $(awk '$2 ~ /^[tT]$/ && $3 == "dummy_handler"' /proc/kallsyms | wc -l)"; \
	build/kinstr count -d 1 dummy_handler; echo "rc=$?"; \
	spec=$(build/kinstr -l dummy_handler | awk '{print $1}' | head -1); echo "listed $spec"; \
	build/kinstr count -d 1 "$spec"; echo "rc=$?"; \
	build/kinstr disasm "$spec" | head -1
TIMEOUT 180
EXPECT ^kallsyms has [2-9]$
EXPECT ^kinstr: dummy_handler: [2-9] functions are named 'dummy_handler': dummy_handler@0x[0-9a-f]+, dummy_handler@0x[0-9a-f]+.*; name one as NAME@ADDR$
EXPECT ^rc=1$
EXPECT ^listed dummy_handler@0x[0-9a-f]+$
EXPECT ^rc=0$
EXPECT ^dummy_handler

NAME count --by comm: two programs of different names calling getppid 3,000 and 7,000 times are counted exactly under their comms, none lost; --by pid gives two processes of one name a row each; --by value counts a read's size argument; an unknown key and --by value without a value are refused
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/gp_alpha && cp build/tests/vm/progs/getppid_loop /tmp/gp_beta; \
	build/kinstr count --by comm --json -c '/tmp/gp_alpha 3000 >/dev/null; /tmp/gp_beta 7000 >/dev/null' __x64_sys_getppid >/tmp/by.json; \
	python3 -c 'import json; d=json.load(open("/tmp/by.json")); [print(r["comm"], r["hits"]) for r in d["rows"] if r["comm"].startswith("gp_")]; print("lost", d["lost"], "overflow", d["overflow"])'; \
	build/kinstr count --by pid --json -c '/tmp/gp_alpha 100 >/dev/null & /tmp/gp_alpha 200 >/dev/null & wait' __x64_sys_getppid >/tmp/byp.json; \
	python3 -c 'import json; d=json.load(open("/tmp/byp.json")); r=sorted(x["hits"] for x in d["rows"] if x["comm"]=="gp_alpha"); print("pid rows of gp_alpha:", r, "distinct pids:", len({x["pid"] for x in d["rows"] if x["comm"]=="gp_alpha"}))'; \
	build/kinstr count --by value -c 'dd if=/dev/zero of=/dev/null bs=4097 count=7 2>/dev/null' 'ksys_read(count)' | awk '$2 == 4097 { print "value 4097:", $NF }'; \
	build/kinstr count --by cpu __x64_sys_getppid 2>&1; echo "rc $?"; build/kinstr count --by value __x64_sys_getppid 2>&1; echo "rc $?"; \
	build/kinstr count --folded __x64_sys_getppid 2>&1; echo "rc $?"
EXPECT ^gp_alpha 3000$
EXPECT ^gp_beta 7000$
EXPECT ^lost 0 overflow 0$
EXPECT ^pid rows of gp_alpha: \[100, 200\] distinct pids: 2$
EXPECT ^value 4097: 7$
EXPECT ^kinstr: --by: comm, pid, tid, value or stack, not 'cpu'$
EXPECT ^kinstr: --folded goes with --by stack$
EXPECT ^kinstr: --by value: '__x64_sys_getppid' names no value: give SPEC\(VALUE\), e.g. 'vfs_read\(count\)'$
EXPECT ^rc 2$
TIMEOUT 300


NAME options anywhere: -c, -d and -o after the specs work in count, profile, trace and cover as they do in attach (count took '-c' for a function name)
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count __x64_sys_getppid -c 'build/tests/vm/progs/getppid_loop 321' | grep -E '^__x64_sys_getppid'; echo "count rc $?"; \
	build/kinstr profile __x64_sys_getppid -c 'build/tests/vm/progs/getppid_loop 123' --json -o /tmp/oa.json; echo "profile rc $?"; \
	python3 -c 'import json; d=json.load(open("/tmp/oa.json")); print("profile calls", [f["calls"] for f in d["functions"]])'; \
	rm -rf /tmp/oa-t; build/kinstr trace __x64_sys_getppid -o /tmp/oa-t -c 'build/tests/vm/progs/getppid_loop 55' > /dev/null; echo "trace rc $?"; \
	build/kinstr report /tmp/oa-t | grep -E '^ *__x64_sys_getppid'; \
	build/kinstr count __x64_sys_getppid -- -c 2>&1; echo "after -- rc $?"
EXPECT ^__x64_sys_getppid(\+0x[0-9a-f]+)? +[a-z]+ +[a-z]+ +321$
EXPECT ^count rc 0$
EXPECT ^profile rc 0$
EXPECT ^profile calls \[123\]$
EXPECT ^trace rc 0$
EXPECT ^ *__x64_sys_getppid\S* +55\b
EXPECT ^kinstr: -c: no function '-c' in the kernel's symbols$
EXPECT ^after -- rc [12]$
TIMEOUT 240

NAME --json -c CMD > FILE is JSON alone: CMD's own output goes to stderr (count, count --by, profile, cover, span); with -o FILE CMD keeps stdout
STOCK
SETUP insmod kmod/kinstr.ko
RUN g='build/tests/vm/progs/getppid_loop 10'; \
	for c in "count" "count --by comm" "profile" "cover" "span __x64_sys_getppid%return"; do \
		build/kinstr $c --json -c "$g" __x64_sys_getppid > /tmp/js.out 2> /tmp/js.err; \
		echo "$c: rc $? json $(python3 -c 'import json,sys; json.load(open("/tmp/js.out")); print("ok")' 2>&1 | tail -1) cmd on stderr $(grep -c 'getppid called 10 times' /tmp/js.err)"; done; \
	build/kinstr count --json -o /tmp/js.json -c "$g" __x64_sys_getppid > /tmp/js.out; echo "with -o: cmd on stdout $(grep -c 'getppid called 10 times' /tmp/js.out)"
EXPECT ^count: rc 0 json ok cmd on stderr 1$
EXPECT ^count --by comm: rc 0 json ok cmd on stderr 1$
EXPECT ^profile: rc 0 json ok cmd on stderr 1$
EXPECT ^cover: rc 0 json ok cmd on stderr 1$
EXPECT ^span __x64_sys_getppid%return: rc 0 json ok cmd on stderr 1$
EXPECT ^with -o: cmd on stdout 1$
TIMEOUT 300

NAME count --by counts in kinstr.ko's tables, not through the trace buffers: with buffers of 8 KiB a trace of 50,000 getppid calls loses most of them, while count --by comm and --by tid of the same calls count every one (no lost, no overflow)
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/getppid_loop /tmp/gp_alpha; \
	rm -rf /tmp/tr-by; build/kinstr trace --buffer-size 8K --subbuf-size 4K -o /tmp/tr-by -c '/tmp/gp_alpha 50000 >/dev/null' __x64_sys_getppid 2>&1 | sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost, .*/trace \1 \2/p' | awk '{ print "trace lost some:", ($3 > 0), "all seen:", ($2 + $3 >= 50000) }'; \
	for k in comm tid; do build/kinstr count --by $k --json -c '/tmp/gp_alpha 50000 >/dev/null' __x64_sys_getppid >/tmp/bt.json; \
	python3 -c 'import json,sys; d=json.load(open("/tmp/bt.json")); print(sys.argv[1], sum(r["hits"] for r in d["rows"] if r["comm"] == "gp_alpha"), "lost", d["lost"], "overflow", d["overflow"])' $k; done
EXPECT ^trace lost some: 1 all seen: 1$
EXPECT ^comm 50000 lost 0 overflow 0$
EXPECT ^tid 50000 lost 0 overflow 0$

NAME count --by value keys a string whole (every library under /lib/x86_64-linux-gnu/ was one row of its first 15 characters) with the process's comm beside it, and prints a number whole (the hex was cut)
STOCK
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count --by value --json -c 'ls / >/dev/null' 'do_filp_open(path=+0(pathname):string)' > /tmp/bv.json; echo "rc $?"; \
	python3 -c 'import json; d=json.load(open("/tmp/bv.json")); rows=d["rows"]; \
	libs=sorted({r["value"] for r in rows if r["value"].startswith("/lib/x86_64-linux-gnu/")}); \
	print("libraries", len(libs), "libc", any(v.startswith("/lib/x86_64-linux-gnu/libc.so") for v in libs), \
	"distinct", len({r["value"] for r in d["rows"]}) == len(d["rows"]), "comm is not the value", all(r["comm"] != r["value"][:15] for r in rows))'; \
	build/kinstr count --by value -c 'ls / >/dev/null' 'do_filp_open(path=+0(pathname):string)' | awk '$NF ~ /^\/lib\/x86_64-linux-gnu\/libc\.so/ { print "text row:", $NF }'; \
	build/kinstr count --by value -c 'ls / >/dev/null' 'kfree(object)' | awk '$3 ~ /^\(0x[0-9a-f]+\)$/ { n++; if (length($3) == 20) w++ } END { print "kfree rows", (n > 0), "whole hex", (w > 0) }'
EXPECT ^rc 0$
EXPECT ^libraries [2-9][0-9]* libc True distinct True comm is not the value True$
EXPECT ^text row: /lib/x86_64-linux-gnu/libc\.so\.6$
EXPECT ^kfree rows 1 whole hex 1$
TIMEOUT 240

NAME count --by value of a string against the kernel's own kprobe event: the do_filp_open paths of sh -c '/bin/ls /' (the shell, then ls in its place), each string with its count, the same as a kprobe's +0(+0(%si)):string records for that process; with string[8] the same hits, exactly the 7-character values marked [full]
SETUP insmod kmod/kinstr.ko
RUN T=/sys/kernel/tracing; build/kinstr count --by value --json -c '/bin/ls /' 'do_filp_open(path=+0(pathname):string)' > /tmp/bv.json 2>/dev/null; echo "rc $?"; \
	echo 'p:kinstr_fo do_filp_open path=+0(+0(%si)):string' > $T/kprobe_events && echo > $T/trace && \
	echo 1 > $T/events/kprobes/kinstr_fo/enable && sh -c '/bin/ls /' | cat > /dev/null; echo 0 > $T/events/kprobes/kinstr_fo/enable; \
	cp $T/trace /tmp/ref.txt; echo > $T/kprobe_events; \
	python3 -c 'import json, collections, re; rows=json.load(open("/tmp/bv.json"))["rows"]; \
	k=collections.Counter(); [k.update({r["value"]: r["hits"]}) for r in rows]; \
	ev=[m.groups() for m in (re.search(r"^\s*(\S+)-(\d+)\s.*path=\"([^\"]*)\"", l) for l in open("/tmp/ref.txt")) if m]; \
	pid=[p for c, p, v in ev if c == "ls"][0]; ref=collections.Counter(v for c, p, v in ev if p == pid); \
	print("kinstr", sum(k.values()), "strings", len(k), "kprobe", sum(ref.values()), "strings", len(ref), "same", k == ref, \
	"" if k == ref else sorted((k - ref).items())[:3] + sorted((ref - k).items())[:3]); \
	print("/ listed by ls alone:", [(r["comm"], r["comm_several"]) for r in rows if r["value"] == "/"])'; \
	build/kinstr count --by value --json -c '/bin/ls /' 'do_filp_open(path=+0(pathname):string[8])' > /tmp/b8.json 2>/dev/null; \
	python3 -c 'import json; rows=json.load(open("/tmp/b8.json"))["rows"]; whole=json.load(open("/tmp/bv.json"))["rows"]; \
	print("string[8]: hits", sum(r["hits"] for r in rows) == sum(r["hits"] for r in whole), \
	"full marks right", all(r["value_full"] == (len(r["value"]) == 7) for r in rows), \
	"some full", any(r["value_full"] for r in rows), "some not", any(not r["value_full"] for r in rows))'; \
	build/kinstr count --by value -c '/bin/ls /' 'do_filp_open(path=+0(pathname):string[8])' 2>/dev/null | grep -c ' \[full\]$' | sed 's/^[1-9][0-9]*$/text marks [full]/'
CLEANUP echo 0 > /sys/kernel/tracing/events/kprobes/kinstr_fo/enable 2>/dev/null; echo > /sys/kernel/tracing/kprobe_events; true
TIMEOUT 120
EXPECT ^rc 0$
EXPECT ^kinstr ([1-9][0-9]*) strings ([1-9][0-9]*) kprobe \1 strings \2 same True $
EXPECT ^/ listed by ls alone: \[\('ls', False\)\]$
EXPECT ^string\[8\]: hits True full marks right True some full True some not True$
EXPECT ^text marks \[full\]$

NAME count --by stack at the test module's nested functions: one stack per path, the site first, its frames those /proc/PID/stack gives the writer sleeping under the same call (function and offset); --folded root first; at the inner function the outer one calls it
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
CLEANUP i=0; until rmmod kinstr_test_timing 2>/dev/null; do i=$((i + 1)); [ $i -lt 50 ] || exit 1; sleep 0.2; done
RUN R=/sys/kernel/debug/kinstr_test; sh -c "echo sleep 2000 > $R/run" & w=$!; \
	build/kinstr count --json --by stack -d 3 kinstr_test_sleep > /tmp/st.json & k=$!; \
	for i in $(seq 20); do sleep 0.3; cat /proc/$w/stack > /tmp/ps.txt; grep -q kinstr_test_sleep /tmp/ps.txt && break; done; \
	cat /tmp/ps.txt; wait $k; kill -9 $w; wait $w 2>/dev/null; \
	python3 -c 'import json, re; d=json.load(open("/tmp/st.json")); \
	ps=[re.sub(r"^\[<[0-9a-f]+>\] (\S+)/0x[0-9a-f]+.*$", r"\1", l.strip()) for l in open("/tmp/ps.txt")]; \
	print("stacks", len(d["stacks"]), "lost", d["lost"], "hits", d["stacks"][0]["hits"] > 0); f=d["stacks"][0]["frames"]; \
	print("site", f[0] == d["stacks"][0]["probe"], f[0].split("+")[0]); \
	below=ps[ps.index(next(p for p in ps if p.startswith("kinstr_test_sleep+"))) + 1:]; \
	print("frames as /proc/PID/stack:", f[1:] == below, len(below)); print(f[1:]); print(below)'; \
	build/kinstr count --by stack --folded -c "sh -c 'echo outer 2 > $R/run'" kinstr_test_inner | \
		sed -n 's/^\(.*\);kt_run_write+0x[0-9a-f]*;\(kt_run+0x[0-9a-f]*;\)\{0,1\}kinstr_test_outer+0x[0-9a-f]*;kinstr_test_inner+0x[0-9a-f]* \([0-9]*\)$/folded ... kt_run_write outer inner \3/p'
TIMEOUT 180
EXPECT ^stacks 1 lost 0 hits True$
EXPECT ^site True kinstr_test_sleep$
EXPECT ^frames as /proc/PID/stack: True [4-9]$
EXPECT ^folded \.\.\. kt_run_write outer inner 2$
