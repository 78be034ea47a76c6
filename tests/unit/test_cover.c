// SPDX-License-Identifier: GPL-2.0
/*
 * Coverage through the code cache (lib/cache/cover.c, kinstr_lcov__write in lib/results/lcov.c) on the
 * shipped 6.1 snapshot, without the module: the functions names, globs and comma lists denote, each
 * once and in order, and the sentences of those that denote none; the options' contract; the plan
 * (a refused function listed and left out, none left an error) and what needs the device refused
 * without one; source lines from a file named for its module, and a file that is no good; the lcov
 * tracefile of a planned set, and a place it cannot go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kinstr/cover.h>
#include <kinstr/lcov.h>
#include <kinstr/lines.h>
#include "check.h"

#define SNAP "tests/data/sample-6.1.0-57-amd64.snap"

static struct kinstr_kernel *k;

static struct kinstr_cover *cover(const char *const *names, size_t n)
{
	struct kinstr_cover *cv = kinstr_cover__new(NULL, k, NULL);
	struct kinstr_why why;
	size_t i;

	for (i = 0; cv && i < n; i++)
		CHECK(kinstr_cover__add(cv, names[i], &why) == 0, "%s: %s", names[i], why.msg);
	return cv;
}

static size_t matching(const char *glob)
{
	size_t i, m = 0;

	for (i = 0; i < kinstr_kernel__func_cnt(k); i++)
		m += kinstr__glob_match(glob, kinstr_kernel__func(k, i)->name) != 0;
	return m;
}

static size_t index_of(const struct kinstr_func *f)
{
	size_t i;

	for (i = 0; i < kinstr_kernel__func_cnt(k) && kinstr_kernel__func(k, i) != f; i++)
		;
	return i;
}

static void t_add_each_once_in_order(void)
{
	const char *names[] = { "vfs_llseek", "vfs_*", "vfs_read", "vfs_open,vfs_llseek", "ksys_read" };
	struct kinstr_cover *cv;
	size_t i, j, n, want = matching("vfs_*") + 1;

	if (!k)
		SKIP("no snapshot");
	cv = cover(names, 5);
	CHECK(cv != NULL, "new: %s", strerror(errno));
	if (!cv)
		return;
	n = kinstr_cover__func_cnt(cv);
	CHECK(n == want, "%zu functions, the names denote %zu", n, want);
	CHECK(n && !strcmp(kinstr_cover__func(cv, 0)->name, "vfs_llseek"), "the first is %s",
	      n ? kinstr_cover__func(cv, 0)->name : "none");
	CHECK(n && !strcmp(kinstr_cover__func(cv, n - 1)->name, "ksys_read"), "the last is %s",
	      n ? kinstr_cover__func(cv, n - 1)->name : "none");
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			CHECK(kinstr_cover__func(cv, i) != kinstr_cover__func(cv, j), "%s twice",
			      kinstr_cover__func(cv, i)->name);
	/* the glob's functions (all but the first and the last) in the kernel's order */
	for (i = 2; i + 1 < n; i++)
		CHECK(index_of(kinstr_cover__func(cv, i - 1)) < index_of(kinstr_cover__func(cv, i)), "%s before %s",
		      kinstr_cover__func(cv, i - 1)->name, kinstr_cover__func(cv, i)->name);
	CHECK(kinstr_cover__func(cv, n) == NULL, "a function past the end");
	kinstr_cover__free(cv);
}

