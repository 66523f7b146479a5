/* lib/libc/: the strtol family, getopt, qsort, strstr and mbstowcs that the static build uses in
 * place of musl's, compiled here under other names (this sanitizer build links glibc) and
 * checked against glibc's functions and against the POSIX getopt contract. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "libc_own.h"
#include "unit.h"

/* value, end offset and errno of one call, own against glibc's */
#define SAME_STRTO(fn, s, base) do { char *e1_, *e2_; errno = 0; long long v1_ = (long long)own_##fn(s, &e1_, base); \
	int x1_ = errno; errno = 0; long long v2_ = (long long)fn(s, &e2_, base); int x2_ = errno; \
	CHECK_INT(v1_, v2_); CHECK_INT(e1_ - (s), e2_ - (s)); CHECK_INT(x1_, x2_); } while (0)

TEST(libc_strto_as_glibc)
{
	static const char *in[] = {"0", "42", "  -17x", "+9", "0x1F", "0X", "0x", "0777", "08", "z", "", "-",
	                           "9223372036854775807", "9223372036854775808", "-9223372036854775808",
	                           "-9223372036854775809", "18446744073709551615", "18446744073709551616",
	                           "99999999999999999999999", "-1", "\t\n 12 ", "1e5", "ff", "-0x10"};
	static const int bases[] = {0, 10, 16, 8, 36};
	for (size_t i = 0; i < sizeof in / sizeof *in; i++)
		for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
			SAME_STRTO(strtol, in[i], bases[b]);
			SAME_STRTO(strtoll, in[i], bases[b]);
			SAME_STRTO(strtoul, in[i], bases[b]);
			SAME_STRTO(strtoull, in[i], bases[b]);
			SAME_STRTO(strtoimax, in[i], bases[b]);
			SAME_STRTO(strtoumax, in[i], bases[b]);
		}
	char *e;
	errno = 0;
	CHECK_INT(own_strtol("12", &e, 1), 0);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(own_strtol("12", NULL, 10), 12);
}

/* each call's result and optarg, then optind at the end */
static void run_getopt(int argc, char **argv, const char *opts, const char *want, int want_optind)
{
	char got[64] = "";
	own_optind = 0;
	own_opterr = 0;
	for (int c; (c = own_getopt(argc, argv, opts)) != -1;)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%c%s%s;", c, own_optarg ? "=" : "",
		         own_optarg ? own_optarg : "");
	CHECK_STR(got, want);
	CHECK_INT(own_optind, want_optind);
}

TEST(libc_getopt_posix)
{
	char *a1[] = {"p", "-v", "-C", "file", "-afoo", "rest", "-v", NULL};
	run_getopt(7, a1, "C:a:v", "v;C=file;a=foo;", 5);
	char *a2[] = {"p", "-vva", "3", "--", "-v", NULL};
	run_getopt(5, a2, "a:v", "v;v;a=3;", 4);
	char *a3[] = {"p", "-x", "-", NULL};
	run_getopt(3, a3, "v", "?;", 2);
	CHECK_INT(own_optopt, 'x');
	char *a4[] = {"p", "-a", NULL};
	run_getopt(2, a4, "a:", "?;", 2);
	run_getopt(2, a4, ":a:", ":;", 2);
	char *a5[] = {"p", "-va", NULL};
	run_getopt(2, a5, "a:v", "v;?;", 2);
	char *a6[] = {"p", NULL};
	run_getopt(1, a6, "v", "", 1);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

TEST(libc_qsort_sorts_every_shape)
{
	enum { N = 1000 };
	static int v[N], w[N];
	for (int shape = 0; shape < 4; shape++)
		for (size_t n = 0; n <= N; n = n ? n * 3 : 1) {
			for (size_t i = 0; i < n; i++) /* random, sorted, reversed, few values */
				v[i] = shape == 0 ? rand() : shape == 1 ? (int)i : shape == 2 ? (int)(n - i) : rand() % 3;
			memcpy(w, v, n * sizeof *v);
			own_qsort(v, n, sizeof *v, cmp_int);
			qsort(w, n, sizeof *w, cmp_int);
			CHECK(memcmp(v, w, n * sizeof *v) == 0);
		}
	struct { char s[7]; } r[3] = {{"cc"}, {"aa"}, {"bb"}}; /* an element size that is not a word */
	own_qsort(r, 3, sizeof *r, (int (*)(const void *, const void *))strcmp);
	CHECK_STR(r[0].s, "aa");
	CHECK_STR(r[2].s, "cc");
}

TEST(libc_strstr_and_mbstowcs_as_glibc)
{
	static const char *h[] = {"", "a", "syslog,stderr", "aaab", "is not a directory", "abcabd"};
	static const char *n[] = {"", "a", "stderr", "aab", "not a", "abd", "zz", "syslog,stderr,"};
	for (size_t i = 0; i < sizeof h / sizeof *h; i++)
		for (size_t j = 0; j < sizeof n / sizeof *n; j++) {
			const char *a = own_strstr(h[i], n[j]), *b = strstr(h[i], n[j]);
			CHECK_INT(a ? a - h[i] : -1, b ? b - h[i] : -1);
		}
	/* the C locale: one wide character per byte, nothing invalid */
	CHECK_INT(own_mbstowcs(NULL, "mx.exa\xc3mple", 0), 11);
	wchar_t ws[4];
	CHECK_INT(own_mbstowcs(ws, "a\xff", 4), 2);
	CHECK_INT(ws[0], 'a');
	CHECK_INT(ws[1], 0xdfff);
	CHECK_INT(ws[2], 0);
	CHECK_INT(own_mbstowcs(ws, "abcdef", 3), 3);
}

/* setxid.c's plain system calls change the process's ids as glibc's do; checked in a child (the
 * ids are the child's to lose), as root when the tests run as root, else the refusal. */
TEST(libc_setxid_changes_the_ids)
{
	struct rlimit rl, back;
	CHECK_INT(getrlimit(RLIMIT_CORE, &rl), 0);
	CHECK_INT(own_setrlimit(RLIMIT_CORE, &rl), 0);
	CHECK_INT(getrlimit(RLIMIT_CORE, &back), 0);
	CHECK_INT(back.rlim_cur, rl.rlim_cur);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		if (geteuid() != 0) {
			bad |= own_setuid(0) != -1 || errno != EPERM;
			_exit(bad);
		}
		gid_t gl[2] = {12345, 23456}, got[4];
		bad |= own_setgroups(2, gl) != 0;
		bad |= (getgroups(4, got) != 2 || got[0] != 12345 || got[1] != 23456) << 1;
		bad |= (own_setegid(34567) != 0 || getegid() != 34567 || getgid() != 0) << 2;
		bad |= (own_setresgid(45678, 45678, 45678) != 0 || getgid() != 45678) << 3;
		bad |= (own_setgid(56789) != 0 || getgid() != 56789 || getegid() != 56789) << 4;
		bad |= (own_seteuid(65534) != 0 || geteuid() != 65534 || getuid() != 0) << 5;
		bad |= (own_setresuid(0, 0, 0) != 0 || geteuid() != 0) << 6; /* the saved id was 0 */
		bad |= (own_setuid(65534) != 0 || getuid() != 65534 || geteuid() != 65534) << 7;
		bad |= (own_setuid(0) != -1 || errno != EPERM) << 8;
		bad |= (own_setresuid(-1, 0, -1) != -1) << 9; /* every id is gone now */
		_exit(bad);
	}
	int st = -1;
	CHECK_INT(waitpid(pid, &st, 0), pid);
	CHECK_INT(st, 0);
}
