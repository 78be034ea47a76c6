// SPDX-License-Identifier: GPL-2.0
/* The CLI's small helpers that every file of cli/ may call (and that call nothing of cli/). */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

int (*cli_batch_dispatch)(int argc, char **argv);

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("kinstr: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}
