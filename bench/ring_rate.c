// SPDX-License-Identifier: GPL-2.0
/*
 * Records per second through kinstr's ring buffer (ring/ring.c) on the host: writer threads, each owning one
 * buffer as a CPU owns its buffer in the module (pinned to a CPU of its own when there are enough), write
 * fixed-size records flat out (reserve, fill, commit, timestamp from CLOCK_MONOTONIC), while one reader thread
 * drains every buffer (get, walk the records, put) as 'kinstr trace' does. Discard mode by default: what the
 * reader cannot keep up with is lost and counted. At the end each writer flushes its open sub-buffer, the
 * reader drains the rest, and the program checks that records read + lost == records attempted.
 *
 *   ring_rate [-w WRITERS] [-t SECONDS] [-l RECORD_LEN] [-b SUBBUF_SIZE] [-n NUM_SUBBUFS] [--overwrite]
 *             [--no-reader]
 * -w 0 means one writer per online CPU. Prints one line: writers, records committed, lost, records/s and
 * reserve attempts/s (all writers), ns per committed record (per writer: its wall time over its records,
 * so time spent on lost attempts is included), and records read. Exit 1 if read + lost != attempted.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../ring/ring.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct writer {
	struct kr_buf buf;
	pthread_t thread;
	int id, cpu;
	uint32_t len;
	uint64_t attempts, t_start, t_end;
	int done;				/* set (release) after the final kr_switch */
} __attribute__((aligned(64)));

static struct writer *writers;
static int nwriters, stop, reader_stop;
static uint64_t records_read, bytes_read, bad;

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t n = 0;

	pin(w->cpu);
	w->t_start = now_ns();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int i;

		for (i = 0; i < 256; i++) {
			struct kr_reserve_ctx ctx;

			n++;
			if (kr_reserve(&w->buf, &ctx, w->len, now_ns) == 0) {
				uint64_t *p = (uint64_t *)ctx.data;
				uint32_t k;

				/* like a trace record: [len|event|faults] ts, then values */
				p[1] = ctx.ts;
				for (k = 2; k < w->len / 8; k++)
					p[k] = n + k;
				kr_commit(&w->buf, &ctx);
			}
		}
	}
	w->t_end = now_ns();
	w->attempts = n;
	kr_switch(&w->buf, now_ns);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Drain what is delivered in every buffer; returns the sub-buffers read. */
static int drain(void)
{
	int i, got = 0;

	for (i = 0; i < nwriters; i++) {
		struct kr_buf *b = &writers[i].buf;
		uint64_t seq;
		uint32_t phys;

		while (kr_get_subbuf(b, &seq, &phys) == 0) {
			const char *base = kr_subbuf_addr(b, phys);
			const struct kr_subbuf_hdr *h = (const void *)base;
			uint32_t off, len, recs = 0;

			for (off = 0; off < h->data_size; off += KR_RECORD_SPAN(len)) {
				len = *(const uint32_t *)(base + KR_SUBBUF_HDR_SIZE + off);
				if (len < KR_RECORD_MIN)
					break;
				recs++;
			}
			if (recs != h->records)
				bad++;
			records_read += recs;
			bytes_read += h->data_size;
			kr_put_subbuf(b, seq);
			got++;
		}
	}
	return got;
}

