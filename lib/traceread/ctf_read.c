// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Reader of the CTF 1.8 traces lib/trace/ctf.c writes. The metadata parser knows the subset kinstr
 * emits (any whitespace, comments and statement order): the trace, env, clock and stream blocks,
 * the packet context and event header structs by their member names, and event classes whose
 * fields are 8..64-bit byte-aligned integers, UTF-8 char arrays and strings. Every packet is
 * checked when the trace is opened; events are decoded by kinstr_ctf_reader__next(), which never
 * reads past a packet's content.
 */
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

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* ---- metadata ---- */

enum tok_kind { T_END, T_IDENT, T_NUM, T_STR, T_PUNCT };

struct tok {
	enum tok_kind kind;
	const char *s;		/* into the text */
	size_t len;
};

struct lexer {
	const char *p, *end;
	struct tok t;		/* current token */
	bool bad;
};

static void next_tok(struct lexer *lx)
{
	const char *p = lx->p;

	for (;;) {
		while (p < lx->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p + 1 < lx->end && p[0] == '/' && p[1] == '*') {
			const char *e = p + 2;

			while (e + 1 < lx->end && !(e[0] == '*' && e[1] == '/'))
				e++;
			if (e + 1 >= lx->end) {
				lx->bad = true;
				p = lx->end;
				break;
			}
			p = e + 2;
			continue;
		}
		if (p + 1 < lx->end && p[0] == '/' && p[1] == '/') {
			while (p < lx->end && *p != '\n')
				p++;
			continue;
		}
		break;
	}
	lx->t.s = p;
	lx->t.len = 0;
	if (p >= lx->end) {
		lx->t.kind = T_END;
	} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
		const char *e = p;

		while (e < lx->end && ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
				       (*e >= '0' && *e <= '9') || *e == '_'))
			e++;
		lx->t.kind = T_IDENT;
		lx->t.len = e - p;
	} else if ((*p >= '0' && *p <= '9') || (*p == '-' && p + 1 < lx->end && p[1] >= '0' && p[1] <= '9')) {
		const char *e = p + 1;

		while (e < lx->end && ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f') ||
				       (*e >= 'A' && *e <= 'F') || *e == 'x' || *e == 'X'))
			e++;
		lx->t.kind = T_NUM;
		lx->t.len = e - p;
	} else if (*p == '"') {
		const char *e = p + 1;

		while (e < lx->end && *e != '"') {
			if (*e == '\\')
				e++;
			e++;
		}
		if (e >= lx->end) {
			lx->bad = true;
			lx->t.kind = T_END;
			lx->p = lx->end;
			return;
		}
		lx->t.kind = T_STR;
		lx->t.len = e + 1 - p;
	} else {
		lx->t.kind = T_PUNCT;
		lx->t.len = 1;
		if (p + 1 < lx->end && p[0] == ':' && p[1] == '=')
			lx->t.len = 2;
		else if (p + 2 < lx->end && !strncmp(p, "...", 3))
			lx->t.len = 3;
	}
	lx->p = p + lx->t.len;
}

static bool is(const struct lexer *lx, const char *s)
{
	return lx->t.kind != T_END && lx->t.len == strlen(s) && !memcmp(lx->t.s, s, lx->t.len);
}

static bool accept(struct lexer *lx, const char *s)
{
	if (!is(lx, s))
		return false;
	next_tok(lx);
	return true;
}

static bool expect(struct lexer *lx, const char *s)
{
	if (accept(lx, s))
		return true;
	lx->bad = true;
	return false;
}

/* The current token as a C string (strings unquoted and unescaped). NULL on ENOMEM. */
static char *tok_dup(const struct tok *t)
{
	char *s, *o;
	size_t i;

	if (t->kind != T_STR)
		return strndup(t->s, t->len);
	s = o = malloc(t->len);
	if (!s)
		return NULL;
	for (i = 1; i + 1 < t->len; i++) {
		if (t->s[i] == '\\' && i + 2 < t->len)
			i++;
		*o++ = t->s[i];
	}
	*o = 0;
	return s;
}

static bool tok_u64(const struct tok *t, uint64_t *v)
{
	char buf[32], *end;

	if (t->kind != T_NUM || t->len >= sizeof(buf) || t->s[0] == '-')
		return false;
	memcpy(buf, t->s, t->len);
	buf[t->len] = 0;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return !errno && !*end;
}

static bool tok_s64(const struct tok *t, int64_t *v)
{
	char buf[32], *end;

	if (t->kind != T_NUM || t->len >= sizeof(buf))
		return false;
	memcpy(buf, t->s, t->len);
	buf[t->len] = 0;
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return !errno && !*end;
}

