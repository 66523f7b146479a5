/* Unit tests of the bounded string and buffer helpers. */
#include "unit.h"
#include "util.h"

TEST(lcpy_truncates_and_reports)
{
	char b[4];
	CHECK_INT(str_lcpy(b, "abc", sizeof b), 3);
	CHECK_STR(b, "abc");
	CHECK_INT(str_lcpy(b, "abcdef", sizeof b), 6);
	CHECK_STR(b, "abc");
	CHECK_INT(str_fmt(b, sizeof b, "%d", 12), 0);
	CHECK_INT(str_fmt(b, sizeof b, "%d", 12345), -1);
	CHECK_STR(b, "123");
}

TEST(buf_respects_max)
{
	struct buf b;
	buf_init(&b, 10);
	CHECK_INT(buf_adds(&b, "12345"), 0);
	CHECK_INT(buf_adds(&b, "67890"), 0);
	CHECK_INT(buf_addc(&b, 'x'), -1);
	CHECK_INT(b.len, 10);
	CHECK_STR(b.p, "1234567890");
	buf_reset(&b);
	CHECK_INT(buf_printf(&b, "%s-%d", "ab", 7), 0);
	CHECK_STR(b.p, "ab-7");
	buf_free(&b);
}

TEST(buf_printf_appends_long_output_and_respects_max)
{
	struct buf b;
	buf_init(&b, 700);
	CHECK_INT(buf_adds(&b, "x"), 0);
	CHECK_INT(buf_printf(&b, "%0600d|", 5), 0); /* longer than any first guess */
	CHECK_INT(b.len, 602);
	CHECK(b.p[0] == 'x' && b.p[1] == '0' && b.p[600] == '5' && b.p[601] == '|' && b.p[602] == 0);
	CHECK_INT(buf_printf(&b, "%0100d", 1), -1); /* over max: the buffer stays as it was */
	CHECK_INT(b.len, 602);
	CHECK(b.p[602] == 0);
	CHECK_INT(buf_printf(&b, "%s", ""), 0);
	CHECK_INT(b.len, 602);
	buf_free(&b);
}

TEST(caseeq)
{
	CHECK(str_caseeq("HeLLo", "hello"));
	CHECK(!str_caseeq("hello", "hell"));
	CHECK(str_ncaseeq("RCPT TO:", "rcpt to:<x>", 8));
}

TEST(str_bykey_finds_a_text_or_the_default)
{
	static const char tab[] = "\001one\0\050forty\0\377last\0\0other";
	CHECK_STR(str_bykey(tab, 1), "one");
	CHECK_STR(str_bykey(tab, 40), "forty");
	CHECK_STR(str_bykey(tab, 255), "last");
	CHECK_STR(str_bykey(tab, 2), "other");
	CHECK_STR(str_bykey(tab, 0), "other");
	CHECK_STR(str_bykey("\0", 7), "");
}
