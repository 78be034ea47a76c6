// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Instruments in C (include/kinstr/bpf.h): a BPF object opened and its one kprobe program loaded
 * through libbpf (the verifier's log kept for the refusal), its maps printed from the object's
 * BTF after the run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <uapi/linux/kinstr.h>
#include <kinstr/bpf.h>

#define LOG_BYTES (4u << 20)

struct kinstr_bpf_obj {
	struct bpf_object *obj;
	struct bpf_program *prog;
};

/* libbpf's warnings while one object opens and loads, for the error when it fails */
static char said[1024];

static int capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	/* the last warning that says something: libbpf ends with a generic "failed to load object" */
	if (n && !strstr(line, "failed to load object"))
		snprintf(said, sizeof(said), "%s", line);
	return 0;
}

static const char *prog_type_str(enum bpf_prog_type t)
{
	const char *s = libbpf_bpf_prog_type_str(t);

	return s ? s : "unknown";
}

/* The program to run: the one named, else the object's only kprobe program. */
static struct bpf_program *choose(struct bpf_object *obj, const char *name, const char *what,
				  struct kinstr_why *why)
{
	struct bpf_program *p, *found = NULL;
	char names[256] = "";
	int n = 0;

	if (name) {
		found = bpf_object__find_program_by_name(obj, name);
		if (!found) {
			kinstr_why__fail(why, -ENOENT, "%s: no program called '%s'", what, name);
			errno = ENOENT;
			return NULL;
		}
	} else {
		bpf_object__for_each_program(p, obj)
			if (bpf_program__type(p) == BPF_PROG_TYPE_KPROBE) {
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", n ? ", " : "",
					 bpf_program__name(p));
				found = p;
				n++;
			}
		if (n != 1) {
			if (n)
				kinstr_why__fail(why, -EINVAL, "%s: %d kprobe programs (%s): name one as %s:PROG", what, n,
						 names, what);
			else
				kinstr_why__fail(why, -ENOENT, "%s: no program of kprobe type: write it as SEC(\"kprobe\")",
						 what);
			errno = n ? EINVAL : ENOENT;
			return NULL;
		}
	}
	if (bpf_program__type(found) != BPF_PROG_TYPE_KPROBE) {
		kinstr_why__fail(why, -EINVAL, "%s: program '%s' is of type %s, not kprobe: write it as SEC(\"kprobe\")",
				 what, bpf_program__name(found), prog_type_str(bpf_program__type(found)));
		errno = EINVAL;
		return NULL;
	}
	if (bpf_program__expected_attach_type(found) != 0) {
		kinstr_why__fail(why, -EINVAL, "%s: program '%s' is a multi-attach kprobe program (%s): kinstr runs plain "
				 "SEC(\"kprobe\") programs", what, bpf_program__name(found),
				 libbpf_bpf_attach_type_str(bpf_program__expected_attach_type(found)) ?: "?");
		errno = EINVAL;
		return NULL;
	}
	return found;
}

static struct kinstr_bpf_obj *load(struct bpf_object *obj, const char *what, const char *prog,
				   struct kinstr_why *why, char **log)
{
	struct kinstr_bpf_obj *o = calloc(1, sizeof(*o));
	struct bpf_program *p;
	char *buf = NULL;
	int ret;

	if (log)
		*log = NULL;
	if (!o) {
		kinstr_why__fail(why, -ENOMEM, "%s", strerror(ENOMEM));
		goto fail;
	}
	o->obj = obj;
	o->prog = choose(obj, prog, what, why);
	if (!o->prog)
		goto fail;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == o->prog);
	/* libbpf asks the kernel for the log only when a load fails, and keeps it here */
	buf = calloc(1, LOG_BYTES);
	if (buf)
		bpf_program__set_log_buf(o->prog, buf, LOG_BYTES);
	ret = bpf_object__load(obj);
	if (ret) {
		ret = errno ? -errno : ret;
		if (ret == -ENOSPC && buf && strnlen(buf, LOG_BYTES) >= LOG_BYTES - 1) {
			/* a fixed log that filled up: the kernel's ENOSPC replaces the refusal's own errno */
			kinstr_why__fail(why, ret, "%s: the verifier refused program '%s': its log passed %u MiB, "
					 "where the kernel stops it and says ENOSPC instead of the reason: a log that long "
					 "means the program is too large (the verifier explores at most 1,000,000 "
					 "instructions); its start follows", what, bpf_program__name(o->prog), LOG_BYTES >> 20);
			if (log) {
				*log = buf;
				buf = NULL;
			}
		} else if (ret == -E2BIG) {	/* strerror says "Argument list too long" */
			kinstr_why__fail(why, ret, "%s: program '%s' is too large for the kernel: more instructions than it "
					 "loads (1,000,000) or than the verifier explores (E2BIG)%s", what,
					 bpf_program__name(o->prog), buf && buf[0] ? "; its log follows" : "");
			if (log && buf && buf[0]) {
				*log = buf;
				buf = NULL;
			}
		} else if (buf && buf[0]) {
			kinstr_why__fail(why, ret, "%s: the verifier refused program '%s': %s (its log follows)", what,
					 bpf_program__name(o->prog), strerror(-ret));
			if (log) {
				*log = buf;
				buf = NULL;
			}
		} else {
			kinstr_why__fail(why, ret, "%s: loading program '%s' failed: %s%s%s", what,
					 bpf_program__name(o->prog), strerror(-ret), said[0] ? ": " : "", said);
		}
		errno = -ret;
		goto fail;
	}
	free(buf);
	return o;