/* Skip to just after the ';' that ends the statement (balanced braces, brackets, parens). */
static void skip_stmt(struct lexer *lx)
{
	int depth = 0;

	while (lx->t.kind != T_END) {
		if (lx->t.kind == T_PUNCT && (is(lx, "{") || is(lx, "(") || is(lx, "[")))
			depth++;
		else if (lx->t.kind == T_PUNCT && (is(lx, "}") || is(lx, ")") || is(lx, "]")))
			depth--;
		else if (depth <= 0 && is(lx, ";")) {
			next_tok(lx);
			return;
		}
		if (depth < 0) {
			lx->bad = true;
			return;
		}
		next_tok(lx);
	}
	lx->bad = true;
}

/*
 * A struct body "{ decl; decl; ... }": the member names in order, joined by spaces, into names.
 * Each declaration's name is its last identifier at depth 0, before an optional [N].
 */
static void struct_member_names(struct lexer *lx, char *names, size_t size)
{
	size_t used = 0;

	names[0] = 0;
	if (!expect(lx, "{"))
		return;
	while (!lx->bad && !is(lx, "}")) {
		struct tok last = { 0 };
		int depth = 0;

		while (lx->t.kind != T_END && !(depth == 0 && is(lx, ";"))) {
			if (is(lx, "{") || is(lx, "[") || is(lx, "<"))
				depth++;
			else if (is(lx, "}") || is(lx, "]") || is(lx, ">"))
				depth--;
			else if (depth == 0 && lx->t.kind == T_IDENT)
				last = lx->t;
			if (depth < 0)
				break;
			next_tok(lx);
		}
		if (!expect(lx, ";") || last.kind != T_IDENT || used + last.len + 2 > size) {
			lx->bad = true;
			return;
		}
		if (used)
			names[used++] = ' ';
		memcpy(names + used, last.s, last.len);
		used += last.len;
		names[used] = 0;
	}
	expect(lx, "}");
}

struct meta {
	struct kinstr_ctf_reader *r;
	bool trace, clock, stream, ctx_ok, hdr_ok, le;
	uint64_t major, minor;
	char *fail_why;		/* static text */
};

static const char CTX_NAMES[] = "timestamp_begin timestamp_end content_size packet_size packet_seq_num "
				"events_discarded cpu_id";
static const char HDR_NAMES[] = "id v";

static bool parse_field(struct lexer *lx, struct kinstr_ctf_field *f)
{
	uint64_t size = 0, align = 8, sign = 0, base = 10, n;
	bool utf8 = false, integer = false;
	char *name;

	memset(f, 0, sizeof(*f));
	if (accept(lx, "string")) {
		f->type = KINSTR_CTF_STRING;
		if (accept(lx, "{")) {
			while (!lx->bad && !is(lx, "}"))
				skip_stmt(lx);
			expect(lx, "}");
		}
	} else if (accept(lx, "integer")) {
		integer = true;
		expect(lx, "{");
		while (!lx->bad && lx->t.kind == T_IDENT) {
			struct tok key = lx->t;

			next_tok(lx);
			expect(lx, "=");
			if (key.len == 4 && !memcmp(key.s, "size", 4))
				lx->bad |= !tok_u64(&lx->t, &size);
			else if (key.len == 5 && !memcmp(key.s, "align", 5))
				lx->bad |= !tok_u64(&lx->t, &align);
			else if (key.len == 4 && !memcmp(key.s, "base", 4))
				lx->bad |= !tok_u64(&lx->t, &base);
			else if (key.len == 6 && !memcmp(key.s, "signed", 6))
				sign = is(lx, "1") || is(lx, "true");
			else if (key.len == 8 && !memcmp(key.s, "encoding", 8))
				utf8 = is(lx, "UTF8") || is(lx, "ASCII");
			else if (key.len == 10 && !memcmp(key.s, "byte_order", 10))
				lx->bad |= !(is(lx, "le") || is(lx, "native"));
			else
				lx->bad = true;
			next_tok(lx);
			expect(lx, ";");
		}
		expect(lx, "}");
	} else {
		static const char *const alias[] = { "uint8_t", "uint16_t", "uint32_t", "uint64_t" };
		unsigned int i;

		for (i = 0; i < 4; i++)
			if (is(lx, alias[i]))
				break;
		if (i == 4)
			return false;
		integer = true;
		size = 8u << i;
		next_tok(lx);
	}
	if (lx->bad || lx->t.kind != T_IDENT)
		return false;
	name = tok_dup(&lx->t);
	if (!name)
		return false;
	if (name[0] == '_' && name[1])	/* CTF's keyword-escaping underscore */
		memmove(name, name + 1, strlen(name));
	f->name = name;
	next_tok(lx);
	if (accept(lx, "[")) {
		if (!integer || size != 8 || !utf8 || !tok_u64(&lx->t, &n) || n < 1 || n > CTF_MAX_CHARS)
			return false;
		next_tok(lx);
		if (!accept(lx, "]"))
			return false;
		f->type = KINSTR_CTF_CHARS;
		f->len = n;
	} else if (integer) {
		if (align != 8 || utf8 || (size != 8 && size != 16 && size != 32 && size != 64))
			return false;
		f->type = (sign ? KINSTR_CTF_S8 : KINSTR_CTF_U8) + (size == 8 ? 0 : size == 16 ? 1 : size == 32 ? 2 : 3);
		f->hex = base == 16;
	}
	return accept(lx, ";");
}

