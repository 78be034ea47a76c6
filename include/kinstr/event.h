/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * An event class of a trace: made by the planner (kinstr_plan__add_trace), filled by the recorder,
 * read by what tallies, pairs and prints events. Its own header, so that those need not the planner's.
 */
#ifndef KINSTR_EVENT_H
#define KINSTR_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <kinstr/values.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An event class of a trace: what the hits of one probe spec's probes record. */
struct kinstr_trace_event {
	char name[192];			/* FUNC, FUNC+0xOFF or FUNC%return */
	unsigned int nvals;
	struct kinstr_value vals[KINSTR_TRACE_MAX_VALS];
	bool has_pred;			/* its probes record only hits pred passes (kinstr/pred.h) */
	struct kinstr_pred pred;
	uint64_t count;			/* events written (the recorder's) */
	int class_id;			/* the trace's class (the recorder's) */
};

#ifdef __cplusplus
}
#endif
#endif
