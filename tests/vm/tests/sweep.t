NAME sweep of a fixed sample of slices: count at every entry and return, profile, trace, text restored
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/progs/sweep.py --size 100 --sample 3 --with text_poke_memcpy
TIMEOUT 240
EXPECT ^sweep: [0-9]+ probeable core functions
EXPECT ^slice [0-9]+/[0-9]+: 100 functions .*text restored, ok,
EXPECT ^sweep: ok$
EXPECT_NOT ^FAIL
