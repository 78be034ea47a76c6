// SPDX-License-Identifier: GPL-2.0
/*
 * Timers in a code cache (KINSTR_CACHE_M_TIMER, kinstr profile --cache): a function's copy starts
 * its timer where its entry point lands and stops it before each exit, by one fixed sequence
 * that saves what C may clobber and calls the timer's hit function (actions/hit.c; its address
 * comes with the image, from session.c, so that check/ calls nothing of actions/). User space
 * cannot know the timer set's address: the sequence carries 0 there, which the check requires
 * and the install overwrites (kinstr_cache_timer_link()), so the copy can call nothing else.
 */
#include <linux/build_bug.h>
#include <linux/string.h>

#include <uapi/linux/kinstr.h>
#include "check/cache.h"
#include "check/cache_timer.h"

/* pushfq; push rax rcx rdx rsi rdi r8 r9 r10 r11; movabs $0, %rdi */
static const u8 ct_head[] = { 0x9c, 0x50, 0x51, 0x52, 0x56, 0x57, 0x41, 0x50, 0x41, 0x51, 0x41, 0x52, 0x41, 0x53,
			      0x48, 0xbf, 0, 0, 0, 0, 0, 0, 0, 0 };
/* pop r11 r10 r9 r8 rdi rsi rdx rcx rax; popfq */
static const u8 ct_tail[] = { 0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, 0x5f, 0x5e, 0x5a, 0x59, 0x58, 0x9d };
#define CT_SET	16			/* the set's address: the movabs's imm64 */
#define CT_MOV	sizeof(ct_head)		/* mov $timer, %esi */
#define CT_CALL	(CT_MOV + 5)		/* call rel32 */

static_assert(CT_CALL + 5 + sizeof(ct_tail) == KINSTR_CACHE_TIMER_LEN);

unsigned int kinstr_cache_timer_start_len(const struct kinstr_cache_map *m)
{
	return (m->flags & (KINSTR_CACHE_M_FUNC | KINSTR_CACHE_M_TIMER)) ==
	       (KINSTR_CACHE_M_FUNC | KINSTR_CACHE_M_TIMER) ? KINSTR_CACHE_TIMER_LEN : 0;
}

bool kinstr_cache_timer_ok(const struct kinstr_cache_check *c, const u8 *b, unsigned long at, bool start, u32 *timer)
{
	unsigned long fn = c->timer_fn[!start];
	u32 ntimers = c->ntimers;
	s32 rel;
	u32 t;

	memcpy(&t, b + CT_MOV + 1, 4);
	memcpy(&rel, b + CT_CALL + 1, 4);
	if (!fn || memcmp(b, ct_head, sizeof(ct_head)) || b[CT_MOV] != 0xbe || t >= ntimers || b[CT_CALL] != 0xe8 ||
	    at + CT_CALL + 5 + rel != fn || memcmp(b + CT_CALL + 5, ct_tail, sizeof(ct_tail)))
		return false;
	*timer = t;
	return true;
}

/* The offset of entry m's timer sequence in the cache. */
static u64 timer_at(const struct kinstr_cache_map *m)
{
	unsigned int before = 0;

	if (m->flags & KINSTR_CACHE_M_FUNC)	/* before its edge counter and its counter */
		return m->copy - KINSTR_CACHE_TIMER_LEN -
		       (m->flags & KINSTR_CACHE_M_COUNTED ? 16 + 2 * !!(m->flags & KINSTR_CACHE_M_PUSHF) : 0) -
		       (m->flags & KINSTR_CACHE_M_EDGE_IN ? 16 + 2 * !!(m->flags & KINSTR_CACHE_M_EDGE_IN_PUSHF) : 0);
	if (m->flags & KINSTR_CACHE_M_EDGE_OUT)	/* after the exit's edge counter */
		before = 16 + 2 * !!(m->flags & KINSTR_CACHE_M_EDGE_OUT_PUSHF);
	return m->copy + before;
}

void kinstr_cache_timer_link(const struct kinstr_cache_check *c, u8 *cache, struct kinstr_timers *t)
{
	u32 i;

	for (i = 0; i < c->nmap; i++)
		if (c->map[i].flags & KINSTR_CACHE_M_TIMER)
			memcpy(cache + timer_at(&c->map[i]) + CT_SET, &t, sizeof(t));
}

bool kinstr_cache_timed(const struct kinstr_cache_check *c)
{
	u32 i;

	for (i = 0; i < c->nmap; i++)
		if (c->map[i].flags & KINSTR_CACHE_M_TIMER)
			return true;
	return false;
}
