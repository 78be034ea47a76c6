# The documentation's examples, run as they are written: each test takes a code block out of README.md,
# docs/*.md or examples/README.md with tests/vm/checks/doc_block.py and runs it, then checks that its
# output shows what the text says it does. tests/unit/test_doc_examples.sh checks that every block
# holding a kinstr command is run here (or is a synopsis or an output, by name).

NAME docs: README's first example (Debian 6.1): 50000 getppid calls, 50000 hits at the entry, at +0xb and at the return, each a jump site run inline
STOCK
KERNEL 6.1
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/doc_block.py README.md 3 --prompt > /tmp/b.sh && sh /tmp/b.sh; echo "rc=$?"
EXPECT ^getppid called 50000 times$
EXPECT ^__x64_sys_getppid\+0x5 +jump +inline +50000$
EXPECT ^__x64_sys_getppid\+0xb +jump +inline +50000$
EXPECT ^__x64_sys_getppid\+0x32 +jump +inline +50000$
EXPECT ^rc=0$

NAME docs: README's coverage example: getppid's one block 300 times, 3 of 3 functions covered, genhtml's page written
STOCK
SETUP insmod kmod/kinstr.ko
RUN rm -rf /tmp/cov /tmp/cov.info; python3 tests/vm/checks/doc_block.py README.md 4 --prompt > /tmp/b.sh && sh /tmp/b.sh; echo "rc=$?"; \
	test -s /tmp/cov/index.html && echo "genhtml page"
EXPECT ^__x64_sys_getppid: 1/1 blocks \(100\.0%\)$
EXPECT ^  \+0x[0-9a-f]+ +300$
EXPECT ^vfs_read: [0-9]+/[0-9]+ blocks
EXPECT ^kinstr: covered 3/3 functions, [0-9]+/[0-9]+ blocks \([0-9.]+%\) in [0-9.]+ s; 0 refused$
EXPECT ^rc=0$
EXPECT ^genhtml page$

NAME docs: README's "on your own machine": version -v names the kernel and module; count -d 5 counts vfs_read's entry and returns
SETUP insmod kmod/kinstr.ko
BEFORE while :; do cat /etc/hostname > /dev/null; sleep 0.05; done
RUN python3 tests/vm/checks/doc_block.py README.md 5 --skip '^(scripts/setup|make|insmod|rmmod) ' > /tmp/b.sh && sh /tmp/b.sh; echo "rc=$?"
TIMEOUT 90
EXPECT ^kernel +[0-9]
EXPECT ^vfs_read\+0x[0-9a-f]+ +(jump|trap|ftrace) +\S+ +[1-9][0-9]*$
EXPECT ^vfs_read\+0x[0-9a-f]+ +(jump|trap|ftrace) +\S+ +[1-9][0-9]*$
EXPECT ^rc=0$

NAME docs: babeltrace2-python.md's example: the bindings read kinstr's trace of ls, vfs_read's count an integer and its return's event there
SETUP insmod kmod/kinstr.ko
RUN rm -rf /tmp/t; python3 tests/vm/checks/doc_block.py docs/babeltrace2-python.md 1 > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt; echo "rc=$?"; \
	grep -m1 -oE "^vfs_read \{.*'count': [0-9]+" /tmp/o.txt | sed 's/{.*/{...}/'; grep -m1 -o '^vfs_read%return {' /tmp/o.txt
EXPECT ^rc=0$
EXPECT ^vfs_read \{\.\.\.\}$
EXPECT ^vfs_read%return \{$

NAME docs: prometheus.md's example (Debian 6.1): Prometheus scrapes kinstr serve; PromQL gives the interior probe's 1000 hits and a p99 latency of getppid; promtool accepts the page
STOCK
KERNEL 6.1
ONCE
SETUP insmod kmod/kinstr.ko && ip link set lo up
RUN rm -rf /tmp/promdb; python3 tests/vm/checks/doc_block.py docs/prometheus.md 2 --skip '^apt-get ' > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>/tmp/e.txt; \
	echo "rc=$?"; python3 tests/vm/checks/json_stream.py /tmp/o.txt | sed -E '/^result 2:/s/ [0-9.e+-]+$/ NUMBER/'; \
	grep -iE 'error|fail' /tmp/o.txt /tmp/e.txt | grep -v '^/tmp/e.txt:ts=' | head -3; echo end
CLEANUP pkill -x prometheus; pkill -TERM -x kinstr; sleep 1; true
TIMEOUT 240
EXPECT ^rc=0$
EXPECT ^result 1: __name__=kinstr_probe_hits_total,.*probe=__x64_sys_getppid\+0xb.* 1000$
EXPECT ^result 2: function=__x64_sys_getppid.* NUMBER$
EXPECT ^end$

NAME docs: report-html.md's example: profile, folded stacks, cover and a trace of one workload go into one page that names each input
SETUP insmod kmod/kinstr.ko
RUN rm -rf /tmp/trace /tmp/report.html; python3 tests/vm/checks/doc_block.py docs/report-html.md 1 > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; echo "rc=$?"; \
	for f in profile.json profile.folded stacks.folded cover.json; do grep -q "$f" /tmp/report.html && echo "page has $f"; done; \
	grep -c 'trace' /tmp/report.html | sed 's/^[1-9][0-9]*$/page has the trace/'
TIMEOUT 240
EXPECT ^rc=0$
EXPECT ^page has profile\.json$
EXPECT ^page has profile\.folded$
EXPECT ^page has stacks\.folded$
EXPECT ^page has cover\.json$
EXPECT ^page has the trace$

NAME docs: trace-cmd.md's example: ls's do_filp_open of /etc/ld.so.cache, with dfd -100, as trace-cmd report prints it from kinstr's trace.dat
SETUP insmod kmod/kinstr.ko
RUN rm -rf /tmp/t /tmp/t.dat; python3 tests/vm/checks/doc_block.py docs/trace-cmd.md 1 --skip '^(kernelshark|#)' > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; \
	echo "rc=$?"; grep -m1 -oE 'ls-[0-9]+ +\[[0-9]+\] +[0-9.]+: do_filp_open: +comm=ls dfd=-100 path=/etc/ld.so.cache' /tmp/o.txt | sed 's/-[0-9].*do_filp_open:/ do_filp_open:/; s/  */ /g'
EXPECT ^rc=0$
EXPECT ^ls do_filp_open: comm=ls dfd=-100 path=/etc/ld.so.cache$

NAME docs: examples/README.md's branch_count (Debian 6.1 offsets): a thousand reads of at most 32 bytes take the jbe (and a few of each process's C library), a thousand of 512 fall through into 8 rounds of the 64-byte loop
STOCK
KERNEL 6.1
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/doc_block.py examples/README.md 2 > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; echo "rc=$?"; \
	grep -E '^@hits\[[01]\]|jbe' /tmp/o.txt | sed 's/^ *//; s/  */ /g' | grep -oE '^\+0x77 .* jbe|^@hits.*'
