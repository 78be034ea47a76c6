NAME sweep of a fixed sample of slices: count at every entry and return, profile, trace, text restored
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/progs/sweep.py --size 100 --slices 12,40
TIMEOUT 360
# a failed or timed-out sweep must not leave its workload running into the next tests
CLEANUP pkill -f '[p]rogs/workload.sh'; pkill -f '[g]etppid_loop 1000000000000'; pkill -f '[k]instr batch'; sleep 1; true
EXPECT ^sweep: [0-9]+ probeable core functions
EXPECT ^slice [0-9]+/[0-9]+: 100 functions .*text restored, ok,
EXPECT ^sweep: ok$
EXPECT_NOT ^FAIL
