# kinstr trace: the tracer (issue 5). Every trace is read by babeltrace2 in the guest
# (tests/vm/progs/check_trace.py: exit 0, no stderr but discard warnings, per-CPU time order).

NAME trace: exactly N getppid events with the right tid and return value, and argument and string values that match
SMOKE
SETUP insmod kmod/kinstr.ko
RUN build/kinstr trace -o /tmp/t1 -c 'build/tests/vm/progs/trace_workload 2000' __x64_sys_getppid \
	'__x64_sys_getppid%return' 'vfs_llseek(offset,whence)' 'do_filp_open(dfd,path=+0(pathname):string)' \
	> /tmp/o 2>&1; echo "rc=$?"; cat /tmp/o; \
	tid=$(sed -n 's/^tid \([0-9]*\) ppid.*/\1/p' /tmp/o); ppid=$(sed -n 's/^tid [0-9]* ppid \([0-9]*\)$/\1/p' /tmp/o); \
	python3 tests/vm/progs/check_trace.py /tmp/t1 --count __x64_sys_getppid trace_workload 2000 \
	--count '__x64_sys_getppid%return' trace_workload 2000 \
	--field-eq __x64_sys_getppid trace_workload tid "$tid" --field-eq __x64_sys_getppid trace_workload pid "$tid" \
	--field-eq '__x64_sys_getppid%return' trace_workload ret "$ppid" \
	--values vfs_llseek trace_workload offset "$(seq -s, 1000 1099)" --field-eq vfs_llseek trace_workload whence 0 \
	--count-where do_filp_open trace_workload path /tmp/kinstr-trace-probe 10 \
	--field-eq do_filp_open trace_workload dfd -100 --discarded 0 && \
	build/kinstr report /tmp/t1
TIMEOUT 240
EXPECT ^rc=0$
EXPECT ^kinstr: tracing 4 probes \(4 events\) into /tmp/t1$
EXPECT ^kinstr: [0-9]+ events recorded, 0 lost, in /tmp/t1$
EXPECT ^__x64_sys_getppid trace_workload: 2000 events, tids \['[0-9]+'\]$
EXPECT ^vfs_llseek trace_workload offset: 100 values as expected$
EXPECT ^do_filp_open trace_workload path = /tmp/kinstr-trace-probe: 10 events$
EXPECT ^trace ok$
EXPECT ^__x64_sys_getppid%return +[0-9]+$

NAME trace FUNC where only an int3 fits after the ftrace NOP: recorded through an ftrace direct call, with the stack the int3 sees (--no-ftrace); %rip is the NOP, 5 bytes before the int3
SETUP insmod kmod/kinstr.ko
# urandom_read_iter begins `push rbx; mov rbx, rsi` and then a jump label: only an int3 fits
RUN L='dd if=/dev/urandom of=/dev/null bs=16 count=500 status=none'; E=/sys/kernel/tracing/enabled_functions; \
	for m in ftrace int3; do o=; [ $m = int3 ] && o=--no-ftrace; \
	build/kinstr trace $o -o /tmp/tf-$m -c "sh -c 'echo enabled \$(grep -c urandom_read_iter $E); $L'" \
	'urandom_read_iter(ra=+0(%rsp):x64,rip=%rip:x64)' > /tmp/o-$m 2>&1; echo "$m rc=$?"; grep '^enabled' /tmp/o-$m; \
	python3 tests/vm/progs/check_trace.py /tmp/tf-$m --count urandom_read_iter dd 500 \
	--distinct urandom_read_iter dd ra --distinct urandom_read_iter dd rip | tee /tmp/c-$m; done; \
	python3 -c 'import re; d={m: dict(re.findall(r"dd (\w+) distinct: (.*)", open("/tmp/c-" + m).read())) \
	for m in ("ftrace", "int3")}; f, t = d["ftrace"], d["int3"]; print("ra", f["ra"], t["ra"]); \
	assert f["ra"] == t["ra"] and " " not in f["ra"] and int(f["ra"], 16) >> 63, "return addresses differ"; \
	assert int(t["rip"], 16) - int(f["rip"], 16) == 5, (f["rip"], t["rip"]); print("same frame, rip 5 apart")'
