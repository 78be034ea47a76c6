// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr's own hit path (KINSTR_R_HIT_PATH), checked with a second decoder. The module computes
 * the closure over direct branches with the kernel's instruction decoder at load; here every
 * function it reports is decoded again with Zydis from the live text, and every direct call, jmp
 * and jcc that leaves one must land in another (but for the preemption point and
 * __stack_chk_fail, which the module does not follow, rcu_read_unlock_special, whose callees it
 * does not follow, and text outside the core kernel and kinstr.ko). What the bytes hide must be
 * in it too, read from the library's view of the kernel's tables: every jump label's target
 * (kinstr_kernel__edges()), every static call's trampoline, a tracepoint's iterator and the
 * probes the kernel can give a tracepoint later (its event class's, read here through /proc/kcore
 * and /proc/kallsyms, not through the module's walk). The kernel's int3 delivery
 * (notify_die, and the rcu_read_lock() around the die chain) must be in the set. Each function must be refused with the rule by the module's CHECK and by user
 * space's reservations, and the functions the issue found (the timer's and tracer's clocks) and
 * kinstr's own entry points must be in the set.
 *   hitpath_check
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <kinstr/kernel.h>
#include <kinstr/x86.h>

#define HITPATH_SANE 300
/* lockdep and KASAN hooks in every lock and access of probe context: their reports' paths join in */
#define HITPATH_SANE_DEBUG 4000

/* Does the running kernel check locks or memory (its config, as /boot or the harness gives it)? */
static int debug_kernel(void)
{
	char path[256], line[128];
	struct utsname u;
	int found = 0;
	FILE *f;

	if (uname(&u))
		return 0;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strcmp(line, "CONFIG_PROVE_LOCKING=y\n") || !strcmp(line, "CONFIG_KASAN=y\n");
	if (f)
		fclose(f);
	return found;
}

static const char *const not_followed[] = {
	"preempt_schedule", "preempt_schedule_notrace", "__SCT__preempt_schedule",
	"__SCT__preempt_schedule_notrace", "preempt_schedule_thunk", "preempt_schedule_notrace_thunk",
	"__stack_chk_fail", "trace_event_buffer_commit", "perf_trace_run_bpf_submit", "perf_tp_event",
	"__warn_printk", "_printk",
};

/* in the set, but what it calls is not (it returns at once in the NMI context of a kernel int3) */
static const char *const not_scanned[] = { "rcu_read_unlock_special", "ring_buffer_lock_reserve" };

/* the first: the kernel's local_clock(), a function of its own on 6.12, sched_clock_cpu() inlined on 6.1 */
static const char *must_have[] = {
	"sched_clock_cpu", "ktime_get_mono_fast_ns", "kinstr_timer_start_hit", "kinstr_timer_stop_hit",
	"kinstr_timer_ctx_slow", "kinstr_trace_record", "kinstr_bpf_stub", "kinstr_bpf_hit",
	"notify_die", "__rcu_read_lock", "__rcu_read_unlock",
};

static const struct kinstr_span64 *find(const struct kinstr_span64 *s, size_t n, unsigned long long a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a >= s[i].start && a < s[i].end)
			return &s[i];
	return NULL;
}

static int named(const struct kinstr_kernel *k, unsigned long long a, const char *const *names, size_t n)
{
	const struct kinstr_func *f = kinstr_kernel__func_at(k, a);
	size_t i;

	for (i = 0; f && i < n; i++)
		if (!strcmp(f->name, names[i]))
			return 1;
	return 0;
}
#define is_not_followed(k, a) named(k, a, not_followed, sizeof(not_followed) / sizeof(not_followed[0]))
#define is_not_scanned(k, a) named(k, a, not_scanned, sizeof(not_scanned) / sizeof(not_scanned[0]))

/* Must the module's closure hold the code at a (core or kinstr.ko text, not a point it does not follow)? */
static int want(const struct kinstr_kernel *k, const struct kinstr_layout *lay, const struct kinstr_span64 *spans,
		size_t n, unsigned long long a)
{
	const struct kinstr_func *t = kinstr_kernel__func_at(k, a);
	bool core = a >= lay->text.start && a < lay->text.end;
	bool ours = t && t->module && !strcmp(t->module, "kinstr");

	return (core || ours) && !find(spans, n, a) && !is_not_followed(k, a);
}

/* len bytes of kernel memory at a, through /proc/kcore's program headers (not through kinstr) */
static int kcore_read(unsigned long long a, void *buf, size_t len)
{
	int fd = open("/proc/kcore", O_RDONLY);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i, ok = -1;

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && a >= ph.p_vaddr && a + len <= ph.p_vaddr + ph.p_memsz) {
			ok = pread(fd, buf, len, ph.p_offset + (a - ph.p_vaddr)) == (ssize_t)len ? 0 : -1;
			break;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return ok;
}

