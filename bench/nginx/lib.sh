# Guest-side helpers for bench/run-nginx (sourced in the QEMU guest, from the repository's top).
NGX=/tmp/kinstr-nginx
WRK_ARGS=${WRK_ARGS:--t2 -c16}

# A fresh nginx prefix on the guest's tmpfs: config copy, logs, temp paths, and the served files.
ngx_setup() {
	rm -rf $NGX && mkdir -p $NGX/logs $NGX/tmp $NGX/www || return 1
	cp bench/nginx/nginx.conf $NGX/nginx.conf && : >$NGX/variant.conf
	echo '<html><body>kinstr case study</body></html>' >$NGX/www/index.html
	for kb in 1 4 16 64; do head -c $((kb * 1024)) /dev/urandom >$NGX/www/${kb}k.bin; done
}
ngx_start() {
	nginx -p $NGX/ -c $NGX/nginx.conf -e $NGX/logs/error.log || return 1
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		wget -q -O /dev/null http://127.0.0.1:8080/index.html 2>/dev/null && return 0
		busybox wget -q -O /dev/null http://127.0.0.1:8080/index.html 2>/dev/null && return 0
		sleep 0.5
	done
	echo "nginx did not answer" >&2; cat $NGX/logs/error.log >&2; return 1
}
ngx_stop() { [ -f $NGX/nginx.pid ] && kill -QUIT "$(cat $NGX/nginx.pid)"; sleep 1; }
# ngx_variant 'DIRECTIVES': rewrite variant.conf and reload (a new set of workers)
ngx_variant() {
	printf '%s\n' "$1" >$NGX/variant.conf
	kill -HUP "$(cat $NGX/nginx.pid)"; sleep 2
}
# The QEMU process's CPU time on the host (user+system, all threads, seconds), which bench/run-nginx's
# watcher writes into the job share when asked: the host's other jobs change how much CPU the guest
# gets per second, so requests per second of guest time drift; requests per QEMU CPU-second much less.
J=/run/kinstr-job
qemu_cpu() {
	mark=$(($(cat /tmp/qemu-cpu.mark 2>/dev/null || echo 0) + 1))	# callers run in $(...)
	echo $mark >/tmp/qemu-cpu.mark
	: >$J/mark.$mark
	for _ in $(seq 100); do [ -s $J/cpu.$mark ] && break; sleep 0.1; done
	cat $J/cpu.$mark 2>/dev/null || echo -
}
# wrk_rps SECONDS: run wrk against the mix of files; print requests/s of guest time and requests
# per QEMU CPU-second (keep wrk's text in /tmp/wrk.out)
wrk_rps() {
	c0=$(qemu_cpu)
	wrk $WRK_ARGS -d "${1}s" -s bench/nginx/mix.lua http://127.0.0.1:8080/ >/tmp/wrk.out 2>&1
	c1=$(qemu_cpu)
	awk -v c0="$c0" -v c1="$c1" '/requests in/ { n = $1 } /^Requests\/sec:/ { r = $2 }
		END { if (c0 == "-" || c1 == "-" || c1 <= c0) printf "%.0f -\n", r; else printf "%.0f %.0f\n", r, n / (c1 - c0) }' /tmp/wrk.out
}
# pair NAME SETUP TEARDOWN: PAIRS x (a no-probe wrk run, SETUP, two wrk runs, TEARDOWN, a no-probe
# run: A B B A, so that a drift of the guest's speed over the four runs cancels out), one row
# each: requests/s and requests per QEMU CPU-second, without and with (the means of two runs),
# and the ratios
pair() {
	for _ in $(seq "$PAIRS"); do
		b1=$(wrk_rps "$D")
		eval "$2" || { echo "pair $1: setup failed" >&2; return 1; }
		w1=$(wrk_rps "$D")
		w2=$(wrk_rps "$D")
		eval "$3"
		b2=$(wrk_rps "$D")
		echo "$1|$b1|$b2|$w1|$w2" | awk -F'|' '
			function mean(x, y, i,  a, b) { split(x, a, " "); split(y, b, " ")
				return (a[i] == "-" || b[i] == "-") ? "-" : (a[i] + b[i]) / 2 }
			{ br = mean($2, $3, 1); wr = mean($4, $5, 1); bc = mean($2, $3, 2); wc = mean($4, $5, 2)
			printf "%-36s %6.0f %6.0f %6.3f   %6s %6s %6s\n", $1, br, wr, wr / br,
				bc == "-" ? "-" : sprintf("%.0f", bc), wc == "-" ? "-" : sprintf("%.0f", wc),
				(bc == "-" || wc == "-") ? "-" : sprintf("%6.3f", wc / bc) }'
	done
}
pair_hdr() {
	printf '%-36s %6s %6s %6s   %6s %6s %6s\n' "" "req/s" "" "" "req/CPU-s" "" ""
	printf '%-36s %6s %6s %6s   %6s %6s %6s\n' "$1" "$2" "$3" "ratio" "$2" "$3" "ratio"
}
# since T0 TEXT: print TEXT and the seconds since T0 (date +%s.%N)
since() { echo "$2 $(echo "$(date +%s.%N) $1" | awk '{ printf "%.1f", $1 - $2 }') s"; }
# The bpftrace peer (bench/nginx/guest-run): /tmp/fns.bt, for each function of /tmp/fns (line N) a
# kfunc probe that keeps the entry time per thread and function, and a kretfunc probe that adds the
# duration to the function's log2 histogram (what kinstr profile keeps per function) and drops it.
# The key is (thread, function): a call nested in another timed function has its own entry; a
# function recursing into itself overwrites its own start (kinstr keeps a stack; rare here).
bt_gen() {
	awk '{ printf "kfunc:%s { @s[tid, %d] = nsecs; }\n", $1, NR
		printf "kretfunc:%s /@s[tid, %d]/ { @h[%d] = hist(nsecs - @s[tid, %d]); delete(@s[tid, %d]); }\n",
			$1, NR, NR, NR, NR }' /tmp/fns >/tmp/fns.bt
}
# bt_start: run bpftrace on /tmp/fns.bt in the background (pid $bt) and wait, at most BT_WAIT
# seconds, until all its probes are attached: one BPF link (fd) per kfunc/kretfunc program. Each
# trampoline update patches the function's ftrace site and replaces the trampoline (the old one
# is freed after an RCU-tasks grace period), so hundreds of them take a while. Appends
# "compile+load SEC attach SEC" to /tmp/bt.times.
BT_WAIT=${BT_WAIT:-600}
bt_start() {
	nprobe=$(grep -c . /tmp/fns.bt)
	[ "$nprobe" -gt 0 ] || { echo "bpftrace: no functions"; return 1; }
	ulimit -n 65536 2>/dev/null || ulimit -n 8192
	t0=$(date +%s.%N) ta=
	BPFTRACE_MAX_PROBES=100000 bpftrace /tmp/fns.bt >/tmp/bt.out 2>/tmp/bt.err & bt=$!
	while kill -0 $bt 2>/dev/null; do
		[ -n "$ta" ] || ! grep -q '^Attaching' /tmp/bt.out || ta=$(date +%s.%N)
		nl=$(ls -l /proc/$bt/fd 2>/dev/null | grep -c 'bpf.link')
		if [ "$nl" -ge "$nprobe" ]; then
			echo "$t0 ${ta:-$t0} $(date +%s.%N)" | awk '{ printf "compile+load %.1f attach %.1f\n", $2 - $1, $3 - $2 }' >>/tmp/bt.times
			tail -n 1 /tmp/bt.times | sed "s/^/bpftrace: $nprobe probes: /;s/\$/ s/"
			return 0
		fi
		if [ "$(echo "$(date +%s.%N) $t0" | awk '{ print int($1 - $2) }')" -ge "$BT_WAIT" ]; then
			echo "bpftrace: $nl of $nprobe links after ${BT_WAIT} s; stopped"
			kill -INT $bt; wait $bt
			return 1
		fi
		sleep 0.5
	done
	wait $bt
	return 1
}
# bt_stop: interrupt bpftrace (it prints its maps to /tmp/bt.out) and wait until it has detached
bt_stop() {
	t0=$(date +%s.%N)
	kill -INT $bt; wait $bt
	echo "$t0 $(date +%s.%N)" | awk '{ printf "detach+exit %.1f\n", $2 - $1 }' >>/tmp/bt.times
	tail -n 1 /tmp/bt.times | sed 's/^/bpftrace: /;s/$/ s/'
}
bt_on() { bt_start; }
bt_off() { bt_stop; }
# bpf_fns: attach once (no load) to find the functions of /tmp/fns bpftrace cannot attach to
# (named in its error: it stops at the first), drop them from /tmp/fns and try again, at most 6
# times; leaves /tmp/fns.bt
bpf_fns() {
	: >/tmp/bt.times
	for try in 1 2 3 4 5 6; do
		bt_gen
		if bt_start; then bt_stop; return 0; fi
		sed 's/^/    /' /tmp/bt.err | head -n 8
		grep -o 'func:[A-Za-z0-9_.:]*' /tmp/bt.err | sed 's/.*://' | sort -u >/tmp/fns.bad
		[ -s /tmp/fns.bad ] && [ -s /tmp/fns ] || break
		echo "bpftrace: cannot attach to $(tr '\n' ' ' </tmp/fns.bad)(try $try); dropped"
		comm -23 /tmp/fns /tmp/fns.bad >/tmp/fns.new && mv /tmp/fns.new /tmp/fns
	done
	rm -f /tmp/fns.bt
	return 1
}
