/* spoolbox's read, write, close, pread, pwrite, fsync, fdatasync, waitpid, connect, sendto,
 * recvfrom, poll, ppoll and getrandom for the static build, linked as objects like setxid.c so
 * that musl's are never pulled. musl makes each of these system calls through __syscall_cp, the
 * thread cancellation point; spoolbox starts no thread (and so cancels none), and these are the
 * calls themselves, -1 and errno on failure (what syscall() returns). What musl adds beyond the
 * cancellation point is kept: close treats EINTR as done (the descriptor is gone on Linux, and a
 * retry could close another one), ppoll leaves the caller's timeout as it was (the kernel writes
 * the time left into it), and poll on arm64, which has no poll call, is ppoll with the
 * milliseconds as a timespec. 32-bit ARM keeps musl's pread, pwrite (a 64-bit offset in a
 * register pair) and ppoll (its 64-bit times need ppoll_time64, Linux 5.1, and musl's fallback
 * for older kernels). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

ssize_t read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

int close(int fd)
{
	int e = errno;
	if (syscall(SYS_close, fd) == 0 || errno == EINTR) {
		errno = e;
		return 0;
	}
	return -1;
}

#if ULONG_MAX > 0xffffffff
ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	return syscall(SYS_pread64, fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return syscall(SYS_pwrite64, fd, buf, n, off);
}
#endif

int fsync(int fd)
{
	return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
	return (int)syscall(SYS_fdatasync, fd);
}

pid_t waitpid(pid_t pid, int *status, int options)
{
	return (pid_t)syscall(SYS_wait4, pid, status, options, 0);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	return (int)syscall(SYS_connect, fd, addr, len);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr, socklen_t len)
{
	return syscall(SYS_sendto, fd, buf, n, flags, addr, len);
}

ssize_t recvfrom(int fd, void *restrict buf, size_t n, int flags, struct sockaddr *restrict addr,
                 socklen_t *restrict len)
{
	return syscall(SYS_recvfrom, fd, buf, n, flags, addr, len);
}

int poll(struct pollfd *fds, nfds_t n, int ms)
{
#ifdef SYS_poll
	return (int)syscall(SYS_poll, fds, n, ms);
#else
	struct timespec t = {ms / 1000, ms % 1000 * 1000000L};
	return (int)syscall(SYS_ppoll, fds, n, ms >= 0 ? &t : 0, 0, _NSIG / 8);
#endif
}

#ifndef SYS_ppoll_time64
int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *to, const sigset_t *mask)
{
	struct timespec t;
	if (to)
		t = *to;
	return (int)syscall(SYS_ppoll, fds, n, to ? &t : 0, mask, _NSIG / 8);
}
#endif

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
	return syscall(SYS_getrandom, buf, n, flags);
}
