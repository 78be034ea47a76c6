// SPDX-License-Identifier: GPL-2.0
/*
 * kinstr batch: run kinstr command lines read from stdin, one per line, over one view of the
 * live kernel, so that a sweep of the whole kernel pays the analysis of the kernel (kallsyms,
 * text, reservations: tens of seconds under TCG) once, not once per command. Each command gets a
 * device of its own (its probes, timers and trace channel end with it). After each command the
 * line "batch: rc=N CMD" goes to stdout. The pseudo-command text-check compares the live core
 * text with the text read when the view was made.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/kernel.h>
#include <kinstr/kinstr.h>
#include "cli.h"

#define MAX_WORDS 65536

static const struct cli_opt batch_opts[] = { { 0 } };

static const struct cli_usage batch_usage = {
	.name = "batch", .synopsis = "< COMMANDS", .verb = "run",
	.intro = "Run kinstr command lines read from stdin (words split on blanks, no quoting; '#' starts a\n"
		 "comment line) over one view of the live kernel, analysed once. After each command it\n"
		 "prints 'batch: rc=N CMD'. The command text-check compares the live core text with the\n"
		 "text the view was read from and prints 'text-check: N bytes differ' (rc 1 if any),\n"
		 "naming the first functions that differ; bytes in a jump label's or static call's site\n"
		 "(the kernel rewrites those itself when a static key flips or a static call changes) are\n"
		 "named and counted apart, not in N. Exit status: 1 if any command failed.\n",
	.opts = batch_opts, .min_args = 0, .max_args = 0,
};

/*
 * Byte at of the core text is in a jump label's site or a static call's (5 bytes at most from
 * its start), which the kernel itself rewrites when a static key flips or a static call is
 * updated (networking's DO_ONCE keys flip on first use, for one): not kinstr's doing.
 */
static bool kernel_switched(const struct kinstr_kernel *k, unsigned long long at)
{
	unsigned long long key, s;
	int bit;

	for (s = at; s + 5 > at && s + 5 > 5; s--)
		if (!kinstr_kernel__jump_label(k, s, &key, &bit) || !kinstr_kernel__static_call(k, s, &key, &bit))
			return true;
	return false;
}

/* Live core text against the view's copy, made when the view was opened. */
static int text_check(void)
{
	struct kinstr_kernel *k = cli_kept_kernel();
	const struct kinstr_layout *l;
	unsigned long long a, len, diff = 0, kdiff = 0;
	const char *klast = NULL;
	int kshown = 0;
	const unsigned char *old;
	unsigned char *now;
	struct kinstr_dev *dev;
	const char *last = NULL;
	int shown = 0, err;

	if (!k) {	/* no command opened the kernel yet: open it now, as the reference */
		k = cli_open_kernel(NULL, &dev);
		if (!k)
			return CLI_FAIL;
		cli_close_kernel(k, dev);
		k = cli_kept_kernel();
	}
	l = kinstr_kernel__layout(k);
	len = l->text.end - l->text.start;
	old = kinstr_kernel__text(k, l->text.start, len);
	dev = kinstr_dev__open(NULL);
	/* what the commands left is freed after quiescence, their scopes' tracepoints then taken out */
	if (dev)
		kinstr_dev__sync(dev);
	now = malloc(len);
	err = dev && now && old ? kinstr_dev__read(dev, l->text.start, now, len) : -ENOMEM;
	if (err) {
		cli_err("text-check: cannot read the live text: %s", strerror(err < 0 ? -err : err));
		free(now);
		kinstr_dev__close(dev);
		return CLI_FAIL;
	}
	for (a = 0; a < len; a++) {
		const struct kinstr_func *f;
		unsigned long long at = l->text.start + a;

		if (old[a] == now[a])
			continue;
		f = kinstr_kernel__func_at(k, at);
		if (kernel_switched(k, at)) {
			/* a static key flipped or a static call updated since the view: the kernel's own patching */
			if (kshown < 10 && (!f || f->name != klast)) {
				printf("text-check: the kernel switched a jump label or static call at %s+0x%llx\n",
				       f ? f->name : "?", f ? at - f->addr : a);
				klast = f ? f->name : NULL;
				kshown++;
			}
			kdiff++;
			continue;
		}
		diff++;
		if (shown < 10 && (!f || f->name != last)) {
			printf("text-check: differs at %s+0x%llx\n", f ? f->name : "?", f ? at - f->addr : a);
			last = f ? f->name : NULL;
			shown++;
		}
	}
	if (kdiff)
		printf("text-check: %llu bytes at jump labels and static calls the kernel switched (not counted)\n", kdiff);
	printf("text-check: %llu bytes differ\n", diff);
	free(now);
	kinstr_dev__close(dev);
	return diff ? CLI_FAIL : CLI_OK;
}

/*
 * One command, with the batch's stdout back on fd 1 after it: `count -o FILE` and `profile -o FILE`
 * freopen() stdout onto FILE (glibc keeps fd 1 for it), which in a batch sent every later line,
 * "batch: rc=N" included, into FILE, and a caller waiting for that line (sweep.py) waited forever
 * while the batch waited for its next command.
 */
static int run_keeping_stdout(int nw, char **words)
{
	int saved, rc;

	fflush(stdout);
	/* close-on-exec: a command's -c CMD must not inherit it (the cover sweep's reference saw its close()s) */
	saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	rc = cli_batch_dispatch(nw, words);
	fflush(stdout);
	if (saved >= 0) {
		if (dup2(saved, STDOUT_FILENO) < 0) {
			cli_err("batch: cannot restore stdout: %s", strerror(errno));
			rc = CLI_FAIL;
		}
		close(saved);
		clearerr(stdout);
	}
	return rc;
}

int cmd_batch(int argc, char **argv)
{
	char *line = NULL, **words = NULL;
	size_t cap = 0;
	ssize_t n;
	int worst = CLI_OK;

	struct cli_common co;
	int ret;

	cli_common__init(&co);
	ret = cli_opts__parse(&batch_usage, argc, argv, &co, NULL, NULL);
	if (ret != CLI_GO_ON)
		return ret;
	optind = 0;	/* glibc: initialise getopt again for the commands read */
	words = calloc(MAX_WORDS + 1, sizeof(*words));
	if (!words)
		return CLI_FAIL;
	cli_keep_kernel = true;
	while (!cli_stop && (n = getline(&line, &cap, stdin)) > 0) {
		char *save = NULL, *w;
		int nw = 0, rc;

		for (w = strtok_r(line, " \t\r\n", &save); w && nw < MAX_WORDS; w = strtok_r(NULL, " \t\r\n", &save))
			words[nw++] = w;
		words[nw] = NULL;
		if (!nw || words[0][0] == '#')
			continue;
		if (!strcmp(words[0], "text-check")) {
			rc = text_check();
		} else if (!strcmp(words[0], "batch")) {
			cli_err("batch: no batch inside a batch");
			rc = CLI_USAGE;
		} else {
			optind = 0;	/* glibc: initialise getopt again for the next command */
			rc = run_keeping_stdout(nw, words);
		}
		fflush(stderr);
		printf("batch: rc=%d %s\n", rc, words[0]);
		fflush(stdout);
		if (rc != CLI_OK)
			worst = CLI_FAIL;
	}
	free(line);
	free(words);
	cli_release_kernel();
	cli_keep_kernel = false;
	return worst;
}