fail:
	ret = errno;
	free(buf);
	free(o);
	bpf_object__close(obj);
	errno = ret;
	return NULL;
}

/* Open (from a file when buf is NULL, else from memory), then choose and load; libbpf's warnings kept. */
static struct kinstr_bpf_obj *open_load(const char *path, const void *buf, size_t len, const char *prog,
					struct kinstr_why *why, char **log)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = buf ? path : NULL);
	libbpf_print_fn_t old = libbpf_set_print(capture);
	struct kinstr_bpf_obj *o = NULL;
	struct bpf_object *obj;
	int e;

	said[0] = 0;
	obj = buf ? bpf_object__open_mem(buf, len, &opts) : bpf_object__open_file(path, NULL);
	if (!obj) {
		e = errno;
		kinstr_why__fail(why, -e, "%s: cannot open the BPF object: %s%s%s%s", path,
				 e >= __LIBBPF_ERRNO__START ? "not a BPF ELF object" : strerror(e), said[0] ? " (" : "", said,
				 said[0] ? ")" : "");
		if (log)
			*log = NULL;
	} else {
		o = load(obj, path, prog, why, log);
		e = errno;
	}
	libbpf_set_print(old);
	errno = e;
	return o;
}

struct kinstr_bpf_obj *kinstr_bpf_obj__open(const char *path, const char *prog, struct kinstr_why *why,
					     char **log)
{
	return open_load(path, NULL, 0, prog, why, log);
}

struct kinstr_bpf_obj *kinstr_bpf_obj__open_mem(const void *buf, size_t len, const char *name, const char *prog,
						 struct kinstr_why *why, char **log)
{
	return open_load(name, buf, len, prog, why, log);
}

void kinstr_bpf_obj__close(struct kinstr_bpf_obj *o)
{
	if (!o)
		return;
	bpf_object__close(o->obj);
	free(o);
}

int kinstr_bpf_obj__prog_fd(const struct kinstr_bpf_obj *o)
{
	return bpf_program__fd(o->prog);
}

const char *kinstr_bpf_obj__prog_name(const struct kinstr_bpf_obj *o)
{
	return bpf_program__name(o->prog);
}

