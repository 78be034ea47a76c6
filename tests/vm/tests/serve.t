# kinstr serve (issue 17): probes kept in, their numbers scraped by a real Prometheus.

NAME serve: Debian's prometheus scrapes kinstr serve every second for 20 s while a program calls getppid 3,000 times (10 rounds of 300, 2 s apart); PromQL through Prometheus's HTTP API gives exactly 3,000 for the interior probe's counter and for the timed function's histogram count and 20 or more samples of the counter (the counter's resets as PromQL counts them printed, with the samples when there is one: the counter never going back is asserted on kinstr's own answers by the next test); promtool check metrics passes on a scrape; SIGTERM takes the probes out
ONCE
SETUP insmod kmod/kinstr.ko && ip link set lo up
RUN site=$(tests/vm/checks/pick_sites.py --need jump __x64_sys_getppid) || exit 1; before=$(build/tests/vm/progs/textsum '__x64_sys_getppid'); \
	printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: kinstr\n    static_configs:\n      - targets: ["127.0.0.1:9464"]\n' > /tmp/prom.yml; \
	build/kinstr serve --time __x64_sys_getppid $site 2>/tmp/serve.err & s=$!; \
	prometheus --config.file=/tmp/prom.yml --storage.tsdb.path=/tmp/promdb --web.listen-address=127.0.0.1:9090 >/tmp/prom.log 2>&1 & p=$!; \
	for i in $(seq 240); do curl -sf http://127.0.0.1:9090/-/ready >/dev/null && curl -sf http://127.0.0.1:9464/metrics >/dev/null && break; sleep 0.5; done; \
	curl -s http://127.0.0.1:9464/metrics > /tmp/m.txt; promtool check metrics < /tmp/m.txt && echo promtool-ok; \
	for r in $(seq 10); do build/tests/vm/progs/getppid_loop 300 > /dev/null; sleep 2; done; \
	q() { curl -sG http://127.0.0.1:9090/api/v1/query --data-urlencode "query=$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'; }; \
	for i in $(seq 40); do h=$(q 'kinstr_probe_hits_total'); c=$(q 'kinstr_function_duration_seconds_count{function="__x64_sys_getppid"}'); \
	test "$h" = 3000 && test "$c" = 3000 && break; sleep 0.5; done; \
	echo "promql: hits $h, histogram count $c, +Inf bucket $(q 'kinstr_function_duration_seconds_bucket{le="+Inf"}')"; \
	for i in $(seq 60); do n=$(q 'count_over_time(kinstr_probe_hits_total[2m])'); test "$n" != none && test "$n" -ge 20 && break; sleep 1; done; \
	test "$n" != none && test "$n" -ge 20 && echo "scraped 20 or more" || echo "scraped $n"; \
	rs=$(q 'resets(kinstr_probe_hits_total[2m])'); echo "resets $rs"; \
	test "$rs" = 0 || curl -sG http://127.0.0.1:9090/api/v1/query --data-urlencode 'query=kinstr_probe_hits_total[2m]' | \
		python3 -c 'import json,sys; [print("series", s["metric"], [v for t, v in s["values"]]) for s in json.load(sys.stdin)["data"]["result"]]'; \
	grep -c '^kinstr_info{version="[^"]*",module="[^"]*",abi="0\.[0-9]*",kernel="'"$(uname -r)"'"} 1$' /tmp/m.txt; \
	kill $p; wait $p; kill -TERM $s; wait $s; echo "serve exit $?"; \
	test "$before" = "$(build/tests/vm/progs/textsum '__x64_sys_getppid')" && echo text-restored
TIMEOUT 240
EXPECT ^promtool-ok$
EXPECT ^promql: hits 3000, histogram count 3000, \+Inf bucket 3000$
EXPECT ^scraped 20 or more$
EXPECT ^resets [0-9]+$
EXPECT ^1$
EXPECT ^serve exit 0$
EXPECT ^text-restored$

