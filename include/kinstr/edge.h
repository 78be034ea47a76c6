/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A control transfer the instruction bytes do not show: the kernel view finds them in the kernel's
 * tables (exception fixups, jump labels, static calls: kernel.h) and the CFG takes them as input
 * (kinstr_cfg_opts.edges: cfg.h). Its own header, so that the view needs nothing of the CFG's.
 */
#ifndef KINSTR_EDGE_H
#define KINSTR_EDGE_H

#include <stdint.h>

struct kinstr_cfg_edge {
	uint64_t from;		/* an address inside the instruction control leaves */
	uint64_t to;		/* where control may go */
};

#endif
