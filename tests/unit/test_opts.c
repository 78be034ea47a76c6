// SPDX-License-Identifier: GPL-2.0
/*
 * The options contract (lib/opts.h) for every size-prefixed struct of libkinstr's API: a caller
 * whose struct is shorter (older), longer with a zero tail (newer, options it does not use) and
 * longer with a non-zero tail (an option this library does not know: EINVAL), plus a size below
 * the size field. Each through the public function that takes the struct.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/cache.h>
#include <kinstr/cfg.h>
#include <kinstr/ctf.h>
#include <kinstr/trace.h>
#include <kinstr/drill.h>
#include <kinstr/record.h>
#include <glob.h>
#include "check.h"

/* A caller's struct of some size: ours at the front, then a tail it may set. */
struct bigger {
	union {
		struct kinstr_cfg_opts cfg;
		struct kinstr_ctf_opts ctf;
		struct kinstr_trace_opts trace;
		struct kinstr_recorder_opts rec;
		struct kinstr_recording_opts recording;
		struct kinstr_drill_opts drill;
		struct kinstr_cache_opts cache;
	} o;
	unsigned char tail[64];
};

enum shape { SHORTER, TAIL_ZERO, TAIL_GARBAGE, TOO_SMALL };
static const char *const shape_name[] = { "shorter", "longer, zero tail", "longer, garbage tail", "below sz" };

static void shape_it(struct bigger *b, size_t ours, size_t shorter, enum shape sh)
{
	size_t sz = sh == SHORTER ? shorter : sh == TOO_SMALL ? sizeof(size_t) - 1 : ours + sizeof(b->tail);

	if (sh == TAIL_GARBAGE)
		((unsigned char *)b)[ours + 7] = 0x5a;
	memcpy(b, &sz, sizeof(sz));	/* every opts struct starts with size_t sz */
}

static const unsigned char code[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };	/* push rbp; mov; pop; ret */

static void t_cfg_opts(void)
{
	enum shape sh;

	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		struct bigger b;
		struct kinstr_cfg *c;

		memset(&b, 0, sizeof(b));
		/* shorter: through return_thunk, the first version's last required field */
		shape_it(&b, sizeof(b.o.cfg), offsetof(struct kinstr_cfg_opts, return_thunk) + sizeof(uint64_t), sh);
		errno = 0;
		c = kinstr_cfg__new(code, sizeof(code), 0x1000, &b.o.cfg);
		if (sh == SHORTER || sh == TAIL_ZERO)
			CHECK(c && kinstr_cfg__start(c) == 0x1000, "%s: %s", shape_name[sh], strerror(errno));
		else
			CHECK(!c && errno == EINVAL, "%s: %p, errno %d", shape_name[sh], (void *)c, errno);
		kinstr_cfg__free(c);
	}
}

static void t_ctf_opts(void)
{
	enum shape sh;

	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		char dir[] = "/tmp/kinstr-opts-XXXXXX";
		struct kinstr_ctf *w;
		struct bigger b;

		if (!mkdtemp(dir)) {
			CHECK(0, "mkdtemp: %s", strerror(errno));
			return;
		}
		memset(&b, 0, sizeof(b));
		/* shorter: only clock_name (the rest defaults) */
		shape_it(&b, sizeof(b.o.ctf), offsetof(struct kinstr_ctf_opts, clock_name) + sizeof(char *), sh);
		b.o.ctf.clock_name = "mono";
		errno = 0;
		w = kinstr_ctf__create(dir, &b.o.ctf);
		if (sh == SHORTER || sh == TAIL_ZERO)
			CHECK(w != NULL, "%s: %s", shape_name[sh], strerror(errno));
		else
			CHECK(!w && errno == EINVAL, "%s: %p, errno %d", shape_name[sh], (void *)w, errno);
		if (w)
			kinstr_ctf__close(w);
		{
			char cmd[128];

			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
			if (system(cmd))
				CHECK(0, "could not remove %s", dir);
		}
	}
}

/* No device on the host: a struct the contract accepts gets as far as the device (ENODEV). */
static void t_trace_opts(void)
{
	enum shape sh;

	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		struct kinstr_trace *t;
		struct bigger b;

		memset(&b, 0, sizeof(b));
		shape_it(&b, sizeof(b.o.trace), offsetof(struct kinstr_trace_opts, subbuf_size) + sizeof(uint32_t), sh);
		errno = 0;
		t = kinstr_trace__create(NULL, &b.o.trace);
		CHECK(!t && errno == ((sh == SHORTER || sh == TAIL_ZERO) ? ENODEV : EINVAL), "%s: errno %d",
		      shape_name[sh], errno);
	}
}

static void t_recorder_opts(void)
{
	enum shape sh;

	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		char dir[] = "/tmp/kinstr-opts-XXXXXX", cmd[128];
		struct kinstr_ctf_opts co = { .sz = sizeof(co) };
		struct kinstr_ctf *w;
		struct kinstr_recorder *r;
		struct bigger b;

		if (!mkdtemp(dir) || !(w = kinstr_ctf__create(dir, &co))) {
			CHECK(0, "no CTF writer: %s", strerror(errno));
			return;
		}
		memset(&b, 0, sizeof(b));
		/* shorter: through max_size */
		shape_it(&b, sizeof(b.o.rec), offsetof(struct kinstr_recorder_opts, max_size) + sizeof(uint64_t), sh);
		errno = 0;
		r = kinstr_recorder__new(w, 2, NULL, 0, &b.o.rec);
		if (sh == SHORTER || sh == TAIL_ZERO)
			CHECK(r != NULL, "%s: %s", shape_name[sh], strerror(errno));
		else
			CHECK(!r && errno == EINVAL, "%s: %p, errno %d", shape_name[sh], (void *)r, errno);
		kinstr_recorder__free(r);
		kinstr_ctf__close(w);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			CHECK(0, "could not remove %s", dir);
	}
}

