# Sourced by the bench/run-* scripts: which kernel the guest boots, and the bench modules for it.
#   --kernel REL|SERIES as the script's first options, or KINSTR_KERNEL=REL / KINSTR_KERNEL_SERIES=6.12
#   in the environment (scripts/kernel-release); default: the newest installed generic 6.1.
# bench_kernel_args "$@" sets $rel and $bench_args (the arguments left); bench_kmods builds
# kinstr.ko (scripts/build-kmod: the guest mounts build/kmod/REL/kmod over kmod/) and
# bench/kmod's modules into build/bench/kmod/REL/, where the guest finds them as
# build/bench/kmod/$(uname -r)/NAME.ko.
bench_kernel_args() {
	bench_args=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--kernel) k=$2; shift 2
			if [ -e "/boot/vmlinuz-$k" ]; then export KINSTR_KERNEL=$k
			else export KINSTR_KERNEL_SERIES=$k; unset KINSTR_KERNEL; fi ;;
		--kernel=*) set -- --kernel "${1#--kernel=}" "${@:2}" ;;
		*) bench_args+=("$1"); shift ;;
		esac
	done
	rel=$(scripts/kernel-release) || exit 1
	export KINSTR_KERNEL=$rel
}
bench_kmods() {
	scripts/build-kmod "$rel" >/dev/null
	local d=build/bench/kmod/$rel
	mkdir -p "$d"
	for f in bench/kmod/*.c bench/kmod/Kbuild; do cmp -s "$f" "$d/${f##*/}" || cp -p "$f" "$d/"; done
	make -s -C "/lib/modules/$rel/build" M="$PWD/$d" modules >/dev/null
}
