// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* kinstr doctor's checks: what the kernel and the system say, and what to do about it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kinstr/doctor.h>
#include <kinstr/kinstr.h>

extern char **environ;

/* tests/kernels' series (a unit test compares the two lists) */
const char *const kinstr_doctor__tested_series[] = { "6.1", "6.12", NULL };

#define EFI_SECURE_BOOT "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define DKMS_MOK_PUB "/var/lib/dkms/mok.pub"

/* What the checks learn that later ones need. */
struct doctor {
	struct kinstr_doctor_check *c;
	size_t n, max;
	struct utsname u;
	char path[512];		/* the module file for the running kernel ("" none) */
	char dkms[300];		/* "kinstr/VERSION" when DKMS built it for this kernel */
	char signer[256];	/* "" unsigned */
	bool enforcing;		/* only signed modules load (sig_enforce, or Secure Boot's lockdown) */
	bool secure_boot, locked, loaded;
};

const char *kinstr_doctor__status_str(enum kinstr_doctor_status s)
{
	switch (s) {
	case KINSTR_DOCTOR_OK: return "ok";
	case KINSTR_DOCTOR_WARN: return "warn";
	case KINSTR_DOCTOR_FAIL: return "FAIL";
	default: return "skip";
	}
}

static struct kinstr_doctor_check *check(struct doctor *d, const char *name)
{
	struct kinstr_doctor_check *c = &d->c[d->n++];

	memset(c, 0, sizeof(*c));
	c->name = name;
	return c;
}

__attribute__((format(printf, 2, 3)))
static void say(char *to, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(to, KINSTR_DOCTOR_TEXT, fmt, ap);
	va_end(ap);
}
#define detail(c, ...) say((c)->detail, __VA_ARGS__)
#define fix(c, ...) say((c)->fix, __VA_ARGS__)

/* A small file's first line, without its newline; "" when it cannot be read. */
static const char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return buf;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static bool spawn_sbin(pid_t *pid, posix_spawn_file_actions_t *fa, char *const argv[])
{
	char path[256];

	snprintf(path, sizeof(path), "/sbin/%s", argv[0]);
	return !posix_spawn(pid, path, fa, NULL, argv, environ);
}

/* argv's standard output (its first line) into out; the exit status, or -1 when it did not run. */
static int run_line(char *const argv[], char *out, size_t len)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2], st = -1;
	pid_t pid;
	FILE *f;

	out[0] = 0;
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* modinfo lives in /sbin, which a user's PATH often lacks */
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) &&
	    (strchr(argv[0], '/') || !spawn_sbin(&pid, &fa, argv))) {
		posix_spawn_file_actions_destroy(&fa);
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	f = fdopen(pipefd[0], "r");
	if (f) {
		if (!fgets(out, len, f))
			out[0] = 0;
		while (fgetc(f) != EOF)
			;
		fclose(f);
	} else {
		close(pipefd[0]);
	}
	out[strcspn(out, "\n")] = 0;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool exists(const char *path)
{
	return !access(path, F_OK);
}

/* DKMS's build of kinstr for this kernel (/var/lib/dkms/kinstr/VERSION/RELEASE/) into d->dkms; else a version
 * DKMS has the source of into added */
static void find_dkms(struct doctor *d, char *added, size_t len)
{
	DIR *dir = opendir("/var/lib/dkms/kinstr");
	struct dirent *e;
	char p[768];

	added[0] = 0;
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.' || !strncmp(e->d_name, "kernel-", 7) || !strcmp(e->d_name, "original_module"))
			continue;
		snprintf(p, sizeof(p), "/var/lib/dkms/kinstr/%s/%s", e->d_name, d->u.release);
		if (exists(p))
			snprintf(d->dkms, sizeof(d->dkms), "kinstr/%s", e->d_name);
		else if (!added[0])
			snprintf(added, len, "kinstr/%s", e->d_name);
	}
	if (dir)
		closedir(dir);
}

