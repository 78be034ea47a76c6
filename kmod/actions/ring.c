// SPDX-License-Identifier: GPL-2.0
/* The ring buffer core is shared with the host tests: one source, ring/ring.c. */
#include "ring/ring.c"
