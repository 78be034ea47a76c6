/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kinstr's per-CPU ring buffer (docs/design.md, "The ring buffer"). One struct kr_buf per CPU; the same source
 * builds in the kernel module and in host tests (ring/port.h).
 *
 * Layout. The caller provides kr_buf_mem_size(cfg) = (num_subbufs + 1) * subbuf_size bytes (vmalloc_user in
 * the kernel so user space can mmap it). num_subbufs logical slots map to physical sub-buffers through
 * ids[]; the extra physical sub-buffer is the reader's spare. Logical sub-buffer number seq (0, 1, 2, ...)
 * lives in slot seq % num_subbufs; the write offset is a byte count that only grows, so
 * seq = offset / subbuf_size.
 *
 * Writer (the CPU that owns the buffer, with preemption disabled, and anything that interrupts it):
 *	struct kr_reserve_ctx ctx;
 *	if (kr_reserve(b, &ctx, len, clock) == 0) {	// ctx.ts: the record's timestamp
 *		write bytes [4, len) of the record at ctx.data;	// bytes [0, 4) hold len (written by the ring)
 *		kr_commit(b, &ctx);
 *	}
 * Reserve and commit pair up strictly (LIFO with nesting). Nothing but the buffer is touched: no locks, no
 * allocation, no wakeups. kr_reserve fails, and counts the record lost, when:
 *	-ENOBUFS  no sub-buffer to switch to: discard mode and the reader is behind, or (either mode) the
 *		  sub-buffer to reuse still waits for a commit of a writer this one interrupted   -> lost_full
 *	-E2BIG    the record cannot fit in an empty sub-buffer                                     -> lost_big
 *	-EBUSY    more than KR_MAX_NEST reservations are open on this buffer                       -> lost_nest
 * Overwrite mode also counts, in lost_wrap, the records of every delivered but unread sub-buffer the
 * writer takes back. -EINVAL (len < 4) is a caller bug and not counted.
 *
 * Reader (any CPU, one at a time per buffer; the caller serialises):
 *	while (kr_get_subbuf(b, &seq, &phys) == 0) {
 *		walk kr_subbuf_addr(b, phys) (ring_abi.h);
 *		kr_put_subbuf(b, seq);
 *	}
 * Invariant, checked by tests/unit/test_ring.c: records read + all lost counters == reserve attempts,
 * once the writers have stopped, kr_switch() has flushed and the reader has drained the buffer.
 */
#ifndef KINSTR_RING_H
#define KINSTR_RING_H

#include "port.h"
#include "ring_abi.h"

#define KR_MODE_DISCARD		0	/* drop new records while the reader is behind */
#define KR_MODE_OVERWRITE	1	/* flight recorder: drop the oldest unread sub-buffer */

#define KR_MAX_NEST		4	/* task, softirq, irq, NMI */
#define KR_MAX_SUBBUFS		256
#define KR_MIN_SUBBUF_SIZE	256
#define KR_MAX_SUBBUF_SIZE	(1u << 26)	/* keeps records per sub-buffer < 2^24 (commit encoding) */

struct kr_config {
	uint32_t size;		/* subbuf_size * num_subbufs, or 0; if num_subbufs is 0 it is size / subbuf_size */
	uint32_t subbuf_size;	/* power of two, KR_MIN_SUBBUF_SIZE..KR_MAX_SUBBUF_SIZE */
	uint32_t num_subbufs;	/* power of two, 2..KR_MAX_SUBBUFS */
	uint32_t mode;		/* KR_MODE_DISCARD or KR_MODE_OVERWRITE */
};

/*
 * ids[slot]: which physical sub-buffer a slot uses, which logical seq it was last opened for (tag), and its
 * state. Shared between the writer and the reader, changed only by cmpxchg or a release store:
 *	WRITING    opened for seq=tag; writers own it until its commit count is full
 *	DELIVERED  closed and fully committed: the reader may swap its spare in (-> READ); in overwrite mode
 *		   the writer may take it back for seq + num_subbufs (records counted in lost_wrap)
 *	READ       the reader took the data and left its spare here (content stale): the writer may reuse it
 */
