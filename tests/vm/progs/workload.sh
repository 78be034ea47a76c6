#!/bin/sh
# A deterministic 2-CPU workload for the VM tests: file I/O, metadata, pipes, on both CPUs.
# Its output must not change when probes are installed.
d=$(mktemp -d)
work() {
	i=0
	while [ $i -lt 200 ]; do
		echo "line $i of $1" >> "$d/$1"
		i=$((i + 1))
	done
	cat "$d/$1" | wc -l
	stat -c %s "$d/$1" > /dev/null
	sha256sum "$d/$1" | cut -c1-16
}
work a > "$d/out.a" & work b > "$d/out.b" & wait
cat "$d/out.a" "$d/out.b"
rm -rf "$d"
