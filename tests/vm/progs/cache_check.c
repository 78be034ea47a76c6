// SPDX-License-Identifier: GPL-2.0
/*
 * The module's check of code-cache copies (kmod/check/cache.c), from user space, like bad_requests
 * for probes. `cache_check accept GLOB...`: every function the builder can copy is handed to
 * the module one at a time, verify-only: each must be accepted. `cache_check mutate FUNC...`:
 * the copies of FUNCs, installed verify-only with one kind of damage each (a copied byte, a
 * re-aimed branch, a call's return address, a native jmp, a jump label's condition, a static
 * call's trampoline, a counter's address, the layout, an entry point's destination, a missing
 * re-entry point after a call, an instruction's length): each must be refused, naming the rule.
 * `cache_check --edges accept|mutate ...`: the same with edge counters in the copies (and, for
 * mutate, two more kinds of damage: an edge-in counter's address, a counted branch's condition).
 * `cache_check --timer accept|mutate ...`: the same with a timer in each copy (profile --cache;
 * the descriptor's timers created first), and for mutate five more kinds of damage: a stop's
 * call target, a stop on another timer, a timer past the session's, a set address filled in by
 * user space, an exit without its stop, and an entry point that skips the start.
 * `cache_check --laid accept|mutate ...`: the same with re-laid copies (kinstr optimize), laid out
 * by made-up edge counts (every kind of change: inverted jccs, added and dropped jmps, rel8
 * forms); mutate adds three kinds of damage beyond layout: a jcc's condition flipped (its ways no
 * longer the original's), the jmp where a counterpart runs on aimed one byte further, a counter
 * flag on a re-laid instruction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/cache.h>
#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>
#include <kinstr/layout.h>

static unsigned int copy_flags;	/* --edges: KINSTR_CACHE_F_EDGES; --timer: KINSTR_CACHE_F_TIMER */
#define NTIMERS 64		/* --timer: the descriptor's timers */

static void add32(uint8_t *p, int32_t d);

/* --timer: entry e's stop sequence (an exit's, after its edge counter, none with --timer alone), or NULL. */
static uint8_t *stop_of(uint8_t *b, const struct kinstr_cache_map *e)
{
	if (!(e->flags & KINSTR_CACHE_M_TIMER) || (e->flags & KINSTR_CACHE_M_FUNC))
		return NULL;
	return b + e->copy + (e->flags & KINSTR_CACHE_M_EDGE_OUT ? 16 + 2 * !!(e->flags & KINSTR_CACHE_M_EDGE_OUT_PUSHF) : 0);
}

/* The timer kinds of damage: the stop sequence's bytes (its call, its timer, its set), its flag, the entry point. */
static int mutate_timer(const char *name, uint8_t *b, struct kinstr_cache_map *map, size_t nmap, struct kinstr_probe *req,
			size_t nreq)
{
	size_t i, k;

	for (i = 0; i < nmap; i++) {
		uint8_t *t = stop_of(b, &map[i]);
		uint32_t v;

		if (!t)
			continue;
		if (!strcmp(name, "timer-call")) {
			add32(t + 30, 1);	/* call rel32: one byte into the stop function */
		} else if (!strcmp(name, "timer-other")) {
			t[25] ^= 1;		/* mov $timer: the next (or previous) timer, not its entry's */
		} else if (!strcmp(name, "timer-range")) {
			v = NTIMERS;		/* past the session's timers */
			memcpy(t + 25, &v, 4);
		} else if (!strcmp(name, "timer-set")) {
			t[16] = 0x40;		/* movabs: an address of user space's choosing */
		} else if (!strcmp(name, "timer-unstopped")) {
			map[i].flags &= ~KINSTR_CACHE_M_TIMER;	/* an exit the map says has no stop */
		} else if (!strcmp(name, "timer-entry")) {
			for (k = 0; k < nreq; k++)
				if (req[k].site == map[0].addr)	/* the first function's entry: past its start */
					req[k].arg += KINSTR_CACHE_TIMER_LEN;
		} else {
			return 0;
		}
		return 1;
	}
	return 0;
}
static int laid;		/* --laid: re-laid copies */

