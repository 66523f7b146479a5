/* 8-bit to 7-bit MIME conversion (see mime7.h): a recursive walk over MIME entities in memory,
 * quoted-printable for 8-bit text leaves. */
#include "mime7.h"
#include "spool.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct part_head {
	size_t cte_off, cte_len; /* the Content-Transfer-Encoding field within the header, if any */
	char type[64];       /* "text/plain" (lower case), "" when absent */
	char cte[32];        /* "8bit", "quoted-printable", ... (lower case), "" when absent */
	char boundary[72];   /* multipart only, RFC 2046: 1..70 characters */
};

static int has8(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] >= 0x80)
			return 1;
	return 0;
}

/* The end of the field that starts at off (continuation lines included), within h[0..n). */
static size_t field_end(const char *h, size_t n, size_t off)
{
	size_t i = off;
	for (;;) {
		const char *lf = memchr(h + i, '\n', n - i);
		if (!lf)
			return n;
		i = (size_t)(lf - h) + 1;
		if (i >= n || (h[i] != ' ' && h[i] != '\t'))
			return i;
	}
}

/* Copies the value of field [off, end) unfolded, lower-cased up to the first ';', into out. */
static void field_value(const char *h, size_t off, size_t end, char *out, size_t size, const char **params,
                        size_t *plen)
{
	const char *colon = memchr(h + off, ':', end - off);
	size_t o = 0;
	*params = NULL;
	*plen = 0;
	if (!colon)
		goto done;
	const char *p = colon + 1, *e = h + end;
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\n'))
		p++;
	for (; p < e && *p != ';'; p++) {
		char c = *p;
		if (c == ' ' || c == '\t' || c == '\n' || c == '(')
			break;
		if (o + 1 < size)
			out[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	while (p < e && *p != ';')
		p++;
	if (p < e) {
		*params = p + 1;
		*plen = (size_t)(e - p - 1);
	}
done:
	out[o] = 0;
}

/* The boundary parameter of a Content-Type parameter list. 0, or -1 when absent/bad. */
static int boundary_param(const char *p, size_t n, char *out, size_t size)
{
	for (size_t i = 0; i + 9 <= n; i++) {
		if (strncasecmp(p + i, "boundary", 8) != 0 || (i && p[i - 1] != ';' && p[i - 1] != ' ' && p[i - 1] != '\t' &&
		                                                p[i - 1] != '\n'))
			continue;
		size_t j = i + 8;
		while (j < n && (p[j] == ' ' || p[j] == '\t'))
			j++;
		if (j >= n || p[j] != '=')
			continue;
		j++;
		while (j < n && (p[j] == ' ' || p[j] == '\t'))
			j++;
		/* a quoted string (with its backslash pairs) up to the quote, or a token */
		size_t o = 0;
		int quoted = j < n && p[j] == '"';
		for (j += (size_t)quoted; j < n && (quoted ? p[j] != '"' : p[j] != ';' && p[j] != ' ' && p[j] != '\t' &&
		                                                  p[j] != '\n');
		     j++) {
			if (quoted && p[j] == '\\' && j + 1 < n)
				j++;
			if (o + 1 >= size)
				return -1;
			out[o++] = p[j];
		}
		out[o] = 0;
		return o ? 0 : -1;
	}
	return -1;
}

static void parse_head(const char *h, size_t n, struct part_head *ph)
{
	memset(ph, 0, sizeof *ph);
	size_t off = 0;
	while (off < n) {
		size_t end = field_end(h, n, off);
		const char *params;
		size_t plen;
		/* the two fields read, by one field_value() call */
		int ct = end - off > 13 && strncasecmp(h + off, "content-type:", 13) == 0;
		if (ct || (end - off > 26 && strncasecmp(h + off, "content-transfer-encoding:", 26) == 0)) {
			field_value(h, off, end, ct ? ph->type : ph->cte, ct ? sizeof ph->type : sizeof ph->cte, &params, &plen);
			if (!ct) {
				ph->cte_off = off;
				ph->cte_len = end - off;
			} else if (params && boundary_param(params, plen, ph->boundary, sizeof ph->boundary) < 0) {
				ph->boundary[0] = 0;
			}
		}
		off = end;
	}
}

/* The header with its Content-Transfer-Encoding field replaced by (or, absent, given) value. */
static int put_head(struct buf *out, const char *h, size_t n, const struct part_head *ph, const char *value)
{
	if (!value)
		return buf_add(out, h, n);
	/* without the field, cte_off and cte_len are 0: the second part is the whole header */
	int bad = buf_add(out, h, ph->cte_off);
	bad |= buf_add(out, h + ph->cte_off + ph->cte_len, n - ph->cte_off - ph->cte_len);
	return bad | buf_printf(out, "Content-Transfer-Encoding: %s\n", value);
}

/* Quoted-printable (RFC 2045 6.7) of body[0..n), lines of at most 76 characters. */
static int put_qp(struct buf *out, const char *b, size_t n)
{
	const char *hex = spool_b36; /* its first 16 are the hex digits */
	char line[80];
	size_t col = 0;
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];
		int nl = c == '\n';
		/* white space before a line break would be lost in transit: encode it (it may take the
		 * 76th column, as no soft break follows it) */
		int ws = nl && col && (line[col - 1] == ' ' || line[col - 1] == '\t');
		if (!nl || ws) {
			if (ws)
				c = (unsigned char)line[--col];
			size_t k = !ws && ((c >= 33 && c <= 126 && c != '=') || c == ' ' || c == '\t') ? 1 : 3;
			if (col + k > 75 + (size_t)ws) { /* a soft line break: "=" ends the line at 76 at most */
				bad |= buf_add(out, line, col);
				bad |= buf_add(out, "=\n", 2);
				col = 0;
			}
			if (k == 1) {
				line[col++] = (char)c;
			} else {
				line[col++] = '=';
				line[col++] = hex[c >> 4];
				line[col++] = hex[c & 15];
			}
		}
		if (nl) {
			bad |= buf_add(out, line, col);
			bad |= buf_addc(out, '\n');
			col = 0;
		}
	}
	if (col) {
		/* no final line break: keep it so, but protect trailing white space with a soft break */
		bad |= buf_add(out, line, col);
		if (line[col - 1] == ' ' || line[col - 1] == '\t')
			bad |= buf_add(out, "=\n", 2);
	}
	return bad;
}