/* Without a device the struct is checked first: EINVAL for a bad one, ENODEV once it passes. */
static void t_recording_opts(void)
{
	enum shape sh;

	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		struct bigger b;
		struct kinstr_why why;

		memset(&b, 0, sizeof(b));
		shape_it(&b, sizeof(b.o.recording), offsetof(struct kinstr_recording_opts, max_size) + sizeof(uint64_t),
			 sh);
		errno = 0;
		CHECK(!kinstr_recording__new(NULL, "/nonexistent", NULL, 0, &b.o.recording, &why) &&
		      errno == (sh == SHORTER || sh == TAIL_ZERO ? ENODEV : EINVAL), "%s: errno %d", shape_name[sh],
		      errno);
	}
}

static int no_wait(void *ctx, int level, size_t nfuncs, size_t nprobes)
{
	return 1;
}

static void t_drill_opts(void)
{
	struct kinstr_kernel *k = NULL;
	const struct kinstr_func *root;
	enum shape sh;
	glob_t g;

	if (glob("tests/data/sample-*.snap", 0, NULL, &g) == 0 && g.gl_pathc) {
		k = kinstr_kernel__open_snapshot(g.gl_pathv[0]);
		globfree(&g);
	}
	root = k ? kinstr_kernel__find_func(k, "vfs_read") : NULL;
	CHECK(root, "no snapshot with vfs_read");
	if (!root)
		return;
	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		struct kinstr_drill *d;
		struct bigger b;

		memset(&b, 0, sizeof(b));
		/* shorter: through wait, the one field a caller must give */
		shape_it(&b, sizeof(b.o.drill), offsetof(struct kinstr_drill_opts, wait) + sizeof(void *), sh);
		b.o.drill.wait = no_wait;
		errno = 0;
		d = kinstr_drill__new(k, root, &b.o.drill);
		if (sh == SHORTER || sh == TAIL_ZERO)
			CHECK(d && kinstr_drill__node_cnt(d) == 1, "%s: %s", shape_name[sh], strerror(errno));
		else
			CHECK(!d && errno == EINVAL, "%s: %p, errno %d", shape_name[sh], (void *)d, errno);
		kinstr_drill__free(d);
	}
	kinstr_kernel__close(k);
}

/* The code cache's builder: vfs_read's copy (a snapshot has no jump label facts: the first such site refuses it,
 * so a function without one is taken: the first of a few names that builds with no options at all). */
static void t_cache_opts(void)
{
	static const char *const names[] = { "vfs_read", "ksys_lseek", "__x64_sys_getppid", "do_sys_open", "vfs_write" };
	struct kinstr_kernel *k = NULL;
	const struct kinstr_func *f = NULL;
	struct kinstr_cache_fn *c;
	enum shape sh;
	size_t i;
	glob_t g;

	if (glob("tests/data/sample-*.snap", 0, NULL, &g) == 0 && g.gl_pathc) {
		k = kinstr_kernel__open_snapshot(g.gl_pathv[0]);
		globfree(&g);
	}
	for (i = 0; k && !f && i < sizeof(names) / sizeof(names[0]); i++) {
		f = kinstr_kernel__find_func(k, names[i]);
		c = f ? kinstr_cache_fn__build(k, f, 0xffffffffc0000000ull, NULL, NULL) : NULL;
		if (!c)
			f = NULL;
		kinstr_cache_fn__free(c);
	}
	CHECK(f, "no snapshot with a function the cache builds without options");
	if (!f)
		goto out;
	for (sh = SHORTER; sh <= TOO_SMALL; sh++) {
		struct bigger b;

		memset(&b, 0, sizeof(b));
		/* shorter: through counters, the first version's one field */
		shape_it(&b, sizeof(b.o.cache), offsetof(struct kinstr_cache_opts, counters) + sizeof(uint64_t), sh);
		b.o.cache.counters = 0x1000;
		errno = 0;
		c = kinstr_cache_fn__build(k, f, 0xffffffffc0000000ull, &b.o.cache, NULL);
		if (sh == SHORTER || sh == TAIL_ZERO)
			CHECK(c && kinstr_cache_fn__block_cnt(c) > 0, "%s (%s): %s", shape_name[sh], f->name, strerror(errno));
		else
			CHECK(!c && errno == EINVAL, "%s (%s): %p, errno %d", shape_name[sh], f->name, (void *)c, errno);
		kinstr_cache_fn__free(c);
	}
out:
	kinstr_kernel__close(k);
}

int main(void)
{
	RUN(t_cfg_opts);
	RUN(t_ctf_opts);
	RUN(t_trace_opts);
	RUN(t_recorder_opts);
	RUN(t_recording_opts);
	RUN(t_drill_opts);
	RUN(t_cache_opts);
	return check_done();
}
