/* Unit tests of input normalisation, header reading, field splitting and the rewrites. */
#include "header.h"
#include "unit.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static size_t norm(int dot_end, const char *in, size_t n, char *out, struct msgin *m)
{
	msgin_init(m, dot_end);
	size_t o = 0;
	/* one byte at a time, so every state crosses a chunk boundary */
	for (size_t i = 0; i < n && !m->done; i++)
		o += msgin_feed(m, in + i, 1, out + o);
	o += msgin_eof(m, out + o);
	out[o] = 0;
	return o;
}

TEST(msgin_line_endings)
{
	char out[256];
	struct msgin m;
	CHECK_INT(norm(0, "a\r\nb\nc\rd\r", 9, out, &m), 8);
	CHECK_STR(out, "a\nb\nc\nd\n");
	CHECK(m.saw_bare_cr);
	norm(0, "a\r\n", 3, out, &m);
	CHECK(!m.saw_bare_cr);
	static const char nul[] = "x\0y\n";
	CHECK_INT(norm(0, nul, 4, out, &m), 4);
	CHECK(memcmp(out, nul, 4) == 0);
	CHECK_INT(m.nul_bytes, 1);
}

TEST(msgin_dot_terminator)
{
	char out[256];
	struct msgin m;
	norm(1, "a\n.\nb\n", 6, out, &m);
	CHECK_STR(out, "a\n");
	CHECK(m.done);
	norm(1, "a\r\n.\r\nb\n", 8, out, &m);
	CHECK_STR(out, "a\n");
	norm(1, ".\n", 2, out, &m);
	CHECK_STR(out, "");
	norm(1, "a\n..\n.b\n", 8, out, &m);
	CHECK_STR(out, "a\n..\n.b\n"); /* no unstuffing on stdin, as sendmail */
	CHECK(!m.done);
	norm(1, "a\n.", 3, out, &m);
	CHECK_STR(out, "a\n");
	CHECK(m.done);
	norm(0, "a\n.\nb\n", 6, out, &m);
	CHECK_STR(out, "a\n.\nb\n"); /* -i */
}

/* The byte-at-a-time normalisation msgin_feed's runs of plain bytes must match: CR LF and a
 * lone CR become LF, a "." line ends the input where dot_end is set. */
static size_t ref_norm(int dot_end, const char *in, size_t n, char *out, int *done, int *bare, long long *nuls)
{
	int cr = 0, dot = 0, bol = 1;
	size_t o = 0;
	*done = *bare = 0;
	*nuls = 0;
	for (size_t i = 0; i <= n && !*done; i++) {
		int eof = i == n;
		char c = eof ? '\n' : in[i];
		if (eof && !cr) {
			if (dot)
				*done = 1;
			break;
		}
		char seq[2];
		int k = 0;
		if (cr) {
			cr = 0;
			seq[k++] = '\n';
			if (eof || c != '\n')
				*bare = 1;
			if (!eof && c != '\n' && c != '\r')
				seq[k++] = c;
			if (!eof && c == '\r')
				cr = 1;
		} else if (c == '\r') {
			cr = 1;
		} else {
			seq[k++] = c;
		}
		for (int q = 0; q < k && !*done; q++) {
			char d = seq[q];
			if (dot) {
				dot = 0;
				if (d == '\n') {
					*done = 1;
					break;
				}
				out[o++] = '.';
			} else if (bol && dot_end && d == '.') {
				dot = 1;
				bol = 0;
				continue;
			}
			if (d == 0)
				++*nuls;
			out[o++] = d;
			bol = d == '\n';
		}
		if (eof) {
			if (dot)
				*done = 1;
			break;
		}
	}
	return o;
}

