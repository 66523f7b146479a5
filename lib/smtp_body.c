/* LF to CRLF, dot-stuffing and long-line folding of a message on its way out (see smtp_body.h). */
#include "smtp_body.h"

void smtp_body_init(struct smtp_body_enc *e)
{
	e->col = 0;
	e->bol = 1;
	e->folded = 0;
}

size_t smtp_body_encode(struct smtp_body_enc *e, const char *in, size_t n, size_t *used, char *out, size_t size)
{
	size_t o = 0, i = 0;
	for (; i < n && size - o >= SMTP_BODY_EXPAND; i++) {
		char c = in[i];
		if (c == '\n') {
			out[o++] = '\r';
			out[o++] = '\n';
			e->col = 0;
			e->bol = 1;
			continue;
		}
		if (e->col >= SMTP_LINE_LIMIT) {
			/* The continuation starts with a space, so it never needs dot-stuffing. */
			out[o++] = '\r';
			out[o++] = '\n';
			out[o++] = ' ';
			e->col = 1;
			e->folded++;
		} else if (e->bol && c == '.') {
			out[o++] = '.';
			e->col++;
		}
		out[o++] = c;
		e->col++;
		e->bol = 0;
	}
	*used = i;
	return o;
}

size_t smtp_body_finish(struct smtp_body_enc *e, char *out, size_t size)
{
	size_t o = 0;
	if (size < SMTP_BODY_FINISH)
		return 0;
	if (!e->bol) {
		out[o++] = '\r';
		out[o++] = '\n';
	}
	out[o++] = '.';
	out[o++] = '\r';
	out[o++] = '\n';
	e->bol = 1;
	e->col = 0;
	return o;
}
