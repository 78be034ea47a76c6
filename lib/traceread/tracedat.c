// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A kinstr CTF trace as trace-cmd's trace.dat (file format version 6, trace-cmd.dat.v6(5)), for
 * trace-cmd report and KernelShark: each probe an event of system "kinstr" with a format file like
 * the kernel's (common fields, then the probe's values; strings as __data_loc), each CPU's events
 * in ring-buffer pages as the kernel lays them out (a page header, then 4-byte event headers with
 * 27-bit time deltas, time-extend events for longer gaps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinstr/ctf.h>
#include <kinstr/ctf_read.h>
#include <kinstr/tracedat.h>

#define PAGE 4096
#define PAGE_DATA (PAGE - 16)
#define EVENT_ID_BASE 1000
#define DELTA_BITS 27
#define TYPE_TIME_EXTEND 30
#define TYPE_LEN_MAX 28		/* larger payloads: type_len 0 and a length word */

struct cpu_pages {
	unsigned char *buf;	/* whole pages */
	size_t npages, cap;
	size_t used;		/* bytes of the last page's data */
	uint64_t last_ts;
	bool open;
};

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

static void put_u32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }
static void put_u64(FILE *f, uint64_t v) { fwrite(&v, 8, 1, f); }

/* An event name trace-cmd takes: [A-Za-z0-9_], the rest as '_' ("vfs_read%return" -> "vfs_read_return"). */
static void ident(char *out, size_t len, const char *in)
{
	size_t i;

	for (i = 0; i + 1 < len && in[i]; i++)
		out[i] = (in[i] >= 'a' && in[i] <= 'z') || (in[i] >= 'A' && in[i] <= 'Z') || (in[i] >= '0' && in[i] <= '9') ?
			 in[i] : '_';
	out[i] = 0;
}

static const unsigned int int_size[] = { 1, 2, 4, 8, 1, 2, 4, 8 };

/* The fixed part of an event's record: common fields (8 bytes), then each value (strings: a 4-byte data_loc). */
static size_t fixed_len(const struct kinstr_ctf_class *c)
{
	size_t n = 8;
	unsigned int i;

	for (i = 0; i < c->nfields; i++) {
		if (!strcmp(c->fields[i].name, "pid") || !strcmp(c->fields[i].name, "tid"))
			continue;	/* common_pid */
		n += c->fields[i].type <= KINSTR_CTF_S64 ? int_size[c->fields[i].type] : 4;
	}
	return n;
}

/* A value's printf conversion as libtraceevent applies it to the field's own size. */
static const char *print_conv(const struct kinstr_ctf_field *fd)
{
	bool wide = fd->type == KINSTR_CTF_U64 || fd->type == KINSTR_CTF_S64;

	if (fd->type > KINSTR_CTF_S64)
		return "%s";
	if (fd->hex)
		return wide ? "0x%llx" : "0x%x";
	if (fd->type >= KINSTR_CTF_S8)
		return wide ? "%lld" : "%d";
	return wide ? "%llu" : "%u";
}