#define KR_ID_PHYS_MASK		0xffffUL
#define KR_ID_STATE_SHIFT	16
#define KR_ID_TAG_SHIFT		18
#define KR_ID_TAG_MASK		((1UL << (64 - KR_ID_TAG_SHIFT)) - 1)
#define KR_ST_WRITING		0UL
#define KR_ST_DELIVERED		1UL
#define KR_ST_READ		2UL

/*
 * Commit counts: one per slot, cumulative over laps, written only by the owning CPU. Each commit adds the
 * bytes it closes plus KR_CC_RECORD per record, so one local_add_return tells the committer both whether the
 * sub-buffer is now full (the low 40 bits equal (lap + 1) * subbuf_size) and, by difference with the value
 * at the previous delivery of that slot, how many records it holds.
 */
#define KR_CC_RECORD		(1UL << 40)
#define KR_CC_BYTES_MASK	(KR_CC_RECORD - 1)

struct kr_buf {
	/* Writer side: the owning CPU only (kr_lost and the reader read some of it). */
	kr_local_t offset;			/* bytes reserved since init; offset % subbuf_size == 0: none open */
	kr_local_t nesting;			/* open reservations */
	kr_local_t lost_full, lost_wrap, lost_big, lost_nest;
	kr_local_t records;			/* records committed */
	char *mem;
	uint32_t sb_size, sb_order, n, n_order, mode, cpu;
	kr_local_t commit[KR_MAX_SUBBUFS];	/* see KR_CC_RECORD */
	unsigned long cc_delivered[KR_MAX_SUBBUFS];	/* commit[] value at the slot's last delivery */

	/* Shared: see KR_ID_*. */
	kr_shared_t ids[KR_MAX_SUBBUFS] KR_CACHELINE;

	/* Reader side: whoever currently reads (one at a time). */
	uint64_t consumed KR_CACHELINE;		/* next seq to read */
	uint64_t held_seq;
	uint32_t spare;				/* physical sub-buffer the reader owns */
	uint32_t held_phys;
	int held;
};

struct kr_reserve_ctx {
	uint64_t ts;		/* the record's timestamp, from the clock, read inside the reservation loop */
	void *data;		/* the record: len bytes, 8-byte aligned; bytes [0, 4) already hold len */
	uint32_t len;		/* as asked */
	/* private */
	uint32_t span;		/* bytes reserved: KR_RECORD_SPAN(len) */
	unsigned long seq;	/* logical sub-buffer */
};

struct kr_lost {
	uint64_t full, wrap, big, nest;	/* records lost by cause, see kr_reserve */
	uint64_t records;		/* records committed */
};

/* 0 for a bad config, else the bytes of buffer memory the caller must provide. */
size_t kr_buf_mem_size(const struct kr_config *cfg);
/* -EINVAL on a bad config. mem: kr_buf_mem_size(cfg) bytes, at least 8-byte aligned (page aligned to mmap). */
int kr_buf_init(struct kr_buf *b, const struct kr_config *cfg, void *mem, uint32_t cpu);

/* Slow paths (ring.c); not for callers. */
int kr_reserve_slow(struct kr_buf *b, struct kr_reserve_ctx *ctx, uint32_t len, uint64_t (*clock)(void));
void kr_close_full(struct kr_buf *b, unsigned long seq, uint64_t ts);
void kr_deliver(struct kr_buf *b, unsigned long seq, unsigned long cc);

static inline char *kr__subbuf(const struct kr_buf *b, unsigned long seq)
{
	unsigned long id = kr_shared_read(&b->ids[seq & (b->n - 1)]);

	return b->mem + ((id & KR_ID_PHYS_MASK) << b->sb_order);
}

/* Is the commit count cc (as just returned by the add) full for logical sub-buffer seq? */
static inline int kr__cc_full(const struct kr_buf *b, unsigned long seq, unsigned long cc)
{
	unsigned long want = ((seq >> b->n_order) + 1) << b->sb_order;

	return ((cc - want) & KR_CC_BYTES_MASK) == 0;
}

