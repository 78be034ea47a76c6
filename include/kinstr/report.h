/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A self-contained HTML report of saved kinstr outputs (kinstr report --html): the page carries
 * each input as data, the drawing code (lib/report/report.js) and d3 with d3-flame-graph (npm
 * packages, inlined at build time), so that it opens with no network. Folded stacks become flame
 * graphs; profile and span JSON histograms and tables; count JSON tables; cover JSON a coverage
 * view (per function its blocks, hit or not, with their counts); a trace a time line of its
 * events per CPU.
 */
#ifndef KINSTR_REPORT_H
#define KINSTR_REPORT_H

#include <stddef.h>
#include <stdio.h>
#include <kinstr/why.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kinstr_report_kind {
	KINSTR_REPORT_JSON,	/* profile/span/count/count --by stack --json output */
	KINSTR_REPORT_FOLDED,	/* --folded stacks: "frame;frame;... N" lines */
};

struct kinstr_report_input {
	const char *name;	/* shown as the section's title (the file's name) */
	const char *data;
	size_t len;
};

/*
 * What data is: a JSON object, or folded stacks (every non-empty line ends in a count after a
 * space). -EINVAL for anything else.
 */
int kinstr_report__kind(const char *data, size_t len);
/* The page for in[0, n) on out: 0, or -EINVAL (why names the input that is neither) or -errno, and why. */
int kinstr_report__html(FILE *out, const char *title, const struct kinstr_report_input *in, size_t n,
			struct kinstr_why *why);

/*
 * The time line of the CTF trace in dir as a JSON input for the page (named name): per CPU and
 * per event class the exact counts, the packets' lost events, and at most max events (0:
 * KINSTR_REPORT_TRACE_MAX; beyond it every step-th) as [cpu, class, ns since the first event].
 * 0, or -errno and why (the reader's: which file, which offset).
 */
#define KINSTR_REPORT_TRACE_MAX 20000
int kinstr_report__trace_json(FILE *out, const char *dir, const char *name, size_t max, struct kinstr_why *why);

#ifdef __cplusplus
}
#endif
#endif