/* From /proc/kallsyms: the address of name (want_addr 0), or the name at want_addr starting with prefix. */
static unsigned long long kallsyms(const char *name, unsigned long long want_addr, const char *prefix, char *out,
				   size_t outlen)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long long a, found = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3 || strchr(line, '['))
			continue;
		if (!want_addr && !strcmp(sym, name)) {
			found = a;
			break;
		}
		if (want_addr && a == want_addr && !strncmp(sym, prefix, strlen(prefix))) {
			snprintf(out, outlen, "%s", sym);
			found = a;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * The probes the kernel can give tracepoint tp after load (the static call then goes straight to
 * the one probe): the class of its event (event_<tp>'s second field, struct trace_event_call's
 * class, named event_class_<class>) gives trace_event_raw_event_, perf_trace_ and __bpf_trace_
 * <class>; __bpf_trace_<tp> for a tracepoint with no event. Each that exists must be in the set.
 */
static size_t tracepoint_probes_missing(const struct kinstr_kernel *k, const struct kinstr_layout *lay,
					const struct kinstr_span64 *spans, size_t n, const char *tp, const char *where)
{
	static const char *const prefixes[] = { "trace_event_raw_event_", "perf_trace_", "__bpf_trace_" };
	char name[300], cls[256] = "";
	unsigned long long ev, ptr = 0;
	size_t p, missing = 0;

	snprintf(name, sizeof(name), "event_%s", tp);
	ev = kallsyms(name, 0, NULL, NULL, 0);
	if (ev && !kcore_read(ev + 8 + 8, &ptr, sizeof(ptr)) && ptr &&
	    kallsyms(NULL, ptr, "event_class_", cls, sizeof(cls)))
		memmove(cls, cls + 12, strlen(cls + 12) + 1);
	else if (ev)
		printf("  %s: event_%s's class not read (/proc/kcore)\n", where, tp);
	for (p = 0; p < 4; p++) {
		const struct kinstr_func *f;

		if (p < 3 && !*cls)
			continue;
		snprintf(name, sizeof(name), "%s%s", p < 3 ? prefixes[p] : "__bpf_trace_", p < 3 ? cls : tp);
		f = kinstr_kernel__find_func(k, name);
		if (!f)
			continue;
		printf("  hidden: %s: tracepoint %s's possible probe %s\n", where, tp, name);
		if (want(k, lay, spans, n, f->addr)) {
			printf("%s: tracepoint %s's possible probe %s is not in the hit path\n", where, tp, name);
			missing++;
		}
	}
	return missing;
}

int main(void)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	struct kinstr_check_range *r;
	struct kinstr_span64 *spans;
	struct kinstr_layout lay;
	size_t n, i, bad = 0, branches = 0, hidden = 0, j;
	bool incomplete;
	int err;

	if (!k || kinstr_dev__layout(dev, &lay)) {
		perror("setup");
		return 1;
	}
	spans = kinstr_dev__hit_path(dev, &n, &incomplete);
	/*
	 * tens of functions (a few thousand under lockdep and KASAN): more mean the closure ran away (a
	 * function decoded past its end took in kinstr's load-time code once: kmod/text_end.c)
	 */
	if (!spans || incomplete || n < 5 || n > (debug_kernel() ? HITPATH_SANE_DEBUG : HITPATH_SANE)) {
		printf("hitpath_check: FAIL: %zu functions%s\n", n, incomplete ? ", incomplete" : "");
		return 1;
	}
	r = calloc(n, sizeof(*r));
	for (i = 0; i < n; i++)
		r[i] = (struct kinstr_check_range){ .addr = spans[i].start, .len = 1 };
	err = kinstr_dev__check(dev, r, n);
	if (err) {
		printf("hitpath_check: FAIL: CHECK: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < n; i++) {
		const struct kinstr_func *f = kinstr_kernel__func_at(k, spans[i].start);
		const char *name = f ? f->name : "?";
		unsigned long long a = spans[i].start;
		const unsigned char *b = kinstr_kernel__text(k, a, spans[i].end - a);
		bool own = r[i].reasons & (1u << KINSTR_R_OWN_MODULE);

		if (!own && !(r[i].reasons & (1u << KINSTR_R_HIT_PATH)) && bad++ < 20)
			printf("the module's CHECK does not refuse %s as hit path (0x%x)\n", name, r[i].reasons);
		if (!(kinstr_kernel__reserved(k, a, 1) & (1u << (own ? KINSTR_R_OWN_MODULE : KINSTR_R_HIT_PATH))) &&
		    bad++ < 20)
			printf("user space does not refuse %s\n", name);
		if (!b) {
			if (bad++ < 20)
				printf("%s: no live text in user space's view\n", name);
			continue;
		}
		if (is_not_scanned(k, a)) {
			/* entered, not followed by the module: its callees need not be in the set */
			continue;
		}
		{	/* the jump labels' other way, from the library's edges */
			const struct kinstr_cfg_edge *e;
			size_t ne = kinstr_kernel__edges(k, spans[i].start, spans[i].end, &e), q;
			unsigned long long key;
			int br;

			for (q = 0; q < ne; q++) {
				if (kinstr_kernel__jump_label(k, e[q].from, &key, &br) ||
				    (e[q].to >= spans[i].start && e[q].to < spans[i].end))
					continue;
				hidden++;
				{
					const struct kinstr_func *t = kinstr_kernel__func_at(k, e[q].to);

					printf("  hidden: %s+0x%llx: a jump label to %s\n", name, e[q].from - spans[i].start,
					       t ? t->name : "?");
				}
				if (want(k, &lay, spans, n, e[q].to) && bad++ < 20)
					printf("%s+0x%llx: a jump label to 0x%llx, which is not in the hit path\n", name,
					       e[q].from - spans[i].start, (unsigned long long)e[q].to);
			}
		}
		while (a < spans[i].end) {	/* Zydis, from the live bytes */
			struct kinstr_x86_insn in;

			if (kinstr_x86__decode(b + (a - spans[i].start), spans[i].end - a, a, &in))
				break;	/* as the module: what follows a bad decode is not seen */
			{	/* a static call: its trampoline, a tracepoint's iterator, whatever the site holds */
				unsigned long long tr;
				int tail;

				if (!kinstr_kernel__static_call(k, a, &tr, &tail)) {
					const struct kinstr_func *t = kinstr_kernel__func_at(k, tr);

					hidden++;
					printf("  hidden: %s+0x%llx: a static call through %s\n", name, a - spans[i].start,
					       t ? t->name : "?");
					if (want(k, &lay, spans, n, tr) && bad++ < 20)
						printf("%s+0x%llx: a static call through %s, which is not in the hit path\n",
						       name, a - spans[i].start, t ? t->name : "?");
					if (t && !strncmp(t->name, "__SCT__tp_func_", 15)) {
						char it[200];
						const struct kinstr_func *tf;

						snprintf(it, sizeof(it), "__traceiter_%s", t->name + 15);
						tf = kinstr_kernel__find_func(k, it);
						if (tf && want(k, &lay, spans, n, tf->addr) && bad++ < 20)
							printf("%s+0x%llx: tracepoint iterator %s is not in the hit path\n",
							       name, a - spans[i].start, it);
						snprintf(it, sizeof(it), "%s+0x%llx", name, a - spans[i].start);
						bad += tracepoint_probes_missing(k, &lay, spans, n, t->name + 15, it);
					}
				}
			}
			if ((in.flow == KINSTR_X86_FLOW_CALL || in.flow == KINSTR_X86_FLOW_JMP ||
			     in.flow == KINSTR_X86_FLOW_JCC) && (in.target < spans[i].start || in.target >= spans[i].end)) {
				const struct kinstr_func *t = kinstr_kernel__func_at(k, in.target);
				bool core = in.target >= lay.text.start && in.target < lay.text.end;
				bool ours = t && t->module && !strcmp(t->module, "kinstr");

				branches++;
				if ((core || ours) && !find(spans, n, in.target) && !is_not_followed(k, in.target) &&
				    bad++ < 20)
					printf("%s+0x%llx branches to %s (0x%llx), which is not in the hit path\n", name,
					       a - spans[i].start, t ? t->name : "?", (unsigned long long)in.target);
			}
			a += in.len;
		}
	}
	/* the global one: 6.1 has a file's own copy of its inline local_clock() too ('t') */
	{
		const struct kinstr_func *lc = kinstr_kernel__find_func(k, "local_clock");

		if (lc && lc->type == 'T')
			must_have[0] = "local_clock";
	}
	for (j = 0; j < sizeof(must_have) / sizeof(must_have[0]); j++) {
		const struct kinstr_func *f = kinstr_kernel__find_func(k, must_have[j]);

		if ((!f || !find(spans, n, f->addr)) && bad++ < 20)
			printf("%s is not in the hit path\n", must_have[j]);
	}
	for (i = 0; i < n; i++) {
		const struct kinstr_func *f = kinstr_kernel__func_at(k, spans[i].start);

		printf("  %s%s%s\n", f ? f->name : "?", f && f->module ? " " : "", f && f->module ? f->module : "");
	}
	if (bad) {
		printf("hitpath_check: FAIL: %zu problems (%zu functions, %zu branches out of them)\n", bad, n, branches);
		return 1;
	}
	printf("hitpath_check: %zu branches out of them, each into the set; %zu jump labels out of them and static "
	       "calls in them, each into the set\n", branches, hidden);
	printf("hitpath_check: ok: %zu functions, every one refused by the module and by user space, "
	       "%s among them\n", n, must_have[0]);
	free(r);
	free(spans);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return 0;
}