static void free_fields(struct kinstr_ctf_field *f, unsigned int n)
{
	unsigned int i;

	for (i = 0; f && i < n; i++)
		free((char *)f[i].name);
	free(f);
}

static bool parse_event(struct lexer *lx, struct meta *m)
{
	struct kinstr_ctf_reader *r = m->r;
	struct kinstr_ctf_field *fields = NULL;
	unsigned int nfields = 0;
	char *name = NULL;
	uint64_t id = UINT64_MAX, sid = 0;
	bool have_fields = false;

	while (!lx->bad && !is(lx, "}")) {
		if (accept(lx, "name")) {
			expect(lx, "=");
			if (lx->t.kind != T_STR || name)
				goto bad;
			name = tok_dup(&lx->t);
			if (!name)
				goto bad;
			next_tok(lx);
			expect(lx, ";");
		} else if (accept(lx, "id")) {
			expect(lx, "=");
			if (!tok_u64(&lx->t, &id))
				goto bad;
			next_tok(lx);
			expect(lx, ";");
		} else if (accept(lx, "stream_id")) {
			expect(lx, "=");
			if (!tok_u64(&lx->t, &sid) || sid != 0)
				goto bad;
			next_tok(lx);
			expect(lx, ";");
		} else if (accept(lx, "fields")) {
			if (have_fields || !expect(lx, ":=") || !expect(lx, "struct") || !expect(lx, "{"))
				goto bad;
			have_fields = true;
			while (!lx->bad && !is(lx, "}")) {
				struct kinstr_ctf_field *nf;
				unsigned int j;

				if (nfields >= MAX_FIELDS)
					goto bad;
				nf = realloc(fields, (nfields + 1) * sizeof(*nf));
				if (!nf)
					goto bad;
				fields = nf;
				if (!parse_field(lx, &fields[nfields])) {
					free((char *)fields[nfields].name);
					goto bad;
				}
				for (j = 0; j < nfields; j++)
					if (!strcmp(fields[j].name, fields[nfields].name))
						break;
				nfields++;
				if (j < nfields - 1)
					goto bad;
			}
			expect(lx, "}");
			expect(lx, ";");
		} else {
			skip_stmt(lx);	/* loglevel, model.emf.uri... */
		}
	}
	if (lx->bad || !name || id >= MAX_CLASSES)
		goto bad;
	if (id >= r->nclasses) {
		struct rclass *nc = realloc(r->classes, (id + 1) * sizeof(*nc));

		if (!nc)
			goto bad;
		memset(nc + r->nclasses, 0, (id + 1 - r->nclasses) * sizeof(*nc));
		r->classes = nc;
		r->nclasses = id + 1;
	}
	if (r->classes[id].defined) {
		m->fail_why = "two event classes have one id";
		goto bad;
	}
	r->classes[id].defined = true;
	r->classes[id].c.name = name;
	r->classes[id].c.id = id;
	r->classes[id].c.fields = fields;
	r->classes[id].c.nfields = nfields;
	return true;
bad:
	free(name);
	free_fields(fields, nfields);
	lx->bad = true;
	return false;
}

static void parse_env(struct lexer *lx, struct kinstr_ctf_reader *r)
{
	while (!lx->bad && lx->t.kind == T_IDENT) {
		char *key = tok_dup(&lx->t), *val, **ne;

		next_tok(lx);
		expect(lx, "=");
		val = (lx->t.kind == T_STR || lx->t.kind == T_NUM) ? tok_dup(&lx->t) : NULL;
		next_tok(lx);
		expect(lx, ";");
		ne = realloc(r->env, (r->nenv + 2) * sizeof(*ne));
		if (!key || !val || !ne || r->nenv >= 2048) {
			free(key);
			free(val);
			if (ne)
				r->env = ne;
			lx->bad = true;
			return;
		}
		r->env = ne;
		r->env[r->nenv++] = key;
		r->env[r->nenv++] = val;
	}
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool parse_uuid(const char *s, uint8_t *u)
{
	int i, n = 0;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
			continue;
		}
		if (hexval(s[i]) < 0 || hexval(s[i + 1]) < 0)
			return false;
		u[n++] = hexval(s[i]) << 4 | hexval(s[i + 1]);
		i++;
	}
	return n == 16;
}

