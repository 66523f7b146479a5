/* spoolbox's stdio for the static build, linked as objects like vfprintf.c so that musl's FILE
 * machinery (locks, read/write/seek hooks, ungetc room: 6 KiB) is never pulled: the part the
 * applets use. stdout (buffered; by lines when a terminal), stderr (unbuffered), fopen/fdopen
 * streams for reading lines (mailq) or writing, fwrite and the put functions, fgets, fflush,
 * ferror, fclose, printf, fprintf and dprintf (all through vfprintf, lib/libc/vfprintf.c, which
 * writes with fwrite). exit() flushes every stream, as musl's does, through __stdio_exit, the
 * hook musl's exit calls (a no-op there unless its stdio is linked). Not here, because nothing
 * calls them: stdin, scanf, ungetc, seeking, setvbuf, wide characters; fdopen does not set
 * O_APPEND for "a". The process has no threads: no locks. */
#include "fmt.h"
#include "io.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SF_ERR 1
#define SF_EOF 2
#define SF_NBF 4     /* unbuffered (stderr) */
#define SF_LBF 8     /* flushed at each newline (a terminal) */
#define SF_READ 16
#define SF_ASKED 32  /* whether it is a terminal was asked */

struct _IO_FILE {
	int fd, flags;
	size_t pos, len;         /* reading: buf[pos..len); writing: buf[0..len) */
	struct _IO_FILE *next;   /* the streams fdopen made, flushed by exit */
	unsigned char *buf;      /* BUFSIZ bytes (none for stderr): apart, so that stdout's is .bss */
};

static unsigned char sf_out_buf[BUFSIZ];
static FILE sf_out = {1, 0, 0, 0, NULL, sf_out_buf}, sf_err = {2, SF_NBF | SF_ASKED, 0, 0, NULL, NULL};
FILE *const stdout = &sf_out;
FILE *const stderr = &sf_err;
static FILE *sf_open;

/* All of p[0..n) to f's descriptor (lib/io.c's write-all: short writes, EINTR); -1 and the
 * error flag set when that fails. */
static int sf_write(FILE *f, const void *p, size_t n)
{
	if (io_write_all_fd(f->fd, p, n) < 0) {
		f->flags |= SF_ERR;
		return -1;
	}
	return 0;
}

int fflush(FILE *f)
{
	if (!f) {
		int r = fflush(stdout);
		for (FILE *o = sf_open; o; o = o->next)
			r |= fflush(o);
		return r;
	}
	if (f->flags & SF_READ || !f->len)
		return 0;
	size_t n = f->len;
	f->len = 0;
	return sf_write(f, f->buf, n) < 0 ? EOF : 0;
}

void __stdio_exit(void);
void __stdio_exit(void)
{
	fflush(NULL);
}

size_t fwrite(const void *restrict p, size_t size, size_t nmemb, FILE *restrict f)
{
	size_t n = size * nmemb;
	if (!n)
		return 0;
	if (!(f->flags & SF_ASKED)) {
		f->flags |= SF_ASKED | (isatty(f->fd) ? SF_LBF : 0);
	}
	if (f->flags & SF_NBF || n >= BUFSIZ - f->len) {
		if (fflush(f) == EOF)
			return 0;
		if (f->flags & SF_NBF || n >= BUFSIZ)
			return sf_write(f, p, n) < 0 ? 0 : nmemb;
	}
	memcpy(f->buf + f->len, p, n);
	f->len += n;
	if (f->flags & SF_LBF && memchr(p, '\n', n) && fflush(f) == EOF)
		return 0;
	return nmemb;
}

int fputc(int c, FILE *f)
{
	unsigned char b = (unsigned char)c;
	return fwrite(&b, 1, 1, f) ? b : EOF;
}

int putc(int c, FILE *f)
{
	return fputc(c, f);
}

int putchar(int c)
{
	return fputc(c, stdout);
}

int fputs(const char *restrict s, FILE *restrict f)
{
	size_t n = strlen(s);
	return fwrite(s, 1, n, f) == n || !n ? 0 : EOF;
}

