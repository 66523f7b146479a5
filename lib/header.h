/* The message header as submit sees it: input normalisation (CRLF, LF and bare CR to LF; the
 * sendmail "." end-of-input line), reading the header block with a size limit, splitting it
 * into fields, unfolding, and the rewrites submit makes (qualifying bare addresses in address
 * fields, the Date and Received lines). docs/submit.md says why each rule is what it is.
 *
 * Contract: everything works on explicit lengths (a NUL byte is data, never an end), never
 * writes past the sizes given, and reports a limit that was hit instead of truncating. */
#ifndef SPOOLBOX_HEADER_H
#define SPOOLBOX_HEADER_H
#include "util.h"
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define HDR_BLOCK_MAX (1u << 20) /* largest header section accepted (bytes) */
#define HDR_NAME_MAX 128         /* longest field name we look up */

/* ---- input normalisation ---- */

/* Turns CRLF, bare LF and bare CR into LF; with dot_end, a line holding only "." ends the input
 * (it is not part of the message) and `done` is set; everything after it is ignored. */
struct msgin {
	int dot_end;
	int pending_cr, pending_dot, bol, done;
	int saw_bare_cr;      /* a CR not followed by LF was turned into a line break */
	long long nul_bytes;  /* NUL bytes seen (stored as they are) */
};
void msgin_init(struct msgin *m, int dot_end);
/* Normalises in[0..n) into out, which must hold n + 2 bytes; returns the bytes written. */
size_t msgin_feed(struct msgin *m, const char *in, size_t n, char *out);
/* End of input: flushes a pending CR (as a line break). out must hold 2 bytes. */
size_t msgin_eof(struct msgin *m, char *out);

/* ---- reading the header block ---- */

/* Collects normalised input up to the end of the header section: the empty line (dropped: the
 * writer puts it back), or the first line that is neither a field nor a continuation (it is
 * kept in `spill` and belongs to the body). A first line "From ..." (an mbox separator some
 * scripts pipe in) is dropped. */
struct hdr_reader {
	struct buf block;  /* the header fields, each ending in LF */
	struct buf spill;  /* body bytes that arrived with the end of the header */
	size_t line_start;
	int body;          /* the header section is complete */
	int first;         /* still on the first line */
};
void hdr_reader_init(struct hdr_reader *r, size_t max);
void hdr_reader_free(struct hdr_reader *r);
/* Takes bytes; returns how many were used (the rest are body bytes and r->body is set), or -1
 * when the header section exceeds the maximum. */
ssize_t hdr_reader_feed(struct hdr_reader *r, const char *p, size_t n);
/* End of input: a last field without LF gets one. Returns 0 or -1 (too large). */
int hdr_reader_eof(struct hdr_reader *r);

/* ---- fields ---- */

struct hdr_field {
	size_t off, len;  /* the whole field in the block: name, colon, value, continuation lines, LF */
	size_t name_len;  /* the field name (without trailing white space and colon) */
	size_t val_off;   /* offset of the value (just after the colon) */
};
struct hdr {
	const char *p;
	size_t len;
	struct hdr_field *f;
	size_t n;
};
/* Splits a header block (as hdr_reader made it) into fields. Returns 0, or -1 (out of memory,
 * or text that is not a header block) with why in err. */
int hdr_split(struct hdr *h, const char *p, size_t len, char *err, size_t errlen);
void hdr_free(struct hdr *h);
/* 1 when field i is called name (case-insensitive). */
int hdr_is(const struct hdr *h, size_t i, const char *name);
/* Index of the first field called name at or after `from`, or -1. */
long hdr_find(const struct hdr *h, const char *name, size_t from);
/* The raw value of field i (folding kept, final LF excluded). */
const char *hdr_value(const struct hdr *h, size_t i, size_t *len);
/* Appends the value with folding removed (RFC 5322 2.2.3) and surrounding white space trimmed. */
int hdr_unfold(const char *v, size_t n, struct buf *out);

/* ---- rewriting ---- */

/* 1 for the fields holding address lists that submit qualifies: From, To, Cc, Reply-To, Sender
 * and their Resent- forms. */
int hdr_is_addr_field(const char *name, size_t len);
/* Appends field (name ':' value LF, as hdr_split found it: the ':' MUST be there) to out with
 * "@domain" (MUST NOT be empty) inserted after every unqualified address of its list. A value
 * that does not parse is copied unchanged. Returns 0, or -1 when out is full. */
int hdr_qualify_field(const char *field, size_t len, size_t name_len, const char *domain, struct buf *out);
/* RFC 5322 date-time of t in local time: "Sat, 21 Nov 2026 10:20:00 +0100". */
int hdr_date(time_t t, char *out, size_t size);

/* ---- a queued message's header, for the transport agents ---- */

#define HDR_SCAN_LINE_MAX 1024  /* longer lines reach the callback cut, with cut = 1 */
#define HOPS_DEFAULT_LIMIT 50   /* Postfix's hopcount_limit */

/* Calls fn for every line of the header section of the message in fd (its first byte at off,
 * size bytes at most), without the LF, stopping at the empty line. Reads with pread: the file
 * offset is left alone. Returns 0, or -1 when reading failed. */
typedef void hdr_line_fn(void *ctx, char *line, size_t len, int cut);
int hdr_scan_file(int fd, off_t off, long long size, hdr_line_fn *fn, void *ctx);
/* 1 when line is the first line of a Received: field (the hop count of RFC 5321 6.3). */
int hdr_is_received(const char *line, size_t len);
/* The number of Received: fields of the message in fd, or -1 when reading failed. */
long hdr_count_hops(int fd, off_t off, long long size);
/* The same over the first len bytes of a message already in memory; *whole is set to 1 when
 * its header ended within them (else the count is of the part seen). */
long hdr_count_hops_mem(const char *p, size_t len, int *whole);
#endif
