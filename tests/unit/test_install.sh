#!/bin/sh
# make install / make uninstall into a DESTDIR, the library as a program links it (pkg-config, soname,
# only kinstr_* exported), the packages' version and lintian (make deb's build/deb/), the doctor's
# tested series against tests/kernels.
cd "$(dirname "$0")/../.." || exit 1
top=$(pwd)
version=$(cat VERSION)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# --- make install, Debian's layout (PREFIX=/usr, multiarch LIBDIR), into a DESTDIR
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
dirs="PREFIX=/usr LIBDIR=/usr/lib/$ma"
d=$tmp/root
if make -s $dirs DESTDIR="$d" install >"$tmp/install.log" 2>&1; then
	pass install_runs
else
	fail install_runs "make install failed: $(tail -3 "$tmp/install.log")"
fi
missing=
for f in usr/bin/kinstr usr/lib/$ma/libkinstr.so.$version usr/lib/$ma/libkinstr.so.0 usr/lib/$ma/libkinstr.so \
	usr/lib/$ma/libkinstr.a usr/lib/$ma/pkgconfig/libkinstr.pc usr/include/kinstr/kinstr.h \
	usr/include/kinstr/doctor.h usr/include/kinstr/uapi/linux/kinstr.h usr/include/kinstr/ring/ring_abi.h \
	usr/share/man/man8/kinstr.8 usr/share/man/man8/kinstr-count.8 usr/share/man/man8/kinstr-doctor.8 \
	usr/share/bash-completion/completions/kinstr usr/share/doc/kinstr/README.md \
	usr/share/kinstr/examples/branch_count.bpf.c usr/lib/kinstr/examples/branch_count.bpf.o \
	lib/systemd/system/kinstr-serve.service etc/default/kinstr-serve; do
	[ -e "$d/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && pass install_files || fail install_files "missing:$missing"
[ "$(readlink "$d/usr/lib/$ma/libkinstr.so.0")" = "libkinstr.so.$version" ] &&
	[ "$(readlink "$d/usr/lib/$ma/libkinstr.so")" = libkinstr.so.0 ] &&
	readelf -d "$d/usr/lib/$ma/libkinstr.so.$version" | grep -q 'SONAME.*\[libkinstr\.so\.0\]' &&
	pass install_soname || fail install_soname "libkinstr.so -> .so.0 -> .so.$version with soname libkinstr.so.0 expected"
other=$(nm -D --defined-only "$d/usr/lib/$ma/libkinstr.so.$version" | awk '$2 != "A" && $3 !~ /^kinstr_/ {print $3}' | head -3)
[ -z "$other" ] && pass install_exports_api_only || fail install_exports_api_only "exported beyond kinstr_*: $other"
grep -q "^ExecStart=/usr/bin/kinstr serve " "$d/lib/systemd/system/kinstr-serve.service" &&
	grep -q "^EnvironmentFile=-/etc/default/kinstr-serve" "$d/lib/systemd/system/kinstr-serve.service" &&
	pass install_unit_paths || fail install_unit_paths "the unit does not name /usr/bin/kinstr and /etc/default"

# a program of one's own, built with pkg-config against the installed library and run
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <kinstr/kinstr.h>
#include <kinstr/doctor.h>
int main(void)
{
	printf("%s %d.%d %s\n", kinstr__version(), KINSTR_ABI_MAJOR, KINSTR_ABI_MINOR,
	       kinstr_doctor__status_str(KINSTR_DOCTOR_FAIL));
	return 0;
}
EOF
pc="env PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_LIBDIR=$d/usr/lib/$ma/pkgconfig:/usr/lib/$ma/pkgconfig:/usr/share/pkgconfig"
flags=$($pc pkg-config --cflags --libs libkinstr 2>&1)
if cc -o "$tmp/prog" "$tmp/prog.c" $flags >"$tmp/cc.log" 2>&1; then
	out=$(LD_LIBRARY_PATH=$d/usr/lib/$ma "$tmp/prog")
	abi=$(sed -n 's/^#define KINSTR_ABI_MAJOR[[:space:]]*\([0-9]*\).*/\1/p; s/^#define KINSTR_ABI_MINOR[[:space:]]*\([0-9]*\).*/\1/p' \
		include/uapi/linux/kinstr.h | paste -sd.)
	[ "$out" = "$version $abi FAIL" ] && pass install_pkgconfig_program ||
		fail install_pkgconfig_program "printed '$out', expected '$version $abi FAIL'"
	ldd "$tmp/prog" | grep -q 'libkinstr\.so\.0' || fail install_pkgconfig_shared "not linked to libkinstr.so.0"
else
	fail install_pkgconfig_program "cc $flags: $(head -3 "$tmp/cc.log")"
fi

# --- make uninstall removes every file it wrote
make -s $dirs DESTDIR="$d" uninstall >"$tmp/uninstall.log" 2>&1
left=$(find "$d" ! -type d | sed "s|^$d||" | head -5)
[ -z "$left" ] && pass uninstall_removes_all || fail uninstall_removes_all "left: $left"

# --- the default PREFIX (/usr/local): its own etc and unit folder
d2=$tmp/local
make -s DESTDIR="$d2" install >/dev/null 2>&1
[ -x "$d2/usr/local/bin/kinstr" ] && [ -e "$d2/usr/local/etc/default/kinstr-serve" ] &&
	grep -q '^ExecStart=/usr/local/bin/kinstr ' "$d2/usr/local/lib/systemd/system/kinstr-serve.service" &&
	pass install_default_prefix || fail install_default_prefix "PREFIX=/usr/local layout: $(find "$d2" -maxdepth 4 | head -5)"
make -s DESTDIR="$d2" uninstall >/dev/null 2>&1
[ -z "$(find "$d2" ! -type d)" ] && pass uninstall_default_prefix || fail uninstall_default_prefix "files left"

# --- install-dkms: the module's source as DKMS builds it
d3=$tmp/dkms
make -s DESTDIR="$d3" install-dkms >/dev/null 2>&1
conf=$d3/usr/src/kinstr-$version/dkms.conf
if [ -f "$conf" ] && grep -q "^PACKAGE_VERSION=\"$version\"" "$conf" && [ -f "$d3/usr/src/kinstr-$version/kmod/Kbuild" ] &&
	[ -f "$d3/usr/src/kinstr-$version/ring/ring.c" ] && [ -f "$d3/usr/src/kinstr-$version/include/uapi/linux/kinstr.h" ]; then
	pass install_dkms_source
else
	fail install_dkms_source "no dkms.conf of $version with kmod/, ring/ and include/uapi/ under usr/src/kinstr-$version"
fi
# ... and it builds: dkms.conf's MAKE line, against the default kernel's headers, in a copy (as DKMS builds)
rel=$(scripts/kernel-release 2>/dev/null)
mk=$(sed -n 's/^MAKE\[0\]="\(.*\)"$/\1/p' "$conf" | sed "s|\${kernel_source_dir}|/lib/modules/$rel/build|;
	s|\${dkms_tree}/\${PACKAGE_NAME}/\${PACKAGE_VERSION}/build|$tmp/dkbuild|; s|\${PACKAGE_VERSION}|$version|")
cp -r "$d3/usr/src/kinstr-$version" "$tmp/dkbuild"
if [ -n "$rel" ] && [ -d "/lib/modules/$rel/build" ] && sh -c "$mk" >"$tmp/dkms-make.log" 2>&1 &&
	[ -f "$tmp/dkbuild/kmod/kinstr.ko" ]; then
	pass "install_dkms_builds: dkms.conf's MAKE builds kinstr.ko for $rel from the installed source alone"
else
	fail install_dkms_builds "for '$rel': $mk: $(grep -v Skipping "$tmp/dkms-make.log" | tail -3)"
fi

# --- the packages: one version (VERSION), lintian without errors
cl=$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
[ "$cl" = "$version" ] && pass deb_version_is_VERSION || fail deb_version_is_VERSION "debian/changelog $cl, VERSION $version"
changes=$(ls build/deb/kinstr_"$version"_*.changes 2>/dev/null | head -1)
if [ -z "$changes" ]; then
	fail deb_lintian "no build/deb/kinstr_${version}_*.changes (make deb)"
else
	for p in kinstr_"$version"_amd64 kinstr-dkms_"$version"_all libkinstr0_"$version"_amd64 libkinstr-dev_"$version"_amd64; do
		[ -e "build/deb/$p.deb" ] || fail deb_packages "build/deb/$p.deb missing"
	done
	lintian --no-cfg "$changes" >"$tmp/lintian" 2>&1
	errs=$(grep -c '^E: ' "$tmp/lintian")
	[ "$errs" = 0 ] && pass "deb_lintian: $(grep -c '^W: ' "$tmp/lintian") warnings, no errors" ||
		fail deb_lintian "$errs errors: $(grep '^E: ' "$tmp/lintian" | head -3)"
	deps=$(dpkg-deb -f "build/deb/kinstr_${version}_amd64.deb" Depends)
	case "$deps" in
	*libzydis*libbpf*|*libbpf*libzydis*) pass "deb_depends: $deps" ;;
	*) fail deb_depends "kinstr's Depends lacks what it loads: $deps" ;;
	esac