static int entity(const char *p, size_t n, const char *deftype, int depth, struct buf *out, char *why, size_t whylen);

/* A multipart body: preamble, parts between "--boundary" lines, the closing "--boundary--" and
 * the epilogue; each part converted on its own. */
static int multipart(const char *b, size_t n, const struct part_head *ph, int depth, struct buf *out, char *why,
                     size_t whylen)
{
	const char *deftype = strcmp(ph->type, "multipart/digest") ? "text/plain" : "message/rfc822";
	size_t blen = strlen(ph->boundary), i = 0, start = 0;
	int in_part = 0, closed = 0;
	while (i <= n && !closed) {
		const char *lf = i < n ? memchr(b + i, '\n', n - i) : NULL;
		size_t next = lf ? (size_t)(lf - b) + 1 : n;
		int delim = next - i >= blen + 2 && b[i] == '-' && b[i + 1] == '-' && memcmp(b + i + 2, ph->boundary, blen) == 0;
		if (delim && i + 2 + blen < next) {
			/* after the boundary: the end of the line, "--", or white space (RFC 2046 5.1.1) */
			char c = b[i + 2 + blen];
			delim = c == '\n' || c == ' ' || c == '\t' || c == '-';
		}
		if (delim || i == n) {
			if (in_part) {
				/* the part ends before the line break that precedes the delimiter (RFC 2046) */
				size_t end = i > start && i <= n && b[i - 1] == '\n' && i != n ? i - 1 : i;
				int r = entity(b + start, end - start, deftype, depth + 1, out, why, whylen);
				if (r)
					return r;
				if (end != i && buf_addc(out, '\n'))
					return MIME7_NOMEM;
			} else if (buf_add(out, b + start, i - start)) {
				return MIME7_NOMEM;
			}
			if (i == n)
				return 0;
			closed = next - i >= blen + 4 && b[i + 2 + blen] == '-' && b[i + 3 + blen] == '-';
			if (buf_add(out, b + i, next - i))
				return MIME7_NOMEM;
			in_part = 1;
			start = next;
		}
		i = next;
	}
	/* the epilogue, copied as it is */
	if (start < n && buf_add(out, b + start, n - start))
		return MIME7_NOMEM;
	return 0;
}

