/* Fuzz target: input normalisation, the header reader, field splitting and the qualifying
 * rewrite of address fields, on arbitrary input split at an input-chosen chunk size. */
#include "header.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = 1 + data[0] % 17;
	int dot = data[0] & 0x80;
	const char *in = (const char *)data + 1;
	size--;
	struct msgin m;
	struct hdr_reader r;
	msgin_init(&m, dot);
	hdr_reader_init(&r, 4096);
	char *norm = malloc(chunk + 2);
	for (size_t i = 0; i < size && !m.done; i += chunk) {
		size_t c = size - i < chunk ? size - i : chunk;
		size_t o = msgin_feed(&m, in + i, c, norm);
		if (!r.body && hdr_reader_feed(&r, norm, o) < 0)
			break;
	}
	size_t o = msgin_eof(&m, norm);
	if (!r.body)
		hdr_reader_feed(&r, norm, o);
	hdr_reader_eof(&r);
	free(norm);
	struct hdr h;
	char err[128];
	if (hdr_split(&h, r.block.p ? r.block.p : "", r.block.len, err, sizeof err) == 0) {
		struct buf out;
		buf_init(&out, 1 << 20);
		for (size_t i = 0; i < h.n; i++) {
			size_t vl;
			const char *v = hdr_value(&h, i, &vl);
			hdr_unfold(v, vl, &out);
			if (hdr_is_addr_field(h.p + h.f[i].off, h.f[i].name_len))
				hdr_qualify_field(h.p + h.f[i].off, h.f[i].len, h.f[i].name_len, "q.example", &out);
		}
		buf_free(&out);
		hdr_free(&h);
	}
	hdr_reader_free(&r);
	return 0;
}