fi

# --- kinstr doctor's tested series are tests/kernels' (but the debug kernel, built here)
want=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' tests/kernels | awk '$2 != "debug" {print $1}' | sort -u | paste -sd' ')
have=$(sed -n 's/^const char \*const kinstr_doctor__tested_series\[\] = { \(.*\), NULL };/\1/p' lib/kernel/doctor.c |
	tr -d '",' | tr ' ' '\n' | sort -u | paste -sd' ')
[ -n "$want" ] && [ "$want" = "$have" ] && pass "doctor_tested_series: $have" ||
	fail doctor_tested_series "tests/kernels has '$want', lib/kernel/doctor.c '$have'"
cd "$top" || exit 1

# --- kinstr doctor finds modinfo in /sbin when PATH lacks it (a user's PATH): the same module verdict
a=$(build/kinstr doctor 2>&1 | grep '^[a-zA-Z]* *module ')
b=$(PATH=/usr/bin:/bin build/kinstr doctor 2>&1 | grep '^[a-zA-Z]* *module ')
[ -n "$a" ] && [ "$a" = "$b" ] && case "$a" in *"cannot run modinfo"*) false ;; esac &&
	pass "doctor_modinfo_without_sbin_in_path" || fail doctor_modinfo_without_sbin_in_path "'$a' vs '$b'"
