/* |command deliveries: /bin/sh -c with the command written in an aliases or .forward file,
 * the user's privileges, a clean environment, the message on stdin, a time limit, and the
 * exit code mapped as sendmail maps sysexits (deliver.h). */
#include "clock.h"
#include "deliver.h"
#include "log.h"
#include "sysexits.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CMD_OUTPUT_KEEP 300 /* bytes of the command's output kept for the report */

struct cmdio {
	int in;              /* the command's stdin (non-blocking), -1 once it stopped reading */
	int out;             /* its stdout+stderr (non-blocking), -1 at EOF */
	long long deadline;  /* monotonic ms */
	size_t klen;         /* of keep */
	int timed_out;
	char keep[CMD_OUTPUT_KEEP + 1];
};

static void drain(struct cmdio *c)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(c->out, buf, sizeof buf);
		if (n > 0) {
			size_t k = (size_t)n;
			if (k > CMD_OUTPUT_KEEP - c->klen)
				k = CMD_OUTPUT_KEEP - c->klen;
			memcpy(c->keep + c->klen, buf, k);
			c->klen += k;
			continue;
		}
		if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(c->out);
			c->out = -1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return;
	}
}

/* Waits until the command's stdin is writable (or its output readable), draining the output so
 * a chatty command cannot block on a full pipe while we block on its stdin. */
