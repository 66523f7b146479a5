/* Mail addresses: RFC 5322 address lists (display names, angle brackets, groups, comments,
 * quoted local parts, domain literals, the obsolete forms real mail still carries), RFC 5321
 * reverse/forward paths for the SMTP server, and the canonical "local@domain" form used in the
 * envelope. An address without "@domain" (a bare local user such as "root") is accepted and
 * marked unqualified, so the caller can qualify it (docs/submit.md, "system-mail rewriting").
 *
 * Contract: every parser takes an explicit length, never reads past it, treats NUL as an
 * ordinary invalid byte, and on error returns -1 with a one-line reason naming what and where
 * ("column 7: unterminated quoted string"). Nothing here allocates or logs. */
#ifndef SPOOLBOX_ADDR_H
#define SPOOLBOX_ADDR_H
#include <stddef.h>

/* Limits. RFC 5321 says 64 bytes of local part; longer ones exist in the wild (VERP and SRS
 * bounce addresses), so we allow 255 like Postfix does. Domains: 255 bytes, labels 63. */
#define ADDR_LOCAL_MAX 255
#define ADDR_DOMAIN_MAX 255
#define ADDR_LABEL_MAX 63
/* Longest canonical address: quoting can at most double the local part, plus quotes and @. */
#define ADDR_TEXT_MAX (2 * ADDR_LOCAL_MAX + 3 + ADDR_DOMAIN_MAX)
/* Largest input a parser looks at (a header field value or an SMTP command argument). */
#define ADDR_INPUT_MAX (1u << 20)

struct addr {
	int utf8;                         /* bytes >= 0x80 (valid UTF-8) in local part or domain */
	int literal;                      /* the domain is an address literal */
	/* where the addr-spec is in the text parsed: [start, end); local_end is just past the local
	 * part, where "@domain" goes when qualifying it */
	size_t start, local_end, end;
	/* the arrays last: one-byte displacements (docs/size.md) */
	char local[ADDR_LOCAL_MAX + 1];   /* the decoded local part (quotes and escapes removed) */
	char domain[ADDR_DOMAIN_MAX + 1]; /* as written ("[1.2.3.4]" for a literal), "" if none */
};

/* Parses one address list (a To:/Cc:/Bcc: value or a command-line recipient argument) and calls
 * fn for each mailbox, groups flattened ("undisclosed-recipients:;" yields none). fn returning
 * non-zero stops the walk and is returned. Empty list elements (",,") are skipped. Returns the
 * number of mailboxes, or -1 with the reason in err. */
typedef int addr_each_fn(void *ctx, const struct addr *a);
int addr_parse_list(const char *s, size_t n, addr_each_fn *fn, void *ctx, char *err, size_t errlen);

/* Parses text holding exactly one mailbox ("a@b", "Name <a@b>", "root (Cron Daemon)"). */
int addr_parse_one(const char *s, size_t n, struct addr *a, char *err, size_t errlen);

/* Parses an SMTP path at s (RFC 5321 4.1.2): "<a@b>", "<@relay:a@b>" (the route is dropped),
 * "<>" (only with allow_null: returns 1 and a->local = ""), or an unbracketed address up to
 * the next space (what old clients send). *used gets the bytes consumed. Returns 0, 1 (null
 * path) or -1. */
int addr_parse_path(const char *s, size_t n, int allow_null, struct addr *a, size_t *used, char *err, size_t errlen);

/* Writes the canonical form: the local part as a dot-atom when it is one, else as a quoted
 * string; then "@domain", or "@qualify" for an unqualified address when qualify is not NULL.
 * Returns the length, or -1 when it does not fit. */
int addr_format(const struct addr *a, const char *qualify, char *out, size_t size);

/* 1 for an atext byte of RFC 5322 (letters, digits, "!#$%&'*+-/=?^_`{|}~") or a byte >= 0x80
 * (UTF-8, RFC 6532). */
int addr_is_atext(unsigned char c);
/* 1 when the local part needs quoting (it is not a dot-atom). */
int addr_local_needs_quotes(const char *local);
/* Checks a domain name (labels of letters, digits, '-', '_' and UTF-8; no empty label; 255
 * bytes; 63 per label) or an address literal ([IPv4] or [IPv6:...]). Returns 0 or -1 with why. */
int addr_domain_check(const char *d, size_t n, char *err, size_t errlen);
/* Checks that s[0..n) is valid UTF-8 (no overlongs, no surrogates). */
int addr_utf8_valid(const unsigned char *s, size_t n);
#endif
