/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Source lines of kernel code from DWARF (elfutils' libdwfl): the core kernel's from a vmlinux
 * with debug info (Debian's linux-image-REL-dbg puts it at /usr/lib/debug/boot/vmlinux-REL), a
 * module's from its .ko (the -dbg package's copy under /usr/lib/debug/lib/modules/REL, or a .ko
 * built with debug info, as kinstr's test modules are). An address is looked up by its
 * function's name and its offset in the function, so KASLR and a module's load address do not
 * matter; a name the file has twice (static functions of the same name) is not guessed.
 */
#ifndef KINSTR_LINES_H
#define KINSTR_LINES_H

#include <stdint.h>
#include <kinstr/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kinstr_lines;

/* For kernel release (the default paths are its); NULL with errno set. */
struct kinstr_lines *kinstr_lines__new(const char *release);
void kinstr_lines__free(struct kinstr_lines *l);
/*
 * Read module's (NULL: the core kernel's) DWARF from path. 0; -ENOENT (no file), -ENOEXEC (not
 * an ELF file libdwfl reads), -ENODATA (no line table), -EEXIST (one already), -ENOMEM.
 */
int kinstr_lines__add(struct kinstr_lines *l, const char *module, const char *path);
/* The same from the first of the usual paths that has it (see above); -ENOENT when none does. */
int kinstr_lines__add_default(struct kinstr_lines *l, const char *module);
/* The file module's (NULL: the core's) lines come from, or NULL. */
const char *kinstr_lines__path(const struct kinstr_lines *l, const char *module);
/*
 * The source line of addr in f: 0 with *file (valid while l is) and *line; -ENOENT no DWARF for
 * f's module (or the core), -ESRCH f is not in it or twice, -ENODATA no line there.
 */
int kinstr_lines__find(struct kinstr_lines *l, const struct kinstr_func *f, uint64_t addr, const char **file,
		       int *line);

#ifdef __cplusplus
}
#endif
#endif
