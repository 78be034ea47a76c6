// SPDX-License-Identifier: GPL-2.0
/*
 * The lttng-relayd client (lib/trace/relayd.c) against a real lttng-relayd (Debian's lttng-tools)
 * on loopback: a trace written through the CTF writer with the relay as its sink is printed by
 * babeltrace2's lttng-live source while it is written, and the relay's output folder holds a trace
 * babeltrace2 reads afterwards with every event; a relay killed mid-trace makes the next packet fail
 * with a sentence naming the relay, and keeps what it received. Plus HOST[:PORT] parsing.
 * To debug: KEEP=1 keeps /tmp/kinstr-test-relayd-PID, RELAYD_LOG=FILE runs the relay with -vvv into FILE.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <kinstr/ctf.h>
#include <kinstr/relayd.h>
#include "check.h"

#define NCPU	2
#define HOST	"kinstr-test-host"

static char tmp[256];
static uint16_t port;
static pid_t relayd = -1;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static void t_parse_addr(void)
{
	char h[64];
	uint16_t c = 0, d = 0;

	CHECK(!kinstr_relayd__parse_addr("127.0.0.1", h, sizeof(h), &c, &d) && !strcmp(h, "127.0.0.1") && c == 5342 &&
	      d == 5343, "%s %u %u", h, c, d);
	CHECK(!kinstr_relayd__parse_addr("relay.example:6000", h, sizeof(h), &c, &d) && !strcmp(h, "relay.example") &&
	      c == 6000 && d == 6001, "%s %u %u", h, c, d);
	CHECK(!kinstr_relayd__parse_addr("h:6000:7000", h, sizeof(h), &c, &d) && c == 6000 && d == 7000, "%u %u", c, d);
	CHECK(!kinstr_relayd__parse_addr("[::1]:6000", h, sizeof(h), &c, &d) && !strcmp(h, "::1") && c == 6000,
	      "%s %u", h, c);
	CHECK(!kinstr_relayd__parse_addr("[::1]", h, sizeof(h), &c, &d) && !strcmp(h, "::1") && c == 5342, "%s", h);
	CHECK(kinstr_relayd__parse_addr("", h, sizeof(h), &c, &d) == -EINVAL, "empty");
	CHECK(kinstr_relayd__parse_addr(":5342", h, sizeof(h), &c, &d) == -EINVAL, "no host");
	CHECK(kinstr_relayd__parse_addr("h:0", h, sizeof(h), &c, &d) == -EINVAL, "port 0");
	CHECK(kinstr_relayd__parse_addr("h:65536", h, sizeof(h), &c, &d) == -EINVAL, "port 65536");
	CHECK(kinstr_relayd__parse_addr("h:65535", h, sizeof(h), &c, &d) == -EINVAL, "no data port after 65535");
	CHECK(kinstr_relayd__parse_addr("h:12x", h, sizeof(h), &c, &d) == -EINVAL, "12x");
	CHECK(kinstr_relayd__parse_addr("[::1", h, sizeof(h), &c, &d) == -EINVAL, "[::1");
	CHECK(kinstr_relayd__parse_addr("h:1:2:3", h, sizeof(h), &c, &d) == -EINVAL, "three ports");
	CHECK(kinstr_relayd__parse_addr("averyveryverylonghostname", h, 8, &c, &d) == -EINVAL, "too long");
}

static bool port_open(uint16_t p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a));
	if (fd >= 0)
		close(fd);
	return ok;
}

/* An lttng-relayd writing into tmp/out on ports port..port+2; false if it does not listen in 10 s. */
static bool start_relayd(void)
{
	char out[300], c[64], d[64], l[64];
	int i;

	snprintf(out, sizeof(out), "%s/out", tmp);
	snprintf(c, sizeof(c), "tcp://127.0.0.1:%u", port);
	snprintf(d, sizeof(d), "tcp://127.0.0.1:%u", port + 1);
	snprintf(l, sizeof(l), "tcp://127.0.0.1:%u", port + 2);
	relayd = fork();
	if (relayd == 0) {
		freopen("/dev/null", "w", stdout);
		if (getenv("RELAYD_LOG")) {
			freopen(getenv("RELAYD_LOG"), "a", stderr);
			execlp("lttng-relayd", "lttng-relayd", "-vvv", "-o", out, "-C", c, "-D", d, "-L", l, (char *)NULL);
		}
		execlp("lttng-relayd", "lttng-relayd", "-o", out, "-C", c, "-D", d, "-L", l, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) {
		if (port_open(port) && port_open(port + 1) && port_open(port + 2))
			return true;
		usleep(10000);
	}
	return false;
}

static void stop_relayd(void)
{
	if (relayd > 0) {
		kill(relayd, SIGKILL);
		waitpid(relayd, NULL, 0);
	}
	relayd = -1;
}

static struct kinstr_ctf *writer(struct kinstr_relayd *r, struct kinstr_ctf_sink *sink, int *cls)
{
	static const struct kinstr_ctf_field f[] = {
		{ .name = "n", .type = KINSTR_CTF_U64 },
		{ .name = "comm", .type = KINSTR_CTF_CHARS, .len = 16 },
	};
	struct kinstr_ctf_opts o = { .sz = sizeof(o), .hostname = HOST, .sink = sink };
	struct kinstr_ctf *w;

	*sink = (struct kinstr_ctf_sink){ kinstr_relayd__sink_metadata, kinstr_relayd__sink_packet, r };
	w = kinstr_ctf__create(NULL, &o);
	if (w)
		*cls = kinstr_ctf__add_class(w, "tick", f, 2);
	return w;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* n events on cpu in one packet */
static int packet(struct kinstr_ctf *w, int cls, unsigned int cpu, unsigned int n, uint64_t *total)
{
	uint64_t t0 = now_ns();
	unsigned int i;
	int ret = kinstr_ctf__packet_begin(w, cpu, t0);

	for (i = 0; !ret && i < n; i++) {
		union kinstr_ctf_value v[2] = { { .u = ++*total }, { .str = "tester" } };

		ret = kinstr_ctf__event(w, cpu, (unsigned int)cls, t0 + i, v);
	}
	return ret ? ret : kinstr_ctf__packet_end(w, cpu, now_ns(), 0);
}

static long count_lines(const char *path, const char *needle)
{
	char line[4096];
	long n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static void t_live(void)
{
	struct kinstr_relayd_opts ro = { .sz = sizeof(ro), .session = "live", .hostname = HOST, .nr_streams = NCPU,
					 .timeout_ms = 5000 };
	struct kinstr_why why = { 0 };
	struct kinstr_ctf_sink sink;
	struct kinstr_relayd *r;
	struct kinstr_ctf *w;
	char live[300], cmd[600];
	uint64_t total = 0;
	pid_t viewer;
	int cls = -1, i, ret;
	long n;

	if (sh("command -v lttng-relayd >/dev/null && command -v babeltrace2 >/dev/null"))
		SKIP("lttng-relayd or babeltrace2 not installed (Debian packages lttng-tools, babeltrace2)");
	CHECK(start_relayd(), "lttng-relayd does not listen on port %u", port);
	r = kinstr_relayd__open(NULL, &ro, &why);
	CHECK(!r && why.err == -EINVAL, "a NULL address: %d", why.err);
	snprintf(cmd, sizeof(cmd), "127.0.0.1:%u", port);
	r = kinstr_relayd__open(cmd, &ro, &why);
	CHECK(r, "open: %s", why.msg);
	if (!r) {
		stop_relayd();
		return;
	}
	CHECK(!strncmp(kinstr_relayd__output_path(r), HOST "/live-", strlen(HOST "/live-")), "output path %s",
	      kinstr_relayd__output_path(r));
	w = writer(r, &sink, &cls);
	CHECK(w && cls == 0, "writer: %d", cls);
	/* every stream begins with a packet (live viewers wait for one), then the streams are shown */
	for (i = 0; i < NCPU; i++)
		CHECK(!(ret = packet(w, cls, i, i, &total)), "first packet of cpu %d: %d", i, ret);
	CHECK(!kinstr_relayd__streams_sent(r), "streams sent: %s", kinstr_relayd__error(r));
	/* a viewer, while the trace is being written */
	snprintf(live, sizeof(live), "%s/live.txt", tmp);
	viewer = fork();
	if (viewer == 0) {
		char url[200];

		snprintf(url, sizeof(url), "net://127.0.0.1:%u/host/" HOST "/live", port + 2);
		freopen(live, "w", stdout);
		/* line-buffered: what it printed is in the file at once */
		execlp("stdbuf", "stdbuf", "-oL", "babeltrace2", "--input-format=lttng-live", url, (char *)NULL);
		_exit(127);
	}
	/* attached (lttng-live starts from the newest packets, as with LTTng): a relay query says */
	snprintf(cmd, sizeof(cmd), "babeltrace2 query src.ctf.lttng-live sessions -p 'url=\"net://127.0.0.1:%u\"' "
		 "2>/dev/null | grep -q 'client-count: 1'", port + 2);
	for (i = 0; i < 500 && sh("%s", cmd); i++)
		usleep(20000);
	CHECK(i < 500, "the viewer did not attach");
	for (i = 0; i < 10; i++)
		CHECK(!(ret = packet(w, cls, 0, 100, &total)), "packet %d: %d %s", i, ret, kinstr_relayd__error(r));
	/* cpu 1 stays idle: its beacons let the viewer go on */
	for (i = 0; i < 1000 && count_lines(live, "tick:") < 1000; i++) {
		if (i % 20 == 0)
			CHECK(!kinstr_relayd__beacon(r, 0, now_ns()) && !kinstr_relayd__beacon(r, 1, now_ns()),
			      "beacon: %s", kinstr_relayd__error(r));
		usleep(10000);
	}
	n = count_lines(live, "tick:");
	CHECK(n == 1000, "lttng-live printed %ld events while the trace was written (1000 sent since it attached)",
	      n);
	CHECK(!(ret = packet(w, cls, 1, 7, &total)), "last packet: %d", ret);
	CHECK(!kinstr_ctf__close(w), "ctf close");
	CHECK(!kinstr_relayd__close(r, &why), "close: %s", why.msg);
	kinstr_relayd__free(r);
	/* the viewer ends with the session */
	for (i = 0; i < 1000 && waitpid(viewer, &ret, WNOHANG) == 0; i++)
		usleep(10000);
	if (i == 1000) {
		kill(viewer, SIGKILL);
		waitpid(viewer, NULL, 0);
	}
	CHECK(i < 1000, "babeltrace2 lttng-live did not end with the session");
	n = count_lines(live, "tick:");
	/* the last packet too, though it came as the streams closed (the end rotates them to no chunk) */
	CHECK(n == 1007, "lttng-live printed %ld events in all, 1007 written since it attached", n);
	snprintf(cmd, sizeof(cmd), "babeltrace2 %s/out >%s/after.txt", tmp, tmp);
	CHECK(!sh("%s", cmd), "%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s/after.txt", tmp);
	n = count_lines(cmd, "tick:");
	CHECK(n == (long)total, "the relay's output holds %ld events, %llu written", n, (unsigned long long)total);
	stop_relayd();
}

static void t_relay_killed(void)
{
	struct kinstr_relayd_opts ro = { .sz = sizeof(ro), .session = "killed", .hostname = HOST, .nr_streams = NCPU,
					 .timeout_ms = 5000 };
	struct kinstr_why why = { 0 };
	struct kinstr_ctf_sink sink;
	struct kinstr_relayd *r;
	struct kinstr_ctf *w;
	char addr[64], cmd[600];
	uint64_t total = 0, kept;
	int cls = -1, i, ret = 0;
	long n;

	if (sh("command -v lttng-relayd >/dev/null && command -v babeltrace2 >/dev/null"))
		SKIP("lttng-relayd or babeltrace2 not installed (Debian packages lttng-tools, babeltrace2)");
	sh("rm -rf %s/out", tmp);
	CHECK(start_relayd(), "lttng-relayd does not listen on port %u", port);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	r = kinstr_relayd__open(addr, &ro, &why);
	CHECK(r, "open: %s", why.msg);
	if (!r) {
		stop_relayd();
		return;
	}
	w = writer(r, &sink, &cls);
	for (i = 0; i < NCPU; i++)
		CHECK(!(ret = packet(w, cls, i, 50, &total)), "packet of cpu %d: %d", i, ret);
	CHECK(!kinstr_relayd__streams_sent(r), "streams sent: %s", kinstr_relayd__error(r));
	kept = total;
	/* what the relay wrote (it writes as it receives) */
	snprintf(cmd, sizeof(cmd), "babeltrace2 %s/out 2>/dev/null | grep -c tick: | grep -qx %llu", tmp,
		 (unsigned long long)kept);
	for (i = 0; i < 250 && sh("%s", cmd); i++)
		usleep(20000);
	CHECK(i < 250, "the relay did not write the first %llu events", (unsigned long long)kept);
	stop_relayd();
	for (i = 0; i < 100 && !ret; i++)
		ret = packet(w, cls, 0, 10, &total);
	CHECK(ret == -ECONNRESET || ret == -EPIPE, "after the relay died: %d (%s)", ret, kinstr_relayd__error(r));
	CHECK(strstr(kinstr_relayd__error(r), addr) && strstr(kinstr_relayd__error(r), "lttng-relayd"),
	      "the sentence names the relay: %s", kinstr_relayd__error(r));
	CHECK(kinstr_relayd__beacon(r, 0, now_ns()) == ret, "later calls fail the same");
	kinstr_ctf__close(w);
	CHECK(kinstr_relayd__close(r, &why) == ret && strstr(why.msg, addr), "close: %s", why.msg);
	kinstr_relayd__free(r);
	snprintf(cmd, sizeof(cmd), "babeltrace2 %s/out >%s/kept.txt 2>/dev/null", tmp, tmp);
	sh("%s", cmd);
	snprintf(cmd, sizeof(cmd), "%s/kept.txt", tmp);
	n = count_lines(cmd, "tick:");
	CHECK(n >= (long)kept, "the relay's output kept %ld events, %llu were sent before it died", n,
	      (unsigned long long)kept);
}

static void t_no_relay(void)
{
	struct kinstr_relayd_opts ro = { .sz = sizeof(ro), .nr_streams = 1 };
	struct kinstr_why why = { 0 };
	char addr[64];

	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	CHECK(!kinstr_relayd__open(addr, &ro, &why) && why.err == -ECONNREFUSED, "%d %s", why.err, why.msg);
	CHECK(strstr(why.msg, "lttng-relayd at 127.0.0.1:") && strstr(why.msg, "refused"), "%s", why.msg);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/kinstr-test-relayd-%d", (int)getpid());
	mkdir(tmp, 0755);
	port = (uint16_t)(20000 + (getpid() % 15000) * 3);
	signal(SIGPIPE, SIG_IGN);
	RUN(t_parse_addr);
	RUN(t_live);
	RUN(t_relay_killed);
	RUN(t_no_relay);
	if (!getenv("KEEP"))
		sh("rm -rf %s", tmp);
	return check_done();
}