struct mut {
	const char *name;
	const struct kinstr_kernel *k;
	int applied;
};

static void add32(uint8_t *p, int32_t d)
{
	int32_t v;

	memcpy(&v, p, 4);
	v += d;
	memcpy(p, &v, 4);
}

static int counter_len(const struct kinstr_cache_map *m)
{
	return m->flags & KINSTR_CACHE_M_COUNTED ? 16 + 2 * !!(m->flags & KINSTR_CACHE_M_PUSHF) : 0;
}

static int is_enter(const struct kinstr_probe *req, size_t nreq, uint64_t a)
{
	size_t i;

	for (i = 0; i < nreq; i++)
		if (req[i].site == a)
			return 1;
	return 0;
}

static void mutate(uint8_t *b, size_t len, struct kinstr_cache_map *map, size_t nmap, struct kinstr_probe *req,
		   size_t nreq, void *ctx)
{
	struct mut *m = ctx;
	size_t i, k;

	for (i = 0; i < nmap && !m->applied; i++) {
		struct kinstr_cache_map *e = &map[i];
		uint8_t *c = b + e->copy;

		if (!strcmp(m->name, "copy") && e->form == KINSTR_CACHE_FORM_COPY && c[0] != 0xcc && c[0] != 0xc3) {
			c[e->copy_len - 1] ^= 0x01;
			m->applied = 1;
		} else if (!strcmp(m->name, "reloc") && e->form == KINSTR_CACHE_FORM_RELOC && e->copy_len &&
			   (c[0] == 0xe9 || (c[0] == 0x0f && (c[1] & 0xf0) == 0x80))) {
			add32(c + (c[0] == 0xe9 ? 1 : 2), 1);
			m->applied = 1;
		} else if (!strcmp(m->name, "reloc") && laid && e->form == KINSTR_CACHE_FORM_RELOC && e->copy_len &&
			   ((c[0] & 0xf0) == 0x70 || c[0] == 0xeb)) {
			c[1] += 1;	/* a rel8 branch one byte further */
			m->applied = 1;
		} else if (!strcmp(m->name, "laid-invert") && e->form == KINSTR_CACHE_FORM_RELOC && e->copy_len &&
			   ((c[0] & 0xf0) == 0x70 || (c[0] == 0x0f && (c[1] & 0xf0) == 0x80))) {
			c[c[0] == 0x0f] ^= 0x01;	/* jcc <-> j<not cc>, the targets as they were */
			m->applied = 1;
		} else if (!strcmp(m->name, "laid-fall") && e->form == KINSTR_CACHE_FORM_COPY && e->copy_len > e->len &&
			   (c[e->len] == 0xeb || c[e->len] == 0xe9)) {
			if (c[e->len] == 0xeb)	/* where it runs on: one byte further */
				c[e->len + 1] += 1;
			else
				add32(c + e->len + 1, 1);
			m->applied = 1;
		} else if (!strcmp(m->name, "laid-counter") && i == 2) {
			e->flags |= KINSTR_CACHE_M_COUNTED;
			m->applied = 1;
		} else if (!strcmp(m->name, "call") && e->form == KINSTR_CACHE_FORM_CALL) {
			add32(c + 1, 1);
			m->applied = 1;
		} else if (!strcmp(m->name, "native") && e->form == KINSTR_CACHE_FORM_NATIVE) {
			add32(c + 1, 1);
			m->applied = 1;
		} else if (!strcmp(m->name, "jump-label") && e->form == KINSTR_CACHE_FORM_JUMP_LABEL) {
			c[8] ^= 0x01;	/* jg <-> jle */
			m->applied = 1;
		} else if (!strcmp(m->name, "static-call") && e->form == KINSTR_CACHE_FORM_STATIC_CALL) {
			add32(c + e->copy_len - 4, 1);
			m->applied = 1;
		} else if (!strcmp(m->name, "counter") && (e->flags & KINSTR_CACHE_M_COUNTED)) {
			uint8_t *seq = c - counter_len(e) + !!(e->flags & KINSTR_CACHE_M_PUSHF);

			add32(seq + 3, 8);	/* movabs $counter: the next counter's address */
			m->applied = 1;
		} else if (!strcmp(m->name, "layout") && i == 1) {
			e->copy += 1;
			m->applied = 1;
		} else if (!strcmp(m->name, "boundary") && i == 1) {
			e->len += 1;
			m->applied = 1;
		} else if (!strcmp(m->name, "exit") && e->form == KINSTR_CACHE_FORM_CALL && i + 2 < nmap &&
			   !(map[i + 1].flags & KINSTR_CACHE_M_FUNC) && !(map[i + 2].flags & KINSTR_CACHE_M_FUNC) &&
			   map[i + 2].form <= KINSTR_CACHE_FORM_RELOC && !is_enter(req, nreq, map[i + 2].addr)) {
			/* the re-entry point after the call moves on by one instruction: the return lands on none */
			for (k = 0; k < nreq; k++) {
				const unsigned char *t = kinstr_kernel__text(m->k, map[i + 2].addr, map[i + 2].len);

				if (req[k].site != map[i + 1].addr || !t)
					continue;
				req[k].site = map[i + 2].addr;
				req[k].kind = KINSTR_PROBE_TRAP;
				req[k].displaced_len = map[i + 2].len;
				memset(req[k].expected, 0, sizeof(req[k].expected));
				memcpy(req[k].expected, t, map[i + 2].len);
				req[k].arg = map[i + 2].copy - counter_len(&map[i + 2]);
				m->applied = 1;
				break;
			}
		}
	}
	for (i = 0; i < nmap && !m->applied; i++) {
		struct kinstr_cache_map *e = &map[i];
		uint8_t *c = b + e->copy;

		if (!strcmp(m->name, "edge-in") && (e->flags & KINSTR_CACHE_M_EDGE_IN)) {
			uint8_t *seq = c - counter_len(e) - 16 - 2 * !!(e->flags & KINSTR_CACHE_M_EDGE_IN_PUSHF) +
				       !!(e->flags & KINSTR_CACHE_M_EDGE_IN_PUSHF);

			add32(seq + 3, 8);	/* the next counter's address */
			m->applied = 1;
		} else if (!strcmp(m->name, "edge-out") && (e->flags & KINSTR_CACHE_M_EDGE_OUT) &&
			   e->form == KINSTR_CACHE_FORM_RELOC && (c[0] & 0xf0) == 0x70) {
			c[0] ^= 0x01;	/* j<not cc> becomes jcc: the counted way is the other one */
			m->applied = 1;
		}
	}
	if (!strncmp(m->name, "timer-", 6))
		m->applied = mutate_timer(m->name, b, map, nmap, req, nreq);
	if (!strcmp(m->name, "reentry") && nreq) {
		req[0].arg += 1;
		m->applied = 1;
	}
	(void)len;
}

