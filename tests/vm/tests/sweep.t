NAME sweep of a fixed sample of slices: count at every entry and return, profile, trace, text restored
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/progs/sweep.py --size 100 --slices 12,40
TIMEOUT 360
# a failed or timed-out sweep must not leave its workload running into the next tests
CLEANUP pkill -f '[p]rogs/workload.sh'; pkill -f '[g]etppid_loop 1000000000000'; pkill -f '[k]instr batch'; sleep 1; true
EXPECT ^sweep: [0-9]+ probeable core functions
EXPECT ^slice [0-9]+/[0-9]+: 100 functions .*text restored, ok,
EXPECT ^sweep: kinstr holds after the last slice: 0 probes, 0 trace bytes, 0 timers, 0 areas, 0 text bytes, 0 per-CPU bytes, [0-9]+ vmalloc areas$
EXPECT ^sweep: ok$
EXPECT_NOT ^FAIL

NAME sweep of the code cache on a fixed sample of slices under the broad workload: the plan, cover -k of each slice (--edges on slice 0), refusals counted by reason, text restored and kinstr's memory back after each, block counts equal kprobe hits on the reference workload
FEATURE code_cache
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/progs/sweep.py --mode cover --size 100 --slices 0,11
TIMEOUT 420
CLEANUP pkill -f '[b]road_workload.sh'; pkill -f '[p]rogs/workload.sh'; pkill -f '[r]ef_workload'; pkill -f '[g]etppid_loop 1000000000000'; pkill -f '[k]instr batch'; sleep 1; true
EXPECT ^sweep: [0-9]+ probeable core functions
EXPECT ^slice 0/[0-9]+: 100 functions .*: cover --edges [1-9][0-9]* planned [1-9][0-9]* covered [0-9]+ refused at install [1-9][0-9]* blocks [0-9]+ hit [0-9]+ passes flow [1-9][0-9]* conserved [0-9]+ differ [0-9]+ unseen, reference [0-9]+ functions \([0-9]+ run by it\) .*text restored, memory back, ok,
EXPECT ^slice 11/[0-9]+: 100 functions .*: cover [1-9][0-9]* planned [1-9][0-9]* covered .*text restored, memory back, ok,
EXPECT ^refusals: [1-9][0-9]* by the library: [a-z-]+: 
EXPECT ^sweep: 2 slices, 200 functions: .*kprobe reference: [1-9][0-9]* functions \([1-9][0-9]* run by it\), [1-9][0-9]* blocks compared, [0-9]+ noisy functions, [0-9]+ blocks kprobes refused, 0 mismatches; 0 failures
EXPECT ^sweep: kinstr holds after the last slice: 0 probes, 0 trace bytes, 0 timers, 0 areas, 0 text bytes, 0 per-CPU bytes, [0-9]+ vmalloc areas$
EXPECT ^sweep: ok$
EXPECT_NOT ^FAIL
