# Safety (issue 11): kinstr's own hit path refused, the recursion guard, kprobes that come later
# refused on kinstr's bytes, bounded resources.

NAME timing kinstr's own clock is refused with its rule (it reset the machine), and so are trace and count on it
SETUP insmod kmod/kinstr.ko
# the kernel's local_clock(): a global function on 6.12, sched_clock_cpu() inlined on 6.1 (where a file has
# a local copy of the inline, a 't' local_clock)
RUN clk=sched_clock_cpu; awk '$2 == "T" && $3 == "local_clock"' /proc/kallsyms | grep -q . && clk=local_clock; \
	echo "clock $clk"; dmesg | grep -o 'hit path [0-9]* functions'; \
	build/kinstr profile -d 1 $clk; echo "profile rc=$?"; \
	build/kinstr trace --clock local -d 1 -o /tmp/hp $clk; echo "trace rc=$?"; \
	build/kinstr count -d 1 ktime_get_mono_fast_ns; echo "count rc=$?"; \
	build/kinstr -l $clk; echo "list rc=$?"; \
	build/kinstr disasm $clk | grep -c "reached by kinstr's own probe context"; \
	g='sched_clock*'; test $clk = local_clock && g='local_clock*,sched_clock*'; \
	build/kinstr count -d 1 "$g" 2>&1 | grep refused
TIMEOUT 180
EXPECT ^clock (sched_clock_cpu|local_clock)$
EXPECT ^hit path [1-9][0-9]* functions$
EXPECT ^kinstr: (sched_clock_cpu|local_clock)\+0x[0-9a-f]+: refused: reached by kinstr's own probe context
EXPECT ^profile rc=1$
EXPECT ^trace rc=1$
EXPECT ^kinstr: ktime_get_mono_fast_ns\+0x[0-9a-f]+: refused: reached by kinstr's own probe context
EXPECT ^count rc=1$
EXPECT ^list rc=1$
EXPECT_NOT ^0$
# a glob skips them and says why
EXPECT ^kinstr: (local_clock\*,)?sched_clock\*: [0-9]+ functions probed, [0-9]+ refused: .*[0-9]+ reached by kinstr's own probe context

NAME the kernel's int3 delivery is hit path too: an int3 in __rcu_read_lock (taken around the die chain) hung both CPUs
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -d 1 __rcu_read_lock; echo "lock rc=$?"; \
	build/kinstr count -d 1 __rcu_read_unlock%return; echo "unlock rc=$?"
TIMEOUT 120
EXPECT ^kinstr: __rcu_read_lock\+0x[0-9a-f]+: refused: reached by kinstr's own probe context .*int3 delivery
EXPECT ^lock rc=1$
EXPECT ^kinstr: __rcu_read_unlock.*: refused: reached by kinstr's own probe context
EXPECT ^unlock rc=1$

NAME the module's CHECK names the hit path for every function it found, and user space agrees with it
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/hitpath_check
TIMEOUT 120
EXPECT ^hitpath_check: ok: [1-9][0-9]* functions, every one refused by the module and by user space, (sched_clock_cpu|local_clock) among them$

NAME a tracepoint in the int3 delivery: the probes the kernel can give it after load are hit path before its key flips
# 6.12's notifier_call_chain (the die chain, under every int3 kinstr takes) has trace_notifier_run. Enabling
# the event after load sends its static call straight to trace_event_raw_event_notifier_info; without this
# rule a trap probe there nested int3s until the kernel died ("kernel BUG at kernel/entry/common.c:378").
KERNEL 6.12
SETUP insmod kmod/kinstr.ko
RUN T=/sys/kernel/tracing; [ -d $T/events ] || mount -t tracefs nodev $T; \
	build/tests/vm/progs/hitpath_check | grep -E "possible probe|^hitpath_check: ok"; \
	opened() { t=$(build/kinstr disasm __SCT__tp_func_notifier_run | grep -o 'jmp 0x[0-9A-Fa-f]*' | head -1 | cut -c7- | tr A-F a-f); \
		p=$(awk '$3 == "trace_event_raw_event_notifier_info" {print $1}' /proc/kallsyms); \
		if [ -n "$t" ] && [ "$t" = "$p" ]; then echo "static call to the event's probe: $1 yes"; else echo "static call to the event's probe: $1 no"; fi; }; \
	opened before; \
	build/kinstr count --dry-run trace_event_raw_event_notifier_info; echo "before rc=$?"; \
	echo 1 > $T/events/notifier/notifier_run/enable; echo "enabled $(cat $T/events/notifier/notifier_run/enable)"; opened after; \
	trap=$(build/kinstr disasm vfs_read | awk '$NF != "" && / trap / {print $1; exit}'); echo "trap site vfs_read$trap"; \
	build/kinstr count -c 'sh tests/vm/progs/workload.sh' "vfs_read$trap" trace_event_raw_event_notifier_info; echo "after rc=$?"; \
	build/kinstr count -c 'sh tests/vm/progs/workload.sh' "vfs_read$trap" | grep -E "^vfs_read"; \
	echo "notifier events $(grep -c 'notifier_run' $T/trace)"; echo 0 > $T/events/notifier/notifier_run/enable