int kinstr_bpf_obj__map_fd(const struct kinstr_bpf_obj *o, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(o->obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

/* Printing values by their BTF type. */
static void put_str(FILE *out, const char *s, size_t max, bool json)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, json ? "\\u%04x" : "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static uint64_t load_uint(const void *p, size_t size)
{
	uint64_t v = 0;

	memcpy(&v, p, size > 8 ? 8 : size);	/* little-endian */
	return v;
}

static void put_int(FILE *out, const void *p, size_t size, bool is_signed)
{
	uint64_t v = load_uint(p, size);

	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ull << (size * 8);
	if (is_signed)
		fprintf(out, "%lld", (long long)v);
	else
		fprintf(out, "%llu", (unsigned long long)v);
}

static void put_hex(FILE *out, const unsigned char *p, size_t size, bool json)
{
	size_t i;

	fputs(json ? "\"" : "0x", out);
	for (i = size; i-- > 0;)
		fprintf(out, "%02x", p[i]);
	if (json)
		fputc('"', out);
}

static void put_typed(FILE *out, const struct btf *btf, uint32_t id, const void *p, size_t size, bool json, int depth)
{
	const struct btf_type *t;
	int rid;

	if (!btf || !id || depth > 8) {
		if (size <= 8)
			put_int(out, p, size, false);
		else
			put_hex(out, p, size, json);
		return;
	}
	rid = btf__resolve_type(btf, id);
	t = rid > 0 ? btf__type_by_id(btf, rid) : NULL;
	if (!t) {
		put_hex(out, p, size, json);
		return;
	}
	if (btf_is_int(t)) {
		if (btf_int_encoding(t) & BTF_INT_BOOL)
			fputs(*(const unsigned char *)p ? "true" : "false", out);
		else
			put_int(out, p, t->size, btf_int_encoding(t) & BTF_INT_SIGNED);
	} else if (btf_is_enum(t) || btf_is_enum64(t)) {
		put_int(out, p, t->size, false);
	} else if (btf_is_ptr(t)) {
		if (json)
			fprintf(out, "\"0x%llx\"", (unsigned long long)load_uint(p, 8));
		else
			fprintf(out, "0x%llx", (unsigned long long)load_uint(p, 8));
	} else if (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		int erid = btf__resolve_type(btf, a->type);
		const struct btf_type *e = erid > 0 ? btf__type_by_id(btf, erid) : NULL;
		__s64 esz = btf__resolve_size(btf, a->type);
		uint32_t i;

		if (e && btf_is_int(e) && e->size == 1) {
			put_str(out, p, a->nelems, json);
			return;
		}
		fputc('[', out);
		for (i = 0; esz > 0 && i < a->nelems; i++) {
			if (i)
				fputs(", ", out);
			put_typed(out, btf, a->type, (const char *)p + i * esz, (size_t)esz, json, depth + 1);
		}
		fputc(']', out);
	} else if (btf_is_struct(t) || btf_is_union(t)) {
		const struct btf_member *m = btf_members(t);
		uint16_t i, n = btf_vlen(t);

		fputc('{', out);
		for (i = 0; i < n; i++) {
			__s64 msz = btf__resolve_size(btf, m[i].type);
			const char *name = btf__name_by_offset(btf, m[i].name_off);

			if (i)
				fputs(", ", out);
			if (json)
				fprintf(out, "\"%s\": ", name && name[0] ? name : "?");
			else
				fprintf(out, "%s: ", name && name[0] ? name : "?");
			if (msz <= 0 || btf_member_bitfield_size(t, i))
				fputs(json ? "null" : "?", out);
			else
				put_typed(out, btf, m[i].type, (const char *)p + btf_member_bit_offset(t, i) / 8,
					  (size_t)msz, json, depth + 1);
		}
		fputc('}', out);
	} else {
		put_hex(out, p, size, json);
	}
}

static bool is_int_type(const struct btf *btf, uint32_t id, size_t size)
{
	const struct btf_type *t;
	int rid;

	if (!btf || !id)
		return size <= 8;
	rid = btf__resolve_type(btf, id);
	t = rid > 0 ? btf__type_by_id(btf, rid) : NULL;
	return t && btf_is_int(t) && t->size <= 8;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

struct entry {
	unsigned char *key, *val;
	uint64_t sum;			/* an integer value, summed over CPUs */
};

static size_t ent_ksize;

static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return memcmp(a->key, b->key, ent_ksize);
}

static int print_map(const struct bpf_map *m, const struct btf *btf, FILE *out, bool json, bool *first)
{
	enum bpf_map_type type = bpf_map__type(m);
	bool percpu = type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
		      type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
	bool array = type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY;
	size_t ks = bpf_map__key_size(m), vs = bpf_map__value_size(m), stride = (vs + 7) & ~(size_t)7;
	uint32_t kid = bpf_map__btf_key_type_id(m), vid = bpf_map__btf_value_type_id(m);
	int ncpu = percpu ? libbpf_num_possible_cpus() : 1, fd = bpf_map__fd(m), ret = 0;
	bool ints = is_int_type(btf, vid, vs);
	struct entry *ents = NULL;
	size_t n = 0, cap = 0, i;
	unsigned char *key = NULL, *next = NULL, *val = NULL;
	void *prev = NULL;

	if (ncpu < 1)
		return ncpu;
	if (type != BPF_MAP_TYPE_HASH && type != BPF_MAP_TYPE_LRU_HASH && !percpu && !array)
		return 0;	/* no values to print: stack traces, ring buffers, perf arrays, ... */
	key = calloc(1, ks);
	next = calloc(1, ks);
	val = calloc((size_t)ncpu, stride);
	if (!key || !next || !val) {
		ret = -ENOMEM;
		goto out;
	}
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		struct entry *e;
		int c;

		memcpy(key, next, ks);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, val))
			continue;	/* deleted meanwhile */
		if (array && all_zero(val, (size_t)ncpu * stride))
			continue;
		if (n == cap) {
			struct entry *ne = realloc(ents, (cap = cap ? cap * 2 : 64) * sizeof(*ents));

			if (!ne) {
				ret = -ENOMEM;
				goto out;
			}
			ents = ne;
		}
		e = &ents[n++];
		e->key = malloc(ks);
		e->val = malloc((size_t)ncpu * stride);
		if (!e->key || !e->val) {
			n--;
			free(e->key);
			free(e->val);
			ret = -ENOMEM;
			goto out;
		}
		memcpy(e->key, key, ks);
		memcpy(e->val, val, (size_t)ncpu * stride);
		e->sum = 0;
		for (c = 0; ints && c < ncpu; c++)
			e->sum += load_uint(val + (size_t)c * stride, vs);
	}
	if (!array && ints) {
		ent_ksize = ks;
		if (n)
			qsort(ents, n, sizeof(*ents), cmp_entry);	/* like bpftrace: the largest last */
	}
	if (json)
		fprintf(out, "%s\"%s\":[", *first ? "" : ",", bpf_map__name(m));
	*first = false;
	for (i = 0; i < n; i++) {
		struct entry *e = &ents[i];
		int c;

		if (json) {
			fprintf(out, "%s{\"key\":", i ? "," : "");
			put_typed(out, btf, kid, e->key, ks, true, 0);
			fputs(",\"value\":", out);
		} else {
			fprintf(out, "@%s[", bpf_map__name(m));
			put_typed(out, btf, kid, e->key, ks, false, 0);
			fputs("]: ", out);
		}
		if (ints && percpu) {
			fprintf(out, "%llu", (unsigned long long)e->sum);
		} else if (percpu) {
			fputc('[', out);
			for (c = 0; c < ncpu; c++) {
				if (c)
					fputs(", ", out);
				put_typed(out, btf, vid, e->val + (size_t)c * stride, vs, json, 0);
			}
			fputc(']', out);
		} else {
			put_typed(out, btf, vid, e->val, vs, json, 0);
		}
		fputs(json ? "}" : "\n", out);
	}
	if (json)
		fputc(']', out);
