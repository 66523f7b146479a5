/* SASL client for SMTP AUTH (RFC 4954): PLAIN (RFC 4616), LOGIN (draft-murchison-sasl-login),
 * CRAM-MD5 (RFC 2195) and XOAUTH2 (Google/Microsoft bearer tokens). Pure: no I/O, no logging,
 * no allocation. The SMTP client drives it line by line:
 *
 *     offered = auth_parse_ehlo("PLAIN LOGIN");             // the EHLO AUTH keyword's params
 *     mech = auth_choose(offered, have_token, over_tls);     // AUTH_NONE: nothing usable
 *     auth_init(&a, mech, user, secret);                     // secret: password or token
 *     n = auth_start(&a, line, sizeof line);                 // send line + CRLF
 *     while (reply is 334)
 *             n = auth_step(&a, text_after_334, line, sizeof line);   // send line + CRLF
 *             (n < 0: send "*" + CRLF to cancel, RFC 4954 section 4; a.err says why)
 *     235 = success; 535/454/... = failure: report the server's text (and a.err, if set).
 *
 * Mechanism choice (auth_choose), from what the server's EHLO offers:
 *   - with a bearer token: XOAUTH2 only (a token is not a password);
 *   - over TLS: PLAIN, LOGIN, CRAM-MD5 (PLAIN is one round trip and TLS protects it;
 *     CRAM-MD5 forces the server to keep the password in a reversible form);
 *   - in clear text (only when the caller's configuration allows AUTH without TLS):
 *     CRAM-MD5, PLAIN, LOGIN (CRAM-MD5 at least does not send the password itself).
 * Nothing is tried that the server did not offer: blind attempts get hosts banned.
 *
 * Secrets: struct auth keeps pointers to the caller's user and secret, which MUST outlive the
 * exchange; lines produced here contain secrets and MUST NOT be logged: pass every line sent
 * during AUTH through auth_redact() before it reaches a transcript. */
#ifndef SPOOLBOX_AUTH_H
#define SPOOLBOX_AUTH_H
#include <stddef.h>
#include <sys/types.h>

enum auth_mech { AUTH_NONE = 0, AUTH_PLAIN, AUTH_LOGIN, AUTH_CRAM_MD5, AUTH_XOAUTH2 };
#define AUTH_BIT(m) (1u << (m))

/* Longest AUTH command line with its initial response (RFC 4954 section 4: 12288 octets),
 * and so the output buffer size that always suffices. */
#define AUTH_LINE_MAX 12288

struct auth {
	enum auth_mech mech;
	int step;             /* challenges answered so far */
	const char *user;
	const char *secret;   /* password, or bearer token for XOAUTH2 */
	char err[256];        /* why auth_start/auth_step failed, or XOAUTH2's error JSON; no secret */
};

/* The mechanisms named in an EHLO AUTH line's parameters ("PLAIN LOGIN CRAM-MD5", any case;
 * the old "AUTH=LOGIN PLAIN" form too): a mask of AUTH_BIT(m). Unknown names are ignored. */
unsigned auth_parse_ehlo(const char *params);
/* The preferred mechanism among offered (see the order above); AUTH_NONE when none fits. */
enum auth_mech auth_choose(unsigned offered, int have_token, int over_tls);
/* "PLAIN", "LOGIN", "CRAM-MD5", "XOAUTH2", or "none". */
const char *auth_mech_name(enum auth_mech m);
/* The mechanism named s (any case), or AUTH_NONE. */
enum auth_mech auth_mech_parse(const char *s);

void auth_init(struct auth *a, enum auth_mech mech, const char *user, const char *secret);
/* Writes the AUTH command (no CRLF), with an initial response for PLAIN and XOAUTH2, into out.
 * Returns its length, or -1 (a->err says why: no mechanism, user or secret too long, or
 * containing a byte the mechanism cannot carry, or size too small). */
ssize_t auth_start(struct auth *a, char *out, size_t size);
/* Given the text of a 334 reply (after "334 ", CR/LF already removed), writes the response line
 * (no CRLF) into out. Returns its length (0 is valid: XOAUTH2 answers its error challenge with
 * an empty line), or -1 when the challenge is invalid or unexpected: the caller MUST then cancel
 * with "*". */
ssize_t auth_step(struct auth *a, const char *challenge, char *out, size_t size);
/* What a transcript may show of a line the client sent during AUTH: "AUTH PLAIN <hidden>" for
 * the command, "<hidden>" for any response line, "*" for a cancel. Always NUL-terminates. */
void auth_redact(const char *sent, char *out, size_t size);
/* Clears a's secret pointers and error (the caller wipes its own buffers). */
void auth_clear(struct auth *a);
#endif
