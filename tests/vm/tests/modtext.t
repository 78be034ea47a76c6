# Probes in the text of loaded modules (tests/vm/modules/kinstr_test_timing.ko).

NAME kinstr -l lists a module's functions with their module, and the one with a jump label as refused
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
RUN build/kinstr -l 'kinstr_test_*'; build/kinstr -l --all 'kinstr_test_static_key'; \
	build/kinstr -l --json 'kinstr_test_outer'
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_timing
EXPECT ^kinstr_test_busy \[kinstr_test_timing\] +(jump|trap|ftrace) +[0-9]+ jump +[0-9]+ trap$
EXPECT ^kinstr_test_outer \[kinstr_test_timing\] +jump +[1-9][0-9]* jump
EXPECT ^kinstr_test_inner \[kinstr_test_timing\] +(jump|trap|ftrace) 
EXPECT ^kinstr_test_sleep \[kinstr_test_timing\] +(jump|trap|ftrace) 
EXPECT ^kinstr_test_multi_ret \[kinstr_test_timing\] +(jump|trap|ftrace) 
EXPECT ^kinstr_test_static_key \[kinstr_test_timing\] +refused .* overlaps a jump label$
EXPECT "function":"kinstr_test_outer","module":"kinstr_test_timing","entry":"jump"
EXPECT_NOT ^kinstr_test_static_key .*(jump|trap) +[0-9]+ jump.*[0-9] trap$

NAME kinstr disasm decodes a module function live: at least 3 return sites, entry and every return probeable
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
RUN build/kinstr disasm kinstr_test_multi_ret | tee /tmp/d.txt | head -1; \
	echo "returns: $(grep -c '(returns)' /tmp/d.txt)"; \
	build/kinstr disasm --json kinstr_test_multi_ret > /tmp/d.json && python3 -c 'import json; \
	d=json.load(open("/tmp/d.json")); assert d["module"] == "kinstr_test_timing"; print("json-module ok")'; \
	build/kinstr count --dry-run kinstr_test_multi_ret 'kinstr_test_multi_ret%return' \
	kinstr_test_outer 'kinstr_test_outer%return' kinstr_test_inner 'kinstr_test_inner%return' \
	kinstr_test_sleep 'kinstr_test_sleep%return' kinstr_test_busy 'kinstr_test_busy%return' | tail -1
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_timing
EXPECT ^kinstr_test_multi_ret \[kinstr_test_timing\] 0xffffffffc[0-9a-f]+\.\.0x[0-9a-f]+ \([0-9]+ bytes\)
EXPECT ^returns: ([3-9]|[1-9][0-9])$
EXPECT ^json-module ok$
EXPECT ^dry run: [1-9][0-9]* probes, nothing patched$

NAME exact counts in module text: 1000 calls at the entry and 1000 over every return; the module agrees
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
RUN build/kinstr count --json -o /tmp/m.json -c 'echo multi 1000 > /sys/kernel/debug/kinstr_test/run' \
	kinstr_test_multi_ret 'kinstr_test_multi_ret%return'; cat /sys/kernel/debug/kinstr_test/last; \
	python3 -c 'import json; d=json.load(open("/tmp/m.json")); p=d["probes"]; \
	[print(x["probe"], x["class"], x["hits"]) for x in p]; \
	assert d["command_status"] == 0; entry=p[0]["hits"]; rets=sum(x["hits"] for x in p[1:]); \
	assert len(p) >= 4, "fewer than 3 return sites"; \
	print("entry", entry, "returns", rets, "sites", len(p) - 1); assert entry == 1000 == rets; print("exact")'
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_timing
TIMEOUT 180
EXPECT ^cmd=multi calls=1000 
EXPECT ^entry 1000 returns 1000 sites [3-9]$
EXPECT ^exact$

