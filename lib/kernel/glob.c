// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Globs over function names: a comma-separated list of fnmatch patterns.
 */
#include <fnmatch.h>
#include <string.h>

#include <kinstr/kernel.h>

int kinstr__glob_match(const char *globs, const char *name)
{
	char one[256];
	const char *p = globs, *comma;

	for (;;) {
		size_t n;

		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		if (n < sizeof(one)) {
			memcpy(one, p, n);
			one[n] = 0;
			if (n && !fnmatch(one, name, 0))
				return 1;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}
