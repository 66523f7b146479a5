/* lib/libc/: the strtol family, getopt, qsort, strstr and mbstowcs that the static build uses in
 * place of musl's, compiled here under other names (this sanitizer build links glibc) and
 * checked against glibc's functions and against the POSIX getopt contract. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
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
	for (int r = 0; r < RLIM_NLIMITS; r++) { /* getrlimit of every limit, as glibc's */
		CHECK_INT(own_getrlimit(r, &rl), 0);
		CHECK_INT(getrlimit(r, &back), 0);
		CHECK(rl.rlim_cur == back.rlim_cur && rl.rlim_max == back.rlim_max);
	}
	errno = 0;
	CHECK_INT(own_getrlimit(RLIM_NLIMITS + 5, &rl), -1);
	CHECK_INT(errno, EINVAL);
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

/* pwd.c against glibc's (NSS "files": the same /etc/passwd and /etc/group) for every entry */
static int sign(int v)
{
	return (v > 0) - (v < 0);
}

TEST(libc_string_as_glibc)
{
	static const char *const str[] = {"", "a", "A", "abc", "ABD", "ab", "Received", "RECEIVED:", "x-y_z",
	                                  "\xff\x80" "a", "\xff" "A", " \t: ", "Zz[`{@", "0123456789", "\x01"};
	static const int chr[] = {0, 'a', 'A', 'b', 'z', ':', ' ', '\t', 0xff, -1, 0x80, 0x180, 0x141, '@', '['};
	char d1[32], d2[32];
	for (size_t i = 0; i < sizeof str / sizeof *str; i++) {
		const char *s = str[i];
		for (size_t k = 0; k < sizeof chr / sizeof *chr; k++) {
			CHECK(own_strchr(s, chr[k]) == strchr(s, chr[k]));
			CHECK(own_strchrnul(s, chr[k]) == strchrnul(s, chr[k]));
		}
		CHECK(own_strcpy(d1, s) == d1 && !strcmp(d1, strcpy(d2, s)));
		CHECK(own_stpcpy(d1, s) == d1 + strlen(s) && !strcmp(d1, s));
		CHECK_INT(own_strlen(s), strlen(s));
		for (size_t k = 0; k < sizeof chr / sizeof *chr; k++) {
			CHECK(own_strrchr(s, chr[k]) == strrchr(s, chr[k]));
			for (size_t n = 0; n <= strlen(s) + 1; n++) {
				CHECK(own_memchr(s, chr[k], n) == memchr(s, chr[k], n));
				CHECK(own_memrchr(s, chr[k], n) == memrchr(s, chr[k], n));
			}
		}
		for (size_t n = 0; n < 12; n++)
			CHECK_INT(own_strnlen(s, n), strnlen(s, n));
		char *dup = own_strdup(s);
		CHECK(dup && dup != s && !strcmp(dup, s));
		free(dup);
		for (size_t j = 0; j < sizeof str / sizeof *str; j++) {
			const char *t = str[j];
			CHECK_INT(own_strspn(s, t), strspn(s, t));
			CHECK_INT(own_strcspn(s, t), strcspn(s, t));
			CHECK_INT(sign(own_strcasecmp(s, t)), sign(strcasecmp(s, t)));
			CHECK_INT(sign(own_strcmp(s, t)), sign(strcmp(s, t)));
			for (size_t n = 0; n <= strlen(s) + 1 && n <= strlen(t) + 1; n++)
				CHECK_INT(sign(own_memcmp(s, t, n)), sign(memcmp(s, t, n)));
			for (size_t n = 0; n < 12; n++)
			{
				CHECK_INT(sign(own_strncasecmp(s, t, n)), sign(strncasecmp(s, t, n)));
				CHECK_INT(sign(own_strncmp(s, t, n)), sign(strncmp(s, t, n)));
			}
		}
	}
	/* musl's values: the difference of the lower-cased bytes */
	CHECK_INT(own_strcasecmp("a", "B"), 'a' - 'b');
	CHECK_INT(own_strcasecmp("\xff", "a"), 0xff - 'a');
	CHECK_INT(own_strncasecmp("abcX", "ABCy", 3), 0);
	/* musl's values: the difference of the bytes, as unsigned char */
	CHECK_INT(own_strcmp("\xff", "a"), 0xff - 'a');
	CHECK_INT(own_strncmp("ab", "a\x80", 5), 'b' - 0x80);
	CHECK_INT(own_memcmp("a\0c", "a\0b", 3), 'c' - 'b');
	char big[300];
	for (size_t n = 0; n < sizeof big; n += 37) {
		memset(big, 'x', sizeof big);
		CHECK(own_memset(big + 1, 0x1ff, n) == big + 1);
		CHECK(big[0] == 'x' && big[n + 1 < sizeof big ? n + 1 : 0] == 'x');
		for (size_t i = 1; i <= n; i++)
			CHECK((unsigned char)big[i] == 0xff);
	}
	/* memcpy, and memmove across every overlap, as glibc's */
	char src[64], m1[80], m2[80];
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (char)(i * 7 + 1);
	for (size_t n = 0; n < sizeof src; n += 5) {
		memset(m1, 0, sizeof m1);
		CHECK(own_memcpy(m1 + 3, src, n) == m1 + 3 && !memcmp(m1 + 3, src, n) && m1[3 + n] == 0);
		for (int shift = -9; shift <= 9; shift++) {
			memset(m1, 0, sizeof m1);
			memset(m2, 0, sizeof m2);
			memcpy(m1 + 10, src, sizeof src);
			memcpy(m2 + 10, src, sizeof src);
			CHECK(own_memmove(m1 + 10 + shift, m1 + 10, n) == m1 + 10 + shift);
			memmove(m2 + 10 + shift, m2 + 10, n);
			CHECK(!memcmp(m1, m2, sizeof m1));
		}
	}
}

/* one sequence of environment changes, by ours (own) or glibc's, its results and the final
 * environment written as text into out */
static void env_script(int own, char *out, size_t cap)
{
	static char *start[] = {"PATH=/bin", "A=1", "B=2", "A=dup", "C=", NULL};
	static char put1[] = "D=put", put2[] = "B=put", put3[] = "A";
	char *env[8];
	memcpy(env, start, sizeof start);
	__environ = env; /* a caller's array, as main.c's is */
	int (*fset)(const char *, const char *, int) = own ? own_setenv : setenv;
	int (*funset)(const char *) = own ? own_unsetenv : unsetenv;
	int (*fput)(char *) = own ? own_putenv : putenv;
	char *(*fget)(const char *) = own ? own_getenv : getenv;
	size_t n = 0;
	int r[24], k = 0;
#define ENV_R(x) do { errno = 0; r[k] = (x); r[k + 1] = errno; k += 2; } while (0)
	ENV_R(fset("E", "5", 1));
	ENV_R(fset("A", "x", 0));
	ENV_R(fset("A", "y", 1));
	ENV_R(fset("E", "6", 1));
	ENV_R(fset("", "v", 1));
	ENV_R(fset("X=Y", "v", 1));
	ENV_R(fput(put1));
	ENV_R(fput(put2));
	ENV_R(funset("C"));
	ENV_R(funset("Q=R"));
	ENV_R(fput(put3)); /* no '=': unsets A */
	ENV_R(fset("F", "7", 0));
	n += (size_t)snprintf(out + n, cap - n, "%s|%s|%s|%s|", fget("E") ? fget("E") : "-", fget("A") ? fget("A") : "-",
	                      fget("PATH"), fget("") ? "?" : "-");
	for (int i = 0; i < k; i++)
		n += (size_t)snprintf(out + n, cap - n, "%d,", r[i]);
	for (char **e = __environ; *e; e++)
		n += (size_t)snprintf(out + n, cap - n, ";%s", *e);
#undef ENV_R
}

/* env_script's text, run in a child: glibc's setenv reallocates the array it made last even
 * after environ has moved away, so the test's own environment must never meet it */
static void env_script_child(int own, char *out, size_t cap)
{
	int fd[2];
	out[0] = 0;
	if (pipe(fd) < 0)
		return;
	pid_t p = fork();
	if (p == 0) {
		char buf[512];
		env_script(own, buf, sizeof buf);
		_exit(write(fd[1], buf, strlen(buf)) < 0);
	}
	close(fd[1]);
	ssize_t n = p > 0 ? read(fd[0], out, cap - 1) : -1;
	out[n > 0 ? n : 0] = 0;
	close(fd[0]);
	waitpid(p, NULL, 0);
}

TEST(libc_environment_as_glibc)
{
	char a[512], b[512];
	env_script_child(1, a, sizeof a);
	env_script_child(0, b, sizeof b);
	CHECK_STR(a, b);
	CHECK_STR(a, "6|-|/bin|-|0,0,0,0,0,0,0,0,-1,22,-1,22,0,0,0,0,0,0,-1,22,0,0,0,0,;PATH=/bin;B=put;E=6;D=put;F=7");
}

/* a new directory NAME (mode dmode) under the test's directory with an empty file in it (fmode);
 * their paths in dir (512 bytes) and file (600) */
static int dir_with_file(const char *name, mode_t dmode, const char *fname, mode_t fmode, char *dir, char *file)
{
	snprintf(dir, 512, "%s/%s", unit_tmpdir(), name);
	snprintf(file, 600, "%s/%s", dir, fname);
	int fd = mkdir(dir, dmode) < 0 ? -1 : open(file, O_WRONLY | O_CREAT, fmode);
	return fd < 0 ? -1 : close(fd);
}

TEST(libc_inet_pton_as_glibc)
{
	static const char *const in[] = {"", "1.2.3.4", "255.255.255.255", "256.1.1.1", "1.2.3", "1.2.3.4.5", "01.2.3.4",
	    "0.0.0.0", "1.2.3.4 ", " 1.2.3.4", "1..2.3", "1.2.3.", "::", "::1", "1::", ":1::", "1:::2", "1::2::3",
	    "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:2:3:4:5:6:7", "0001::",
	    "00001::", "fFfF::AbCd", "::ffff:1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:1.2.3.4",
	    "1::1.2.3.4", "::ffff:1.2.3", "::ffff:01.2.3.4", "::g", "1:2:3:4:5:6:7:8::", "fe80::1%eth0", "::1.2.3.4:5",
	    "1:2:3:4:5:6:7:1.2.3.4", "[::1]", "1.2.3.4/24", "12345::", "::12345", "1:2::3:4:5:6:7:8"};
	for (size_t i = 0; i < sizeof in / sizeof *in; i++)
		for (int af = AF_INET; af <= AF_INET6; af += AF_INET6 - AF_INET) {
			unsigned char a[16], b[16];
			memset(a, 0xee, sizeof a);
			memset(b, 0xee, sizeof b);
			int ra = own_inet_pton(af, in[i], a), rb = inet_pton(af, in[i], b);
			CHECK_INT(ra, rb);
			if (ra == 1)
				CHECK(!memcmp(a, b, af == AF_INET ? 4 : 16));
		}
	unsigned char x[16];
	errno = 0;
	CHECK_INT(own_inet_pton(AF_UNIX, "1.2.3.4", x), -1);
	CHECK_INT(errno, EAFNOSUPPORT);
}

