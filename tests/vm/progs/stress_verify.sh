#!/bin/sh
# Run Debian's stress-ng with --verify, one stressor after another (filesystem and os classes),
# and print one line per stressor: 'NAME STATUS' (stress-ng's exit status: 0 passed, 2 a stressor
# failed or its verification did, 3 out of resources, 4 not implemented here), then 'failed-verify N'
# counting the verification errors stress-ng logged.
#   tests/vm/progs/stress_verify.sh SECONDS_PER_STRESSOR
t=${1:-2}
dir=$(mktemp -d /tmp/stress.XXXXXX)
log=$dir/log
cd "$dir" || exit 1
for s in access chdir chmod chown dentry dir dirdeep dup eventfd fcntl flock fstat getdent link \
	lockf mknod open rename symlink touch utime xattr fork pipe poll sem get sysinfo; do
	stress-ng --verify --temp-path "$dir" --timeout "$t" --"$s" 1 >>"$log" 2>&1 </dev/null
	echo "$s $?"
done
echo "failed-verify $(grep -ci 'verif.*fail\|fail.*verif' "$log")"
cd / && rm -rf "$dir"
