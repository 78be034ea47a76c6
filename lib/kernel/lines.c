// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Source lines from DWARF through libdwfl (include/kinstr/lines.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <kinstr/lines.h>

struct lsym {
	const char *name;	/* libdwfl's */
	GElf_Addr addr;		/* in libdwfl's layout of the file */
};

struct lfile {
	char *module;		/* NULL: the core kernel */
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct lsym *syms;	/* functions, by name */
	size_t nsyms;
};

struct kinstr_lines {
	char *release;
	struct lfile *files;
	size_t n;
};

static const Dwfl_Callbacks offline = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct kinstr_lines *kinstr_lines__new(const char *release)
{
	struct kinstr_lines *l = calloc(1, sizeof(*l));

	if (!l || !release || !(l->release = strdup(release))) {
		free(l);
		errno = release ? ENOMEM : EINVAL;
		return NULL;
	}
	return l;
}

void kinstr_lines__free(struct kinstr_lines *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		dwfl_end(l->files[i].dwfl);
		free(l->files[i].syms);
		free(l->files[i].module);
		free(l->files[i].path);
	}
	free(l->files);
	free(l->release);
	free(l);
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static struct lfile *file_of(const struct kinstr_lines *l, const char *module)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (same(l->files[i].module, module))
			return &l->files[i];
	return NULL;
}

static int cmp_sym(const void *a, const void *b)
{
	return strcmp(((const struct lsym *)a)->name, ((const struct lsym *)b)->name);
}

int kinstr_lines__add(struct kinstr_lines *l, const char *module, const char *path)
{
	struct lfile f = { 0 }, *grown;
	Dwarf_Addr bias;
	int i, n;

	if (!l || !path)
		return -EINVAL;
	if (file_of(l, module))
		return -EEXIST;
	if (access(path, R_OK))
		return -ENOENT;
	f.dwfl = dwfl_begin(&offline);
	if (!f.dwfl)
		return -ENOMEM;
	f.mod = dwfl_report_offline(f.dwfl, module ? module : "kernel", path, -1);
	dwfl_report_end(f.dwfl, NULL, NULL);
	if (!f.mod) {
		dwfl_end(f.dwfl);
		return -ENOEXEC;
	}
	if (!dwfl_module_getdwarf(f.mod, &bias) || (n = dwfl_module_getsymtab(f.mod)) <= 0) {
		dwfl_end(f.dwfl);
		return -ENODATA;
	}
	f.syms = calloc((size_t)n, sizeof(*f.syms));
	if (!f.syms)
		goto nomem;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(f.mod, i, &sym, &addr, NULL, NULL, NULL);

		if (name && *name && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF)
			f.syms[f.nsyms++] = (struct lsym){ name, addr };
	}
	qsort(f.syms, f.nsyms, sizeof(*f.syms), cmp_sym);
	if (!(f.path = strdup(path)) || (module && !(f.module = strdup(module))))
		goto nomem;
	grown = realloc(l->files, (l->n + 1) * sizeof(*l->files));
	if (!grown)
		goto nomem;
	l->files = grown;
	l->files[l->n++] = f;
	return 0;
nomem:
	free(f.syms);
	free(f.path);
	free(f.module);
	dwfl_end(f.dwfl);
	return -ENOMEM;
}

/* The module's path relative to /lib/modules/REL, from modules.dep (names compare with - as _). */
static int module_relpath(const struct kinstr_lines *l, const char *module, char *out, size_t size)
{
	char path[PATH_MAX], line[4096];
	FILE *f;
	int found = -ENOENT;

	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", l->release);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (found && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *base, name[256];
		size_t i;

		if (!colon)
			continue;
		*colon = 0;
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		for (i = 0; base[i] && i + 1 < sizeof(name) && strncmp(base + i, ".ko", 3); i++)
			name[i] = base[i] == '-' ? '_' : base[i];
		name[i] = 0;
		if (!strcmp(name, module)) {
			snprintf(out, size, "%s", line);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

int kinstr_lines__add_default(struct kinstr_lines *l, const char *module)
{
	char path[PATH_MAX + 64], rel[PATH_MAX];
	int err = -ENOENT;

	if (!l)
		return -EINVAL;
	if (!module) {
		static const char *const fmt[] = { "/usr/lib/debug/boot/vmlinux-%s", "/usr/lib/debug/lib/modules/%s/vmlinux",
						   "/lib/modules/%s/build/vmlinux", "/boot/vmlinux-%s" };
		size_t i;

		for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]) && err; i++) {
			snprintf(path, sizeof(path), fmt[i], l->release);
			err = kinstr_lines__add(l, NULL, path);
		}
		return err == -ENOEXEC || err == -ENODATA ? -ENOENT : err;
	}
	if (module_relpath(l, module, rel, sizeof(rel)))
		return -ENOENT;
	/* the -dbg package's copy keeps the debug info the installed one lost to strip */
	snprintf(path, sizeof(path), "/usr/lib/debug/lib/modules/%s/%s", l->release, rel);
	err = kinstr_lines__add(l, module, path);
	if (err && err != -EEXIST) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s", l->release, rel);
		err = kinstr_lines__add(l, module, path);
	}
	return err == -ENOEXEC || err == -ENODATA ? -ENOENT : err;
}

const char *kinstr_lines__path(const struct kinstr_lines *l, const char *module)
{
	const struct lfile *f = l ? file_of(l, module) : NULL;

	return f ? f->path : NULL;
}

int kinstr_lines__find(struct kinstr_lines *l, const struct kinstr_func *f, uint64_t addr, const char **file,
		       int *line)
{
	struct lfile *lf = l && f ? file_of(l, f->module) : NULL;
	struct lsym key = { f ? f->name : NULL, 0 }, *s;
	const char *src;
	Dwfl_Line *ln;

	if (!lf)
		return -ENOENT;
	s = bsearch(&key, lf->syms, lf->nsyms, sizeof(*lf->syms), cmp_sym);
	if (!s)
		return -ESRCH;
	/* the same name twice: which one kallsyms gave is not known here */
	if ((s > lf->syms && !strcmp(s[-1].name, f->name)) || (s + 1 < lf->syms + lf->nsyms && !strcmp(s[1].name, f->name)))
		return -ESRCH;
	ln = dwfl_module_getsrc(lf->mod, s->addr + (addr - f->addr));
	src = ln ? dwfl_lineinfo(ln, NULL, line, NULL, NULL, NULL) : NULL;
	if (!src)
		return -ENODATA;
	*file = src;
	return 0;
}
