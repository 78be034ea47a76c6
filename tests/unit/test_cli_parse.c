// SPDX-License-Identifier: GPL-2.0
/* The CLI's strict parsers (cli/parse.c): numbers and sizes, and their messages (specs: test_plan.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/parse.c"

static char last_err[512];

void cli_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_err, sizeof(last_err), fmt, ap);
	va_end(ap);
}

static void t_seconds(void)
{
	static const char *const bad[] = { "abc", "", "1x", " 1", "1 ", "nan", "inf", "-inf", "1e400", "0x", "--1" };
	static const char *const range[] = { "0", "-1", "-0.5", "0.0", "1e9" };
	double v = -1;
	size_t i;

	CHECK(cli_parse_seconds("--duration", "2", &v) == 0 && v == 2, "2 -> %g", v);
	CHECK(cli_parse_seconds("--duration", "0.25", &v) == 0 && v == 0.25, "0.25 -> %g", v);
	CHECK(cli_parse_seconds("--duration", "1e-3", &v) == 0 && v == 1e-3, "1e-3 -> %g", v);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		last_err[0] = 0;
		v = 7;
		CHECK(cli_parse_seconds("--duration", bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
		CHECK(v == 7, "'%s' wrote %g", bad[i], v);
		CHECK(strstr(last_err, "--duration: not a number of seconds: '") == last_err, "'%s': '%s'", bad[i],
		      last_err);
	}
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		last_err[0] = 0;
		CHECK(cli_parse_seconds("-d", range[i], &v) == -ERANGE, "'%s' accepted", range[i]);
		CHECK(strstr(last_err, "-d: ") == last_err && strstr(last_err, range[i]), "'%s': '%s'", range[i],
		      last_err);
	}
	cli_parse_seconds("--duration", "0", &v);
	CHECK(!strcmp(last_err, "--duration: must be more than 0 seconds, not '0'"), "'%s'", last_err);
}

static void t_double_long(void)
{
	double d = 0;
	long l = 0;

	CHECK(cli_parse_double("--threshold", "5", 0, 100, &d) == 0 && d == 5, "5 -> %g", d);
	CHECK(cli_parse_double("--threshold", "0", 0, 100, &d) == -ERANGE, "0 accepted");
	CHECK(cli_parse_double("--threshold", "100", 0, 100, &d) == -ERANGE, "100 accepted");
	CHECK(cli_parse_double("--threshold", "5%", 0, 100, &d) == -EINVAL, "5%% accepted");
	CHECK(cli_parse_long("--depth", "4", 1, 64, &l) == 0 && l == 4, "4 -> %ld", l);
	CHECK(cli_parse_long("--depth", "0", 1, 64, &l) == -ERANGE, "0 accepted");
	CHECK(cli_parse_long("--depth", "65", 1, 64, &l) == -ERANGE, "65 accepted");
	CHECK(cli_parse_long("--depth", "-1", 1, 64, &l) == -ERANGE, "-1 accepted");
	CHECK(cli_parse_long("--depth", "4.5", 1, 64, &l) == -EINVAL, "4.5 accepted");
	CHECK(cli_parse_long("--depth", "abc", 1, 64, &l) == -EINVAL, "abc accepted");
	CHECK(cli_parse_long("--depth", "", 1, 64, &l) == -EINVAL, "empty accepted");
	CHECK(cli_parse_long("--depth", "99999999999999999999999", 1, 64, &l) == -ERANGE, "overflow accepted");
	CHECK(!strcmp(last_err, "--depth: must be 1 to 64, not '99999999999999999999999'"), "'%s'", last_err);
}

static void t_bytes(void)
{
	unsigned long long v = 0;

	CHECK(cli_parse_bytes("--buffer-size", "1M", 8192, UINT32_MAX, &v) == 0 && v == 1 << 20, "1M -> %llu", v);
	CHECK(cli_parse_bytes("--buffer-size", "64k", 8192, UINT32_MAX, &v) == 0 && v == 64 << 10, "64k -> %llu", v);
	CHECK(cli_parse_bytes("--max-size", "2G", 65536, 1ull << 50, &v) == 0 && v == 2ull << 30, "2G -> %llu", v);
	CHECK(cli_parse_bytes("--buffer-size", "65536", 8192, UINT32_MAX, &v) == 0 && v == 65536, "-> %llu", v);
	CHECK(cli_parse_bytes("--buffer-size", "-1", 8192, UINT32_MAX, &v) == -EINVAL, "-1 accepted");
	CHECK(cli_parse_bytes("--buffer-size", "1.5M", 8192, UINT32_MAX, &v) == -EINVAL, "1.5M accepted");
	CHECK(cli_parse_bytes("--buffer-size", "1T", 8192, UINT32_MAX, &v) == -EINVAL, "1T accepted");
	CHECK(cli_parse_bytes("--buffer-size", "M", 8192, UINT32_MAX, &v) == -EINVAL, "M accepted");
	CHECK(cli_parse_bytes("--buffer-size", " 1M", 8192, UINT32_MAX, &v) == -EINVAL, "' 1M' accepted");
	CHECK(cli_parse_bytes("--buffer-size", "4G", 8192, UINT32_MAX, &v) == -ERANGE, "4G accepted");
	CHECK(cli_parse_bytes("--buffer-size", "4K", 8192, UINT32_MAX, &v) == -ERANGE, "4K accepted");
	CHECK(cli_parse_bytes("--buffer-size", "0", 8192, UINT32_MAX, &v) == -ERANGE, "0 accepted");
	/* v * mult must not wrap to something in range */
	CHECK(cli_parse_bytes("--max-size", "17179869184G", 65536, 1ull << 50, &v) == -ERANGE, "wrap accepted");
	CHECK(cli_parse_bytes("--max-size", "99999999999999999999999", 65536, 1ull << 50, &v) == -ERANGE,
	      "overflow accepted");
	CHECK(strstr(last_err, "--max-size: must be 65536 to ") == last_err, "'%s'", last_err);
}

