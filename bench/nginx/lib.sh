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
