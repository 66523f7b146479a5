/* TLS client for the smtp transport (BearSSL, custom small profile): implicit TLS (smtps, from
 * the first byte) and STARTTLS (RFC 3207) over an existing struct io. After a successful
 * tls_start() the same struct io carries plaintext through the TLS engine, so the SMTP code is
 * unchanged; io_close() then sends close_notify, closes the socket and frees the TLS state.
 *
 * Profile: TLS 1.2 only (BearSSL's highest); ECDHE_ECDSA and ECDHE_RSA key exchange over
 * x25519, P-256 and P-384; AES-128/256-GCM and ChaCha20-Poly1305; SHA-256/384 (and SHA-512 for
 * certificate signatures); RSA and ECDSA certificates. SNI is always sent for a host name.
 *
 * Policies (per destination, chosen by the caller):
 *   TLS_NONE     no TLS; tls_start() MUST NOT be called.
 *   TLS_MAY      opportunistic: encrypt, verify nothing. On failure the caller decides whether
 *                to reconnect in clear text (never on the same connection).
 *   TLS_ENCRYPT  TLS required, the certificate is not verified (but see pins).
 *   TLS_VERIFY   TLS required; the chain MUST lead to a trust anchor, be valid now, and the
 *                server_name MUST match a subjectAltName dNSName (a leftmost "*" label matches
 *                exactly one label, RFC 6125 section 6.4.3; the subject CN is not used when a
 *                dNSName exists).
 * Under every policy, any failure returns a status other than TLS_OK and a precise reason; this
 * module never falls back to clear text. The caller defers the message with that reason.
 *
 * Pins: optional SHA-256 hashes of the server's SubjectPublicKeyInfo (the HPKP / curl
 * --pinnedpubkey form). Under TLS_VERIFY a pin ADDS to chain and name verification (both MUST
 * pass); under TLS_ENCRYPT and TLS_MAY a pin REPLACES chain verification (a private relay with
 * a self-signed certificate): the key MUST match one of the pins. Compute one with
 *   openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der |
 *   openssl dgst -sha256 -binary | base64
 *
 * Clock: a certificate that is not yet valid while the system clock is before
 * TLS_CLOCK_PLAUSIBLE (a board without a real-time clock, still in 1970) gives TLS_E_CLOCK and
 * "system clock is 1970-01-01, certificate not yet valid: clock not set", so the caller defers
 * (and retries once NTP has set the clock) instead of failing the message.
 *
 * Trust anchors are parsed once per process (tls_anchors_load) and shared by every connection. */
#ifndef SPOOLBOX_TLS_H
#define SPOOLBOX_TLS_H
#include "io.h"
#include <stddef.h>
#include <time.h>

enum tls_policy { TLS_NONE = 0, TLS_MAY, TLS_ENCRYPT, TLS_VERIFY };

enum tls_status {
	TLS_OK = 0,
	TLS_E_UNAVAILABLE, /* spoolbox was built with TLS=0 */
	TLS_E_CONFIG,      /* bad parameters: no anchors or name for verify, bad pin, client cert/key */
	TLS_E_IO,          /* the connection failed, closed or timed out during the handshake */
	TLS_E_PROTOCOL,    /* handshake failed: alert from the server, no common version/cipher... */
	TLS_E_CERT,        /* certificate chain, validity or host name verification failed */
	TLS_E_CLOCK,       /* certificate not yet valid and the system clock is not set */
	TLS_E_PIN,         /* the server's key matches none of the pins */
	TLS_E_NOMEM,
};

/* 2025-01-01T00:00:00Z: a clock before this has not been set. */
#define TLS_CLOCK_PLAUSIBLE 1735689600
#define TLS_REASON_MAX 256
#define TLS_MAX_PINS 4
#define TLS_CAFILE_MAX (4 << 20)  /* largest trust-anchor file */
#define TLS_ANCHORS_MAX 4096      /* most anchors in one file */
#define TLS_PEMFILE_MAX (256 << 10) /* largest client certificate or key file */
#define TLS_RSA_MIN_BYTES 256     /* no RSA key under 2048 bits, in the chain or as an anchor */

/* The system bundles tried in order when no CAFILE is configured. */
#define TLS_SYSTEM_BUNDLES \
	"/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/cert.pem", \
	"/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/certs/ca-bundle.crt"