out:
	for (i = 0; i < n; i++) {
		free(ents[i].key);
		free(ents[i].val);
	}
	free(ents);
	free(key);
	free(next);
	free(val);
	return ret;
}

int kinstr_bpf_obj__print_maps(const struct kinstr_bpf_obj *o, FILE *out, bool json)
{
	const struct btf *btf = bpf_object__btf(o->obj);
	struct bpf_map *m;
	bool first = true;
	int ret = 0;

	if (json)
		fputc('{', out);
	bpf_object__for_each_map(m, o->obj) {
		if (bpf_map__is_internal(m))
			continue;
		ret = print_map(m, btf, out, json, &first);
		if (ret)
			break;
	}
	if (json)
		fputc('}', out);
	return ret;
}

static const char *const reasons[KINSTR_BPF_R_NR] = {
	[KINSTR_BPF_R_BAD_FD] = "the program's fd is not open",
	[KINSTR_BPF_R_NOT_KPROBE] = "not a BPF program of kprobe type",
	[KINSTR_BPF_R_ATTACH_TYPE] = "a multi-attach kprobe program (its helpers need their own run context)",
	[KINSTR_BPF_R_OVERRIDE] = "the program calls bpf_override_return(): no return to override mid-function",
	[KINSTR_BPF_R_SLEEPABLE] = "a sleepable program: probe context may not sleep",
	[KINSTR_BPF_R_UNAVAILABLE] = "the kernel's guard of tracing programs (bpf_prog_active) was not found",
};

const char *kinstr_bpf_reason__str(unsigned int reason)
{
	return reason < KINSTR_BPF_R_NR && reasons[reason] ? reasons[reason] : "unknown reason";
}

const char *kinstr_bpf_fd__describe(int prog_fd, char *buf, size_t len)
{
	char path[64], line[128];
	FILE *f;
	int type = -1;

	/* fdinfo tells a program (prog_type) from any other file, a BPF map included */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", prog_fd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "prog_type: %d", &type) == 1)
			break;
	if (f)
		fclose(f);
	if (!f)
		snprintf(buf, len, "fd %d is not open", prog_fd);
	else if (type < 0)
		snprintf(buf, len, "fd %d is not a BPF program", prog_fd);
	else
		snprintf(buf, len, "fd %d is a BPF program of type %s", prog_fd, prog_type_str((enum bpf_prog_type)type));
	return buf;
}
