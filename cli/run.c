// SPDX-License-Identifier: GPL-2.0
/*
 * The run loop every patching subcommand shares (cli.h, "A run"): -c CMD started (gated where
 * the timers must know its process group first), the wait until -d, Ctrl-C/SIGTERM or CMD's
 * end, the signal passed on to CMD, the exit status, and the clean-up on every error path.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kinstr/probe.h>
#include "cli.h"

volatile sig_atomic_t cli_stop;

static void on_signal(int sig)
{
	if (!cli_stop)
		cli_stop = sig;
}

void cli_catch_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

int cli_stop_status(void)
{
	return 128 + (cli_stop ? cli_stop : SIGINT);
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* gate >= 0: the child waits for a byte (or EOF) on it before it runs CMD */
static pid_t spawn(const char *command, int gate, int other, bool to_stderr)
{
	pid_t child = fork();

	if (child == 0) {
		if (to_stderr)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		if (gate >= 0) {
			/* poll, not read: a read in progress would be a call half seen by the probes */
			struct pollfd p = { .fd = gate, .events = POLLIN };

			setpgid(0, 0);	/* CMD and what it starts: one process group to follow */
			close(other);
			while (poll(&p, 1, -1) < 0 && errno == EINTR)
				;
			close(gate);
		}
		/* plain words run directly: a shell would add its own syscalls to what is measured */
		if (!strpbrk(command, "|&;<>()$`\\\"'*?[#~=%{}")) {
			char *copy = strdup(command), *words[64], *save = NULL;
			int n = 0;

			for (char *w = strtok_r(copy, " \t", &save); w && n < 63; w = strtok_r(NULL, " \t", &save))
				words[n++] = w;
			words[n] = NULL;
			if (n)
				execvp(words[0], words);
			fprintf(stderr, "kinstr: cannot run '%s': %s\n", command, strerror(errno));
			_exit(127);
		}
		execl("/bin/sh", "sh", "-c", command, (char *)NULL);
		_exit(127);
	}
	if (child < 0)
		cli_err("cannot run '%s': %s", command, strerror(errno));
	return child;
}

int cli_open_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		cli_err("cannot write %s: %s", path, strerror(errno));
	return fd;
}

int cli_check_writable(const char *opt, const char *path)
{
	char dir[4096], *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	if (stat(dir, &st) || (S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK))) {
		cli_err("%s %s: cannot write in %s: %s", opt, path, dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_err("%s %s: cannot write in %s: not a folder", opt, path, dir);
		return -1;
	}
	if (!stat(path, &st) && (S_ISDIR(st.st_mode) || access(path, W_OK))) {
		cli_err("%s %s: cannot write it: %s", opt, path, S_ISDIR(st.st_mode) ? "a folder" : strerror(errno));
		return -1;
	}
	return 0;
}

