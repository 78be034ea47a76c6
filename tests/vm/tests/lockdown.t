# Lockdown cannot be lifted once set: this file runs after every other one (ORDER last).
ORDER last

NAME in a locked-down kernel kinstr reports the lockdown and refuses to patch, naming why, and kinstr doctor fails the lockdown check with what to do (exit 1)
SETUP insmod kmod/kinstr.ko
RUN echo integrity > /sys/kernel/security/lockdown; cat /sys/kernel/security/lockdown; \
	build/kinstr version -v | grep lockdown; build/kinstr count -d 1 vfs_read; echo rc=$?; \
	build/kinstr doctor; echo "doctor rc=$?"
EXPECT \[integrity\]
EXPECT ^lockdown +yes \(patching will be refused\)$
EXPECT ^kinstr: cannot reserve patch space for 1 probes: Operation not permitted \(kernel lockdown\?\)$
EXPECT ^rc=1$
EXPECT ^FAIL  lockdown   the kernel is locked down \(integrity\): kinstr\.ko refuses to patch kernel text
EXPECT ^ +-> boot without lockdown: remove lockdown= from the kernel command line
EXPECT ^doctor rc=1$
