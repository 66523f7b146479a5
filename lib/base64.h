/* Base64 (RFC 4648 section 4, the standard alphabet with '=' padding), as SMTP AUTH (RFC 4954)
 * uses it for challenges and responses.
 *
 * Contract: both functions write into caller-owned buffers of the given size and never past
 * them; both are pure (no state, no logging). */
#ifndef SPOOLBOX_BASE64_H
#define SPOOLBOX_BASE64_H
#include <stddef.h>
#include <sys/types.h>

/* Bytes needed to encode n bytes, including the terminating NUL. */
#define BASE64_ENCLEN(n) ((((n) + 2) / 3) * 4 + 1)
/* Upper bound of the bytes a base64 text of n characters decodes to. */
#define BASE64_DECLEN(n) (((n) + 3) / 4 * 3)

/* Encodes n bytes of src into dst as NUL-terminated text. Returns the text length, or -1 when
 * size < BASE64_ENCLEN(n) (dst is then the empty string when size > 0). */
ssize_t base64_encode(char *dst, size_t size, const void *src, size_t n);

/* Decodes n characters of src into dst. The input MUST be canonical base64: length a multiple
 * of 4, '=' only as the final one or two characters, no whitespace, no other characters.
 * Returns the decoded length, or -1 on any invalid input or when dst (size bytes) is too small.
 * n == 0 decodes to 0 bytes (an empty SASL challenge). dst is not NUL-terminated. */
ssize_t base64_decode(void *dst, size_t size, const char *src, size_t n);
#endif
