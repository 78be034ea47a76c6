// SPDX-License-Identifier: GPL-2.0
/*
 * Ring buffer slow paths, init and reader side (ring.h). Builds in the kernel and on the host (port.h).
 */
#include "ring.h"

_Static_assert(sizeof(struct kr_subbuf_hdr) == KR_SUBBUF_HDR_SIZE, "kr_subbuf_hdr layout");
_Static_assert(KR_SUBBUF_HDR_SIZE % KR_RECORD_ALIGN == 0, "records stay aligned after the header");
_Static_assert(KR_MAX_SUBBUFS + 1 <= KR_ID_PHYS_MASK, "physical index fits in an id");

static inline unsigned long kr_id(unsigned long seq, unsigned long state, unsigned long phys)
{
	return (seq << KR_ID_TAG_SHIFT) | (state << KR_ID_STATE_SHIFT) | phys;
}

static inline unsigned long kr_id_state(unsigned long id)
{
	return (id >> KR_ID_STATE_SHIFT) & 3;
}

/* (tag of id) - seq, modulo the tag width, as a signed number. */
static inline long kr_id_tag_diff(unsigned long id, unsigned long seq)
{
	unsigned long d = ((id >> KR_ID_TAG_SHIFT) - seq) & KR_ID_TAG_MASK;

	return (d & (KR_ID_TAG_MASK ^ (KR_ID_TAG_MASK >> 1))) ? (long)(d | ~KR_ID_TAG_MASK) : (long)d;
}

static inline struct kr_subbuf_hdr *kr_hdr(const struct kr_buf *b, unsigned long seq)
{
	return (struct kr_subbuf_hdr *)kr__subbuf(b, seq);
}

