// SPDX-License-Identifier: GPL-2.0
/*
 * Re-laid copies (kinstr optimize; KINSTR_CACHE_IMAGE_LAID): the part of the code cache's check
 * (cache.c) that reads the map alone. A re-laid function's counterparts may come in any order,
 * but they must tile its part of the image: sorted by offset, each begins where the one before
 * ends (a dropped jmp's empty counterpart sits at the offset of what follows it), so that what
 * runs on past one counterpart is, byte for byte, the next in the copy and nothing is hidden
 * between them. cache.c proves what each counterpart does and where it runs on to.
 */
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "check/cache.h"

static const struct kinstr_cache_map *sort_map;

/* by offset; an empty counterpart before a full one at the same offset */
static int by_copy(const void *a, const void *b)
{
	const struct kinstr_cache_map *x = &sort_map[*(const u32 *)a], *y = &sort_map[*(const u32 *)b];

	if (x->copy != y->copy)
		return x->copy < y->copy ? -1 : 1;
	return (x->copy_len != 0) - (y->copy_len != 0);
}

static DEFINE_MUTEX(sort_lock);	/* sort() takes no context: sort_map is the run being sorted */

int kinstr_laid_tiles(const struct kinstr_cache_map *map, u32 f0, u32 f1, u64 start, u64 *end)
{
	u32 *ix, i, n = f1 - f0;
	u64 at = start;
	int err = 0;

	ix = kvmalloc_array(n, sizeof(*ix), GFP_KERNEL);
	if (!ix)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ix[i] = f0 + i;
	mutex_lock(&sort_lock);
	sort_map = map;
	sort(ix, n, sizeof(*ix), by_copy, NULL);
	sort_map = NULL;
	mutex_unlock(&sort_lock);
	for (i = 0; i < n && !err; i++) {
		if (map[ix[i]].copy != at)
			err = 1;	/* a gap, or an overlap */
		at += map[ix[i]].copy_len;
	}
	*end = at;
	kvfree(ix);
	return err;
}
