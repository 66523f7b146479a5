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

/* pwd.c against glibc's (NSS "files": the same /etc/passwd and /etc/group) for every entry */
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
