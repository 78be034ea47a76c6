/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A kinstr trace (CTF) written again as trace-cmd's trace.dat, version 6, which `trace-cmd report`
 * and KernelShark read: system "kinstr", an event per probe with its values as fields.
 */
#ifndef KINSTR_TRACEDAT_H
#define KINSTR_TRACEDAT_H

#include <stddef.h>
#include <stdint.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The trace in dir as out: 0 with *nevents written, or -errno and why. */
int kinstr_tracedat__from_ctf(const char *dir, const char *out, uint64_t *nevents, struct kinstr_why *why);

#ifdef __cplusplus
}
#endif
#endif
