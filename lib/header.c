/* Header input and rewriting for submit (see header.h). */
#include "header.h"
#include "clock.h"
#include "addr.h"
#include "util.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

void msgin_init(struct msgin *m, int dot_end)
{
	memset(m, 0, sizeof *m);
	m->dot_end = dot_end;
	m->bol = 1;
}

/* Second stage: LF-only text; finds the "." line. */
static size_t emit(struct msgin *m, char c, char *out)
{
	size_t k = 0;
	if (m->done)
		return 0;
	if (m->pending_dot) {
		m->pending_dot = 0;
		if (c == '\n') {
			m->done = 1;
			return 0;
		}
		out[k++] = '.';
	} else if (m->bol && m->dot_end && c == '.') {
		m->pending_dot = 1;
		m->bol = 0;
		return 0;
	}
	if (c == 0)
		m->nul_bytes++;
	out[k++] = c;
	m->bol = c == '\n';
	return k;
}

/* How many bytes of p[0..n) hold no CR and no NUL (and, with lf, no LF): eight at a time while
 * no word holds one (a word w holds a zero byte where (w - 0x01..01) & ~w & 0x80..80 is not 0). */
static size_t plain_len(const char *p, size_t n, int lf)
{
	const uint64_t ones = 0x0101010101010101u, highs = ones << 7;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w, x, y;
		memcpy(&w, p + i, 8);
		x = w ^ (ones * '\r');
		y = lf ? w ^ (ones * '\n') : ~(uint64_t)0;
		if ((((w - ones) & ~w) | ((x - ones) & ~x) | ((y - ones) & ~y)) & highs)
			break;
	}
	while (i < n && p[i] != '\r' && p[i] && !(lf && p[i] == '\n'))
		i++;
	return i;
}

size_t msgin_feed(struct msgin *m, const char *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n && !m->done; i++) {
		/* a run of plain bytes (no CR, no NUL, no "." at the start of a line where a "." line
		 * ends the input) is copied as it is: emit() would do nothing else with them, byte by
		 * byte; the run ends after a line break where a "." line may follow */
		if (!m->pending_cr && !m->pending_dot && !(m->bol && m->dot_end && in[i] == '.')) {
			size_t j = i + plain_len(in + i, n - i, m->dot_end);
			if (m->dot_end && j < n && in[j] == '\n')
				j++;
			if (j > i) {
				memcpy(out + o, in + i, j - i);
				o += j - i;
				m->bol = in[j - 1] == '\n';
				i = j - 1;
				continue;
			}
		}
		char c = in[i];
		if (m->pending_cr) {
			m->pending_cr = 0;
			o += emit(m, '\n', out + o);
			if (c == '\n')
				continue;
			m->saw_bare_cr = 1;
		}
		if (c == '\r') {
			m->pending_cr = 1;
			continue;
		}
		o += emit(m, c, out + o);
	}
	return o;
}

size_t msgin_eof(struct msgin *m, char *out)
{
	size_t o = 0;
	if (m->pending_cr) {
		m->pending_cr = 0;
		m->saw_bare_cr = 1;
		o += emit(m, '\n', out);
	}
	if (m->pending_dot) {
		/* "." as the very last line without its LF still ends the input, as in sendmail */
		m->pending_dot = 0;
		m->done = 1;
	}
	return o;
}

void hdr_reader_init(struct hdr_reader *r, size_t max)
{
	buf_init(&r->block, max);
	buf_init(&r->spill, max + 1);
	r->line_start = 0;
	r->body = 0;
	r->first = 1;
}

void hdr_reader_free(struct hdr_reader *r)
{
	buf_free(&r->block);
	buf_free(&r->spill);
}

/* Length of the field name at the start of line p[0..n), or 0 when the line is not a field:
 * ftext (33..126 except ':'), optional white space (obsolete syntax), then ':'. */
static size_t field_name_len(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && (unsigned char)p[i] > 32 && (unsigned char)p[i] < 127 && p[i] != ':')
		i++;
	size_t name = i;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return (name && i < n && p[i] == ':') ? name : 0;
}

/* Judges the line that starts at line_start and ends the block (LF included when complete).
 * Returns 0 when it stays a header line, 1 when the header section ended with it. */