static char *format_file(const struct kinstr_ctf_class *c, unsigned int id, size_t *len)
{
	char *text = NULL, name[256];
	size_t off = 8;
	unsigned int i;
	bool first = true;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	if (!c) {	/* an id the metadata skips: a format with no fields, no event of it can come */
		static const struct kinstr_ctf_class none = { .name = "unnamed" };

		c = &none;
	}
	ident(name, sizeof(name), c->name);
	fprintf(f, "name: %s\nID: %u\nformat:\n", name, id);
	fprintf(f, "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		   "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		   "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		   "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
	for (i = 0; i < c->nfields; i++) {
		const struct kinstr_ctf_field *fd = &c->fields[i];

		if (!strcmp(fd->name, "pid") || !strcmp(fd->name, "tid"))
			continue;
		if (fd->type <= KINSTR_CTF_S64) {
			static const char *const ty[] = { "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64" };

			fprintf(f, "\tfield:%s %s;\toffset:%zu;\tsize:%u;\tsigned:%d;\n", ty[fd->type], fd->name, off,
				int_size[fd->type], fd->type >= KINSTR_CTF_S8);
			off += int_size[fd->type];
		} else {
			fprintf(f, "\tfield:__data_loc char[] %s;\toffset:%zu;\tsize:4;\tsigned:1;\n", fd->name, off);
			off += 4;
		}
	}
	fprintf(f, "\nprint fmt: \"");
	for (i = 0; i < c->nfields; i++) {
		const struct kinstr_ctf_field *fd = &c->fields[i];

		if (!strcmp(fd->name, "pid") || !strcmp(fd->name, "tid"))
			continue;
		fprintf(f, "%s%s=%s", first ? "" : " ", fd->name, print_conv(fd));
		first = false;
	}
	fprintf(f, "\"");
	for (i = 0; i < c->nfields; i++) {
		const struct kinstr_ctf_field *fd = &c->fields[i];

		if (!strcmp(fd->name, "pid") || !strcmp(fd->name, "tid"))
			continue;
		if (fd->type > KINSTR_CTF_S64)
			fprintf(f, ", __get_str(%s)", fd->name);
		else
			fprintf(f, ", REC->%s", fd->name);
	}
	fprintf(f, "\n");
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

/* trace-cmd's pid -> comm map keeps one name a pid: the latest (a program's after its exec). */
struct pid_name {
	int32_t pid;
	char comm[32];
};

static int remember(struct pid_name **t, size_t *n, int32_t pid, const char *comm)
{
	struct pid_name *nt;
	size_t i;

	for (i = *n; i-- > 0;)
		if ((*t)[i].pid == pid) {
			snprintf((*t)[i].comm, sizeof((*t)[i].comm), "%s", comm);
			return 0;
		}
	if (!(*n & (*n + 1)) || !*t) {	/* grow at 0, 1, 3, 7, ... */
		nt = realloc(*t, (*n * 2 + 2) * sizeof(**t));
		if (!nt)
			return -ENOMEM;
		*t = nt;
	}
	(*t)[*n].pid = pid;
	snprintf((*t)[*n].comm, sizeof((*t)[*n].comm), "%s", comm);
	(*n)++;
	return 0;
}

static unsigned char *page_room(struct cpu_pages *p, size_t need, uint64_t ts)
{
	if (!p->open || p->used + need > PAGE_DATA) {
		unsigned char *pg;

		if (p->npages == p->cap) {
			unsigned char *nb = realloc(p->buf, (p->cap = p->cap ? p->cap * 2 : 16) * PAGE);

			if (!nb)
				return NULL;
			p->buf = nb;
		}
		pg = p->buf + p->npages++ * PAGE;
		memset(pg, 0, PAGE);
		memcpy(pg, &ts, 8);	/* the page's timestamp: its first event's deltas count from it */
		p->used = 0;
		p->last_ts = ts;
		p->open = true;
	}
	return p->buf + (p->npages - 1) * PAGE + 16 + p->used;
}

static void page_commit(struct cpu_pages *p, size_t n)
{
	uint64_t commit;

	p->used += n;
	commit = p->used;
	memcpy(p->buf + (p->npages - 1) * PAGE + 8, &commit, 8);
}

/* One record (payload of len bytes, a multiple of 4) at ts on p: a time extend first when the gap needs one. */
static int add_record(struct cpu_pages *p, const unsigned char *payload, size_t len, uint64_t ts)
{
	size_t need = 4 + len + (len > TYPE_LEN_MAX * 4 ? 4 : 0);
	uint64_t delta;
	unsigned char *at;
	uint32_t hdr;

	if (need > PAGE_DATA)
		return -E2BIG;
	at = page_room(p, need + 8, ts);
	if (!at)
		return -ENOMEM;
	delta = ts >= p->last_ts ? ts - p->last_ts : 0;
	if (delta >> DELTA_BITS) {
		uint32_t ext[2] = { TYPE_TIME_EXTEND | (uint32_t)((delta & ((1u << DELTA_BITS) - 1)) << 5),
				    (uint32_t)(delta >> DELTA_BITS) };

		memcpy(at, ext, 8);
		page_commit(p, 8);
		at += 8;
		delta = 0;
	}
	if (len <= TYPE_LEN_MAX * 4) {
		hdr = (uint32_t)(len / 4) | (uint32_t)(delta << 5);
		memcpy(at, &hdr, 4);
		memcpy(at + 4, payload, len);
	} else {
		uint32_t l = (uint32_t)len + 4;	/* the length word counts itself */

		hdr = (uint32_t)(delta << 5);
		memcpy(at, &hdr, 4);
		memcpy(at + 4, &l, 4);
		memcpy(at + 8, payload, len);
	}
	page_commit(p, need);
	p->last_ts = ts;
	return 0;
}

int kinstr_tracedat__from_ctf(const char *dir, const char *out, uint64_t *nevents, struct kinstr_why *why)
{
	struct kinstr_ctf_reader *r = kinstr_ctf_reader__open(dir, why);
	unsigned int ncls, ncpu = 0, i, j;
	struct cpu_pages *cpus = NULL;
	struct kinstr_ctf_event ev;
	unsigned char rec[PAGE];
	char *pids = NULL;
	size_t pids_len = 0;
	FILE *pidf = NULL, *f = NULL;
	struct pid_name *names = NULL;
	size_t nnames = 0;
	int ret = 0;
	long pos;

	*nevents = 0;
	if (!r)
		return -errno ? -errno : -EINVAL;
	ncls = kinstr_ctf_reader__class_cnt(r);
	for (i = 0; i < kinstr_ctf_reader__stream_cnt(r); i++)
		if (kinstr_ctf_reader__stream(r, i)->cpu + 1 > ncpu)
			ncpu = kinstr_ctf_reader__stream(r, i)->cpu + 1;
	cpus = calloc(ncpu ? ncpu : 1, sizeof(*cpus));
	pidf = open_memstream(&pids, &pids_len);
	if (!cpus || !pidf) {
		ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	while ((ret = kinstr_ctf_reader__next(r, &ev, why)) == 1) {
		const struct kinstr_ctf_class *c = kinstr_ctf_reader__class(r, ev.class_id);
		size_t fixed = fixed_len(c), var = fixed, off = 8;
		uint16_t type = (uint16_t)(EVENT_ID_BASE + ev.class_id);
		int32_t pid = 0;
		const char *comm = NULL;

		memset(rec, 0, sizeof(rec));
		memcpy(rec, &type, 2);
		for (j = 0; j < c->nfields; j++) {
			const struct kinstr_ctf_field *fd = &c->fields[j];

			if (!strcmp(fd->name, "tid")) {
				pid = (int32_t)ev.values[j].s;
				continue;
			}
			if (!strcmp(fd->name, "pid"))
				continue;
			if (fd->type <= KINSTR_CTF_S64) {
				memcpy(rec + off, &ev.values[j].u, int_size[fd->type]);
				off += int_size[fd->type];
			} else {
				size_t sl = strlen(ev.values[j].str) + 1;
				uint32_t loc;

				if (var + sl > sizeof(rec) - 128)
					sl = 1;	/* no room: an empty string rather than a record trace-cmd cannot read */
				loc = (uint32_t)(sl << 16) | (uint32_t)var;
				memcpy(rec + off, &loc, 4);
				memcpy(rec + var, sl > 1 ? ev.values[j].str : "", sl);
				rec[var + sl - 1] = 0;
				var += sl;
				off += 4;
				if (!strcmp(fd->name, "comm"))
					comm = ev.values[j].str;
			}
		}
		memcpy(rec + 4, &pid, 4);
		if (comm && pid && remember(&names, &nnames, pid, comm)) {
			ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
			goto out;
		}
		var = (var + 3) & ~(size_t)3;
		ret = add_record(&cpus[ev.cpu], rec, var, ev.ts);
		if (ret) {
			kinstr_why__fail(why, ret, "%s: an event of %s does not fit a page", dir, c->name);
			goto out;
		}
		(*nevents)++;
	}
	if (ret < 0)
		goto out;
	for (i = 0; i < nnames; i++)
		fprintf(pidf, "%d %s\n", names[i].pid, names[i].comm);
	if (fclose(pidf)) {
		pidf = NULL;
		ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	pidf = NULL;
	f = fopen(out, "we");
	if (!f) {
		ret = kinstr_why__fail(why, -errno, "%s: %s", out, strerror(errno));
		goto out;
	}
	fwrite("\027\010\104tracing6", 1, 11, f);
	fputc(0, f);
	fputc(0, f);		/* little endian */
	fputc(8, f);		/* long */
	put_u32(f, PAGE);
	fwrite("header_page", 1, 12, f);
	put_u64(f, sizeof(header_page) - 1);
	fwrite(header_page, 1, sizeof(header_page) - 1, f);
	fwrite("header_event", 1, 13, f);
	put_u64(f, sizeof(header_event) - 1);
	fwrite(header_event, 1, sizeof(header_event) - 1, f);
	put_u32(f, 0);		/* ftrace's own event formats: none */
	put_u32(f, 1);		/* one system: kinstr */
	fwrite("kinstr", 1, 7, f);
	put_u32(f, ncls);
	for (i = 0; i < ncls; i++) {
		size_t len;
		char *fmt = format_file(kinstr_ctf_reader__class(r, i), EVENT_ID_BASE + i, &len);

		if (!fmt) {
			ret = kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
			goto out;
		}
		put_u64(f, len);
		fwrite(fmt, 1, len, f);
		free(fmt);
	}
	put_u32(f, 0);		/* kallsyms */
	put_u32(f, 0);		/* trace_printk formats */
	put_u64(f, pids_len);	/* pid -> comm */
	fwrite(pids, 1, pids_len, f);
	put_u32(f, ncpu);
	fwrite("flyrecord", 1, 10, f);
	pos = ftell(f) + (long)ncpu * 16;
	pos = (pos + PAGE - 1) / PAGE * PAGE;
	for (i = 0; i < ncpu; i++) {
		put_u64(f, (uint64_t)pos);
		put_u64(f, (uint64_t)cpus[i].npages * PAGE);
		pos += (long)(cpus[i].npages * PAGE);
	}
	while (ftell(f) % PAGE)
		fputc(0, f);
	for (i = 0; i < ncpu; i++)
		fwrite(cpus[i].buf, PAGE, cpus[i].npages, f);
	if (ferror(f))
		ret = -EIO;
	ret = fclose(f) && !ret ? -errno : ret;
	f = NULL;
	if (ret)
		kinstr_why__fail(why, ret, "%s", strerror(-ret));
out:
	if (f)
		fclose(f);
	if (pidf)
		fclose(pidf);
	free(pids);
	free(names);
	for (i = 0; cpus && i < ncpu; i++)
		free(cpus[i].buf);
	free(cpus);
	kinstr_ctf_reader__close(r);
	return ret;
}
