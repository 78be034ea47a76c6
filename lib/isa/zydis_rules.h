/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What of Zydis's decoding the library takes as an instruction, in one place for the decoder
 * (x86.c) and the relocator (reloc.c), which each call Zydis.
 */
#ifndef KINSTR_LIB_ZYDIS_RULES_H
#define KINSTR_LIB_ZYDIS_RULES_H

#include <stdbool.h>
#include <Zydis/Zydis.h>

/*
 * Zydis decodes Xeon Phi (KNC) encodings such as jknzd (VEX.0F 85) even outside its KNC mode;
 * they are #UD on every CPU an x86-64 kernel runs on, so no kernel code, and relocated as what
 * they resemble (a jcc) they would change meaning. Not instructions, then.
 */
static inline bool kinstr_zydis__is_insn(const ZydisDecodedInstruction *zi)
{
	return zi->meta.isa_ext != ZYDIS_ISA_EXT_KNC && zi->meta.isa_ext != ZYDIS_ISA_EXT_KNCE &&
	       zi->meta.isa_ext != ZYDIS_ISA_EXT_KNCV;
}

#endif
