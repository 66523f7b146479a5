/* SASL client: known vectors for PLAIN (RFC 4616), CRAM-MD5 (RFC 2195), LOGIN, XOAUTH2; EHLO
 * parsing; the mechanism preference; redaction of secrets for transcripts. */
#include "auth.h"
#include "util.h"
#include "unit.h"

/* One SASL conversation: auth_start, then auth_step per server challenge. */
struct auth_step {
	const char *challenge; /* NULL: auth_start (step 0 only); later, NULL ends the script */
	int rc;                /* expected result; 1 stands for any positive length */
	const char *out;       /* expected line, or NULL: not checked */
	const char *err_has;   /* a.err must contain this (NULL: not checked) */
	const char *err_is;    /* a.err must be exactly this (NULL: not checked) */
};
static const struct {
	const char *name;
	enum auth_mech mech;
	const char *user, *pass;
	size_t outsize; /* 0: AUTH_LINE_MAX */
	struct auth_step steps[5];
} conversations[] = {
	/* an initial response was sent: any further challenge is a protocol error */
	{"plain_rfc4616", AUTH_PLAIN, "tim", "tanstaaftanstaaf", 0,
	 {{NULL, 1, "AUTH PLAIN AHRpbQB0YW5zdGFhZnRhbnN0YWFm"}, {"", -1, NULL, "unexpected"}}},
	/* challenge: base64 of "<1896.697170952@postoffice.reston.mci.net>";
	 * answer: base64 of "tim b913a602c7eda7a495b4e6e7334d3890" */
	{"cram_md5_rfc2195", AUTH_CRAM_MD5, "tim", "tanstaaftanstaaf", 0,
	 {{NULL, 1, "AUTH CRAM-MD5"},
	  {"PDE4OTYuNjk3MTcwOTUyQHBvc3RvZmZpY2UucmVzdG9uLm1jaS5uZXQ+", 1, "dGltIGI5MTNhNjAyYzdlZGE3YTQ5NWI0ZTZlNzMzNGQzODkw"},
	  {"", -1}}},
	/* "Username:", "Password:", and a third prompt too many */
	{"login_prompts", AUTH_LOGIN, "user@example.test", "s3cret pass", 0,
	 {{NULL, 1, "AUTH LOGIN"}, {"VXNlcm5hbWU6", 1, "dXNlckBleGFtcGxlLnRlc3Q="}, {"UGFzc3dvcmQ6", 1, "czNjcmV0IHBhc3M="},
	  {"UGFzc3dvcmQ6", -1}}},
	/* a malformed challenge is refused, not guessed at */
	{"login_malformed_challenge", AUTH_LOGIN, "u", "p", 0, {{NULL, 1, "AUTH LOGIN"}, {"not base64!", -1, NULL, "base64"}}},
	/* the example of Google's XOAUTH2 documentation; the error challenge is answered with an
	 * empty line, its JSON kept for the report */
	{"xoauth2_google", AUTH_XOAUTH2, "someuser@example.com", "ya29.vF9dft4qmTc2Nvb3RlckBhdHRhdmlzdGEuY29tCg", 0,
	 {{NULL, 1, "AUTH XOAUTH2 dXNlcj1zb21ldXNlckBleGFtcGxlLmNvbQFhdXRoPUJlYXJlciB5YTI5LnZGOWRmdDRxbVRjMk52YjNSbGNrQmhkSFJoZG1semRHRXVZMjl0Q2cBAQ=="},
	  {"eyJzdGF0dXMiOiI0MDEiLCJzY2hlbWVzIjoiQmVhcmVyIiwic2NvcGUiOiJodHRwczovL21haWwuZ29vZ2xlLmNvbS8ifQ==", 0, "", NULL,
	   "{\"status\":\"401\",\"schemes\":\"Bearer\",\"scope\":\"https://mail.google.com/\"}"}}},
	/* a token with a separator byte cannot be encoded */
	{"xoauth2_separator_in_token", AUTH_XOAUTH2, "u", "tok\1en", 0,
	 {{NULL, -1, NULL, NULL, "XOAUTH2: user name or token holds a byte it cannot carry"}}},
	/* a line that does not fit is not sent, and the buffer holds no half of it */
	{"plain_small_buffer", AUTH_PLAIN, "tim", "tanstaaftanstaaf", 16, {{NULL, -1, ""}}},
	{"plain_line_break", AUTH_PLAIN, "u", "pass\r\nQUIT", 0, {{NULL, -1, NULL, "line break"}}},
	{"none", AUTH_NONE, "u", "p", 0, {{NULL, -1}}},
};

