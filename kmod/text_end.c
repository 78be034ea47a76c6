// SPDX-License-Identifier: GPL-2.0
/*
 * The last symbol of kinstr.ko's .text (Kbuild links this object last). A module's kallsyms
 * sizes a function up to the next symbol: without one after it, the last function of .text
 * would run on into .text.unlikely, and the hit path's closure (hitpath.c), decoding it whole,
 * would take in the cold parts of the load-time code behind it (thousands of functions).
 */
#include <linux/compiler.h>

void kinstr_text_end(void);
noinline void kinstr_text_end(void)
{
}