TIMEOUT 180
EXPECT ^ftrace rc=0$
EXPECT ^int3 rc=0$
# while the ftrace probe is in, ftrace lists the function; the int3 leaves ftrace alone
EXPECT ^enabled 1$
EXPECT ^enabled 0$
EXPECT ^same frame, rip 5 apart$

NAME trace overload (discard): tiny buffers on a hot probe lose events; recorded + lost = calls, and babeltrace2 shows the same discarded count
SETUP insmod kmod/kinstr.ko
RUN build/kinstr trace --buffer-size 8K --subbuf-size 4K -o /tmp/t2 -c 'build/tests/vm/progs/getppid_loop 100000' \
	'__x64_sys_getppid(stack=%rsp:string[128])' > /tmp/o 2>&1; echo "rc=$?"; cat /tmp/o; \
	rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1/p' /tmp/o); \
	lost=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\2/p' /tmp/o); \
	echo "recorded $rec lost $lost sum $((rec + lost))"; test "$lost" -gt 0 && echo lost-some; \
	python3 tests/vm/progs/check_trace.py /tmp/t2 --discarded "$lost" --total "$rec"
TIMEOUT 300
EXPECT ^rc=0$
EXPECT ^recorded [0-9]+ lost [0-9]+ sum 100000$
EXPECT ^lost-some$
EXPECT ^trace ok$

NAME trace overload (overwrite): the flight recorder keeps the newest sub-buffers; recorded + lost = calls, as babeltrace2 counts them
SETUP insmod kmod/kinstr.ko
RUN build/kinstr trace --overwrite --buffer-size 8K --subbuf-size 4K -o /tmp/t3 \
	-c 'build/tests/vm/progs/getppid_loop 100000' '__x64_sys_getppid(stack=%rsp:string[128])' > /tmp/o 2>&1; \
	echo "rc=$?"; cat /tmp/o; \
	rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1/p' /tmp/o); \
	lost=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\2/p' /tmp/o); \
	echo "recorded $rec lost $lost sum $((rec + lost))"; \
	python3 tests/vm/progs/check_trace.py /tmp/t3 --discarded "$lost" --total "$rec"
TIMEOUT 300
EXPECT ^rc=0$
EXPECT ^recorded [0-9]+ lost [0-9]+ sum 100000$
EXPECT ^kinstr: cpu [0-9]+: [0-9]+ events recorded, [1-9][0-9]* lost \(full 0, overwritten [1-9]
EXPECT ^trace ok$

NAME trace: bad values are refused with the rule, before anything is patched or written
ONCE
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum 'vfs_*'); \
	build/kinstr trace -o /tmp/t4 'vfs_read(nosuch)'; echo "rc=$?"; \
	build/kinstr trace -o /tmp/t4 'vfs_read(ret)'; echo "rc=$?"; \
	build/kinstr trace -o /tmp/t4 'vfs_read%return(count)'; echo "rc=$?"; \
	build/kinstr trace -o /tmp/t4 'vfs_read(%rxx)'; echo "rc=$?"; \
	build/kinstr trace -o /tmp/t4 'vfs_read(count:u7)'; echo "rc=$?"; \
	test ! -e /tmp/t4 && echo no-trace-dir; b=$(build/tests/vm/progs/textsum 'vfs_*'); test "$a" = "$b" && echo text-same
EXPECT ^kinstr: vfs_read: vfs_read has no argument 'nosuch' \(it has: file, buf, count, pos\)$
EXPECT ^kinstr: vfs_read: 'ret': the return value exists only at FUNC%return$
EXPECT ^kinstr: vfs_read%return: argument 'count': arguments by name only at vfs_read's entry
EXPECT ^kinstr: vfs_read: unknown register '%rxx'
EXPECT ^kinstr: vfs_read: unknown type 'u7'
EXPECT ^rc=1$
EXPECT_NOT ^rc=0$
EXPECT ^no-trace-dir$
EXPECT ^text-same$

