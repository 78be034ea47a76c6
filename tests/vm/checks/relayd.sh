#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kinstr trace --relayd against a real lttng-relayd (Debian's lttng-tools) on the guest's loopback.
#   relayd.sh live N     a trace of __x64_sys_getppid while getppid_loop N runs, streamed to the relay and
#                        written to /tmp/rl-local as well: babeltrace2's lttng-live viewer, attached before
#                        the calls, prints them while kinstr still runs; afterwards the relay's output folder
#                        holds exactly the events kinstr reports, the same as the local trace's
#   relayd.sh killed N   the relay killed (-9) after N calls were streamed: kinstr stops with an error naming
#                        the relay and exits non-zero, and the relay's folder keeps the N events
#   relayd.sh lossy N    tiny buffers, N calls: events are lost; babeltrace2 reads the relay's folder with the
#                        same recorded and discarded counts as kinstr reports, as it does the local trace
# Prints what it found, one fact per line, for the .t file's EXPECTs.
set -u
mode=$1 n=$2
loop=build/tests/vm/progs/getppid_loop
out=/tmp/rl-out-$mode
export LTTNG_HOME=/tmp/rl-home-$mode
mkdir -p "$LTTNG_HOME"
ip link set lo up
hostname kinstr-guest
host=kinstr-guest
url="net://127.0.0.1/host/$host/$mode"

lttng-relayd -o "$out" >/tmp/rl-relayd-$mode.log 2>&1 &
relayd_pid=$!
for i in $(seq 100); do
	(exec 3<>/dev/tcp/127.0.0.1/5342) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/5344) 2>/dev/null && break
	sleep 0.1
done
echo "relayd listening after $i tries"

# what kinstr runs (-c), while it traces: the session exists by then
cat >/tmp/rl-cmd-$mode.sh <<EOF
#!/bin/bash
count() { grep -c '__x64_sys_getppid:.*getppid_loop' /tmp/rl-live.txt; }
if [ $mode = live ]; then
	# the viewer shows what comes after it attached (as with LTTng): attach first
	stdbuf -oL babeltrace2 --input-format=lttng-live "$url" >/tmp/rl-live.txt 2>/tmp/rl-live.err &
	echo \$! >/tmp/rl-viewer.pid
	for i in \$(seq 100); do
		babeltrace2 query src.ctf.lttng-live sessions -p 'url="net://127.0.0.1"' 2>/dev/null | \
			grep -q 'client-count: 1' && break
		sleep 0.1
	done
	echo "viewer attached after \$i tries"
	$loop $n
	for i in \$(seq 150); do [ "\$(count)" -ge $n ] && break; sleep 0.1; done
	echo "live while tracing: \$(count) events"
elif [ $mode = lossy ]; then
	$loop $n
else
	$loop $n
	sleep 2.5	# flushed (every second) and sent
	kill -9 $relayd_pid
	echo "relay killed"
	sleep 3		# kinstr notices at its next beacon, within a second, and stops this command
	echo "still running"
fi
EOF
chmod +x /tmp/rl-cmd-$mode.sh

local= buf="--buffer-size 4M"
[ "$mode" != killed ] && local="-o /tmp/rl-local-$mode"
[ "$mode" = lossy ] && buf="--buffer-size 8K --subbuf-size 4K"
build/kinstr trace --relayd 127.0.0.1 --relayd-session "$mode" $local $buf \
	-c /tmp/rl-cmd-$mode.sh __x64_sys_getppid >/tmp/rl-kinstr-$mode.txt 2>&1
echo "kinstr rc=$?"
cat /tmp/rl-kinstr-$mode.txt
rec=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\1/p' /tmp/rl-kinstr-$mode.txt)
lost=$(sed -n 's/^kinstr: \([0-9]*\) events recorded, \([0-9]*\) lost.*/\2/p' /tmp/rl-kinstr-$mode.txt)

if [ "$mode" = live ]; then
	# the viewer ends with the session
	viewer=$(cat /tmp/rl-viewer.pid)
	for i in $(seq 100); do kill -0 "$viewer" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$viewer" 2>/dev/null && { echo "viewer still running"; kill "$viewer"; }
	echo "viewer stderr: $(grep -c . /tmp/rl-live.err) lines"
	head -5 /tmp/rl-live.err
fi
if [ "$mode" = lossy ]; then
	echo "recorded $rec lost $lost sum $((rec + lost))"
	for t in "$out" /tmp/rl-local-$mode; do
		python3 tests/vm/progs/check_trace.py "$t" --discarded "$lost" --total "$rec" >/tmp/rl-check.txt 2>&1
		cat /tmp/rl-check.txt
		echo "$([ "$t" = "$out" ] && echo "relay's folder" || echo "local trace"): $(tail -1 /tmp/rl-check.txt)"
	done
	kill -9 $relayd_pid 2>/dev/null
	exit 0
fi
babeltrace2 "$out" >/tmp/rl-after-$mode.txt 2>/tmp/rl-after-$mode.err
echo "babeltrace2 on the relay's folder rc=$? errors $(grep -vc 'discarded' /tmp/rl-after-$mode.err)"
relay=$(grep -c '__x64_sys_getppid:' /tmp/rl-after-$mode.txt)
ours=$(grep -c '__x64_sys_getppid:.*getppid_loop' /tmp/rl-after-$mode.txt)
echo "relay folder: $relay events, $ours of getppid_loop; kinstr reported ${rec:-none}"
[ -n "$rec" ] && [ "$relay" = "$rec" ] && echo "relay count == kinstr's count"
if [ "$mode" = live ]; then
	babeltrace2 /tmp/rl-local-$mode 2>&1 | grep '__x64_sys_getppid:' >/tmp/rl-local-ev.txt
	grep '__x64_sys_getppid:' /tmp/rl-after-$mode.txt >/tmp/rl-relay-ev.txt
	[ -s /tmp/rl-relay-ev.txt ] && cmp -s /tmp/rl-local-ev.txt /tmp/rl-relay-ev.txt && echo "same events as the local trace"
fi
kill -9 $relayd_pid 2>/dev/null
true