TEST(auth_conversations)
{
	for (size_t i = 0; i < ARRAY_LEN(conversations); i++) {
		struct auth a;
		char line[AUTH_LINE_MAX];
		size_t size = conversations[i].outsize ? conversations[i].outsize : sizeof line;
		unit_case(conversations[i].name);
		auth_init(&a, conversations[i].mech, conversations[i].user, conversations[i].pass);
		for (size_t k = 0; k < ARRAY_LEN(conversations[i].steps); k++) {
			const struct auth_step *st = &conversations[i].steps[k];
			if (k && !st->challenge)
				break;
			ssize_t r = k ? auth_step(&a, st->challenge, line, size) : auth_start(&a, line, size);
			if (st->rc > 0)
				CHECK(r > 0);
			else
				CHECK_INT(r, st->rc);
			if (st->out)
				CHECK_STR(line, st->out);
			if (st->err_has)
				CHECK(strstr(a.err, st->err_has) != NULL);
			if (st->err_is)
				CHECK_STR(a.err, st->err_is);
		}
		/* the reasons never hold the secret */
		CHECK(strlen(conversations[i].pass) < 4 || !strstr(a.err, conversations[i].pass));
	}
}

TEST(auth_start_limits)
{
	struct auth a;
	char line[AUTH_LINE_MAX];
	static char longtok[AUTH_LINE_MAX];
	memset(longtok, 'x', sizeof longtok - 1);
	auth_init(&a, AUTH_XOAUTH2, "u", longtok);
	CHECK_INT(auth_start(&a, line, sizeof line), -1);
	CHECK_STR(a.err, "XOAUTH2: user name or token too long");
	auth_init(&a, AUTH_PLAIN, longtok, "p");
	CHECK_INT(auth_start(&a, line, sizeof line), -1);
	CHECK_STR(a.err, "PLAIN: user name or password too long");
	if (ENABLE_CRAM_MD5) {
		auth_init(&a, AUTH_CRAM_MD5, longtok, "p");
		CHECK(auth_start(&a, line, sizeof line) > 0);
		CHECK_INT(auth_step(&a, "PDE4OTY+", line, sizeof line), -1);
		CHECK_STR(a.err, "CRAM-MD5: user name too long");
	}
	/* the reasons never hold the secret */
	auth_init(&a, AUTH_PLAIN, "u", "pass\r\nQUIT");
	auth_start(&a, line, sizeof line);
	CHECK(strstr(a.err, "pass") == NULL);
}

TEST(auth_ehlo_and_choice)
{
	unsigned m = auth_parse_ehlo("PLAIN LOGIN CRAM-MD5");
	CHECK_INT(m, AUTH_BIT(AUTH_PLAIN) | AUTH_BIT(AUTH_LOGIN) | AUTH_BIT(AUTH_CRAM_MD5));
	CHECK_INT(auth_parse_ehlo("AUTH=login  plain\r\n"), AUTH_BIT(AUTH_PLAIN) | AUTH_BIT(AUTH_LOGIN));
	CHECK_INT(auth_parse_ehlo("GSSAPI SCRAM-SHA-256 XOAUTH2 OAUTHBEARER-VERY-LONG-NAME-X"), AUTH_BIT(AUTH_XOAUTH2));
	CHECK_INT(auth_parse_ehlo(""), 0);
	CHECK_INT(auth_choose(m, 0, 1), AUTH_PLAIN);
	CHECK_INT(auth_choose(m, 0, 0), AUTH_CRAM_MD5);
	CHECK_INT(auth_choose(AUTH_BIT(AUTH_LOGIN) | AUTH_BIT(AUTH_CRAM_MD5), 0, 1), AUTH_LOGIN);
	CHECK_INT(auth_choose(AUTH_BIT(AUTH_LOGIN) | AUTH_BIT(AUTH_PLAIN), 0, 0), AUTH_PLAIN);
	CHECK_INT(auth_choose(m, 1, 1), AUTH_NONE);  /* a token needs XOAUTH2 */
	CHECK_INT(auth_choose(m | AUTH_BIT(AUTH_XOAUTH2), 1, 1), AUTH_XOAUTH2);
	CHECK_INT(auth_choose(AUTH_BIT(AUTH_XOAUTH2), 0, 1), AUTH_NONE); /* a password is no token */
	CHECK_INT(auth_mech_parse("cram-md5"), AUTH_CRAM_MD5);
	CHECK_STR(auth_mech_name(AUTH_XOAUTH2), "XOAUTH2");
}

TEST(auth_redact_hides_secrets)
{
	struct auth a;
	char line[AUTH_LINE_MAX], shown[128];
	auth_init(&a, AUTH_PLAIN, "tim", "tanstaaftanstaaf");
	auth_start(&a, line, sizeof line);
	auth_redact(line, shown, sizeof shown);
	CHECK_STR(shown, "AUTH PLAIN <hidden>");
	auth_redact("AUTH LOGIN", shown, sizeof shown);
	CHECK_STR(shown, "AUTH LOGIN");
	auth_redact("dGltIGI5MTNhNjAyYzdlZGE3YTQ5NWI0ZTZlNzMzNGQzODkw", shown, sizeof shown);
	CHECK_STR(shown, "<hidden>");
	auth_redact("*", shown, sizeof shown);
	CHECK_STR(shown, "*");
	auth_redact("AUTH XOAUTH2 dXNlcj1zb21ldXNlckBleGFtcGxl", shown, 8);
	CHECK_STR(shown, "AUTH XO");
}
