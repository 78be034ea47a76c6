// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The reader's side of a trace channel: map the buffers, take and give back sub-buffers. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <kinstr/trace.h>
#include "lib/opts.h"

struct kinstr_trace {
	struct kinstr_dev *dev;
	unsigned int nr_cpus;
	uint32_t subbuf_size;
	size_t buf_size, map_size;
	int64_t clock_offset;
	bool local_clock;
	unsigned char *map;
};

int kinstr_trace_opts__geometry(struct kinstr_trace_opts *o, uint64_t buffer, uint32_t subbuf)
{
	if (subbuf < 4096 || (subbuf & (subbuf - 1)))
		return -EDOM;
	if (buffer < 2ull * subbuf || buffer / subbuf > 256)
		return -ERANGE;
	o->subbuf_size = subbuf;
	for (o->num_subbufs = 2; o->num_subbufs * 2ull <= buffer / subbuf; o->num_subbufs *= 2)
		;
	return 0;
}

struct kinstr_trace *kinstr_trace__create(struct kinstr_dev *dev, const struct kinstr_trace_opts *opts)
{
	struct kinstr_trace_create tc = { .size = sizeof(tc) };
	struct kinstr_trace *t;
	int fd, err;

	if (!KINSTR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	if (!dev) {
		errno = ENODEV;
		return NULL;
	}
	fd = kinstr_dev__fd(dev);
	tc.subbuf_size = KINSTR_OPTS_GET(opts, subbuf_size, 0) ?: 64 << 10;
	tc.num_subbufs = KINSTR_OPTS_GET(opts, num_subbufs, 0) ?: 16;
	tc.mode = KINSTR_OPTS_GET(opts, overwrite, false) ? KINSTR_TRACE_OVERWRITE : KINSTR_TRACE_DISCARD;
	tc.flags = KINSTR_OPTS_GET(opts, local_clock, false) ? KINSTR_TRACE_F_LOCAL_CLOCK : 0;
	if (kinstr_dev__ioctl(dev, KINSTR_IOC_TRACE_CREATE, &tc) < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->dev = dev;
	t->nr_cpus = tc.nr_cpus;
	t->subbuf_size = tc.subbuf_size;
	t->buf_size = tc.buf_mmap_size;
	t->map_size = t->buf_size * t->nr_cpus;
	t->clock_offset = (int64_t)(tc.realtime_ns - tc.clock_ns);
	t->local_clock = tc.flags & KINSTR_TRACE_F_LOCAL_CLOCK;
	t->map = mmap(NULL, t->map_size, PROT_READ, MAP_SHARED, fd, 0);
	if (t->map == MAP_FAILED) {
		err = errno;
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}

void kinstr_trace__free(struct kinstr_trace *t)
{
	if (!t)
		return;
	munmap(t->map, t->map_size);
	free(t);
}

unsigned int kinstr_trace__nr_cpus(const struct kinstr_trace *t)
{
	return t->nr_cpus;
}

int64_t kinstr_trace__clock_offset(const struct kinstr_trace *t)
{
	return t->clock_offset;
}

uint64_t kinstr_trace__now(const struct kinstr_trace *t)
{
	struct timespec ts;

	/* mono: the module's ktime_get_mono_fast_ns() is CLOCK_MONOTONIC; local_clock() has no user-space reader */
	clock_gettime(t->local_clock ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - (t->local_clock ? (uint64_t)t->clock_offset : 0);
}

int kinstr_trace__consume_max(struct kinstr_trace *t, kinstr_trace_subbuf_fn fn, void *ctx, unsigned int max_per_cpu)
{
	unsigned int cpu, round, busy;

	/*
	 * Round-robin, one sub-buffer of each CPU in turn: a CPU whose buffer refills as fast as it
	 * is read cannot starve the others, and fn can stop the whole pass between any two.
	 */
	for (round = 0; !max_per_cpu || round < max_per_cpu; round++) {
		busy = 0;
		for (cpu = 0; cpu < t->nr_cpus; cpu++) {
			struct kinstr_trace_subbuf sb = { .size = sizeof(sb), .cpu = cpu };
			const struct kr_subbuf_hdr *h;
			int ret = 0;

			if (kinstr_dev__ioctl(t->dev, KINSTR_IOC_TRACE_GET, &sb) < 0) {
				if (errno == EAGAIN)
					continue;
				return -errno;
			}
			busy++;
			if (sb.offset + t->subbuf_size > t->map_size)
				return -EIO;
			h = (const struct kr_subbuf_hdr *)(t->map + sb.offset);
			/* the header says how much is records; never trust it past the sub-buffer */
			if (h->magic != KR_SUBBUF_MAGIC || h->hdr_size < sizeof(*h) ||
			    (uint64_t)h->hdr_size + h->data_size > t->subbuf_size)
				ret = -EIO;
			else
				ret = fn(ctx, cpu, h, (const unsigned char *)h + h->hdr_size);
			sb.offset = 0;
			if (kinstr_dev__ioctl(t->dev, KINSTR_IOC_TRACE_PUT, &sb) < 0 && !ret)
				ret = -errno;
			if (ret)
				return ret;
		}
		if (!busy)
			break;
	}
	return 0;
}

int kinstr_trace__consume(struct kinstr_trace *t, kinstr_trace_subbuf_fn fn, void *ctx)
{
	return kinstr_trace__consume_max(t, fn, ctx, 0);
}

int kinstr_trace__flush(struct kinstr_trace *t)
{
	struct kinstr_trace_flush fl = { .size = sizeof(fl) };

	return kinstr_dev__ioctl(t->dev, KINSTR_IOC_TRACE_FLUSH, &fl);
}

int kinstr_trace__poll(struct kinstr_trace *t, int timeout_ms)
{
	struct pollfd p = { .fd = kinstr_dev__fd(t->dev), .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0)
		return -errno;
	return n > 0 && (p.revents & POLLIN);
}

uint64_t kinstr_trace__lost(struct kinstr_trace *t)
{
	struct kinstr_trace_stats st;
	uint64_t n = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < kinstr_trace__nr_cpus(t); cpu++)
		if (!kinstr_trace__stats(t, cpu, &st))
			n += st.lost_full + st.lost_wrap + st.lost_big + st.lost_nest;
	return n;
}

int kinstr_trace__stats(struct kinstr_trace *t, unsigned int cpu, struct kinstr_trace_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->cpu = cpu;
	return kinstr_dev__ioctl(t->dev, KINSTR_IOC_TRACE_STATS, st);
}
