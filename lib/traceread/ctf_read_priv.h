/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The CTF reader's insides, shared by metadata.c (the TSDL parser) and streams.c (the packets and events).
 * Nothing outside lib/traceread/ includes this.
 */
#ifndef KINSTR_LIB_TRACEREAD_CTF_READ_PRIV_H
#define KINSTR_LIB_TRACEREAD_CTF_READ_PRIV_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_read.h>
#include "lib/trace/ctf_priv.h"

#define MAX_METADATA	(16u << 20)
#define MAX_CLASSES	(1u << 20)
#define MAX_FIELDS	1024
#define MAX_STREAMS	CTF_MAX_CPUS

struct rclass {
	struct kinstr_ctf_class c;	/* c.name and c.fields owned */
	bool defined;
};

struct rstream {
	struct kinstr_ctf_stream_info info;
	const uint8_t *map;
	size_t size;
};

struct kinstr_ctf_reader {
	char *dir;
	char uuid_text[37];
	uint8_t uuid[16];
	char *clock_name;
	int64_t clock_offset;
	char **env;			/* key, value, key, value... */
	size_t nenv;
	struct rclass *classes;		/* by id */
	unsigned int nclasses;
	struct rstream *streams;	/* by cpu */
	unsigned int nstreams;
	union kinstr_ctf_value *values;
	char *scratch;			/* CHARS values, NUL-terminated */
	/* iteration */
	unsigned int cur;		/* stream */
	size_t pkt, pos, end;		/* packet offset, event offset, content end (bytes) */
	bool in_pkt;
	uint64_t clock, pkt_begin, pkt_end;	/* last event's time; the packet's timestamp_begin, _end */
	bool failed;
	bool crc;			/* packets end in a CRC-32 (env packet_crc32 = "tail") */
};

/* metadata.c */
void cr_free_fields(struct kinstr_ctf_field *f, unsigned int n);
int cr_parse_metadata(struct kinstr_ctf_reader *r, const char *text, size_t len, const char *path,
			  struct kinstr_why *why);


#endif