NAME nested module functions counted at entry and return: outer, inner and busy, as often as the module ran them
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
RUN build/kinstr count --json -o /tmp/n.json -c 'echo outer 20 > /sys/kernel/debug/kinstr_test/run && \
	echo sleep 5 > /sys/kernel/debug/kinstr_test/run' kinstr_test_outer 'kinstr_test_outer%return' \
	kinstr_test_inner 'kinstr_test_inner%return' kinstr_test_sleep 'kinstr_test_sleep%return' kinstr_test_busy; \
	python3 -c 'import json; d=json.load(open("/tmp/n.json")); \
	ent={x["probe"].split("+")[0]: x["hits"] for x in d["probes"][::-1]}; \
	print("outer", ent["kinstr_test_outer"], "inner", ent["kinstr_test_inner"], "sleep", ent["kinstr_test_sleep"], \
	"busy", ent["kinstr_test_busy"])'; cat /sys/kernel/debug/kinstr_test/last
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_timing
TIMEOUT 180
EXPECT ^outer 20 inner 20 sleep 5 busy 45$
EXPECT ^cmd=sleep calls=5 total_ns=[0-9]+ outer_ns=0 inner_ns=0 sleep_ns=[1-9][0-9]{7,}

NAME a probed module cannot be unloaded (in use); after the probes go its text is restored and rmmod works
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
RUN before=$(build/tests/vm/progs/textsum 'kinstr_test_*'); echo "$before"; \
	build/kinstr count -d 120 kinstr_test_busy 'kinstr_test_busy%return' kinstr_test_multi_ret > /dev/null 2>&1 & pid=$!; \
	i=0; while [ $i -lt 100 ] && [ "$(build/tests/vm/progs/textsum 'kinstr_test_*')" = "$before" ]; do \
	sleep 0.2; i=$((i+1)); done; \
	test "$(build/tests/vm/progs/textsum 'kinstr_test_*')" != "$before" && echo patched; \
	rmmod kinstr_test_timing; echo "rmmod while probed: $?"; kill $pid; wait $pid; \
	after=$(build/tests/vm/progs/textsum 'kinstr_test_*'); test "$before" = "$after" && echo text-restored; \
	i=0; until rmmod kinstr_test_timing 2>/dev/null; do i=$((i+1)); [ $i -gt 50 ] && break; sleep 0.2; done; \
	lsmod | grep -q '^kinstr_test_timing ' || echo unloaded-after
CLEANUP rmmod kinstr_test_timing 2>/dev/null; true
TIMEOUT 180
EXPECT ^[0-9]+ functions, [0-9]+ bytes, text fnv1a [0-9a-f]+$
EXPECT ^patched$
EXPECT ^rmmod: ERROR: Module kinstr_test_timing is in use$
EXPECT ^rmmod while probed: 1$
EXPECT ^text-restored$
EXPECT ^unloaded-after$

NAME kinstr's own text, a module's jump label and its exception-table entry are refused with their rules, by both sides
SETUP insmod kmod/kinstr.ko && insmod tests/vm/modules/kinstr_test_timing.ko
RUN build/kinstr count kinstr_trace_stub; \
	jl=$(build/kinstr disasm kinstr_test_static_key | awk '/overlaps a jump label/ {print $1; exit}'); \
	ex=$(build/kinstr disasm kinstr_test_extable | awk '/refused holds an instruction with an exception-table fixup/ {print $1; exit}'); \
	build/kinstr count "kinstr_test_static_key$jl"; build/kinstr count "kinstr_test_extable$ex"; \
	build/tests/vm/progs/modcheck kinstr_test_static_key kinstr_test_extable; echo "modcheck $?"; \
	echo 'ext 3' > /sys/kernel/debug/kinstr_test/run; cat /sys/kernel/debug/kinstr_test/last
CLEANUP tests/vm/progs/rmmod_wait kinstr_test_timing
# the stub's entry: +0x0, or after its ENDBR on an IBT kernel
EXPECT ^kinstr: kinstr_trace_stub\+0x[04]: refused: inside kinstr\.ko itself$
EXPECT ^kinstr: kinstr_test_static_key\+0x[0-9a-f]+: refused: overlaps a jump label$
EXPECT ^kinstr: kinstr_test_extable\+0x[0-9a-f]+: refused: holds an instruction with an exception-table fixup$
EXPECT ^kinstr_test_static_key\+0x[0-9a-f]+ len 2 user=jump-label module=jump-label$
EXPECT ^kinstr_test_extable\+0x[0-9a-f]+ len 1 user=extable module=extable$
EXPECT ^modcheck 0$
EXPECT ^cmd=ext calls=3 .* multi_sum=-42$
