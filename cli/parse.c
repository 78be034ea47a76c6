// SPDX-License-Identifier: GPL-2.0
/*
 * Strict parsing of the command line's numbers and probe specs: the whole word must be the
 * value (strtod/strtoll/strtoull with end-pointer and range checks), and every refusal names its
 * reason. Pure (no kernel, no module): tests/unit/test_cli_parse.c includes this file.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uapi/linux/kinstr.h>

#include "cli.h"

int cli_parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || isspace((unsigned char)*s)) {
		cli_err("%s: not a number of seconds: '%s'", opt, s);
		return -EINVAL;
	}
	if (v <= 0) {
		cli_err("%s: must be more than 0 seconds, not '%s'", opt, s);
		return -ERANGE;
	}
	if (v > CLI_MAX_SECONDS) {
		cli_err("%s: at most %d seconds, not '%s'", opt, CLI_MAX_SECONDS, s);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

int cli_parse_max_probes(const char *s, size_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || *end || errno || !isdigit((unsigned char)*s) || v < 1 || v > KINSTR_AREA_MAX_PROBES) {
		cli_err("--max-probes: a number of probes from 1 to %d, not '%s'", KINSTR_AREA_MAX_PROBES, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cli_parse_double(const char *opt, const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || isspace((unsigned char)*s)) {
		cli_err("%s: not a number: '%s'", opt, s);
		return -EINVAL;
	}
	if (v <= min || v >= max) {
		cli_err("%s: must be more than %g and less than %g, not '%s'", opt, min, max, s);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

int cli_parse_long(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || isspace((unsigned char)*s) || (errno && errno != ERANGE)) {
		cli_err("%s: not an integer: '%s'", opt, s);
		return -EINVAL;
	}
	if (errno == ERANGE || v < min || v > max) {
		cli_err("%s: must be %ld to %ld, not '%s'", opt, min, max, s);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

int cli_parse_bytes(const char *opt, const char *s, unsigned long long min, unsigned long long max,
		    unsigned long long *out)
{
	unsigned long long v, mult = 1;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*s)) {	/* no sign, no space, no "inf" */
		cli_err("%s: not a size: '%s' (bytes, or with a K, M or G suffix)", opt, s);
		return -EINVAL;
	}
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k': case 'K': mult = 1ull << 10; end++; break;
	case 'm': case 'M': mult = 1ull << 20; end++; break;
	case 'g': case 'G': mult = 1ull << 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')	/* "64KB", "1MiB" are not asked for, but harmless */
		end++;
	if (*end || (errno && errno != ERANGE)) {
		cli_err("%s: not a size: '%s' (bytes, or with a K, M or G suffix)", opt, s);
		return -EINVAL;
	}
	if (errno == ERANGE || v > max / mult || v * mult < min || v * mult > max) {
		cli_err("%s: must be %llu to %llu bytes, not '%s'", opt, min, max, s);
		return -ERANGE;
	}
	*out = v * mult;
	return 0;
}

int cli_parse_pid(const char *s, long *pid)
{
	char *end;

	errno = 0;
	*pid = strtol(s, &end, 10);
	if (end == s || *end || errno || *pid <= 0 || *pid > INT32_MAX) {
		cli_err("--pid: not a process id: '%s'", s);
		errno = EINVAL;
		return -EINVAL;
	}
	if (kill((pid_t)*pid, 0) && errno == ESRCH) {
		cli_err("--pid: no process %ld", *pid);
		errno = ESRCH;
		return -ESRCH;
	}
	return 0;
}

bool cli_term_ok(void)
{
	const char *term = getenv("TERM");

	return isatty(STDOUT_FILENO) && term && *term && strcmp(term, "dumb");
}
