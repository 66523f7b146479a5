/* Running a delivery with a user's privileges: a forked child drops to the user's groups, gid
 * and uid before it touches any mailbox, and passes its result back over a pipe (deliver.h);
 * and the passwd lookup that says who a user is. */
#include "clock.h"
#include "deliver.h"
#include "log.h"
#include "util.h"
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int dl_getpw_system(void *ctx, const char *name, struct dl_user *u)
{
	(void)ctx;
	errno = 0;
	struct passwd *pw = getpwnam(name);
	if (!pw)
		return errno && errno != ENOENT && errno != ESRCH ? -1 : 1;
	return dl_user_set(u, pw) ? -1 : 0;
}

int dl_user_set(struct dl_user *u, const struct passwd *pw)
{
	if (str_lcpy(u->name, pw->pw_name, sizeof u->name) >= sizeof u->name)
		return -1;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	return str_lcpy(u->home, pw->pw_dir ? pw->pw_dir : "/", sizeof u->home) >= sizeof u->home;
}

#define DL_GROUPS_MAX 256

int dl_become(const struct dl_user *u, long extra_gid)
{
	uid_t me = geteuid();
	if (me != 0) {
		if (u->uid == me)
			return 0;
		errno = EPERM;
		return -1;
	}
	/* the user's groups as initgroups() finds them (at most NGROUPS_MAX, musl's 32; room is
	 * left for the extra one), set once below; more than that: the primary group only */
	gid_t groups[DL_GROUPS_MAX];
	int n = NGROUPS_MAX < DL_GROUPS_MAX ? NGROUPS_MAX : DL_GROUPS_MAX - 1;
	if (getgrouplist(u->name, u->gid, groups, &n) < 0)
		groups[0] = u->gid, n = 1;
	if (extra_gid >= 0)
		groups[n++] = (gid_t)extra_gid;
	if (setgroups((size_t)n, groups) < 0 || setgid(u->gid) < 0 || setuid(u->uid) < 0)
		return -1;
	/* paranoia: a uid change that can be undone did not happen */
	if (u->uid != 0 && (setuid(0) == 0 || geteuid() != u->uid || getegid() != u->gid)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

void dl_wait(pid_t pid, int *st)
{
	while (waitpid(pid, st, 0) < 0 && errno == EINTR)
		;
}

void dl_run_as(const struct dl_user *u, long extra_gid, long timeout, dl_child_fn *fn, void *arg, struct dl_result *r)
{
	/* one refusal for both calls: a pipe not made is -1, and its close(-1) harmless */
	int p[2] = {-1, -1};
	const char *op = "pipe";
	pid_t pid = -1;
	memset(r, 0, sizeof *r);
	if (pipe(p) < 0 || (op = "fork", pid = fork()) < 0) {
		dl_set_errno(r, errno, op, "for the delivery process");
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		log_forked();
		close(p[0]);
		/* A signal must not cut a mailbox write in half: the delivery is bounded (lock
		 * timeout, then one write and fsync), so it finishes and cleans up before it exits.
		 * An over-large file gives EFBIG (and a truncation), not a silent death. */
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		signal(SIGXFSZ, SIG_IGN);
		/* the result in r, this process's copy (zeroed above) */
		if (dl_become(u, extra_gid) < 0)
			dl_set(r, "d4.3.0", "cannot switch to user %s (uid %ld): %s", u->name, (long)u->uid, strerror(errno));
		else
			fn(arg, r);
		ssize_t w = write(p[1], r, sizeof *r);
		_exit(w == (ssize_t)sizeof *r ? 0 : 1);
	}
	close(p[1]);
	size_t got = 0; /* r: zeroed above */
	long long deadline = clock_mono_ms() + (long long)timeout * 1000;
	int timed_out = 0;
	while (got < sizeof *r) {
		long long left = deadline - clock_mono_ms();
		if (timeout > 0 && left <= 0) {
			timed_out = 1;
			break;
		}
		struct pollfd pf = {p[0], POLLIN, 0};
		if (timeout > 0 && poll(&pf, 1, left > 60000 ? 60000 : (int)left) == 0)
			continue;
		ssize_t n = read(p[0], (char *)r + got, sizeof *r - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	int st;
	if (timed_out)
		kill(pid, SIGKILL); /* also ends a stopped process */
	dl_wait(pid, &st);
	r->died = 1;
	if (timed_out) {
		log_msg(LOG_WARNING, NULL, "delivery process %ld for %s timed out after %lds: killed", (long)pid, u->name, timeout);
		dl_set(r, "d4.3.0", "delivery as %s timed out after %lds (process killed)", u->name, timeout);
		return;
	}
	if (got != sizeof *r || (r->status != DL_OK && r->status != DL_DEFER && r->status != DL_FAIL && r->status != DL_CREATE)) {
		if (WIFSIGNALED(st))
			dl_set(r, "d4.3.0", "delivery process for %s killed by signal %d", u->name, WTERMSIG(st));
		else
			dl_set(r, "d4.3.0", "delivery process for %s exited %d without a result", u->name,
			       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return;
	}
	r->died = 0;
	r->enh[sizeof r->enh - 1] = 0;
	r->text[sizeof r->text - 1] = 0;
}
