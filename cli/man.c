// SPDX-License-Identifier: GPL-2.0
/*
 * A subcommand's manual page, drawn from the table its parser and --help read (cli/opts.c), as
 * roff for man(7): its text escaped so that no word of it is taken for a request or an escape,
 * --help's pre-wrapped intro and outro turned back into paragraphs and lists.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kinstr/kinstr.h>
#include "cli.h"

/* s[0, len) as roff text: \, -, ' and ` escaped (so that they print as typed), "." guarded at a line's start */
void cli_man__put(FILE *f, const char *s, size_t len, bool bol)
{
	size_t i;

	if (bol && len && s[0] == '.')
		fputs("\\&", f);
	for (i = 0; i < len && s[i]; i++) {
		switch (s[i]) {
		case '\\': fputs("\\e", f); break;
		case '-': fputs("\\-", f); break;
		case '\'': fputs("\\(aq", f); break;
		case '`': fputs("\\(ga", f); break;
		default: fputc(s[i], f);
		}
	}
}

/* s[0, len) as one text line of its own */
static void line(FILE *f, const char *s, size_t len)
{
	cli_man__put(f, s, len, true);
	fputc('\n', f);
}

/* .TH: the page's title (kinstr or kinstr-NAME, upper case), dated by SOURCE_DATE_EPOCH if set */
void cli_man__title(FILE *f, const char *page)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	char date[32] = "";
	const char *p;

	if (epoch && *epoch) {
		time_t t = (time_t)strtoll(epoch, NULL, 10);
		struct tm tm;

		if (gmtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	}
	fputs(".TH ", f);
	for (p = page; *p; p++) {
		if (*p == '-')
			fputs("\\-", f);
		else
			fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
	}
	/* no hyphenation (it would split option names), ragged right */
	fprintf(f, " 8 \"%s\" \"kinstr %s\" \"System Administration\"\n.nh\n.ad l\n", date, kinstr__version());
}

/*
 * --help's pre-wrapped text (an intro or outro) as roff: lines of prose filled into paragraphs (a
 * blank line between two), indented lines as an indented block without space between its lines:
 * "TERM   what" lines (with the lines indented under them) as a tagged list, the tag as wide as
 * --help has it, other lines each on a line of its own.
 */
void cli_man__blocks(FILE *f, const char *text)
{
	enum { NONE, PROSE, ITEM, INDENTED } st = NONE;
	bool gap = false;	/* a blank line since the last text */
	int item_ind = 0;
	const char *l, *e;

	for (l = text; l && *l; l = *e ? e + 1 : e) {
		bool list = st == ITEM || st == INDENTED;
		const char *b, *sep;
		int ind;

		e = l + strcspn(l, "\n");
		ind = (int)strspn(l, " ");
		b = l + ind;
		if (b >= e) {
			gap = st != NONE;
			continue;
		}
		if (list && ind > item_ind && !gap) {
			line(f, b, (size_t)(e - b));	/* the lines under an item: its text, filled */
			continue;
		}
		sep = strstr(b, "  ");
		if (!ind) {
			/* back from a block: a paragraph, with the space between paragraphs after a blank line only */
			if (list)
				fputs(gap ? ".RE\n.PD\n.PP\n" : ".RE\n.PP\n.PD\n", f);
			else if (st == NONE || gap)
				fputs(".PP\n", f);
			st = PROSE;
		} else {
			if (!list || ind != item_ind) {
				if (list)
					fputs(".RE\n", f);
				fprintf(f, "%s.RS %dn\n.PD 0\n", gap ? ".sp\n" : "", ind);
			} else if (gap) {
				fputs(".sp\n", f);
			}
			if (sep && sep < e) {	/* TERM, then what it means where --help's column is */
				const char *d = sep + strspn(sep, " ");

				fprintf(f, ".TP %dn\n", (int)(d - b));
				line(f, b, (size_t)(sep - b));
				b = d;
				st = ITEM;
			} else {
				fputs(".PP\n", f);
				st = INDENTED;
			}
			item_ind = ind;
		}
		line(f, b, (size_t)(e - b));
		gap = false;
	}
	if (st == ITEM || st == INDENTED)
		fputs(".RE\n.PD\n", f);
}

/* One option: the tag (-X, --NAME ARG), then its help, '\n' breaking a line, an indented line indented. */
static void option(FILE *f, const struct cli_opt *o, const struct cli_usage *u)
{
	char buf[2048];
	const char *l, *e;
	size_t i;

	fputs(".TP\n", f);
	if (o->key > 0 && o->key < 128)
		fprintf(f, "\\fB\\-%c\\fR, ", o->key);
	fputs("\\fB\\-\\-", f);
	cli_man__put(f, o->name, strlen(o->name), false);
	fputs("\\fR", f);
	if (o->arg) {
		fputs(" \\fI", f);
		cli_man__put(f, o->arg, strlen(o->arg), false);
		fputs("\\fR", f);
	}
	fputc('\n', f);
	cli_opts__fill(buf, sizeof(buf), o->help ? o->help : "", u);
	for (l = buf; *l; l = *e ? e + 1 : e) {
		size_t ind = strspn(l, " ");

		e = l + strcspn(l, "\n");
		if (l != buf)
			fputs(".br\n", f);
		/* an indented line keeps its indent in unpaddable spaces */
		for (i = 0; i < ind; i++)
			fputs("\\ ", f);
		cli_man__put(f, l + ind, (size_t)(e - l) - ind, !ind);
		fputc('\n', f);
	}
}

/* Does text name "kinstr WORD" (WORD whole)? */
static bool names(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = text; p && (p = strstr(p, "kinstr ")); p++) {
		const char *w = p + 7;

		if (!strncmp(w, word, n) && !(w[n] >= 'a' && w[n] <= 'z') && w[n] != '-' && w[n] != '_')
			return true;
	}
	return false;
}

