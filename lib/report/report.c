// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* kinstr report --html (include/kinstr/report.h): one page, everything inline. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/report.h>

#define ASSET(sym) extern const char sym[], sym##_end[];
ASSET(kinstr_asset_report_js)
ASSET(kinstr_asset_report_css)
ASSET(kinstr_asset_d3_js)
ASSET(kinstr_asset_flame_js)
ASSET(kinstr_asset_flame_css)
#undef ASSET

static bool folded_line(const char *s, const char *e)
{
	const char *p = e;

	while (p > s && isspace((unsigned char)p[-1]))
		p--;
	if (p == s)
		return true;	/* empty: allowed */
	if (!isdigit((unsigned char)p[-1]))
		return false;
	while (p > s && isdigit((unsigned char)p[-1]))
		p--;
	return p > s + 1 && p[-1] == ' ';
}

int kinstr_report__kind(const char *data, size_t len)
{
	const char *s = data, *end = data + len, *nl;
	size_t i = 0;

	while (i < len && isspace((unsigned char)data[i]))
		i++;
	if (i < len && data[i] == '{')
		return KINSTR_REPORT_JSON;
	if (i == len)
		return -EINVAL;
	for (; s < end; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		if (memchr(s, 0, (size_t)(nl - s)) || !folded_line(s, nl))
			return -EINVAL;
	}
	return KINSTR_REPORT_FOLDED;
}

/* Text inside <script>: no "</" may appear, so every '<' goes as \u003c (JSON allows it in strings). */
static void put_json_safe(FILE *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '<')
			fputs("\\u003c", out);
		else
			fputc(s[i], out);
}

/* Folded text as one JSON string literal. */
static void put_json_string(FILE *out, const char *s, size_t len)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20 || c == '<')
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void put_attr(FILE *out, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		default: fputc(*s, out);
		}
}

static void put_asset(FILE *out, const char *start, const char *end)
{
	fwrite(start, 1, (size_t)(end - start), out);
	fputc('\n', out);
}

int kinstr_report__html(FILE *out, const char *title, const struct kinstr_report_input *in, size_t n,
			struct kinstr_why *why)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (kinstr_report__kind(in[i].data, in[i].len) < 0)
			return kinstr_why__fail(why, -EINVAL,
						"%s: neither kinstr's JSON nor folded stacks (FRAME;FRAME;... COUNT lines)",
						in[i].name);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
	put_attr(out, title);
	fputs("</title>\n<style>\n", out);
	put_asset(out, kinstr_asset_flame_css, kinstr_asset_flame_css_end);
	put_asset(out, kinstr_asset_report_css, kinstr_asset_report_css_end);
	fputs("</style>\n<script>\n", out);
	put_asset(out, kinstr_asset_d3_js, kinstr_asset_d3_js_end);
	fputs("</script>\n<script>\n", out);
	put_asset(out, kinstr_asset_flame_js, kinstr_asset_flame_js_end);
	fputs("</script>\n<script>\n", out);
	put_asset(out, kinstr_asset_report_js, kinstr_asset_report_js_end);
	fputs("</script>\n", out);
	for (i = 0; i < n; i++) {
		bool folded = kinstr_report__kind(in[i].data, in[i].len) == KINSTR_REPORT_FOLDED;

		fputs("<script type=\"application/json\" class=\"kinstr-data\" data-name=\"", out);
		put_attr(out, in[i].name);
		fprintf(out, "\" data-kind=\"%s\">\n", folded ? "folded" : "json");
		if (folded)
			put_json_string(out, in[i].data, in[i].len);
		else
			put_json_safe(out, in[i].data, in[i].len);
		fputs("\n</script>\n", out);
	}
	fputs("</head>\n<body>\n<h1>", out);
	put_attr(out, title);
	fputs("</h1>\n<main id=\"kinstr-report\"></main>\n</body>\n</html>\n", out);
	return ferror(out) ? kinstr_why__fail(why, -EIO, "%s", strerror(EIO)) : 0;
}
