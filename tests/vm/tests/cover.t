# The code cache's plan on the live kernel (issue 15): kinstr cover --dry-run.

NAME cover --dry-run plans a copy of syscall-path functions on the live kernel: every block counted, calls with the original's return address, a re-entry point at each return; nothing is installed
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
SETUP insmod kmod/kinstr.ko
RUN build/kinstr cover --dry-run --json kfree kmem_cache_free vfs_read do_sys_openat2 schedule \
	__schedule try_to_wake_up > /tmp/cover.json; echo "status $?"; python3 tests/vm/checks/cover_facts.py < /tmp/cover.json
EXPECT ^status 0$
EXPECT ^copied [1-9][0-9]* of 7$
EXPECT ^jump labels [1-9][0-9]* static calls [0-9]+$
EXPECT ^bad facts 0 \[\]$
