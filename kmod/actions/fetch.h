/* SPDX-License-Identifier: GPL-2.0 */
/* What a probe reads at its site (fetch.c): a spec's values from the site's registers and memory. */
#ifndef KINSTR_KMOD_FETCH_H
#define KINSTR_KMOD_FETCH_H

#include "base.h"

struct kinstr_trace_val;
struct pt_regs;

/* Bytes value v takes in a record (and in a tally's key): 8, or a string's round_up(size, 8). */
u32 kinstr_val_bytes(const struct kinstr_trace_val *v);
/*
 * Value v at the site whose registers are regs into out[kinstr_val_bytes(v)], fault-safe: false
 * if it could not be read (a number then reads 0, a string ""). Any context.
 */
bool kinstr_val_fetch(const struct kinstr_trace_val *v, const struct pt_regs *regs, u8 *out);

#endif
