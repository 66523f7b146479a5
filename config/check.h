/* Contradictions between build-time options stop the build here (dropbear's sysoptions.h), and
 * the option table that `spoolbox --version` prints is defined here, next to the checks. */
#ifndef SPOOLBOX_CHECK_H
#define SPOOLBOX_CHECK_H

/* X(name, value): every 0/1 option of config_default.h, in its order. */
#define SPOOLBOX_OPTIONS(X) \
	X(tls, ENABLE_TLS) \
	X(tls_client_cert, ENABLE_TLS_CLIENT_CERT) \
	X(chacha20, ENABLE_CHACHA20) \
	X(cram_md5, ENABLE_CRAM_MD5) \
	X(smtpd, ENABLE_SMTPD) \
	X(local, ENABLE_LOCAL) \
	X(maildir, ENABLE_MAILDIR) \
	X(deliver_cmd, ENABLE_DELIVER_CMD) \
	X(verbose_usage, ENABLE_VERBOSE_USAGE) \
	X(localtime, ENABLE_LOCALTIME) \
	X(mailq_proto, ENABLE_MAILQ_PROTO) \
	X(dsn, ENABLE_DSN) \
	X(preempt, ENABLE_PREEMPT)

#define SPOOLBOX_CHECK_01(name, v) _Static_assert((v) == 0 || (v) == 1, "option " #name " must be 0 or 1");
SPOOLBOX_OPTIONS(SPOOLBOX_CHECK_01)
#undef SPOOLBOX_CHECK_01

#if ENABLE_TLS_CLIENT_CERT && !ENABLE_TLS
#undef ENABLE_TLS_CLIENT_CERT
#define ENABLE_TLS_CLIENT_CERT 0 /* nothing to present a certificate over */
#endif
#if ENABLE_CHACHA20 && !ENABLE_TLS
#undef ENABLE_CHACHA20
#define ENABLE_CHACHA20 0
#endif
#if ENABLE_MAILDIR && !ENABLE_LOCAL
#error "ENABLE_MAILDIR needs ENABLE_LOCAL"
#endif
#if ENABLE_DELIVER_CMD && !ENABLE_LOCAL
#error "ENABLE_DELIVER_CMD needs ENABLE_LOCAL"
#endif
#endif
