// SPDX-License-Identifier: GPL-2.0
/*
 * Source lines from DWARF (lib/kernel/lines.c) on an object the test compiles with gcc -g, relocatable
 * as a kernel module is: every offset of a function maps to a line of that function's source,
 * its first to the function's opening, the body's to more than one line; the refusals: a file
 * without DWARF, no file, a function the file lacks, a module with no file given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/lines.h>
#include "check.h"

/* lines 1..9; tl_fn spans 3..9 */
static const char src[] =
	"/* kinstr test_lines */\n"
	"int tl_other(int x) { return x; }\n"
	"int tl_fn(int x)\n"
	"{\n"
	"\tif (x > 3)\n"
	"\t\treturn x * 7 + tl_other(x);\n"
	"\tx += tl_other(2);\n"
	"\treturn x + 1;\n"
	"}\n";

static char dir[] = "/tmp/kinstr-test-lines-XXXXXX";

static int compile(const char *name, const char *flags)
{
	char cmd[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/tl.c", dir);
	f = fopen(cmd, "w");
	if (!f || fputs(src, f) < 0 || fclose(f))
		return -1;
	snprintf(cmd, sizeof(cmd), "cc -O1 -fno-inline %s -c -o %s/%s %s/tl.c", flags, dir, name, dir);
	return system(cmd);
}

static void t_lines_of_a_module(void)
{
	struct kinstr_func f = { .addr = 0xffffffffc0001000ull, .size = 64, .type = 't', .name = "tl_fn",
				 .module = "tl" };
	struct kinstr_func missing = f, core = f;
	struct kinstr_lines *l;
	char path[256];
	const char *file = NULL;
	int line = 0, lo = 100, hi = 0, first = 0, off, err;

	if (!mkdtemp(dir) || compile("tl.ko", "-g") || compile("nodwarf.ko", "-g0"))
		SKIP("no C compiler to make the object");
	l = kinstr_lines__new("6.1.0-test");
	CHECK(l != NULL, "new: %s", strerror(errno));
	if (!l)
		return;
	snprintf(path, sizeof(path), "%s/tl.ko", dir);
	CHECK((err = kinstr_lines__add(l, "tl", path)) == 0, "add: %s", strerror(-err));
	CHECK(kinstr_lines__add(l, "tl", path) == -EEXIST, "a second file for tl accepted");
	CHECK(!strcmp(kinstr_lines__path(l, "tl"), path), "path %s", kinstr_lines__path(l, "tl"));
	for (off = 0; off < 24; off++) {
		err = kinstr_lines__find(l, &f, f.addr + (unsigned int)off, &file, &line);
		if (err == -ENODATA)
			continue;	/* past the function's code */
		CHECK(err == 0, "+%d: %s", off, strerror(-err));
		if (err)
			break;
		CHECK(strstr(file, "tl.c") != NULL, "+%d: file %s", off, file);
		if (!off)
			first = line;
		lo = line < lo ? line : lo;
		hi = line > hi ? line : hi;
	}
	/* the opening (3 or 4: the prologue's line), the body's lines within the function, several */
	CHECK(first == 3 || first == 4, "the entry's line is %d", first);
	CHECK(lo >= 3 && hi <= 9 && hi > lo, "lines %d..%d of a function on lines 3..9", lo, hi);
	missing.name = "tl_none";
	CHECK(kinstr_lines__find(l, &missing, missing.addr, &file, &line) == -ESRCH, "a function it lacks found");
	core.module = NULL;
	CHECK(kinstr_lines__find(l, &core, core.addr, &file, &line) == -ENOENT, "the core's lines without a file");
	snprintf(path, sizeof(path), "%s/nodwarf.ko", dir);
	CHECK(kinstr_lines__add(l, "nodwarf", path) == -ENODATA, "a file without DWARF taken");
	snprintf(path, sizeof(path), "%s/absent.ko", dir);
	CHECK(kinstr_lines__add(l, "absent", path) == -ENOENT, "no file taken");
	kinstr_lines__free(l);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		printf("     (could not remove %s)\n", dir);
}

int main(void)
{
	RUN(t_lines_of_a_module);
	return check_done();
}
