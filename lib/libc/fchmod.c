/* spoolbox's fchmod and fchown for the static build, linked as an object like setxid.c so that
 * musl's are never pulled: the system calls. musl's retry an EBADF through /proc/self/fd/N when
 * the descriptor is open (an O_PATH one, which these calls refuse on every kernel); spoolbox
 * calls them only on descriptors it opened to write (a spool file, a mailbox: each is then
 * written or fsync'd), where the call answers alike. Gone: musl's two fallbacks and
 * __procfdname (0.4 KiB). */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_fchown32
#define SYS_FCHOWN SYS_fchown32 /* 32-bit ARM: the call of 32-bit ids */
#else
#define SYS_FCHOWN SYS_fchown
#endif

int fchmod(int fd, mode_t mode)
{
	return (int)syscall(SYS_fchmod, fd, mode);
}

int fchown(int fd, uid_t uid, gid_t gid)
{
	return (int)syscall(SYS_FCHOWN, fd, uid, gid);
}
