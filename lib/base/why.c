// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The library's one error report (include/kinstr/why.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <kinstr/why.h>

int kinstr_why__vfail(struct kinstr_why *why, int err, const char *fmt, va_list ap)
{
	char msg[sizeof(why->msg)];
	int saved = errno;

	if (!why)
		return err;
	/* formatted aside first: an argument may be why->msg itself */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	memset(why, 0, sizeof(*why));
	why->err = err;
	memcpy(why->msg, msg, strlen(msg) + 1);
	errno = saved;
	return err;
}

int kinstr_why__fail(struct kinstr_why *why, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kinstr_why__vfail(why, err, fmt, ap);
	va_end(ap);
	return err;
}