NAME serve: 1,000 concurrent scrapes while getppid runs all answer, each counter never goes back; another path is 404, a bad or taken --listen is refused before anything is patched
REQUIRES ! grep -q '^CONFIG_KASAN=y' /boot/config-$(uname -r)
ONCE
SETUP insmod kmod/kinstr.ko && ip link set lo up
RUN build/kinstr serve -d 120 __x64_sys_getppid 2>/dev/null & s=$!; \
	for i in $(seq 120); do curl -sf http://127.0.0.1:9464/metrics >/dev/null && break; sleep 0.5; done; \
	mkdir -p /tmp/sc; build/tests/vm/progs/getppid_loop 5000000 >/dev/null & w=$!; sleep 0.5; \
	curl -s --parallel --parallel-max 1000 $(for i in $(seq 1000); do echo "-o /tmp/sc/$i http://127.0.0.1:9464/metrics"; done); echo "curl rc $?"; \
	kill $w 2>/dev/null; wait $w 2>/dev/null; \
	python3 -c 'import glob, re; s=[open(f).read() for f in glob.glob("/tmp/sc/*")]; \
	r=sorted((int(re.search(r"^kinstr_scrapes_total (\d+)$", t, re.M).group(1)), int(re.search(r"^kinstr_probe_hits_total\{[^}]*\} (\d+)$", t, re.M).group(1))) for t in s); \
	print("scrapes", len(r), "distinct", len({a for a, _ in r}), "monotonic", all(r[i][1] <= r[i + 1][1] for i in range(len(r) - 1)), "rising", r[-1][1] > r[0][1])'; \
	curl -s -o /dev/null -w 'other path %{http_code}\n' http://127.0.0.1:9464/; \
	build/kinstr serve --listen 127.0.0.1:9464 __x64_sys_getppid 2>&1; echo "rc $?"; \
	build/kinstr serve --listen nonsense __x64_sys_getppid 2>&1; echo "rc $?"; \
	for p in 99999 0 http 9464x; do build/kinstr serve --listen 127.0.0.1:$p __x64_sys_getppid 2>&1; echo "port $p rc $?"; done; \
	kill $s; wait $s
TIMEOUT 240
EXPECT ^curl rc 0$
EXPECT ^scrapes 1000 distinct 1000 monotonic True rising True$
EXPECT ^other path 404$
EXPECT ^kinstr: --listen 127\.0\.0\.1:9464: Address already in use$
EXPECT ^kinstr: --listen: ADDR:PORT, not 'nonsense'$
EXPECT ^kinstr: --listen: the port must be a number from 1 to 65535, not '99999'$
EXPECT ^port 99999 rc 2$
EXPECT ^port 0 rc 2$
EXPECT ^port http rc 2$
EXPECT ^kinstr: --listen: the port must be a number from 1 to 65535, not '9464x'$
EXPECT ^port 9464x rc 2$
EXPECT ^rc 1$
EXPECT ^rc 2$

NAME serve: idle, half-sent and slow connections delay no scrape (one idle connection made the next scrape take 2 s, 40 made one time out): 20 scrapes beside 40 idle, 150 half-sent and one a byte a second all answer, their median within 100 ms and each within 1 s
SETUP insmod kmod/kinstr.ko
RUN build/kinstr serve --listen 127.0.0.1:9471 __x64_sys_getppid > /tmp/sv.out 2>&1 & s=$!; \
	for i in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:9471/metrics && break; sleep 0.2; done; \
	python3 tests/vm/checks/metrics_clients.py 127.0.0.1 9471; echo "rc $?"; \
	curl -s -o /dev/null -w 'after %{http_code}\n' http://127.0.0.1:9471/metrics; \
	kill $s; wait $s; echo "serve rc $?"
TIMEOUT 180
EXPECT ^scrapes 20 beside 40 idle, 150 half-sent and 1 slow connections: 20 answered, median within 100 ms True, all within 1000 ms True
EXPECT ^metrics_clients: ok$
EXPECT ^rc 0$
EXPECT ^after 200$

