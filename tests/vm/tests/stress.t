# Probes under load (issue 13): Debian's stress-ng, with --verify, runs the same with thousands of
# probes in the kernel as without them.

NAME stress-ng --verify over 28 filesystem and os stressors passes as it does without probes, while kinstr count holds every jump site of the 200+ busy functions vfs_*, do_sys_*, __x64_sys_*; text restored, log clean
REQUIRES command -v stress-ng
SETUP insmod kmod/kinstr.ko
# one kinstr count per batch of at most 4000 probes: all but the last in the background, patched
# before the stressors start; the last runs them (-c)
RUN tests/vm/checks/batches.py 'vfs_*,do_sys_*,__x64_sys_*' --budget 4000 --min 200 > /tmp/groups || exit 1; \
	n=$(wc -l < /tmp/groups); set -- $(cat /tmp/groups); echo "functions $# in $n batches"; \
	sum() { build/tests/vm/progs/textsum "$(sed -n "${1}p" /tmp/groups | tr ' ' ,)"; }; \
	before=$(build/tests/vm/progs/textsum 'vfs_*,do_sys_*,__x64_sys_*'); \
	sh tests/vm/progs/stress_verify.sh 1 > /tmp/s-base; \
	k=1; pids=; while [ $k -lt $n ]; do b=$(sum $k); \
	build/kinstr count --every -d 1200 --json -o /tmp/s$k.json $(sed -n "${k}p" /tmp/groups) > /dev/null 2>&1 & \
	pids="$pids $!"; i=0; while [ "$(sum $k)" = "$b" ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i + 1)); done; \
	k=$((k + 1)); done; \
	build/kinstr count --every --json -o /tmp/s$n.json -c 'sh tests/vm/progs/stress_verify.sh 1 > /tmp/s-probed' \
	$(sed -n "${n}p" /tmp/groups) > /dev/null; echo "count rc=$?"; \
	for p in $pids; do kill -INT $p; wait $p; echo "background count rc=$?"; done; \
	after=$(build/tests/vm/progs/textsum 'vfs_*,do_sys_*,__x64_sys_*'); test "$before" = "$after" && echo text-restored; \
	python3 -c 'import json,sys; p=[x for f in sys.argv[1:] for x in json.load(open(f))["probes"]]; \
	print(len(p), "probes in", len({x["probe"].split("+")[0] for x in p}), "functions,", sum(x["hits"] > 0 for x in p), "hit")' \
	/tmp/s[0-9]*.json; \
	echo "baseline: $(tr "\n" " " < /tmp/s-base)"; echo "probed:   $(tr "\n" " " < /tmp/s-probed)"; \
	cmp -s /tmp/s-base /tmp/s-probed && echo same-results; \
	grep -v failed-verify /tmp/s-probed | grep -c ' 0$' | sed 's/^/passed /'; tail -n 1 /tmp/s-probed
TIMEOUT 1200
EXPECT ^functions [2-9][0-9]{2} in [2-9] batches$
EXPECT ^count rc=0$
EXPECT_NOT ^background count rc=[^0]
EXPECT ^text-restored$
EXPECT ^[0-9]{4,} probes in [2-9][0-9]{2} functions, [1-9][0-9]* hit$
EXPECT ^same-results$
EXPECT ^passed (2[0-9])$
EXPECT ^failed-verify 0$
