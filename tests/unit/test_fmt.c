/* lib/fmt.c, the formatter the static build prints with (lib/libc/vfprintf.c): every conversion
 * spoolbox and musl's callers use, against the C library's snprintf of this (glibc) build. */
#include "fmt.h"
#include "unit.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdint.h>

static int fmt_sn(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* the same call through both, compared: output and length */
#define SAME(...) do { char fa_[512], lb_[512]; \
	int na_ = fmt_sn(fa_, sizeof fa_, __VA_ARGS__), nb_ = snprintf(lb_, sizeof lb_, __VA_ARGS__); \
	CHECK_STR(fa_, lb_); CHECK_INT(na_, nb_); } while (0)

TEST(fmt_integers_as_libc)
{
	SAME("%d %i %u", 0, -1, 4000000000u);
	SAME("%d|%d", INT32_MIN, INT32_MAX);
	SAME("%ld %lu %lld %llu", -123456789012L, 123456789012UL, (long long)INT64_MIN, (unsigned long long)UINT64_MAX);
	SAME("%zu %jd %td", (size_t)77, (intmax_t)-5, (ptrdiff_t)-9);
	SAME("%hhd %hhu %hd %hu", 300, 300, 70000, 70000);
	SAME("%x %X %o %#x %#X %#o %#o", 0xbeefu, 0xbeefu, 0755u, 255u, 255u, 8u, 0u);
	SAME("%02x%02x %04o %03o %04x %016llx", 1u, 171u, 0644u, 7u, 0xabu, 0x1234ULL);
	SAME("[%5d] [%-5d] [%05d] [%+d] [% d] [%+05d] [%-+5d]", 42, 42, -42, 42, 42, 42, -42);
	SAME("[%.0d] [%.0u] [%.3d] [%8.3d] [%-8.3d]", 0, 0u, 7, -7, 7);
	SAME("%02d:%02d:%02d %2d %016lld %010llu %06ld", 1, 2, 3, 4, 5LL, 6ULL, -7L);
	SAME("[%*d] [%-*d] [%*d] [%.*d]", 6, 1, 6, 2, -6, 3, 4, 5);
}

TEST(fmt_strings_and_chars_as_libc)
{
	SAME("%s|%10s|%-10s|%.3s|%8.2s|%.*s|%*s", "abc", "abc", "abc", "abcdef", "abcdef", 2, "xyz", 4, "q");
	SAME("%c%c%5c%-3c|", 'a', 'b', 'c', 'd');
	SAME("100%% %s", "sure");
	SAME("%19.19s|%-17s|", "a long string of more than nineteen", "x");
	SAME("%s", "");
	char a[16];
	/* a precision bounds the read: the string need not be terminated */
	char unterminated[3] = {'a', 'b', 'c'};
	CHECK_INT(fmt_sn(a, sizeof a, "%.3s", unterminated), 3);
	CHECK_STR(a, "abc");
}

/* no floating point (lib/fmt.h): a float conversion is copied as written and reads no argument */
TEST(fmt_floats_are_shown_not_run)
{
	char a[64];
	CHECK_INT(fmt_sn(a, sizeof a, "%d %.2f %f|%8.3e %g %a %Lf %lf %d", 1, 2), 31);
	CHECK_STR(a, "1 %.2f %f|%8.3e %g %a %Lf %lf 2");
}

TEST(fmt_truncates_and_counts_like_snprintf)
{
	char a[8];
	CHECK_INT(fmt_sn(a, sizeof a, "%s-%d", "abcdef", 12345), 12);
	CHECK_STR(a, "abcdef-");
	CHECK_INT(fmt_sn(a, 1, "xyz"), 3);
	CHECK_STR(a, "");
	CHECK_INT(fmt_sn(NULL, 0, "%05d", 1), 5);
	CHECK_INT(fmt_sn(a, sizeof a, "%*d", 100000, 1), 4096); /* widths are bounded */
}

TEST(fmt_unsupported_conversions_are_shown_not_run)
{
	char a[32];
	int n = 0;
	CHECK_INT(fmt_sn(a, sizeof a, "a%nb %", &n), 6);
	CHECK_STR(a, "a%nb %");
	CHECK_INT(n, 0);
	CHECK_INT(fmt_sn(a, sizeof a, "%5"), 2);
	CHECK_STR(a, "%5");
}

/* the variadic functions that enter through FMT_VA_ENTRY on x86-64 (str_fmt, buf_printf here;
 * printf, snprintf, log_msg, die likewise): arguments in registers and on the stack, of every
 * size, past the six argument registers */
TEST(fmt_va_entry_passes_every_argument)
{
	char a[512], b[512];
	const char *f = "%d %s %ld %d %d %d %d %d %hhd %c %lld %u %x %zu %p %d %s %lld";
	int r = str_fmt(a, sizeof a, f, 1, "two", 3L, 4, 5, 6, 7, 8, 300, 'c', -11LL, 12u, 13u, (size_t)14, (void *)a, 16,
	                "seventeen", 18LL);
	snprintf(b, sizeof b, f, 1, "two", 3L, 4, 5, 6, 7, 8, 300, 'c', -11LL, 12u, 13u, (size_t)14, (void *)a, 16,
	         "seventeen", 18LL);
	CHECK_INT(r, 0);
	CHECK_STR(a, b);
	CHECK_INT(str_fmt(a, 4, "%s", "long"), -1);
	CHECK_INT(str_fmt(a, sizeof a, "%s-%d", "x", 5), 0);
	CHECK_STR(a, "x-5");
	struct buf bf;
	buf_init(&bf, 4096);
	CHECK_INT(buf_printf(&bf, "%s %d %d %d %d %d %s", "n", 1, 2, 3, 4, 5, "six"), 0);
	CHECK_INT(buf_printf(&bf, "|%d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8), 0);
	CHECK(bf.p && !strcmp(bf.p, "n 1 2 3 4 5 six|1 2 3 4 5 6 7 8"));
	buf_free(&bf);
}
