# kinstr installed as a user installs it (issue 33): the Debian packages that make deb built, DKMS,
# modprobe, kinstr doctor, the service's command line, removal; kinstr doctor's failures; and the bash
# completion (cli/completion/kinstr), run in the guest as bash runs it (its figures: docs/benchmarks.md).
# The manual pages are checked on the host: tests/unit/test_man.sh.

NAME kinstr doctor, with no module installed or loaded: the module check fails naming the running kernel and what to install, the load check says modprobe, exit 1; --json says the same
RUN build/kinstr doctor; echo "rc=$?"; build/kinstr doctor --json | python3 -c 'import json,sys; d=json.load(sys.stdin); \
	print("json ok=%s" % d["ok"], " ".join("%s=%s" % (c["name"], c["status"]) for c in d["checks"]))'
EXPECT ^FAIL  module     no kinstr\.ko for the running kernel 6\.[^ ]+ \(modinfo -k 
EXPECT ^ +-> apt install kinstr-dkms
EXPECT ^FAIL  loaded     kinstr\.ko is not loaded$
EXPECT ^skip  abi        the module is not loaded$
EXPECT ^ok    btf        /sys/kernel/btf/vmlinux$
EXPECT ^ok    kernel     Linux 6\.[0-9]+\.[^ ]+ \(the 6\.[0-9]+ series: tested\)$
EXPECT ^rc=1$
EXPECT ^json ok=False module=fail signature=skip lockdown=ok loaded=fail abi=skip btf=ok tracefs=ok kprobes=ok clock=(ok|warn) kernel=ok$

NAME the Debian packages install with apt, DKMS builds kinstr.ko for the running kernel, modprobe loads it, kinstr doctor passes, kinstr from PATH counts exactly 5,000 getppid calls, the service's unit verifies and its command line serves /metrics, and apt purge leaves no module, no DKMS tree and no file of the packages behind
RUN sh tests/vm/progs/package_check.sh 5000
EXPECT ^doctor before: rc=1 1 module failure$
EXPECT ^apt install rc=0 in [0-9]+ s$
EXPECT ^dkms: kinstr/[0-9.]+, 6\.[^,]+, x86_64: installed$
EXPECT ^modinfo: updates/dkms/kinstr\.ko
EXPECT ^modprobe ok: [0-9.]+$
EXPECT ^kinstr from PATH: /usr/bin/kinstr$
EXPECT ^doctor rc=0 failures=0$
EXPECT ^ok    module     /lib/modules/.*/updates/dkms/kinstr\.ko.* \(built by DKMS, kinstr/[0-9.]+\)$
EXPECT ^ok    abi        0\.[0-9]+ 
EXPECT ^getppid called 5000 times$
EXPECT ^__x64_sys_getppid\+0x[0-9a-f]+ +[a-z]+ +[a-z]+ +5000$
EXPECT ^unit verify rc=0$
EXPECT ^kinstr_function_duration_seconds_count\{function="vfs_read"\} N$
EXPECT ^kinstr_probe_hits_total\{probe="vfs_fsync[^"]*",class="[a-z]+"\} N$
EXPECT ^serve rc=0 after SIGTERM$
EXPECT ^purge rc=0$
EXPECT ^after purge: 0 files left, 0 kinstr\.ko under /lib/modules/[^ ]+, dkms: 0 lines$
EXPECT_NOT ^left behind
TIMEOUT 1200

NAME kinstr doctor names a loaded module that speaks another ABI (a KINSTR_PLANT=abi build of kinstr.ko) and what to do, exit 1; with the real module the ABI check passes
SETUP insmod build/kmod-plant-abi/$(uname -r)/kmod/kinstr.ko
RUN build/kinstr doctor; echo "rc=$?"; rmmod kinstr && insmod kmod/kinstr.ko && build/kinstr doctor | grep '^[a-zA-Z]* *abi '
EXPECT ^FAIL  abi        the module speaks ABI [1-9][0-9]*\.[0-9]+ \(kinstr\.ko [0-9.]+\), this kinstr 0\.[0-9]+ \([0-9.]+\): incompatible$
EXPECT ^ +-> install the module of this kinstr's version
EXPECT ^ok    loaded     kinstr [0-9.]+, /dev/kinstr$
EXPECT ^rc=1$
EXPECT ^ok    abi        0\.[0-9]+ \(kinstr\.ko 


NAME completion: a function prefix completes from the kernel's symbols (per-boot cache), a command and an option prefix from kinstr's own tables; a loaded module's functions once it is in
RUN bash tests/vm/checks/completion.sh MODULE
EXPECT ^cold count vfs_rea: [0-9]+ candidates, vfs_read yes, [0-9]+ ms$
EXPECT ^warm count vfs_rea: [0-9]+ candidates, vfs_read yes, [0-9]+ ms$
EXPECT ^fresh count vfs_rea: vfs_read yes, [0-9]+ ms$
EXPECT ^command co: count cover \([0-9]+ ms\)$
EXPECT ^option --ev: --every --every-block \([0-9]+ ms\)$
EXPECT ^return vfs_read%: vfs_read%return $
EXPECT ^help --man sp: span $
EXPECT ^cache [0-9]{5,} lines$
EXPECT ^not root count vfs_rea: vfs_read yes, [0-9]+ ms$
EXPECT ^module function [a-z_0-9.]+ after insmod: yes$
TIMEOUT 60
