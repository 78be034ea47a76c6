// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF trampoline peer of `kinstr count` and `kinstr profile`: attach a pair of fentry/fexit
 * programs (bench/bpf/fentry.bpf.c, built next to this program) to one kernel function, keep
 * them until SIGINT/SIGTERM or SECONDS, and print what they counted.
 *   fentry_time entry FUNC [SECONDS]   a per-CPU counter at the entry only (a per-hit figure)
 *   fentry_time count FUNC [SECONDS]   a per-CPU counter at the entry and at the exit
 *   fentry_time time FUNC [SECONDS]    start time per thread, log2 histogram, count and sum
 * Prints "fentry: attached ..." once both programs are in (scripts wait for that line).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define BUCKETS 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* The sum over CPUs of a per-CPU array's element k. */
static unsigned long long percpu_sum(int fd, unsigned int k, int ncpu)
{
	unsigned long long *v = calloc(ncpu, sizeof(*v)), sum = 0;
	int i;

	if (v && !bpf_map_lookup_elem(fd, &k, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

static int object_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	return snprintf(buf, len, "%s/fentry.bpf.o", exe) < (int)len ? 0 : -ENAMETOOLONG;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[2] = { 0 };
	struct bpf_program *progs[2], *p;
	struct bpf_object *obj;
	const char *mode = argc > 1 ? argv[1] : "", *func = argc > 2 ? argv[2] : NULL;
	int secs = argc > 3 ? atoi(argv[3]) : 3600, ncpu, i, timed, nprogs;
	char path[PATH_MAX];

	timed = !strcmp(mode, "time");
	nprogs = strcmp(mode, "entry") ? 2 : 1;
	if (!func || (!timed && strcmp(mode, "count") && nprogs == 2)) {
		fprintf(stderr, "usage: fentry_time entry|count|time FUNC [SECONDS]\n");
		return 2;
	}
	if (object_path(path, sizeof(path))) {
		fprintf(stderr, "fentry_time: cannot find the BPF object\n");
		return 1;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "fentry_time: %s: %s\n", path, strerror(errno));
		return 1;
	}
	progs[0] = bpf_object__find_program_by_name(obj, timed ? "time_entry" : "count_entry");
	progs[1] = bpf_object__find_program_by_name(obj, timed ? "time_exit" : "count_exit");
	/* only the chosen programs are loaded */
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == progs[0] || (nprogs == 2 && p == progs[1]));
	for (i = 0; i < nprogs; i++)
		if (!progs[i] || bpf_program__set_attach_target(progs[i], 0, func)) {
			fprintf(stderr, "fentry_time: %s: no such program or target\n", func);
			return 1;
		}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "fentry_time: loading the programs for %s: %s\n", func, strerror(errno));
		return 1;
	}
	for (i = 0; i < nprogs; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i]) {
			fprintf(stderr, "fentry_time: attaching to %s: %s\n", func, strerror(errno));
			return 1;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("fentry: attached %s (%s) to %s\n", nprogs == 2 ? "fentry/fexit" : "fentry", mode, func);
	fflush(stdout);
	while (!stop && secs-- > 0)
		sleep(1);
	ncpu = libbpf_num_possible_cpus();
	if (timed) {
		int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "hist"));
		unsigned long long calls = percpu_sum(fd, BUCKETS, ncpu), sum = percpu_sum(fd, BUCKETS + 1, ncpu);

		printf("@%s calls %llu mean %.1f ns\n", func, calls, calls ? (double)sum / calls : 0.0);
		for (i = 0; i < BUCKETS; i++) {
			unsigned long long c = percpu_sum(fd, i, ncpu);

			if (c)
				printf("@  [2^%d, 2^%d) ns %llu\n", i, i + 1, c);
		}
	} else {
		int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "counts"));

		printf("@%s entries %llu exits %llu\n", func, percpu_sum(fd, 0, ncpu), percpu_sum(fd, 1, ncpu));
	}
	for (i = 0; i < nprogs; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return 0;
}
