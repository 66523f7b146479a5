/* A minimal unit-test harness: TEST(name) { ... } registers a test; CHECK* record failures with
 * file:line and carry on. The runner (runner.c) prints "N passed, N failed" last. */
#ifndef SPOOLBOX_UNIT_H
#define SPOOLBOX_UNIT_H
#include <stdio.h>
#include <string.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
	struct unit_test *next;
};
void unit_register(struct unit_test *t);
void unit_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
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
