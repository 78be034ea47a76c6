# kinstr version: the CLI, the module and the kernel being instrumented.

NAME kinstr version prints the CLI's, the module's and the running kernel's versions
SETUP insmod kmod/kinstr.ko
RUN build/kinstr version && echo "uname $(uname -r)"
EXPECT ^kinstr +[0-9]+\.[0-9]+\.[0-9]+$
EXPECT ^kinstr\.ko +[0-9]+\.[0-9]+\.[0-9]+ \(abi [0-9]+\.[0-9]+\)$
EXPECT ^kernel +6\.
EXPECT ^uname 6\.

NAME kinstr version names the same kernel as uname -r, and the module's version is the CLI's
SETUP insmod kmod/kinstr.ko
RUN k=$(build/kinstr version | awk '$1=="kernel"{print $2}'); \
	m=$(build/kinstr version | awk '$1=="kinstr.ko"{print $2}'); \
	test "$k" = "$(uname -r)" && test "$m" = "$(cat VERSION)" && echo "same $k $m"
EXPECT ^same 6\.

NAME kinstr version --json is one valid JSON object with every field
SETUP insmod kmod/kinstr.ko
RUN build/kinstr version --json -v | python3 -c 'import json,sys; d=json.load(sys.stdin); \
	print(sorted(d)); assert d["kernel"] and d["module"] and d["abi"]; print("valid")'
EXPECT ^valid$
EXPECT 'kallsyms_lookup_name'

NAME kinstr version -v reports the kallsyms_lookup_name that /proc/kallsyms lists
SETUP insmod kmod/kinstr.ko
RUN a=$(build/kinstr version -v | awk '$1=="kallsyms_lookup_name"{print $2}'); \
	b=$(awk '$3=="kallsyms_lookup_name"{print "0x"$1}' /proc/kallsyms); \
	echo "module=$a kallsyms=$b"; test -n "$b" && test "$a" = "$b" && echo match
EXPECT ^match$

NAME without the module, kinstr version says it is not loaded and how to load it
RUN build/kinstr version
EXIT 1
EXPECT ^kinstr: cannot open /dev/kinstr: No such file or directory: the kinstr module is not loaded: load it with 'insmod kmod/kinstr.ko'

NAME a non-root user is refused /dev/kinstr with a clear message
SETUP insmod kmod/kinstr.ko && useradd -M kinstr-user
RUN setpriv --reuid=kinstr-user --regid=kinstr-user --clear-groups build/kinstr version
EXIT 1
EXPECT ^kinstr: cannot open /dev/kinstr: Permission denied: kinstr needs root \(CAP_SYS_ADMIN\)
CLEANUP userdel kinstr-user

NAME root without CAP_SYS_ADMIN is refused by the module itself (EPERM)
SETUP insmod kmod/kinstr.ko
RUN setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin build/kinstr version
EXIT 1
EXPECT ^kinstr: cannot open /dev/kinstr: Operation not permitted: kinstr needs root