static int wait_io(struct cmdio *c, int want_in)
{
	long long left = c->deadline - clock_mono_ms();
	if (left <= 0) {
		c->timed_out = 1;
		errno = ETIMEDOUT;
		return -1;
	}
	struct pollfd pf[2] = {{want_in ? c->in : -1, POLLOUT, 0}, {c->out, POLLIN, 0}};
	int r = poll(pf, 2, left > 1000000 ? 1000000 : (int)left);
	if (r < 0 && errno != EINTR)
		return -1;
	if (c->out >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
		drain(c);
	return 0;
}

/* The copy's low-level writer (dl_io): one write to the command's stdin, waiting for room and
 * draining its output meanwhile. A command that stopped reading takes the rest unseen: its exit
 * code decides. */
static ssize_t cmd_write(void *ctx, const void *p, size_t n, int timeout_ms)
{
	struct cmdio *c = ctx;
	(void)timeout_ms; /* the deadline is c's */
	while (c->in >= 0) {
		ssize_t w = write(c->in, p, n);
		if (w > 0)
			return w;
		if (w < 0 && errno == EPIPE) {
			close(c->in);
			c->in = -1;
			break;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (wait_io(c, 1) < 0)
			return -1;
	}
	return (ssize_t)n;
}

/* sendmail's mapping of a program mailer's exit code (and Postfix's enhanced codes): each text
 * is the enhanced code, a blank and the words (str_bykey, keys are sysexits.h's codes). */
_Static_assert(EX_USAGE == 64 && EX_TEMPFAIL == 75 && EX_CONFIG == 78, "sysexits.h");

static void map_exit(int code, struct dl_result *r, const char *sep, const char *out)
{
	const char *t = str_bykey(
	    "\1005.3.0 command line usage error\0" /* EX_USAGE */
	    "\1015.6.0 data format error\0" /* EX_DATAERR */
	    "\1025.3.0 cannot open input\0" /* EX_NOINPUT */
	    "\1035.1.1 user unknown\0" /* EX_NOUSER */
	    "\1045.1.2 host name unknown\0" /* EX_NOHOST */
	    "\1055.3.0 service unavailable\0" /* EX_UNAVAILABLE */
	    "\1065.3.0 internal software error\0" /* EX_SOFTWARE */
	    "\1075.3.0 system error\0" /* EX_OSERR */
	    "\1105.3.0 critical OS file missing\0" /* EX_OSFILE */
	    "\1115.2.0 cannot create output file\0" /* EX_CANTCREAT */
	    "\1125.3.0 input/output error\0" /* EX_IOERR */
	    "\1134.3.0 temporary failure\0" /* EX_TEMPFAIL: deferred */
	    "\1145.5.0 remote protocol error\0" /* EX_PROTOCOL */
	    "\1155.7.0 permission denied\0" /* EX_NOPERM */
	    "\1165.3.5 configuration error\0" /* EX_CONFIG */
	    "\1775.3.0 command not found\0" /* the shell's */
	    "\0" "5.3.0 unknown error", (unsigned)code);
	char code_[7] = {*t == '4' ? DL_DEFER : DL_FAIL};
	memcpy(code_ + 1, t, 5);
	dl_set(r, code_, "command exited %d (%s)%s%s", code, t + 6, sep, out);
}

void dl_command(const char *cmd, const struct dl_user *u, char *const env[], const struct dl_msg *m,
                long timeout, struct dl_result *r)
{
	/* one refusal for the three calls: a pipe not made is -1, and its close(-1) harmless */
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	const char *op = "pipe";
	pid_t pid = -1;
	if (dl_pipe(in) < 0 || dl_pipe(out) < 0 || (op = "fork", pid = fork()) < 0) {
		dl_set_errno(r, errno, op, "for |command");
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return;
	}
	if (pid == 0) {
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0)
			_exit(EX_TEMPFAIL);
		dl_close_from(3);
		setsid(); /* its own process group: the time limit kills the whole group */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		int switched = dl_become(u, -1) == 0;
		if (switched) {
			if (chdir(u->home) < 0 && chdir("/") < 0)
				_exit(EX_TEMPFAIL);
			char *const argv[] = {"sh", "-c", (char *)cmd, NULL};
			execve("/bin/sh", argv, env);
		}
		/* the complaint, the command's output: one snprintf and write (no dprintf linked) */
		char msg[200];
		int n = snprintf(msg, sizeof msg, "cannot %s%s: %s\n", switched ? "run " : "switch to user ",
		                 switched ? "/bin/sh" : u->name, strerror(errno));
		if (write(2, msg, (size_t)n) < 0) {
			/* nowhere else to say it */
		}
		_exit(EX_TEMPFAIL);
	}
	close(in[0]);
	close(out[1]);
	struct cmdio c = {in[1], out[0], clock_mono_ms() + (timeout > 0 ? timeout : 600) * 1000LL, 0, 0, ""};
	fcntl(c.in, F_SETFL, O_NONBLOCK);
	fcntl(c.out, F_SETFL, O_NONBLOCK);
	int rd_fail = 0;
	struct io io;
	dl_io(&io, -1, cmd_write, &c);
	int wr = dl_copy(m, &io, 0, &rd_fail);
	int wr_errno = errno;
	if (c.in >= 0)
		close(c.in);
	c.in = -1;
	int st = 0, done = 0;
	while (!c.timed_out && !rd_fail) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			done = 1;
			break;
		}
		if (c.out >= 0) {
			if (wait_io(&c, 0) < 0 && !c.timed_out)
				break;
		} else {
			if (clock_mono_ms() >= c.deadline)
				c.timed_out = 1;
			else
				nanosleep(&(struct timespec){0, 5000000}, NULL); /* 5 ms (usleep is not linked) */
		}
	}
	if (!done) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		dl_wait(pid, &st);
	}
	if (c.out >= 0) {
		drain(&c);
		if (c.out >= 0)
			close(c.out);
	}
	/* the first line of what the command said */
	c.keep[c.klen] = 0;
	char *nl = strchr(c.keep, '\n');
	if (nl)
		*nl = 0;
	if (rd_fail) {
		dl_set_errno(r, wr_errno, "read", "message file");
		return;
	}
	const char *sep = *c.keep ? ": " : ""; /* before what the command said */
	int tmo = c.timed_out && !done;
	if (tmo || WIFSIGNALED(st)) {
		dl_set(r, "d4.3.0", tmo ? "command timed out after %lds%s%s" : "command killed by signal %ld%s%s",
		       tmo ? timeout : (long)WTERMSIG(st), sep, c.keep);
		return;
	}
	int code = WEXITSTATUS(st);
	if (code == 0) {
		if (wr < 0) { /* it exited 0, yet we could not hand it the message */
			dl_set(r, "d4.3.0", "writing to command: %s", strerror(wr_errno));
			return;
		}
		dl_set(r, "o2.0.0", "delivered to command");
		return;
	}
	map_exit(code, r, sep, c.keep);
}