static void *reader_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&reader_stop, __ATOMIC_ACQUIRE))
		if (!drain())
			sched_yield();
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: ring_rate [-w WRITERS (0: one per CPU)] [-t SECONDS] [-l RECORD_LEN] [-b SUBBUF_SIZE] "
		"[-n NUM_SUBBUFS] [--overwrite] [--no-reader]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct kr_config cfg = { .subbuf_size = 64 << 10, .num_subbufs = 16, .mode = KR_MODE_DISCARD };
	double secs = 2;
	uint32_t len = 48;
	int i, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), use_reader = 1;
	uint64_t attempts = 0, lost = 0, committed = 0;
	double rate = 0, ns_sum = 0, arate = 0;
	struct kr_lost l;
	pthread_t reader;
	size_t memsz;

	nwriters = 1;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--overwrite"))
			cfg.mode = KR_MODE_OVERWRITE;
		else if (!strcmp(argv[i], "--no-reader"))
			use_reader = 0;
		else if (i + 1 < argc && !strcmp(argv[i], "-w"))
			nwriters = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "-t"))
			secs = atof(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "-l"))
			len = (uint32_t)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "-b"))
			cfg.subbuf_size = (uint32_t)atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "-n"))
			cfg.num_subbufs = (uint32_t)atoi(argv[++i]);
		else
			usage();
	}
	if (nwriters <= 0)
		nwriters = ncpu;
	if (len < 16 || len % 8)
		usage();
	memsz = kr_buf_mem_size(&cfg);
	if (!memsz) {
		fprintf(stderr, "ring_rate: bad buffer configuration\n");
		return 2;
	}
	writers = aligned_alloc(64, sizeof(*writers) * (size_t)nwriters);
	if (!writers)
		return 1;
	memset(writers, 0, sizeof(*writers) * (size_t)nwriters);
	for (i = 0; i < nwriters; i++) {
		void *mem = aligned_alloc(4096, (memsz + 4095) & ~(size_t)4095);

		if (!mem || kr_buf_init(&writers[i].buf, &cfg, mem, (uint32_t)i)) {
			fprintf(stderr, "ring_rate: buffer %d: no memory or bad config\n", i);
			return 1;
		}
		memset(mem, 0, memsz);	/* fault it in before timing */
		writers[i].id = i;
		writers[i].cpu = nwriters <= ncpu ? i : -1;
		writers[i].len = len;
	}
	if (use_reader && pthread_create(&reader, NULL, reader_main, NULL))
		return 1;
	for (i = 0; i < nwriters; i++)
		if (pthread_create(&writers[i].thread, NULL, writer_main, &writers[i]))
			return 1;
	usleep((useconds_t)(secs * 1e6));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nwriters; i++)
		pthread_join(writers[i].thread, NULL);
	if (use_reader) {
		__atomic_store_n(&reader_stop, 1, __ATOMIC_RELEASE);
		pthread_join(reader, NULL);
	}
	drain();	/* what the final switches delivered */
	for (i = 0; i < nwriters; i++) {
		struct writer *w = &writers[i];
		double dt = (double)(w->t_end - w->t_start);

		kr_lost(&w->buf, &l);
		attempts += w->attempts;
		committed += l.records;
		lost += l.full + l.wrap + l.big + l.nest;
		rate += (double)l.records / (dt / 1e9);
		arate += (double)w->attempts / (dt / 1e9);
		ns_sum += dt / (double)l.records;
	}
	printf("%d writer%s%s, %s, %u-byte records, %u x %u KiB: %llu records committed, %llu lost (%.2f%%), "
	       "%.2f M records/s (%.2f M attempts/s), %.1f ns/record per writer; read %llu%s\n",
	       nwriters, nwriters > 1 ? "s" : "", use_reader ? " + 1 reader" : " (no reader)",
	       cfg.mode == KR_MODE_DISCARD ? "discard" : "overwrite", len, cfg.num_subbufs, cfg.subbuf_size >> 10,
	       (unsigned long long)committed, (unsigned long long)lost,
	       attempts ? 100.0 * (double)lost / (double)attempts : 0.0, rate / 1e6, arate / 1e6, ns_sum / nwriters,
	       (unsigned long long)records_read,
	       bad ? " (record count mismatch!)" : "");
	if (use_reader && (records_read + lost != attempts || bad)) {
		fprintf(stderr, "ring_rate: read %llu + lost %llu != attempted %llu\n",
			(unsigned long long)records_read, (unsigned long long)lost, (unsigned long long)attempts);
		return 1;
	}
	return 0;
}