int puts(const char *s)
{
	return fputs(s, stdout) == EOF || fputc('\n', stdout) == EOF ? EOF : 0;
}

int ferror(FILE *f)
{
	return f->flags & SF_ERR;
}

char *fgets(char *restrict s, int n, FILE *restrict f)
{
	char *p = s;
	if (n < 1)
		return NULL;
	while (--n > 0) {
		if (f->pos == f->len) {
			ssize_t r;
			while ((r = read(f->fd, f->buf, BUFSIZ)) < 0 && errno == EINTR)
				;
			if (r <= 0) {
				f->flags |= r ? SF_ERR : SF_EOF;
				break;
			}
			f->pos = 0;
			f->len = (size_t)r;
		}
		if ((*p++ = (char)f->buf[f->pos++]) == '\n')
			break;
	}
	if (p == s && n > 0)
		return NULL; /* nothing before the end or an error */
	*p = 0;
	return s;
}

FILE *fdopen(int fd, const char *mode)
{
	FILE *f = calloc(1, sizeof *f + BUFSIZ);
	if (!f)
		return NULL;
	f->buf = (unsigned char *)(f + 1);
	f->fd = fd;
	f->flags = *mode == 'r' && !strchr(mode, '+') ? SF_READ : 0;
	f->next = sf_open;
	sf_open = f;
	return f;
}

FILE *fopen(const char *restrict path, const char *restrict mode)
{
	int fl = *mode == 'r' ? O_RDONLY : *mode == 'w' ? O_WRONLY | O_CREAT | O_TRUNC : O_WRONLY | O_CREAT | O_APPEND;
	if (strchr(mode, '+'))
		fl = (fl & ~O_ACCMODE) | O_RDWR;
	fl |= (strchr(mode, 'x') ? O_EXCL : 0) | (strchr(mode, 'e') ? O_CLOEXEC : 0);
	int fd = open(path, fl, 0666);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, mode);
	if (!f)
		close(fd);
	return f;
}

int fclose(FILE *f)
{
	int r = fflush(f);
	for (FILE **o = &sf_open; *o; o = &(*o)->next)
		if (*o == f) {
			*o = f->next;
			break;
		}
	if (close(f->fd) < 0)
		r = EOF;
	if (f != stdout && f != stderr)
		free(f);
	return r;
}


int vdprintf(int fd, const char *restrict fmt, va_list ap)
{
	unsigned char buf[BUFSIZ];
	FILE f = {fd, SF_ASKED, 0, 0, NULL, buf};
	int n = vfprintf(&f, fmt, ap);
	return fflush(&f) == EOF || ferror(&f) ? -1 : n;
}

/* dprintf, printf and fprintf: on x86-64 entries into lib/fmt.c's shared variadic prologue
 * (FMT_VA_ENTRY), which calls these with the va_list; elsewhere the C functions below */
__attribute__((used)) static int dprintf_v(int fd, const char *fmt, long c, long d, va_list ap)
{
	return vdprintf(fd, fmt, ap);
}

/* musl's printf names its own stdout FILE: these are ours */
__attribute__((used)) static int printf_v(const char *fmt, long b, long c, long d, va_list ap)
{
	return vfprintf(stdout, fmt, ap);
}

__attribute__((used)) static int fprintf_v(FILE *f, const char *fmt, long c, long d, va_list ap)
{
	return vfprintf(f, fmt, ap);
}

FMT_VA_ENTRY(dprintf, 2, dprintf_v);
FMT_VA_ENTRY(printf, 1, printf_v);
FMT_VA_ENTRY(fprintf, 2, fprintf_v);
#if !FMT_VA_ASM
int dprintf(int fd, const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = dprintf_v(fd, fmt, 0, 0, ap);
	va_end(ap);
	return n;
}

int printf(const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = printf_v(fmt, 0, 0, 0, ap);
	va_end(ap);
	return n;
}

int fprintf(FILE *restrict f, const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = fprintf_v(f, fmt, 0, 0, ap);
	va_end(ap);
	return n;
}
#endif

int vprintf(const char *restrict fmt, va_list ap)
{
	return vfprintf(stdout, fmt, ap);
}