/* Does any of u's text (intro, outro, examples, an option's help) name "kinstr WORD"? */
static bool usage_names(const struct cli_usage *u, const char *word)
{
	size_t i;

	if (names(u->intro, word) || names(u->outro, word) || names(u->examples, word))
		return true;
	for (i = 0; u->opts[i].name || u->opts[i].common; i++) {
		struct cli_opt o = cli_opts__resolve(&u->opts[i]);

		if (names(o.help, word))
			return true;
	}
	return false;
}

static bool usage_has(const struct cli_usage *u, const char *word)
{
	size_t i;

	if ((u->intro && strstr(u->intro, word)) || (u->outro && strstr(u->outro, word)))
		return true;
	for (i = 0; u->opts[i].name || u->opts[i].common; i++) {
		struct cli_opt o = cli_opts__resolve(&u->opts[i]);

		if (o.help && strstr(o.help, word))
			return true;
	}
	return false;
}

/* The manual page's name for subcommand NAME: kinstr-NAME, kinstr-list for -l. */
const char *cli_man__page_name(const char *name, char *buf, size_t len)
{
	if (!strcmp(name, "-l") || !strcmp(name, "--list"))
		name = "list";
	snprintf(buf, len, "kinstr-%s", name);
	return buf;
}

/* The tools its text names that have manual pages of their own. */
static const char *const tools[] = { "babeltrace2(1)", "genhtml(1)", "trace-cmd(1)", "bpftrace(8)" };

void cli_man__page(const struct cli_usage *u, const char *summary, const struct cli_cmd *cmds, size_t n, FILE *f)
{
	const struct cli_opt *c = NULL;
	const char *l, *e;
	char page[64], other[64], tool[32];
	size_t i;

	cli_man__page_name(u->name, page, sizeof(page));
	cli_man__title(f, page);
	fputs(".SH NAME\n", f);
	cli_man__put(f, page, strlen(page), true);
	fputs(" \\- ", f);
	line(f, summary ? summary : u->verb, strlen(summary ? summary : u->verb));

	/* each line of the synopsis, the later ones naming kinstr NAME themselves */
	fputs(".SH SYNOPSIS\n", f);
	for (l = u->synopsis; *l; l = *e ? e + 1 : e) {
		const char *rest;

		l += strspn(l, " ");
		e = l + strcspn(l, "\n");
		if (l != u->synopsis)
			fputs(".br\n", f);
		rest = l;
		if (!strncmp(l, "kinstr ", 7) && !strncmp(l + 7, u->name, strlen(u->name)))
			rest = l + 7 + strlen(u->name) + strspn(l + 7 + strlen(u->name), " ");
		fputs("\\fBkinstr ", f);
		cli_man__put(f, u->name, strlen(u->name), false);
		fputs("\\fR ", f);
		line(f, rest, (size_t)(e - rest));
	}

	fputs(".SH DESCRIPTION\n", f);
	cli_man__blocks(f, u->intro);
	if (u->outro) {
		fputs(".PP\n", f);
		cli_man__blocks(f, u->outro);
	}

	fputs(".SH OPTIONS\n", f);
	for (i = 0; u->opts[i].name || u->opts[i].common; i++) {
		struct cli_opt o = cli_opts__resolve(&u->opts[i]);

		option(f, &o, u);
		if (o.common == CLI_OPT_COMMAND)
			c = &u->opts[i];
	}
	if (!u->opts[0].name && !u->opts[0].common)
		fputs("None but \\fB\\-h\\fR, \\fB\\-\\-help\\fR.\n", f);

	fputs(".SH EXIT STATUS\n.TP\n.B 0\nsuccess\n"
	      ".TP\n.B 1\nthe work failed (e.g. the module is not loaded, the kernel refused a probe)\n"
	      ".TP\n.B 2\na bad command line\n", f);
	if (c) {
		struct cli_opt o = cli_opts__resolve(c);

		/* the -c option's own help says whether the run ends with CMD's status */
		if (o.help && strstr(o.help, "exit with its status"))
			fputs(".PP\nWith \\fB\\-c\\fR \\fICMD\\fR: \\fICMD\\fR\\(aqs exit status, unless kinstr itself "
			      "failed.\n", f);
	}

	if (u->examples) {
		fputs(".SH EXAMPLES\n", f);
		for (l = u->examples; *l; l = *e ? e + 1 : e) {
			e = l + strcspn(l, "\n");
			if (!strncmp(l, "kinstr ", 7)) {
				fputs(".PP\n.nf\n\\fB", f);
				cli_man__put(f, l, (size_t)(e - l), false);
				fputs("\\fR\n.fi\n", f);
			} else {
				fputs(".RS 4\n", f);
				line(f, l, (size_t)(e - l));
				fputs(".RE\n", f);
			}
		}
	}

	/* kinstr(8), the subcommands the text names, the tools it names */
	fputs(".SH SEE ALSO\n.BR kinstr (8)", f);
	for (i = 0; i < n + 1; i++) {
		const char *name = i < n ? cmds[i].name : "-l";

		if (strcmp(name, u->name) && usage_names(u, name)) {
			cli_man__page_name(name, other, sizeof(other));
			fputs(",\n.BR ", f);
			cli_man__put(f, other, strlen(other), false);
			fputs(" (8)", f);
		}
	}
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(tool, sizeof(tool), "%.*s", (int)strcspn(tools[i], "("), tools[i]);
		if (usage_has(u, tool)) {
			fputs(",\n.BR ", f);
			cli_man__put(f, tool, strlen(tool), false);
			fprintf(f, " %s", tools[i] + strlen(tool));
		}
	}
	fputc('\n', f);
}