TIMEOUT 300
EXPECT ^  hidden: notifier_call_chain\+0x[0-9a-f]+: tracepoint notifier_run's possible probe trace_event_raw_event_notifier_info$
EXPECT ^  hidden: notifier_call_chain\+0x[0-9a-f]+: tracepoint notifier_run's possible probe perf_trace_notifier_info$
EXPECT ^hitpath_check: ok: [1-9][0-9]* functions
EXPECT ^kinstr: trace_event_raw_event_notifier_info\+0x[0-9a-f]+: refused: reached by kinstr's own probe context
EXPECT ^before rc=1$
EXPECT ^static call to the event's probe: before no$
EXPECT ^enabled 1$
EXPECT ^static call to the event's probe: after yes$
EXPECT ^trap site vfs_read\+0x[0-9a-f]+$
EXPECT ^after rc=1$
EXPECT ^vfs_read\+0x[0-9a-f]+ +trap +[a-z]+ +[1-9][0-9]*$
EXPECT ^notifier events [1-9][0-9]*$

NAME drill does not descend into kinstr's own clock (it reset the machine): the callee is shown with its rule
# update_rq_clock calls sched_clock_cpu, kinstr's clock on 6.1 only (on 6.12 it is local_clock, refused above);
# 3 s a level: on the debug kernel (KASAN, lockdep) the workload's first second had no call of it
KERNEL 6.1
SETUP insmod kmod/kinstr.ko
RUN build/kinstr drill -i 3 -c 'sh tests/vm/progs/workload.sh' update_rq_clock; echo "rc=$?"
TIMEOUT 180
EXPECT sched_clock_cpu +\[not timed: refused: reached by kinstr's own probe context
EXPECT ^rc=0$

NAME the recursion guard: a trace probe on the clocksource's read function, which the tracer's own clock calls through a pointer, skips and counts the nested hits
# at its returns: on 6.12 read_tsc's first instruction after the ENDBR (an alternative of rdtsc) never runs out of line
SETUP insmod kmod/kinstr.ko
RUN cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource); \
	case "$cs" in hpet) f=read_hpet ;; tsc) f=read_tsc ;; acpi_pm) f=acpi_pm_read ;; *) f=unknown ;; esac; echo "clocksource $cs: $f"; \
	build/kinstr trace --clock mono -d 2 -o /tmp/rg "$f%return"; echo "rc=$?"
TIMEOUT 120
EXPECT ^clocksource [a-z_]+: (read_hpet|read_tsc|acpi_pm_read)$
EXPECT ^kinstr: [1-9][0-9]* hits not recorded: recursion
EXPECT ^rc=0$

NAME a kprobe added while kinstr holds a site is refused at, inside and just before it; after kinstr, the same kprobes are accepted and count exactly
FEATURE kprobe_fence
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/progs/kprobe_fence.py 2000 $(tests/vm/checks/pick_sites.py --need jump,call __x64_sys_getppid) \
	'__x64_sys_getppid%return' && \
	python3 tests/vm/progs/kprobe_fence.py 0 vfs_read 'vfs_read%return'
TIMEOUT 300
EXPECT ^control: all [0-9]+ kprobes accepted before kinstr$
# a jump site and a jump site that displaces a call, picked from the live analysis, and the return
EXPECT ^refused as it must be: kprobe at __x64_sys_getppid\+0x[0-9a-f]+ \(at
EXPECT ^refused as it must be: kprobe at vfs_read\+0x[0-9a-f]+ \(inside
EXPECT ^refused as it must be: kprobe at vfs_read\+0x[0-9a-f]+ \(before
EXPECT ^kprobe_fence: ok: [0-9]+ kprobes refused while kinstr held 3 sites, 3 accepted after, exact$
EXPECT ^kprobe_fence: ok: [0-9]+ kprobes refused while kinstr held 2 sites$

NAME resource limits: a loop of ALLOC stops with EDQUOT per descriptor and ENOSPC in total, trace buffers and timers too, and every charge comes back
SETUP insmod kmod/kinstr.ko max_probes_per_fd=3000 max_probes=10000 max_trace_bytes_per_fd=16777216 max_timers_per_fd=100
RUN build/tests/vm/progs/limits; echo "rc=$?"; \
	echo 10 > /sys/module/kinstr/parameters/max_probes_per_fd; build/kinstr count -d 1 'vfs_*'; echo "count rc=$?"
TIMEOUT 240
EXPECT ^ok   ALLOC x1 in a loop: 3000 slots, then Disk quota exceeded
EXPECT ^ok   [0-9]+ descriptors: [0-9]+ slots, then No space left on device
EXPECT ^ok   TRACE_CREATE of [0-9]+ x 1 MiB per CPU over 16777216 bytes: Disk quota exceeded
EXPECT ^ok   TIMERS_CREATE of 101: Disk quota exceeded
EXPECT ^ok   in use after close: 0 probes, 0 trace bytes, 0 timers, want 0$
EXPECT ^limits: ok$
EXPECT ^rc=0$
EXPECT ^kinstr: cannot reserve patch space for [0-9]+ probes: Disk quota exceeded \(this descriptor.s probe limit: /sys/module/kinstr/parameters/max_probes_per_fd\)$
EXPECT ^count rc=1$