int cli_output_begin(int fd, const char *path)
{
	fflush(stdout);
	if (fd >= 0 && dup2(fd, STDOUT_FILENO) < 0) {
		cli_err("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cli_output_end(const char *path)
{
	if (fflush(stdout) || ferror(stdout)) {
		cli_err("cannot write %s: %s", path ? path : "the totals", strerror(errno));
		return -1;
	}
	return 0;
}

void cli_run__init(struct cli_run *r, const char *command, double duration, bool group)
{
	memset(r, 0, sizeof(*r));
	r->command = command;
	r->duration = duration;
	r->group = group;
	r->status = -1;
	r->gate = -1;
	r->watch_fd = -1;
}

void cli_run__json(struct cli_run *r, bool json, const char *output)
{
	r->cmd_to_stderr = json && !output;
}

void cli_run__watch(struct cli_run *r, int fd, void (*on_ready)(void *ctx), void *ctx)
{
	r->watch_fd = fd;
	r->on_ready = on_ready;
	r->watch_ctx = ctx;
}

int cli_run__spawn(struct cli_run *r)
{
	int p[2];

	r->status = -1;
	if (!r->group) {
		r->child = spawn(r->command, -1, -1, r->cmd_to_stderr);
		return r->child < 0 ? -1 : 0;
	}
	if (pipe(p)) {
		cli_err("cannot run '%s': %s", r->command, strerror(errno));
		return -1;
	}
	r->child = spawn(r->command, p[0], p[1], r->cmd_to_stderr);
	if (r->child > 0)
		setpgid(r->child, r->child);	/* also here: no race with the caller using the group */
	close(p[0]);
	if (r->child < 0)
		close(p[1]);
	else
		r->gate = p[1];
	return r->child < 0 ? -1 : 0;
}

int cli_run__start(struct cli_run *r, struct kinstr_probeset *ps)
{
	struct kinstr_why why;

	cli_catch_signals();
	if (kinstr_probeset__install(ps, &why)) {
		cli_err("%s", why.msg);
		return -1;
	}
	cli_run__begin(r);
	if (r->child > 0)
		return cli_run__go(r);	/* started gated before the probes (--cmd-only) */
	return r->command ? cli_run__spawn(r) : 0;
}

int cli_parse_clock(const char *s, bool *local)
{
	if (strcmp(s, "mono") && strcmp(s, "local")) {
		cli_err("--clock: mono or local, not '%s'", s);
		return -1;
	}
	*local = !strcmp(s, "local");
	return 0;
}

int cli_run__go(struct cli_run *r)
{
	int ret = 0;

	if (r->gate < 0)
		return 0;
	if (write(r->gate, "g", 1) != 1) {
		cli_err("cannot start '%s'", r->command);
		ret = -1;
	}
	close(r->gate);
	r->gate = -1;
	return ret;
}

void cli_run__begin(struct cli_run *r)
{
	r->t0 = cli_now();
	r->deadline = r->duration > 0 ? r->t0 + r->duration : 0;
}

bool cli_run__done(struct cli_run *r)
{
	int st;

	if (cli_stop || (r->deadline > 0 && cli_now() >= r->deadline))
		return true;
	if (r->child > 0 && r->status < 0 && waitpid(r->child, &st, WNOHANG) == r->child) {
		r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		return true;
	}
	return false;
}

void cli_run__wait(struct cli_run *r, double interval, void (*tick)(void *ctx, double dt), void *ctx)
{
	double last = cli_now();

	while (!cli_run__done(r)) {
		double wait = interval, t = cli_now();

		if (r->deadline > 0 && r->deadline - t < wait)
			wait = r->deadline - t;
		if (r->child > 0 && r->status < 0)
			wait = 0.01;	/* notice the command's end promptly */
		if (wait > 0 && r->watch_fd >= 0) {
			struct pollfd p = { .fd = r->watch_fd, .events = POLLIN };

			/* every turn, ready or not: the watcher has timeouts of its own to keep */
			poll(&p, 1, (int)(wait * 1000) + 1);
			r->on_ready(r->watch_ctx);
		} else if (wait > 0) {
			usleep((useconds_t)(wait * 1e6));
		}
		if (tick && cli_now() - last >= interval) {
			tick(ctx, cli_now() - last);
			last = cli_now();
		}
	}
}

void cli_run__stop(struct cli_run *r)
{
	int sig = cli_stop == SIGINT ? SIGINT : SIGTERM, st;
	pid_t who, got;
	double t0;

	if (!cli_stop || r->child <= 0 || r->status >= 0)
		return;
	/* interrupted: CMD (its group) gets the signal too, SIGKILL after 5 s */
	who = r->group ? -r->child : r->child;
	t0 = cli_now();
	kill(who, sig);
	while ((got = waitpid(r->child, &st, WNOHANG)) == 0) {
		if (cli_now() - t0 > 5) {
			kill(who, SIGKILL);
			got = waitpid(r->child, &st, 0);
			break;
		}
		usleep(10000);
	}
	if (got == r->child)
		r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int cli_run__status(const struct cli_run *r)
{
	if (cli_stop && r->child > 0) {
		cli_err("interrupted; '%s' exited with status %d", r->command, r->status);
		return cli_stop_status();
	}
	return r->child > 0 ? r->status : CLI_OK;
}

void cli_run__cleanup(struct cli_run *r)
{
	if (r->gate >= 0) {
		close(r->gate);	/* EOF: a gated command runs, and is stopped below */
		r->gate = -1;
	}
	if (r->child > 0 && r->status < 0) {
		kill(r->group ? -r->child : r->child, SIGTERM);
		waitpid(r->child, NULL, 0);
		r->status = 128 + SIGTERM;
	}
}