static int judge_line(struct hdr_reader *r)
{
	const char *line = r->block.p + r->line_start;
	size_t n = r->block.len - r->line_start;
	int first = r->first;
	r->first = 0;
	if (n == 1 && line[0] == '\n') {
		r->block.len = r->line_start;
		r->block.p[r->block.len] = 0;
		return 1;
	}
	if (first && n >= 5 && memcmp(line, "From ", 5) == 0 && !field_name_len(line, n)) {
		r->block.len = r->line_start;
		r->block.p[r->block.len] = 0;
		r->first = 1; /* the next line is the real first one */
		return 0;
	}
	if ((line[0] == ' ' || line[0] == '\t') && r->line_start > 0)
		return 0;
	if (field_name_len(line, n))
		return 0;
	/* not a header line: the body starts here */
	if (buf_add(&r->spill, line, n) < 0)
		return -1;
	r->block.len = r->line_start;
	r->block.p[r->block.len] = 0;
	return 1;
}

ssize_t hdr_reader_feed(struct hdr_reader *r, const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && !r->body) {
		const char *lf = memchr(p + i, '\n', n - i);
		size_t take = lf ? (size_t)(lf - (p + i)) + 1 : n - i;
		if (buf_add(&r->block, p + i, take) < 0)
			return -1;
		i += take;
		if (!lf)
			break;
		int j = judge_line(r);
		if (j < 0)
			return -1;
		if (j)
			r->body = 1;
		else
			r->line_start = r->block.len;
	}
	return (ssize_t)i;
}

int hdr_reader_eof(struct hdr_reader *r)
{
	if (r->body || r->block.len == r->line_start)
		return 0;
	/* a last line without LF, judged as one with it (it cannot be the empty line), except that
	 * it is never taken for an mbox "From " line: it stays a field (given its LF) or goes to
	 * the body */
	r->first = 0;
	int j = judge_line(r);
	if (j)
		return j < 0 ? -1 : (r->body = 1, 0);
	return buf_addc(&r->block, '\n');
}

/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int say(char *err, size_t errlen, const char *fmt, size_t a)
{
	snprintf(err, errlen, fmt, a);
	return -1;
}

int hdr_split(struct hdr *h, const char *p, size_t len, char *err, size_t errlen)
{
	h->p = p;
	h->len = len;
	h->f = NULL;
	h->n = 0;
	size_t cap = 0, pos = 0, line = 1;
	while (pos < len) {
		const char *lf = memchr(p + pos, '\n', len - pos);
		size_t end = lf ? (size_t)(lf - p) + 1 : len;
		if (p[pos] == ' ' || p[pos] == '\t') {
			if (!h->n)
				return say(err, errlen, "header line %zu: continuation line before any field", line);
			h->f[h->n - 1].len = end - h->f[h->n - 1].off;
		} else {
			size_t nl = field_name_len(p + pos, end - pos);
			if (!nl)
				return say(err, errlen, "header line %zu: not a header field", line);
			if (h->n == cap) {
				size_t ncap = cap ? cap * 2 : 32;
				struct hdr_field *f = realloc(h->f, ncap * sizeof *f);
				if (!f)
					return say(err, errlen, "header: out of memory at line %zu", line);
				h->f = f;
				cap = ncap;
			}
			struct hdr_field *f = &h->f[h->n++];
			f->off = pos;
			f->len = end - pos;
			f->name_len = nl;
			f->val_off = pos + (size_t)((const char *)memchr(p + pos, ':', end - pos) - (p + pos)) + 1;
		}
		pos = end;
		line++;
	}
	return 0;
}

void hdr_free(struct hdr *h)
{
	free(h->f);
	h->f = NULL;
	h->n = 0;
}

int hdr_is(const struct hdr *h, size_t i, const char *name)
{
	size_t n = strlen(name);
	return h->f[i].name_len == n && str_ncaseeq(h->p + h->f[i].off, name, n);
}

long hdr_find(const struct hdr *h, const char *name, size_t from)
{
	for (size_t i = from; i < h->n; i++)
		if (hdr_is(h, i, name))
			return (long)i;
	return -1;
}

const char *hdr_value(const struct hdr *h, size_t i, size_t *len)
{
	const struct hdr_field *f = &h->f[i];
	size_t end = f->off + f->len;
	if (end > f->val_off && h->p[end - 1] == '\n')
		end--;
	*len = end - f->val_off;
	return h->p + f->val_off;
}

int hdr_unfold(const char *v, size_t n, struct buf *out)
{
	size_t a = 0, b = n;
	while (a < b && (v[a] == ' ' || v[a] == '\t' || v[a] == '\n'))
		a++;
	while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t' || v[b - 1] == '\n'))
		b--;
	for (size_t i = a; i < b; i++)
		if (v[i] != '\n' && buf_addc(out, v[i]) < 0)
			return -1;
	return 0;
}

