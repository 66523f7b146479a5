/* spoolbox's mmap, mremap and munmap for the static build (malloc.c's calls), linked as objects
 * like setxid.c so that musl's are never pulled. musl's wait for its lock that keeps threads
 * from mapping over memory another thread is about to unmap (for MAP_FIXED, MREMAP_FIXED and
 * every munmap); spoolbox starts no thread. What else they do is kept: an offset not a multiple
 * of the page and a length past PTRDIFF_MAX refused as musl refuses them (the kernel too, except
 * mremap's length, where it would say EINVAL), and EPERM from an anonymous mapping turned into
 * ENOMEM. 32-bit ARM keeps musl's: its 64-bit offset goes to mmap2 in pages. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if ULONG_MAX > 0xffffffff
void *mmap(void *start, size_t len, int prot, int flags, int fd, off_t off)
{
	if (off & 4095) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (len >= PTRDIFF_MAX) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	void *p = (void *)syscall(SYS_mmap, start, len, prot, flags, fd, off);
	if (p == MAP_FAILED && errno == EPERM && !start && flags & MAP_ANONYMOUS && !(flags & MAP_FIXED))
		errno = ENOMEM;
	return p;
}

/* the new address where a fifth named argument would be (lib/libc/open.c says why that holds
 * here), read only with MREMAP_FIXED, as musl's va_arg */
static void *mremap_5(void *old, size_t old_len, size_t new_len, int flags, void *new)
{
	if (new_len >= PTRDIFF_MAX) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (!(flags & MREMAP_FIXED))
		new = 0;
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new);
}

#define STR_(x) #x
#define STR(x) STR_(x)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattribute-alias"
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) __attribute__((alias(STR(mremap_5))));
#pragma GCC diagnostic pop

int munmap(void *start, size_t len)
{
	return (int)syscall(SYS_munmap, start, len);
}
#else
typedef int mmap_is_musls; /* an empty file is not ISO C */
#endif