static void check_module(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "module");
	char *argv[] = { "modinfo", "-k", d->u.release, "-n", "kinstr", NULL };
	char added[300];
	int st;

	find_dkms(d, added, sizeof(added));
	st = run_line(argv, d->path, sizeof(d->path));
	if (st < 0) {
		d->path[0] = 0;
		c->status = KINSTR_DOCTOR_FAIL;
		detail(c, "cannot run modinfo (neither on PATH nor in /sbin) to find kinstr.ko for %s", d->u.release);
		fix(c, "apt install kmod");
		return;
	}
	if (st == 0 && d->path[0] == '/') {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "%s%s%s%s", d->path, d->dkms[0] ? " (built by DKMS, " : " (not from DKMS)",
		       d->dkms, d->dkms[0] ? ")" : "");
		return;
	}
	d->path[0] = 0;
	if (exists("/sys/module/kinstr")) {
		c->status = KINSTR_DOCTOR_WARN;
		detail(c, "no kinstr.ko installed for %s, but one is loaded (insmod from a build tree?)",
		       d->u.release);
		fix(c, "install the module so that it survives a reboot: apt install kinstr-dkms, or make kmod and "
		       "make -C /lib/modules/%s/build M=$PWD/kmod modules_install", d->u.release);
		return;
	}
	c->status = KINSTR_DOCTOR_FAIL;
	if (added[0]) {
		detail(c, "DKMS has %s's source but no build of it for %s", added, d->u.release);
		fix(c, "install this kernel's headers and build it: apt install linux-headers-%s && dkms autoinstall -k %s "
		       "(the failed build's log: /var/lib/dkms/kinstr/*/build/make.log)", d->u.release, d->u.release);
	} else {
		detail(c, "no kinstr.ko for the running kernel %s (modinfo -k %s kinstr finds none)", d->u.release,
		       d->u.release);
		fix(c, "apt install kinstr-dkms (DKMS builds it for every kernel with headers: linux-headers-%s), or "
		       "from a build tree: make kmod && insmod kmod/kinstr.ko", d->u.release);
	}
}

static void check_signature(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "signature");
	char *argv[] = { "modinfo", "-F", "signer", d->path, NULL };
	char sb[64], enforce[8], mok[256];
	int fd;

	/* Secure Boot: the EFI variable's 4 attribute bytes, then 1 when it is on */
	fd = open(EFI_SECURE_BOOT, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		unsigned char v[5];

		d->secure_boot = read(fd, v, sizeof(v)) == 5 && v[4] == 1;
		close(fd);
	}
	read_line("/sys/module/module/parameters/sig_enforce", enforce, sizeof(enforce));
	d->enforcing = enforce[0] == 'Y' || d->secure_boot;
	snprintf(sb, sizeof(sb), "%s", !exists("/sys/firmware/efi") ? "no EFI, so no Secure Boot" :
		 d->secure_boot ? "Secure Boot on" : "Secure Boot off");
	if (!d->path[0]) {
		c->status = KINSTR_DOCTOR_SKIP;
		detail(c, "no module file to check (%s, sig_enforce %s)", sb, enforce[0] ? enforce : "?");
		return;
	}
	run_line(argv, d->signer, sizeof(d->signer));
	mok[0] = 0;
	if (exists(DKMS_MOK_PUB))
		snprintf(mok, sizeof(mok), "; DKMS's key is " DKMS_MOK_PUB);
	if (!d->enforcing) {
		c->status = KINSTR_DOCTOR_OK;
		if (d->signer[0])
			detail(c, "signed by '%s'; signatures not enforced (%s, sig_enforce %s)%s", d->signer, sb,
			       enforce[0] ? enforce : "?", mok);
		else
			detail(c, "unsigned; signatures not enforced (%s, sig_enforce %s): it loads, and the kernel "
				  "notes the taint%s", sb, enforce[0] ? enforce : "?", mok);
		return;
	}
	if (!d->signer[0]) {
		c->status = KINSTR_DOCTOR_FAIL;
		detail(c, "kinstr.ko is unsigned and this kernel loads only signed modules (%s, sig_enforce %s)", sb,
		       enforce);
		fix(c, "let DKMS sign it: dkms generates " DKMS_MOK_PUB " (and mok.key) when it builds with "
		       "sign_file; rebuild (dkms remove kinstr/VERSION -k %s; dkms install kinstr/VERSION -k %s), "
		       "then enrol the key: mokutil --import " DKMS_MOK_PUB ", reboot, confirm in MokManager",
		    d->u.release, d->u.release);
		return;
	}
	c->status = exists("/sys/module/kinstr") ? KINSTR_DOCTOR_OK : KINSTR_DOCTOR_WARN;
	detail(c, "signed by '%s'; the kernel loads only signed modules (%s)%s", d->signer, sb, mok);
	if (c->status == KINSTR_DOCTOR_WARN)
		fix(c, "it loads only if that key is enrolled: mokutil --test-key " DKMS_MOK_PUB "; if not, "
		       "mokutil --import " DKMS_MOK_PUB ", reboot and confirm in MokManager");
}

