#!/bin/sh
# install.t: the Debian packages (make deb: build/deb/) on the guest's kernel, as a user installs them:
# apt install, DKMS's build for the running kernel, modprobe, kinstr doctor, a count from PATH, the
# service's command line, then apt purge leaving nothing behind. Prints one line per step for EXPECT.
#   tests/vm/progs/package_check.sh N     (N: getppid calls to count)
set -u
n=${1:-5000}
rel=$(uname -r)
deb=build/deb
[ -e $deb/kinstr_*_amd64.deb ] || { echo "no packages in $deb (make deb)"; exit 1; }

# The guest shares the host's /boot and /lib/modules: every kernel of the test matrix is installed, and
# DKMS would build for the newest too (Debian's common.postinst). A machine has its running kernel:
# the others' images are hidden in this guest's overlay, so that DKMS builds for this one.
mkdir -p /tmp/hidden-boot
for c in /boot/config-*; do [ "$c" = "/boot/config-$rel" ] || mv "$c" /tmp/hidden-boot/; done
restore() { mv /tmp/hidden-boot/* /boot/ 2>/dev/null; }
trap restore EXIT

echo "doctor before: $(build/kinstr doctor >/tmp/doc0 2>&1; echo rc=$?) $(grep -c '^FAIL  module ' /tmp/doc0) module failure"

start=$(date +%s)
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	./$deb/kinstr_*_amd64.deb ./$deb/kinstr-dkms_*_all.deb >/tmp/apt.log 2>&1
rc=$?
echo "apt install rc=$rc in $(( $(date +%s) - start )) s"
[ $rc = 0 ] || { tail -15 /tmp/apt.log; tail -15 /var/lib/dkms/kinstr/*/build/make.log 2>/dev/null; }
grep -E 'Building for|Building initial|Error|error:' /tmp/apt.log | head -5
echo "dkms: $(dkms status kinstr)"
ko=$(modinfo -k "$rel" -n kinstr 2>/dev/null)
echo "modinfo: ${ko#/lib/modules/$rel/}"
modprobe kinstr && echo "modprobe ok: $(cat /sys/module/kinstr/version)"
echo "kinstr from PATH: $(command -v kinstr)"
kinstr doctor >/tmp/doc1 2>&1
echo "doctor rc=$? failures=$(grep -c '^FAIL' /tmp/doc1)"
grep -E '^(ok|warn|FAIL|skip) ' /tmp/doc1
kinstr count -c "build/tests/vm/progs/getppid_loop $n" __x64_sys_getppid 2>&1 | grep -E 'getppid|^__x64'

# kinstr-serve.service: systemd is not PID 1 in this guest, so the unit is verified by systemd-analyze
# and its command line run by hand with the defaults file the unit reads
unit=/lib/systemd/system/kinstr-serve.service
SYSTEMD_LOG_LEVEL=err systemd-analyze verify "$unit" >/tmp/verify 2>&1; echo "unit verify rc=$?"
cat /tmp/verify | head -5
ip link set lo up
set -a; . /etc/default/kinstr-serve; set +a
cmd=$(sed -n 's/^ExecStart=//p' "$unit")
eval "cmd=\"$cmd\""
echo "service command: $cmd"
$cmd -d 60 >/tmp/serve.out 2>&1 &
sp=$!
# until it serves a read (kinstr's start under TCG takes seconds): then SIGTERM, as systemctl stop sends
i=0
until curl -sf "http://$KINSTR_SERVE_LISTEN/metrics" >/tmp/metrics 2>/dev/null &&
	grep -qE '^kinstr_function_duration_seconds_count\{function="vfs_read"\} [1-9]' /tmp/metrics; do
	i=$((i + 1)); [ $i -lt 100 ] || break; sleep 0.5
done
grep -E '^kinstr_function_duration_seconds_count\{function="vfs_read"\} [1-9]' /tmp/metrics | sed 's/ [0-9]*$/ N/'
grep -E '^kinstr_probe_hits_total\{probe="vfs_fsync' /tmp/metrics | sed 's/ [0-9]*$/ N/'
kill -TERM $sp; wait $sp; echo "serve rc=$? after SIGTERM"
tail -3 /tmp/serve.out

# removal: the module unloaded, then both packages purged; nothing of theirs may stay
files=$(dpkg -L kinstr kinstr-dkms | sort -u)
rmmod kinstr
DEBIAN_FRONTEND=noninteractive apt-get purge -y kinstr kinstr-dkms >/tmp/purge.log 2>&1; echo "purge rc=$?"
left=0
for f in $files; do
	[ -d "$f" ] && continue	# a folder (or /lib, a link to one) the packages share with the system
	[ -e "$f" ] || [ -L "$f" ] && { echo "left behind: $f"; left=$((left + 1)); }
done
ls /var/lib/dkms/kinstr >/dev/null 2>&1 && { echo "left behind: /var/lib/dkms/kinstr"; left=$((left + 1)); }
found=$(find /lib/modules/$rel -name 'kinstr.ko*' | wc -l)
echo "after purge: $left files left, $found kinstr.ko under /lib/modules/$rel, dkms: $(dkms status kinstr | wc -l) lines"
