# Input handling (issue 11, item 6): bad values, bad specs, outputs that cannot be written,
# signals during -c CMD, no-match exit statuses, the batch limit before the analysis, TERM=dumb.
# (The pure parsing is in tests/unit/test_cli_parse.c and test_cli_input.sh, on the host.)

NAME input: bad numbers, bad specs and a bad --pid are refused with their reason, before anything is patched
ONCE
SETUP insmod kmod/kinstr.ko
RUN a=$(build/tests/vm/progs/textsum 'vfs_*'); \
	build/kinstr count -d abc vfs_read; echo "rc=$?"; build/kinstr count -d 0 vfs_read; echo "rc=$?"; \
	build/kinstr trace -o /tmp/i1 -d -1 vfs_read; echo "rc=$?"; build/kinstr profile -p 999999 vfs_read; echo "rc=$?"; \
	build/kinstr count 'vfs_read%returnx'; echo "rc=$?"; build/kinstr count 'vfs_read+-1'; echo "rc=$?"; \
	build/kinstr trace -o /tmp/i1 --buffer-size 1Q vfs_read; echo "rc=$?"; test -e /tmp/i1 && echo i1-exists; \
	b=$(build/tests/vm/progs/textsum 'vfs_*'); [ "$a" = "$b" ] && echo text-unchanged
EXPECT ^kinstr: --duration: not a number of seconds: 'abc'$
EXPECT ^kinstr: --duration: must be more than 0 seconds, not '0'$
EXPECT ^kinstr: --duration: must be more than 0 seconds, not '-1'$
EXPECT ^kinstr: --pid: no process 999999$
EXPECT ^kinstr: vfs_read%returnx: unknown suffix '%returnx' \(FUNC%return\)$
EXPECT ^kinstr: vfs_read\+-1: bad offset '-1' \(FUNC\+0xOFF\)$
EXPECT ^kinstr: --buffer-size: not a size: '1Q'
EXPECT ^rc=2$
EXPECT ^rc=1$
EXPECT_NOT ^rc=0$
EXPECT_NOT ^i1-exists$
EXPECT ^text-unchanged$

NAME input: count -o and profile -o to an unwritable file fail before anything is installed
ONCE
SETUP insmod kmod/kinstr.ko
RUN t0=$(date +%s%N); build/kinstr count -o /proc/nope -d 5 vfs_read; echo "rc=$?"; \
	build/kinstr profile -o /proc/nope -d 5 vfs_read; echo "rc=$?"; t1=$(date +%s%N); \
	echo "took $(( (t1 - t0) / 1000000 )) ms"; [ $(( (t1 - t0) / 1000000 )) -lt 5000 ] && echo before-the-run
EXPECT ^kinstr: cannot write /proc/nope: No such file or directory$
EXPECT ^rc=1$
EXPECT_NOT ^rc=0$
EXPECT_NOT ^kinstr: timing
EXPECT ^before-the-run$

NAME input: SIGINT during count -c CMD reaches CMD, its status is reported, kinstr exits 130 with the totals
SETUP insmod kmod/kinstr.ko && \
	printf 'trap "echo child-got-INT; exit 5" INT\necho child-started\nwhile :; do sleep 0.1; done\n' > /tmp/child.sh
# Ctrl-C, once the child runs
AFTER i=0; while ! grep -q child-started /tmp/o && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; \
	pkill -INT -x kinstr
RUN build/kinstr count -c 'sh /tmp/child.sh' vfs_read > /tmp/o 2>&1; echo "rc=$?"; cat /tmp/o
TIMEOUT 90
EXPECT ^child-got-INT$
EXPECT ^kinstr: interrupted; 'sh /tmp/child.sh' exited with status 5$
EXPECT ^vfs_read\+0x(5|9) +jump +inline +[0-9]+$
EXPECT ^rc=130$

NAME input: a spec matching nothing exits 1 in every subcommand, and snapshot writes no file
ONCE
SETUP insmod kmod/kinstr.ko
RUN for c in "count" "trace -o /tmp/i2" "profile" "drill" "sites" "disasm" "snapshot -o /tmp/i3.snap"; do \
	build/kinstr $c 'nomatch_zz_*' > /dev/null 2>&1; echo "$c rc=$?"; done; \
	build/kinstr -l 'nomatch_zz_*' > /dev/null 2>&1; echo "-l rc=$?"; \
	build/kinstr snapshot -o /tmp/i3.snap nomatch_zz; echo "snapshot-name rc=$?"; test -e /tmp/i3.snap && echo snap-written || echo no-snap
