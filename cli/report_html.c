// SPDX-License-Identifier: GPL-2.0
/* kinstr report --html OUT FILE...: saved kinstr outputs (and traces) read and handed to lib/report/ as one page. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <kinstr/ctf_read.h>
#include <kinstr/report.h>
#include "cli.h"

/* The whole of path, or NULL (printed). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f) {
		cli_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (n == cap) {
			char *nb = realloc(buf, (cap = cap ? cap * 2 : 65536) + 1);

			if (!nb) {
				free(buf);
				fclose(f);
				cli_err("%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r);
	if (ferror(f)) {
		cli_err("%s: %s", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* A trace directory as the page's time line input (lib/report/report_trace.c), or NULL (printed). */
static char *trace_data(const char *dir, const char *name, size_t *len)
{
	struct kinstr_why why;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int r;

	if (!f) {
		cli_err("%s: %s", dir, strerror(errno));
		return NULL;
	}
	r = kinstr_report__trace_json(f, dir, name, 0, &why);
	if (fclose(f) && !r)
		r = kinstr_why__fail(&why, -errno, "%s", strerror(errno));
	if (r) {
		cli_err("%s", why.msg);
		free(buf);
		return NULL;
	}
	return buf;
}

/* --html OUT FILE...: the page written beside OUT, then renamed onto it (no half page left). */
int cli_report__html(const char *out, const char *title, int n, char **files)
{
	struct kinstr_report_input *in = calloc((size_t)n, sizeof(*in));
	struct kinstr_why why;
	char tmp[4096];
	int i, ret = CLI_FAIL, r;
	FILE *f = NULL;

	if (!in)
		return CLI_FAIL;
	for (i = 0; i < n; i++) {
		const char *slash = strrchr(files[i], '/');

		in[i].name = slash && slash[1] ? slash + 1 : files[i];
		in[i].data = is_dir(files[i]) ? trace_data(files[i], in[i].name, &in[i].len) : slurp(files[i], &in[i].len);
		if (!in[i].data)
			goto done;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "we");
	if (!f) {
		cli_err("%s: %s", tmp, strerror(errno));
		goto done;
	}
	r = kinstr_report__html(f, title, in, (size_t)n, &why);
	if (fclose(f) && !r)
		r = kinstr_why__fail(&why, -errno, "%s", strerror(errno));
	if (r) {
		unlink(tmp);
		cli_err("%s", why.msg);
		goto done;
	}
	if (rename(tmp, out)) {
		cli_err("%s: %s", out, strerror(errno));
		unlink(tmp);
		goto done;
	}
	fprintf(stderr, "kinstr: wrote %s (%d input%s)\n", out, n, n == 1 ? "" : "s");
	ret = CLI_OK;
done:
	for (i = 0; i < n; i++)
		free((char *)in[i].data);
	free(in);
	return ret;
}
