# The code cache (issue 15): kinstr cover --dry-run plans, kinstr cover runs copies the module proved.

NAME cover --dry-run plans a copy of syscall-path functions on the live kernel: every block counted, calls with the original's return address, a re-entry point at each return; nothing is installed
STOCK
SETUP insmod kmod/kinstr.ko
RUN before=$(build/tests/vm/progs/textsum '__x64_sys_getppid,vfs_read,ksys_read,do_sys_openat2'); \
	build/kinstr cover --dry-run __x64_sys_getppid vfs_read ksys_read do_sys_openat2; \
	after=$(build/tests/vm/progs/textsum '__x64_sys_getppid,vfs_read,ksys_read,do_sys_openat2'); \
	test "$before" = "$after" && echo text-unchanged
EXPECT ^FUNCTION +BLOCKS +PUSHF +INSNS +BYTES +CALLS +NATIVE +JLABEL +REENTRY$
EXPECT ^__x64_sys_getppid +[1-9][0-9]* +[0-9]+ +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]* +[0-9]+ +[0-9]+ +[1-9][0-9]*/[0-9]+ *$
EXPECT ^vfs_read +[1-9][0-9]* +[0-9]+ +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]* +[0-9]+ +[0-9]+ +[1-9][0-9]*/[0-9]+ *$
EXPECT ^ksys_read +[1-9][0-9]* .*$
EXPECT ^do_sys_openat2 +[1-9][0-9]* .*$
EXPECT_NOT refused \(
EXPECT ^kinstr: dry run, nothing installed: 4 planned, 0 refused;
EXPECT ^text-unchanged$

NAME cover --dry-run takes globs: every vfs_* function planned or refused with its reason, and the summary adds up
SETUP insmod kmod/kinstr.ko
RUN build/kinstr cover --dry-run 'vfs_*' > /tmp/cover.txt; echo "status $?"; \
	rows=$(grep -c '^vfs_' /tmp/cover.txt); ref=$(grep -c '^vfs_[^ ]* *refused (' /tmp/cover.txt); \
	echo "rows $rows refused $ref"; tail -1 /tmp/cover.txt; \
	build/kinstr cover --dry-run 'no_such_fn_*'; echo "status $?"
EXPECT ^status 0$
EXPECT ^rows [1-9][0-9]+ refused [0-9]+$
EXPECT ^kinstr: dry run, nothing installed: [1-9][0-9]* planned, [0-9]+ refused;
EXPECT ^kinstr: no function matches 'no_such_fn_\*'$
EXPECT ^status 1$

NAME cover --dry-run takes jump-label keys and static-call trampolines from the live kernel: each key is a kernel data symbol, each trampoline a __SCT__ symbol
STOCK
SETUP insmod kmod/kinstr.ko
RUN build/kinstr cover --dry-run --json kfree kmem_cache_free vfs_read do_sys_openat2 schedule \
	__schedule try_to_wake_up > /tmp/cover.json; echo "status $?"; python3 tests/vm/checks/cover_facts.py < /tmp/cover.json
EXPECT ^status 0$
EXPECT ^copied [1-9][0-9]* of 7$
EXPECT ^jump labels [1-9][0-9]* static calls [0-9]+$
EXPECT ^bad facts 0 \[\]$

NAME cover: the module proves every copy the builder makes (vfs_*, ksys_*, do_sys_*, __x64_sys_*, tcp_*: each handed over alone, verify-only) and accepts them all
SMOKE
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/cache_check accept 'vfs_*' 'ksys_*' 'do_sys_*' '__x64_sys_*' 'tcp_*'
EXPECT ^planned [1-9][0-9]{2,} \(builder refused [0-9]+\), module accepted [1-9][0-9]{2,}, refused 0$
EXPECT_NOT ^module refused
TIMEOUT 600

NAME cover: the module refuses a copy with one kind of damage each, naming the rule it broke (copied byte, re-aimed branch, call, native jmp, jump label, static call, counter, layout, boundary, entry point, a return with no re-entry point)
STOCK
SMOKE
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/cache_check mutate __x64_sys_getppid vfs_read ksys_read do_sys_openat2 kfree \
	kmem_cache_free try_to_wake_up
EXPECT ^mutation copy: refused .*\[copy\]
EXPECT ^mutation reloc: refused .*\[reloc\]
EXPECT ^mutation call: refused .*\[call\]
EXPECT ^mutation native: refused .*\[native\]
EXPECT ^mutation jump-label: refused .*\[jump-label\]
EXPECT ^mutation static-call: refused .*\[static-call\]
EXPECT ^mutation counter: refused .*\[counter\]
EXPECT ^mutation layout: refused .*\[layout\]
EXPECT ^mutation boundary: refused .*\[boundary\]
EXPECT ^mutation reentry: refused .*\[reentry\]
EXPECT ^mutation exit: refused .*\[exit\]
EXPECT_NOT ACCEPTED|no instruction of that form
TIMEOUT 300

NAME cover: the code cache's block counts of syscall paths equal kprobe events on each block's first instruction (separate runs of the same workload, differences of 1,000 and 2,000 passes)
STOCK
SMOKE
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/cover_vs_kprobes.py build/kinstr build/tests/vm/progs/cover_workload \
	__x64_sys_getppid ksys_read vfs_read do_sys_openat2
EXPECT ^blocks [1-9][0-9]+ compared [1-9][0-9]+ ran [1-9][0-9]+ mismatches 0$
EXPECT ^getppid first block difference 1000$
TIMEOUT 600

NAME cover: a block the original runs into (after a native instruction: start_thread_common's `mov es, ax; mov ds, bp`, each with a fixup, on 6.1) is counted where control comes back to the copy, and equals kprobe events on its first instruction (ref_workload, differences of 10 and 20 rounds)
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/cover_vs_kprobes.py --n 10,20 --counted-after build/kinstr build/tests/vm/progs/ref_workload \
	'start_thread*' '_copy_*_user' do_sys_poll cp_new_stat cp_statx do_pipe2
EXPECT ^functions with blocks counted after a native run [1-9][0-9]*$
EXPECT ^blocks [1-9][0-9]+ compared [1-9][0-9]+ ran [1-9][0-9]* mismatches 0$
EXPECT ^counted after compared [1-9][0-9]* ran [1-9][0-9]*$
TIMEOUT 600

NAME cover and count: a function another kinstr session holds is reported as held by that process (a count's probe in vfs_read, a code cache running ksys_read), not as bytes that do not decode or a damaged copy; cover -k leaves it out and covers the rest
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -c 'tests/vm/checks/held.sh cover vfs_read ksys_read' vfs_read > /tmp/o1 2>&1; echo "outer count $?"; \
	build/kinstr cover -c 'tests/vm/checks/held.sh count ksys_read' ksys_read > /tmp/o2 2>&1; echo "outer cover $?"; \
	grep -v '^  +\|no DWARF\|^PROBE\|^vfs_read+' /tmp/o1 /tmp/o2
EXPECT ^outer count 0$
EXPECT ^outer cover 0$
EXPECT ^/tmp/o1:kinstr: cover: no function left to cover \(1 refused, the first: held by another kinstr session \(pid OUTER\): its probe or its code cache is in the function\)$
EXPECT ^/tmp/o1:cover status 1$
EXPECT "refused":"held","at":"0x[0-9a-f]+","why":"held by another kinstr session \(pid OUTER\)
EXPECT ^/tmp/o1:ksys_read: [0-9]+/[0-9]+ blocks
EXPECT ^/tmp/o1:kinstr: covered [01]/1 functions, [0-9]+/[0-9]+ blocks .*; 1 refused$
EXPECT ^/tmp/o1:cover -k status 0$
EXPECT ^/tmp/o2:kinstr: ksys_read\+0x[0-9a-f]+: refused: held by another kinstr session \(pid OUTER\): its probe or its code cache is in the function$
EXPECT ^/tmp/o2:count status 1$
EXPECT_NOT do not decode|damaged|the module refused
TIMEOUT 300

NAME cover -c CMD: per-block counts and coverage of a syscall path, an lcov tracefile genhtml renders without a warning, and the text is the same after the run
STOCK
FEATURE code_cache
REQUIRES command -v genhtml
SETUP insmod kmod/kinstr.ko
RUN before=$(build/tests/vm/progs/textsum '__x64_sys_getppid,ksys_read,vfs_read'); rm -rf /tmp/cov /tmp/cov.info*; \
	build/kinstr cover --lcov /tmp/cov.info -c 'build/tests/vm/progs/cover_workload 300' __x64_sys_getppid ksys_read vfs_read; \
	echo "status $?"; genhtml -q -o /tmp/cov /tmp/cov.info > /tmp/genhtml.log 2>&1; echo "genhtml $? warnings $(grep -ci warn /tmp/genhtml.log)"; \
	test -f /tmp/cov/index.html && echo html; \
	after=$(build/tests/vm/progs/textsum '__x64_sys_getppid,ksys_read,vfs_read'); test "$before" = "$after" && echo text-unchanged
EXPECT ^__x64_sys_getppid: [1-9][0-9]*/[1-9][0-9]* blocks \([0-9.]+%\)$
EXPECT ^  \+0x[59] +300$
EXPECT ^vfs_read: [1-9][0-9]*/[1-9][0-9]* blocks
EXPECT ^kinstr: covered 3/3 functions, [1-9][0-9]*/[1-9][0-9]* blocks \([0-9.]+%\) in [0-9.]+ s; 0 refused$
EXPECT ^status 0$
EXPECT ^genhtml 0 warnings 0$
EXPECT ^html$
EXPECT ^text-unchanged$
TIMEOUT 300

NAME cover --lcov to a place it cannot write is refused before anything is covered (it ran the whole command first)
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN s=$(date +%s); build/kinstr cover --lcov /nonexistent/x.info -c 'sleep 40' ksys_read > /tmp/lc.out 2>&1; r=$?; \
	[ $(( $(date +%s) - s )) -lt 30 ] && echo "rc $r before the command's end"; \
	build/kinstr cover --lcov /tmp -c 'sleep 5' ksys_read >> /tmp/lc.out 2>&1; echo "folder rc $?"; \
	build/kinstr cover --lcov /etc/hostname/x.info -c 'sleep 5' ksys_read >> /tmp/lc.out 2>&1; echo "file as folder rc $?"; \
	grep -v 'no DWARF' /tmp/lc.out
EXPECT ^rc 1 before the command's end$
EXPECT ^folder rc 1$
EXPECT ^file as folder rc 1$
EXPECT ^kinstr: --lcov /nonexistent/x\.info: cannot write in /nonexistent: No such file or directory$
EXPECT ^kinstr: --lcov /tmp: cannot write it: a folder$
EXPECT ^kinstr: --lcov /etc/hostname/x\.info: cannot write in /etc/hostname: not a folder$
EXPECT_NOT ^kinstr: covering
TIMEOUT 120

NAME cover: install and remove a code cache 20 times while tasks sleep under cached functions (nanosleep: do_nanosleep itself is .sched.text, refused) and others run through them: no splat, the text restored, all memory returned (the module's count of what it holds and the kernel's vmalloc list)
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
BEFORE while :; do sleep 0.05; done & while :; do sleep 0.07; done & build/tests/vm/progs/cover_workload 100000000
RUN fns='hrtimer_nanosleep __x64_sys_nanosleep __x64_sys_clock_nanosleep common_nsleep vfs_read ksys_read'; \
	before=$(build/tests/vm/progs/textsum "$(echo $fns | tr ' ' ,)"); \
	build/kinstr cover --dry-run do_nanosleep | grep -o 'refused (sched-text)'; \
	build/tests/vm/progs/cache_check stress 20 $fns; \
	after=$(build/tests/vm/progs/textsum "$(echo $fns | tr ' ' ,)"); test "$before" = "$after" && echo text-unchanged
EXPECT ^refused \(sched-text\)$
EXPECT ^stress: 20 of 20 rounds installed and removed, [1-9][0-9]* block passes counted$
EXPECT ^memory: held with a cache in: 1 areas, [1-9][0-9]* text bytes, [1-9][0-9]* per-CPU bytes; after the last removal: 0 areas, 0 text bytes, 0 per-CPU bytes more than before the first$
EXPECT ^vmalloc areas of kinstr.ko: ([0-9]+) before, [1-9][0-9]* at most with a cache in \(more\), \1 after$
EXPECT ^text-unchanged$
EXPECT_NOT refused:
TIMEOUT 300

NAME cover: the test module's functions run from their copies: copy_from_user of a bad pointer returns -EFAULT (no oops), so does an inline unsafe_get_user (its extable entry and fixup in the copied function), the WARN is reported once under the original's name and the run goes on, a static branch flipped and a static call updated while the copies run take effect in them (the jump label at kinstr_tc_key's entry runs in the original: its two successors count 50+30 and 40), each entry block counted once per call
FEATURE code_cache
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_cache.ko
RUN python3 tests/vm/checks/cover_module.py hazards
EXPECT_WARN kinstr_tc_warn\+0x
EXPECT ^cmd=fault n=10 sum=0 efault=10 
EXPECT ^cmd=get n=7 sum=0 efault=7 
EXPECT ^cmd=warn n=5 sum=15 
EXPECT ^cmd=key n=50 sum=0 efault=0 taken=0 
EXPECT ^cmd=key n=40 sum=40 efault=0 taken=40 
EXPECT ^cmd=key n=30 sum=0 efault=0 taken=0 
EXPECT ^cmd=call n=30 sum=30 efault=0 taken=0 a=30 b=0 
EXPECT ^cmd=call n=20 sum=40 efault=0 taken=0 a=0 b=20 
EXPECT ^entry kinstr_tc_loop 100 
EXPECT ^entry kinstr_tc_branch 64 
EXPECT ^entry kinstr_tc_copy 10 
EXPECT ^entry kinstr_tc_get 7 
EXPECT ^entry kinstr_tc_warn 5 
EXPECT ^blocks kinstr_tc_key (80,40|40,80)$
EXPECT ^entry kinstr_tc_call 50 
EXPECT ^functions 8$
EXPECT_NOT ^refused
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_cache
TIMEOUT 300

NAME cover: the test module's block counts (a loop, a branch tree, a fault, a static branch, a static call) equal kprobe events on every block's first instruction for the same workload
FEATURE code_cache
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_cache.ko
RUN python3 tests/vm/checks/cover_module.py kprobes
EXPECT ^blocks [1-9][0-9]+ compared [1-9][0-9]+ ran [1-9][0-9]+ mismatches 0$
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_cache
TIMEOUT 300

NAME cover --edges: the module proves every copy with a counter on every edge too (vfs_*, ksys_*, do_sys_*, __x64_sys_*, tcp_*), and refuses an edge counter on another counter and a counted branch whose condition was flipped, naming the rule
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/cache_check --edges accept 'vfs_*' 'ksys_*' 'do_sys_*' '__x64_sys_*' 'tcp_*'; \
	build/tests/vm/progs/cache_check --edges mutate __x64_sys_getppid vfs_read ksys_read do_sys_openat2 kfree
EXPECT ^planned [1-9][0-9]{2,} \(builder refused [0-9]+\), module accepted [1-9][0-9]{2,}, refused 0$
EXPECT ^mutation edge-in: refused .*\[counter\]
EXPECT ^mutation edge-out: refused .*\[reloc\]
EXPECT ^mutation counter: refused .*\[counter\]
EXPECT ^mutation call: refused .*\[call\]
EXPECT_NOT ACCEPTED|^module refused
TIMEOUT 600

NAME optimize: the module proves every re-laid copy the builder makes (vfs_*, ksys_*, do_sys_*, laid out by made-up edge counts: inverted jccs, added and dropped jmps, rel8 forms) and refuses one with damage beyond layout, naming the rule (a copied byte, a re-aimed branch, a call, a native jmp, a jump label, a static call, the tiling, a boundary, an entry point, an exit, a jcc's condition flipped, where a counterpart runs on, a counter flag)
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/cache_check --laid accept 'vfs_*' 'ksys_*' 'do_sys_*'; \
	build/tests/vm/progs/cache_check --laid mutate __x64_sys_getppid vfs_read ksys_read do_sys_openat2 kfree \
	kmem_cache_free try_to_wake_up
EXPECT ^planned [1-9][0-9]{2,} \(builder refused [0-9]+\), module accepted [1-9][0-9]{2,}, refused 0$
EXPECT ^mutation laid-invert: refused .*\[reloc\]
EXPECT ^mutation laid-fall: refused .*\[fall\]
EXPECT ^mutation laid-counter: refused .*\[request\]
EXPECT ^mutations 13 refused 13 by their own rule 13$
EXPECT_NOT ACCEPTED|^module refused|no instruction of that form
TIMEOUT 600

NAME optimize: the test module's skewed branch (kinstr_tc_skew under skew 8000): the layout block by block as objdump and the workload's pattern say (entry with its jcc inverted, the hot block with its jmp dropped, the join), predicted taken branches 14000 -> 1000; the same sum with the re-laid copy in; every byte restored after; a second cover --edges run of the workload gives the same taken branches per call for the installed layout, and read back with --from-cover the same layout
FEATURE code_cache
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_cache.ko
RUN python3 tests/vm/checks/optimize_skew.py
EXPECT ^layout as expected$
EXPECT ^predicted taken 14000 -> 1000 per 8000 calls
EXPECT ^optimize status 0; sum -?[0-9]+ with the copy in, -?[0-9]+ without: same$
EXPECT ^text restored$
EXPECT ^measured \(second run\) taken 1000 per 8000 calls: 0.1250 per call; predicted 0.1250: equal$
EXPECT ^--from-cover layout the same$
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_cache
TIMEOUT 300

NAME cover --edges: flow conservation on the test module's functions (a loop, a branch tree, a fault, a static branch, a static call): for every block the counters see whole, the edges into it = its count = the edges out of it; and the block counts equal a run without edge counters
FEATURE code_cache
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_cache.ko
RUN python3 tests/vm/checks/cover_module.py flow
EXPECT ^flow blocks [1-9][0-9]+ ran [1-9][0-9]+ edges [1-9][0-9]+ conserved [1-9][0-9]+ \([1-9][0-9]+ that ran\) differ 0 unseen [0-9]+$
EXPECT ^summary conserved [1-9][0-9]* differs 0 unseen [0-9]+$
EXPECT ^block counts the same as without edges$
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_cache
TIMEOUT 300

NAME cover --debuginfo: the test module's blocks get source lines from its .ko's DWARF, each within its function's part of kinstr_test_cache.c or in a header whose inline code it holds (the entry block on the definition's lines); without the kernel's -dbg package the core kernel's blocks are function+offset and the run says so
FEATURE code_cache
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_cache.ko
RUN python3 tests/vm/checks/cover_module.py lines; \
	build/kinstr cover -c true __x64_sys_getppid 2>&1 | grep -E '^kinstr: (no DWARF|source lines)'; \
	build/kinstr cover --debuginfo tests/vm/modules/kinstr_test_cache.ko --lcov /tmp/tl.info \
		-c 'sh tests/vm/checks/cover_module.sh' kinstr_tc_loop 2>&1 | grep '^kinstr: source lines'; \
	echo "listing lines with a source line: $(cat /tmp/tl.info.src/*.s | grep -c 'kinstr_test_cache\.c:[0-9]')"; \
	genhtml -q -o /tmp/tlh /tmp/tl.info > /tmp/tlh.out 2>&1; echo "genhtml $? warnings $(grep -ci warn /tmp/tlh.out)"
EXPECT ^lines blocks ([1-9][0-9]+) with a line \1 in their function \1 \([0-9]+ inlined from headers\) distinct [1-9][0-9]+$
EXPECT ^entry kinstr_tc_loop line (4[6-9]) defined 47$
EXPECT ^kinstr: no DWARF for the core kernel \(install linux-image-[^ ]+-dbg, or give --debuginfo VMLINUX\): its blocks are function\+offset$
EXPECT ^kinstr: source lines of module kinstr_test_cache from tests/vm/modules/kinstr_test_cache.ko$
EXPECT ^listing lines with a source line: [1-9][0-9]*$
EXPECT ^genhtml 0 warnings 0$
EXPECT_NOT ^outside
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_cache
TIMEOUT 300

NAME cover: a task asleep under a cached function: /proc/PID/stack names the original function (native return addresses), and a reliable stack walk of it succeeds
REQUIRES [ -e /proc/self/stack ]
FEATURE code_cache
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_cache.ko
RUN build/kinstr cover -d 10 kinstr_tc_sleep > /tmp/cs.txt 2>&1 & \
	for i in $(seq 150); do grep -q '^kinstr: covering' /tmp/cs.txt && break; sleep 0.2; done; \
	sh -c 'echo "sleep 2500" > /sys/kernel/debug/kinstr_tc/run' & pid=$!; sleep 1; \
	cat /proc/$pid/stack; echo "reliable $pid" > /sys/kernel/debug/kinstr_tc/run; cat /sys/kernel/debug/kinstr_tc/last; \
	wait $pid; wait; cat /tmp/cs.txt
EXPECT ^\[<0>\] kinstr_tc_sleep\+0x[0-9a-f]+/0x[0-9a-f]+ \[kinstr_test_cache\]$
EXPECT ^cmd=reliable n=[0-9]+ .* reliable=[1-9][0-9]*$
EXPECT ^kinstr_tc_sleep: 1/1 blocks
EXPECT ^  \+0x[59] +1$
EXPECT_NOT ^\[<0>\] 0x
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_cache
TIMEOUT 120

NAME cover --once: a probe at every block start, each taken out after its first hit: the hit set equals the code cache's non-zero blocks on the same workload, and the probes left in at the end are exactly the never-hit blocks
FEATURE code_cache
FEATURE disarm
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/cover_once.py build/kinstr build/tests/vm/progs/cover_workload \
	__x64_sys_getppid ksys_read vfs_read do_sys_openat2
EXPECT ^blocks [1-9][0-9]+ probed [1-9][0-9]+ hit [1-9][0-9]* same [1-9][0-9]+ differ 0$
EXPECT ^probes ([1-9][0-9]*) taken out [1-9][0-9]* left ([0-9]+) never hit \2$
TIMEOUT 300

NAME count --every-block FUNC counts every block through the code cache (kinstr cover's run); an instruction spec is refused with its reason
STOCK
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count --every-block -c 'build/tests/vm/progs/cover_workload 200' __x64_sys_getppid; \
	build/kinstr count --every-block 'vfs_read+3'; echo "status $?"
EXPECT ^__x64_sys_getppid: 1/1 blocks \(100\.0%\)$
EXPECT ^  \+0x[59] +200$
EXPECT ^kinstr: --every-block: 'vfs_read\+3': give functions \(FUNC or GLOB\), not instructions$
EXPECT ^status 2$

NAME cover: while a code cache runs a function, the kernel's kprobes refuse every byte of it (kinstr fences the whole function, not only its splices), and accept them again once the cache is removed
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN off=$(build/kinstr disasm vfs_read | awk '$1 ~ /^\+0x/ { n++ } n == 12 { print $1; exit }'); echo "interior $off"; \
	build/kinstr cover -d 8 vfs_read > /tmp/cf.txt 2>&1 & \
	for i in $(seq 150); do grep -q '^kinstr: covering' /tmp/cf.txt && break; sleep 0.2; done; \
	echo "p:kcf/a vfs_read$off" >> /sys/kernel/tracing/kprobe_events 2>/dev/null && echo interior-accepted || echo interior-refused; \
	wait; echo "p:kcf/a vfs_read$off" >> /sys/kernel/tracing/kprobe_events 2>/dev/null && echo after-accepted || echo after-refused; \
	echo '-:kcf/a' >> /sys/kernel/tracing/kprobe_events
EXPECT ^interior \+0x[0-9a-f]+$
EXPECT ^interior-refused$
EXPECT ^after-accepted$
TIMEOUT 120

NAME cover -k: a function the module refuses at install (a kprobe put on vfs_read after the batch's view was read), one the library refuses and a name that matches nothing are reported with their reasons and left out; the others are covered and counted exactly, exit 0; without -k the module's refusal ends the run; the text is the same after
STOCK
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/cover_keep.py build/kinstr planted build/tests/vm/progs/cover_workload
EXPECT ^text before: ok$
EXPECT ^keep rc 0$
EXPECT ^covered __x64_sys_getppid ksys_read getppid entry 100$
EXPECT ^refused vfs_read by module as module why vfs_read\+0x[0-9a-f]+: the module refused the code cache: .*kprobe
EXPECT ^refused [A-Za-z0-9_.]+ by library as [a-z-]+ why .+
EXPECT ^refused_at_install 1$
EXPECT ^kinstr: no function 'no_such_function_kck'
EXPECT ^kinstr: cover: vfs_read left out: vfs_read\+0x[0-9a-f]+: the module refused the code cache
EXPECT ^without -k rc 1$
EXPECT ^kinstr: cover: vfs_read\+0x[0-9a-f]+: the module refused the code cache
EXPECT ^text after: ok$
EXPECT_NOT ^kinstr: covering
TIMEOUT 300

NAME cover -k of a seeded random sample of 100 functions of kinstr -l: exit 0, every function covered or refused with a reason (each the module refused is refused again alone, without -k), the text the same after
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/cover_keep.py build/kinstr sample 100 7
EXPECT ^seed 7 functions [1-9][0-9]+ sample 100$
EXPECT ^keep rc 0$
EXPECT ^covered [1-9][0-9]* refused [0-9]+ by the module or at install [0-9]+ unaccounted 0 without a reason 0$
EXPECT ^module refusals checked alone ([0-9]+) refused again \1$
EXPECT ^text after: ok$
TIMEOUT 300
