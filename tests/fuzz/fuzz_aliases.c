/* Fuzz target: the aliases file parser, the .forward/:include: target-list splitter, and the
 * expansion of every parsed name (with a fake user database, so no passwd lookups). */
#include "aliases.h"
#include "util.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fake_getpw(void *ctx, const char *name, struct dl_user *u)
{
	(void)ctx;
	if (strcmp(name, "root") && strcmp(name, "alice"))
		return 1;
	str_lcpy(u->name, name, sizeof u->name);
	u->uid = u->gid = name[0] == 'r' ? 0 : 1000;
	str_lcpy(u->home, "/nonexistent", sizeof u->home);
	return 0;
}

static int count(void *ctx, enum alias_tkind k, const char *t, size_t n)
{
	(void)k;
	(void)t;
	*(size_t *)ctx += n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aliases a;
	aliases_parse(&a, "fuzz", (const char *)data, size, NULL, NULL);
	char err[300];
	size_t total = 0;
	aliases_targets((const char *)data, size, 1, count, &total, err, sizeof err);
	struct dl_user u = {"nobody", 65534, 65534, "/nonexistent"};
	struct expand_cfg cfg = {&a, "fuzz", &u, 0, NULL, 0, "box.example", "x.example", fake_getpw, NULL};
	for (size_t i = 0; i < a.n && i < 8; i++) {
		struct expansion x;
		if (expand_recipient(&cfg, a.e[i].name, &x) == 0)
			expansion_free(&x);
	}
	struct expansion x;
	if (expand_recipient(&cfg, "root", &x) == 0)
		expansion_free(&x);
	aliases_free(&a);
	return 0;
}
