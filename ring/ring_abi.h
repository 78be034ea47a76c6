/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * What user space sees of a ring buffer through mmap: (num_subbufs + 1) physical sub-buffers of subbuf_size
 * bytes each; the reader is handed one physical index at a time (get/put sub-buffer).
 *
 * Every delivered sub-buffer starts with struct kr_subbuf_hdr. Records follow it, from offset
 * KR_SUBBUF_HDR_SIZE to KR_SUBBUF_HDR_SIZE + data_size; the bytes after that are padding (undefined).
 *
 * Records: every record starts at an 8-byte aligned offset with a __u32 holding the record's length in bytes,
 * counting that __u32 itself (>= 4). The ring writes it; the caller writes the rest. The next record starts
 * at the current one's offset + KR_RECORD_SPAN(length). So a reader walks a sub-buffer like this:
 *
 *	for (off = 0; off < h->data_size; off += KR_RECORD_SPAN(len)) {
 *		len = *(const __u32 *)(base + KR_SUBBUF_HDR_SIZE + off);
 *		...
 *	}
 */
#ifndef KINSTR_RING_ABI_H
#define KINSTR_RING_ABI_H

#include <linux/types.h>

#define KR_SUBBUF_MAGIC		0x6b726e67u	/* "krng" */
#define KR_SUBBUF_VERSION	1
#define KR_RECORD_ALIGN		8
#define KR_RECORD_MIN		4		/* the length word alone */
#define KR_RECORD_SPAN(len)	(((len) + (KR_RECORD_ALIGN - 1)) & ~(__u32)(KR_RECORD_ALIGN - 1))

struct kr_subbuf_hdr {
	__u32 magic;		/* KR_SUBBUF_MAGIC */
	__u16 version;		/* KR_SUBBUF_VERSION */
	__u16 hdr_size;		/* sizeof(struct kr_subbuf_hdr): records start here */
	__u32 cpu;		/* the buffer's cpu (kr_buf_init) */
	__u32 subbuf_size;	/* bytes, header included */
	__u64 seq;		/* logical sub-buffer number: 0, 1, 2, ... per buffer; a gap = sub-buffers lost */
	__u64 ts_begin;		/* clock when the sub-buffer was opened (<= every record's timestamp) */
	__u64 ts_end;		/* clock when it was closed (>= every record's timestamp) */
	__u32 data_size;	/* bytes of records after the header */
	__u32 records;		/* records in this sub-buffer */
	/* Running totals for the whole buffer when this sub-buffer was delivered (see struct kr_lost). */
	__u64 lost_full;
	__u64 lost_wrap;
	__u64 lost_big;
	__u64 lost_nest;
};

#define KR_SUBBUF_HDR_SIZE	80

#endif