static void check_lockdown(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "lockdown");
	char buf[128], *open_br, *close_br;

	read_line("/sys/kernel/security/lockdown", buf, sizeof(buf));
	open_br = strchr(buf, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (!open_br || !close_br) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "no lockdown (securityfs has no lockdown file)");
		return;
	}
	*close_br = 0;
	if (!strcmp(open_br + 1, "none")) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "none");
		return;
	}
	d->locked = true;
	c->status = KINSTR_DOCTOR_FAIL;
	detail(c, "the kernel is locked down (%s): kinstr.ko refuses to patch kernel text, and lockdown cannot be "
		  "lifted while it runs", open_br + 1);
	fix(c, "boot without lockdown: %s", d->secure_boot ?
	    "Debian locks down under Secure Boot; turn Secure Boot validation off (mokutil --disable-validation, "
	    "reboot, confirm) or in the firmware" :
	    "remove lockdown= from the kernel command line (/etc/default/grub, update-grub) and whatever sets it "
	    "at boot (echo ... > /sys/kernel/security/lockdown)");
}

static void check_loaded(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "loaded");
	char ver[64];

	d->loaded = exists("/sys/module/kinstr");
	if (d->loaded && exists(KINSTR_DEVICE)) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "kinstr %s, " KINSTR_DEVICE, read_line("/sys/module/kinstr/version", ver, sizeof(ver)));
		return;
	}
	c->status = KINSTR_DOCTOR_FAIL;
	if (d->loaded) {
		detail(c, "kinstr is loaded but " KINSTR_DEVICE " is missing");
		fix(c, "check udev/devtmpfs (ls -l /dev/kinstr; dmesg | grep kinstr), or reload: rmmod kinstr; "
		       "modprobe kinstr");
	} else {
		detail(c, "kinstr.ko is not loaded");
		fix(c, "%s", d->path[0] ? "modprobe kinstr (as root)" :
		    "install it first (the module check), then modprobe kinstr");
	}
}

static void check_abi(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "abi");
	struct kinstr_version v;
	struct kinstr_dev *dev;
	int err;

	if (!d->loaded) {
		c->status = KINSTR_DOCTOR_SKIP;
		detail(c, "the module is not loaded");
		return;
	}
	dev = kinstr_dev__open(NULL);
	if (!dev) {
		c->status = KINSTR_DOCTOR_FAIL;
		detail(c, "cannot open " KINSTR_DEVICE ": %s", strerror(errno));
		fix(c, "%s", kinstr_dev__open_hint(errno));
		return;
	}
	err = kinstr_dev__version(dev, &v);
	kinstr_dev__close(dev);
	if (err) {
		c->status = KINSTR_DOCTOR_FAIL;
		detail(c, KINSTR_DEVICE " does not answer the version ioctl: %s", strerror(-err));
		fix(c, "the module and this kinstr are from different builds: install both from one version "
		       "(apt install kinstr kinstr-dkms), then rmmod kinstr; modprobe kinstr");
		return;
	}
	v.module_version[sizeof(v.module_version) - 1] = 0;
	if (v.abi_major != KINSTR_ABI_MAJOR || v.abi_minor < KINSTR_ABI_MINOR) {
		c->status = KINSTR_DOCTOR_FAIL;
		detail(c, "the module speaks ABI %u.%u (kinstr.ko %s), this kinstr %d.%d (%s): %s", v.abi_major,
		       v.abi_minor, v.module_version, KINSTR_ABI_MAJOR, KINSTR_ABI_MINOR, kinstr__version(),
		       v.abi_major != KINSTR_ABI_MAJOR ? "incompatible" : "the module is older");
		fix(c, "install the module of this kinstr's version (apt install kinstr-dkms=%s, or make kmod in its "
		       "tree), then reload it: rmmod kinstr; modprobe kinstr", kinstr__version());
		return;
	}
	c->status = strcmp(v.module_version, kinstr__version()) ? KINSTR_DOCTOR_WARN : KINSTR_DOCTOR_OK;
	detail(c, "%u.%u (kinstr.ko %s, this kinstr %s, ABI %d.%d)", v.abi_major, v.abi_minor, v.module_version,
	       kinstr__version(), KINSTR_ABI_MAJOR, KINSTR_ABI_MINOR);
	if (c->status == KINSTR_DOCTOR_WARN)
		fix(c, "compatible, but from another version: install both from one (apt install kinstr kinstr-dkms)");
}

static void check_btf(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "btf");

	if (!access("/sys/kernel/btf/vmlinux", R_OK)) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "/sys/kernel/btf/vmlinux");
		return;
	}
	c->status = KINSTR_DOCTOR_FAIL;
	detail(c, "no /sys/kernel/btf/vmlinux: values by argument name (vfs_read(count)) and BPF instruments "
		  "('kinstr attach') need the kernel's BTF");
	fix(c, "run a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian's are)");
}