/*
 * Reserve len bytes (>= 4) for a record. clock() is called inside the retry loop, before the cmpxchg that
 * claims the space, so record order in a buffer is timestamp order (for a clock monotonic per CPU).
 * Static inline with clock a constant: the compiler calls it directly. Returns 0 or a negative errno
 * (see the top of this file); on error nothing is to be committed.
 */
static inline int kr_reserve(struct kr_buf *b, struct kr_reserve_ctx *ctx, uint32_t len, uint64_t (*clock)(void))
{
	unsigned long o, pos, end, span = ((unsigned long)len + KR_RECORD_ALIGN - 1) & ~(KR_RECORD_ALIGN - 1UL);
	uint64_t ts;

	if (unlikely(kr_local_inc_return(&b->nesting) > KR_MAX_NEST || len < KR_RECORD_MIN))
		return kr_reserve_slow(b, ctx, len, clock);
	o = kr_local_read(&b->offset);
	ts = clock();
	pos = o & (b->sb_size - 1);
	/* Slow path: no sub-buffer open (pos == 0), or the record does not fit in this one. */
	if (unlikely(pos == 0 || pos + span > b->sb_size))
		return kr_reserve_slow(b, ctx, len, clock);
	end = o + span;
	/* Fully ordered on the host, a compiler barrier in the kernel: nothing to order across CPUs here. */
	if (unlikely(kr_local_cmpxchg(&b->offset, o, end) != o))
		return kr_reserve_slow(b, ctx, len, clock);	/* an interrupt reserved first: retry there */
	ctx->ts = ts;
	ctx->len = len;
	ctx->span = (uint32_t)span;
	ctx->seq = o >> b->sb_order;
	/* ids[slot] cannot change under us: the slot is WRITING until our own commit lands. */
	ctx->data = kr__subbuf(b, ctx->seq) + pos;
	*(__u32 *)ctx->data = len;
	if (unlikely((end & (b->sb_size - 1)) == 0))
		kr_close_full(b, ctx->seq, ts);	/* we filled it exactly: we are its closer */
	return 0;
}

/*
 * Commit a reservation. Commits may complete out of order (an interrupt's record before the one it
 * interrupted); the sub-buffer is delivered by whichever commit makes its count full.
 */
static inline void kr_commit(struct kr_buf *b, struct kr_reserve_ctx *ctx)
{
	unsigned long cc;

	/*
	 * The add is a compiler barrier (port.h): the record's bytes are stored before it, as seen by any
	 * interrupt on this CPU that could deliver the sub-buffer. Publication to the reader's CPU is ordered
	 * by the release in kr_deliver.
	 */
	cc = kr_local_add_return(&b->commit[ctx->seq & (b->n - 1)], (long)(ctx->span + KR_CC_RECORD));
	kr_local_inc(&b->records);
	if (unlikely(kr__cc_full(b, ctx->seq, cc)))
		kr_deliver(b, ctx->seq, cc);
	kr_local_dec(&b->nesting);
}

/*
 * Close the open sub-buffer, even partly filled, so the reader can have it once its open reservations are
 * committed: the flush at stop and the periodic live flush. Runs on the owning CPU (it is just another
 * writer and may be interrupted by writers); the next record opens a new sub-buffer. No-op when none is
 * open. clock gives ts_end.
 */
void kr_switch(struct kr_buf *b, uint64_t (*clock)(void));

/*
 * Reader side. kr_get_subbuf hands out the oldest delivered sub-buffer not yet read (seq and the physical
 * index to read at kr_subbuf_addr), swapping the reader's spare in, so writers never write into it until
 * kr_put_subbuf. -EAGAIN: none delivered yet; -EBUSY: one is already held. In overwrite mode sequence
 * numbers may jump (the skipped ones were counted in lost_wrap). kr_put_subbuf: -EINVAL if seq is not the
 * one held.
 */
int kr_get_subbuf(struct kr_buf *b, uint64_t *seq, uint32_t *phys_index);
void *kr_subbuf_addr(struct kr_buf *b, uint32_t phys_index);
int kr_put_subbuf(struct kr_buf *b, uint64_t seq);

/* Current totals, from any CPU (each counter read once, not a consistent snapshot while writers run). */
void kr_lost(const struct kr_buf *b, struct kr_lost *out);

#endif