EXPECT ^rc=0$
EXPECT ^\+0x77 .* jbe$
EXPECT ^@hits\[0\]: 100[0-9]$
EXPECT ^@hits\[1\]: 8000$

NAME docs: examples/README.md's branch_count with 6.12's offsets, as its text gives them: the same counts
KERNEL 6.12
SETUP insmod kmod/kinstr.ko
RUN python3 tests/vm/checks/doc_block.py examples/README.md 2 | sed 's/+0x13e/+0x13d/; s/+0x7d/+0x7c/' > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; echo "rc=$?"; \
	grep -E '^@hits\[[01]\]|jbe' /tmp/o.txt | sed 's/^ *//; s/  */ /g' | grep -oE '^\+0x76 .* jbe|^@hits.*'
EXPECT ^rc=0$
EXPECT ^\+0x76 .* jbe$
EXPECT ^@hits\[0\]: 100[0-9]$
EXPECT ^@hits\[1\]: 8000$

NAME docs: examples/README.md's latency_by_comm (Debian 6.1 offset): every command reading in those 5 s has its calls and a histogram
STOCK
KERNEL 6.1
SETUP insmod kmod/kinstr.ko
BEFORE while :; do cat /etc/hostname > /dev/null; sleep 0.05; done
RUN python3 tests/vm/checks/doc_block.py examples/README.md 3 > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; echo "rc=$?"; \
	grep -m1 -E '^@calls\["cat"\]: [1-9]' /tmp/o.txt; grep -m1 -oE '^@usecs\[\{comm: "cat", bucket: [0-9]+' /tmp/o.txt | sed 's/[0-9]*$/N/'
TIMEOUT 90
EXPECT ^rc=0$
EXPECT ^@calls\["cat"\]: [1-9]
EXPECT ^@usecs\[\{comm: "cat", bucket: N$

NAME docs: examples/README.md's latency_by_comm with 6.12's offset: the same
KERNEL 6.12
SETUP insmod kmod/kinstr.ko
BEFORE while :; do cat /etc/hostname > /dev/null; sleep 0.05; done
RUN python3 tests/vm/checks/doc_block.py examples/README.md 3 | sed 's/+0x3c/+0x40/' > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; echo "rc=$?"; \
	grep -m1 -E '^@calls\["cat"\]: [1-9]' /tmp/o.txt; grep -m1 -oE '^@usecs\[\{comm: "cat", bucket: [0-9]+' /tmp/o.txt | sed 's/[0-9]*$/N/'
TIMEOUT 90
EXPECT ^rc=0$
EXPECT ^@calls\["cat"\]: [1-9]
EXPECT ^@usecs\[\{comm: "cat", bucket: N$

NAME docs: relayd.md's example: babeltrace2's lttng-live viewer prints vfs_read events with their count while kinstr streams them to a real lttng-relayd, whose folder then holds them
# the guest has no host name of its own ("(none)", which kinstr would file as "localhost")
SETUP insmod kmod/kinstr.ko && ip link set lo up && hostname kinstr-guest
BEFORE while :; do cat /etc/hostname > /dev/null; sleep 0.05; done
RUN rm -rf /tmp/relay; python3 tests/vm/checks/doc_block.py docs/relayd.md 1 --prompt > /tmp/b.sh && sh /tmp/b.sh > /tmp/o.txt 2>&1; \
	echo "rc=$?"; grep -m1 -o ' vfs_read: .*count = [0-9]*' /tmp/o.txt | sed 's/: .*count = [0-9]*$/: count = N/'; \
	grep -m1 '^kinstr: live:' /tmp/o.txt; echo "relay folder: $(grep -E "^[0-9]+$" /tmp/o.txt | tail -1)"
CLEANUP pkill -x lttng-relayd; true
TIMEOUT 90
EXPECT ^rc=0$
EXPECT ^ vfs_read: count = N$
EXPECT ^kinstr: live: babeltrace2 net://127\.0\.0\.1/host/.*/demo
EXPECT ^relay folder: [1-9][0-9]*$
