/* The router profile (`make PROFILE=router`): the queue, scheduler, smtp with TLS and AUTH,
 * errormail, mailq and cleaner; no local delivery (a null client: all mail leaves by SMTP), no
 * `sendmail -bs`, short usage texts, UTC dates, mailq from the spool only (no query socket), and
 * no DSN beyond the bounce (failure reports are sent; success and delay notices are not).
 * Read before config_default.h, which fills in the rest. */
#define ENABLE_LOCAL 0
#define ENABLE_MAILDIR 0
#define ENABLE_DELIVER_CMD 0
#define ENABLE_SMTPD 0
#define ENABLE_TLS_CLIENT_CERT 0
#define ENABLE_CHACHA20 0
#define ENABLE_VERBOSE_USAGE 0
#define ENABLE_LOCALTIME 0
#define ENABLE_MAILQ_PROTO 0
#define ENABLE_DSN 0