NAME trace: kill -9 mid-trace restores the text and frees the buffers; rmmod then works; the partial trace still opens
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum 'vfs_*'); \
	(while :; do cat /proc/version > /dev/null; done) & w=$!; \
	build/kinstr trace --subbuf-size 4K -o /tmp/t5 vfs_read 'vfs_write(count)' 2>/dev/null & k=$!; \
	i=0; while [ ! -e /tmp/t5/metadata ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done; sleep 3; \
	kill -9 $k; wait $k; kill $w; wait $w 2>/dev/null; \
	b=$(build/tests/vm/progs/textsum 'vfs_*'); test "$a" = "$b" && echo text-restored; \
	rmmod kinstr && echo rmmod-ok; ls -la /tmp/t5; python3 tests/vm/progs/check_trace.py /tmp/t5
TIMEOUT 180
EXPECT ^text-restored$
EXPECT ^rmmod-ok$
EXPECT ^trace ok$

NAME kinstr report on a truncated trace: a clear error naming the file, no crash
ONCE
SETUP insmod kmod/kinstr.ko
RUN build/kinstr trace -o /tmp/t6 -c 'build/tests/vm/progs/getppid_loop 3000' __x64_sys_getppid 2>/dev/null && \
	python3 tests/vm/progs/check_trace.py /tmp/t6 --count __x64_sys_getppid getppid_loop 3000 | tail -1 && \
	s=$(ls /tmp/t6/stream_* | head -1) && truncate -s -100 "$s" && build/kinstr report /tmp/t6; echo "rc=$?"
EXPECT ^trace ok$
EXPECT ^kinstr: /tmp/t6/stream_[0-9]+: truncated packet at offset
EXPECT ^rc=1$

NAME trace --live prints events as text while recording, and -d ends it
SETUP insmod kmod/kinstr.ko
RUN (while :; do cat /proc/version > /dev/null; done) & w=$!; \
	build/kinstr trace --live -d 3 -o /tmp/t7 'vfs_read(count)' > /tmp/o 2>&1; echo "rc=$?"; kill $w; wait $w 2>/dev/null; \
	grep -m3 vfs_read /tmp/o; n=$(grep -c ' vfs_read: count=' /tmp/o); \
	rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, 0 lost.*/\1/p' /tmp/o); \
	test "$n" -gt 0 && test "$n" = "$rec" && echo "live lines = events recorded"; \
	python3 tests/vm/progs/check_trace.py /tmp/t7 --total "$rec" | tail -1
TIMEOUT 60
EXPECT ^rc=0$
EXPECT ^\[[0-9]+\.[0-9]{9}\] cpu [0-9]+ cat [0-9]+/[0-9]+ vfs_read: count=[0-9]+$
EXPECT ^live lines = events recorded$
EXPECT ^trace ok$

NAME trace --clock local and mono: exact events, per-CPU order, and wall-clock times that babeltrace2 shows within a minute of date
SETUP insmod kmod/kinstr.ko
RUN for c in local mono; do \
	build/kinstr trace --clock $c -o /tmp/t8-$c -c 'build/tests/vm/progs/getppid_loop 1000' __x64_sys_getppid 2>/dev/null; \
	python3 tests/vm/progs/check_trace.py /tmp/t8-$c --count __x64_sys_getppid getppid_loop 1000 | tail -1; \
	first=$(babeltrace2 --clock-seconds /tmp/t8-$c | head -1 | sed 's/^\[\([0-9]*\)\..*/\1/'); now=$(date +%s); \
	d=$((now - first)); test $d -ge 0 && test $d -lt 60 && echo "$c: wall clock ok"; \
	grep -q "name = \"\?$( [ $c = local ] && echo local || echo monotonic)" /tmp/t8-$c/metadata && echo "$c: clock named"; \
	done; build/kinstr trace --clock tsc -o /tmp/t9 vfs_read; echo "rc=$?"
EXPECT ^local: wall clock ok$
EXPECT ^mono: wall clock ok$
EXPECT ^local: clock named$
EXPECT ^mono: clock named$
EXPECT ^kinstr: --clock: mono or local, not 'tsc'$
EXPECT ^rc=2$

NAME trace ends when asked: -d 2 on rw_verify_area (every read and write of a busy dd, and the trace's own writes) with tiny buffers stops in bounded time; lost reported; babeltrace2 agrees
SETUP insmod kmod/kinstr.ko
RUN build/kinstr -l rw_verify_area; \
	t0=$(date +%s%N); build/kinstr trace --clock local --buffer-size 16K --subbuf-size 4K -d 2 -o /tmp/tb0 \
	rw_verify_area > /dev/null 2>&1; t1=$(date +%s%N); idle=$(( (t1 - t0) / 1000000 )); \
	(dd if=/dev/zero of=/dev/null bs=1 count=2000000000 2>/dev/null) & w=$!; \
	t0=$(date +%s%N); build/kinstr trace --clock local --buffer-size 16K --subbuf-size 4K -d 2 -o /tmp/tb1 \
	rw_verify_area > /tmp/o 2>&1; echo "rc=$?"; t1=$(date +%s%N); kill $w; wait $w 2>/dev/null; cat /tmp/o; \
	ms=$(( (t1 - t0) / 1000000 )); echo "wall $ms ms, $idle ms without the load"; \
	[ $ms -lt $((idle + 10000)) ] && echo bounded; \
	rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1/p' /tmp/o); \
	lost=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\2/p' /tmp/o); \
	echo "recorded $rec lost $lost"; python3 tests/vm/progs/check_trace.py /tmp/tb1 --discarded "$lost" --total "$rec"
TIMEOUT 120
EXPECT ^rw_verify_area +(jump|ftrace|trap) 
EXPECT ^rc=0$
EXPECT ^recorded [1-9][0-9]* lost [0-9]+$
EXPECT ^bounded$
EXPECT ^trace ok$

NAME trace --max-size 1M: the streams stay within 1M, what was cut is counted as lost (kinstr and babeltrace2 agree), the trace reads
SETUP insmod kmod/kinstr.ko
RUN (dd if=/dev/zero of=/dev/null bs=1 count=2000000000 2>/dev/null) & w=$!; \
	build/kinstr trace --clock local --max-size 1M -d 4 -o /tmp/tb2 rw_verify_area > /tmp/o 2>&1; echo "rc=$?"; \
	kill $w; wait $w 2>/dev/null; cat /tmp/o; size=$(cat /tmp/tb2/stream_* | wc -c); echo "streams $size bytes"; \
	[ "$size" -le 1048576 ] && echo size-ok; \
	rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1/p' /tmp/o); \
	lost=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\2/p' /tmp/o); \
	[ "$lost" -gt 0 ] && echo lost-some; build/kinstr report /tmp/tb2 | tail -n 4; \
	python3 tests/vm/progs/check_trace.py /tmp/tb2 --discarded "$lost" --total "$rec"
