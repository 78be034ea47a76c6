/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The options contract of every size-prefixed struct of libkinstr's API (kinstr_*_opts), in one
 * place (libbpf's OPTS_* idea). The caller sets sz to its own sizeof, so that a struct can grow:
 *   - NULL means every default;
 *   - sz below the size field itself is EINVAL;
 *   - a shorter struct (an older caller) has the fields it holds, the rest read as defaults;
 *   - a longer struct (a newer caller) is accepted only if every byte beyond ours is zero (EINVAL
 *     otherwise: an option this library does not know must not be ignored silently).
 * The module applies the same rule to its ABI structs (kmod/abi.c, with E2BIG for the tail).
 */
#ifndef KINSTR_LIB_OPTS_H
#define KINSTR_LIB_OPTS_H

#include <stdbool.h>
#include <stddef.h>

static inline bool kinstr_opts__valid(const void *opts, size_t user_sz, size_t known_sz)
{
	const unsigned char *p = opts;
	size_t i;

	if (!opts)
		return true;
	if (user_sz < sizeof(size_t))
		return false;
	for (i = known_sz; i < user_sz; i++)
		if (p[i])
			return false;
	return true;
}

/* Is opts a valid caller's struct of its type? (False: EINVAL.) */
#define KINSTR_OPTS_VALID(opts) kinstr_opts__valid((opts), (opts) ? (opts)->sz : 0, sizeof(*(opts)))

/* Does the caller's struct hold field? */
#define KINSTR_OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))

/* The caller's field, or def when its struct is older or absent. */
#define KINSTR_OPTS_GET(opts, field, def) (KINSTR_OPTS_HAS(opts, field) ? (opts)->field : (def))

#endif
