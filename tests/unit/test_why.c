// SPDX-License-Identifier: GPL-2.0
/* The library's one error report (include/kinstr/why.h): kinstr_why__fail. */
#include <errno.h>
#include <string.h>

#include <kinstr/why.h>
#include "check.h"

static void t_fail_fills(void)
{
	struct kinstr_why why;
	int ret;

	memset(&why, 0x5a, sizeof(why));
	errno = EAGAIN;
	ret = kinstr_why__fail(&why, -ENOENT, "%s: no %d", "f", 7);
	CHECK(ret == -ENOENT && why.err == -ENOENT, "returned %d, why.err %d", ret, why.err);
	CHECK(!strcmp(why.msg, "f: no 7"), "'%s'", why.msg);
	CHECK(!why.func && !why.addr && !why.rule && !why.insn_len, "func %p addr %llx rule %u len %u",
	      (const void *)why.func, (unsigned long long)why.addr, why.rule, why.insn_len);
	CHECK(errno == EAGAIN, "errno %d", errno);
	CHECK(kinstr_why__fail(NULL, -EIO, "%s", "nobody reads this") == -EIO, "NULL why");
}

static void t_fail_own_msg(void)
{
	struct kinstr_why why;
	char big[700];

	kinstr_why__fail(&why, -EINVAL, "inner");
	kinstr_why__fail(&why, -EPERM, "outer: %s", why.msg);
	CHECK(why.err == -EPERM && !strcmp(why.msg, "outer: inner"), "%d '%s'", why.err, why.msg);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	kinstr_why__fail(&why, -E2BIG, "%s", big);
	CHECK(strlen(why.msg) == sizeof(why.msg) - 1, "a long sentence is cut at %zu bytes: %zu", sizeof(why.msg) - 1,
	      strlen(why.msg));
}

int main(void)
{
	RUN(t_fail_fills);
	RUN(t_fail_own_msg);
	return check_done();
}