static void t_add_says_what_denotes_nothing(void)
{
	const struct kinstr_func *two[2];
	struct kinstr_cover *cv;
	struct kinstr_why why;
	char spec[128];
	int err;

	if (!k)
		SKIP("no snapshot");
	cv = kinstr_cover__new(NULL, k, NULL);
	if (!cv)
		return;
	err = kinstr_cover__add(cv, "kinstr_no_such", &why);
	CHECK(err == -ENOENT && why.err == -ENOENT, "%d", err);
	CHECK(!strcmp(why.msg, "no function 'kinstr_no_such' in the kernel's symbols"), "'%s'", why.msg);
	err = kinstr_cover__add(cv, "kinstr_no_such*", &why);
	CHECK(err == -ENOENT && !strcmp(why.msg, "no function matches 'kinstr_no_such*'"), "%d '%s'", err, why.msg);
	err = kinstr_cover__add(cv, "kinstr_a,kinstr_b", &why);
	CHECK(err == -ENOENT && !strcmp(why.msg, "no function matches 'kinstr_a,kinstr_b'"), "%d '%s'", err, why.msg);
	err = kinstr_cover__add(cv, "native_apic_msr_read", &why);
	CHECK(err == -ENOTUNIQ && strstr(why.msg, "name one as NAME@ADDR"), "%d '%s'", err, why.msg);
	CHECK(kinstr_cover__func_cnt(cv) == 0, "%zu functions added", kinstr_cover__func_cnt(cv));
	/* one of the two by its address, once */
	CHECK(kinstr_kernel__lookup(k, "native_apic_msr_read", two, 2) == 2, "not two native_apic_msr_read");
	snprintf(spec, sizeof(spec), "native_apic_msr_read@0x%llx", (unsigned long long)two[1]->addr);
	CHECK((err = kinstr_cover__add(cv, spec, &why)) == 0, "%s: %d %s", spec, err, why.msg);
	CHECK(kinstr_cover__add(cv, spec, &why) == 0, "%s: a second time refused", spec);
	CHECK(kinstr_cover__func_cnt(cv) == 1 && kinstr_cover__func(cv, 0) == two[1], "%zu functions",
	      kinstr_cover__func_cnt(cv));
	kinstr_cover__free(cv);
}

static void t_opts(void)
{
	struct { struct kinstr_cover_opts o; long tail; } big = { .o = { .sz = sizeof(big) } };
	struct kinstr_cover_opts o = { .sz = sizeof(o), .cache_flags = 1u << 7 };
	struct kinstr_cover *cv;

	if (!k)
		SKIP("no snapshot");
	errno = 0;
	CHECK(!kinstr_cover__new(NULL, k, &o) && errno == EINVAL, "an unknown cache flag taken");
	o.cache_flags = KINSTR_CACHE_F_EDGES;
	o.sz = 4;
	CHECK(!kinstr_cover__new(NULL, k, &o) && errno == EINVAL, "sz below the size field taken");
	cv = kinstr_cover__new(NULL, k, &big.o);
	CHECK(cv != NULL, "a newer caller's struct with a zero tail refused");
	kinstr_cover__free(cv);
	big.tail = 1;
	CHECK(!kinstr_cover__new(NULL, k, &big.o) && errno == EINVAL, "a newer caller's option ignored");
	CHECK(!kinstr_cover__new(NULL, NULL, NULL) && errno == EINVAL, "no kernel taken");
}

/* vfs_fallocate: the snapshot knows no static call's trampoline, so the code cache refuses it */
static void t_plan_lists_the_refused(void)
{
	const char *names[] = { "vfs_read", "vfs_fallocate", "vfs_llseek" }, *refused[] = { "vfs_fallocate" };
	const struct kinstr_cover_refusal *rf;
	struct kinstr_cover *cv;
	struct kinstr_why why;
	size_t n;
	int err;

	if (!k)
		SKIP("no snapshot");
	cv = cover(names, 3);
	if (!cv)
		return;
	CHECK((err = kinstr_cover__plan(cv, &why)) == 0, "%d: %s", err, why.msg);
	rf = kinstr_cover__refused(cv, &n);
	CHECK(n == 1 && rf[0].f == kinstr_cover__func(cv, 1) && !rf[0].at_install &&
	      rf[0].r.code == KINSTR_CACHE_R_STATIC_CALL, "%zu refused", n);
	CHECK(kinstr_cacheset__cnt(kinstr_cover__set(cv)) == 2, "%zu in the set",
	      kinstr_cacheset__cnt(kinstr_cover__set(cv)));
	CHECK(kinstr_cover__plan(cv, &why) == -EBUSY, "planned twice");
	CHECK(kinstr_cover__add(cv, "ksys_read", &why) == -EBUSY, "added after the plan");
	CHECK(kinstr_cover__install(cv, 0, &why) == -EINVAL, "installed without a device");
	errno = 0;
	CHECK(!kinstr_cover_once__new(cv) && errno == EINVAL, "one-shot probes without a device");
	kinstr_cover__free(cv);

	cv = cover(refused, 1);
	if (!cv)
		return;
	CHECK(kinstr_cover__plan(cv, &why) == -ENOENT, "a set of none planned");
	CHECK(!strncmp(why.msg, "no function left to cover (1 refused, the first: ", 48), "'%s'", why.msg);
	kinstr_cover__free(cv);
}

