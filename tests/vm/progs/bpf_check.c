// SPDX-License-Identifier: GPL-2.0
/*
 * What kinstr.ko does with the BPF programs it is handed (tests/vm/tests/bpf.t), through
 * libkinstr with raw program fds, not kinstr attach's own checks:
 *   bpf_check refusals OBJ      a socket filter, a map, a closed fd and OBJ's kprobe.multi program
 *                               are each refused with their own reason, the kernel text untouched
 *   bpf_check cycles N OBJ      N rounds of install/remove of OBJ's program at __x64_sys_getppid;
 *                               then the program still held while installed after its fd is closed,
 *                               and freed (its id gone) once the probes are removed
 * Prints one line per check; exits 1 at the first that fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/bpf.h>
#include <kinstr/kinstr.h>
#include <kinstr/plan.h>
#include <kinstr/probe.h>

static struct kinstr_dev *dev;
static struct kinstr_kernel *k;

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); exit(1); } while (0)

/* A probe set at __x64_sys_getppid's entry whose probe runs prog_fd. */
static struct kinstr_probeset *getppid_set(int prog_fd)
{
	struct kinstr_plan_opts po = { .sz = sizeof(po) };
	struct kinstr_probeset *ps = kinstr_probeset__new(dev, k);
	struct kinstr_plan *pl = ps ? kinstr_plan__new(ps, &po) : NULL;
	struct kinstr_why why;

	if (!pl || kinstr_plan__add_spec(pl, "__x64_sys_getppid", &why, NULL) || kinstr_probeset__cnt(ps) != 1)
		FAIL("cannot plan a probe at __x64_sys_getppid");
	kinstr_plan__free(pl);
	if (kinstr_probeset__attach_bpf(ps, prog_fd, 7))
		FAIL("kinstr_probeset__attach_bpf");
	return ps;
}

static void expect_refused(const char *what, int prog_fd, int want_err, const char *want)
{
	struct kinstr_probeset *ps = getppid_set(prog_fd);
	struct kinstr_why why = { .msg = "" };
	int r = kinstr_probeset__install(ps, &why);

	if (r != want_err || !strstr(why.msg, want))
		FAIL("%s: install gave %d (%s), want %d and '%s'", what, r, why.msg, want_err, want);
	printf("refused %s: %s\n", what, why.msg);
	kinstr_probeset__free(ps);
}

static int socket_filter(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "filter", "GPL", insns, 2, NULL);

	if (fd < 0)
		FAIL("loading a socket filter: %s", strerror(errno));
	return fd;
}

/* OBJ's program name, loaded by libbpf straight (kinstr attach would refuse it first). */
static struct bpf_object *load_raw(const char *path, const char *name, int *fd)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p, *want = obj ? bpf_object__find_program_by_name(obj, name) : NULL;

	if (!want)
		FAIL("%s: no program %s", path, name);
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == want);
	if (bpf_object__load(obj))
		FAIL("%s: loading %s: %s", path, name, strerror(errno));
	*fd = bpf_program__fd(want);
	return obj;
}

static unsigned int prog_id(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		FAIL("bpf_obj_get_info_by_fd: %s", strerror(errno));
	return info.id;
}

/* Does a program of this id still exist? */
static bool prog_alive(unsigned int id)
{
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return errno != ENOENT;
	close(fd);
	return true;
}

static void refusals(const char *obj_path)
{
	int sf = socket_filter(), mfd, multi_fd;
	struct bpf_object *obj;
	char want[96];

	snprintf(want, sizeof(want), "not a BPF program of kprobe type (fd %d is a BPF program of type socket_filter)", sf);
	expect_refused("a socket filter", sf, -EINVAL, want);
	mfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "m", 4, 8, 1, NULL);
	if (mfd < 0)
		FAIL("bpf_map_create: %s", strerror(errno));
	snprintf(want, sizeof(want), "not a BPF program of kprobe type (fd %d is not a BPF program)", mfd);
	expect_refused("a map's fd", mfd, -EINVAL, want);
	expect_refused("a closed fd", 999, -EBADF, "the program's fd is not open (fd 999 is not open)");
	obj = load_raw(obj_path, "multi", &multi_fd);
	expect_refused("a kprobe.multi program", multi_fd, -EINVAL, "a multi-attach kprobe program");
	bpf_object__close(obj);
	close(mfd);
	close(sf);
}

static uint64_t limits_areas(void)
{
	struct kinstr_limits l = { .size = sizeof(l) };

	if (kinstr_dev__limits(dev, &l))
		FAIL("kinstr_dev__limits: %s", strerror(errno));
	return l.areas;
}

static void cycles(int n, const char *obj_path)
{
	struct kinstr_why why;
	char *log = NULL;
	struct kinstr_bpf_obj *o = kinstr_bpf_obj__open(obj_path, NULL, &why, &log);
	struct kinstr_probeset *ps;
	struct timespec t0, t1;
	unsigned int id;
	uint64_t before, hits;
	int i, fd;

	if (!o)
		FAIL("%s", why.msg);
	fd = kinstr_bpf_obj__prog_fd(o);
	id = prog_id(fd);
	before = limits_areas();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		ps = getppid_set(fd);
		kinstr_probeset__set_async(ps, true);	/* in with int3s, out before the jumps: no wait */
		if (kinstr_probeset__install(ps, &why))
			FAIL("round %d: %s", i, why.msg);
		syscall(SYS_getppid);
		kinstr_probeset__free(ps);	/* removes the probes */
	}
	if (kinstr_dev__sync(dev))
		FAIL("kinstr_dev__sync");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (limits_areas() != before)
		FAIL("after %d rounds kinstr holds %llu areas, %llu before", n, (unsigned long long)limits_areas(),
		     (unsigned long long)before);
	printf("cycles: %d install/remove rounds in %.1f s, areas back to %llu\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, (unsigned long long)before);

	/* installed, then the object closed: the module's reference keeps the program running */
	ps = getppid_set(fd);
	if (kinstr_probeset__install(ps, &why))
		FAIL("%s", why.msg);
	kinstr_bpf_obj__close(o);
	if (!prog_alive(id))
		FAIL("program %u gone while its probe is in", id);
	for (i = 0; i < 100; i++)
		syscall(SYS_getppid);
	if (kinstr_probeset__counts(ps, &hits) || hits < 100)
		FAIL("the probe saw %llu hits of 100 calls", (unsigned long long)hits);
	printf("held: program %u alive with its fd closed, %llu hits\n", id, (unsigned long long)hits);
	kinstr_probeset__free(ps);
	if (kinstr_dev__sync(dev))
		FAIL("kinstr_dev__sync");
	/* the program is freed after an RCU grace period once its last reference goes */
	for (i = 0; i < 100 && prog_alive(id); i++)
		usleep(50000);
	if (prog_alive(id))
		FAIL("program %u still exists after the probes were removed", id);
	printf("freed: program %u gone once its probes were removed\n", id);
}

int main(int argc, char **argv)
{
	dev = kinstr_dev__open(NULL);
	k = dev ? kinstr_kernel__open_live(dev) : NULL;
	if (!k)
		FAIL("cannot open /dev/kinstr and the live kernel");
	if (argc == 3 && !strcmp(argv[1], "refusals"))
		refusals(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "cycles"))
		cycles(atoi(argv[2]), argv[3]);
	else
		FAIL("usage: bpf_check refusals OBJ | cycles N OBJ");
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return 0;
}