TIMEOUT 120
EXPECT ^count rc=1$
EXPECT ^trace -o /tmp/i2 rc=1$
EXPECT ^profile rc=1$
EXPECT ^drill rc=1$
EXPECT ^sites rc=1$
EXPECT ^disasm rc=1$
EXPECT ^snapshot -o /tmp/i3.snap rc=1$
EXPECT ^-l rc=1$
EXPECT ^kinstr: no function matches 'nomatch_zz': nothing saved$
EXPECT ^snapshot-name rc=1$
EXPECT ^no-snap$

NAME input: count '*' is refused at the batch limit from the symbols, before the analysis, naming the number and --max-probes
ONCE
SETUP insmod kmod/kinstr.ko
RUN t0=$(date +%s%N); build/kinstr count '*'; echo "rc=$?"; build/kinstr profile 'vfs_*,*'; \
	echo "rc=$?"; t1=$(date +%s%N); echo "took $(( (t1 - t0) / 1000000 )) ms"; \
	[ $(( (t1 - t0) / 1000000 )) -lt 20000 ] && echo before-the-analysis; \
	build/kinstr profile --max-probes 65536 'vfs_*,*'; echo "rc=$?"; \
	build/kinstr count --max-probes 10 --dry-run 'vfs_*'; echo "rc=$?"
TIMEOUT 120
EXPECT ^kinstr: \*: [1-9][0-9]{4,} functions match: [1-9][0-9]{4,} probes: at most 4096 in one batch \(--max-probes raises it, up to 65536\)$
EXPECT ^kinstr: vfs_\*,\*: [0-9]+ functions match: at least [0-9]+ probes: at most 4096 in one batch \(--max-probes raises it, up to 65536\)$
# the module's limit itself: no hint
EXPECT ^kinstr: vfs_\*,\*: [0-9]+ functions match: at least [0-9]{5,} probes: at most 65536 in one batch$
EXPECT ^kinstr: vfs_\*: [0-9]+ functions match: [0-9]+ probes: at most 10 in one batch \(--max-probes raises it, up to 65536\)$
EXPECT ^rc=1$
EXPECT_NOT ^rc=0$
EXPECT ^before-the-analysis$

NAME input: the live table on a terminal clears the screen, but never with TERM=dumb or without a terminal
ONCE
SETUP insmod kmod/kinstr.ko
RUN e=$(printf '\033'); \
	TERM=xterm script -qec 'build/kinstr count -d 2.5 vfs_read' /dev/null > /tmp/tty-xterm 2>&1; echo "xterm rc=$?"; \
	TERM=dumb script -qec 'build/kinstr count -d 2.5 vfs_read' /dev/null > /tmp/tty-dumb 2>&1; echo "dumb rc=$?"; \
	TERM=dumb script -qec 'build/kinstr profile -d 2.5 vfs_read' /dev/null > /tmp/tty-pdumb 2>&1; echo "pdumb rc=$?"; \
	build/kinstr count -d 2.5 vfs_read > /tmp/notty 2>&1; \
	echo "xterm-esc $(grep -c "$e" /tmp/tty-xterm)"; echo "dumb-esc $(grep -c "$e" /tmp/tty-dumb)"; \
	echo "pdumb-esc $(grep -c "$e" /tmp/tty-pdumb)"; echo "notty-esc $(grep -c "$e" /tmp/notty)"; \
	grep -c '^vfs_read' /tmp/tty-dumb /tmp/tty-pdumb
TIMEOUT 120
EXPECT ^xterm rc=0$
EXPECT ^dumb rc=0$
EXPECT ^pdumb rc=0$
EXPECT ^xterm-esc [1-9]
EXPECT ^dumb-esc 0$
EXPECT ^pdumb-esc 0$
EXPECT ^notty-esc 0$
EXPECT ^/tmp/tty-dumb:1$
EXPECT ^/tmp/tty-pdumb:1$

NAME input: count -k reports each refused spec with its reason and counts the others; when every one is refused it fails
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -k -d 1 vfs_read nosuch_fn_zz entry_SYSCALL_64 2>&1; echo "rc=$?"; \
	build/kinstr count -k -d 1 nosuch_fn_zz 2>&1; echo "rc=$?"
EXPECT ^kinstr: nosuch_fn_zz: no function 'nosuch_fn_zz' in the kernel's symbols$
EXPECT ^kinstr: entry_SYSCALL_64(\+0x[0-9a-f]+)?: refused: 
EXPECT ^vfs_read\+0x(5|9) +jump
EXPECT_NOT ^entry_SYSCALL_64 +(jump|trap)
EXPECT ^rc=0$
EXPECT ^kinstr: no spec left to count$
EXPECT ^rc=1$
