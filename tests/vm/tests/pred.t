# Value predicates (issue 32, item 3): SPEC(VALUE...) if EXPR and --where EXPR, compiled by the library
# (lib/plan/pred.c), verified by the module at install and run in probe context before the action
# (kmod/actions/pred.c): a hit they reject records nothing and is counted as filtered.

NAME pred: count 'vfs_read(count) if count > 4096' of a program making 30 reads of 8192 bytes and 50 of 512 gives exactly 30, the small ones filtered; the --where form the same; ret < 0 at a %return gives exactly the 40 failing reads
SMOKE
FEATURE pred
SETUP insmod kmod/kinstr.ko
RUN P=build/tests/vm/progs/read_sizes; \
	build/kinstr count --json -c "$P 30 8192 50 512" 'vfs_read(count) if count > 4096' | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); p=d["probes"][0]; print("if", p["hits"], "filtered>=50", p["filtered"] >= 50)'; \
	build/kinstr count --json -c "$P 30 8192 50 512" --where 'count > 4096' 'vfs_read(count)' | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("where", sum(p["hits"] for p in d["probes"]))'; \
	build/kinstr count --json -c "$P 0 1 0 1 40" --where 'comm == "read_sizes"' 'vfs_read%return if ret < 0' | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("ret<0", sum(p["hits"] for p in d["probes"]))'; \
	build/kinstr count -c "$P 7 8192 3 512" 'vfs_read(count) if count == 8192 && !(pid == 0) || count == 1'
EXPECT ^if 30 filtered>=50 True$
EXPECT ^where 30$
EXPECT ^ret<0 40$
EXPECT ^vfs_read\S* +\S+ +\S+ +7$
EXPECT ^[0-9]+ hits filtered out by the predicate$
TIMEOUT 120

NAME pred: trace --where 'comm == "pr_two" && count == 8192' with two programs reading at once records exactly the second's 40 large reads; count --by comm with a predicate counts each program's own; span with a predicate at its start pairs only those
FEATURE pred
SETUP insmod kmod/kinstr.ko
RUN cp build/tests/vm/progs/read_sizes /tmp/pr_one && cp build/tests/vm/progs/read_sizes /tmp/pr_two; \
	build/kinstr trace -o /tmp/pr_tr --where 'comm == "pr_two" && count == 8192' -c '/tmp/pr_one 30 8192 10 512 & /tmp/pr_two 40 8192 20 512 & wait' 'vfs_read(count)' 2>&1 | grep filtered; \
	python3 tests/vm/progs/check_trace.py /tmp/pr_tr --count vfs_read pr_two 40 --total 40 | tail -1; \
	build/kinstr count --by comm --json -c '/tmp/pr_one 30 8192 10 512 & /tmp/pr_two 40 8192 20 512 & wait' 'vfs_read(count) if count == 8192' | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); r={}; [r.__setitem__(x["comm"], r.get(x["comm"], 0) + x["hits"]) for x in d["rows"]]; print("by", sorted(r.items()))'; \
	build/kinstr span --json --where 'comm == "pr_two"' -c '/tmp/pr_one 30 8192 10 512 & /tmp/pr_two 40 8192 20 512 & wait' 'vfs_read(count) if count == 8192' 'vfs_read%return' | \
		python3 -c 'import json, sys; d=json.load(sys.stdin); print("spans", d["total"]["count"], sorted({k["comm"] for k in d["keys"]}), "filtered>=70", d["filtered"] >= 70)'
EXPECT ^trace ok$
EXPECT ^kinstr: [0-9]+ hits filtered out by the predicates$
EXPECT ^by \[\('pr_one', 30\), \('pr_two', 40\)\]$
EXPECT ^spans 40 \['pr_two'\] filtered>=70 True$
TIMEOUT 180

NAME pred: bad expressions are refused before anything is patched, naming the column and the token; an unknown name lists the spec's values; subcommands without predicates say so
FEATURE pred
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -d 1 --where 'count > ' 'vfs_read(count)' 2>&1; echo "rc $?"; \
	build/kinstr count -d 1 'vfs_read(count) if cnt > 1' 2>&1; echo "rc $?"; \
	build/kinstr trace -d 1 -o /tmp/pr_bad 'vfs_read(count) if count > 1 )' 2>&1; echo "rc $?"; \
	build/kinstr span -d 1 --where 'comm < "x"' vfs_read 'vfs_read%return' 2>&1; echo "rc $?"; \
	build/kinstr count -d 1 --where 'count == "x"' 'vfs_read(count)' 2>&1; echo "rc $?"; \
	build/kinstr count -d 1 --by stack --where 'pid == 1' vfs_read 2>&1; echo "rc $?"; \
	build/kinstr profile -d 1 'vfs_read if pid == 1' 2>&1; echo "rc $?"; \
	build/kinstr profile -d 1 --where 'pid == 1' vfs_read 2>&1; echo "rc $?"
EXPECT ^kinstr: --where 'count > ': at column 9: expected a number, a string or a value name$
EXPECT ^kinstr: vfs_read: if 'cnt > 1': at column 1: no value named 'cnt' \(there are: count, pid, tid, cpu, comm\)$
EXPECT ^kinstr: vfs_read: if 'count > 1 \)': at column 11: a '\)' without its '\(', not '\)'$
EXPECT ^kinstr: --where 'comm < "x"': at column 6: strings compare with == and != only$
EXPECT ^kinstr: vfs_read: --where 'count == "x"': at column 7: a number is compared with a number$
EXPECT ^kinstr: a predicate \(--where, or SPEC if EXPR\) goes with plain count and --by comm\|pid\|tid\|value, not --by stack$
EXPECT ^kinstr: vfs_read if pid == 1: a predicate \(SPEC if EXPR\) works with count, trace and span only$
EXPECT where
EXPECT_NOT ^rc 0$
TIMEOUT 120
