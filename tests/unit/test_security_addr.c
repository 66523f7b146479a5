/* Security review: no control character reaches a decoded address, whatever the quoting. */
#include "addr.h"
#include "unit.h"
#include <string.h>

static int parses(const char *s, struct addr *a)
{
	char err[160];
	return addr_parse_one(s, strlen(s), a, err, sizeof err);
}

static int clean(const struct addr *a)
{
	for (const char *p = a->local; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != ' ' && *p != '\t')
			return 0;
	for (const char *p = a->domain; *p; p++)
		if ((unsigned char)*p < 0x20)
			return 0;
	return 1;
}

TEST(security_quoted_pair_cr_lf_refused)
{
	struct addr a;
	/* an escaped line break would become a header line in From: <sender> */
	CHECK(parses("\"x\\\nX-Evil: 1\"@example.com", &a) < 0);
	CHECK(parses("\"x\\\r\\\nX-Evil: 1\"@example.com", &a) < 0);
	CHECK(parses("\"x\\\r\"@example.com", &a) < 0);
	CHECK(parses("<\"a\\\nb\"@example.com>", &a) < 0);
	size_t used;
	char err[160];
	const char path[] = "<\"a\\\rb\"@example.com>";
	CHECK(addr_parse_path(path, sizeof path - 1, 0, &a, &used, err, sizeof err) < 0);
}

TEST(security_quoted_pair_space_tab_kept)
{
	struct addr a;
	CHECK(parses("\"a\\ b\"@example.com", &a) == 0);
	CHECK(strcmp(a.local, "a b") == 0);
	CHECK(parses("\"a\\\tb\"@example.com", &a) == 0);
	CHECK(strcmp(a.local, "a\tb") == 0);
	/* a folded quoted string is unfolded: the line break goes */
	CHECK(parses("\"a\r\n b\"@example.com", &a) == 0);
	CHECK(clean(&a));
}
