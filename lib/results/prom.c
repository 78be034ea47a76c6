// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Prometheus text exposition (include/kinstr/prom.h). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <kinstr/prom.h>

void kinstr_prom__family(FILE *out, const char *name, const char *type, const char *help)
{
	const char *c;

	fprintf(out, "# HELP %s ", name);
	for (c = help; *c; c++) {	/* HELP escapes \ and newline only */
		if (*c == '\\' || *c == '\n')
			fprintf(out, "\\%c", *c == '\n' ? 'n' : '\\');
		else
			fputc(*c, out);
	}
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

int kinstr_prom__label(char *buf, size_t len, const char *name, const char *value)
{
	size_t n = strlen(buf), at = n;
	const char *c;

#define PUT(ch) do { if (at + 1 >= len) goto nospc; buf[at++] = (ch); } while (0)
	if (n)
		PUT(',');
	for (c = name; *c; c++)
		PUT(*c);
	PUT('=');
	PUT('"');
	for (c = value; *c; c++) {
		if (*c == '\\' || *c == '"' || *c == '\n') {
			PUT('\\');
			PUT(*c == '\n' ? 'n' : *c);
		} else {
			PUT(*c);
		}
	}
	PUT('"');
#undef PUT
	buf[at] = 0;
	return 0;
nospc:
	buf[n] = 0;
	return -ENOSPC;
}

static void with_labels(FILE *out, const char *name, const char *labels, const char *extra)
{
	fputs(name, out);
	if (labels[0] || extra[0])
		fprintf(out, "{%s%s%s}", labels, labels[0] && extra[0] ? "," : "", extra);
}

void kinstr_prom__sample(FILE *out, const char *name, const char *labels, uint64_t value)
{
	with_labels(out, name, labels, "");
	fprintf(out, " %" PRIu64 "\n", value);
}

void kinstr_prom__log2_histogram(FILE *out, const char *name, const char *labels, const uint64_t *hist, size_t nb,
				 uint64_t count, uint64_t sum_ns)
{
	char bucket[256], le[48];
	uint64_t cum = 0;
	size_t b, last = 0;

	for (b = 0; b < nb; b++)
		if (hist[b])
			last = b;
	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	for (b = 0; b <= last && b < nb; b++) {
		cum += hist[b];
		if (cum > count)
			count = cum;	/* _count is never below a bucket */
		/* the bucket's upper bound, 2^(b+1) ns, in seconds, exactly as a decimal */
		snprintf(le, sizeof(le), "le=\"%.9g\"", (double)(1ull << (b + 1)) / 1e9);
		with_labels(out, bucket, labels, le);
		fprintf(out, " %" PRIu64 "\n", cum);
	}
	with_labels(out, bucket, labels, "le=\"+Inf\"");
	fprintf(out, " %" PRIu64 "\n", count);
	snprintf(bucket, sizeof(bucket), "%s_sum", name);
	with_labels(out, bucket, labels, "");
	fprintf(out, " %.9f\n", (double)sum_ns / 1e9);
	snprintf(bucket, sizeof(bucket), "%s_count", name);
	with_labels(out, bucket, labels, "");
	fprintf(out, " %" PRIu64 "\n", count);
}
