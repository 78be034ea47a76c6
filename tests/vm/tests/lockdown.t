# Lockdown cannot be lifted once set: this file runs after every other one (ORDER last).
ORDER last

NAME in a locked-down kernel kinstr reports the lockdown and refuses to patch, naming why
SETUP insmod kmod/kinstr.ko
RUN echo integrity > /sys/kernel/security/lockdown; cat /sys/kernel/security/lockdown; \
	build/kinstr version -v | grep lockdown; build/kinstr count -d 1 vfs_read; echo rc=$?
EXPECT \[integrity\]
EXPECT ^lockdown +yes \(patching will be refused\)$
EXPECT ^kinstr: cannot reserve patch space for 1 probes: Operation not permitted \(kernel lockdown\?\)$
EXPECT ^rc=1$
