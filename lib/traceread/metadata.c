// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The CTF reader's metadata parser (TSDL), for the subset kinstr emits (lib/trace/ctf.c): any whitespace,
 * comments and statement order; the trace, env, clock and stream blocks, the packet context and event
 * header structs by their member names, and event classes whose fields are 8..64-bit byte-aligned
 * integers, UTF-8 char arrays and strings.
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
#include <kinstr/ctf_read.h>
#include "lib/trace/ctf_priv.h"
#include "lib/traceread/ctf_read_priv.h"

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

void cr_free_fields(struct kinstr_ctf_field *f, unsigned int n)
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
	cr_free_fields(fields, nfields);
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

int cr_parse_metadata(struct kinstr_ctf_reader *r, const char *text, size_t len, const char *path,
			  struct kinstr_why *why)
{
	struct lexer lx = { .p = text, .end = text + len };
	struct meta m = { .r = r };
	static const char magic[] = "/* CTF 1.8";

	if (len < sizeof(magic) - 1 || memcmp(text, magic, sizeof(magic) - 1) || memchr(text, 0, len))
		return kinstr_why__fail(why, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read (no '/* CTF 1.8 */' text header)",
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
			return kinstr_why__fail(why, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read: %s", path, m.fail_why);
		return kinstr_why__fail(why, -EINVAL, "%s: not a CTF 1.8 trace kinstr can read (line %zu, near '%.*s')",
			    path, line, (int)(lx.t.len > 40 ? 40 : lx.t.len), lx.t.kind == T_END ? "end" : lx.t.s);
	}
	return 0;
}