TIMEOUT 120
EXPECT ^rc=0$
EXPECT ^kinstr: the trace reached --max-size \(1048576 bytes\): later events are counted as lost$
EXPECT over --max-size [1-9][0-9]*\)$
EXPECT ^size-ok$
EXPECT ^lost-some$
EXPECT ^trace ok$

NAME trace stops on SIGINT within bounded time on a hot probe, probes removed first, and the trace reads
SETUP insmod kmod/kinstr.ko
RUN (dd if=/dev/zero of=/dev/null bs=1 count=2000000000 2>/dev/null) & w=$!; \
	build/kinstr trace --clock local --buffer-size 16K --subbuf-size 4K -o /tmp/tb3 rw_verify_area > /tmp/o 2>&1 & p=$!; \
	i=0; while ! grep -q '^kinstr: tracing' /tmp/o && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; sleep 1; \
	(sleep 30; kill -9 $p) > /dev/null 2>&1 & wd=$!; \
	t0=$(date +%s%N); kill -INT $p; wait $p; echo "rc=$?"; t1=$(date +%s%N); kill $wd $w 2>/dev/null; \
	cat /tmp/o; ms=$(( (t1 - t0) / 1000000 )); echo "stop $ms ms"; [ $ms -lt 10000 ] && echo stopped-in-time; \
	rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1/p' /tmp/o); \
	lost=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\2/p' /tmp/o); \
	python3 tests/vm/progs/check_trace.py /tmp/tb3 --discarded "$lost" --total "$rec"
TIMEOUT 120
EXPECT ^rc=0$
EXPECT ^stopped-in-time$
EXPECT ^trace ok$

