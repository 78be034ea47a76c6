# kinstr trace --relayd: live streaming to a real lttng-relayd (Debian's lttng-tools) on the guest's loopback
# (tests/vm/checks/relayd.sh; docs/relayd.md). Issue 34 item 3.

NAME trace --relayd: the relay receives the trace; babeltrace2's lttng-live viewer prints the events while kinstr still runs; the relay's folder then holds exactly the events kinstr reports, the same as the local -o trace's
REQUIRES command -v lttng-relayd && command -v babeltrace2
SETUP insmod kmod/kinstr.ko
RUN tests/vm/checks/relayd.sh live 2000
TIMEOUT 90
EXPECT ^viewer attached after [0-9]+ tries$
EXPECT ^live while tracing: 2000 events$
EXPECT ^kinstr rc=0$
EXPECT ^kinstr: live: babeltrace2 net://127\.0\.0\.1/host/kinstr-guest/live
EXPECT ^kinstr: [0-9]+ events recorded, 0 lost, in /tmp/rl-local-live and lttng-relayd at 127\.0\.0\.1:5342 \(session live of host kinstr-guest
EXPECT ^viewer stderr: 0 lines$
EXPECT ^babeltrace2 on the relay's folder rc=0 errors 0$
EXPECT ^relay folder: [0-9]+ events, 2000 of getppid_loop; kinstr reported [0-9]+$
EXPECT ^relay count == kinstr's count$
EXPECT ^same events as the local trace$
EXPECT_NOT viewer still running

NAME trace --relayd: the relay killed mid-trace ends the recording with an error naming the relay and a non-zero exit; the relay's folder keeps what it received
REQUIRES command -v lttng-relayd && command -v babeltrace2
SETUP insmod kmod/kinstr.ko
RUN tests/vm/checks/relayd.sh killed 1000
TIMEOUT 60
EXPECT ^relay killed$
EXPECT ^kinstr rc=1$
EXPECT ^kinstr: lttng-relayd at 127\.0\.0\.1:5342: .*the relay went away.*; the recording stopped \(the relay keeps what it received\)$
EXPECT ^babeltrace2 on the relay's folder rc=0 errors 0$
EXPECT ^relay folder: [0-9]+ events, 1000 of getppid_loop; kinstr reported none$
EXPECT_NOT ^still running$
EXPECT_NOT ^kinstr: [0-9]+ events recorded

NAME trace --relayd: losses are counted as for local traces: with tiny buffers, recorded + lost = calls, and babeltrace2 reads the relay's folder with kinstr's recorded and discarded counts, as it reads the local trace
REQUIRES command -v lttng-relayd && command -v babeltrace2
SETUP insmod kmod/kinstr.ko
RUN tests/vm/checks/relayd.sh lossy 20000
TIMEOUT 90
EXPECT ^kinstr rc=0$
EXPECT ^recorded [0-9]+ lost [1-9][0-9]* sum 200[0-9][0-9]$
EXPECT ^relay's folder: trace ok$
EXPECT ^local trace: trace ok$
