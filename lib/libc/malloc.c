/* spoolbox's malloc, free, calloc and realloc for the static build, linked as objects like
 * vfprintf.c so that musl's mallocng (8.9 KiB: out-of-band metadata, hardening against heap
 * corruption, thread locks) is never pulled; this one is under 1 KiB.
 *
 * Small blocks (up to MAL_BIG bytes) come in size classes, four per doubling (16, 32, 48, 64,
 * 80, 96, 112, 128, 160, ...: at most a quarter wasted), cut from the heap (brk) and
 * kept on one free list per class when freed, for the next block of that class (the last block
 * cut goes back to the heap instead, and grows in place, as a growing buffer does): the scheduler,
 * the long-running process, allocates the same few kinds of block for every message, so a freed
 * one is soon reused, and its resident memory stays at the peak of its queue. Larger blocks are
 * mappings of their own, returned to the kernel by free and grown in place by mremap.
 * Each block follows a MAL_HDR-byte header (its usable size and class), which keeps the 16-byte
 * alignment malloc owes. The process never starts a thread (lib/libc/setxid.c), so there are no
 * locks; a fork()ed child has its own copy. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAL_HDR 16
#define MAL_BIG 32768            /* the largest class */
#define MAL_ARENA (256 * 1024)   /* the mapping small blocks come from where the break cannot move */
#define MAL_MAPPED ((size_t)-1)  /* the class of a block that is a mapping of its own */
#define MAL_CLASSES 40

static void *mal_free[MAL_CLASSES];
static char *mal_cur, *mal_end; /* the room left for small blocks: the heap's, or a mapping's */
/* From here to mal_end the room has never been handed out, so it is zero as the kernel gave it:
 * calloc clears only what lies below. The scheduler's calloc'd tables and buffers (the log's
 * hold, the query socket's state, the hash) then stay untouched pages until they are used:
 * 48 KiB less resident memory for an idle scheduler (docs/scheduler.md). */
static char *mal_clean;

/* The size of class c: 16 to 64 by 16, then four steps per doubling up to MAL_BIG. */
static size_t mal_size(unsigned c)
{
	if (c < 4)
		return (c + 1) * 16;
	unsigned k = (c - 4) / 4, j = (c - 4) % 4;
	return ((size_t)64 << k) + (j + 1) * ((size_t)16 << k);
}

static unsigned mal_class(size_t n)
{
	unsigned c = 0;
	while (mal_size(c) < n)
		c++;
	return c;
}

static size_t *mal_hdr(void *p)
{
	return (size_t *)((char *)p - MAL_HDR);
}

/* A block at b (header included) of class c, returned as the caller's pointer. */
static void *mal_mark(char *b, size_t size, size_t c)
{
	size_t *h = (size_t *)b;
	h[0] = size;
	h[1] = c;
	return b + MAL_HDR;
}

/* The public names call these: GCC reasons about what malloc returns, and this is where it comes
 * from. */
static void mal_release(void *p)
{
	if (!p)
		return;
	size_t *h = mal_hdr(p);
	if (h[1] == MAL_MAPPED) {
		munmap(h, h[0] + MAL_HDR);
		return;
	}
	if ((char *)p + h[0] == mal_cur) { /* the last block cut: back to the arena */
		mal_cur = (char *)h;
		return;
	}
	*(void **)p = mal_free[h[1]];
	mal_free[h[1]] = p;
}

/* Room for need more bytes at mal_cur: the heap's break moved up by whole pages as it is used
 * (so the address space grows with what is allocated, as with musl's, and an RLIMIT_AS cap is
 * met where it should be: a larger step would leave room under the cap that a test of it, the
 * scheduler's reload out of memory, never reaches), or, where the break cannot move, a new
 * MAL_ARENA mapping, what was left of the old room going to the free lists, largest first.
 * The break is this allocator's alone (nothing else in the static binary calls brk or sbrk): it
 * is asked for once and remembered, one system call a growth instead of two. */
