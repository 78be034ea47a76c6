// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* A recording: trace channel, CTF trace and recorder, run and drained (include/kinstr/record.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include <kinstr/record.h>
#include "lib/opts.h"

struct kinstr_recording {
	struct kinstr_dev *dev;
	struct kinstr_trace *t;
	struct kinstr_ctf *w;
	struct kinstr_recorder *rec;
	const char *dir;
	char dirbuf[64];		/* the default folder's name */
	unsigned int num_subbufs, nr_cpus;
	uint64_t max_size;
	bool (*should_stop)(void *ctx);
	void *ctx;
	struct kinstr_relayd *relay;	/* NULL: no live streaming */
	struct kinstr_ctf_sink sink;
	uint64_t *beaconed;		/* per CPU: packets sent at the last beacon round */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* min(1 GiB, half the free space of dir's file system) */
static uint64_t default_max(const char *dir)
{
	struct statvfs fs;
	uint64_t max = 1ull << 30;

	if (!statvfs(dir, &fs) && (uint64_t)fs.f_bavail * fs.f_frsize / 2 < max)
		max = (uint64_t)fs.f_bavail * fs.f_frsize / 2;
	return max;
}

struct kinstr_recording *kinstr_recording__new(struct kinstr_dev *dev, const char *dir, struct kinstr_trace_event *ev,
					       unsigned int nev, const struct kinstr_recording_opts *opts,
					       struct kinstr_why *why)
{
	const struct kinstr_trace_opts *topts = KINSTR_OPTS_GET(opts, trace, NULL);
	struct kinstr_ctf_env env[16];
	struct kinstr_ctf_opts copts = { .sz = sizeof(copts) };
	struct kinstr_recorder_opts ropts = { .sz = sizeof(ropts) };
	struct kinstr_recording *r;
	unsigned int i, nenv = KINSTR_OPTS_GET(opts, env_cnt, 0);
	const char *relayd;
	bool user_max;
	int e;

	if (!KINSTR_OPTS_VALID(opts) || nenv > 15) {
		kinstr_why__fail(why, -EINVAL, "bad recording options");
		errno = EINVAL;
		return NULL;
	}
	if (!dev) {
		kinstr_why__fail(why, -ENODEV, "no device");
		errno = ENODEV;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		return NULL;
	}
	r->dev = dev;
	r->dir = dir;
	relayd = KINSTR_OPTS_GET(opts, relayd, NULL);
	if (!dir && !relayd) {
		time_t now = time(NULL);

		strftime(r->dirbuf, sizeof(r->dirbuf), "kinstr-trace-%Y%m%d-%H%M%S", localtime(&now));
		r->dir = dir = r->dirbuf;
	}
	r->should_stop = KINSTR_OPTS_GET(opts, should_stop, NULL);
	r->ctx = KINSTR_OPTS_GET(opts, ctx, NULL);
	r->t = kinstr_trace__create(dev, topts);
	if (!r->t) {
		e = errno;
		kinstr_why__fail(why, -e, "cannot create the trace buffers (%u x %u bytes per CPU): %s",
				 topts && topts->num_subbufs ? topts->num_subbufs : 16,
				 topts && topts->subbuf_size ? topts->subbuf_size : 64 << 10, strerror(e));
		goto fail;
	}
	r->nr_cpus = kinstr_trace__nr_cpus(r->t);
	r->num_subbufs = topts && topts->num_subbufs ? topts->num_subbufs : 16;
	if (relayd) {
		struct kinstr_relayd_opts lo = { .sz = sizeof(lo), .session = KINSTR_OPTS_GET(opts, relayd_session, NULL),
						 .nr_streams = r->nr_cpus };

		r->relay = kinstr_relayd__open(relayd, &lo, why);
		r->beaconed = calloc(r->nr_cpus, sizeof(*r->beaconed));
		if (!r->relay || !r->beaconed) {
			e = r->relay ? ENOMEM : errno;
			if (r->relay)
				kinstr_why__fail(why, -e, "%s", strerror(e));
			goto fail;
		}
		r->sink = (struct kinstr_ctf_sink){ kinstr_relayd__sink_metadata, kinstr_relayd__sink_packet, r->relay };
		copts.sink = &r->sink;
	}
	for (i = 0; i < nenv; i++)
		env[i] = opts->env[i];
	env[nenv++] = (struct kinstr_ctf_env){ "kinstr_mode", topts && topts->overwrite ? "overwrite" : "discard" };
	copts.env = env;
	copts.env_cnt = nenv;
	/* the module read the records' clock and the wall clock side by side */
	copts.clock_offset_ns = kinstr_trace__clock_offset(r->t);
	if (topts && topts->local_clock) {
		copts.clock_name = "local";
		copts.clock_description = "the kernel's local_clock()";
	}
	r->w = kinstr_ctf__create(dir, &copts);
	if (!r->w) {
		e = errno;
		kinstr_why__fail(why, -e, "%s: cannot create the trace: %s", dir ? dir : "(relay)",
				 e == EEXIST ? "it exists and is not empty" : strerror(e));
		goto fail;
	}
	r->max_size = KINSTR_OPTS_GET(opts, max_size, 0);
	user_max = r->max_size != 0;
	if (!r->max_size)
		r->max_size = dir ? default_max(dir) : 1ull << 30;
	ropts.max_size = r->max_size;
	ropts.on_event = KINSTR_OPTS_GET(opts, on_event, NULL);
	ropts.should_stop = r->should_stop;
	ropts.ctx = r->ctx;
	r->rec = kinstr_recorder__new(r->w, r->nr_cpus, ev, nev, &ropts);
	if (!r->rec) {
		e = errno;
		if (e == ENOSPC)
			kinstr_why__fail(why, -e, "%s: --max-size %llu bytes leaves no room for the trace (%u CPUs need "
					 "%llu bytes)%s", dir ? dir : "(relay)", (unsigned long long)r->max_size, r->nr_cpus,
					 (unsigned long long)r->nr_cpus * KINSTR_RECORD_END_RESERVE + 4096,
					 user_max ? "" : " (the default is half the file system's free space)");
		else
			kinstr_why__fail(why, -e, "%s: cannot describe the events: %s", dir ? dir : "(relay)", strerror(e));
		goto fail;
	}
	if (r->relay) {
		/*
		 * Every stream starts with an empty packet (a live viewer shows nothing before each
		 * stream has one; beacons count only after one), before any record: then the metadata
		 * and these are in, the streams are shown to viewers.
		 */
		uint64_t ts = kinstr_trace__now(r->t);

		if (topts && topts->local_clock)	/* read beside the clock, not from it */
			ts = ts > 100000000 ? ts - 100000000 : 0;
		e = kinstr_recorder__begin(r->rec, ts);
		if (!e)
			e = kinstr_relayd__streams_sent(r->relay);
		if (e) {
			kinstr_why__fail(why, e, "%s", *kinstr_relayd__error(r->relay) ? kinstr_relayd__error(r->relay) :
					 strerror(-e));
			e = -e;
			goto fail;
		}
	}
	return r;
fail:
	kinstr_recording__free(r);
	errno = e;
	return NULL;
}

void kinstr_recording__free(struct kinstr_recording *r)
{
	if (!r)
		return;
	kinstr_recorder__free(r->rec);
	if (r->w)
		kinstr_ctf__close(r->w);
	kinstr_relayd__free(r->relay);
	free(r->beaconed);
	kinstr_trace__free(r->t);
	free(r);
}

const char *kinstr_recording__dir(const struct kinstr_recording *r)
{
	return r->dir;
}

unsigned int kinstr_recording__nr_cpus(const struct kinstr_recording *r)
{
	return r->nr_cpus;
}

struct kinstr_relayd *kinstr_recording__relayd(struct kinstr_recording *r)
{
	return r->relay;
}

uint64_t kinstr_recording__max_size(const struct kinstr_recording *r)
{
	return r->max_size;
}

bool kinstr_recording__capped(struct kinstr_recording *r, bool *first)
{
	return kinstr_recorder__capped(r->rec, first);
}

/* A failure while writing: the relay's sentence when it is the relay that failed. */
static int write_fail(struct kinstr_recording *r, int ret, struct kinstr_why *why, const char *what)
{
	if (r->relay && *kinstr_relayd__error(r->relay))
		return kinstr_why__fail(why, ret, "%s; the recording stopped (the relay keeps what it received%s%s)",
					kinstr_relayd__error(r->relay), r->dir ? ", and so does " : "", r->dir ? r->dir : "");
	return kinstr_why__fail(why, ret, "%s: %s", what, strerror(-ret));
}

/*
 * Live beacons: each CPU that sent no packet since the last round says it has nothing before ts
 * (read before the flush that delivered everything older), so that a viewer goes on with the others.
 */
static int beacons(struct kinstr_recording *r, uint64_t ts)
{
	unsigned int cpu;
	int ret;

	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		uint64_t n = kinstr_relayd__packets(r->relay, cpu);

		/* one ns apart: babeltrace2's lttng-live warns of two streams' identical inactivity messages */
		if (n == r->beaconed[cpu] && (ret = kinstr_relayd__beacon(r->relay, cpu, ts > cpu ? ts - cpu : 0)))
			return ret;
		r->beaconed[cpu] = n;
	}
	return 0;
}

int kinstr_recording__run(struct kinstr_recording *r, bool live, int poll_ms, struct kinstr_why *why)
{
	double last_flush = now_s();
	uint64_t flush_ts = 0;
	bool flushed;
	int ret;

	while (!(r->should_stop && r->should_stop(r->ctx))) {
		kinstr_trace__poll(r->t, poll_ms);
		flushed = false;
		if ((live || r->relay) && now_s() - last_flush >= 1) {
			flush_ts = kinstr_trace__now(r->t);
			kinstr_trace__flush(r->t);
			last_flush = now_s();
			flushed = true;
		}
		ret = kinstr_trace__consume(r->t, kinstr_recorder__subbuf, r->rec);
		if (live)
			fflush(stdout);
		if (ret < 0)
			return write_fail(r, ret, why, "reading the trace buffers");
		if (flushed && r->relay && ret != KINSTR_RECORD_STOP && (ret = beacons(r, flush_ts)))
			return write_fail(r, ret, why, "sending beacons");
		if (ret == KINSTR_RECORD_STOP)
			break;
	}
	return 0;
}

int kinstr_recording__drain(struct kinstr_recording *r, struct kinstr_rec_cpu *cpus, struct kinstr_trace_stats *st,
			    struct kinstr_why *why)
{
	struct timespec ts;
	unsigned int cpu;
	int ret;

