/* The DSN request parameters of RFC 3461 as one vocabulary for every end that carries them:
 * smtpd and submit parse them, the spool stores them (docs/spool.md 4.1), the smtp client sends
 * them on, errormail obeys them. One set of bits and one parser, so a value one end accepts is
 * one the others understand. The addresses in ENVID and ORCPT travel as xtext (xtext.h). */
#ifndef SPOOLBOX_DSN_FLAGS_H
#define SPOOLBOX_DSN_FLAGS_H
#include <stddef.h>

/* NOTIFY bits; 0 means "not given" (RFC 3461 4.1: FAILURE, and DELAY at the MTA's choice). */
enum {
	NOTIFY_SUCCESS = 1,
	NOTIFY_FAILURE = 2,
	NOTIFY_DELAY = 4,
	NOTIFY_NEVER = 8,
};

#define DSN_ENVID_MAX 100      /* RFC 3461 4.4: ENVID, decoded */
#define DSN_ORCPT_MAX 500      /* RFC 3461 4.2: the address of ORCPT, decoded */
#define DSN_NOTIFY_TEXT 24     /* "SUCCESS,FAILURE,DELAY" and its NUL */

/* A NOTIFY value of n bytes (need not be NUL-terminated): "NEVER" alone, or a comma-separated
 * list of SUCCESS, FAILURE and DELAY, in any case. Sets *bits and returns 0, or returns -1
 * (empty, unknown word, empty item, NEVER with others). */
int dsn_notify_parse(const char *s, size_t n, unsigned *bits);
/* The NOTIFY value of bits as it goes on the wire: "NEVER", or the words of the bits set in the
 * order SUCCESS,FAILURE,DELAY; "" when bits is 0. */
void dsn_notify_format(unsigned bits, char out[DSN_NOTIFY_TEXT]);
/* A RET value of n bytes: 'F' for FULL, 'H' for HDRS (any case), 0 for anything else. */
char dsn_ret_parse(const char *s, size_t n);
#endif
