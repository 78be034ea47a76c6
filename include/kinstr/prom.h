/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Prometheus text exposition (format 0.0.4, what `promtool check metrics` checks): metric families
 * with HELP and TYPE, samples with escaped labels, and kinstr's log2 histograms as native
 * Prometheus histograms (cumulative _bucket{le}, _sum, _count).
 */
#ifndef KINSTR_PROM_H
#define KINSTR_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void kinstr_prom__family(FILE *out, const char *name, const char *type, const char *help);
/*
 * A label pair list for a sample, name="value" with the value escaped (\\, \", \n): appends
 * to buf (NUL-terminated, len bytes), comma-separated. 0, or -ENOSPC (buf left as it was).
 */
int kinstr_prom__label(char *buf, size_t len, const char *name, const char *value);
/* "name{labels} value" (labels may be "" for none). */
void kinstr_prom__sample(FILE *out, const char *name, const char *labels, uint64_t value);
/*
 * A histogram of log2 buckets of nanoseconds (hist[b] counts [2^b, 2^(b+1)) ns, bucket 0 from 0),
 * nb of them, in seconds: name_bucket{labels,le="2^(b+1) ns"} cumulative up to the last bucket
 * that counts anything, le="+Inf", name_sum (sum_ns), name_count (count, never below a bucket).
 */
void kinstr_prom__log2_histogram(FILE *out, const char *name, const char *labels, const uint64_t *hist, size_t nb,
				 uint64_t count, uint64_t sum_ns);

#ifdef __cplusplus
}
#endif
#endif
