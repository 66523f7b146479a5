/* 8-bit to 7-bit MIME conversion for a server without 8BITMIME (RFC 6152 section 3 lets the
 * client convert; Postfix does by default): every MIME leaf part of a text type (or with no
 * Content-Type, which means text/plain) whose body has 8-bit bytes is re-encoded as
 * quoted-printable (RFC 2045 6.7: lines of at most 76 characters, soft line breaks) and its
 * Content-Transfer-Encoding field replaced; multipart and message/rfc822 parts are walked into
 * (their own 8bit label becomes 7bit); header fields are left alone.
 *
 * Contract: input is a whole message as stored in the queue (LF line endings), read only within
 * [msg, msg + n); output is appended to out (its max bounds it). Nothing is allocated but out's
 * growth. Returns 0; MIME7_CANNOT when some 8-bit content cannot be converted without changing
 * its meaning (a part declared binary, or 8-bit data in a part that is not text), with the
 * reason in why; MIME7_NOMEM when out could not grow. */
#ifndef SPOOLBOX_MIME7_H
#define SPOOLBOX_MIME7_H
#include "util.h"
#include <stddef.h>

#define MIME7_DEPTH_MAX 16 /* nesting of multipart and message parts followed */
#define MIME7_CANNOT (-1)
#define MIME7_NOMEM (-2)

int mime7_convert(const char *msg, size_t n, struct buf *out, char *why, size_t whylen);
#endif
