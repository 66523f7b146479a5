/* Unit tests of the shared DSN vocabulary: xtext (xtext.h) and the NOTIFY/RET parameters
 * (dsn_flags.h), as tables. smtpd, submit, the spool and the smtp client all go through these,
 * so one rule here is the rule at every end. */
#include "dsn_flags.h"
#include "unit.h"
#include "xtext.h"

TEST(xtext_round_trip)
{
	char enc[64], dec[64];
	CHECK_INT(xtext_encode("a b+c=d\n\xc3\xa9", 10, enc, sizeof enc), 22);
	CHECK_STR(enc, "a+20b+2Bc+3Dd+0A+C3+A9");
	CHECK(xtext_decode(enc, strlen(enc), dec, sizeof dec) == 10);
	CHECK(memcmp(dec, "a b+c=d\n\xc3\xa9", 10) == 0);
	CHECK_INT(xtext_encode("abcdef", 6, enc, 4), -1);
	CHECK_INT(xtext_encode("", 0, enc, 1), 0);
}

/* RFC 3461 4 as one rule: the spool's reader used to take '=' and lower-case escapes that
 * smtpd refused; now both refuse them. */
TEST(xtext_decode_table)
{
	static const struct {
		const char *in;
		int len;             /* the result, -1 refused */
		const char *out;
	} t[] = {
		{"", 0, ""},
		{"user@example.org", 16, "user@example.org"},
		{"a+2Bb", 3, "a+b"},
		{"+3D", 1, "="},
		{"ab+2", -1, NULL},      /* short escape */
		{"ab+", -1, NULL},
		{"ab+ZZ", -1, NULL},     /* not hex */
		{"ab+2b", -1, NULL},     /* lower-case hex is not hexchar */
		{"a=b", -1, NULL},       /* '=' is not an xchar */
		{"a b", -1, NULL},
		{"a\x7f", -1, NULL},
		{"\xc3\xa9", -1, NULL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char dec[32];
		int n = xtext_decode(t[i].in, strlen(t[i].in), dec, sizeof dec);
		if (n != t[i].len)
			unit_fail(__FILE__, __LINE__, "xtext_decode(\"%s\") == %d, expected %d", t[i].in, n, t[i].len);
		else if (t[i].out)
			CHECK_STR(dec, t[i].out);
	}
	char small[4];
	CHECK_INT(xtext_decode("abcd", 4, small, sizeof small), -1);
	CHECK_INT(xtext_decode("abc", 3, small, sizeof small), 3);
}

TEST(dsn_notify_table)
{
	static const struct {
		const char *in;
		int rc;
		unsigned bits;
		const char *wire;    /* dsn_notify_format of the bits */
	} t[] = {
		{"NEVER", 0, NOTIFY_NEVER, "NEVER"},
		{"never", 0, NOTIFY_NEVER, "NEVER"},
		{"SUCCESS", 0, NOTIFY_SUCCESS, "SUCCESS"},
		{"delay,Failure", 0, NOTIFY_FAILURE | NOTIFY_DELAY, "FAILURE,DELAY"},
		{"SUCCESS,FAILURE,DELAY", 0, NOTIFY_SUCCESS | NOTIFY_FAILURE | NOTIFY_DELAY, "SUCCESS,FAILURE,DELAY"},
		{"SUCCESS,SUCCESS", 0, NOTIFY_SUCCESS, "SUCCESS"},
		{"", -1, 0, NULL},
		{"SUCCESS,", -1, 0, NULL},
		{",SUCCESS", -1, 0, NULL},
		{"SUCCESS,,DELAY", -1, 0, NULL},
		{"NEVER,SUCCESS", -1, 0, NULL},
		{"SUCCES", -1, 0, NULL},
		{"SUCCESSX", -1, 0, NULL},
		{"WHATEVER", -1, 0, NULL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		unsigned bits = 99;
		int rc = dsn_notify_parse(t[i].in, strlen(t[i].in), &bits);
		if (rc != t[i].rc)
			unit_fail(__FILE__, __LINE__, "dsn_notify_parse(\"%s\") == %d, expected %d", t[i].in, rc, t[i].rc);
		if (rc < 0) {
			CHECK_INT(bits, 99); /* untouched on failure */
			continue;
		}
		CHECK_INT(bits, t[i].bits);
		char w[DSN_NOTIFY_TEXT];
		dsn_notify_format(bits, w);
		CHECK_STR(w, t[i].wire);
	}
	/* the length bounds the value: "NEVER ORCPT=..." is not read past the word */
	unsigned bits;
	CHECK_INT(dsn_notify_parse("NEVERX", 5, &bits), 0);
	CHECK_INT(bits, NOTIFY_NEVER);
	char w[DSN_NOTIFY_TEXT];
	dsn_notify_format(0, w);
	CHECK_STR(w, "");
	dsn_notify_format(NOTIFY_NEVER | NOTIFY_SUCCESS, w);
	CHECK_STR(w, "NEVER");
}

TEST(dsn_ret_table)
{
	CHECK_INT(dsn_ret_parse("FULL", 4), 'F');
	CHECK_INT(dsn_ret_parse("hdrs", 4), 'H');
	CHECK_INT(dsn_ret_parse("HDRSX", 5), 0);
	CHECK_INT(dsn_ret_parse("HDRSX", 4), 'H');
	CHECK_INT(dsn_ret_parse("", 0), 0);
	CHECK_INT(dsn_ret_parse("FUL", 3), 0);
}
