/* spoolbox's qsort for the static musl build, linked as an object like vfprintf.c: a heapsort
 * in place of musl's smoothsort (2.1 KiB with qsort_r), used by our sorts and by musl's own
 * getaddrinfo. O(n log n) in every case, no recursion, no allocation; like any qsort, not
 * stable. */
#include <stddef.h>
#include <stdlib.h>

static void swap(char *a, char *b, size_t size)
{
	for (char t; size--; a++, b++) {
		t = *a;
		*a = *b;
		*b = t;
	}
}

/* moves element i down the heap of n elements until neither child is larger */
static void sift(char *base, size_t i, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && cmp(base + c * size, base + (c + 1) * size) < 0)
			c++;
		if (cmp(base + i * size, base + c * size) >= 0)
			return;
		swap(base + i * size, base + c * size, size);
	}
}

void qsort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *base = v;
	for (size_t i = n / 2; i-- > 0;)
		sift(base, i, n, size, cmp);
	for (size_t end = n; end-- > 1;) {
		swap(base, base + end * size, size);
		sift(base, 0, end, size, cmp);
	}
}
