/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Zeroed allocations that may be huge, for libkinstr's own use. The kernel's text holds a few
 * megabyte-long runs of int3 fill (up to the next 2 MiB boundary after the kprobes text, the
 * entry text and the SRSO alias thunk), each one "function" of a million instructions whose CFG
 * and sites take hundreds of MiB. Faulting that in 4 KiB at a time cost as much as analysing
 * the rest of the kernel, so a big allocation comes straight from mmap with transparent huge
 * pages asked for (a hint: it still works where THP is off). The caller passes the size back
 * to free it.
 */
#ifndef KINSTR_LIB_ZALLOC_H
#define KINSTR_LIB_ZALLOC_H

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

/* only the int3 runs come near: the largest real function (~4,000 instructions) takes < 1 MiB */
#define KINSTR_ZALLOC_BIG	(4u << 20)

static inline void *kinstr__zalloc(size_t size)
{
	void *p;

	if (size < KINSTR_ZALLOC_BIG)
		return calloc(1, size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static inline void kinstr__zfree(void *p, size_t size)
{
	if (!p)
		return;
	if (size < KINSTR_ZALLOC_BIG)
		free(p);
	else
		munmap(p, size);
}

#endif
