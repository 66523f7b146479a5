/* spoolbox's fstat, fstatat, stat and lstat for the static build (x86-64, arm64), linked as an
 * object like setxid.c so that musl's are never pulled. On these architectures the kernel's
 * struct stat is musl's, so the calls write the caller's struct directly; musl's fstatat (0.5 KiB)
 * copies it field by field from a struct kstat. Kept from musl: fstat first as the fstat call,
 * and for an O_PATH descriptor on a kernel before 3.6 (EBADF there) again as fstatat with
 * AT_EMPTY_PATH (2.6.39, as old as O_PATH: musl's further fallback through /proc/self/fd serves
 * no kernel that has O_PATH). fstatat of "" with AT_EMPTY_PATH is fstat, as musl's; stat and lstat
 * are the stat and lstat calls where they exist (x86-64), as musl's, else fstatat's. musl also
 * makes fstatat of an absolute path a stat or lstat call: spoolbox's one caller (qctl) passes
 * a directory entry's name. 32-bit ARM
 * keeps musl's: its struct stat has 64-bit times, which only statx gives. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(SYS_newfstatat) && ULONG_MAX > 0xffffffffUL
#ifdef __x86_64__
_Static_assert(sizeof(struct stat) == 144, "struct stat is the kernel's");
#else
_Static_assert(sizeof(struct stat) == 128, "struct stat is the kernel's");
#endif

/* the calls musl makes (what strace shows, and the tests read) */
#ifdef SYS_stat
#define STAT_CALL(p, st) syscall(SYS_stat, p, st)
#define LSTAT_CALL(p, st) syscall(SYS_lstat, p, st)
#else
#define STAT_CALL(p, st) syscall(SYS_newfstatat, AT_FDCWD, p, st, 0)
#define LSTAT_CALL(p, st) syscall(SYS_newfstatat, AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW)
#endif

int fstat(int fd, struct stat *st)
{
	int r = (int)syscall(SYS_fstat, fd, st);
	if (r && errno == EBADF && fd >= 0)
		r = (int)syscall(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH);
	return r;
}

int fstatat(int fd, const char *restrict path, struct stat *restrict st, int flag)
{
	if (flag == AT_EMPTY_PATH && fd >= 0 && !*path)
		return fstat(fd, st);
	return (int)syscall(SYS_newfstatat, fd, path, st, flag);
}

int stat(const char *restrict path, struct stat *restrict st)
{
	return (int)STAT_CALL(path, st);
}

int lstat(const char *restrict path, struct stat *restrict st)
{
	return (int)LSTAT_CALL(path, st);
}
#else
typedef int stat_is_musls; /* an empty file is not ISO C */
#endif
