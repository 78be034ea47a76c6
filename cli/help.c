// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr help: kinstr's usage or a command's, its manual page, or its options for the shell's
 * completion. A command's every form comes from running it with --help while cli_help_form says
 * which to print, so that each is drawn from the one table its parser reads (cli/opts.c), and any
 * command of main.c's table (handed over by main, which this file must not call) has them without
 * a list here.
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"

/* main.c's table */
static const struct cli_cmd *cmds;
static size_t ncmds;
/* the page being printed: its NAME line */
static const char *page_summary;

void cli_help__table(const struct cli_cmd *c, size_t n)
{
	cmds = c;
	ncmds = n;
}

/* cli_help_print for --man: the page of the command that runs with --help */
static void man_print(const struct cli_usage *u, FILE *f)
{
	cli_man__page(u, page_summary, cmds, ncmds, f);
}

/* kinstr's own usage: its synopsis lines, each with what it does (or NULL) */
static const struct {
	const char *args, *what;
} main_synopsis[] = {
	{ "[--version] [--help] COMMAND [ARGS]", NULL },
	{ "-l [GLOB]", "list the functions that can be probed" },
	{ "help [--man] [COMMAND]", "a command's usage, or its manual page" },
};
static const char main_about[] = "Fine-grained dynamic instrumentation of the running Linux kernel.";
static const char main_more[] =
	"'kinstr COMMAND --help' (or 'kinstr help COMMAND') tells more about each, and\n"
	"'kinstr help --man COMMAND | man -l -' shows its manual page. kinstr needs root\n"
	"and the kinstr module loaded (modprobe kinstr; insmod kmod/kinstr.ko in a build\n"
	"tree): 'kinstr doctor' checks what is missing and says what to do.\n";
/* what main() takes itself (by name, not through getopt) */
static const struct cli_opt main_opts[] = {
	{ 0, "help", 'h', NULL, "print the usage: the commands and what each does" },
	{ 0, "version", 0, NULL, "print kinstr's version" },
	{ 0, "list", 'l', NULL, "list the functions matching GLOB (shell globs, comma-separated; default: all) "
				"whose entry can be probed; see kinstr-list(8)" },
	{ 0 },
};
static const char help_summary[] = "print a command's usage, its manual page or its options";
static const char list_summary[] = "list the functions that can be probed";

enum { O_MAN = CLI_KEY_OWN, O_OPTIONS, O_COMMANDS };
static const struct cli_opt help_opts[] = {
	{ 0, "man", O_MAN, NULL, "print the manual page instead, as roff ('man -l -' reads it): kinstr(8) "
				 "without COMMAND, else kinstr-COMMAND(8)" },
	{ 0, "options", O_OPTIONS, NULL, "print the options COMMAND's parser takes (kinstr's own without COMMAND): "
					 "its synopsis on one line, then an option a line, --NAME[=ARG] [-X] (what "
					 "the bash completion reads)" },
	{ 0, "commands", O_COMMANDS, NULL, "print every command (help and -l too), one a line, with its manual "
					   "page's name" },
	{ 0 },
};
static const struct cli_usage help_usage = {
	.name = "help", .synopsis = "[--man|--options] [COMMAND]\n       kinstr help --commands", .verb = "print",
	.intro = "Print kinstr's usage (without COMMAND) or COMMAND's, as 'kinstr COMMAND --help'\n"
		 "does. COMMAND is one of the commands 'kinstr --help' lists, or list (or -- -l)\n"
		 "for 'kinstr -l'. The usage, the manual page and the options the completion offers\n"
		 "are drawn from the one table COMMAND's parser reads.\n\n",
	.examples = "kinstr help --man count | man -l -\n"
		    "read kinstr-count(8) before it is installed\n",
	.opts = help_opts, .min_args = 0, .max_args = 1,
};

static int help_opt(void *ctx, int key, const char *arg)
{
	int *mode = ctx;

	if (*mode) {
		cli_err("help: --man, --options and --commands go alone");
		return CLI_USAGE;
	}
	*mode = key;
	return 0;
}

static void main_text(FILE *f)
{
	int w = 0;
	size_t i, n = ncmds;

	for (i = 0; i < sizeof(main_synopsis) / sizeof(main_synopsis[0]); i++)
		if (main_synopsis[i].what && (int)strlen(main_synopsis[i].args) > w)
			w = (int)strlen(main_synopsis[i].args);
	for (i = 0; i < sizeof(main_synopsis) / sizeof(main_synopsis[0]); i++) {
		fprintf(f, "%s kinstr ", i ? "      " : "usage:");
		if (main_synopsis[i].what)
			fprintf(f, "%-*s  %s\n", w, main_synopsis[i].args, main_synopsis[i].what);
		else
			fprintf(f, "%s\n", main_synopsis[i].args);
	}
	fprintf(f, "\n%s\n\ncommands:\n", main_about);
	for (i = 0; i < n; i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "  %-10s %s\n", "help", help_summary);
	fprintf(f, "\n%s", main_more);
}

/* a cli_opt as a .TP entry: -X, --NAME, then its help */
static void main_option(FILE *f, const struct cli_opt *o)
{
	fputs(".TP\n", f);
	if (o->key > 0 && o->key < 128)
		fprintf(f, "\\fB\\-%c\\fR, ", o->key);
	fprintf(f, "\\fB\\-\\-%s\\fR\n", o->name);
	cli_man__put(f, o->help, strlen(o->help), true);
	fputc('\n', f);
}