/* Made-up counts: a quarter of the edges never ran, the others 1..999 times (as tests/unit/test_layout.c). */
static uint64_t made_up(uint64_t a, size_t e)
{
	uint64_t h = (a ^ (e * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;

	h ^= h >> 29;
	return (h & 3) ? 1 + (h >> 8) % 999 : 0;
}

/* f into cs: as planned, or (--laid) re-laid by made-up edge counts. */
static int add_fn(struct kinstr_cacheset *cs, const struct kinstr_kernel *k, const struct kinstr_func *f,
		  struct kinstr_cache_refusal *r)
{
	struct kinstr_cache_opts o = { .sz = sizeof(o), .flags = KINSTR_CACHE_F_EDGES };
	struct kinstr_layout_block *b = NULL;
	struct kinstr_cache_fn *plan;
	uint64_t *ec = NULL;
	uint32_t *order = NULL;
	size_t nb, e;
	int ret = -ENOMEM;

	if (!laid)
		return kinstr_cacheset__add(cs, f, r);
	plan = kinstr_cache_fn__build(k, f, f->addr, &o, r);
	if (!plan)
		return -errno;
	nb = kinstr_cache_fn__block_cnt(plan);
	ec = calloc(kinstr_cache_fn__edge_cnt(plan) + 1, sizeof(*ec));
	b = calloc(nb, sizeof(*b));
	order = calloc(nb, sizeof(*order));
	if (ec && b && order) {
		for (e = 0; e < kinstr_cache_fn__edge_cnt(plan); e++)
			ec[e] = made_up(f->addr, e);
		ret = kinstr_layout__blocks(k, plan, ec, b, NULL);
		if (!ret)
			ret = kinstr_layout__order(b, nb, 0, order);
		if (!ret)
			ret = kinstr_cacheset__add_laid(cs, f, order, nb, r);
	}
	free(ec);
	free(b);
	free(order);
	kinstr_cache_fn__free(plan);
	return ret;
}

static int accept(struct kinstr_dev *dev, const struct kinstr_kernel *k, int argc, char **argv)
{
	size_t i, planned = 0, builder_refused = 0, accepted = 0, refused = 0;
	int a;

	for (i = 0; i < kinstr_kernel__func_cnt(k); i++) {
		const struct kinstr_func *f = kinstr_kernel__func(k, i);
		struct kinstr_cacheset *cs;
		struct kinstr_cache_refusal r;
		struct kinstr_why why;
		int match = 0;

		for (a = 0; a < argc; a++)
			match |= kinstr__glob_match(argv[a], f->name);
		if (!match)
			continue;
		cs = kinstr_cacheset__new(dev, k);
		if (!cs || kinstr_cacheset__set_flags(cs, copy_flags))
			return 1;
		if (add_fn(cs, k, f, &r)) {
			builder_refused++;
		} else {
			planned++;
			if (kinstr_cacheset__install(cs, KINSTR_INSTALL_F_VERIFY_ONLY, NULL, &why)) {
				refused++;
				printf("module refused %s: %s\n", f->name, why.msg);
			} else {
				accepted++;
			}
		}
		kinstr_cacheset__free(cs);
	}
	printf("planned %zu (builder refused %zu), module accepted %zu, refused %zu\n", planned, builder_refused,
	       accepted, refused);
	return planned ? 0 : 1;
}

static int mutations(struct kinstr_dev *dev, const struct kinstr_kernel *k, int argc, char **argv)
{
	static const char *const kinds[] = { "copy", "reloc", "call", "native", "jump-label", "static-call",
					     "counter", "layout", "boundary", "reentry", "exit", "edge-in", "edge-out",
					     "timer-call", "timer-other", "timer-range", "timer-set", "timer-unstopped",
					     "timer-entry", "laid-invert", "laid-fall", "laid-counter" };
	/* the rule each kind of damage breaks */
	static const char *const rule[] = { "copy", "reloc", "call", "native", "jump-label", "static-call",
					    "counter", "layout", "boundary", "reentry", "exit", "counter", "reloc",
					    "timer", "timer", "timer", "timer", "timer-place", "timer-place",
					    "reloc", "fall", "request" };
	size_t i, tried = 0, refused = 0, by_rule = 0;
	_Static_assert(sizeof(rule) == sizeof(kinds), "a rule for each kind of damage");
	int a, rc = 0;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct kinstr_cacheset *cs = kinstr_cacheset__new(dev, k);
		struct mut m = { kinds[i], k, 0 };
		struct kinstr_why why = { .msg = "" };
		int ret;

		if ((!(copy_flags & KINSTR_CACHE_F_EDGES) && !strncmp(kinds[i], "edge-", 5)) ||
		    (!(copy_flags & KINSTR_CACHE_F_TIMER) && !strncmp(kinds[i], "timer-", 6)) ||
		    (!laid && !strncmp(kinds[i], "laid-", 5)) || (laid && !strcmp(kinds[i], "counter"))) {
			kinstr_cacheset__free(cs);
			continue;
		}
		if (!cs || kinstr_cacheset__set_flags(cs, copy_flags))
			return 1;

		for (a = 0; a < argc; a++) {
			const struct kinstr_func *f = kinstr_kernel__find_func(k, argv[a]);
			struct kinstr_cache_refusal r;

			if (f)
				add_fn(cs, k, f, &r);
		}
		kinstr_cacheset__set_mutate(cs, mutate, &m);
		ret = kinstr_cacheset__install(cs, KINSTR_INSTALL_F_VERIFY_ONLY, NULL, &why);
		if (!m.applied) {
			printf("mutation %s: no instruction of that form\n", kinds[i]);
		} else if (!ret) {
			printf("mutation %s: ACCEPTED\n", kinds[i]), rc = 1;
		} else {
			char id[32];

			snprintf(id, sizeof(id), "[%s]", rule[i]);
			printf("mutation %s: refused (%s) %s\n", kinds[i], strerror(-ret), why.msg);
			refused++;
			by_rule += strstr(why.msg, id) != NULL;
		}
		tried++;
		kinstr_cacheset__free(cs);
	}
	printf("mutations %zu refused %zu by their own rule %zu\n", tried, refused, by_rule);
	return rc;
}

/* The kernel's own list of vmalloc areas (executable ones included) that kinstr.ko's code asked for. */
static long vmalloc_areas(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, " [kinstr]") != NULL;
	fclose(f);
	return n;
}

