// SPDX-License-Identifier: GPL-2.0
/*
 * Install/remove timing of kinstr's splice engine, for the side-by-side with register_kprobes()
 * (bench/run-install, bench/kmod/kinstr_bench_kprobes.c). Needs /dev/kinstr.
 *
 *   install_time pick COUNT FILE [GLOBS]
 *	Writes the addresses (hex, one a line) of COUNT jump sites of the running kernel, the first
 *	jump site of each of COUNT functions taken in kernel order (one per function, so no two
 *	overlap), skipping aliases, functions whose analysis fails and functions whose names match
 *	a list of likely hot ones (or GLOBS, a comma-separated list of shell globs, if given).
 *
 *   install_time time N FILE
 *	Takes the first N addresses of FILE as jump probes, in ceil(N / 4096) probe sets (an area
 *	holds at most KINSTR_AREA_MAX_PROBES), and times, over all the sets back to back:
 *	  1. asynchronous install (returns with int3s in), then KINSTR_IOC_SYNC (every jump in);
 *	  2. remove (returns with the text restored), then KINSTR_IOC_SYNC (slots freed);
 *	  3. install with KINSTR_INSTALL_F_WAIT (each set returns with its jumps in);
 *	  4. remove and sync again.
 *	Checks the live text (KINSTR_IOC_READ) at each step: int3 or jmp after an asynchronous
 *	install, jmp after the sync or a waited install, the original bytes after every remove.
 *	Prints one "kinstr-install ..." line of figures in ms for the script's table; exits 1 on a
 *	failure, with a line starting "FAIL".
 *
 *   install_time time-ftrace N FILE
 *	The same with each site's function probed at its entry through ftrace (an ftrace direct-call
 *	probe, KINSTR_PROBE_FTRACE: ftrace's batch patcher writes the calls, kinstr's dispatcher
 *	sends each into its slot): a call at every ftrace NOP once install returns. Prints one
 *	"kinstr-ftrace ..." line of the same figures (jumps_in: every call in).
 *
 *   install_time ftrace-ok FILE
 *	Prints the addresses of FILE whose function kinstr can also probe at its entry through ftrace
 *	(what time-ftrace needs), and on stderr how many it left out and the first reasons.
 *
 *   install_time names FILE
 *	Prints "ADDR NAME" for each address of FILE: the function it is in (the ftrace peer's filter).
 *
 *   install_time ftrace N FILE
 *	The peer: ftrace's function tracer on the first N functions of FILE ("INDEX NAME" lines, INDEX
 *	the function's line in available_filter_functions, which set_ftrace_filter takes as a number).
 *	Sets the filter (not timed), tracing_on 0 (the tracer's callbacks run, nothing is recorded),
 *	then times `function` into current_tracer (returns with every call in: ftrace_replace_code(),
 *	text_poke_queue()/text_poke_finish()) and `nop` (returns with the NOPs back). Checks that
 *	enabled_functions lists exactly those N names after the first and none after the second.
 *	Prints one "ftrace-install n=N enable=MS disable=MS verify=ok|FAILED" line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kinstr/probe.h>

/* Functions most likely on hot paths (locks, scheduler, memory, timers, interrupts, tracing). */
static const char hot_globs[] =
	"*spin*,*lock*,*rcu*,*irq*,*sched*,*timer*,*tick*,*clock*,*mutex*,*sem*,*page*,*alloc*,"
	"*free*,*kmem*,*slab*,*slub*,*percpu*,*cpu*,*idle*,*softirq*,*apic*,*tlb*,*fault*,*ktime*,"
	"*time*,*poke*,*int3*,*kprobe*,*ftrace*,*trace*,*rb_*,*list*,*mem*,*copy*,*user*,*wake*,"
	"*queue*,*task*,*switch*,*fpu*,*entry*,*syscall*,*signal*,*futex*,*pipe*,*vfs*,*file*,"
	"*path*,*dentry*,*inode*,*fd*,*poll*,*select*,*epoll*,*read*,*write*,*console*,*printk*,"
	"*tty*,*serial*,*9p*,*p9*,*virtio*,*vring*,*net*,*skb*,*sock*,*pte*,*pmd*,*pud*,*vma*,"
	"*mm_*,*lru*,*folio*,*cgroup*,*css*,*bpf*,*perf*,*stack*,*unwind*,*orc*,*kallsyms*,*watchdog*,"
	"*nmi*,*hrtimer*,*jiffies*,*cond_resched*,*preempt*,*local*,*call*,*work*,*smp*,*ipi*";

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int pick(struct kinstr_kernel *k, long want, const char *path, const char *globs)
{
	size_t cnt = kinstr_kernel__func_cnt(k), i;
	unsigned long long prev = 0;
	long got = 0, failed = 0, skipped = 0;
	FILE *out = fopen(path, "w");

	if (!out) {
		fprintf(stderr, "FAIL install_time: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (i = 0; i < cnt && got < want; i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_fn *fn;
		size_t j;

		if (f->addr == prev || !f->size || (f->type != 't' && f->type != 'T'))
			continue;
		prev = f->addr;
		if (kinstr__glob_match(globs, f->name)) {
			skipped++;
			continue;
		}
		fn = kinstr_fn__analyze(k, f);
		if (!fn) {
			failed++;
			continue;
		}
		for (j = 0; j < kinstr_fn__site_cnt(fn); j++) {
			const struct kinstr_site *s = kinstr_fn__site(fn, j);

			if (s->cls == KINSTR_SITE_JUMP && s->displaced_len <= KINSTR_MAX_DISPLACED) {
				fprintf(out, "0x%llx\n", (unsigned long long)s->addr);
				got++;
				break;
			}
		}
		kinstr_fn__free(fn);
	}
	fclose(out);
	printf("picked %ld jump sites, one per function, from the first %zu of %zu functions "
	       "(%ld skipped by name, %ld failed analysis)\n", got, i, cnt, skipped, failed);
	if (got < want) {
		fprintf(stderr, "FAIL install_time: only %ld of %ld jump sites\n", got, want);
		return 1;
	}
	return 0;
}

struct site {
	unsigned long long addr;
	const struct kinstr_func *f;
	unsigned char orig[KINSTR_MAX_DISPLACED];
	unsigned char len;	/* displaced bytes */
};

static struct kinstr_dev *dev;
static struct site *sites;
static long n;
/* time-ftrace: each function's entry as an ftrace direct-call probe (KINSTR_PROBE_FTRACE), not the jump site */
static int via_ftrace;

/*
 * The live first byte of every site must be one of want[0..1] (want1 < 0: only want0); with
 * restored, the displaced bytes must equal the original instead. Returns the failures.
 */
static long check_text(const char *when, int want0, int want1, int restored, long stride)
{
	long i, bad = 0;

	for (i = 0; i < n; i += stride) {
		struct site *s = &sites[i];
		unsigned char live[KINSTR_MAX_DISPLACED];
		int ok;

		if (kinstr_dev__read(dev, s->addr, live, s->len)) {
			ok = 0;
		} else if (restored) {
			ok = !memcmp(live, s->orig, s->len);
		} else {
			ok = live[0] == want0 || (want1 >= 0 && live[0] == want1);
		}
		if (!ok && bad++ < 5) {
			unsigned int b;

			printf("FAIL %s: %s+0x%llx (0x%llx): live", when, s->f->name, s->addr - s->f->addr, s->addr);
			for (b = 0; b < s->len; b++)
				printf(" %02x", live[b]);
			printf(", original");
			for (b = 0; b < s->len; b++)
				printf(" %02x", s->orig[b]);
			printf("\n");
		}
	}
	if (bad)
		printf("FAIL %s: %ld of %ld sites wrong\n", when, bad, n);
	return bad;
}

/* Install every set; the time each took goes to per_set[] (for the "sets" line). */
static int install_all(struct kinstr_probeset **ps, int nsets, int async, char *per_set, size_t len)
{
	struct kinstr_why why;
	int i;

	for (i = 0; i < nsets; i++) {
		double t = now_ms();

		kinstr_probeset__set_async(ps[i], async);
		if (kinstr_probeset__install(ps[i], &why)) {
			printf("FAIL install of set %d: %s\n", i, why.msg);
			return 1;
		}
		snprintf(per_set + strlen(per_set), len - strlen(per_set), " %.1f", now_ms() - t);
	}
	return 0;
}

static int remove_all(struct kinstr_probeset **ps, int nsets)
{
	int i, ret = 0;

	for (i = 0; i < nsets; i++)
		if (kinstr_probeset__remove(ps[i])) {
			printf("FAIL remove of set %d\n", i);
			ret = 1;
		}
	return ret;
}

static int sync_dev(void)
{
	if (kinstr_dev__sync(dev)) {
		printf("FAIL KINSTR_IOC_SYNC\n");
		return 1;
	}
	return 0;
}

static int timed(struct kinstr_kernel *k, long want, const char *path)
{
	struct kinstr_probeset **ps;
	FILE *in = fopen(path, "r");
	unsigned long long a;
	long i, bad = 0;
	int nsets, set;
	double t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, tprep;
	struct kinstr_why why;
	char per_async[256] = "", per_wait[256] = "";
	uint64_t hits = 0, *counts;
	long hit_probes = 0;
	uint64_t top_hits = 0;
	const char *top = "none";

	if (!in) {
		fprintf(stderr, "FAIL install_time: %s: %s\n", path, strerror(errno));
		return 1;
	}
	sites = calloc(want, sizeof(*sites));
	while (n < want && fscanf(in, "%llx", &a) == 1) {
		struct site *s = &sites[n];

		s->addr = a;
		s->f = kinstr_kernel__func_at(k, a);
		if (!s->f) {
			printf("FAIL 0x%llx: in no function of the kernel view\n", a);
			return 1;
		}
		n++;
	}
	fclose(in);
	if (n < want) {
		printf("FAIL %s holds only %ld addresses, %ld wanted\n", path, n, want);
		return 1;
	}
	nsets = (n + KINSTR_AREA_MAX_PROBES - 1) / KINSTR_AREA_MAX_PROBES;
	ps = calloc(nsets, sizeof(*ps));
	counts = calloc(KINSTR_AREA_MAX_PROBES, sizeof(*counts));

	/* user-space preparation (analysis of each probe's function, overlap check): not counted */
	tprep = now_ms();
	for (set = 0, i = 0; set < nsets; set++) {
		long end = n * (set + 1) / nsets;	/* sets of even size */

		ps[set] = kinstr_probeset__new(dev, k);
		if (!ps[set]) {
			printf("FAIL kinstr_probeset__new: %s\n", strerror(errno));
			return 1;
		}
		for (; i < end; i++) {
			const struct kinstr_probe_info *pi;

			if (via_ftrace ? kinstr_probeset__add_ftrace(ps[set], sites[i].f, &why) :
			    kinstr_probeset__add(ps[set], sites[i].f, sites[i].addr, &why)) {
				printf("FAIL add: %s\n", why.msg);
				return 1;
			}
			pi = kinstr_probeset__info(ps[set], kinstr_probeset__cnt(ps[set]) - 1);
			if (pi->kind != (via_ftrace ? KINSTR_PROBE_FTRACE : KINSTR_PROBE_JUMP)) {
				printf("FAIL %s+0x%llx: not %s probe\n", sites[i].f->name,
				       sites[i].addr - sites[i].f->addr, via_ftrace ? "an ftrace" : "a jump");
				return 1;
			}
			sites[i].addr = pi->addr;	/* an ftrace probe's: the function's NOP */
			sites[i].len = pi->displaced_len;
			if (kinstr_dev__read(dev, sites[i].addr, sites[i].orig, sites[i].len)) {
				printf("FAIL cannot read the text at 0x%llx\n", sites[i].addr);
				return 1;
			}
		}
	}
	tprep = now_ms() - tprep;
	if (sync_dev())
		return 1;

	/* 1. asynchronous install of every set, then wait for the jumps */
	t0 = now_ms();
	if (install_all(ps, nsets, 1, per_async, sizeof(per_async)))
		return 1;
	t1 = now_ms();
	/*
	 * The int3s are in when install returns; the worker may have put some jumps in since. Only
	 * every 61st site, so as to delay the sync little (the worker waits meanwhile anyway).
	 */
	bad += check_text("after the asynchronous install", via_ftrace ? 0xe8 : 0xcc, via_ftrace ? -1 : 0xe9, 0, 61);
	if (sync_dev())
		return 1;
	t2 = now_ms();
	bad += check_text("after the asynchronous install and sync", via_ftrace ? 0xe8 : 0xe9, -1, 0, 1);
	for (set = 0; set < nsets; set++)
		if (kinstr_probeset__counts(ps[set], counts) == 0)
			for (i = 0; i < (long)kinstr_probeset__cnt(ps[set]); i++) {
				const struct kinstr_probe_info *pi = kinstr_probeset__info(ps[set], i);

				hits += counts[i];
				hit_probes += counts[i] > 0;
				if (counts[i] > top_hits) {
					top_hits = counts[i];
					top = pi->func->name;
				}
			}

	/* 2. remove (text restored on return), then wait until the slots are freed */
	t3 = now_ms();
	if (remove_all(ps, nsets))
		return 1;
	t4 = now_ms();
	bad += check_text("after remove", 0, -1, 1, 61);
	if (sync_dev())
		return 1;
	t5 = now_ms();
	bad += check_text("after remove and sync", 0, -1, 1, 1);

	/* 3. install with wait: each set returns with its jumps in */
	t6 = now_ms();
	if (install_all(ps, nsets, 0, per_wait, sizeof(per_wait)))
		return 1;
	t7 = now_ms();
	bad += check_text("after the waited install", via_ftrace ? 0xe8 : 0xe9, -1, 0, 1);

	/* 4. remove again */
	t8 = now_ms();
	if (remove_all(ps, nsets))
		return 1;
	t9 = now_ms();
	if (sync_dev())
		return 1;
	t10 = now_ms();
	bad += check_text("after the second remove and sync", 0, -1, 1, 1);

	printf("kinstr: %ld %s probes in %d sets; preparation (analysis, user space) %.1f ms; "
	       "%ld probes hit %llu times while installed (most: %s, %llu)\n", n, via_ftrace ? "ftrace" : "jump", nsets,
	       tprep, hit_probes,
	       (unsigned long long)hits, top, (unsigned long long)top_hits);
	printf("kinstr: ms per set, asynchronous install:%s; install with wait:%s\n", per_async, per_wait);
	printf("%s n=%ld sets=%d async_install=%.1f jumps_in=%.1f remove=%.1f freed=%.1f "
	       "wait_install=%.1f remove2=%.1f freed2=%.1f verify=%s\n", via_ftrace ? "kinstr-ftrace" : "kinstr-install",
	       n, nsets, t1 - t0, t2 - t0,
	       t4 - t3, t5 - t3, t7 - t6, t9 - t8, t10 - t8, bad ? "FAILED" : "ok");
	for (set = 0; set < nsets; set++)
		kinstr_probeset__free(ps[set]);
	free(ps);
	free(counts);
	free(sites);
	return bad ? 1 : 0;
}

/* fn(ctx, address, its function) for each address of FILE; 1 (with a FAIL line) on a bad one. */
static int each_site(struct kinstr_kernel *k, const char *path,
		     void (*fn)(void *ctx, unsigned long long a, const struct kinstr_func *f), void *ctx)
{
	FILE *in = fopen(path, "r");
	unsigned long long a;

	if (!in) {
		fprintf(stderr, "FAIL install_time: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fscanf(in, "%llx", &a) == 1) {
		const struct kinstr_func *f = kinstr_kernel__func_at(k, a);

		if (!f) {
			printf("FAIL 0x%llx: in no function of the kernel view\n", a);
			fclose(in);
			return 1;
		}
		fn(ctx, a, f);
	}
	fclose(in);
	return 0;
}

static void print_name(void *ctx, unsigned long long a, const struct kinstr_func *f)
{
	(void)ctx;
	printf("0x%llx %s\n", a, f->name);
}

static int names(struct kinstr_kernel *k, const char *path)
{
	return each_site(k, path, print_name, NULL);
}

struct ftrace_ok_ctx {
	struct kinstr_probeset *ps;
	long kept, out;
};

static void try_ftrace(void *ctx, unsigned long long a, const struct kinstr_func *f)
{
	struct ftrace_ok_ctx *c = ctx;
	struct kinstr_why why;

	if (kinstr_probeset__add_ftrace(c->ps, f, &why)) {
		if (c->out++ < 5)
			fprintf(stderr, "ftrace-ok: left out %s\n", why.msg);
		return;
	}
	printf("0x%llx\n", a);
	c->kept++;
}

/*
 * The addresses of FILE whose function kinstr can also probe at its entry through ftrace (its
 * ftrace NOP is ftrace's alone): so that both kinstr rows and ftrace's take the same functions.
 * What is left out, and why, goes to stderr.
 */
static int ftrace_ok(struct kinstr_kernel *k, const char *path)
{
	struct ftrace_ok_ctx c = { .ps = kinstr_probeset__new(dev, k) };
	int ret;

	if (!c.ps) {
		printf("FAIL kinstr_probeset__new: %s\n", strerror(errno));
		return 1;
	}
	ret = each_site(k, path, try_ftrace, &c);
	kinstr_probeset__free(c.ps);
	fprintf(stderr, "ftrace-ok: kept %ld, left out %ld (not probeable at the entry through ftrace)\n", c.kept, c.out);
	return ret;
}

#define TRACEFS "/sys/kernel/tracing/"

/* Write s to a tracefs file (truncating it); 0 or -1 with a FAIL line. */
static int tracefs_write(const char *file, const char *s, size_t len)
{
	char path[256];
	FILE *f;
	int bad;

	snprintf(path, sizeof(path), TRACEFS "%s", file);
	f = fopen(path, "w");
	if (!f) {
		printf("FAIL %s: %s\n", path, strerror(errno));
		return -1;
	}
	bad = fwrite(s, 1, len, f) != len;
	bad |= fclose(f) != 0;
	if (bad)
		printf("FAIL writing %s: %s\n", path, strerror(errno));
	return bad ? -1 : 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Does enabled_functions list exactly the n names of want (sorted)? Prints why not. */
static int enabled_are(char **want, long nwant, const char *when)
{
	FILE *f = fopen(TRACEFS "enabled_functions", "r");
	char line[512];
	long got = 0, unknown = 0;

	if (!f) {
		printf("FAIL enabled_functions: %s\n", strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key = strtok(line, " \t\n");

		got++;
		if (!key || !bsearch(&key, want, nwant, sizeof(*want), cmp_str))
			unknown++;
	}
	fclose(f);
	if (got != nwant || unknown) {
		printf("FAIL %s: enabled_functions lists %ld functions, %ld of them not asked for (%ld asked)\n",
		       when, got, unknown, nwant);
		return 1;
	}
	return 0;
}

static int ftrace_time(long want, const char *path)
{
	FILE *in = fopen(path, "r");
	char **fn = calloc(want, sizeof(*fn)), name[512], *filter;
	size_t cap = 16 * want + 1, len = 0;
	long idx, nf = 0, bad = 0;
	double t0, t1, t2, t3;

	if (!in || !fn) {
		fprintf(stderr, "FAIL install_time: %s: %s\n", path, strerror(errno));
		return 1;
	}
	filter = malloc(cap);
	while (nf < want && fscanf(in, "%ld %511s", &idx, name) == 2) {
		len += snprintf(filter + len, cap - len, "%ld\n", idx);
		fn[nf++] = strdup(name);
	}
	fclose(in);
	if (nf < want) {
		printf("FAIL %s holds only %ld functions, %ld wanted\n", path, nf, want);
		return 1;
	}
	qsort(fn, nf, sizeof(*fn), cmp_str);
	if (tracefs_write("current_tracer", "nop\n", 4) || tracefs_write("tracing_on", "0\n", 2) ||
	    tracefs_write("set_ftrace_filter", filter, len))
		return 1;
	t0 = now_ms();
	if (tracefs_write("current_tracer", "function\n", 9))
		return 1;
	t1 = now_ms();
	bad += enabled_are(fn, nf, "after enabling the function tracer");
	t2 = now_ms();
	if (tracefs_write("current_tracer", "nop\n", 4))
		return 1;
	t3 = now_ms();
	bad += enabled_are(fn, 0, "after disabling it");
	tracefs_write("set_ftrace_filter", "", 0);
	tracefs_write("tracing_on", "1\n", 2);
	printf("ftrace-install n=%ld enable=%.1f disable=%.1f verify=%s\n", nf, t1 - t0, t3 - t2, bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct kinstr_kernel *k;
	long cnt = argc > 3 ? atol(argv[2]) : 0;
	int ret;

	if (argc == 4 && !strcmp(argv[1], "ftrace") && cnt > 0)
		return ftrace_time(cnt, argv[3]);
	if (!(argc == 3 && (!strcmp(argv[1], "names") || !strcmp(argv[1], "ftrace-ok"))) &&
	    (argc < 4 || cnt <= 0 || (strcmp(argv[1], "pick") && strcmp(argv[1], "time") &&
				      strcmp(argv[1], "time-ftrace")))) {
		fprintf(stderr, "usage: install_time pick COUNT FILE [GLOBS] | install_time time N FILE | "
			"install_time time-ftrace N FILE | install_time names FILE | install_time ftrace-ok FILE | "
			"install_time ftrace N FILE\n");
		return 2;
	}
	dev = kinstr_dev__open(NULL);
	if (!dev) {
		fprintf(stderr, "FAIL install_time: %s\n", kinstr_dev__open_hint(errno));
		return 1;
	}
	k = kinstr_kernel__open_live(dev);
	if (!k) {
		fprintf(stderr, "FAIL install_time: cannot read the kernel: %s\n", strerror(errno));
		return 1;
	}
	if (!strcmp(argv[1], "names"))
		ret = names(k, argv[2]);
	else if (!strcmp(argv[1], "ftrace-ok"))
		ret = ftrace_ok(k, argv[2]);
	else if (!strcmp(argv[1], "pick"))
		ret = pick(k, cnt, argv[3], argc > 4 ? argv[4] : hot_globs);
	else {
		via_ftrace = !strcmp(argv[1], "time-ftrace");
		ret = timed(k, cnt, argv[3]);
	}
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return ret;
}