TEST(msgin_runs_match_byte_at_a_time)
{
	static const char alpha[] = "ab.\n\r\n..\0";
	unsigned seed = 12345;
	for (int round = 0; round < 20000; round++) {
		char in[64], out[256], want[256];
		size_t n = (size_t)(round % 40);
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			in[i] = alpha[(seed >> 16) % (sizeof alpha - 1)];
		}
		int dot_end = round & 1, done, bare;
		long long nuls;
		size_t w = ref_norm(dot_end, in, n, want, &done, &bare, &nuls);
		size_t chunk = 1 + (size_t)(round / 2 % 9);
		struct msgin m;
		msgin_init(&m, dot_end);
		size_t o = 0;
		for (size_t i = 0; i < n && !m.done; i += chunk)
			o += msgin_feed(&m, in + i, n - i < chunk ? n - i : chunk, out + o);
		o += msgin_eof(&m, out + o);
		CHECK_INT(o, w);
		CHECK(memcmp(out, want, w) == 0);
		CHECK_INT(m.done, done);
		CHECK_INT(m.saw_bare_cr, bare);
		CHECK_INT(m.nul_bytes, nuls);
	}
}

static void read_all(struct hdr_reader *r, const char *in, size_t chunk)
{
	size_t n = strlen(in), i = 0;
	while (i < n && !r->body) {
		size_t c = n - i < chunk ? n - i : chunk;
		ssize_t used = hdr_reader_feed(r, in + i, c);
		CHECK(used >= 0);
		i += (size_t)used;
		if (r->body)
			buf_add(&r->spill, in + i, n - i);
	}
	hdr_reader_eof(r);
}

TEST(hdr_reader_splits_header_and_body)
{
	for (size_t chunk = 1; chunk < 40; chunk += 7) {
		struct hdr_reader r;
		hdr_reader_init(&r, 4096);
		read_all(&r, "Subject: hi\nTo: a,\n b\n\nbody\n", chunk);
		CHECK_STR(r.block.p, "Subject: hi\nTo: a,\n b\n");
		CHECK_STR(r.spill.p, "body\n");
		hdr_reader_free(&r);
	}
	struct hdr_reader r;
	hdr_reader_init(&r, 4096);
	read_all(&r, "Subject: hi\nthis is not a header\nmore\n", 64);
	CHECK_STR(r.block.p, "Subject: hi\n");
	CHECK_STR(r.spill.p, "this is not a header\nmore\n");
	hdr_reader_free(&r);
	hdr_reader_init(&r, 4096);
	read_all(&r, "From root Sat Nov 21 10:00:00 2026\nSubject: x", 64);
	CHECK_STR(r.block.p, "Subject: x\n");
	CHECK(r.spill.len == 0);
	hdr_reader_free(&r);
	hdr_reader_init(&r, 4096);
	read_all(&r, "From : obsolete@example.org\n\nb\n", 64); /* a field, not an mbox line */
	CHECK_STR(r.block.p, "From : obsolete@example.org\n");
	hdr_reader_free(&r);
	hdr_reader_init(&r, 4096);
	read_all(&r, " leading space\n", 64);
	CHECK(r.block.len == 0);
	CHECK_STR(r.spill.p, " leading space\n");
	hdr_reader_free(&r);
	hdr_reader_init(&r, 16);
	CHECK(hdr_reader_feed(&r, "Subject: 0123456789\n", 20) < 0);
	hdr_reader_free(&r);
	/* a last line without LF: a field or continuation gets one, anything else is body (an
	 * "From " line too: it is not taken for an mbox separator there) */
	static const char *const eof_cases[][3] = {
	    {"From root Sat Nov 21 10:00:00 2026", "", "From root Sat Nov 21 10:00:00 2026"},
	    {"Subject: a\n b", "Subject: a\n b\n", ""},
	    {"Subject: a\nnot a header", "Subject: a\n", "not a header"},
	    {" x", "", " x"},
	    {"From x\nFrom y", "", "From y"},
	};
	for (size_t i = 0; i < ARRAY_LEN(eof_cases); i++) {
		hdr_reader_init(&r, 4096);
		read_all(&r, eof_cases[i][0], 64);
		CHECK(r.body == (eof_cases[i][2][0] != 0));
		CHECK_STR(r.block.p ? r.block.p : "", eof_cases[i][1]);
		CHECK_STR(r.spill.p ? r.spill.p : "", eof_cases[i][2]);
		hdr_reader_free(&r);
	}
}