static int entity(const char *p, size_t n, const char *deftype, int depth, struct buf *out, char *why, size_t whylen)
{
	/* the header ends at the first empty line; a part may start with it (no header at all) */
	size_t hlen;
	if (n && p[0] == '\n') {
		hlen = 0;
	} else {
		const char *e = NULL;
		for (size_t i = 0; i + 1 < n; i++)
			if (p[i] == '\n' && p[i + 1] == '\n') {
				e = p + i + 1;
				break;
			}
		hlen = e ? (size_t)(e - p) : n;
	}
	const char *body = p + hlen;
	size_t blen = n - hlen;
	struct part_head ph;
	parse_head(p, hlen, &ph);
	const char *type = ph.type[0] ? ph.type : deftype;
	if (!has8(body, blen))
		return buf_add(out, p, n) ? MIME7_NOMEM : 0;
	/* why it cannot be converted: a format of the type (and the encoding), or of nothing */
	_Static_assert(MIME7_DEPTH_MAX == 16, "the text below");
	const char *cannot = "MIME parts nested deeper than 16";
	if (depth >= MIME7_DEPTH_MAX)
		goto cannot;
	cannot = "a %s part is declared binary";
	if (!strcmp(ph.cte, "binary"))
		goto cannot;
	cannot = "a %s part declared %s holds 8-bit bytes";
	if (!strcmp(ph.cte, "quoted-printable") || !strcmp(ph.cte, "base64"))
		goto cannot;
	int multi = !strncmp(type, "multipart/", 10), msg = !strcmp(type, "message/rfc822") || !strcmp(type, "message/global");
	cannot = "a %s part without a boundary holds 8-bit bytes";
	if (multi && !ph.boundary[0])
		goto cannot;
	cannot = "a %s part holds 8-bit data that is not text";
	if (!multi && !msg && strncmp(type, "text/", 5) != 0)
		goto cannot;
	/* what changes from 8bit: the label of a container, the encoding of a text leaf */
	if (put_head(out, p, hlen, &ph, multi || msg ? (ph.cte[0] ? "7bit" : NULL) : "quoted-printable"))
		return MIME7_NOMEM;
	if (multi)
		return multipart(body, blen, &ph, depth, out, why, whylen);
	if (msg) {
		/* the body is itself a message: its header, and its parts */
		size_t sep = blen && body[0] == '\n' ? 1 : 0;
		if (sep && buf_addc(out, '\n'))
			return MIME7_NOMEM;
		return entity(body + sep, blen - sep, "text/plain", depth + 1, out, why, whylen);
	}
	return put_qp(out, body, blen) ? MIME7_NOMEM : 0;
cannot:
	snprintf(why, whylen, cannot, type, ph.cte); /* a format without the second %s ignores ph.cte */
	return MIME7_CANNOT;
}

int mime7_convert(const char *msg, size_t n, struct buf *out, char *why, size_t whylen)
{
	if (whylen)
		why[0] = 0;
	return entity(msg, n, "text/plain", 0, out, why, whylen);
}