/* key = value; statements of trace, clock and stream blocks, typed ones := struct ... ; */
static void parse_block(struct lexer *lx, struct meta *m, const char *kind)
{
	struct kinstr_ctf_reader *r = m->r;
	int64_t off_s = 0, off = 0;
	uint64_t freq = 1000000000, u;

	while (!lx->bad && !is(lx, "}")) {
		char key[64];
		size_t kl = 0;

		/* a dotted key: packet.header, event.header... */
		while (lx->t.kind == T_IDENT || is(lx, ".")) {
			if (kl + lx->t.len + 1 > sizeof(key)) {
				lx->bad = true;
				return;
			}
			memcpy(key + kl, lx->t.s, lx->t.len);
			kl += lx->t.len;
			next_tok(lx);
		}
		key[kl] = 0;
		if (!kl) {
			lx->bad = true;
			return;
		}
		if (accept(lx, ":=")) {
			char names[512];

			if (!expect(lx, "struct"))
				return;
			if (is(lx, "{")) {
				struct_member_names(lx, names, sizeof(names));
				if (!strcmp(kind, "trace") && !strcmp(key, "packet.header") &&
				    strcmp(names, "magic uuid stream_id"))
					m->fail_why = "packet header is not kinstr's";
			} else if (lx->t.kind == T_IDENT) {
				if (!strcmp(key, "packet.context") && !is(lx, "packet_context"))
					m->fail_why = "packet context is not kinstr's";
				if (!strcmp(key, "event.header") && !is(lx, "event_header_compact"))
					m->fail_why = "event header is not kinstr's";
				next_tok(lx);
			}
			if (accept(lx, "align")) {
				expect(lx, "(");
				next_tok(lx);
				expect(lx, ")");
			}
			expect(lx, ";");
			continue;
		}
		expect(lx, "=");
		if (lx->bad)
			return;
		if (!strcmp(kind, "trace")) {
			if (!strcmp(key, "major"))
				lx->bad |= !tok_u64(&lx->t, &m->major);
			else if (!strcmp(key, "minor"))
				lx->bad |= !tok_u64(&lx->t, &m->minor);
			else if (!strcmp(key, "byte_order"))
				m->le = is(lx, "le");
			else if (!strcmp(key, "uuid")) {
				char *s = tok_dup(&lx->t);

				if (!s || lx->t.kind != T_STR || !parse_uuid(s, r->uuid))
					lx->bad = true;
				else
					memcpy(r->uuid_text, s, 37);
				free(s);
			}
		} else if (!strcmp(kind, "clock")) {
			if (!strcmp(key, "name") && !r->clock_name)
				r->clock_name = tok_dup(&lx->t);
			else if (!strcmp(key, "freq"))
				lx->bad |= !tok_u64(&lx->t, &freq);
			else if (!strcmp(key, "offset_s"))
				lx->bad |= !tok_s64(&lx->t, &off_s);
			else if (!strcmp(key, "offset"))
				lx->bad |= !tok_s64(&lx->t, &off);
		} else if (!strcmp(kind, "stream")) {
			if (!strcmp(key, "id") && (!tok_u64(&lx->t, &u) || u != 0))
				m->fail_why = "more than one stream class";
		}
		next_tok(lx);
		expect(lx, ";");
	}
	if (!strcmp(kind, "clock")) {
		if (freq != 1000000000 || off_s > INT64_MAX / 2000000000 || off_s < INT64_MIN / 2000000000 ||
		    off > 4000000000000000000ll || off < -4000000000000000000ll)
			m->fail_why = "the clock does not count nanoseconds";
		else	/* only in range: the sum of out-of-range values would overflow */
			r->clock_offset = off_s * 1000000000 + off;
	}
}

