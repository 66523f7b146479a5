/* SASL client: known vectors for PLAIN (RFC 4616), CRAM-MD5 (RFC 2195), LOGIN, XOAUTH2; EHLO
 * parsing; the mechanism preference; redaction of secrets for transcripts. */
#include "auth.h"
#include "unit.h"

TEST(auth_plain_rfc4616)
{
	struct auth a;
	char line[AUTH_LINE_MAX];
	auth_init(&a, AUTH_PLAIN, "tim", "tanstaaftanstaaf");
	CHECK(auth_start(&a, line, sizeof line) > 0);
	CHECK_STR(line, "AUTH PLAIN AHRpbQB0YW5zdGFhZnRhbnN0YWFm");
	/* an initial response was sent: any further challenge is a protocol error */
	CHECK_INT(auth_step(&a, "", line, sizeof line), -1);
	CHECK(strstr(a.err, "unexpected") != NULL);
}

TEST(auth_cram_md5_rfc2195)
{
	struct auth a;
	char line[AUTH_LINE_MAX];
	auth_init(&a, AUTH_CRAM_MD5, "tim", "tanstaaftanstaaf");
	CHECK(auth_start(&a, line, sizeof line) > 0);
	CHECK_STR(line, "AUTH CRAM-MD5");
	/* base64 of "<1896.697170952@postoffice.reston.mci.net>" */
	CHECK(auth_step(&a, "PDE4OTYuNjk3MTcwOTUyQHBvc3RvZmZpY2UucmVzdG9uLm1jaS5uZXQ+", line, sizeof line) > 0);
	/* base64 of "tim b913a602c7eda7a495b4e6e7334d3890" */
	CHECK_STR(line, "dGltIGI5MTNhNjAyYzdlZGE3YTQ5NWI0ZTZlNzMzNGQzODkw");
	CHECK_INT(auth_step(&a, "", line, sizeof line), -1);
}

TEST(auth_login_prompts)
{
	struct auth a;
	char line[AUTH_LINE_MAX];
	auth_init(&a, AUTH_LOGIN, "user@example.test", "s3cret pass");
	CHECK(auth_start(&a, line, sizeof line) > 0);
	CHECK_STR(line, "AUTH LOGIN");
	CHECK(auth_step(&a, "VXNlcm5hbWU6", line, sizeof line) > 0); /* "Username:" */
	CHECK_STR(line, "dXNlckBleGFtcGxlLnRlc3Q=");
	CHECK(auth_step(&a, "UGFzc3dvcmQ6", line, sizeof line) > 0); /* "Password:" */
	CHECK_STR(line, "czNjcmV0IHBhc3M=");
	CHECK_INT(auth_step(&a, "UGFzc3dvcmQ6", line, sizeof line), -1);
	/* a malformed challenge is refused, not guessed at */
	auth_init(&a, AUTH_LOGIN, "u", "p");
	auth_start(&a, line, sizeof line);
	CHECK_INT(auth_step(&a, "not base64!", line, sizeof line), -1);
	CHECK(strstr(a.err, "base64") != NULL);
}

TEST(auth_xoauth2_format)
{
	struct auth a;
	char line[AUTH_LINE_MAX];
	/* the example of Google's XOAUTH2 documentation */
	auth_init(&a, AUTH_XOAUTH2, "someuser@example.com", "ya29.vF9dft4qmTc2Nvb3RlckBhdHRhdmlzdGEuY29tCg");
	CHECK(auth_start(&a, line, sizeof line) > 0);
	CHECK_STR(line, "AUTH XOAUTH2 dXNlcj1zb21ldXNlckBleGFtcGxlLmNvbQFhdXRoPUJlYXJlciB5YTI5LnZGOWRmdDRxbVRjMk52YjNSbGNrQmhkSFJoZG1semRHRXVZMjl0Q2cBAQ==");
	/* the error challenge: answered with an empty line, its JSON kept for the report */
	CHECK_INT(auth_step(&a, "eyJzdGF0dXMiOiI0MDEiLCJzY2hlbWVzIjoiQmVhcmVyIiwic2NvcGUiOiJodHRwczovL21haWwuZ29vZ2xlLmNvbS8ifQ==", line, sizeof line), 0);
	CHECK_STR(line, "");
	CHECK_STR(a.err, "{\"status\":\"401\",\"schemes\":\"Bearer\",\"scope\":\"https://mail.google.com/\"}");
	/* a token with a separator byte cannot be encoded */
	auth_init(&a, AUTH_XOAUTH2, "u", "tok\1en");
	CHECK_INT(auth_start(&a, line, sizeof line), -1);
}

TEST(auth_start_limits)
{
	struct auth a;
	char small[16], line[AUTH_LINE_MAX];
	static char longtok[AUTH_LINE_MAX];
	auth_init(&a, AUTH_PLAIN, "tim", "tanstaaftanstaaf");
	CHECK_INT(auth_start(&a, small, sizeof small), -1);
	CHECK_STR(small, "");
	memset(longtok, 'x', sizeof longtok - 1);
	auth_init(&a, AUTH_XOAUTH2, "u", longtok);
	CHECK_INT(auth_start(&a, line, sizeof line), -1);
	auth_init(&a, AUTH_PLAIN, "u", "pass\r\nQUIT");
	CHECK_INT(auth_start(&a, line, sizeof line), -1);
	CHECK(strstr(a.err, "line break") != NULL);
	/* the reasons never hold the secret */
	CHECK(strstr(a.err, "pass") == NULL);
	auth_init(&a, AUTH_NONE, "u", "p");
	CHECK_INT(auth_start(&a, line, sizeof line), -1);
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