/* kinstr(8): the synopsis, the commands (each with its page), kinstr's own options */
static void main_man(FILE *f)
{
	char page[64];
	size_t i, n = ncmds;

	cli_man__title(f, "kinstr");
	/* NAME's line: the about line, lower case and without its full stop */
	fprintf(f, ".SH NAME\nkinstr \\- %c%.*s\n.SH SYNOPSIS\n", main_about[0] - 'A' + 'a',
		(int)strlen(main_about) - 2, main_about + 1);
	for (i = 0; i < sizeof(main_synopsis) / sizeof(main_synopsis[0]); i++) {
		fputs(i ? ".br\n\\fBkinstr\\fR " : "\\fBkinstr\\fR ", f);
		cli_man__put(f, main_synopsis[i].args, strlen(main_synopsis[i].args), false);
		fputc('\n', f);
	}
	fprintf(f, ".SH DESCRIPTION\n%s\n.PP\n", main_about);
	cli_man__blocks(f, main_more);
	fputs(".SH COMMANDS\n", f);
	for (i = 0; i < n + 2; i++) {
		const char *name = i < n ? cmds[i].name : i == n ? "-l" : "help";
		const char *what = i < n ? cmds[i].summary : i == n ? list_summary : help_summary;

		fputs(".TP\n\\fBkinstr ", f);
		cli_man__put(f, name, strlen(name), false);
		fputs("\\fR\n", f);
		cli_man__put(f, what, strlen(what), true);
		cli_man__page_name(name, page, sizeof(page));
		fputs(" (\\fB", f);
		cli_man__put(f, page, strlen(page), false);
		fputs("\\fR(8))\n", f);
	}
	fputs(".SH OPTIONS\n", f);
	for (i = 0; main_opts[i].name; i++)
		main_option(f, &main_opts[i]);
	fputs(".SH EXIT STATUS\n.TP\n.B 0\nsuccess\n"
	      ".TP\n.B 1\nthe work failed (e.g. the module is not loaded, the kernel refused a probe)\n"
	      ".TP\n.B 2\na bad command line\n"
	      ".PP\nEach command\\(aqs page says what else it may exit with.\n"
	      ".SH SEE ALSO\n", f);
	for (i = 0; i < n + 2; i++) {
		cli_man__page_name(i < n ? cmds[i].name : i == n ? "-l" : "help", page, sizeof(page));
		fputs(i ? ",\n.BR " : ".BR ", f);
		cli_man__put(f, page, strlen(page), false);
		fputs(" (8)", f);
	}
	fputc('\n', f);
}

void cli_help__main(FILE *f, bool man)
{
	if (man)
		main_man(f);
	else
		main_text(f);
}

int cmd_help(int argc, char **argv)
{
	int (*run)(int argc, char **argv) = NULL;
	const char *summary = NULL, *name;
	char page[64], *sub[3];
	struct cli_common co;
	int mode = 0, ret;
	size_t i, n = ncmds;

	cli_common__init(&co);
	ret = cli_opts__parse(&help_usage, argc, argv, &co, help_opt, &mode);
	if (ret != CLI_GO_ON)
		return ret;
	if (mode == O_COMMANDS) {
		if (optind < argc) {
			cli_err("help: --commands takes no COMMAND");
			return CLI_USAGE;
		}
		for (i = 0; i < n; i++)
			printf("%s %s\n", cmds[i].name, cli_man__page_name(cmds[i].name, page, sizeof(page)));
		printf("help %s\n", cli_man__page_name("help", page, sizeof(page)));
		printf("-l %s\n", cli_man__page_name("-l", page, sizeof(page)));
		return CLI_OK;
	}
	if (optind == argc) {
		if (mode == O_OPTIONS) {
			printf("usage: kinstr %s\n", main_synopsis[0].args);
			for (i = 0; main_opts[i].name; i++)
				printf(main_opts[i].key ? "--%s -%c\n" : "--%s\n", main_opts[i].name, main_opts[i].key);
		} else {
			cli_help__main(stdout, mode == O_MAN);
		}
		return CLI_OK;
	}
	name = argv[optind];
	for (i = 0; i < n && !run; i++)
		if (!strcmp(name, cmds[i].name))
			run = cmds[i].run, summary = cmds[i].summary;
	if (!strcmp(name, "help"))
		run = cmd_help, summary = help_summary;
	if (!strcmp(name, "-l") || !strcmp(name, "--list") || !strcmp(name, "list"))
		run = cmd_list, summary = list_summary, name = "-l";
	if (!run) {
		cli_err("help: no command '%s' (see 'kinstr --help')", name);
		return CLI_USAGE;
	}
	/* COMMAND --help, printed in the form asked for */
	cli_help_form = mode == O_MAN ? CLI_HELP_PRINT : mode == O_OPTIONS ? CLI_HELP_OPTIONS : CLI_HELP_TEXT;
	cli_help_print = man_print;
	page_summary = summary;
	sub[0] = (char *)name;
	sub[1] = (char *)"--help";
	sub[2] = NULL;
	optind = 0;	/* glibc: initialise getopt again for COMMAND's parser */
	ret = run(2, sub);
	cli_help_form = CLI_HELP_TEXT;
	cli_help_print = NULL;
	return ret;
}
