/* Runs every registered unit test (optionally only those whose name contains argv[1]) and
 * prints "N passed, N failed" as its last line; exits 1 when any failed. */
#include "unit.h"
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

static struct unit_test *tests;
static int current_failed;
static const char *current_case;
static char tmpdir[256];

void unit_register(struct unit_test *t)
{
	t->next = tests;
	tests = t;
}

void unit_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: ", file, line);
	if (current_case)
		fprintf(stderr, "[%s] ", current_case);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	current_failed = 1;
}

void unit_case(const char *name)
{
	current_case = name;
}

void unit_collect(void *ctx, const char *file, int line, const char *reason)
{
	struct unit_findings *f = ctx;
	size_t l = strlen(f->all);
	if (!f->n++) {
		f->first_line = line;
		snprintf(f->first, sizeof f->first, "%s:%d: %s", file, line, reason);
	}
	f->last_line = line;
	snprintf(f->last, sizeof f->last, "%s:%d: %s", file, line, reason);
	snprintf(f->all + l, sizeof f->all - l, "%s:%d: %s\n", file, line, reason);
}

char *unit_long_line(const char *prefix, size_t len)
{
	char *s = malloc(len + 2);
	if (!s) {
		perror("malloc");
		exit(2);
	}
	memset(s, 'a', len);
	memcpy(s, prefix, strlen(prefix));
	memcpy(s + len, "\n", 2);
	return s;
}

const char *unit_tmpdir(void)
{
	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof tmpdir, "/tmp/spoolbox-unit-XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return tmpdir;
}

static void cleanup_tmpdir(void)
{
	if (tmpdir[0]) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "warning: could not remove %s\n", tmpdir);
		tmpdir[0] = 0;
	}
}

int main(int argc, char **argv)
{
	/* Registration prepends; reverse so tests run in file order. */
	struct unit_test *rev = NULL;
	while (tests) {
		struct unit_test *n = tests->next;
		tests->next = rev;
		rev = tests;
		tests = n;
	}
	int passed = 0, failed = 0;
	for (struct unit_test *t = rev; t; t = t->next) {
		if (argc > 1 && !strstr(t->name, argv[1]))
			continue;
		current_failed = 0;
		current_case = NULL;
		t->fn();
		cleanup_tmpdir();
		if (current_failed) {
			fprintf(stderr, "FAIL %s\n", t->name);
			failed++;
		} else {
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
