/* spoolbox's faccessat for the static build, linked as an object like setxid.c so that musl's is
 * never pulled. The same contract as musl's: a flag goes to faccessat2 (Linux 5.8); where the
 * kernel lacks it, AT_EACCESS with differing real and effective ids is answered by a child
 * process that takes the effective ids as its real ones and asks the old call (mailq and the
 * hold check ask it so in a setgid mailq). musl runs that child on a stack of its own through
 * __clone and passes the answer back through a pipe (0.7 KiB); here the child is a copy of the
 * process (clone without CLONE_VM, like fork, and no exit signal, so the caller's SIGCHLD
 * handler never sees it) and the answer is its exit status: 0, an errno, or 255 when it could
 * not change its ids (EBUSY, as musl's). Every signal stays blocked meanwhile, as in musl. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef SYS_setreuid32
#undef SYS_setreuid
#undef SYS_setregid
#define SYS_setreuid SYS_setreuid32
#define SYS_setregid SYS_setregid32
#endif

/* access(2) of path as the effective ids see it, in a child */
static int eaccess_child(int fd, const char *path, int amode)
{
	sigset_t all, old;
	int st = 0;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid_t pid = (pid_t)syscall(SYS_clone, 0, 0, 0, 0, 0);
	if (pid == 0) {
		if (syscall(SYS_setregid, getegid(), -1) || syscall(SYS_setreuid, geteuid(), -1))
			_exit(255);
		_exit(syscall(SYS_faccessat, fd, path, amode) ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &st, __WCLONE) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
		st = EBUSY;
	else
		st = WEXITSTATUS(st);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (st)
		errno = st;
	return st ? -1 : 0;
}

int faccessat(int fd, const char *path, int amode, int flag)
{
	if (flag) {
		long r = syscall(SYS_faccessat2, fd, path, amode, flag);
		if (r == 0 || errno != ENOSYS)
			return (int)r;
	}
	if (flag & ~AT_EACCESS) {
		errno = EINVAL;
		return -1;
	}
	if (!flag || (getuid() == geteuid() && getgid() == getegid()))
		return (int)syscall(SYS_faccessat, fd, path, amode);
	return eaccess_child(fd, path, amode);
}