NAME trace in babeltrace2's Python bindings (python3-bt2) and in trace-cmd: every event's fields have the classes the metadata declares (sizes, signedness, bases; strings and comm), the bindings see the same events as babeltrace2's CLI; report --trace-dat writes a trace.dat that trace-cmd report reads with the same event count and values
ONCE
SETUP insmod kmod/kinstr.ko
RUN build/kinstr trace -o /tmp/tb -c 'build/tests/vm/progs/trace_workload 200' '__x64_sys_getppid%return' 'vfs_llseek(offset,whence)' \
	'do_filp_open(dfd,path=+0(pathname):string)' 'ksys_read(count:x64)' > /dev/null 2>&1; echo "rc=$?"; \
	/usr/bin/python3 tests/vm/progs/check_bt2.py /tmp/tb; \
	build/kinstr report --trace-dat /tmp/t.dat /tmp/tb 2>&1; trace-cmd report -i /tmp/t.dat > /tmp/tc.txt 2>/tmp/tc.err; echo "trace-cmd rc=$?"; \
	echo "trace-cmd events $(grep -cE '^ +\S+-[0-9]+ +\[[0-9]+\] +[0-9.]+: ' /tmp/tc.txt), babeltrace2 $(babeltrace2 /tmp/tb | wc -l)"; \
	grep -m1 -oE 'trace_workload-[0-9]+ +\[[0-9]+\] +[0-9.]+: do_filp_open: +comm=trace_workload dfd=-100 path=/etc/ld.so.cache' /tmp/tc.txt | sed 's/-[0-9].*do_filp_open:/ do_filp_open:/; s/  */ /g'; \
	grep -m1 -oE 'vfs_llseek: +comm=trace_workload offset=1000 whence=0' /tmp/tc.txt | sed 's/  */ /g'; \
	grep -m1 -oE 'ksys_read: +comm=\S+ count=0x[0-9a-f]+' /tmp/tc.txt | sed 's/  */ /g; s/=0x[0-9a-f]*/=0xHEX/'
TIMEOUT 180
EXPECT ^rc=0$
EXPECT ^__x64_sys_getppid%return: 200 events, fields comm:string, pid:int, ret:int, tid:int$
EXPECT ^vfs_llseek: 100 events, fields comm:string, offset:int, pid:int, tid:int, whence:int$
EXPECT ^do_filp_open: [0-9]+ events, fields comm:string, dfd:int, path:string, pid:int, tid:int$
EXPECT ^bt2 events [0-9]+, babeltrace2 lines [0-9]+$
EXPECT ^bt2 ok$
EXPECT ^kinstr: wrote /tmp/t.dat: [0-9]+ events$
EXPECT ^trace-cmd rc=0$
EXPECT ^trace-cmd events ([0-9]+), babeltrace2 \1$
EXPECT ^trace_workload do_filp_open: comm=trace_workload dfd=-100 path=/etc/ld.so.cache$
EXPECT ^vfs_llseek: comm=trace_workload offset=1000 whence=0$
EXPECT ^ksys_read: comm=\S+ count=0xHEX$

NAME report pairs FUNC and FUNC%return per thread: two processes calling getppid 1,000 and 500 times at once give as many calls as entry and return events (1,500 and the shell's own), none unpaired, min <= mean <= max, in --json and in the table
ONCE
SETUP insmod kmod/kinstr.ko
RUN build/kinstr trace -o /tmp/tp -c 'build/tests/vm/progs/getppid_loop 1000 >/dev/null & build/tests/vm/progs/getppid_loop 500 >/dev/null & wait' \
	__x64_sys_getppid '__x64_sys_getppid%return' >/dev/null 2>&1; echo "rc=$?"; \
	build/kinstr report --json /tmp/tp | python3 -c 'import json,sys; d=json.load(sys.stdin); ev={p["probe"]: p["events"] for p in d["probes"]}; \
	[print(x["function"], "calls = entries = returns:", x["calls"] == ev[x["function"]] == ev[x["function"] + "%return"], "at least 1500:", x["calls"] >= 1500, \
	"unpaired", x["unmatched_entries"] + x["unmatched_returns"], "ordered", 0 < x["min_ns"] <= x["mean_ns"] <= x["max_ns"]) for x in d["calls"]]'; \
	build/kinstr report /tmp/tp | grep -E '^__x64_sys_getppid +[0-9]+ ' | awk '{print "table", $1, ($2 >= 1500), $NF}'
TIMEOUT 180
EXPECT ^rc=0$
EXPECT ^__x64_sys_getppid calls = entries = returns: True at least 1500: True unpaired 0 ordered True$
EXPECT ^table __x64_sys_getppid 1 0$