static void t_pid(void)
{
	long pid;
	char me[32];

	snprintf(me, sizeof(me), "%d", (int)getpid());
	CHECK(cli_parse_pid(me, &pid) == 0 && pid == getpid(), "own pid refused");
	CHECK(cli_parse_pid("abc", &pid) == -EINVAL && !strcmp(last_err, "--pid: not a process id: 'abc'"), "'%s'",
	      last_err);
	CHECK(cli_parse_pid("0", &pid) == -EINVAL && cli_parse_pid("-5", &pid) == -EINVAL, "0 or -5 accepted");
	CHECK(cli_parse_pid("2147483647", &pid) == -ESRCH && !strcmp(last_err, "--pid: no process 2147483647"),
	      "'%s'", last_err);
}

/* --max-probes: 1 to the module's area limit, digits only */
static void t_max_probes(void)
{
	static const char *const bad[] = { "0", "-1", "65537", "", "1x", " 5", "+5", "4096.0", "99999999999999999999" };
	size_t v = 7, i;

	CHECK(cli_parse_max_probes("1", &v) == 0 && v == 1, "1 -> %zu", v);
	CHECK(cli_parse_max_probes("65536", &v) == 0 && v == 65536, "65536 -> %zu", v);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		last_err[0] = 0;
		CHECK(cli_parse_max_probes(bad[i], &v) == -EINVAL && v == 7, "'%s' accepted (%zu)", bad[i], v);
		CHECK(strstr(last_err, "--max-probes: a number of probes from 1 to 65536, not '") == last_err,
		      "'%s': '%s'", bad[i], last_err);
	}
}

int main(void)
{
	RUN(t_seconds);
	RUN(t_max_probes);
	RUN(t_double_long);
	RUN(t_bytes);
	RUN(t_pid);
	return check_done();
}
