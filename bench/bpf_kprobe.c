// SPDX-License-Identifier: GPL-2.0
/*
 * The kprobe peer of `kinstr attach`: the same BPF program of kprobe type (SEC("kprobe")) attached
 * by the kernel's own kprobes at FUNC+OFF (an optprobe where the kernel optimizes it, an int3
 * kprobe with /proc/sys/debug/kprobes-optimization at 0), kept until SIGINT/SIGTERM or SECONDS,
 * then the total its per-CPU array counted.
 *   bpf_kprobe OBJ[:PROG] FUNC[+OFF] [SECONDS]
 * PROG defaults to the object's first program; the map summed (every key, every CPU) is "hits",
 * as in examples/branch_count.bpf.c (its cookie, bpf_get_attach_cookie(), is 0 here, the index
 * `kinstr attach` gives its first SPEC). Prints "bpf_kprobe: attached ..." once the kprobe is
 * registered (scripts wait for that line) and "bpf_kprobe: hits N" at the end.
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

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* The sum over every key and CPU of a per-CPU array of u64 (a plain array: over every key). */
static unsigned long long map_total(const struct bpf_map *m)
{
	int percpu = bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_ARRAY;
	int ncpu = percpu ? libbpf_num_possible_cpus() : 1, fd = bpf_map__fd(m), i;
	unsigned long long *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v)), sum = 0;
	__u32 k;

	for (k = 0; v && k < bpf_map__max_entries(m); k++)
		if (!bpf_map_lookup_elem(fd, &k, v))
			for (i = 0; i < ncpu; i++)
				sum += v[i];
	free(v);
	return sum;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_kprobe_opts, kopts);
	struct bpf_program *prog = NULL, *p;
	struct bpf_link *link;
	struct bpf_object *obj;
	struct bpf_map *map;
	char path[PATH_MAX], func[256], *c, *plus;
	const char *pname = NULL;
	int secs;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: bpf_kprobe OBJ[:PROG] FUNC[+OFF] [SECONDS]\n");
		return 2;
	}
	secs = argc > 3 ? atoi(argv[3]) : 3600;
	snprintf(path, sizeof(path), "%s", argv[1]);
	c = strrchr(path, ':');
	if (c && !strchr(c, '/') && c[1]) {
		*c = 0;
		pname = c + 1;
	}
	snprintf(func, sizeof(func), "%s", argv[2]);
	plus = strchr(func, '+');
	if (plus) {
		char *end;

		*plus = 0;
		errno = 0;
		kopts.offset = strtoul(plus + 1, &end, 0);
		if (errno || *end || end == plus + 1) {
			fprintf(stderr, "bpf_kprobe: %s: not FUNC+OFF\n", argv[2]);
			return 2;
		}
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "bpf_kprobe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		if (!prog && (!pname || !strcmp(bpf_program__name(p), pname)))
			prog = p;
	}
	if (!prog) {
		fprintf(stderr, "bpf_kprobe: %s: no program %s\n", path, pname ? pname : "");
		return 1;
	}
	/* only the chosen program is loaded */
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	if (bpf_object__load(obj)) {
		fprintf(stderr, "bpf_kprobe: loading %s: %s\n", path, strerror(errno));
		return 1;
	}
	link = bpf_program__attach_kprobe_opts(prog, func, &kopts);
	if (!link) {
		fprintf(stderr, "bpf_kprobe: attaching to %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("bpf_kprobe: attached %s to %s+0x%zx\n", bpf_program__name(prog), func, kopts.offset);
	fflush(stdout);
	while (!stop && secs-- > 0)
		sleep(1);
	bpf_link__destroy(link);	/* out: the kprobe is unregistered, every handler done */
	map = bpf_object__find_map_by_name(obj, "hits");
	if (!map) {
		fprintf(stderr, "bpf_kprobe: %s: no map \"hits\"\n", path);
		bpf_object__close(obj);
		return 1;
	}
	printf("bpf_kprobe: hits %llu\n", map_total(map));
	bpf_object__close(obj);
	return 0;
}