/*
 * `cache_check stress ROUNDS FUNC...`: install the copies of FUNCs, let them run 0.2 s, read the
 * counters, remove them, ROUNDS times, with one view of the kernel (the install and removal are
 * what is under test, not the analysis). Prints the rounds that went through and the total of
 * the counts (the copies ran), then what the module held while a cache was in and that all of it
 * came back after the last removal (KINSTR_IOC_LIMITS, waiting up to 10 s for the frees that
 * follow quiescence), and the kernel's count of kinstr's vmalloc areas (/proc/vmallocinfo) then.
 */
static int stress(struct kinstr_dev *dev, const struct kinstr_kernel *k, int rounds, int argc, char **argv)
{
	struct kinstr_limits base = { .size = sizeof(base) }, l, peak = { 0 };
	uint64_t total = 0;
	long v0 = vmalloc_areas(), vpeak = 0, v1;
	int r, a, ok = 0, w;

	if (kinstr_dev__limits(dev, &base) || base.size < KINSTR_LIMITS_SIZE_VER1) {
		printf("stress: the module does not say what memory it holds\n");
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		struct kinstr_cacheset *cs = kinstr_cacheset__new(dev, k);
		struct kinstr_why why;
		size_t i, b;

		for (a = 0; cs && a < argc; a++) {
			const struct kinstr_func *f = kinstr_kernel__find_func(k, argv[a]);
			struct kinstr_cache_refusal rf;

			if (f && kinstr_cacheset__add(cs, f, &rf))
				printf("round %d: %s refused: %s\n", r, argv[a], rf.why);
		}
		if (!cs || kinstr_cacheset__install(cs, KINSTR_INSTALL_F_WAIT, NULL, &why)) {
			printf("round %d: %s\n", r, cs ? why.msg : "no memory");
			kinstr_cacheset__free(cs);
			continue;
		}
		usleep(200000);
		l.size = sizeof(l);
		if (!kinstr_dev__limits(dev, &l) && l.areas - base.areas > peak.areas)
			peak = (struct kinstr_limits){ .areas = l.areas - base.areas, .text_bytes = l.text_bytes - base.text_bytes,
						       .percpu_bytes = l.percpu_bytes - base.percpu_bytes };
		v1 = vmalloc_areas();
		vpeak = v1 > vpeak ? v1 : vpeak;
		if (!kinstr_cacheset__read(cs))
			for (i = 0; i < kinstr_cacheset__cnt(cs); i++)
				for (b = 0; b < kinstr_cache_fn__block_cnt(kinstr_cacheset__fn(cs, i)); b++)
					total += kinstr_cacheset__block_count(cs, i, b);
		if (!kinstr_cacheset__remove(cs))
			ok++;
		kinstr_cacheset__free(cs);
	}
	printf("stress: %d of %d rounds installed and removed, %llu block passes counted\n", ok, rounds,
	       (unsigned long long)total);
	for (w = 0; w < 100; w++) {	/* the frees come after quiescence, from the module's worker */
		l.size = sizeof(l);
		if (kinstr_dev__limits(dev, &l))
			return 1;
		if (l.areas == base.areas && l.text_bytes == base.text_bytes && l.percpu_bytes == base.percpu_bytes)
			break;
		usleep(100000);
	}
	printf("memory: held with a cache in: %llu areas, %llu text bytes, %llu per-CPU bytes; after the last removal: "
	       "%lld areas, %lld text bytes, %lld per-CPU bytes more than before the first\n",
	       (unsigned long long)peak.areas, (unsigned long long)peak.text_bytes, (unsigned long long)peak.percpu_bytes,
	       (long long)(l.areas - base.areas), (long long)(l.text_bytes - base.text_bytes),
	       (long long)(l.percpu_bytes - base.percpu_bytes));
	v1 = vmalloc_areas();
	/* the count must rise while a cache is in (else it does not see kinstr's areas) and come back */
	printf("vmalloc areas of kinstr.ko: %ld before, %ld at most with a cache in (%s), %ld after\n", v0, vpeak,
	       vpeak > v0 ? "more" : "NOT MORE", v1);
	return ok == rounds && w < 100 && v0 >= 0 && vpeak > v0 && v1 == v0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct kinstr_dev *dev = kinstr_dev__open(NULL);
	struct kinstr_kernel *k = dev ? kinstr_kernel__open_live(dev) : NULL;
	int rc;

	for (; argc > 1 && (!strcmp(argv[1], "--edges") || !strcmp(argv[1], "--timer") || !strcmp(argv[1], "--laid"));
	     argv++, argc--) {
		if (!strcmp(argv[1], "--laid"))
			laid = 1;
		else
			copy_flags |= !strcmp(argv[1], "--edges") ? KINSTR_CACHE_F_EDGES : KINSTR_CACHE_F_TIMER;
	}
	if ((copy_flags & KINSTR_CACHE_F_TIMER) && dev && kinstr_timers__create(dev, NTIMERS, 0, 0)) {
		fprintf(stderr, "cache_check: cannot create the timers\n");
		return 1;
	}
	if (argc < 3 || !k) {
		fprintf(stderr, "usage: cache_check [--edges] [--timer] [--laid] accept|mutate GLOB|FUNC... | stress ROUNDS FUNC... "
			"(with /dev/kinstr)\n");
		return 2;
	}
	if (!strcmp(argv[1], "stress"))
		rc = stress(dev, k, atoi(argv[2]), argc - 3, argv + 3);
	else if (!strcmp(argv[1], "accept"))
		rc = accept(dev, k, argc - 2, argv + 2);
	else
		rc = mutations(dev, k, argc - 2, argv + 2);
	kinstr_kernel__close(k);
	kinstr_dev__close(dev);
	return rc;
}
