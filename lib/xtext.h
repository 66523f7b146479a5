/* xtext (RFC 3461 4): the one encoding of addresses and ENVID in DSN parameters and in the spool
 * (docs/spool.md 4.1). The smtp client, smtpd and the spool share it, so what smtpd accepts is
 * exactly what the spool can store and the client can send on.
 *
 * Contract: xtext_encode writes bytes outside '!'..'~', and '+' and '=', as "+XX" (two upper-case
 * hex digits), at most 3*n+1 bytes with the NUL. xtext_decode accepts only that form: xchars
 * ('!'..'~' but '+' and '='), and "+XX" with upper-case hex digits; anything else (a space, a
 * control byte, '=', a short or lower-case escape) is refused. Both NUL-terminate out and return
 * the output length, or -1 when the input is bad or out (size bytes) is too small. */
#ifndef SPOOLBOX_XTEXT_H
#define SPOOLBOX_XTEXT_H
#include <stddef.h>

int xtext_encode(const char *in, size_t n, char *out, size_t size);
int xtext_decode(const char *in, size_t n, char *out, size_t size);
#endif
