/* spoolbox's statfs and statvfs for the static build, linked as an object like setxid.c so that
 * musl's are never pulled: musl's code (the statfs call, its struct zeroed first for kernels that
 * leave f_flags unset; statvfs copies it into a zeroed struct statvfs: f_frsize falls back to f_bsize,
 * f_favail is f_ffree) compiled with our flags (libc.a's is -O2 with a stack protector). */
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_statfs64
#define STATFS_CALL(path, buf) syscall(SYS_statfs64, path, sizeof *(buf), buf) /* 32-bit ARM */
#else
#define STATFS_CALL(path, buf) syscall(SYS_statfs, path, buf)
#endif

int statfs(const char *path, struct statfs *buf)
{
	*buf = (struct statfs){0};
	return (int)STATFS_CALL(path, buf);
}

int statvfs(const char *restrict path, struct statvfs *restrict out)
{
	struct statfs in;
	if (statfs(path, &in) < 0)
		return -1;
	*out = (struct statvfs){
		.f_bsize = in.f_bsize,
		.f_frsize = in.f_frsize ? in.f_frsize : in.f_bsize,
		.f_blocks = in.f_blocks,
		.f_bfree = in.f_bfree,
		.f_bavail = in.f_bavail,
		.f_files = in.f_files,
		.f_ffree = in.f_ffree,
		.f_favail = in.f_ffree,
		.f_fsid = in.f_fsid.__val[0],
		.f_flag = in.f_flags,
		.f_namemax = in.f_namelen,
	};
	return 0;
}