static int kr_ilog2(uint32_t v)
{
	int r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static int kr_config_ok(const struct kr_config *cfg, uint32_t *num)
{
	uint32_t sb = cfg->subbuf_size, n = cfg->num_subbufs;

	if (sb < KR_MIN_SUBBUF_SIZE || sb > KR_MAX_SUBBUF_SIZE || (sb & (sb - 1)))
		return 0;
	if (n == 0)
		n = cfg->size / sb;
	if (n < 2 || n > KR_MAX_SUBBUFS || (n & (n - 1)))
		return 0;
	if (cfg->size && (uint64_t)cfg->size != (uint64_t)n * sb)
		return 0;
	if (cfg->mode != KR_MODE_DISCARD && cfg->mode != KR_MODE_OVERWRITE)
		return 0;
	*num = n;
	return 1;
}

size_t kr_buf_mem_size(const struct kr_config *cfg)
{
	uint32_t n;

	if (!kr_config_ok(cfg, &n))
		return 0;
	return ((size_t)n + 1) * cfg->subbuf_size;
}

int kr_buf_init(struct kr_buf *b, const struct kr_config *cfg, void *mem, uint32_t cpu)
{
	uint32_t n, i;

	if (!kr_config_ok(cfg, &n) || !mem || ((unsigned long)mem & (KR_RECORD_ALIGN - 1)))
		return -EINVAL;
	kr_local_set(&b->offset, 0);
	kr_local_set(&b->nesting, 0);
	kr_local_set(&b->lost_full, 0);
	kr_local_set(&b->lost_wrap, 0);
	kr_local_set(&b->lost_big, 0);
	kr_local_set(&b->lost_nest, 0);
	kr_local_set(&b->records, 0);
	b->mem = mem;
	b->sb_size = cfg->subbuf_size;
	b->sb_order = (uint32_t)kr_ilog2(cfg->subbuf_size);
	b->n = n;
	b->n_order = (uint32_t)kr_ilog2(n);
	b->mode = cfg->mode;
	b->cpu = cpu;
	for (i = 0; i < KR_MAX_SUBBUFS; i++) {
		kr_local_set(&b->commit[i], 0);
		b->cc_delivered[i] = 0;
		/* Slot i as if lap -1 had been read: free for seq i, using physical sub-buffer i. */
		kr_shared_set(&b->ids[i], kr_id((unsigned long)i - n, KR_ST_READ, i));
	}
	b->consumed = 0;
	b->held_seq = 0;
	b->spare = n;
	b->held_phys = 0;
	b->held = 0;
	return 0;
}

/*
 * Delivery: the commit that made seq's count full (cc) records the sub-buffer's record count and the lost
 * totals, then hands it to the reader. Only one commit can see the count full, and no writer can reopen the
 * slot before the state below says DELIVERED, so this runs once per seq and cc_delivered[] is ours.
 */
void kr_deliver(struct kr_buf *b, unsigned long seq, unsigned long cc)
{
	unsigned long slot = seq & (b->n - 1);
	struct kr_subbuf_hdr *h = kr_hdr(b, seq);
	unsigned long id = kr_shared_read(&b->ids[slot]);

	h->records = (__u32)((cc - b->cc_delivered[slot] - b->sb_size) >> 40);
	b->cc_delivered[slot] = cc;
	h->lost_full = (__u64)kr_local_read(&b->lost_full);
	h->lost_wrap = (__u64)kr_local_read(&b->lost_wrap);
	h->lost_big = (__u64)kr_local_read(&b->lost_big);
	h->lost_nest = (__u64)kr_local_read(&b->lost_nest);
	/*
	 * Release: orders every store into the sub-buffer (header and records, all made on this CPU, before
	 * this in program order or by interrupts that returned) before the state change that lets the reader's
	 * cmpxchg in kr_get_subbuf take it.
	 */
	kr_shared_set_release(&b->ids[slot], kr_id(seq, KR_ST_DELIVERED, id & KR_ID_PHYS_MASK));
}

/* The sub-buffer seq ends exactly at its end: the reserver that filled it records how it was closed. */
void kr_close_full(struct kr_buf *b, unsigned long seq, uint64_t ts)
{
	struct kr_subbuf_hdr *h = kr_hdr(b, seq);

	h->data_size = b->sb_size - KR_SUBBUF_HDR_SIZE;
	h->ts_end = ts;
}

/*
 * Close seq, whose used bytes end at pos (< sb_size): record how, then commit the padding. The header stores
 * come before the commit (a compiler barrier, port.h) that may deliver the sub-buffer.
 */
static void kr_close_padded(struct kr_buf *b, unsigned long seq, unsigned long pos, uint64_t ts)
{
	struct kr_subbuf_hdr *h = kr_hdr(b, seq);
	unsigned long cc;

	h->data_size = (__u32)(pos - KR_SUBBUF_HDR_SIZE);
	h->ts_end = ts;
	cc = kr_local_add_return(&b->commit[seq & (b->n - 1)], (long)(b->sb_size - pos));
	if (kr__cc_full(b, seq, cc))
		kr_deliver(b, seq, cc);
}

/*
 * Make slot seq % n writable for seq before the offset moves into seq. 0: it is (now, or already was for seq
 * by a writer we interrupted before its offset cmpxchg); -ENOBUFS: the slot's previous lap is still being
 * written (a writer we interrupted has not committed) or, in discard mode, not read yet.
 */
static int kr_acquire(struct kr_buf *b, unsigned long seq)
{
	kr_shared_t *ids = &b->ids[seq & (b->n - 1)];
	unsigned long id, st;
	uint32_t recs;

	for (;;) {
		id = kr_shared_read(ids);
		if (kr_id_tag_diff(id, seq) == 0)
			return 0;
		if (kr_id_tag_diff(id, seq - b->n) != 0)
			return -ENOBUFS;	/* the offset moved on since our caller read it */
		st = kr_id_state(id);
		if (st == KR_ST_WRITING || (st == KR_ST_DELIVERED && b->mode == KR_MODE_DISCARD))
			return -ENOBUFS;
		/*
		 * A DELIVERED sub-buffer's header is immutable until someone wins the cmpxchg below, so read its
		 * record count now: once we have won, writers that interrupt us may reopen it (the tag says seq)
		 * and overwrite the header before we get to read it.
		 */
		recs = st == KR_ST_DELIVERED ?
			((const struct kr_subbuf_hdr *)(b->mem + ((id & KR_ID_PHYS_MASK) << b->sb_order)))->records : 0;
		/*
		 * Fully ordered cmpxchg, racing the reader's swap of a DELIVERED slot: exactly one of us wins it.
		 * Also orders the reader's reads of a spare it left here (its cmpxchg) before our writes into it.
		 */
		if (kr_shared_cmpxchg(ids, id, kr_id(seq, KR_ST_WRITING, id & KR_ID_PHYS_MASK)) != id)
			continue;
		if (recs)
			kr_local_add(&b->lost_wrap, (long)recs);	/* overwrite: the reader never gets them */
		return 0;
	}
}

int kr_reserve_slow(struct kr_buf *b, struct kr_reserve_ctx *ctx, uint32_t len, uint64_t (*clock)(void))
{
	unsigned long span = ((unsigned long)len + KR_RECORD_ALIGN - 1) & ~(KR_RECORD_ALIGN - 1UL);
	unsigned long sbmask = b->sb_size - 1, o, pos, next = 0, start, end;
	int close_old, open_new;
	uint64_t ts;

	if (kr_local_read(&b->nesting) > KR_MAX_NEST) {
		kr_local_inc(&b->lost_nest);
		kr_local_dec(&b->nesting);
		return -EBUSY;
	}
	if (len < KR_RECORD_MIN) {
		kr_local_dec(&b->nesting);
		return -EINVAL;
	}
	if (span > b->sb_size - KR_SUBBUF_HDR_SIZE) {
		kr_local_inc(&b->lost_big);
		kr_local_dec(&b->nesting);
		return -E2BIG;
	}
	for (;;) {
		o = kr_local_read(&b->offset);
		ts = clock();
		pos = o & sbmask;
		close_old = open_new = 0;
		if (pos != 0 && pos + span <= b->sb_size) {
			start = o;
		} else {
			close_old = pos != 0;
			next = close_old ? (o | sbmask) + 1 : o;
			if (kr_acquire(b, next >> b->sb_order)) {
				if ((unsigned long)kr_local_read(&b->offset) != o)
					continue;	/* an interrupt moved on: look again */
				kr_local_inc(&b->lost_full);
				kr_local_dec(&b->nesting);
				return -ENOBUFS;
			}
			open_new = 1;
			start = next + KR_SUBBUF_HDR_SIZE;
		}
		end = start + span;
		/* Claims [o, end); kr_acquire's cmpxchg above already ordered the slot claim before it. */
		if (kr_local_cmpxchg(&b->offset, o, end) == o)
			break;
	}
	if (close_old)
		kr_close_padded(b, o >> b->sb_order, pos, ts);
	if (open_new) {
		unsigned long seq = next >> b->sb_order, cc;
		struct kr_subbuf_hdr *h = kr_hdr(b, seq);

		/*
		 * Only the opener's fields: writers that interrupted us may already have filled and closed this
		 * sub-buffer (data_size, ts_end); it cannot be delivered before the header commit below.
		 */
		h->magic = KR_SUBBUF_MAGIC;
		h->version = KR_SUBBUF_VERSION;
		h->hdr_size = KR_SUBBUF_HDR_SIZE;
		h->cpu = b->cpu;
		h->subbuf_size = b->sb_size;
		h->seq = seq;
		h->ts_begin = ts;
		cc = kr_local_add_return(&b->commit[seq & (b->n - 1)], KR_SUBBUF_HDR_SIZE);
		if (kr__cc_full(b, seq, cc))
			kr_deliver(b, seq, cc);
	}
	ctx->ts = ts;
	ctx->len = len;
	ctx->span = (uint32_t)span;
	ctx->seq = start >> b->sb_order;
	ctx->data = kr__subbuf(b, ctx->seq) + (start & sbmask);
	*(__u32 *)ctx->data = len;
	if ((end & sbmask) == 0)
		kr_close_full(b, ctx->seq, ts);
	return 0;
}

void kr_switch(struct kr_buf *b, uint64_t (*clock)(void))
{
	unsigned long sbmask = b->sb_size - 1, o, pos;
	uint64_t ts;

	for (;;) {
		o = kr_local_read(&b->offset);
		ts = clock();
		pos = o & sbmask;
		if (pos == 0)
			return;		/* none open */
		/* Claims the rest of the sub-buffer; ordering as in kr_reserve (compiler barrier only). */
		if (kr_local_cmpxchg(&b->offset, o, (o | sbmask) + 1) == o)
			break;
	}
	kr_close_padded(b, o >> b->sb_order, pos, ts);
}

int kr_get_subbuf(struct kr_buf *b, uint64_t *seq, uint32_t *phys_index)
{
	unsigned long c, id, tries;
	long d;

	if (b->held)
		return -EBUSY;
	for (tries = 0; tries < 4UL * b->n; tries++) {
		c = (unsigned long)b->consumed;
		id = kr_shared_read(&b->ids[c & (b->n - 1)]);
		d = kr_id_tag_diff(id, c);
		if (d < 0)
			return -EAGAIN;		/* not opened yet */
		if (d > 0) {
			/*
			 * Overwrite mode: the writer reopened this slot for c + d, so it has opened every seq up to
			 * there and taken back (lost_wrap) all before c + d - n + 1 that we had not read.
			 */
			c = d > (long)b->n - 1 ? c + (unsigned long)d - b->n + 1 : c + 1;
			b->consumed = c;
			continue;
		}
		if (kr_id_state(id) != KR_ST_DELIVERED)
			return -EAGAIN;		/* still being written */
		/*
		 * Fully ordered: our later reads of the sub-buffer come after the writer's release in kr_deliver
		 * (we read the value it stored), and our earlier reads of the spare come before a writer can
		 * acquire it (kr_acquire reads the value we store).
		 */
		if (kr_shared_cmpxchg(&b->ids[c & (b->n - 1)], id, kr_id(c, KR_ST_READ, b->spare)) != id)
			continue;	/* the writer took it back (overwrite): look again */
		b->held = 1;
		b->held_seq = c;
		b->held_phys = (uint32_t)(id & KR_ID_PHYS_MASK);
		*seq = c;
		*phys_index = b->held_phys;
		return 0;
	}
	return -EAGAIN;
}

void *kr_subbuf_addr(struct kr_buf *b, uint32_t phys_index)
{
	if (phys_index > b->n)
		return NULL;
	return b->mem + ((unsigned long)phys_index << b->sb_order);
}

int kr_put_subbuf(struct kr_buf *b, uint64_t seq)
{
	if (!b->held || seq != b->held_seq)
		return -EINVAL;
	/* The writer gets it back as our spare through the next kr_get_subbuf's cmpxchg. */
	b->spare = b->held_phys;
	b->held = 0;
	b->consumed = seq + 1;
	return 0;
}

void kr_lost(const struct kr_buf *b, struct kr_lost *out)
{
	out->full = (uint64_t)kr_local_read(&b->lost_full);
	out->wrap = (uint64_t)kr_local_read(&b->lost_wrap);
	out->big = (uint64_t)kr_local_read(&b->lost_big);
	out->nest = (uint64_t)kr_local_read(&b->lost_nest);
	out->records = (uint64_t)kr_local_read(&b->records);
}
