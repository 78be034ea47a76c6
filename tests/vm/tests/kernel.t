# Facts of the kernel build the guest runs, derived at run time (issue 13): the ENDBR layout of
# IBT kernels (6.12), the calls the module makes to what it resolved, where returns go, and how
# the verifier's two decoders read the kernel's text.

NAME every function the module resolves, by its first 4 bytes: ENDBR, sealed ENDBR or none, as the kernel's IBT setting says (the module calls them directly)
SMOKE
RUN tests/vm/checks/resolved_endbr.py
EXPECT ^endbr [0-9]+:
EXPECT ^sealed [0-9]+:
EXPECT ^ibt-layout ok
TIMEOUT 120

NAME a probe on a function's ENDBR is refused with its own reason; the entry is its fentry NOP after the ENDBR
REQUIRES grep -qx CONFIG_X86_KERNEL_IBT=y /boot/config-$(uname -r)
SETUP insmod kmod/kinstr.ko
RUN build/kinstr count -d 1 vfs_read+0x0 2>&1; echo "exit=$?"; build/kinstr count -d 1 vfs_read+0x2 2>&1; \
	build/kinstr disasm vfs_read | grep -E '^  \+0x(0|4) '; \
	build/kinstr count --json -o /tmp/e.json -c 'cat /proc/version' vfs_read; \
	python3 -c 'import json; p=json.load(open("/tmp/e.json"))["probes"][0]; print("entry", p["probe"], p["class"], p["hits"] > 0)'
EXPECT ^kinstr: vfs_read\+0x0: refused: a function's ENDBR, where indirect calls land$
EXPECT ^exit=1$
EXPECT ^kinstr: vfs_read\+0x2: not an instruction boundary \(instruction at \+0x0, 4 bytes\)$
EXPECT ^  \+0x0 +(f3 0f 1e fa|66 0f 1f 00) .*refused a function's ENDBR
EXPECT ^  \+0x4 +0f 1f 44 00 00 .*refused overlaps an ftrace site
# the entry: after the NOP (+0x9) where a jump fits there, else from the NOP through ftrace
EXPECT ^entry vfs_read(\+0x9)? (ftrace|jump) True$
TIMEOUT 180

NAME where returns go: the module reports the kernel's return thunk (or bare rets), and every return of a function moves the way the kernel itself writes it
SMOKE
SETUP insmod kmod/kinstr.ko
RUN build/kinstr version -v | grep -E '^(returns|ibt) '; t=$(build/kinstr version -v --json | \
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["returns"], d["return_thunk"])'); echo "$t"; \
	set -- $t; if [ "$1" = thunk ]; then grep -i "^0*${2#0x} " /proc/kallsyms | head -1 | sed 's/^/thunk is /'; \
	else echo "no thunk: returns are bare"; fi; \
	build/kinstr count --json -o /tmp/r.json -c 'build/tests/vm/progs/getppid_loop 20000' '__x64_sys_getppid%return'; \
	python3 -c 'import json; d=json.load(open("/tmp/r.json")); print("returns", all(p["hits"] == 20000 for p in d["probes"]), sorted({p["class"] for p in d["probes"]}))'
EXPECT ^returns +(bare|thunk|its)
EXPECT ^(thunk is [0-9a-f]+ [Tt] \w+return_thunk|no thunk: returns are bare)$
EXPECT ^returns True \['jump'\]$
TIMEOUT 180

NAME the verifier's fast length decoder (rules/insn_len.h) reads every instruction of the core text as the kernel's insn_decode() does, and most of them
RUN insmod kmod/kinstr.ko decoder_selftest=1 || exit 1; dmesg | grep 'kinstr: decoder self-test' | sed 's/^\[[ 0-9.]*\] //'; \
	dmesg | sed -n 's/.*decoder self-test: .* \([0-9]*\) instructions, \([0-9]*\) read by the fast decoder.*/\1 \2/p' | \
	awk '{ print ($2 > 0.99 * $1) ? "fast share ok" : "fast share " $2 "/" $1 }'
EXPECT ^kinstr: decoder self-test: [1-9][0-9]{4,} functions, [1-9][0-9]{6,} instructions, [1-9][0-9]{6,} read by the fast decoder, 0 differ$
EXPECT ^fast share ok$
# each disagreement would print its own line
EXPECT_NOT insn_decode
TIMEOUT 300