/* musl 1.2.3's inet_ntop as it is (MIT licence, Copyright 2005-2020 Rich Felker, et al.): glibc
 * shortens some runs of zeros differently */
static const char *musl_inet_ntop(int af, const void *restrict a0, char *restrict s, socklen_t l)
{
	const unsigned char *a = a0;
	int i, j, max, best;
	char buf[100];

	switch (af) {
	case AF_INET:
		if (snprintf(s, l, "%d.%d.%d.%d", a[0],a[1],a[2],a[3]) < (int)l)
			return s;
		break;
	case AF_INET6:
		if (memcmp(a, "\0\0\0\0\0\0\0\0\0\0\377\377", 12))
			snprintf(buf, sizeof buf, "%x:%x:%x:%x:%x:%x:%x:%x", 256*a[0]+a[1],256*a[2]+a[3],
				256*a[4]+a[5],256*a[6]+a[7], 256*a[8]+a[9],256*a[10]+a[11], 256*a[12]+a[13],256*a[14]+a[15]);
		else
			snprintf(buf, sizeof buf, "%x:%x:%x:%x:%x:%x:%d.%d.%d.%d", 256*a[0]+a[1],256*a[2]+a[3],
				256*a[4]+a[5],256*a[6]+a[7], 256*a[8]+a[9],256*a[10]+a[11], a[12],a[13],a[14],a[15]);
		/* Replace longest /(^0|:)[:0]{2,}/ with "::" */
		for (i=best=0, max=2; buf[i]; i++) {
			if (i && buf[i] != ':') continue;
			j = (int)strspn(buf+i, ":0");
			if (j>max) best=i, max=j;
		}
		if (max>3) {
			buf[best] = buf[best+1] = ':';
			memmove(buf+best+2, buf+best+max, (size_t)(i-best-max+1));
		}
		if (strlen(buf) < l) {
			strcpy(s, buf);
			return s;
		}
		break;
	default:
		errno = EAFNOSUPPORT;
		return 0;
	}
	errno = ENOSPC;
	return 0;
}

TEST(libc_inet_ntop_as_musl)
{
	unsigned seed = 12345;
	char a[64], b[64];
	for (int n = 0; n < 200000; n++) {
		unsigned char ip[16];
		for (int g = 0; g < 8; g++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 8, v = r & 3 ? 0 : (r >> 4) & (0xffffu >> ((r >> 2 & 3) * 4));
			if (n % 7 == 0 && g == 5)
				v = 0xffff; /* the IPv4-mapped form */
			ip[2 * g] = (unsigned char)(v >> 8);
			ip[2 * g + 1] = (unsigned char)v;
		}
		const char *ra = own_inet_ntop(AF_INET6, ip, a, sizeof a), *rb = musl_inet_ntop(AF_INET6, ip, b, sizeof b);
		int bad = ra != a || rb != b || strcmp(a, b);
		ra = own_inet_ntop(AF_INET, ip + 4 * (n & 3), a + 48, 16);
		rb = musl_inet_ntop(AF_INET, ip + 4 * (n & 3), b + 48, 16);
		if (bad || ra != a + 48 || rb != b + 48 || strcmp(a + 48, b + 48)) { /* the first difference only */
			CHECK_STR(a, b);
			CHECK_STR(a + 48, b + 48);
			return;
		}
	}
	static const unsigned char all[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 255, 255, 255, 255};
	CHECK_STR(own_inet_ntop(AF_INET6, all, a, 40), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	errno = 0;
	CHECK(own_inet_ntop(AF_INET6, all, a, 39) == NULL && errno == ENOSPC);
	errno = 0;
	CHECK(own_inet_ntop(AF_INET, all, a, 15) == NULL && errno == ENOSPC);
	CHECK_STR(own_inet_ntop(AF_INET, all, a, 16), "255.255.255.255");
	errno = 0;
	CHECK(own_inet_ntop(AF_UNIX, all, a, 64) == NULL && errno == EAFNOSUPPORT);
	static const unsigned char mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};
	CHECK_STR(own_inet_ntop(AF_INET6, mapped, a, 64), "::ffff:192.0.2.1");
	static const unsigned char lead[16] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 3, 0, 4};
	CHECK_STR(own_inet_ntop(AF_INET6, lead, a, 64), "0:0:1::2:3:4"); /* musl's, not RFC 5952's */
}

/* 0 when fd is open with mode, close-on-exec and access accmode; it is closed */
static int created_as(int fd, mode_t mode, int accmode)
{
	struct stat st;
	int bad = fd < 0 || fstat(fd, &st) < 0 || (st.st_mode & 07777) != mode ||
	          fcntl(fd, F_GETFD) != FD_CLOEXEC || (fcntl(fd, F_GETFL) & O_ACCMODE) != accmode;
	if (fd >= 0)
		close(fd);
	return -bad;
}

/* open(): the file created with its mode (under the umask), O_CLOEXEC set without an fcntl,
 * O_EXCL and O_NOFOLLOW refusing as glibc's open does, a missing file ENOENT */
TEST(libc_open_as_glibc)
{
	char path[512], link[512];
	snprintf(path, sizeof path, "%s/opened", unit_tmpdir());
	snprintf(link, sizeof link, "%s/opened-link", unit_tmpdir());
	unlink(path);
	unlink(link);
	mode_t old = umask(022);
	int fd = own_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0664);
	umask(old);
	CHECK_INT(created_as(fd, 0644, O_WRONLY), 0);
	fd = own_open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_INT(fcntl(fd, F_GETFD), 0);
	close(fd);
	errno = 0;
	CHECK_INT(own_open(path, O_WRONLY | O_CREAT | O_EXCL, 0600), -1);
	CHECK_INT(errno, EEXIST);
	CHECK_INT(symlink(path, link), 0);
	errno = 0;
	CHECK_INT(own_open(link, O_RDONLY | O_NOFOLLOW), -1);
	int e = errno;
	CHECK_INT(open(link, O_RDONLY | O_NOFOLLOW), -1);
	CHECK_INT(e, errno);
	errno = 0;
	CHECK_INT(own_open(path, O_RDONLY | O_DIRECTORY), -1);
	CHECK_INT(errno, ENOTDIR);
	snprintf(path, sizeof path, "%s/no-such-file", unit_tmpdir());
	errno = 0;
	CHECK_INT(own_open(path, O_RDONLY), -1);
	CHECK_INT(errno, ENOENT);
}