static int parse_metadata(struct kinstr_ctf_reader *r, const char *text, size_t len, const char *path,
			  char *err, size_t errlen)
{
	struct lexer lx = { .p = text, .end = text + len };
	struct meta m = { .r = r };
	static const char magic[] = "/* CTF 1.8";

	if (len < sizeof(magic) - 1 || memcmp(text, magic, sizeof(magic) - 1) || memchr(text, 0, len))
		return fail(err, errlen, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read (no '/* CTF 1.8 */' text header)",
			    path);
	next_tok(&lx);
	while (!lx.bad && lx.t.kind != T_END && !m.fail_why) {
		if (accept(&lx, "typealias")) {
			skip_stmt(&lx);
		} else if (accept(&lx, "struct")) {
			char names[512];
			bool ctx = is(&lx, "packet_context"), hdr = is(&lx, "event_header_compact");

			if (lx.t.kind != T_IDENT) {
				lx.bad = true;
				break;
			}
			next_tok(&lx);
			struct_member_names(&lx, names, sizeof(names));
			if (ctx)
				m.ctx_ok = !strcmp(names, CTX_NAMES);
			if (hdr)
				m.hdr_ok = !strcmp(names, HDR_NAMES);
			if (accept(&lx, "align")) {
				expect(&lx, "(");
				next_tok(&lx);
				expect(&lx, ")");
			}
			expect(&lx, ";");
		} else {
			const char *kinds[] = { "trace", "env", "clock", "stream", "event" };
			unsigned int k;

			for (k = 0; k < 5; k++)
				if (is(&lx, kinds[k]))
					break;
			if (k == 5) {
				lx.bad = true;
				break;
			}
			next_tok(&lx);
			if (!expect(&lx, "{"))
				break;
			if (k == 0) {
				if (m.trace)
					m.fail_why = "two trace blocks";
				m.trace = true;
			} else if (k == 2) {
				if (m.clock)
					m.fail_why = "more than one clock";
				m.clock = true;
			} else if (k == 3) {
				if (m.stream)
					m.fail_why = "more than one stream class";
				m.stream = true;
			}
			if (k == 1)
				parse_env(&lx, r);
			else if (k == 4)
				parse_event(&lx, &m);
			else
				parse_block(&lx, &m, kinds[k]);
			expect(&lx, "}");
			expect(&lx, ";");
		}
	}
	if (!m.fail_why && !lx.bad) {
		if (!m.trace || m.major != 1 || m.minor != 8)
			m.fail_why = "no CTF 1.8 trace block";
		else if (!m.le)
			m.fail_why = "not little-endian";
		else if (!r->uuid_text[0])
			m.fail_why = "no trace uuid";
		else if (!m.clock || !r->clock_name)
			m.fail_why = "no clock";
		else if (!m.stream || !m.ctx_ok || !m.hdr_ok)
			m.fail_why = "its stream is not kinstr's (packet context or event header)";
	}

	if (m.fail_why || lx.bad) {
		size_t line = 1;
		const char *p;

		for (p = text; p < lx.t.s && p < text + len; p++)
			line += *p == '\n';
		if (m.fail_why)
			return fail(err, errlen, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read: %s", path, m.fail_why);
		return fail(err, errlen, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read (line %zu, near '%.*s')",
			    path, line, (int)(lx.t.len > 40 ? 40 : lx.t.len), lx.t.kind == T_END ? "end" : lx.t.s);
	}
	return 0;
}

/* ---- streams ---- */

struct pkt {
	uint64_t ts_begin, ts_end, content, size, seq, discarded;
	uint32_t cpu;
};

static void read_pkt(const uint8_t *p, struct pkt *k)
{
	k->ts_begin = ctf_get_le(p, 8);
	k->ts_end = ctf_get_le(p + 8, 8);
	k->content = ctf_get_le(p + 16, 8);
	k->size = ctf_get_le(p + 24, 8);
	k->seq = ctf_get_le(p + 32, 8);
	k->discarded = ctf_get_le(p + 40, 8);
	k->cpu = ctf_get_le(p + 48, 4);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* The trace's clock expresses ts as signed 64-bit ns from the epoch (as babeltrace2 does). */
static bool clock_fits(const struct kinstr_ctf_reader *r, uint64_t ts)
{
	int64_t t;

	return ts <= INT64_MAX && !__builtin_add_overflow((int64_t)ts, r->clock_offset, &t);
}

/*
 * Every packet of a stream file against the metadata (magic, uuid, stream id, sizes), its own
 * CRC-32 (which covers the events and the padding), and its neighbours: sequence numbers from 0
 * with no gap, time never going back, one CPU (the file's), a discarded count that only grows.
 */
static int check_stream(struct kinstr_ctf_reader *r, struct rstream *s, char *err, size_t errlen)
{
	const char *d = r->dir, *f = s->info.file;
	const unsigned int ps = CTF_PKT_START;
	unsigned int file_cpu = (unsigned int)strtoul(f + 7, NULL, 10);
	uint64_t prev_end = 0, prev_discarded = 0;
	size_t off = 0;

	if (!s->size)
		return fail(err, errlen, -EBADMSG, "%s/%s: empty stream file (kinstr writes a stream file only with packets)",
			    d, f);
	while (off < s->size) {
		size_t left = s->size - off;
		const uint8_t *p = s->map + off;
		size_t tail = 0;
		struct pkt k;

		if (left < ps)
			return fail(err, errlen, -EBADMSG, "%s/%s: truncated packet header at offset %zu (%zu bytes left)",
				    d, f, off, left);
		if (ctf_get_le(p, 4) != CTF_MAGIC)
			return fail(err, errlen, -EBADMSG, "%s/%s: bad packet magic 0x%08x at offset %zu", d, f,
				    (unsigned int)ctf_get_le(p, 4), off);
		if (memcmp(p + 4, r->uuid, 16))
			return fail(err, errlen, -EBADMSG, "%s/%s: packet at offset %zu belongs to another trace (uuid)",
				    d, f, off);
		if (ctf_get_le(p + 20, 4) != 0)
			return fail(err, errlen, -EBADMSG, "%s/%s: unknown stream id %u at offset %zu", d, f,
				    (unsigned int)ctf_get_le(p + 20, 4), off);
		read_pkt(p + CTF_HDR_SIZE, &k);
		if (k.size % 64 || k.size / 8 < ps || k.content % 8 || k.content / 8 < ps)
			return fail(err, errlen, -EBADMSG,
				    "%s/%s: bad packet sizes at offset %zu (content_size %llu, packet_size %llu bits)",
				    d, f, off, (unsigned long long)k.content, (unsigned long long)k.size);
		if (k.content > k.size)
			return fail(err, errlen, -EBADMSG,
				    "%s/%s: content_size %llu exceeds packet_size %llu bits at offset %zu", d, f,
				    (unsigned long long)k.content, (unsigned long long)k.size, off);
		if (k.size / 8 > left)
			return fail(err, errlen, -EBADMSG,
				    "%s/%s: truncated packet at offset %zu (packet_size says %llu bytes, %zu left)", d, f,
				    off, (unsigned long long)(k.size / 8), left);
		if (r->crc) {
			uint32_t want, got;

			if (k.size / 8 - k.content / 8 < CTF_CRC_SIZE)
				return fail(err, errlen, -EBADMSG,
					    "%s/%s: packet at offset %zu has no room for its CRC-32 after its content", d, f, off);
			tail = CTF_CRC_SIZE;
			want = (uint32_t)ctf_get_le(p + k.size / 8 - CTF_CRC_SIZE, CTF_CRC_SIZE);
			got = ctf_packet_crc(p, k.size / 8);
			if (got != want)
				return fail(err, errlen, -EBADMSG,
					    "%s/%s: packet at offset %zu is damaged (its CRC-32 is 0x%08x, its last 4 bytes say 0x%08x)",
					    d, f, off, got, want);
		}
		if (!all_zero(p + k.content / 8, k.size / 8 - k.content / 8 - tail))
			return fail(err, errlen, -EBADMSG, "%s/%s: packet at offset %zu has non-zero padding after its content",
				    d, f, off);
		if (k.seq != s->info.packets)
			return fail(err, errlen, -EBADMSG,
				    "%s/%s: packet at offset %zu has packet_seq_num %llu, not %llu (a packet missing or repeated)",
				    d, f, off, (unsigned long long)k.seq, (unsigned long long)s->info.packets);
		if (k.ts_end < k.ts_begin || k.ts_begin < prev_end)
			return fail(err, errlen, -EBADMSG, "%s/%s: packet at offset %zu goes back in time", d, f, off);
		if (!clock_fits(r, k.ts_end))
			return fail(err, errlen, -EBADMSG,
				    "%s/%s: packet at offset %zu ends at %llu ns, past what its clock (offset %lld ns) can express",
				    d, f, off, (unsigned long long)k.ts_end, (long long)r->clock_offset);
		if (k.cpu != file_cpu)
			return fail(err, errlen, -EBADMSG, "%s/%s: packet at offset %zu is of cpu %u, not %u", d, f, off,
				    k.cpu, file_cpu);
		if (k.discarded < prev_discarded)
			return fail(err, errlen, -EBADMSG,
				    "%s/%s: packet at offset %zu counts %llu events discarded, fewer than the %llu before it",
				    d, f, off, (unsigned long long)k.discarded, (unsigned long long)prev_discarded);
		if (!s->info.packets)
			s->info.ts_begin = k.ts_begin;
		s->info.cpu = k.cpu;
		s->info.packets++;
		s->info.events_discarded = prev_discarded = k.discarded;
		s->info.ts_end = prev_end = k.ts_end;
		off += k.size / 8;
	}
	return 0;
}

static int cmp_stream(const void *a, const void *b)
{
	const struct rstream *x = a, *y = b;
	unsigned int cx = (unsigned int)strtoul(x->info.file + 7, NULL, 10);
	unsigned int cy = (unsigned int)strtoul(y->info.file + 7, NULL, 10);

	return cx < cy ? -1 : cx > cy;
}

static bool stream_name(const char *n)
{
	const char *p = n + 7;

	if (strncmp(n, "stream_", 7) || !*p || strlen(p) > 5 || (*p == '0' && p[1]))
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return strtoul(n + 7, NULL, 10) < MAX_STREAMS;
}

static int map_file(int dirfd, const char *name, const uint8_t **map, size_t *size)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC), ret = 0;

	*map = NULL;
	*size = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
	} else if (st.st_size > 0) {
		void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED)
			ret = -errno;
		else {
			*map = m;
			*size = st.st_size;
		}
	}
	close(fd);
	return ret;
}

