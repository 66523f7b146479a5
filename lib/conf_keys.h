/* Every key spoolbox.conf knows, in one X-macro list: CONF(NAME, type, default, help).
 * An environment variable of the same name overrides the file. Keys not listed here are
 * errors (never silently ignored). Keep each area's keys in its own block. */

/* --- everyone --- */
CONF(SPOOL, CT_PATH, DEFAULT_SPOOL, "queue directory")
CONF(MYHOSTNAME, CT_STR, "", "this host's name (default: uname); never looked up in DNS")
CONF(LOG, CT_LIST, "syslog", "where log lines go: syslog, stderr (comma separated)")

/* --- submit --- */
CONF(SIZELIMIT, CT_SIZE, "10M", "largest message accepted, 0 = no limit")
CONF(QUEUE_MINFREE, CT_SIZE, "1M", "free space submit leaves on the spool's file system for pick-up and results (root: half), 0 = none")
CONF(HOPCOUNT_LIMIT, CT_INT, "50", "more Received: fields than this: bounced 5.4.6 as a mail loop, 0 = no limit")
CONF(LOCALDOMAINS, CT_LIST, "", "domains delivered locally (default: MYHOSTNAME, localhost)")
CONF(QUALIFYDOMAIN, CT_STR, "", "domain added to bare addresses (default: MYHOSTNAME)")
CONF(ALLMAILFROM, CT_STR, "", "forced envelope sender for all mail, overrides -f")
CONF(REWRITE_FROM, CT_STR, "", "From: address given to mail from local users")
CONF(MAXRCPT_SUBMIT, CT_INT, "10000", "most recipients of one message")
CONF(SUBMIT_GROUP, CT_STR, "spoolbox", "group a setgid submit writes the spool with (docs/spool.md 8)")

/* --- mailq --- */
CONF(MAILQ_RESTRICT, CT_BOOL, "no", "yes: only root and members of SUBMIT_GROUP may list the queue")

/* --- scheduler --- */
CONF(SCHEDULER_CONF, CT_PATH, "/etc/spoolbox/scheduler.conf", "scheduler clause file")
CONF(QUEUELO, CT_INT, "200", "in-memory queue low watermark (messages)")
CONF(QUEUEHI, CT_INT, "1000", "in-memory queue high watermark (messages)")
CONF(DELAY_WARN, CT_INTERVAL, "4h", "one delay DSN per message once it was tried this long, 0 = never")
CONF(AGENT_USER, CT_STR, "spoolbox", "user the smtp, errormail and hold agents run as, reading the queue through SUBMIT_GROUP (no such user: root, with a warning; docs/spool.md 8)")

/* --- local --- */
CONF(ALIASES, CT_PATH, "/etc/aliases", "aliases file")
CONF(ROOT, CT_STR, "", "where root's mail goes (overrides root: in the aliases)")
CONF(MAILBOX_STYLE, CT_STR, "mbox", "maildir or mbox")
CONF(MAILDIR, CT_STR, "~/Maildir", "Maildir location, ~ is the recipient's home")
CONF(MBOX_DIR, CT_PATH, "/var/mail", "directory of mbox files")
CONF(FORWARD, CT_BOOL, "yes", "honour ~/.forward")
CONF(DEFAULT_USER, CT_STR, "nobody", "user for |command and /file aliases of root-owned files")
CONF(COMMAND_TIMEOUT, CT_INTERVAL, "10m", "time limit of a |command delivery")
CONF(LOCK_TIMEOUT, CT_INTERVAL, "60s", "how long local waits for a locked mbox before deferring")
CONF(DELIVERY_TIMEOUT, CT_INTERVAL, "5m", "time limit of a mailbox, Maildir or /file write once locked; the process is killed after LOCK_TIMEOUT plus this")

/* --- smtp --- */
CONF(SMARTHOST, CT_STR, "", "relay host list; empty = deliver by MX")
CONF(CREDENTIALS, CT_PATH, "/etc/spoolbox/credentials", "AUTH credentials file (mode 0600)")
CONF(CAFILE, CT_PATH, "", "trust anchors (default: the system CA bundle)")
CONF(SMTP_TLS, CT_STR, "may", "TLS policy for MX delivery: none, may, encrypt, verify")
CONF(HELO_NAME, CT_STR, "", "name given in EHLO (default: MYHOSTNAME)")
CONF(SMTP_MAXRCPT, CT_INT, "100", "most recipients in one SMTP transaction")
CONF(SMTP_IDLE, CT_INTERVAL, "5s", "how long an idle connection is kept for reuse")
CONF(SMTP_PORT, CT_INT, "25", "port for MX delivery")
CONF(SMTP_CONNECT_TIMEOUT, CT_INTERVAL, "30s", "time limit of a TCP connect")
CONF(SMTP_HELO_TIMEOUT, CT_INTERVAL, "5m", "time limit for the greeting, EHLO, STARTTLS and the TLS handshake")
CONF(SMTP_CMD_TIMEOUT, CT_INTERVAL, "5m", "time limit for the reply to MAIL, RCPT, RSET, AUTH")
CONF(SMTP_DATA_INIT_TIMEOUT, CT_INTERVAL, "2m", "time limit for the 354 reply to DATA")
CONF(SMTP_DATA_BLOCK_TIMEOUT, CT_INTERVAL, "3m", "time limit of each write of the message body")
CONF(SMTP_DATA_DONE_TIMEOUT, CT_INTERVAL, "10m", "time limit for the reply to the end of data")
CONF(SMTP_CLEARTEXT_AUTH, CT_BOOL, "no", "allow AUTH without TLS (every host; per smarthost: cleartext_auth)")
CONF(SMTP_8BIT_FALLBACK, CT_STR, "bounce", "8-bit message, server without 8BITMIME: bounce = convert to 7 bit, bounce what cannot be; send = unchanged")

/* --- errormail --- */
CONF(DSN_RETURN_LIMIT, CT_SIZE, "100K", "largest message a bounce returns whole (larger: its header only), 0 = header only")
CONF(DSN_RET_DEFAULT, CT_STR, "full", "what a bounce returns when the sender gave no RET: full or hdrs")
CONF(POSTMASTER, CT_STR, "root", "gets failures of null-sender mail and undeliverable bounces (headers); empty = nobody")
