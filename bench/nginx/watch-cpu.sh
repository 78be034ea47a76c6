# Sourced by the host halves of the nginx benchmarks (bench/run-nginx, bench/run-cover).
# watch_cpu OUT: when the guest drops mark.N into its job share OUT, answer with cpu.N, the QEMU
# process's user+system CPU seconds so far (bench/nginx/lib.sh, qemu_cpu). Runs until killed.
watch_cpu() {
	local out=$1 qpid= m n t tck
	tck=$(getconf CLK_TCK)
	while :; do
		if [ -z "$qpid" ] || [ ! -d /proc/$qpid ]; then
			qpid=
			for p in /proc/[0-9]*; do
				{ tr '\0' ' ' <$p/cmdline; } 2>/dev/null | grep -q "^qemu-system.*path=$PWD/$out," && qpid=${p#/proc/}
			done
		fi
		for m in "$out"/mark.*; do
			[ -e "$m" ] && [ -n "$qpid" ] || continue
			n=${m##*.}
			[ -e "$out/cpu.$n" ] && continue
			t=$(awk -v tck="$tck" '{ printf "%.2f", ($14 + $15) / tck }' /proc/$qpid/stat) || continue
			echo "$t" >"$out/cpu.$n.tmp" && mv "$out/cpu.$n.tmp" "$out/cpu.$n"
		done
		sleep 0.1
	done
}
