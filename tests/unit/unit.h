/* A minimal unit-test harness: TEST(name) { ... } registers a test; CHECK* record failures with
 * file:line and carry on. The runner (runner.c) prints "N passed, N failed" last. */
#ifndef SPOOLBOX_UNIT_H
#define SPOOLBOX_UNIT_H
#include <stdio.h>
#include <string.h>

/* Test tables leave the trailing fields of a case zero ("not checked"), as C intends. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

struct unit_test {
	const char *name;
	void (*fn)(void);
	struct unit_test *next;
};
void unit_register(struct unit_test *t);
void unit_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Names the table case being checked: failures print "[name]" until the next call (the runner
 * clears it before each test). name must outlive the case (a string literal or table entry). */
void unit_case(const char *name);
/* A configuration parser's findings, collected by unit_collect (the conf.h report callback):
 * how many, the first and the last as "file:line: reason", and all of them one a line (cut
 * when all is full). Zero it before the parse. */
struct unit_findings {
	int n, first_line, last_line;
	char first[512], last[512], all[4096];
};
void unit_collect(void *ctx, const char *file, int line, const char *reason);
/* A malloc'd text of one line: prefix, then 'a's up to len bytes, then "\n" (free it). For the
 * line-length limits of the parsers. */
char *unit_long_line(const char *prefix, size_t len);
/* A fresh empty directory for this test (removed by the runner afterwards). */
const char *unit_tmpdir(void);

#define TEST(n)                                                                   \
	static void n(void);                                                      \
	static struct unit_test n##_reg = {#n, n, 0};                             \
	__attribute__((constructor)) static void n##_ctor(void) { unit_register(&n##_reg); } \
	static void n(void)

#define CHECK(c) do { if (!(c)) unit_fail(__FILE__, __LINE__, "CHECK(%s)", #c); } while (0)
#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) unit_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, b_); } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) unit_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)
#endif