void kinstr_ctf_reader__close(struct kinstr_ctf_reader *r)
{
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->nclasses; i++) {
		free((char *)r->classes[i].c.name);
		free_fields((struct kinstr_ctf_field *)r->classes[i].c.fields, r->classes[i].c.nfields);
	}
	for (i = 0; i < r->nstreams; i++) {
		if (r->streams[i].map)
			munmap((void *)r->streams[i].map, r->streams[i].size);
		free((char *)r->streams[i].info.file);
	}
	for (i = 0; i < r->nenv; i++)
		free(r->env[i]);
	free(r->env);
	free(r->classes);
	free(r->streams);
	free(r->values);
	free(r->scratch);
	free(r->clock_name);
	free(r->dir);
	free(r);
}

struct kinstr_ctf_reader *kinstr_ctf_reader__open(const char *dir, char *err, size_t errlen)
{
	struct kinstr_ctf_reader *r;
	const uint8_t *meta = NULL;
	const char *crc;
	size_t meta_size = 0, scratch = 1;
	unsigned int i, maxf = 1, j;
	char path[4096];
	struct dirent *e;
	DIR *d = NULL;
	int dirfd = -1, ret;

	if (err && errlen)
		err[0] = 0;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(dir))) {
		ret = fail(err, errlen, -ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	ret = map_file(dirfd, "metadata", &meta, &meta_size);
	snprintf(path, sizeof(path), "%s/metadata", dir);
	if (ret == -ENOENT) {
		ret = fail(err, errlen, ret, "%s: no metadata", dir);
		goto out;
	}
	if (ret) {
		ret = fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
		goto out;
	}
	if (meta_size > MAX_METADATA) {
		ret = fail(err, errlen, -EFBIG, "%s: metadata larger than %u MiB", path, MAX_METADATA >> 20);
		goto out;
	}
	ret = parse_metadata(r, (const char *)meta, meta_size, path, err, errlen);
	if (ret)
		goto out;
	crc = kinstr_ctf_reader__env(r, CTF_CRC_ENV);
	if (crc && strcmp(crc, CTF_CRC_TAIL)) {
		ret = fail(err, errlen, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read: env %s = \"%.40s\" is no check it knows",
			   path, CTF_CRC_ENV, crc);
		goto out;
	}
	r->crc = crc;
	for (i = 0; i < r->nclasses; i++) {
		size_t chars = 0;

		for (j = 0; j < r->classes[i].c.nfields; j++)
			if (r->classes[i].c.fields[j].type == KINSTR_CTF_CHARS)
				chars += r->classes[i].c.fields[j].len + 1;
		if (r->classes[i].c.nfields > maxf)
			maxf = r->classes[i].c.nfields;
		if (chars > scratch)
			scratch = chars;
	}
	r->values = calloc(maxf, sizeof(*r->values));
	r->scratch = malloc(scratch);
	if (!r->values || !r->scratch) {
		ret = fail(err, errlen, -ENOMEM, "%s: out of memory", dir);
		goto out;
	}
	d = fdopendir(fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
	if (!d) {
		ret = fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		struct rstream *ns, *s;

		if (!stream_name(e->d_name))
			continue;
		ns = realloc(r->streams, (r->nstreams + 1) * sizeof(*ns));
		if (!ns) {
			ret = fail(err, errlen, -ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		r->streams = ns;
		s = &ns[r->nstreams];
		memset(s, 0, sizeof(*s));
		s->info.file = strdup(e->d_name);
		r->nstreams++;
		if (!s->info.file) {
			ret = fail(err, errlen, -ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		s->info.cpu = strtoul(e->d_name + 7, NULL, 10);
		ret = map_file(dirfd, e->d_name, &s->map, &s->size);
		if (ret) {
			ret = fail(err, errlen, ret, "%s/%s: %s", dir, e->d_name, strerror(-ret));
			goto out;
		}
	}
	if (r->nstreams)
		qsort(r->streams, r->nstreams, sizeof(*r->streams), cmp_stream);
	for (i = 0; i < r->nstreams; i++) {
		ret = check_stream(r, &r->streams[i], err, errlen);
		if (ret)
			goto out;
		for (j = 0; j < i; j++)
			if (r->streams[j].info.cpu == r->streams[i].info.cpu) {
				ret = fail(err, errlen, -EBADMSG, "%s: %s and %s both hold cpu %u", dir,
					   r->streams[j].info.file, r->streams[i].info.file, r->streams[i].info.cpu);
				goto out;
			}
	}
out:
	if (d)
		closedir(d);
	if (meta)
		munmap((void *)meta, meta_size);
	if (dirfd >= 0)
		close(dirfd);
	if (ret) {
		kinstr_ctf_reader__close(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

/* ---- events ---- */

int kinstr_ctf_reader__next(struct kinstr_ctf_reader *r, struct kinstr_ctf_event *ev, char *err, size_t errlen)
{
	const struct rstream *s;
	const struct rclass *c;
	const uint8_t *p, *end;
	size_t at;
	char *scratch;
	unsigned int id, i;
	uint64_t ts;

	if (!r || !ev)
		return -EINVAL;
	if (r->failed)
		return fail(err, errlen, -EBADMSG, "%s: an earlier error ended the reading", r->dir);
	for (;;) {
		if (r->cur >= r->nstreams)
			return 0;
		s = &r->streams[r->cur];
		if (r->in_pkt && r->pos < r->end)
			break;
		if (r->in_pkt) {
			/* next packet (check_stream() validated every header and size) */
			r->pkt += ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE + 24, 8) / 8;
			r->in_pkt = false;
		}
		if (r->pkt >= s->size) {
			r->cur++;
			r->pkt = 0;
			continue;
		}
		r->pos = r->pkt + CTF_PKT_START;
		r->end = r->pkt + ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE + 16, 8) / 8;
		r->clock = r->pkt_begin = ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE, 8);
		r->pkt_end = ctf_get_le(s->map + r->pkt + CTF_HDR_SIZE + 8, 8);
		r->in_pkt = true;
	}
	at = r->pos;
	p = s->map + r->pos;
	end = s->map + r->end;
	if (end - p < 4)
		goto past;
	id = p[0] & 31;
	if (id == CTF_EXTENDED_ID) {
		if (end - p < 13)
			goto past;
		id = ctf_get_le(p + 1, 4);
		ts = ctf_get_le(p + 5, 8);
		p += 13;
	} else {
		uint64_t mask = (1ull << CTF_COMPACT_TS_BITS) - 1, low = ctf_get_le(p, 4) >> 5;

		ts = (r->clock & ~mask) | low;
		if (low < (r->clock & mask))
			ts += 1ull << CTF_COMPACT_TS_BITS;
		p += 4;
	}
	if (ts < r->clock || ts > r->pkt_end) {
		r->failed = true;
		return fail(err, errlen, -EBADMSG,
			    "%s/%s: event at offset %zu has timestamp %llu, outside its packet's %llu..%llu or before the event ahead of it",
			    r->dir, s->info.file, at, (unsigned long long)ts, (unsigned long long)r->pkt_begin,
			    (unsigned long long)r->pkt_end);
	}
	if (id >= r->nclasses || !r->classes[id].defined) {
		r->failed = true;
		return fail(err, errlen, -EBADMSG, "%s/%s: unknown event class id %u at offset %zu", r->dir,
			    s->info.file, id, at);
	}
	c = &r->classes[id];
	scratch = r->scratch;
	for (i = 0; i < c->c.nfields; i++) {
		const struct kinstr_ctf_field *f = &c->c.fields[i];

		if (f->type == KINSTR_CTF_STRING) {
			const uint8_t *nul = memchr(p, 0, end - p);

			if (!nul)
				goto past;
			r->values[i].str = (const char *)p;
			p = nul + 1;
		} else if (f->type == KINSTR_CTF_CHARS) {
			if ((size_t)(end - p) < f->len)
				goto past;
			memcpy(scratch, p, f->len);
			scratch[f->len] = 0;
			r->values[i].str = scratch;
			scratch += f->len + 1;
			p += f->len;
		} else {
			unsigned int n = ctf_int_bytes(f->type);
			uint64_t v;

			if ((size_t)(end - p) < n)
				goto past;
			v = ctf_get_le(p, n);
			if (f->type >= KINSTR_CTF_S8 && n < 8 && (v >> (8 * n - 1)) & 1)
				v |= ~0ull << (8 * n);
			r->values[i].u = v;
			p += n;
		}
	}
	r->pos = p - s->map;
	r->clock = ts;
	ev->class_id = id;
	ev->cpu = s->info.cpu;
	ev->stream = r->cur;
	ev->ts = ts;
	ev->values = r->values;
	ev->nvalues = c->c.nfields;
	return 1;
past:
	r->failed = true;
	return fail(err, errlen, -EBADMSG, "%s/%s: event at offset %zu runs past the packet's content (ends at %zu)",
		    r->dir, s->info.file, at, r->end);
}

unsigned int kinstr_ctf_reader__class_cnt(const struct kinstr_ctf_reader *r)
{
	return r->nclasses;
}

const struct kinstr_ctf_class *kinstr_ctf_reader__class(const struct kinstr_ctf_reader *r, unsigned int id)
{
	return id < r->nclasses && r->classes[id].defined ? &r->classes[id].c : NULL;
}

unsigned int kinstr_ctf_reader__stream_cnt(const struct kinstr_ctf_reader *r)
{
	return r->nstreams;
}

const struct kinstr_ctf_stream_info *kinstr_ctf_reader__stream(const struct kinstr_ctf_reader *r, unsigned int i)
{
	return i < r->nstreams ? &r->streams[i].info : NULL;
}

const char *kinstr_ctf_reader__env(const struct kinstr_ctf_reader *r, const char *key)
{
	size_t i;

	for (i = 0; i + 1 < r->nenv; i += 2)
		if (!strcmp(r->env[i], key))
			return r->env[i + 1];
	return NULL;
}

const char *kinstr_ctf_reader__uuid(const struct kinstr_ctf_reader *r)
{
	return r->uuid_text;
}

const char *kinstr_ctf_reader__clock_name(const struct kinstr_ctf_reader *r)
{
	return r->clock_name;
}

int64_t kinstr_ctf_reader__clock_offset_ns(const struct kinstr_ctf_reader *r)
{
	return r->clock_offset;
}