struct tls_params {
	enum tls_policy policy;           /* TLS_MAY, TLS_ENCRYPT or TLS_VERIFY */
	const char *server_name;          /* SNI and the name verified; MUST be set for TLS_VERIFY.
	                                     An address literal ("192.0.2.1", "::1") sends no SNI. */
	const struct tls_anchors *anchors;/* MUST be set for TLS_VERIFY; ignored otherwise */
	const char *pins;                 /* NULL/"", or up to TLS_MAX_PINS pins, comma separated */
	const char *client_cert;          /* NULL or "", or a PEM file: the certificate chain */
	const char *client_key;           /* its private key (PEM, RSA or EC); both or neither */
	time_t now;                       /* 0: time(NULL); tests inject a clock here */
};

/* 1 when TLS is built in (ENABLE_TLS). */
int tls_available(void);
/* "none", "may", "encrypt", "verify" <-> enum. parse returns 0, or -1 for an unknown word. */
int tls_policy_parse(const char *s, enum tls_policy *out);
const char *tls_policy_name(enum tls_policy p);
/* One pin: "sha256//BASE64", "sha256/BASE64", BASE64 (44 characters) or 64 hex digits.
 * Returns 0 and the 32-byte hash, or -1. */
int tls_pin_parse(const char *s, unsigned char out[32]);
/* A comma-separated pin list: returns the number of pins (0..TLS_MAX_PINS), or -1. */
int tls_pins_parse(const char *s, unsigned char out[][32], int max);

/* Trust anchors: an opaque, immutable set shared by all connections of the process.
 * tls_anchors_load reads cafile, or when cafile is NULL or "" the first existing file of
 * TLS_SYSTEM_BUNDLES. Every CERTIFICATE block becomes an anchor (CA certificates anchor chains,
 * others are trusted directly, e.g. a private relay's self-signed certificate); other PEM
 * blocks are skipped, and so are certificates BearSSL cannot use (one warning is logged).
 * A PEM syntax error, or a file without any usable anchor, is an error. Returns NULL on error
 * with the reason (file name included) in err. */
struct tls_anchors;
struct tls_anchors *tls_anchors_load(const char *cafile, char *err, size_t errsize);
/* The same on PEM text in memory (name is used in reasons). Never reads past len. */
struct tls_anchors *tls_anchors_parse(const void *pem, size_t len, const char *name,
                                      char *err, size_t errsize);
size_t tls_anchors_count(const struct tls_anchors *ta);
/* The file the anchors came from. */
const char *tls_anchors_file(const struct tls_anchors *ta);
void tls_anchors_free(struct tls_anchors *ta);

/* Runs the TLS client handshake on io (a plain stream made by io_init_fd) under p.
 * Before the handshake, buffered input is discarded (RFC 3207 section 6: anything the server
 * sent before TLS is not trusted); buffered output MUST be empty (TLS_E_CONFIG otherwise).
 * The handshake obeys io->timeout_ms per network read or write.
 * TLS_OK: io now carries plaintext through TLS; io_close() ends it.
 * Anything else: reason holds why (NUL-terminated, no secret), io is still the plain stream
 * but its connection is unusable for SMTP: the caller MUST io_close() it. */
enum tls_status tls_start(struct io *io, const struct tls_params *p, char *reason, size_t reasonsize);
/* 1 when io currently runs over TLS. */
int tls_active(const struct io *io);
/* For the log: "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 verified" (or "unverified", "pinned").
 * Writes "" when io is not a TLS stream. */
void tls_describe(const struct io *io, char *out, size_t size);
/* 1 when io runs over TLS and the peer proved its identity: the chain and name were verified
 * (TLS_VERIFY) or its key matched a pin. What decides whether a password may be sent. */
int tls_peer_authenticated(const struct io *io);
/* 1 when the peer has sent application data (or closed) that nobody has read yet: buffered in
 * io, decrypted in the engine, or in whole records waiting on the socket, which this takes in
 * without blocking. For the SMTP client's "no reply before the end of data" rule. 0 otherwise,
 * and always 0 on a stream that is not TLS. */
int tls_app_data_arrived(struct io *io);
/* A short name for a status ("clock not set", "certificate", ...). */
const char *tls_status_name(enum tls_status s);
#endif
