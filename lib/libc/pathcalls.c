/* spoolbox's path and process calls for the static build, linked as an object like setxid.c so
 * that musl's are never pulled: each is one system call, here through syscall() (a few bytes of
 * argument moves and a jump) instead of musl's own stub apiece, which -O2 aligns to 16 bytes.
 * The same calls as musl's (what strace shows, and the tests read): the old path call where
 * the architecture has it (x86-64, armhf), else its *at form on AT_FDCWD (arm64). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_unlink
#define UNLINK(p) syscall(SYS_unlink, p)
#define RMDIR(p) syscall(SYS_rmdir, p)
#define MKDIR(p, m) syscall(SYS_mkdir, p, m)
#define LINK(a, b) syscall(SYS_link, a, b)
#define SYMLINK(a, b) syscall(SYS_symlink, a, b)
#define RENAME(a, b) syscall(SYS_rename, a, b)
#define CHMOD(p, m) syscall(SYS_chmod, p, m)
#define ACCESS(p, m) syscall(SYS_access, p, m)
#else
#define UNLINK(p) syscall(SYS_unlinkat, AT_FDCWD, p, 0)
#define RMDIR(p) syscall(SYS_unlinkat, AT_FDCWD, p, AT_REMOVEDIR)
#define MKDIR(p, m) syscall(SYS_mkdirat, AT_FDCWD, p, m)
#define LINK(a, b) syscall(SYS_linkat, AT_FDCWD, a, AT_FDCWD, b, 0)
#define SYMLINK(a, b) syscall(SYS_symlinkat, a, AT_FDCWD, b)
#define RENAME(a, b) syscall(SYS_renameat, AT_FDCWD, a, AT_FDCWD, b)
#define CHMOD(p, m) syscall(SYS_fchmodat, AT_FDCWD, p, m)
#define ACCESS(p, m) syscall(SYS_faccessat, AT_FDCWD, p, m)
#endif

int unlink(const char *path)
{
	return (int)UNLINK(path);
}

int rmdir(const char *path)
{
	return (int)RMDIR(path);
}

int mkdir(const char *path, mode_t mode)
{
	return (int)MKDIR(path, mode);
}

int link(const char *old, const char *new)
{
	return (int)LINK(old, new);
}

int symlink(const char *old, const char *new)
{
	return (int)SYMLINK(old, new);
}

int rename(const char *old, const char *new)
{
	return (int)RENAME(old, new);
}

int chmod(const char *path, mode_t mode)
{
	return (int)CHMOD(path, mode);
}

int access(const char *path, int mode)
{
	return (int)ACCESS(path, mode);
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
