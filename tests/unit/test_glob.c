/* Unit tests of the shell-style matcher that replaces fnmatch() for scheduler.conf patterns. */
#include "glob.h"
#include "unit.h"
#include <fnmatch.h>

TEST(glob_basics)
{
	CHECK(glob_match("*", ""));
	CHECK(glob_match("*", "smtp"));
	CHECK(glob_match("smtp", "smtp"));
	CHECK(!glob_match("smtp", "smtpx"));
	CHECK(glob_match("*.toronto.edu", "neat.cs.toronto.edu"));
	CHECK(!glob_match("*.toronto.edu", "toronto.edu"));
	CHECK(glob_match("l?cal", "local"));
	CHECK(glob_match("[a-c]x", "bx"));
	CHECK(!glob_match("[!a-c]x", "bx"));
	CHECK(glob_match("[]]", "]"));
	CHECK(glob_match("a\\*b", "a*b"));
	CHECK(!glob_match("a\\*b", "axb"));
	CHECK(glob_match("[abc", "[abc"));
	CHECK(glob_match("*a*b*c*", "xxaxxbxxcxx"));
	CHECK(!glob_match("*a*b*c*d", "xxaxxbxxcxx"));
}

TEST(glob_agrees_with_fnmatch)
{
	static const char *pats[] = {"*", "?", "a*", "*a", "*a*", "a?c", "[a-m]*", "[!a-m]*", "*.[ch]", "**b", "a*b*c", "smtp/*", "x[0-9]y"};
	static const char *strs[] = {"", "a", "abc", "ba", "bab", "a.c", "a.h", "zz", "x5y", "xay", "smtp/host", "aXbYc", "b"};
	for (size_t i = 0; i < sizeof pats / sizeof *pats; i++)
		for (size_t j = 0; j < sizeof strs / sizeof *strs; j++)
			if (glob_match(pats[i], strs[j]) != (fnmatch(pats[i], strs[j], 0) == 0))
				unit_fail(__FILE__, __LINE__, "pattern %s on %s disagrees with fnmatch", pats[i], strs[j]);
}

TEST(glob_no_exponential_backtracking)
{
	char s[4001], p[200];
	memset(s, 'a', 4000);
	s[4000] = 0;
	for (int i = 0; i < 198; i += 2) {
		p[i] = '*';
		p[i + 1] = 'a';
	}
	strcpy(p + 198, "b");
	CHECK(!glob_match(p, s));
}