int hdr_is_addr_field(const char *name, size_t len)
{
	/* one string, each name NUL-ended, "" ends it */
	static const char names[] = "From\0To\0Cc\0Reply-To\0Sender\0";
	if (len > 7 && str_ncaseeq(name, "Resent-", 7)) {
		name += 7;
		len -= 7;
	}
	for (const char *k = names; *k; k += strlen(k) + 1)
		if (strlen(k) == len && str_ncaseeq(name, k, len))
			return 1;
	return 0;
}

struct qualify_ctx {
	size_t n;
	int overflow;
	size_t ins[256]; /* where to insert "@domain", relative to the value */
};

static int note_bare(void *vctx, const struct addr *a)
{
	struct qualify_ctx *q = vctx;
	if (a->domain[0])
		return 0;
	if (q->n == ARRAY_LEN(q->ins)) {
		q->overflow = 1;
		return 1;
	}
	q->ins[q->n++] = a->local_end;
	return 0;
}

int hdr_qualify_field(const char *field, size_t len, size_t name_len, const char *domain, struct buf *out)
{
	/* the colon is there: a field of hdr_split has one after its name */
	size_t voff = (size_t)((const char *)memchr(field + name_len, ':', len - name_len) - field) + 1;
	size_t vlen = len - voff;
	if (vlen && field[len - 1] == '\n')
		vlen--;
	struct qualify_ctx q;
	q.n = 0; /* ins[] is written before it is read */
	q.overflow = 0;
	char err[128];
	if (addr_parse_list(field + voff, vlen, note_bare, &q, err, sizeof err) < 0 || q.overflow)
		q.n = 0; /* copied unchanged */
	size_t done = 0;
	for (size_t i = 0; i < q.n; i++) {
		size_t at = voff + q.ins[i];
		if (buf_add(out, field + done, at - done) < 0 || buf_addc(out, '@') < 0 || buf_adds(out, domain) < 0)
			return -1;
		done = at;
	}
	return buf_add(out, field + done, len - done) < 0 ? -1 : 0;
}

int hdr_date(time_t t, char *out, size_t size)
{
	struct tm tm;
	if (!civil_time(&t, &tm))
		return -1;
	long off = tm.tm_gmtoff / 60;
	char sign = off < 0 ? '-' : '+';
	if (off < 0)
		off = -off;
	return str_fmt(out, size, "%.3s, %d %.3s %d %02d:%02d:%02d %c%02ld%02ld", clock_days + 3 * tm.tm_wday, tm.tm_mday,
	               clock_months + 3 * tm.tm_mon, tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, sign, off / 60,
	               off % 60);
}

int hdr_scan_file(int fd, off_t off, long long size, hdr_line_fn *fn, void *ctx)
{
	char buf[8192], line[HDR_SCAN_LINE_MAX];
	size_t ln = 0;
	int cut = 0;
	while (size > 0) {
		ssize_t got = pread(fd, buf, size > (long long)sizeof buf ? sizeof buf : (size_t)size, off);
		if (got < 0)
			return -1;
		if (got == 0)
			return 0;
		off += got;
		size -= got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				if (ln < sizeof line - 1)
					line[ln++] = buf[i];
				else
					cut = 1;
				continue;
			}
			if (ln == 0)
				return 0; /* the empty line: end of the header */
			line[ln] = 0;
			fn(ctx, line, ln, cut);
			ln = 0;
			cut = 0;
		}
	}
	return 0;
}

int hdr_is_received(const char *line, size_t len)
{
	return len >= 9 && !strncasecmp(line, "received:", 9);
}

static void count_hop(void *ctx, char *line, size_t len, int cut)
{
	(void)cut;
	if (hdr_is_received(line, len))
		++*(long *)ctx;
}

long hdr_count_hops(int fd, off_t off, long long size)
{
	long n = 0;
	return hdr_scan_file(fd, off, size, count_hop, &n) < 0 ? -1 : n;
}

long hdr_count_hops_mem(const char *p, size_t len, int *whole)
{
	long n = 0;
	*whole = 0;
	for (const char *end = p + len, *nl; (nl = memchr(p, '\n', (size_t)(end - p))); p = nl + 1) {
		if (nl == p) {
			*whole = 1; /* the empty line */
			break;
		}
		n += hdr_is_received(p, (size_t)(nl - p));
	}
	return n;
}
