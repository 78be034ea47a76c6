/* SPDX-License-Identifier: GPL-2.0 */
/* Sub-buffers of trace records as the module writes them, for the host tests of their readers. */
#ifndef KINSTR_TESTS_TRACE_RECS_H
#define KINSTR_TESTS_TRACE_RECS_H

#include <stdint.h>
#include <string.h>

#include <uapi/linux/kinstr.h>
#include <ring/ring_abi.h>

static unsigned char trec_buf[1 << 16];

static inline struct kr_subbuf_hdr *trec_hdr(void)
{
	struct kr_subbuf_hdr *h = (void *)trec_buf;

	memset(trec_buf, 0, sizeof(trec_buf));
	h->magic = KR_SUBBUF_MAGIC;
	h->hdr_size = sizeof(*h);
	h->subbuf_size = sizeof(trec_buf);
	return h;
}

static inline const unsigned char *trec_data(void)
{
	return trec_buf + sizeof(struct kr_subbuf_hdr);
}

/* Append a record of event ev at ts (pid, tid pid + 1, comm, one 8-byte value if val_n). */
static inline struct kinstr_trace_rec *trec_add(struct kr_subbuf_hdr *h, unsigned int ev, uint64_t ts, uint32_t pid,
						const char *comm, int val_n, uint64_t val)
{
	struct kinstr_trace_rec *r = (void *)(trec_buf + sizeof(*h) + h->data_size);
	uint32_t len = (uint32_t)sizeof(*r) + (val_n ? 8 : 0);

	memset(r, 0, len);
	r->len = len;
	r->event = (uint16_t)ev;
	r->ts = ts;
	r->pid = pid;
	r->tid = pid + 1;
	strncpy(r->comm, comm, sizeof(r->comm) - 1);
	if (val_n)
		memcpy(r + 1, &val, 8);
	h->data_size += KR_RECORD_SPAN(len);
	h->records++;
	return r;
}

#endif
