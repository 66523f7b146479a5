/* spoolbox's path and process calls for the static build, linked as an object like setxid.c so
 * that musl's are never pulled: each is one system call, here through syscall() (a few bytes of
 * argument moves and a jump) instead of musl's own stub apiece, which -O2 aligns to 16 bytes.
 * The path calls are their *at forms on AT_FDCWD on every architecture (Linux 2.6.16; musl makes
 * them so on arm64, which has no other): the kernel does the same for both. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int unlink(const char *path)
{
	return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

int rmdir(const char *path)
{
	return (int)syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR);
}

int mkdir(const char *path, mode_t mode)
{
	return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
}

int link(const char *old, const char *new)
{
	return (int)syscall(SYS_linkat, AT_FDCWD, old, AT_FDCWD, new, 0);
}

int symlink(const char *old, const char *new)
{
	return (int)syscall(SYS_symlinkat, old, AT_FDCWD, new);
}

int rename(const char *old, const char *new)
{
	return (int)syscall(SYS_renameat, AT_FDCWD, old, AT_FDCWD, new);
}

int chmod(const char *path, mode_t mode)
{
	return (int)syscall(SYS_fchmodat, AT_FDCWD, path, mode);
}

int access(const char *path, int mode)
{
	return (int)syscall(SYS_faccessat, AT_FDCWD, path, mode);
}

int chdir(const char *path)
{
	return (int)syscall(SYS_chdir, path);
}

int kill(pid_t pid, int sig)
{
	return (int)syscall(SYS_kill, pid, sig);
}

pid_t setsid(void)
{
	return (pid_t)syscall(SYS_setsid);
}