NAME count --metrics and profile --metrics serve the same counters and histograms while they run: a scrape after 1,000 getppid calls gives exactly 1,000 for the probe and the timed function's histogram count; --metrics with --by is refused
ONCE
SETUP insmod kmod/kinstr.ko && ip link set lo up
RUN up() { for i in $(seq 240); do curl -sf http://127.0.0.1:$1/metrics >/dev/null && return 0; sleep 0.5; done; return 1; }; \
	build/kinstr count --metrics 127.0.0.1:9465 -d 120 __x64_sys_getppid >/dev/null 2>&1 & a=$!; up 9465; \
	build/tests/vm/progs/getppid_loop 1000 >/dev/null; \
	curl -s http://127.0.0.1:9465/metrics | grep -E '^kinstr_probe_hits_total\{probe="__x64_sys_getppid\+0x[0-9a-f]+",class="[a-z]+"\} ' | sed 's/.* /count hits /'; \
	kill $a; wait $a; \
	build/kinstr profile --metrics 127.0.0.1:9466 -d 120 __x64_sys_getppid >/dev/null 2>&1 & b=$!; up 9466; \
	build/tests/vm/progs/getppid_loop 1000 >/dev/null; \
	curl -s http://127.0.0.1:9466/metrics > /tmp/pm.txt; promtool check metrics < /tmp/pm.txt && echo promtool-ok; \
	grep -E '^kinstr_function_duration_seconds_count\{function="__x64_sys_getppid"\} ' /tmp/pm.txt | sed 's/.* /profile count /'; \
	kill $b; wait $b; \
	build/kinstr count --metrics 127.0.0.1:9467 --by comm __x64_sys_getppid 2>&1; echo "rc $?"
TIMEOUT 180
EXPECT ^count hits 1000$
EXPECT ^promtool-ok$
EXPECT ^profile count 1000$
EXPECT ^kinstr: --metrics goes with plain counting, not --by, --every-block or --dry-run$
EXPECT ^rc 2$

NAME span --metrics serves the spans while it measures: two programs calling getppid 1,000 and 500 times at once, a scrape before the end gives exactly 1,500 spans from getppid's entry to its return in the histogram's _count and +Inf bucket (every thread's own, none unmatched), promtool check metrics passes, and the table at the end agrees; a bad --metrics is refused before anything is patched
ONCE
SETUP insmod kmod/kinstr.ko && ip link set lo up
RUN up() { for i in $(seq 240); do curl -sf http://127.0.0.1:$1/metrics >/dev/null && return 0; sleep 0.5; done; return 1; }; \
	build/kinstr span --json --metrics 127.0.0.1:9468 -d 120 __x64_sys_getppid '__x64_sys_getppid%return' > /tmp/sp.json 2>/tmp/sp.err & a=$!; \
	up 9468 || echo "not up: $(cat /tmp/sp.err)"; \
	build/tests/vm/progs/getppid_loop 1000 > /dev/null & p1=$!; build/tests/vm/progs/getppid_loop 500 > /dev/null & p2=$!; wait $p1 $p2; \
	for i in $(seq 40); do curl -s http://127.0.0.1:9468/metrics > /tmp/sm.txt; \
	c=$(sed -n 's/^kinstr_span_duration_seconds_count{from="__x64_sys_getppid",to="__x64_sys_getppid%return"} //p' /tmp/sm.txt); \
	test "$c" = 1500 && break; sleep 0.5; done; \
	echo "scrape: count $c, +Inf $(sed -n 's/^kinstr_span_duration_seconds_bucket{.*le="+Inf"} //p' /tmp/sm.txt), unmatched stops $(sed -n 's/^kinstr_span_unmatched_total{.*point="stop"} //p' /tmp/sm.txt)"; \
	promtool check metrics < /tmp/sm.txt && echo promtool-ok; \
	kill -INT $a; wait $a; echo "span rc $?"; \
	python3 -c 'import json,sys; d=json.load(open("/tmp/sp.json")); print("table", d["total"]["count"], d["unmatched_stops"])'; \
	build/kinstr span --metrics nonsense __x64_sys_getppid '__x64_sys_getppid%return'; echo "rc $?"
TIMEOUT 180
EXPECT ^scrape: count 1500, \+Inf 1500, unmatched stops 0$
EXPECT ^promtool-ok$
EXPECT ^span rc (0|130)$
EXPECT ^table 1500 0$
EXPECT ^kinstr: --metrics: ADDR:PORT, not 'nonsense'$
EXPECT ^rc 2$
