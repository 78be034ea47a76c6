# kinstr.ko: load, unload, the device node and its ABI rules.

NAME module loads and unloads 20 times in a row with a clean log
RUN before=$(dmesg | grep -c 'kinstr: .* loaded (abi'); for i in $(seq 20); do \
	insmod kmod/kinstr.ko || exit 1; \
	test -c /dev/kinstr || { echo "no /dev/kinstr after load $i"; exit 1; }; \
	rmmod kinstr || exit 1; \
	test ! -e /dev/kinstr || { echo "/dev/kinstr left after unload $i"; exit 1; }; \
	done; echo cycles=$i; echo "loads logged: $(( $(dmesg | grep -c 'kinstr: .* loaded (abi') - before ))"
TIMEOUT 240
EXPECT ^cycles=20$
EXPECT ^loads logged: 20$

NAME /dev/kinstr is a root-only character device (mode 0600)
SETUP insmod kmod/kinstr.ko
RUN stat -c '%F %a %U %G' /dev/kinstr
EXPECT ^character special file 600 root root$

NAME the module logs that it resolved kallsyms_lookup_name
SETUP insmod kmod/kinstr.ko
RUN dmesg | tail -n 5
EXPECT kinstr: [0-9.]+ loaded \(abi [0-9]+\.[0-9]+\), kallsyms_lookup_name resolved, text [1-9][0-9]* KiB

NAME ioctl struct-size rules: too small, too big, from the future, unknown ioctl
SETUP insmod kmod/kinstr.ko
RUN build/tests/vm/progs/abi_check
EXPECT_NOT ^not ok
EXPECT ^ok unknown ioctl: ENOTTY$
EXPECT ^ok caller's bytes beyond the module's struct are zeroed$
