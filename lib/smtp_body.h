/* The message body on the SMTP wire (RFC 5321 4.5.2, 4.5.3.1.6): the stored message has LF line
 * endings (docs/spool.md 3); the wire wants CRLF, a '.' doubled at the start of a line, no line
 * longer than 998 bytes, and ".\r\n" at the end.
 *
 * Long lines are folded as Postfix's smtp_line_length_limit (998) does: after 998 bytes of a
 * line "\r\n " is inserted, so the rest continues on a line starting with a space. In a header
 * that is a folded header line (RFC 5322 2.2.3) whose unfolded value is unchanged but for the
 * space; in a body it adds one leading space per 998 bytes, which is the least harmful repair
 * of a line no SMTP server has to accept. The encoder is a pure function with its state in the
 * caller's struct, so any split of the input gives the same bytes. */
#ifndef SMTP_BODY_H
#define SMTP_BODY_H
#include <stddef.h>

#define SMTP_LINE_LIMIT 998
/* The most bytes smtp_body_encode writes per input byte, and smtp_body_finish in all. */
#define SMTP_BODY_EXPAND 5
#define SMTP_BODY_FINISH 5

struct smtp_body_enc {
	size_t col;       /* bytes on the current wire line, CRLF not counted */
	int bol;          /* at the beginning of a line */
	unsigned long long folded; /* lines folded so far (for the log) */
};

void smtp_body_init(struct smtp_body_enc *e);
/* Encodes in[0..n) into out; stops when fewer than SMTP_BODY_EXPAND bytes of room are left.
 * *used gets the input bytes consumed; returns the output bytes written. */
size_t smtp_body_encode(struct smtp_body_enc *e, const char *in, size_t n, size_t *used, char *out, size_t size);
/* Ends the message: CRLF when the last line had no LF, then ".\r\n". size >= SMTP_BODY_FINISH.
 * Returns the bytes written. */
size_t smtp_body_finish(struct smtp_body_enc *e, char *out, size_t size);
#endif