	kinstr_trace__flush(r->t);
	kinstr_recorder__drain(r->rec);
	ret = kinstr_trace__consume_max(r->t, kinstr_recorder__subbuf, r->rec, r->num_subbufs + 1);
	fflush(stdout);
	if (ret < 0)
		return write_fail(r, ret, why, "reading the trace buffers");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		struct kinstr_trace_stats s;
		struct kinstr_rec_cpu c = { 0 };

		memset(&s, 0, sizeof(s));
		if (!kinstr_trace__stats(r->t, cpu, &s) &&
		    kinstr_recorder__finish_cpu(r->rec, cpu, &s, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
						&c))
			return r->relay && *kinstr_relayd__error(r->relay) ? write_fail(r, -EIO, why, "") :
			       kinstr_why__fail(why, -EIO, "%s: cannot write the stream of cpu %u", r->dir, cpu);
		if (cpus)
			cpus[cpu] = c;
		if (st)
			st[cpu] = s;
	}
	return 0;
}

int kinstr_recording__close(struct kinstr_recording *r, struct kinstr_why *why)
{
	int ret = kinstr_ctf__close(r->w);

	r->w = NULL;
	if (ret)
		return r->relay && *kinstr_relayd__error(r->relay) ?
		       write_fail(r, ret, why, "") :
		       kinstr_why__fail(why, ret, "%s: writing the trace failed: %s", r->dir, strerror(-ret));
	/* the relay has written every packet: its folder holds the whole trace when this returns */
	if (r->relay && (ret = kinstr_relayd__close(r->relay, why)))
		return write_fail(r, ret, why, "");
	return 0;
}
