/* The max profile (`make PROFILE=max`, build/musl-max/spoolbox): every option of
 * config_default.h on, the four that the default build leaves off included (client
 * certificates, ChaCha20, the verbose usage texts, local time). The sanitizer build
 * (`make CC=gcc SANITIZE=1`) is this profile, so the tests of every option run in `make test`.
 * An option given with OPTIONS= still wins. Read before config_default.h. */
#ifndef ENABLE_TLS_CLIENT_CERT
#define ENABLE_TLS_CLIENT_CERT 1
#endif
#ifndef ENABLE_CHACHA20
#define ENABLE_CHACHA20 1
#endif
#ifndef ENABLE_CRAM_MD5
#define ENABLE_CRAM_MD5 1
#endif
#ifndef ENABLE_SMTPD
#define ENABLE_SMTPD 1
#endif
#ifndef ENABLE_LOCAL
#define ENABLE_LOCAL 1
#endif
#ifndef ENABLE_MAILDIR
#define ENABLE_MAILDIR 1
#endif
#ifndef ENABLE_DELIVER_CMD
#define ENABLE_DELIVER_CMD 1
#endif
#ifndef ENABLE_VERBOSE_USAGE
#define ENABLE_VERBOSE_USAGE 1
#endif
#ifndef ENABLE_LOCALTIME
#define ENABLE_LOCALTIME 1
#endif
#ifndef ENABLE_MAILQ_PROTO
#define ENABLE_MAILQ_PROTO 1
#endif
#ifndef ENABLE_DSN
#define ENABLE_DSN 1
#endif
#ifndef ENABLE_PREEMPT
#define ENABLE_PREEMPT 1
#endif
