/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The CTF layout kinstr writes (lib/trace/ctf.c) and reads back (lib/traceread/metadata.c, streams.c). */
#ifndef KINSTR_LIB_CTF_PRIV_H
#define KINSTR_LIB_CTF_PRIV_H

#include <stdint.h>
#include <string.h>

#define CTF_MAGIC		0xC1FC1FC1u
/* packet header: magic u32, uuid u8[16], stream_id u32 (every field byte-aligned, little-endian) */
#define CTF_HDR_SIZE		24
/* packet context: timestamp_begin, timestamp_end, content_size, packet_size, packet_seq_num,
 * events_discarded (u64 each), cpu_id (u32) */
#define CTF_CTX_SIZE		52
#define CTF_PKT_START		(CTF_HDR_SIZE + CTF_CTX_SIZE)
#define CTF_COMPACT_MAX_ID	30
#define CTF_EXTENDED_ID		31
#define CTF_COMPACT_TS_BITS	27
#define CTF_MAX_CPUS		65536
#define CTF_MAX_CHARS		4096
/*
 * A packet's last 4 bytes, in its padding (which CTF readers skip), hold zlib's CRC-32 of the
 * bytes before them: the metadata's env says so with packet_crc32 = "tail". Traces written
 * before it have no such key, and all-zero padding.
 */
#define CTF_CRC_ENV		"packet_crc32"
#define CTF_CRC_TAIL		"tail"
#define CTF_CRC_SIZE		4

static inline void ctf_put_le(uint8_t *p, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t ctf_get_le(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint32_t ctf_packet_crc(const uint8_t *pkt, size_t size);

static inline unsigned int ctf_int_bytes(int type)
{
	static const unsigned char sz[] = { 1, 2, 4, 8, 1, 2, 4, 8 };

	return type >= 0 && type < 8 ? sz[type] : 0;
}

static inline int ctf_is_ident(const char *s)
{
	if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

#endif
