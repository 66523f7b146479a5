/* spoolbox's set*id, setgroups and setrlimit for the static build, linked as objects like
 * vfprintf.c so that musl's are never pulled. musl must change the ids and limits of every
 * thread of a process, so each of these goes through its __synccall: 1.9 KiB of code
 * (semaphores, a signal broadcast) and 16 rt_sigprocmask calls per local delivery. spoolbox
 * never starts a thread (no pthread call anywhere), so the kernel's calls, which change the
 * calling thread only, change the whole process: these are the plain system calls, -1 and errno
 * on failure (what syscall() returns). 32-bit ARM and i386 have 16-bit ids in the old call
 * numbers; the *32 calls take full ids, as musl's own wrappers do. getrlimit is here with
 * setrlimit: musl's falls back to the old getrlimit call for kernels before 2.6.36 (prlimit64)
 * and turns the kernel's infinity into RLIM_INFINITY, which are the same number on these
 * architectures. */
#include <grp.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_setuid32
#undef SYS_setuid
#undef SYS_setgid
#undef SYS_setresuid
#undef SYS_setresgid
#undef SYS_setgroups
#define SYS_setuid SYS_setuid32
#define SYS_setgid SYS_setgid32
#define SYS_setresuid SYS_setresuid32
#define SYS_setresgid SYS_setresgid32
#define SYS_setgroups SYS_setgroups32
#endif

/* syscall() sets errno and returns -1 on failure, as the wrappers must */
int setuid(uid_t u)
{
	return (int)syscall(SYS_setuid, u);
}

int setgid(gid_t g)
{
	return (int)syscall(SYS_setgid, g);
}

int setresuid(uid_t r, uid_t e, uid_t s)
{
	return (int)syscall(SYS_setresuid, r, e, s);
}

int setresgid(gid_t r, gid_t e, gid_t s)
{
	return (int)syscall(SYS_setresgid, r, e, s);
}

/* POSIX: only the effective id changes (the saved one with it when root, as the kernel's
 * setresuid(-1, e, -1) leaves it: musl's seteuid is exactly this call) */
int seteuid(uid_t e)
{
	return setresuid((uid_t)-1, e, (uid_t)-1);
}

int setegid(gid_t e)
{
	return setresgid((gid_t)-1, e, (gid_t)-1);
}

int setgroups(size_t n, const gid_t *list)
{
	return (int)syscall(SYS_setgroups, n, list);
}

/* musl's rlim_t is 64 bits on every architecture, as prlimit64's struct is */
int setrlimit(int resource, const struct rlimit *rl)
{
	return (int)syscall(SYS_prlimit64, 0, resource, rl, 0);
}

int getrlimit(int resource, struct rlimit *rl)
{
	return (int)syscall(SYS_prlimit64, 0, resource, 0, rl);
}