TEST(hdr_split_find_unfold)
{
	const char *b = "From: a\nTo: x,\n\ty\nSubject : s\nBcc: z\n";
	struct hdr h;
	char err[128];
	CHECK(hdr_split(&h, b, strlen(b), err, sizeof err) == 0);
	CHECK_INT(h.n, 4);
	CHECK_INT(hdr_find(&h, "to", 0), 1);
	CHECK_INT(hdr_find(&h, "subject", 0), 2);
	CHECK_INT(hdr_find(&h, "Bcc", 0), 3);
	CHECK_INT(hdr_find(&h, "Cc", 0), -1);
	size_t n;
	const char *v = hdr_value(&h, 1, &n);
	struct buf u;
	buf_init(&u, 100);
	CHECK(hdr_unfold(v, n, &u) == 0);
	CHECK_STR(u.p, "x,\ty");
	buf_free(&u);
	hdr_free(&h);
	CHECK(hdr_split(&h, " cont\n", 6, err, sizeof err) < 0 && strstr(err, "continuation"));
	CHECK(hdr_split(&h, "no colon\n", 9, err, sizeof err) < 0 && strstr(err, "line 1"));
	hdr_free(&h);
}

static const char *qualify(const char *field, struct buf *out)
{
	buf_reset(out);
	const char *colon = strchr(field, ':');
	size_t nl = (size_t)(colon - field);
	hdr_qualify_field(field, strlen(field), nl, "router.lan", out);
	return out->p;
}

TEST(hdr_qualify_bare_addresses)
{
	struct buf out;
	buf_init(&out, 4096);
	CHECK_STR(qualify("From: root (Cron Daemon)\n", &out), "From: root@router.lan (Cron Daemon)\n");
	CHECK_STR(qualify("To: root, admin@example.com,\n Bob <bob>\n", &out),
	          "To: root@router.lan, admin@example.com,\n Bob <bob@router.lan>\n");
	CHECK_STR(qualify("Cc: list: a, b@x.org;\n", &out), "Cc: list: a@router.lan, b@x.org;\n");
	CHECK_STR(qualify("To: a@b.c\n", &out), "To: a@b.c\n");
	/* a value that does not parse is left exactly as it was */
	CHECK_STR(qualify("To: john doe <\n", &out), "To: john doe <\n");
	buf_free(&out);
	CHECK(hdr_is_addr_field("Reply-To", 8));
	CHECK(hdr_is_addr_field("resent-to", 9));
	CHECK(!hdr_is_addr_field("Subject", 7));
	CHECK(!hdr_is_addr_field("Bcc", 3));
}

TEST(hdr_date_format)
{
	char d[64];
	setenv("TZ", "UTC0", 1);
	CHECK(hdr_date(1795246800, d, sizeof d) == 0);
	CHECK_STR(d, "Sat, 21 Nov 2026 07:40:00 +0000");
}

TEST(header_hops_counted_in_the_header_only)
{
	char path[512];
	snprintf(path, sizeof path, "%s/hops", unit_tmpdir());
	const char text[] = "ENVELOPE\nReceived: from a\n\tby b\nRECEIVED: x\nX-Received: no\nSubject: s\n\nReceived: body\n";
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
	CHECK_INT(hdr_count_hops(fd, 9, sizeof text - 10), 2);  /* folded line and body not counted */
	CHECK_INT(hdr_count_hops(fd, 9, 20), 1);                /* the size bounds the scan */
	CHECK_INT((int)lseek(fd, 0, SEEK_CUR), (int)(sizeof text - 1)); /* pread: the offset is untouched */
	close(fd);
}
