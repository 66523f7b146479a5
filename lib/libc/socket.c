/* spoolbox's socket, socketpair and accept4 for the static build, linked as objects like setxid.c
 * so that musl's are never pulled. musl's retry a call that failed with SOCK_CLOEXEC or
 * SOCK_NONBLOCK in the type without them and set the flags by fcntl, for kernels before 2.6.27,
 * which refused them (accept4 goes to accept then, and accept4 without flags is accept, which
 * arm64 and armhf have as well); with the flags known to every kernel since, the retry fails as
 * the first call did. Here: the system call (socket, socketpair, accept4 exist on x86-64, arm64
 * and armhf alike), -1 and errno on failure. spoolbox starts no thread: accept4 need not be a
 * cancellation point. */
#include <limits.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int socket(int domain, int type, int protocol)
{
	return (int)syscall(SYS_socket, domain, type, protocol);
}

int socketpair(int domain, int type, int protocol, int fd[2])
{
	return (int)syscall(SYS_socketpair, domain, type, protocol, fd);
}

int accept4(int fd, struct sockaddr *restrict addr, socklen_t *restrict len, int flags)
{
	return (int)syscall(SYS_accept4, fd, addr, len, flags);
}

/* bind, listen, shutdown, getsockname, getpeername: musl's are the same calls made through its
 * six-argument socketcall macro (0.2 KiB together); setsockopt and getsockopt too on 64-bit
 * machines, where SO_RCVTIMEO is the one timeval the kernel knows (32-bit ARM keeps musl's,
 * which converts 64-bit times for kernels before 5.1). */
int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	return (int)syscall(SYS_bind, fd, addr, len);
}

int listen(int fd, int backlog)
{
	return (int)syscall(SYS_listen, fd, backlog);
}

int shutdown(int fd, int how)
{
	return (int)syscall(SYS_shutdown, fd, how);
}

int getsockname(int fd, struct sockaddr *restrict addr, socklen_t *restrict len)
{
	return (int)syscall(SYS_getsockname, fd, addr, len);
}

int getpeername(int fd, struct sockaddr *restrict addr, socklen_t *restrict len)
{
	return (int)syscall(SYS_getpeername, fd, addr, len);
}

#if ULONG_MAX > 0xffffffffUL
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	return (int)syscall(SYS_setsockopt, fd, level, name, val, len);
}

int getsockopt(int fd, int level, int name, void *restrict val, socklen_t *restrict len)
{
	return (int)syscall(SYS_getsockopt, fd, level, name, val, len);
}
#endif