/* spoolbox's fcntl commands, each set by ours and read by glibc's (and back) */
TEST(libc_fcntl_as_glibc)
{
	char path[512];
	snprintf(path, sizeof path, "%s/lock", unit_tmpdir());
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_INT(own_fcntl(fd, F_GETFL), fcntl(fd, F_GETFL));
	CHECK_INT(own_fcntl(fd, F_SETFL, own_fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
	CHECK_INT(own_fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	CHECK_INT(fcntl(fd, F_GETFD), FD_CLOEXEC);
	errno = 0;
	CHECK_INT(own_fcntl(-1, F_GETFL), -1);
	CHECK_INT(errno, EBADF);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 10, .l_len = 5};
	CHECK_INT(own_fcntl(fd, F_SETLK, &fl), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0, fd2 = open(path, O_RDWR);
		struct flock a = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0}, b = a;
		bad |= own_fcntl(fd2, F_GETLK, &a) != 0 || fcntl(fd2, F_GETLK, &b) != 0;
		bad |= (a.l_type != F_WRLCK || a.l_start != 10 || a.l_len != 5 || a.l_pid != getppid() || b.l_pid != a.l_pid) << 1;
		errno = 0;
		bad |= (own_fcntl(fd2, F_SETLK, &(struct flock){.l_type = F_RDLCK, .l_start = 12, .l_len = 1}) != -1 ||
		        (errno != EAGAIN && errno != EACCES)) << 2;
		bad |= (own_fcntl(fd2, F_SETLK, &(struct flock){.l_type = F_RDLCK, .l_start = 15, .l_len = 1}) != 0) << 3;
		_exit(bad);
	}
	int st = -1;
	CHECK_INT(waitpid(pid, &st, 0), pid);
	CHECK_INT(st, 0);
	fl.l_type = F_UNLCK;
	CHECK_INT(own_fcntl(fd, F_SETLK, &fl), 0);
	close(fd);
}

static volatile sig_atomic_t got_sig, got_info;

static void on_sig(int s)
{
	got_sig = s;
}

static void on_info(int s, siginfo_t *si, void *uc)
{
	got_info = si->si_signo == s && uc ? s : -1;
}

/* handlers set by ours run and return (musl's trampoline, here the test's), and glibc's sigaction
 * reads back what ours set, and the other way round */
TEST(libc_sigaction_as_glibc)
{
	struct sigaction sa = {.sa_handler = on_sig, .sa_flags = SA_RESTART}, a, b;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK_INT(own_sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_INT(sigaction(SIGUSR1, NULL, &b), 0);
	CHECK(b.sa_handler == on_sig && (b.sa_flags & SA_RESTART) && sigismember(&b.sa_mask, SIGUSR2) == 1);
	CHECK_INT(own_sigaction(SIGUSR1, NULL, &a), 0);
	CHECK(a.sa_handler == b.sa_handler && a.sa_flags == b.sa_flags && !memcmp(&a.sa_mask, &b.sa_mask, _NSIG / 8));
	got_sig = 0;
	raise(SIGUSR1);
	CHECK_INT(got_sig, SIGUSR1);
	struct sigaction si = {.sa_sigaction = on_info, .sa_flags = SA_SIGINFO};
	sigemptyset(&si.sa_mask);
	CHECK_INT(own_sigaction(SIGUSR2, &si, &a), 0);
	got_info = 0;
	raise(SIGUSR2);
	CHECK_INT(got_info, SIGUSR2);
	CHECK(own_signal(SIGUSR1, SIG_DFL) == on_sig);
	CHECK(own_signal(SIGUSR1, SIG_DFL) == SIG_DFL);
	CHECK_INT(sigaction(SIGUSR2, NULL, &b), 0);
	CHECK(b.sa_sigaction == on_info && (b.sa_flags & SA_SIGINFO));
	signal(SIGUSR2, SIG_DFL);
	void (*was)(int) = own_signal(SIGPIPE, SIG_IGN);
	CHECK(was != SIG_ERR && signal(SIGPIPE, was) == SIG_IGN);
	static const int bad[] = {0, 32, 33, 34, 65, -1};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		errno = 0;
		CHECK(own_sigaction(bad[i], &sa, NULL) == -1 && errno == EINVAL);
		errno = 0;
		CHECK(own_signal(bad[i], SIG_IGN) == SIG_ERR && errno == EINVAL);
	}
	CHECK_INT(own_sigaction(SIGKILL, NULL, &a), 0);
	errno = 0;
	CHECK(own_sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL);
}

static int leap_of(long long y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* the calendar of musl's gmtime_r, against glibc's gmtime_r */
TEST(libc_secs_to_tm_as_glibc)
{
	unsigned long long seed = 99;
	for (int n = 0; n < 300000; n++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		long long t = n < 100000 ? (long long)n * 86399 - 4000000000LL /* every day, 1843 to 2117 */
		            : n < 200000 ? (long long)(seed >> 20) - (1LL << 43) /* years -277 000 to 280 000 */
		                         : (long long)(seed >> 29) - (1LL << 34);
		time_t tt = (time_t)t;
		struct tm a, b;
		memset(&a, 0, sizeof a);
		CHECK(own___secs_to_tm(t, &a) == 0 && gmtime_r(&tt, &b) != NULL);
		if (a.tm_year != b.tm_year || a.tm_mon != b.tm_mon || a.tm_mday != b.tm_mday || a.tm_hour != b.tm_hour ||
		    a.tm_min != b.tm_min || a.tm_sec != b.tm_sec || a.tm_wday != b.tm_wday || a.tm_yday != b.tm_yday) {
			CHECK_INT(t, 0); /* the first difference */
			return;
		}
	}
	/* __year_to_secs: the first second of each year (since 1900), and whether it is a leap year */
	for (long long y = -3000; y <= 5000; y++) {
		struct tm tm;
		int leap = -1;
		long long t = own___year_to_secs(y, &leap), Y = y + 1900;
		if (own___secs_to_tm(t, &tm) != 0 || tm.tm_year != y || tm.tm_yday != 0 || tm.tm_hour != 0 ||
		    leap != (Y % 4 == 0 && (Y % 100 != 0 || Y % 400 == 0)) || own___year_to_secs(y, NULL) != t ||
		    own___secs_to_tm(t - 1, &tm) != 0 || tm.tm_year != y - 1 || tm.tm_yday != 364 + leap_of(Y - 1)) {
			CHECK_INT(y, 0); /* the first difference */
			return;
		}
	}
	struct tm a, b;
	CHECK_INT(own___secs_to_tm(INT_MAX * 31622400LL + 1, &a), -1);
	CHECK_INT(own___secs_to_tm(INT_MIN * 31622400LL - 1, &a), -1);
	/* gmtime_r: the calendar, UTC, and EOVERFLOW where the year does not fit */
	time_t t = 1800000000;
	CHECK(own_gmtime_r(&t, &a) == &a && gmtime_r(&t, &b) && !memcmp(&a, &b, offsetof(struct tm, tm_isdst) + sizeof(int)));
	CHECK(a.tm_gmtoff == 0 && !strcmp(a.tm_zone, "UTC"));
	t = (time_t)(INT_MAX * 31622400LL + 1);
	errno = 0;
	CHECK(own_gmtime_r(&t, &a) == NULL && errno == EOVERFLOW);
	errno = 0;
	CHECK(own_localtime_r(&t, &a) == NULL && errno == EOVERFLOW);
}

/* execvp(file) in a child under PATH (NULL: unset): the program's exit status, or 100 + errno */
static int exec_status(int own, const char *path, const char *file)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (path)
			setenv("PATH", path, 1);
		else
			unsetenv("PATH");
		char *argv[] = {(char *)file, NULL};
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (own)
			own_execvp(file, argv);
		else
			execvp(file, argv);
		_exit(100 + errno);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(libc_execvp_as_glibc)
{
	char dir[512], file[600], bin[1100], lng[300];
	CHECK_INT(dir_with_file("bin", 0755, "noexec", 0644, dir, file), 0);
	snprintf(bin, sizeof bin, "/no/such:%s:/bin:/usr/bin", dir);
	memset(lng, 'x', sizeof lng - 1);
	lng[sizeof lng - 1] = 0;
	struct { const char *path, *file; int want; } c[] = {
		{"/no/such:/bin:/usr/bin", "true", 0}, {"/bin:/usr/bin", "false", 1}, {NULL, "true", 0},
		{"/bin:/usr/bin", "no-such-program-spoolbox", 100 + ENOENT}, {"/bin", "", 100 + ENOENT},
		{bin, "noexec", 100 + EACCES}, {dir, "true", 100 + ENOENT}, {"/bin", "/no/such/true", 100 + ENOENT},
		{"/no/such", "/bin/true", 0}, {"/bin", lng, 100 + ENAMETOOLONG}, {"/etc/passwd:/bin:/usr/bin", "true", 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		CHECK_INT(exec_status(1, c[i].path, c[i].file), c[i].want);
		CHECK_INT(exec_status(0, c[i].path, c[i].file), c[i].want);
	}
}

/* musl's localtime_r over tz.c and secs_to_tm.c, against glibc's (the same zone files and
 * POSIX rules; an earlier comparison with musl's own __tz, over 60 000 times of 20 TZ values and
 * in secure mode, found no difference) */
TEST(libc_localtime_as_glibc)
{
	static const char *const tz[] = {"UTC", "Europe/Berlin", ":America/New_York", "Asia/Kolkata", "Australia/Lord_Howe",
	                                 "EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3", "<+0330>-3:30", "JST-9"};
	char *saved = getenv("TZ") ? strdup(getenv("TZ")) : NULL;
	unsigned long long seed = 7;
	for (size_t i = 0; i < sizeof tz / sizeof *tz; i++) {
		char path[128];
		snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", tz[i] + (tz[i][0] == ':'));
		if (strchr(tz[i], '/') && access(path, R_OK) != 0)
			continue; /* no tzdata here */
		setenv("TZ", tz[i], 1);
		tzset();
		for (int n = 0; n < 20000; n++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			time_t t = (time_t)((long long)(seed >> 24) % 3800000000LL + 320000000); /* 1980 to 2100 */
			struct tm a, b;
			const char *zone = NULL;
			long off = 0;
			memset(&a, 0, sizeof a);
			own___secs_to_zone(t, 0, &a.tm_isdst, &off, 0, &zone);
			CHECK_INT(own___secs_to_tm((long long)t + off, &a), 0);
			localtime_r(&t, &b);
			struct tm c;
			if (own_localtime_r(&t, &c) != &c || memcmp(&a, &c, offsetof(struct tm, tm_wday)) ||
			    c.tm_isdst != a.tm_isdst || c.tm_gmtoff != off || c.tm_zone != zone) {
				CHECK_INT(t, 0);
				break;
			}
			if (a.tm_year != b.tm_year || a.tm_mon != b.tm_mon || a.tm_mday != b.tm_mday || a.tm_hour != b.tm_hour ||
			    a.tm_min != b.tm_min || a.tm_sec != b.tm_sec || a.tm_isdst != b.tm_isdst || off != b.tm_gmtoff ||
			    strcmp(zone, b.tm_zone)) {
				CHECK_STR(tz[i], "");
				CHECK_INT(t, 0); /* the first difference */
				break;
			}
		}
	}
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	free(saved);
	tzset();
}

/* opendir, readdir, closedir, dirfd: a directory's names as glibc's list them (a directory
 * larger than one buffer: /usr/bin), errno kept at the end, and the open errors */
static size_t dir_names(int own, const char *path, char *out, size_t cap)
{
	DIR *d = own ? own_opendir(path) : opendir(path);
	size_t n = 0, used = 0;
	if (!d)
		return 0;
	CHECK(own ? own_dirfd(d) >= 0 : dirfd(d) >= 0);
	errno = 1234;
	for (struct dirent *e; (e = own ? own_readdir(d) : readdir(d));) {
		size_t l = strlen(e->d_name) + 1;
		if (used + l < cap) {
			memcpy(out + used, e->d_name, l);
			used += l;
		}
		n++;
	}
	CHECK_INT(errno, 1234);
	CHECK_INT(own ? own_closedir(d) : closedir(d), 0);
	return n;
}

TEST(libc_dirent_as_glibc)
{
	static const char *const dirs[] = {"/etc", "/usr/bin", "/"};
	static char a[1 << 20], b[1 << 20];
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		memset(a, 0, sizeof a);
		memset(b, 0, sizeof b);
		size_t na = dir_names(1, dirs[i], a, sizeof a), nb = dir_names(0, dirs[i], b, sizeof b);
		CHECK(na > 2);
		CHECK_INT(na, nb);
		CHECK(!memcmp(a, b, sizeof a)); /* the same order: the kernel's */
	}
	errno = 0;
	CHECK(own_opendir("/nonexistent-spoolbox-dir") == NULL && errno == ENOENT);
	errno = 0;
	CHECK(own_opendir("/etc/passwd") == NULL && errno == ENOTDIR);
}

TEST(libc_fork_runs_the_child)
{
	pid_t parent = getpid(), p = own_fork();
	if (p == 0)
		_exit(getpid() != parent && getppid() == parent ? 7 : 1);
	CHECK(p > 0);
	int st = 0;
	CHECK_INT(waitpid(p, &st, 0), p);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

TEST(libc_passwd_and_group_as_glibc)
{
	struct passwd *g, *o;
	setpwent();
	while ((g = getpwent())) {
		char name[256], dir[1024], gecos[1024];
		snprintf(name, sizeof name, "%s", g->pw_name);
		snprintf(dir, sizeof dir, "%s", g->pw_dir);
		snprintf(gecos, sizeof gecos, "%s", g->pw_gecos);
		uid_t uid = g->pw_uid;
		gid_t gid = g->pw_gid;
		unit_case(name);
		CHECK((o = own_getpwnam(name)) != NULL);
		if (!o)
			continue;
		CHECK_INT(o->pw_uid, uid);
		CHECK_INT(o->pw_gid, gid);
		CHECK_STR(o->pw_dir, dir);
		CHECK_STR(o->pw_gecos, gecos);
		struct passwd *first = getpwuid(uid);
		snprintf(name, sizeof name, "%s", first->pw_name);
		CHECK((o = own_getpwuid(uid)) != NULL);
		CHECK_STR(o ? o->pw_name : "", name);
	}
	endpwent();
	struct group *gg, *og;
	setgrent();
	while ((gg = getgrent())) {
		char name[256], mem[4096] = "";
		snprintf(name, sizeof name, "%s", gg->gr_name);
		for (char **m = gg->gr_mem; *m; m++)
			snprintf(mem + strlen(mem), sizeof mem - strlen(mem), "%s,", *m);
		gid_t gid = gg->gr_gid;
		unit_case(name);
		CHECK((og = own_getgrnam(name)) != NULL);
		if (!og)
			continue;
		CHECK_INT(og->gr_gid, gid);
		char omem[4096] = "";
		for (char **m = og->gr_mem; *m; m++)
			snprintf(omem + strlen(omem), sizeof omem - strlen(omem), "%s,", *m);
		CHECK_STR(omem, mem);
		CHECK((og = own_getgrgid(gid)) != NULL);
	}
	endgrent();
	unit_case("missing");
	CHECK(own_getpwnam("no-such-user-spoolbox") == NULL);
	CHECK(own_getgrnam("no-such-group-spoolbox") == NULL);
	/* getgrouplist as glibc's, for root */
	gid_t a[64], b[64];
	int na = 64, nb = 64;
	CHECK_INT(own_getgrouplist("root", 0, a, &na), getgrouplist("root", 0, b, &nb));
	CHECK_INT(na, nb);
	CHECK(memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

/* the files' edges: malformed and over-long lines skipped, the last line without a newline,
 * members, getgrouplist's count past the room */
TEST(libc_passwd_and_group_edges)
{
	char pw[512], gr[512];
	snprintf(pw, sizeof pw, "%s/passwd", unit_tmpdir());
	snprintf(gr, sizeof gr, "%s/group", unit_tmpdir());
	FILE *f = fopen(pw, "w");
	char *longl = unit_long_line("long:x:5:5:", 9000);
	fprintf(f, "bad:x:1:1\nneg:x:-1:1:n:/:/bin/sh\n%sa:x:7:8:Full Name,,,:/home/a:/bin/sh\n"
	        "big:x:4294967296:1::/:\nlong:x:9:9::/ok:\ndup:x:7:9::/:\nlast:x:11:12::/l:/sh", longl);
	free(longl);
	fclose(f);
	f = fopen(gr, "w");
	fprintf(f, "g1:x:100:a,b\ng2:x:101:b\ng3:*:102:ab,a\nbad:x:z:a\ng4:x:8:a\nempty:x:103:");
	fclose(f);
	own_passwd_file = pw;
	own_group_file = gr;
	struct passwd *p;
	CHECK(own_getpwnam("bad") == NULL);
	CHECK(own_getpwnam("neg") == NULL);
	CHECK(own_getpwnam("big") == NULL);
	CHECK((p = own_getpwnam("long")) && p->pw_uid == 9 && !strcmp(p->pw_dir, "/ok"));
	CHECK((p = own_getpwuid(7)) && !strcmp(p->pw_name, "a") && !strcmp(p->pw_gecos, "Full Name,,,") &&
	      p->pw_gid == 8 && !strcmp(p->pw_shell, "/bin/sh"));
	CHECK((p = own_getpwnam("last")) && p->pw_uid == 11 && !strcmp(p->pw_shell, "/sh"));
	struct group *g;
	CHECK((g = own_getgrnam("g3")) && g->gr_gid == 102 && g->gr_mem[0] && !strcmp(g->gr_mem[0], "ab") &&
	      g->gr_mem[1] && !strcmp(g->gr_mem[1], "a") && !g->gr_mem[2]);
	CHECK((g = own_getgrgid(103)) && !strcmp(g->gr_name, "empty") && !g->gr_mem[0]);
	CHECK(own_getgrnam("bad") == NULL);
	gid_t l[8];
	int n = 8;
	CHECK_INT(own_getgrouplist("a", 8, l, &n), 3); /* 8 (primary, listed once), 100, 102 */
	CHECK_INT(n, 3);
	CHECK(l[0] == 8 && l[1] == 100 && l[2] == 102);
	n = 2;
	CHECK_INT(own_getgrouplist("a", 8, l, &n), -1);
	CHECK_INT(n, 3);
	own_group_file = "/nonexistent/group";
	n = 8;
	CHECK_INT(own_getgrouplist("a", 8, l, &n), 1);
	CHECK(own_getgrnam("g1") == NULL);
	own_passwd_file = "/etc/passwd";
	own_group_file = "/etc/group";
}

/* dn_expand against glibc's on names it prints alike (no escapes), and the pointer rules */
TEST(libc_dn_expand)
{
	static const unsigned char m[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,               /* a header */
		2, 'm', 'x', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 4, 't', 'e', 's', 't', 0, /* 12 */
		4, 'm', 'a', 'i', 'l', 0xc0, 12 + 3,              /* 29: mail.example.test */
		0,                                                /* 36: the root */
		1, 'a', 0xc0, 29,                                 /* 37: a.mail.example.test */
		0xc0, 42,                                         /* 41: a pointer to itself */
		0xc0, 50,                                         /* 43: a pointer forward */
		1, 'b', 0xc0,                                     /* 45: a cut pointer */
	};
	const unsigned char *end = m + sizeof m;
	static const int at[] = {12, 29, 36, 37};
	for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
		char a[256], b[256];
		int na = own_dn_expand(m, end, m + at[i], a, sizeof a), nb = dn_expand(m, end, m + at[i], b, sizeof b);
		CHECK_INT(na, nb);
		CHECK_STR(a, b);
	}
	char s[256];
	CHECK_INT(own_dn_expand(m, end, m + 41, s, sizeof s), -1);
	CHECK_INT(own_dn_expand(m, end, m + 43, s, sizeof s), -1); /* compressors point back only */
	CHECK_INT(own_dn_expand(m, end, m + 45, s, sizeof s), -1);
	CHECK_INT(own_dn_expand(m, end, m + 12, s, 10), -1);      /* it does not fit */
	CHECK_INT(own_dn_expand(m, m + 20, m + 12, s, sizeof s), -1);
	/* four labels of 63: 255 characters, longer than a name may be (and than glibc takes) */
	unsigned char l[4 * 64 + 1] = {0};
	for (int i = 0; i < 4; i++) {
		l[i * 64] = 63;
		memset(l + i * 64 + 1, 'a', 63);
	}
	char big[1024];
	CHECK_INT(own_dn_expand(l, l + sizeof l, l, big, sizeof big), -1);
	CHECK_INT(dn_expand(l, l + sizeof l, l, big, sizeof big), -1);
	l[3 * 64] = 61; /* 253 characters: the longest there is */
	l[3 * 64 + 62] = 0;
	CHECK_INT(own_dn_expand(l, l + 3 * 64 + 63, l, big, sizeof big), 3 * 64 + 63);
	CHECK_INT(strlen(big), 253);
}

/* A DNS server for res_query on 127.0.0.1, in a child: UDP, and TCP on the same port. By the
 * name asked: "nx" NXDOMAIN, "none" no records, "tc" truncated over UDP (whole over TCP),
 * "late" a reply with another id first, "fail" SERVFAIL, "mute" nothing; else one A record. */
static void dns_server(int u, int t)
{
	for (;;) {
		unsigned char b[600];
		struct pollfd pf[2] = {{u, POLLIN, 0}, {t, POLLIN, 0}};
		if (poll(pf, 2, -1) < 0)
			_exit(1);
		int tcp = !!pf[1].revents, c = -1;
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n;
		if (tcp) {
			c = accept(t, NULL, NULL);
			if (recv(c, b, 2, MSG_WAITALL) != 2)
				_exit(1);
			n = recv(c, b, (size_t)(b[0] << 8 | b[1]), MSG_WAITALL);
		} else {
			n = recvfrom(u, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
		}
		if (n < 12)
			continue;
		const char *q = (const char *)b + 13;
		b[2] = 0x81;
		b[3] = 0x80;
		b[7] = 0;
		if (!strncmp(q, "mute", 4))
			continue;
		if (!strncmp(q, "nx", 2))
			b[3] |= 3;
		else if (!strncmp(q, "fail", 4))
			b[3] |= 2;
		else if (!strncmp(q, "tc", 2) && !tcp)
			b[2] |= 2;
		else if (strncmp(q, "none", 4)) { /* one A record: 192.0.2.9 */
			static const unsigned char rr[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 1, 0, 0, 4, 192, 0, 2, 9};
			memcpy(b + n, rr, sizeof rr);
			n += (ssize_t)sizeof rr;
			b[7] = 1;
		}
		if (!strncmp(q, "late", 4)) {
			b[0] ^= 1;
			sendto(u, b, (size_t)n, 0, (struct sockaddr *)&from, fl);
			b[0] ^= 1;
		}
		if (tcp) {
			unsigned char l[2] = {(unsigned char)(n >> 8), (unsigned char)n};
			send(c, l, 2, 0);
			send(c, b, (size_t)n, 0);
			close(c);
		} else {
			sendto(u, b, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
	}
}

TEST(libc_res_query_against_a_server)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int t = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(bind(t, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(t, (struct sockaddr *)&a, &al) == 0);
	CHECK(listen(t, 4) == 0 && bind(u, (struct sockaddr *)&a, sizeof a) == 0); /* the same port */
	pid_t pid = fork();
	if (pid == 0)
		dns_server(u, t);
	close(u);
	close(t);
	char conf[512];
	snprintf(conf, sizeof conf, "%s/resolv.conf", unit_tmpdir());
	FILE *f = fopen(conf, "w");
	/* a server that is not there first: the answer still comes from the other */
	fprintf(f, "# test\nnameserver 192.0.2.255\nnameserver 127.0.0.1 # ours\noptions ndots:1 timeout:2 attempts:2\n");
	fclose(f);
	own_resolv_conf = conf;
	own_res_port = ntohs(a.sin_port);
	unsigned char ans[512];
	int n = own_res_query("ok.test.", 1, 1, ans, sizeof ans);
	CHECK_INT(n, 12 + 13 + 16);
	CHECK(n > 0 && !memcmp(ans + n - 4, "\xc0\x00\x02\x09", 4));
	CHECK_INT(own_res_query("nx.test", 1, 1, ans, sizeof ans), -1);
	CHECK_INT(h_errno, HOST_NOT_FOUND);
	CHECK_INT(own_res_query("none.test", 1, 1, ans, sizeof ans), -1);
	CHECK_INT(h_errno, NO_DATA);
	CHECK_INT(own_res_query("tc.test", 1, 1, ans, sizeof ans), 12 + 13 + 16);
	CHECK_INT(ans[2] & 2, 0);
	char longtc[256] = "tc"; /* a query over 255 bytes: its TCP length takes both bytes */
	for (int i = 0; i < 4; i++)
		snprintf(longtc + strlen(longtc), sizeof longtc - strlen(longtc), ".%060d", i);
	CHECK_INT(own_res_query(longtc, 1, 1, ans, sizeof ans), 12 + 248 + 4 + 16);
	CHECK_INT(own_res_query("late.test", 1, 1, ans, sizeof ans), 12 + 15 + 16);
	n = own_res_query("fail.test", 1, 1, ans, sizeof ans); /* SERVFAIL is the caller's to read */
	CHECK(n >= 12 && (ans[3] & 15) == 2);
	CHECK_INT(own_res_query("a..test", 1, 1, ans, sizeof ans), -1);
	char big[300];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	CHECK_INT(own_res_query(big, 1, 1, ans, sizeof ans), -1);
	f = fopen(conf, "w");
	fprintf(f, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
	fclose(f);
	CHECK_INT(own_res_query("mute.test", 1, 1, ans, sizeof ans), -1);
	CHECK_INT(h_errno, TRY_AGAIN);
	own_resolv_conf = "/etc/resolv.conf";
	own_res_port = 53;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* resolv.conf's lines as musl reads them */
TEST(libc_resolv_conf)
{
	char t[] = "nameserver 2001:db8::53\nnameserver\t192.0.2.1%eth0\nnameserver bogus\n"
	           "options attempts:99 timeout:0\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n";
	struct res_conf c;
	res_parse_conf(t, &c);
	CHECK_INT(c.n, 3);
	CHECK_INT(c.v6, 1);
	CHECK_INT(c.attempts, 10);
	CHECK_INT(c.timeout, 1);
	CHECK_INT(c.ns[1].sin6_addr.s6_addr[15], 1);
	CHECK_INT(c.ns[1].sin6_addr.s6_addr[10], 0xff);
	CHECK_INT(ntohs(c.ns[2].sin6_port), own_res_port);
	char e[] = "";
	res_parse_conf(e, &c);
	CHECK_INT(c.n, 1);
	CHECK_INT(c.timeout, 5);
	CHECK_INT(c.attempts, 2);
	CHECK_INT(c.ns[0].sin6_addr.s6_addr[12], 127);
}

/* malloc.c: alignment, every class and the mapped sizes written whole, contents kept by realloc
 * across classes and mappings, calloc zeroed (also a reused block), freed blocks reused,
 * impossible sizes refused with ENOMEM. */
TEST(libc_malloc)
{
	static const size_t sizes[] = {0, 1, 15, 16, 17, 64, 65, 100, 129, 1000, 4097, 32767, 32768, 32769,
	                               100000, 1 << 20};
	unsigned char *p[sizeof sizes / sizeof *sizes];
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		p[i] = own_malloc(sizes[i]);
		CHECK(p[i] != NULL && (uintptr_t)p[i] % 16 == 0);
		memset(p[i], (int)i + 1, sizes[i]);
	}
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		for (size_t k = 0; k < sizes[i]; k++)
			if (p[i][k] != (unsigned char)(i + 1)) {
				CHECK_INT(p[i][k], i + 1);
				break;
			}
		own_free(p[i]);
	}
	/* realloc keeps the contents through growing and shrinking, small and mapped */
	unsigned char *r = own_malloc(10);
	memcpy(r, "0123456789", 10);
	static const size_t steps[] = {20, 200, 40000, 300000, 50000, 33, 5};
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
		r = own_realloc(r, steps[i]);
		CHECK(r != NULL && memcmp(r, "01234", 5) == 0);
		if (steps[i] >= 10)
			CHECK(memcmp(r, "0123456789", 10) == 0);
	}
	own_free(r);
	CHECK((r = own_realloc(NULL, 7)) != NULL);
	/* a freed block comes back for the next of its class, and calloc zeroes it */
	memset(r, 0xff, 7);
	own_free(r);
	unsigned char *z = own_calloc(1, 16);
	CHECK(z == r);
	CHECK(z && z[0] == 0 && z[6] == 0 && z[15] == 0);
	own_free(z);
	unsigned char *big = own_calloc(1000, 1000);
	CHECK(big && big[0] == 0 && big[999999] == 0);
	own_free(big);
	own_free(NULL);
	errno = 0;
	CHECK(own_malloc(SIZE_MAX - 8) == NULL && errno == ENOMEM);
	errno = 0;
	CHECK(own_calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);
	/* many small blocks: more than one arena, every one distinct */
	enum { N = 20000 };
	static unsigned char *many[N];
	for (size_t i = 0; i < N; i++) {
		many[i] = own_malloc(24 + i % 200);
		CHECK(many[i] != NULL);
		many[i][0] = (unsigned char)i;
		many[i][23] = (unsigned char)(i >> 8);
	}
	for (size_t i = 0; i < N; i++)
		if (many[i][0] != (unsigned char)i || many[i][23] != (unsigned char)(i >> 8)) {
			CHECK_INT(i, -1);
			break;
		}
	for (size_t i = 0; i < N; i++)
		own_free(many[i]);
	/* calloc clears all that was ever handed out (a freed last block goes back to the room, a
	 * realloc grows in place, the free lists, a new arena) and skips only room never handed out:
	 * random allocations, each written all over, every calloc'd block checked whole */
	enum { SLOTS = 64 };
	static unsigned char *slot[SLOTS];
	unsigned long x = 12345;
	for (int op = 0; op < 60000; op++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		unsigned i = (unsigned)(x >> 33) % SLOTS, what = (unsigned)(x >> 41) % 4;
		size_t n = 1 + (size_t)(x >> 45) % (what == 3 ? 40000 : 3000);
		own_free(slot[i]);
		slot[i] = NULL;
		if (what == 0)
			continue;
		if (what == 1) {
			CHECK((slot[i] = own_calloc(1, n)) != NULL);
			for (size_t k = 0; slot[i] && k < n; k++)
				if (slot[i][k]) {
					CHECK_INT(slot[i][k], 0);
					op = 60000;
					break;
				}
		} else {
			CHECK((slot[i] = own_malloc(n)) != NULL);
			if (what == 3 && slot[i]) {
				n += n / 2;
				CHECK((slot[i] = own_realloc(slot[i], n)) != NULL);
			}
		}
		if (slot[i])
			memset(slot[i], 0xa5, n);
	}
	for (unsigned i = 0; i < SLOTS; i++)
		own_free(slot[i]);
}

/* stat.c and fchmod.c: what glibc's calls say of a file, a symbolic link to it, a directory,
 * a descriptor (an O_PATH one too) and a missing name, field by field; fchmod and fchown as
 * the kernel's calls. */
static int same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
	       a->st_nlink == b->st_nlink && a->st_uid == b->st_uid && a->st_gid == b->st_gid &&
	       a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

TEST(libc_stat_fchmod)
{
	char dir[] = "/tmp/spoolbox-libc-stat-XXXXXX", file[64], link_[64];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof file, "%s/f", dir);
	snprintf(link_, sizeof link_, "%s/l", dir);
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
	CHECK(symlink("f", link_) == 0);
	struct stat a, b;
	memset(&a, 0x55, sizeof a);
	CHECK(own_stat(file, &a) == 0 && stat(file, &b) == 0 && same_stat(&a, &b) && a.st_size == 5);
	CHECK(own_stat(link_, &a) == 0 && same_stat(&a, &b)); /* followed */
	CHECK(own_lstat(link_, &a) == 0 && lstat(link_, &b) == 0 && same_stat(&a, &b) && S_ISLNK(a.st_mode));
	CHECK(own_stat(dir, &a) == 0 && stat(dir, &b) == 0 && same_stat(&a, &b) && S_ISDIR(a.st_mode));
	CHECK(own_fstat(fd, &a) == 0 && fstat(fd, &b) == 0 && same_stat(&a, &b));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), pfd = open(file, O_PATH);
	CHECK(dfd >= 0 && pfd >= 0);
	CHECK(own_fstatat(dfd, "f", &a, 0) == 0 && fstatat(dfd, "f", &b, 0) == 0 && same_stat(&a, &b));
	CHECK(own_fstatat(dfd, "l", &a, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(a.st_mode));
	CHECK(own_fstatat(pfd, "", &a, AT_EMPTY_PATH) == 0 && fstat(fd, &b) == 0 && same_stat(&a, &b));
	CHECK(own_fstat(pfd, &a) == 0 && same_stat(&a, &b));
	errno = 0;
	CHECK(own_stat("/nonexistent/spoolbox", &a) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(own_fstat(-1, &a) == -1 && errno == EBADF);
	/* fchmod and fchown on a descriptor opened to write, as spoolbox calls them */
	CHECK(own_fchmod(fd, 0640) == 0 && fstat(fd, &b) == 0 && (b.st_mode & 07777) == 0640);
	CHECK(own_fchown(fd, getuid(), getgid()) == 0);
	errno = 0;
	CHECK(own_fchmod(-1, 0600) == -1 && errno == EBADF);
	close(pfd);
	close(dfd);
	close(fd);
	unlink(link_);
	unlink(file);
	rmdir(dir);
}

/* stdio.c: what a stream writes arrives whole and in order (buffered, through a flush, a piece
 * bigger than the buffer, the printf family), fgets reads lines as glibc's does, dprintf, and a
 * failed write is ferror's. */
TEST(libc_stdio)
{
	int p[2];
	CHECK_INT(pipe(p), 0);
	struct own_IO_FILE *f = own_fdopen(p[1], "w");
	CHECK(f != NULL);
	char big[3000], want[4096], got[4096];
	memset(big, 'b', sizeof big);
	own_fprintf(f, "%d %s|", 42, "x");
	own_fputs("puts|", f);
	own_fputc('c', f);
	own_putc('d', f);
	CHECK_INT(own_fflush(f), 0);
	own_fwrite(big, 1, sizeof big, f);
	own_fwrite("end\n", 1, 4, f);
	CHECK_INT(own_ferror(f), 0);
	CHECK_INT(own_fclose(f), 0);
	int n = snprintf(want, sizeof want, "42 x|puts|cd%.*send\n", (int)sizeof big, big);
	ssize_t r = read(p[0], got, sizeof got);
	CHECK_INT(r, n);
	CHECK(r == n && memcmp(got, want, (size_t)n) == 0);
	CHECK_INT(own_dprintf(p[1], "%s", "x"), -1); /* fclose closed it */
	close(p[0]);
	/* fgets as glibc's: short lines, a line longer than the buffer, the last one without LF */
	char path[512];
	snprintf(path, sizeof path, "%s/lines", unit_tmpdir());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK_INT(own_dprintf(fd, "one\n\ntwo %s\nlast", "0123456789012345678901234567890123456789"), 54);
	close(fd);
	struct own_IO_FILE *o = own_fopen(path, "r");
	FILE *g = fopen(path, "r");
	CHECK(o != NULL && g != NULL);
	for (int i = 0; o && g && i < 12; i++) {
		char a[16], b[16];
		char *x = own_fgets(a, sizeof a, o), *y = fgets(b, sizeof b, g);
		CHECK_INT(!x, !y);
		if (x && y)
			CHECK_STR(a, b);
	}
	if (g)
		fclose(g);
	if (o)
		CHECK_INT(own_fclose(o), 0);
	CHECK(own_fopen("/nonexistent/x", "r") == NULL);
	/* a write that fails: the reader is gone */
	CHECK_INT(pipe(p), 0);
	close(p[0]);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	f = own_fdopen(p[1], "w");
	own_fputs("lost\n", f);
	CHECK_INT(own_fflush(f), EOF);
	CHECK(own_ferror(f));
	CHECK_INT(own_fclose(f), 0); /* nothing left to flush; the descriptor closes */
	signal(SIGPIPE, old);
}

/* the descriptor flags of a socket, as one number */
static int sock_flags(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_GETFD) << 16 | (fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE));
}

/* socket, socketpair, accept4: the flags set as glibc's set them, the same errors */
TEST(libc_socket_as_glibc)
{
	static const int kinds[] = {SOCK_STREAM, SOCK_DGRAM | SOCK_CLOEXEC, SOCK_STREAM | SOCK_NONBLOCK,
	                            SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 12345, SOCK_STREAM | 0x100};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
		errno = 0;
		int a = own_socket(AF_UNIX, kinds[i], 0), ea = errno;
		errno = 0;
		int b = socket(AF_UNIX, kinds[i], 0), eb = errno;
		CHECK_INT(a < 0, b < 0);
		CHECK_INT(ea, eb);
		CHECK_INT(sock_flags(a), sock_flags(b));
		int sa[2] = {-1, -1}, sb[2] = {-1, -1};
		errno = 0;
		a = own_socketpair(AF_UNIX, kinds[i], 0, sa), ea = errno;
		errno = 0;
		b = socketpair(AF_UNIX, kinds[i], 0, sb), eb = errno;
		CHECK_INT(a, b);
		CHECK_INT(ea, eb);
		CHECK_INT(sock_flags(sa[0]), sock_flags(sb[0]));
		CHECK_INT(sock_flags(sa[1]), sock_flags(sb[1]));
		for (int k = 0; k < 2; k++) {
			if (sa[k] >= 0)
				close(sa[k]);
			if (sb[k] >= 0)
				close(sb[k]);
		}
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	errno = 0;
	CHECK_INT(own_socket(AF_INET, SOCK_STREAM, 255), -1);
	int e = errno;
	CHECK_INT(socket(AF_INET, SOCK_STREAM, 255), -1);
	CHECK_INT(e, errno);
	int sv[2];
	errno = 0;
	CHECK_INT(own_socketpair(AF_INET, SOCK_STREAM, 0, sv), -1);
	e = errno;
	CHECK_INT(socketpair(AF_INET, SOCK_STREAM, 0, sv), -1);
	CHECK_INT(e, errno);
	/* accept4 on a listening socket: each flag as glibc's accept4 sets it, the peer's address */
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sin;
	CHECK_INT(bind(l, (struct sockaddr *)&sin, sizeof sin), 0);
	CHECK_INT(getsockname(l, (struct sockaddr *)&sin, &sl), 0);
	CHECK_INT(listen(l, 8), 0);
	static const int fl[] = {0, SOCK_CLOEXEC, SOCK_NONBLOCK, SOCK_CLOEXEC | SOCK_NONBLOCK};
	for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) {
		int c1 = socket(AF_INET, SOCK_STREAM, 0), c2 = socket(AF_INET, SOCK_STREAM, 0);
		CHECK_INT(connect(c1, (struct sockaddr *)&sin, sizeof sin), 0);
		CHECK_INT(connect(c2, (struct sockaddr *)&sin, sizeof sin), 0);
		struct sockaddr_in pa, pb;
		socklen_t la = sizeof pa, lb = sizeof pb;
		int a = own_accept4(l, (struct sockaddr *)&pa, &la, fl[i]);
		int b = accept4(l, (struct sockaddr *)&pb, &lb, fl[i]);
		CHECK(a >= 0 && b >= 0);
		CHECK_INT(sock_flags(a), sock_flags(b));
		CHECK_INT(la, lb);
		CHECK_INT(pa.sin_family, AF_INET);
		CHECK_INT(pa.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
		close(a);
		close(b);
		close(c1);
		close(c2);
	}
	/* none waiting, on a non-blocking listener; then a socket that does not listen */
	fcntl(l, F_SETFL, O_NONBLOCK);
	errno = 0;
	CHECK_INT(own_accept4(l, NULL, NULL, SOCK_CLOEXEC), -1);
	CHECK_INT(errno, EAGAIN);
	close(l);
	l = socket(AF_INET, SOCK_STREAM, 0);
	errno = 0;
	CHECK_INT(own_accept4(l, NULL, NULL, SOCK_CLOEXEC), -1);
	e = errno;
	CHECK_INT(accept4(l, NULL, NULL, SOCK_CLOEXEC), -1);
	CHECK_INT(e, errno);
	CHECK_INT(own_accept4(l, NULL, NULL, 0x4000), -1);
	e = errno;
	CHECK_INT(accept4(l, NULL, NULL, 0x4000), -1);
	CHECK_INT(e, errno);
	close(l);
}

/* futimens: given times, UTIME_OMIT and UTIME_NOW, NULL for now, as glibc's sets them */
TEST(libc_futimens_as_glibc)
{
	char pa[512], pb[512];
	snprintf(pa, sizeof pa, "%s/times-a", unit_tmpdir());
	snprintf(pb, sizeof pb, "%s/times-b", unit_tmpdir());
	int a = open(pa, O_RDWR | O_CREAT | O_TRUNC, 0600), b = open(pb, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(a >= 0 && b >= 0);
	const struct timespec set[][2] = {
		{{1000000000, 5}, {2000000000, 999999999}},
		{{12345, 0}, {0, UTIME_OMIT}},
		{{0, UTIME_OMIT}, {777, 1}},
		{{0, UTIME_NOW}, {4000000000, 0}},
	};
	for (size_t i = 0; i < sizeof set / sizeof *set; i++) {
		CHECK_INT(own_futimens(a, set[i]), futimens(b, set[i]));
		struct stat sa, sb;
		CHECK_INT(fstat(a, &sa), 0);
		CHECK_INT(fstat(b, &sb), 0);
		CHECK_INT(sa.st_mtim.tv_sec, sb.st_mtim.tv_sec);
		CHECK_INT(sa.st_mtim.tv_nsec, sb.st_mtim.tv_nsec);
		if (set[i][0].tv_nsec != UTIME_NOW) {
			CHECK_INT(sa.st_atim.tv_sec, sb.st_atim.tv_sec);
			CHECK_INT(sa.st_atim.tv_nsec, sb.st_atim.tv_nsec);
		}
	}
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	CHECK_INT(own_futimens(a, NULL), 0);
	struct stat st;
	CHECK_INT(fstat(a, &st), 0);
	CHECK(st.st_mtim.tv_sec >= t0.tv_sec - 1 && st.st_atim.tv_sec >= t0.tv_sec - 1);
	const struct timespec bad[2] = {{1, 1000000000}, {1, 0}};
	errno = 0;
	CHECK_INT(own_futimens(a, bad), -1);
	int e = errno;
	CHECK_INT(futimens(b, bad), -1);
	CHECK_INT(e, errno);
	close(a);
	close(b);
	errno = 0;
	CHECK_INT(own_futimens(a, NULL), -1);
	CHECK_INT(errno, EBADF);
	unlink(pa);
	unlink(pb);
}

/* sigprocmask: each how as glibc's, the old mask as glibc's reads it, musl's own signals (32 to
 * 34) left out of the old mask, a bad how EINVAL */
TEST(libc_sigprocmask_as_glibc)
{
	sigset_t orig, s, a, b;
	CHECK_INT(sigprocmask(SIG_SETMASK, NULL, &orig), 0);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGHUP);
	CHECK_INT(own_sigprocmask(SIG_BLOCK, &s, &a), 0);
	CHECK_INT(sigprocmask(SIG_SETMASK, NULL, &b), 0);
	CHECK(sigismember(&b, SIGUSR1) && sigismember(&b, SIGHUP) && !sigismember(&a, SIGUSR1));
	CHECK_INT(own_sigprocmask(SIG_UNBLOCK, &s, &a), 0);
	CHECK(sigismember(&a, SIGUSR1) && sigismember(&a, SIGHUP));
	CHECK_INT(sigprocmask(SIG_SETMASK, NULL, &b), 0);
	CHECK(!sigismember(&b, SIGUSR1) && !sigismember(&b, SIGHUP));
	sigfillset(&s);
	CHECK_INT(own_sigprocmask(SIG_SETMASK, &s, NULL), 0);
	CHECK_INT(own_sigprocmask(SIG_SETMASK, NULL, &a), 0);
	CHECK_INT(sigprocmask(SIG_SETMASK, NULL, &b), 0);
	for (int sig = 1; sig < 32; sig++)
		CHECK_INT(sigismember(&a, sig), sigismember(&b, sig));
	for (int sig = 35; sig < 65; sig++)
		CHECK_INT(sigismember(&a, sig), sigismember(&b, sig));
	/* 33 and 34 blocked behind both libcs' backs: ours does not show them */
	unsigned long raw = 3UL << 32;
	CHECK_INT(syscall(SYS_rt_sigprocmask, SIG_BLOCK, &raw, NULL, 8), 0);
	CHECK_INT(own_sigprocmask(SIG_BLOCK, NULL, &a), 0);
	CHECK_INT(syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &raw, 8), 0);
	CHECK(raw >> 32 & 1 && raw >> 33 & 1);
	CHECK(!sigismember(&a, 33) && !sigismember(&a, 34) && sigismember(&a, SIGTERM));
	errno = 0;
	CHECK_INT(own_sigprocmask(12345, &s, &a), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(own_sigprocmask(SIG_SETMASK, &orig, NULL), 0);
	raw = 3UL << 32;
	CHECK_INT(syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &raw, NULL, 8), 0);
	CHECK_INT(sigprocmask(SIG_SETMASK, NULL, &b), 0);
	CHECK_INT(memcmp(&b, &orig, 8), 0);
}

/* isatty: a pipe, /dev/null, a closed descriptor and a pseudo-terminal, answer and errno as
 * glibc's */
TEST(libc_isatty_as_glibc)
{
	int p[2];
	CHECK_INT(pipe(p), 0);
	int fds[] = {p[0], open("/dev/null", O_RDONLY), 9999, posix_openpt(O_RDWR | O_NOCTTY)};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
		errno = 0;
		int a = own_isatty(fds[i]), ea = errno;
		errno = 0;
		int b = isatty(fds[i]), eb = errno;
		CHECK_INT(a, b);
		CHECK_INT(ea, eb);
	}
	if (fds[3] >= 0)
		CHECK_INT(own_isatty(fds[3]), 1);
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (fds[i] >= 0 && fds[i] != 9999)
			close(fds[i]);
	close(p[1]);
}

/* openat(): relative to a directory descriptor, created with its mode under the umask, the
 * flags and errors of glibc's */
TEST(libc_openat_as_glibc)
{
	int d = open(unit_tmpdir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(d >= 0);
	unlinkat(d, "at-file", 0);
	mode_t old = umask(027);
	int fd = own_openat(d, "at-file", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	umask(old);
	CHECK_INT(created_as(fd, 0640, O_RDWR), 0);
	static const int fl[] = {O_RDONLY, O_WRONLY | O_APPEND, O_RDONLY | O_NOFOLLOW | O_DIRECTORY,
	                         O_WRONLY | O_CREAT | O_EXCL, O_PATH | O_NOFOLLOW | O_CLOEXEC};
	for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) {
		errno = 0;
		int a = own_openat(d, "at-file", fl[i], 0600), ea = errno;
		errno = 0;
		int b = openat(d, "at-file", fl[i], 0600), eb = errno;
		CHECK_INT(a < 0, b < 0);
		CHECK_INT(ea, eb);
		if (a >= 0 && b >= 0)
			CHECK_INT(fcntl(a, F_GETFL), fcntl(b, F_GETFL));
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
	}
	fd = own_openat(AT_FDCWD, unit_tmpdir(), O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	close(fd);
	errno = 0;
	CHECK_INT(own_openat(d, "no-such-file", O_RDONLY), -1);
	CHECK_INT(errno, ENOENT);
	errno = 0;
	CHECK_INT(own_openat(-1, "at-file", O_RDONLY), -1);
	CHECK_INT(errno, EBADF);
	unlinkat(d, "at-file", 0);
	close(d);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* nanosleep: at least the time asked, EINVAL as glibc's, and an interrupted sleep EINTR with
 * the time left */
TEST(libc_nanosleep_as_glibc)
{
	struct timespec t0, t1, rem = {0, 0};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_INT(own_nanosleep(&(struct timespec){0, 20000000}, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec >= 20000000);
	const struct timespec bad[] = {{0, 1000000000}, {-1, 0}, {0, -1}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		errno = 0;
		int a = own_nanosleep(&bad[i], NULL), ea = errno;
		errno = 0;
		int b = nanosleep(&bad[i], NULL), eb = errno;
		CHECK_INT(a, b);
		CHECK_INT(ea, eb);
	}
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	sigaction(SIGALRM, &sa, &old);
	struct itimerval it = {.it_value = {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	CHECK_INT(own_nanosleep(&(struct timespec){5, 0}, &rem), -1);
	CHECK_INT(errno, EINTR);
	CHECK(rem.tv_sec >= 3 && rem.tv_sec <= 5);
	sigaction(SIGALRM, &old, NULL);
}

/* cancel.c's calls: each answer and errno as glibc's, close's EINTR kept apart by the test of
 * a bad descriptor only (an interrupted close cannot be made to order) */
TEST(libc_plain_calls_as_glibc)
{
	int p[2];
	char buf[16];
	CHECK_INT(pipe(p), 0);
	CHECK_INT(own_write(p[1], "hello", 5), 5);
	CHECK_INT(own_read(p[0], buf, sizeof buf), 5);
	CHECK(!memcmp(buf, "hello", 5));
	errno = 0;
	CHECK_INT(own_write(p[0], "x", 1), -1);
	int e = errno;
	CHECK_INT(write(p[0], "x", 1), -1);
	CHECK_INT(e, errno);
	CHECK_INT(own_fsync(p[1]), -1);
	e = errno;
	CHECK_INT(fsync(p[1]), -1);
	CHECK_INT(e, errno);
	CHECK_INT(own_fdatasync(p[1]), -1);
	CHECK_INT(errno, e);
	/* poll: nothing to read, then a byte; ppoll leaves its timeout alone */
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	CHECK_INT(own_poll(&pf, 1, 10), 0);
	CHECK_INT(own_poll(&pf, 1, 0), 0);
	const struct timespec to = {0, 20000000};
	struct timespec t = to;
	CHECK_INT(own_ppoll(&pf, 1, &t, NULL), 0);
	CHECK(t.tv_sec == to.tv_sec && t.tv_nsec == to.tv_nsec);
	CHECK_INT(own_write(p[1], "y", 1), 1);
	CHECK_INT(own_poll(&pf, 1, -1), 1);
	CHECK_INT(pf.revents, POLLIN);
	pf.revents = 0;
	CHECK_INT(own_ppoll(&pf, 1, NULL, NULL), 1);
	CHECK_INT(pf.revents, POLLIN);
	errno = 0;
	CHECK_INT(own_ppoll(&pf, 1, &(struct timespec){0, 1000000000}, NULL), -1);
	e = errno;
	CHECK_INT(ppoll(&pf, 1, &(struct timespec){0, 1000000000}, NULL), -1);
	CHECK_INT(e, errno);
	CHECK_INT(own_close(p[0]), 0);
	CHECK_INT(own_close(p[1]), 0);
	errno = 0;
	CHECK_INT(own_close(p[1]), -1);
	CHECK_INT(errno, EBADF);
	errno = 0;
	CHECK_INT(own_read(p[0], buf, 1), -1);
	CHECK_INT(errno, EBADF);
	/* pread and pwrite at offsets, the file offset untouched */
	char path[512];
	snprintf(path, sizeof path, "%s/pfile", unit_tmpdir());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK_INT(own_pwrite(fd, "abcdef", 6, 0), 6);
	CHECK_INT(own_pwrite(fd, "XY", 2, 3), 2);
	CHECK_INT(own_pread(fd, buf, 4, 2), 4);
	CHECK(!memcmp(buf, "cXYf", 4));
	CHECK_INT(own_pread(fd, buf, 4, 100), 0);
	CHECK_INT(lseek(fd, 0, SEEK_CUR), 0);
	CHECK_INT(own_pwrite(fd, "q", 1, (off_t)5 << 32), 1);
	CHECK_INT(own_pread(fd, buf, 4, ((off_t)5 << 32) - 1), 2);
	CHECK(buf[0] == 0 && buf[1] == 'q');
	errno = 0;
	CHECK_INT(own_pread(fd, buf, 1, -1), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(own_fsync(fd), 0);
	CHECK_INT(own_fdatasync(fd), 0);
	close(fd);
	unlink(path);
	/* waitpid: an exit status, WNOHANG with a child still running, no child at all */
	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	int st = 0;
	CHECK_INT(own_waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	CHECK_INT(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		_exit(read(p[0], buf, 1) == 0 ? 3 : 4);
	}
	close(p[0]);
	CHECK_INT(own_waitpid(pid, &st, WNOHANG), 0);
	close(p[1]);
	CHECK_INT(own_waitpid(-1, &st, 0), pid);
	CHECK_INT(WEXITSTATUS(st), 3);
	errno = 0;
	CHECK_INT(own_waitpid(-1, &st, WNOHANG), -1);
	CHECK_INT(errno, ECHILD);
	/* connect, sendto, recvfrom over loopback UDP, with the addresses; a refused connect */
	int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}, sb = sa, from;
	socklen_t sl = sizeof sa, fl = sizeof from;
	CHECK_INT(bind(a, (struct sockaddr *)&sa, sizeof sa), 0);
	CHECK_INT(getsockname(a, (struct sockaddr *)&sa, &sl), 0);
	CHECK_INT(bind(b, (struct sockaddr *)&sb, sizeof sb), 0);
	sl = sizeof sb;
	CHECK_INT(getsockname(b, (struct sockaddr *)&sb, &sl), 0);
	CHECK_INT(own_sendto(b, "ping", 4, 0, (struct sockaddr *)&sa, sizeof sa), 4);
	CHECK_INT(own_recvfrom(a, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl), 4);
	CHECK(!memcmp(buf, "ping", 4) && fl == sizeof from && from.sin_port == sb.sin_port);
	CHECK_INT(own_connect(a, (struct sockaddr *)&sb, sizeof sb), 0);
	CHECK_INT(own_sendto(a, "pong", 4, 0, NULL, 0), 4);
	CHECK_INT(own_recvfrom(b, buf, sizeof buf, 0, NULL, NULL), 4);
	CHECK(!memcmp(buf, "pong", 4));
	errno = 0;
	CHECK_INT(own_recvfrom(b, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL), -1);
	CHECK_INT(errno, EAGAIN);
	close(a);
	close(b);
	a = socket(AF_INET, SOCK_STREAM, 0);
	b = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = sb.sin_port; /* nobody listens there over TCP */
	errno = 0;
	CHECK_INT(own_connect(a, (struct sockaddr *)&sa, sizeof sa), -1);
	e = errno;
	CHECK_INT(connect(b, (struct sockaddr *)&sa, sizeof sa), -1);
	CHECK_INT(e, errno);
	close(a);
	close(b);
	/* getrandom: the bytes asked, and glibc's EINVAL for unknown flags */
	unsigned char rnd1[32] = {0}, rnd2[32] = {0};
	CHECK_INT(own_getrandom(rnd1, sizeof rnd1, 0), 32);
	CHECK_INT(own_getrandom(rnd2, sizeof rnd2, GRND_NONBLOCK), 32);
	CHECK(memcmp(rnd1, rnd2, sizeof rnd1) != 0);
	errno = 0;
	CHECK_INT(own_getrandom(rnd1, 1, 0x4000), -1);
	e = errno;
	CHECK_INT(getrandom(rnd1, 1, 0x4000), -1);
	CHECK_INT(e, errno);
}

/* mmap, mremap, munmap: an anonymous mapping used, grown (moved or not), unmapped; a file mapped
 * at an offset; the errors of musl's (an unaligned offset, lengths past PTRDIFF_MAX) */
TEST(libc_mmap_as_musl)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *p = own_mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	CHECK_INT(p[pg], 0);
	memset(p, 'x', 3 * pg);
	char *q = own_mremap(p, 3 * pg, 64 * pg, MREMAP_MAYMOVE);
	CHECK(q != MAP_FAILED);
	CHECK(q[0] == 'x' && q[3 * pg - 1] == 'x' && q[63 * pg] == 0);
	/* MREMAP_FIXED's address is read */
	char *r = mmap(NULL, 64 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(own_mremap(q, 64 * pg, 64 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, r) == r);
	CHECK_INT(r[1], 'x');
	CHECK_INT(own_munmap(r, 64 * pg), 0);
	errno = 0;
	CHECK(own_mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 100) == MAP_FAILED);
	CHECK_INT(errno, EINVAL);
	errno = 0;
	CHECK(own_mmap(NULL, (size_t)PTRDIFF_MAX, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED);
	CHECK_INT(errno, ENOMEM);
	errno = 0;
	CHECK(own_mmap(NULL, pg, PROT_READ, MAP_PRIVATE, -1, 0) == MAP_FAILED);
	CHECK_INT(errno, EBADF);
	p = own_mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	CHECK(own_mremap(p, pg, (size_t)PTRDIFF_MAX + 1, MREMAP_MAYMOVE) == MAP_FAILED);
	CHECK_INT(errno, ENOMEM);
	errno = 0;
	CHECK(own_mremap(p, pg, 2 * pg, 0x40) == MAP_FAILED);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(own_munmap(p, pg), 0);
	errno = 0;
	CHECK_INT(own_munmap((char *)p + 1, pg), -1);
	CHECK_INT(errno, EINVAL);
	/* a file's second page */
	char path[512];
	snprintf(path, sizeof path, "%s/mapped", unit_tmpdir());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK_INT(ftruncate(fd, (off_t)(2 * pg)), 0);
	CHECK_INT(pwrite(fd, "page two", 8, (off_t)pg), 8);
	p = own_mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, (off_t)pg);
	CHECK(p != MAP_FAILED && !memcmp(p, "page two", 8));
	if (p != MAP_FAILED)
		CHECK_INT(own_munmap(p, pg), 0);
	close(fd);
	unlink(path);
}

/* gettimeofday and time: the real-time clock as glibc's reads it, NULL arguments allowed */
TEST(libc_gettimeofday_as_glibc)
{
	struct timeval a = {0, -1}, b;
	CHECK_INT(gettimeofday(&b, NULL), 0);
	CHECK_INT(own_gettimeofday(&a, NULL), 0);
	CHECK(a.tv_usec >= 0 && a.tv_usec < 1000000);
	long long d = (a.tv_sec - b.tv_sec) * 1000000LL + a.tv_usec - b.tv_usec;
	CHECK(d >= 0 && d < 2000000);
	CHECK_INT(own_gettimeofday(NULL, NULL), 0);
	time_t t0 = time(NULL), t1 = 0, t2 = own_time(&t1);
	CHECK(t2 == t1 && t2 >= t0 && t2 - t0 < 2);
	CHECK(own_time(NULL) >= t2);
}

#if defined(__x86_64__) || defined(__aarch64__)
/* clock_gettime: the vDSO's function found (this process has a vDSO, as every one on these
 * machines), each clock as glibc's reads it, a clock the vDSO does not read (the call does) and
 * EINVAL for one that does not exist */
TEST(libc_clock_gettime_as_glibc)
{
	static const clockid_t clk[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_PROCESS_CPUTIME_ID};
	for (size_t i = 0; i < sizeof clk / sizeof *clk; i++) {
		struct timespec a, b = {0, -1};
		CHECK_INT(clock_gettime(clk[i], &a), 0);
		CHECK_INT(own_clock_gettime(clk[i], &b), 0);
		CHECK(b.tv_nsec >= 0 && b.tv_nsec < 1000000000);
		long long d = (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec;
		CHECK(d >= 0 && d < 2000000000LL);
	}
	CHECK(vdso_looked && vdso_fn != NULL);
	struct timespec ts;
	errno = 0;
	CHECK_INT(own_clock_gettime((clockid_t)12345, &ts), -1);
	CHECK_INT(errno, EINVAL);
	errno = 0;
	CHECK_INT(own_clock_gettime((clockid_t)-12345, &ts), -1);
	CHECK_INT(errno, EINVAL);
}
/* printf's arguments read by fmt.c's one reader (int_arg): pointers, characters, '*' widths and
 * precisions between integers of every length, as glibc's */
TEST(libc_printf_arguments_as_glibc)
{
	int p[2];
	CHECK_INT(pipe(p), 0);
	char want[512], got[512];
	void *ptr = (void *)(uintptr_t)0x7f12345678ull;
#define PRINTF_ARGS "%p|%s|%c|%*d|%-*ld|%.*s|%*s|%hhd|%lld|%c%p", ptr, "str", 'z', 6, -12, -5, 7L, 2, "xyz", \
	                -4, "q", 300, -5LL, 'e', (void *)&p
	int n = snprintf(want, sizeof want, PRINTF_ARGS);
	CHECK_INT(own_dprintf(p[1], PRINTF_ARGS), n);
#undef PRINTF_ARGS
	ssize_t r = read(p[0], got, sizeof got - 1);
	CHECK_INT(r, n);
	got[r > 0 ? r : 0] = 0;
	CHECK_STR(got, want);
	close(p[0]);
	close(p[1]);
}
/* strerror: musl 1.2.3's text (its src/errno/__strerror.h) for every errno kept, and "Unknown
 * error N" as glibc's for every other number; the kept ones are exactly these */
TEST(libc_strerror_as_musl)
{
	static const struct {
		int e;
		const char *text;
	} musl[] = {
		{ENOENT, "No such file or directory"}, {EACCES, "Permission denied"},
		{EPERM, "Operation not permitted"}, {ENOSPC, "No space left on device"},
		{EDQUOT, "Quota exceeded"}, {EROFS, "Read-only file system"}, {EIO, "I/O error"},
		{EEXIST, "File exists"}, {ENOTDIR, "Not a directory"}, {EISDIR, "Is a directory"},
		{ELOOP, "Symbolic link loop"}, {ENAMETOOLONG, "Filename too long"},
		{ENOTEMPTY, "Directory not empty"}, {EXDEV, "Cross-device link"}, {EMLINK, "Too many links"},
		{ETXTBSY, "Text file busy"}, {EFBIG, "File too large"}, {ESTALE, "Stale file handle"},
		{EBADMSG, "Bad message"}, {ENOLCK, "No locks available"},
		{EDEADLK, "Resource deadlock would occur"}, {EBUSY, "Resource busy"},
		{ENXIO, "No such device or address"}, {ENODEV, "No such device"}, {ENOTTY, "Not a tty"},
		{ESPIPE, "Invalid seek"}, {EMFILE, "No file descriptors available"},
		{ENFILE, "Too many open files in system"}, {EBADF, "Bad file descriptor"},
		{EFAULT, "Bad address"}, {ENOMEM, "Out of memory"},
		{EAGAIN, "Resource temporarily unavailable"}, {EINTR, "Interrupted system call"},
		{EINVAL, "Invalid argument"}, {EOVERFLOW, "Value too large for data type"},
		{ERANGE, "Result not representable"}, {EILSEQ, "Illegal byte sequence"},
		{ENOSYS, "Function not implemented"}, {EOPNOTSUPP, "Not supported"},
		{E2BIG, "Argument list too long"}, {ENOEXEC, "Exec format error"},
		{ECHILD, "No child process"}, {ESRCH, "No such process"}, {EPIPE, "Broken pipe"},
		{ECONNREFUSED, "Connection refused"}, {ECONNRESET, "Connection reset by peer"},
		{ECONNABORTED, "Connection aborted"}, {ETIMEDOUT, "Operation timed out"},
		{EHOSTUNREACH, "Host is unreachable"}, {EHOSTDOWN, "Host is down"},
		{ENETUNREACH, "Network unreachable"}, {ENETDOWN, "Network is down"},
		{EADDRINUSE, "Address in use"}, {EADDRNOTAVAIL, "Address not available"},
		{EAFNOSUPPORT, "Address family not supported by protocol"},
		{EPROTONOSUPPORT, "Protocol not supported"}, {EPROTO, "Protocol error"},
		{ENOTCONN, "Socket not connected"}, {ENOTSOCK, "Not a socket"},
		{EDESTADDRREQ, "Destination address required"}, {EMSGSIZE, "Message too large"},
		{ENOBUFS, "No buffer space available"},
	};
	size_t n = sizeof musl / sizeof *musl;
	for (size_t i = 0; i < n; i++)
		CHECK_STR(own_strerror(musl[i].e), musl[i].text);
	size_t kept = 0;
	for (int e = 0; e < 256; e++)
		kept += strncmp(own_strerror(e), "Unknown error ", 14) != 0;
	CHECK_INT(kept, n);
	char want[32];
	for (int e = -1; e < 256; e++) {
		snprintf(want, sizeof want, "Unknown error %d", e);
		size_t i = 0;
		while (i < n && musl[i].e != e)
			i++;
		if (i == n)
			CHECK_STR(own_strerror(e), want);
	}
	CHECK_STR(own_strerror(INT_MIN), "Unknown error -2147483648");
	CHECK_STR(own_strerror(1000), strerror(1000)); /* glibc's wording */
	CHECK_STR(own_strerror(EKEYREVOKED), "Unknown error 128"); /* musl: "Key has been revoked" */
}

/* syscall(): every argument in its place (up to six: mmap's, then sendto's with an address), the
 * result, and -1 with errno on failure, as glibc's syscall() */
TEST(libc_syscall_as_glibc)
{
	CHECK_INT(own_syscall(SYS_getpid), getpid());
	char *p = (char *)own_syscall(SYS_mmap, 0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED && p[8191] == 0);
	CHECK_INT(own_syscall(SYS_munmap, p, 8192), 0);
	int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	CHECK_INT(bind(a, (struct sockaddr *)&sa, sizeof sa), 0);
	CHECK_INT(getsockname(a, (struct sockaddr *)&sa, &sl), 0);
	CHECK_INT(own_syscall(SYS_sendto, b, "six", 3, 0, &sa, sizeof sa), 3);
	char buf[8];
	CHECK_INT(own_syscall(SYS_recvfrom, a, buf, sizeof buf, 0, 0, 0), 3);
	CHECK(!memcmp(buf, "six", 3));
	close(a);
	close(b);
	errno = 0;
	CHECK_INT(own_syscall(SYS_close, -1), -1);
	CHECK_INT(errno, EBADF);
	errno = 0;
	CHECK_INT(own_syscall(SYS_openat, AT_FDCWD, "/nonexistent/x", O_RDONLY, 0), -1);
	CHECK_INT(errno, ENOENT);
	errno = 0;
	CHECK_INT(own_syscall(100000), -1);
	CHECK_INT(errno, ENOSYS);
}
#endif