static int mal_grow(size_t need)
{
	static char *brk_top;
	if (!brk_top)
		brk_top = mal_cur = mal_end = mal_clean = (char *)(((uintptr_t)syscall(SYS_brk, 0) + 15) & ~(uintptr_t)15);
	/* only where our room ends at the break */
	if (mal_end == brk_top) {
		char *want = (char *)(((uintptr_t)mal_cur + need + 4095) & ~(uintptr_t)4095);
		if ((char *)syscall(SYS_brk, want) == want) {
			brk_top = mal_end = want;
			return 0;
		}
	}
	while (mal_end - mal_cur >= 16 + MAL_HDR) {
		unsigned k = mal_class((size_t)(mal_end - mal_cur) - MAL_HDR + 1) - 1;
		mal_release(mal_mark(mal_cur, mal_size(k), k));
		mal_cur += mal_size(k) + MAL_HDR;
	}
	char *a = mmap(NULL, MAL_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return -1;
	mal_cur = mal_clean = a;
	mal_end = a + MAL_ARENA;
	return 0;
}

static void *mal_map(size_t n)
{
	size_t len = (n + MAL_HDR + 4095) & ~(size_t)4095;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : mal_mark(m, len - MAL_HDR, MAL_MAPPED);
}

/* zero: the block is cleared (calloc), where it may not be zero already */
static void *mal_alloc(size_t n, int zero)
{
	if (n > MAL_BIG) {
		if (n > PTRDIFF_MAX - 2 * 4096) {
			errno = ENOMEM;
			return NULL;
		}
		return mal_map(n);
	}
	unsigned c = mal_class(n);
	size_t size = mal_size(c);
	void *p = mal_free[c];
	if (p) {
		mal_free[c] = *(void **)p;
		return zero ? memset(p, 0, n) : p;
	}
	if ((size_t)(mal_end - mal_cur) < size + MAL_HDR && mal_grow(size + MAL_HDR) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	p = mal_mark(mal_cur, size, c);
	mal_cur += size + MAL_HDR;
	if (zero && (char *)p < mal_clean)
		memset(p, 0, (size_t)(mal_clean - (char *)p) < n ? (size_t)(mal_clean - (char *)p) : n);
	if (mal_cur > mal_clean)
		mal_clean = mal_cur;
	return p;
}

void *malloc(size_t n)
{
	return mal_alloc(n, 0);
}

void free(void *p)
{
	mal_release(p);
}

void *calloc(size_t m, size_t n)
{
	size_t t;
	if (__builtin_mul_overflow(m, n, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	return mal_alloc(t, 1); /* a new mapping is zero already */
}

void *realloc(void *p, size_t n)
{
	if (!p)
		return mal_alloc(n, 0);
	size_t *h = mal_hdr(p), old = h[0];
	if (h[1] == MAL_MAPPED && n > MAL_BIG && n <= PTRDIFF_MAX - 2 * 4096) {
		size_t len = (n + MAL_HDR + 4095) & ~(size_t)4095;
		void *m = mremap(h, old + MAL_HDR, len, MREMAP_MAYMOVE);
		if (m == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		return mal_mark(m, len - MAL_HDR, MAL_MAPPED);
	}
	if (n <= old && h[1] != MAL_MAPPED)
		return p; /* it fits in its class */
	if (n <= MAL_BIG && (char *)p + old == mal_cur) { /* the last block cut grows in place */
		unsigned c = mal_class(n);
		if ((size_t)(mal_end - (char *)p) >= mal_size(c)) {
			mal_cur = (char *)p + mal_size(c);
			if (mal_cur > mal_clean)
				mal_clean = mal_cur;
			return mal_mark((char *)h, mal_size(c), c);
		}
	}
	void *q = mal_alloc(n, 0);
	if (q) {
		memcpy(q, p, n < old ? n : old);
		mal_release(p);
	}
	return q;
}

/* musl's own code allocates through these internal names (its time-zone reader does): the same
 * allocator, so that musl's is not pulled for them and no block crosses from one to the other. */
void *__libc_malloc(size_t n);
void __libc_free(void *p);
void *__libc_calloc(size_t m, size_t n);
void *__libc_realloc(void *p, size_t n);
void *__libc_malloc(size_t n)
{
	return mal_alloc(n, 0);
}

void __libc_free(void *p)
{
	mal_release(p);
}

void *__libc_calloc(size_t m, size_t n)
{
	return calloc(m, n);
}

void *__libc_realloc(void *p, size_t n)
{
	return realloc(p, n);
}