static void t_lines(void)
{
	char dir[] = "/tmp/kinstr-test-cover-XXXXXX", cmd[512], ko[256], txt[256];
	const char *files[2] = { ko, txt };
	struct kinstr_cover *cv;
	struct kinstr_lines *l;
	struct kinstr_why why;
	size_t bad = 99;
	FILE *f;

	if (!k)
		SKIP("no snapshot");
	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	snprintf(cmd, sizeof(cmd), "%s/m.c", dir);
	f = fopen(cmd, "w");
	if (!f || fputs("int tc_fn(int x) { return x + 1; }\n", f) < 0 || fclose(f))
		SKIP("cannot write the source");
	snprintf(ko, sizeof(ko), "%s/tc-mod.ko", dir);
	snprintf(cmd, sizeof(cmd), "cc -g -c -o %s %s/m.c", ko, dir);
	if (system(cmd))
		SKIP("no C compiler to make the object");
	snprintf(txt, sizeof(txt), "%s/m.c", dir);
	/* no function: nothing but the files */
	cv = kinstr_cover__new(NULL, k, NULL);
	if (!cv)
		return;
	l = kinstr_cover__lines(cv, files, 1, &bad, &why);
	CHECK(l != NULL, "%s", why.msg);
	CHECK(l && kinstr_lines__path(l, "tc_mod") && !strcmp(kinstr_lines__path(l, "tc_mod"), ko),
	      "the file not read as module tc_mod's");
	kinstr_lines__free(l);
	CHECK(bad == 99, "*bad set: %zu", bad);
	l = kinstr_cover__lines(cv, files, 2, &bad, &why);
	CHECK(!l && bad == 1 && why.err == -ENOEXEC, "a C source taken for DWARF (%zu, %d)", bad, why.err);
	snprintf(cmd, sizeof(cmd), "%s: not an ELF file with debug info", txt);
	CHECK(!strcmp(why.msg, cmd), "'%s'", why.msg);
	kinstr_lines__free(l);
	kinstr_cover__free(cv);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("     (could not remove %s)\n", dir);
}

static void t_lcov_of_a_set(void)
{
	const char *names[] = { "vfs_read", "vfs_llseek", "vfs_open" };
	char dir[] = "/tmp/kinstr-test-cover-XXXXXX", path[256], line[512];
	struct kinstr_cover *cv;
	struct kinstr_why why;
	size_t records = 0;
	FILE *f;
	int err;

	if (!k)
		SKIP("no snapshot");
	cv = cover(names, 3);
	if (!cv || kinstr_cover__plan(cv, &why) || !mkdtemp(dir)) {
		kinstr_cover__free(cv);
		CHECK(0, "no plan or no directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/cover.info", dir);
	CHECK((err = kinstr_lcov__write(path, k, kinstr_cover__set(cv), NULL, &why)) == 0, "%d: %s", err, why.msg);
	f = fopen(path, "r");
	CHECK(f != NULL, "%s not written", path);
	while (f && fgets(line, sizeof(line), f))
		records += !strcmp(line, "end_of_record\n");
	if (f)
		fclose(f);
	CHECK(records == 3, "%zu records", records);
	snprintf(path, sizeof(path), "%s/none/cover.info", dir);
	err = kinstr_lcov__write(path, k, kinstr_cover__set(cv), NULL, &why);
	snprintf(line, sizeof(line), "%s/none/cover.info.src: %s", dir, strerror(ENOENT));
	CHECK(err == -ENOENT && !strcmp(why.msg, line), "%d '%s'", err, why.msg);
	kinstr_cover__free(cv);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		printf("     (could not remove %s)\n", dir);
}

int main(void)
{
	k = kinstr_kernel__open_snapshot(SNAP);
	RUN(t_add_each_once_in_order);
	RUN(t_add_says_what_denotes_nothing);
	RUN(t_opts);
	RUN(t_plan_lists_the_refused);
	RUN(t_lines);
	RUN(t_lcov_of_a_set);
	kinstr_kernel__close(k);
	return check_done();
}