/* The mount point of a file system type in /proc/mounts ("" none). */
static void mount_of(const char *type, char *at, size_t len)
{
	char line[1024], dev[256], dir[512], fs[64];
	FILE *f = fopen("/proc/mounts", "re");

	at[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, dir, fs) == 3 && !strcmp(fs, type)) {
			snprintf(at, len, "%s", dir);
			break;
		}
	fclose(f);
}

static void check_tracefs(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "tracefs");
	char at[512], p[600];

	mount_of("tracefs", at, sizeof(at));
	snprintf(p, sizeof(p), "%s/available_filter_functions", at);
	if (at[0] && !access(p, R_OK)) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "mounted at %s; ftrace's functions in %s", at, p);
		return;
	}
	c->status = KINSTR_DOCTOR_WARN;
	detail(c, at[0] ? "mounted at %s, but it has no available_filter_functions (no dynamic ftrace?)" :
		   "not mounted%s: kinstr then finds ftrace's sites by their bytes, a slower start", at);
	fix(c, "mount -t tracefs nodev /sys/kernel/tracing");
}

static void check_kprobes(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "kprobes");
	char at[512];

	if (!access("/sys/kernel/debug/kprobes/blacklist", R_OK)) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "/sys/kernel/debug/kprobes: the kprobes in place and the kernel's blacklist are read, "
			  "so that no probe overwrites one");
		return;
	}
	mount_of("debugfs", at, sizeof(at));
	c->status = KINSTR_DOCTOR_FAIL;
	if (!at[0]) {
		detail(c, "debugfs is not mounted: kinstr reads the kprobes in place and the kprobe blacklist from "
			  "/sys/kernel/debug/kprobes");
		fix(c, "mount -t debugfs none /sys/kernel/debug");
	} else {
		detail(c, "debugfs is mounted at %s, but /sys/kernel/debug/kprobes/blacklist cannot be read", at);
		fix(c, "run as root, on a kernel with CONFIG_KPROBES=y (Debian's have it)");
	}
}

static void check_clock(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "clock");
	char line[8192], src[64], param[32] = "";
	bool constant = false, nonstop = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	if (f)
		fclose(f);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", src, sizeof(src));
	if (d->loaded)
		read_line("/sys/module/kinstr/parameters/timer_clock", param, sizeof(param));
	if (constant && nonstop && !strcmp(src, "tsc")) {
		c->status = KINSTR_DOCTOR_OK;
		detail(c, "invariant TSC (constant_tsc nonstop_tsc), clocksource tsc: timers read the TSC%s%s%s",
		       param[0] ? " (timer_clock=" : "", param, param[0] ? ")" : "");
		return;
	}
	c->status = KINSTR_DOCTOR_WARN;
	detail(c, "the TSC is %s (constant_tsc %s, nonstop_tsc %s, clocksource %s): timers read local_clock() "
		  "instead, as ftrace's function_graph does; times are right, each costs a little more%s%s%s",
	       constant && nonstop ? "not the clocksource" : "not invariant", constant ? "yes" : "no",
	       nonstop ? "yes" : "no", src[0] ? src : "?", param[0] ? " (timer_clock=" : "", param,
	       param[0] ? ")" : "");
	fix(c, "nothing to do for correctness; on a VM, a CPU model with an invariant TSC gives cheaper timers");
}

static void check_kernel(struct doctor *d)
{
	struct kinstr_doctor_check *c = check(d, "kernel");
	const char *const *s;
	size_t n;

	for (s = kinstr_doctor__tested_series; *s; s++) {
		n = strlen(*s);
		if (!strncmp(d->u.release, *s, n) && d->u.release[n] == '.') {
			c->status = KINSTR_DOCTOR_OK;
			detail(c, "%s %s (the %s series: tested)", d->u.sysname, d->u.release, *s);
			return;
		}
	}
	c->status = KINSTR_DOCTOR_WARN;
	detail(c, "%s %s: untested (kinstr is tested on Debian 12's 6.1 and 6.12)", d->u.sysname, d->u.release);
	fix(c, "kinstr.ko refuses what it cannot prove safe on any kernel, but expect refusals and report what "
	       "you find; a tested kernel is safest");
}

int kinstr_doctor__run(struct kinstr_doctor_check *checks, size_t max)
{
	struct doctor d = { .c = checks, .max = max };

	if (max < 10)
		return -EINVAL;
	uname(&d.u);
	check_module(&d);
	check_signature(&d);
	check_lockdown(&d);
	check_loaded(&d);
	check_abi(&d);
	check_btf(&d);
	check_tracefs(&d);
	check_kprobes(&d);
	check_clock(&d);
	check_kernel(&d);
	return (int)d.n;
}
