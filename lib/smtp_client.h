/* The RFC 5321 client protocol over a struct io (plain or TLS): replies (multi-line, with a
 * size limit, enhanced status codes), EHLO with HELO fallback and the capabilities we use,
 * STARTTLS, AUTH, and mail transactions with PIPELINING, SIZE, 8BITMIME, SMTPUTF8 and DSN.
 *
 * Contract: nothing here picks a host, decides a retry or writes a report; a transaction fills
 * one result per recipient and the caller maps it (4xx deferred, 5xx failed, code 0 = the
 * connection failed: deferred). Every function returns 0 or -1; after -1 the connection is
 * unusable and c->err says why in one line ("lost connection with mx.example[192.0.2.1] while
 * sending the message body"). Timeouts are RFC 5321 4.5.3.2's, from struct smtp_timeouts.
 * With c->verbose the dialogue is logged at LOG_DEBUG, AUTH lines through auth_redact(). */
#ifndef SPOOLBOX_SMTP_CLIENT_H
#define SPOOLBOX_SMTP_CLIENT_H
#include "dsn_flags.h"
#include "io.h"
#include <stddef.h>

#define SMTP_LINE_MAX 2048      /* one reply line read (RFC 5321 4.5.3.1.5 says 512) */
#define SMTP_REPLY_MAX 2048     /* the text of a reply kept, lines joined by '\n' */
#define SMTP_REPLY_LINES 64     /* lines of one reply before it is a protocol error */
#define SMTP_CMD_MAX 2100       /* one command line we send (addresses up to 998 + params) */
/* Limits shared with the spool (SPOOL_ADDR_MAX, SPOOL_TEXT_MAX; applets/smtp.c asserts they
 * agree) without including it: the protocol code builds and fuzzes alone. */
#define SMTP_ADDR_MAX 998       /* longest address sent */
#define SMTP_TEXT_MAX 512       /* longest result text kept */

/* Extensions (EHLO keywords) we act on. */
enum {
	SMTP_EXT_PIPELINING = 1 << 0,
	SMTP_EXT_SIZE = 1 << 1,
	SMTP_EXT_8BITMIME = 1 << 2,
	SMTP_EXT_SMTPUTF8 = 1 << 3,
	SMTP_EXT_DSN = 1 << 4,
	SMTP_EXT_ENHANCED = 1 << 5,
	SMTP_EXT_STARTTLS = 1 << 6,
	SMTP_EXT_AUTH = 1 << 7,
};

struct smtp_reply {
	int code;                  /* 200..599; 0 when no reply could be read */
	char enh[16];              /* "5.1.1" from the first line, or "" */
	char text[SMTP_REPLY_MAX]; /* the lines after "NNN-"/"NNN ", joined by '\n' */
};

struct smtp_caps {
	unsigned ext;              /* SMTP_EXT_* */
	long long size;            /* SIZE limit, 0 = none announced */
	int esmtp;                 /* EHLO was accepted (0: HELO) */
	char auth[256];            /* parameters of the AUTH keyword ("PLAIN LOGIN") */
};

/* RFC 5321 4.5.3.2 timeouts, milliseconds. */
struct smtp_timeouts {
	int connect, greeting, helo, cmd, data_init, data_block, data_done;
};

struct smtp_conn {
	/* the small fields first: they are read often, and near the start a field's offset fits a
	 * byte in the instructions that read it */
	struct smtp_timeouts to;
	int verbose;
	int open;
	int rset_pending;          /* a reused connection: RSET goes first, pipelined */
	int timed_out;             /* the last failure was a time limit, not a refusal or a reset */
	const char *logid;         /* message id for transcript lines, or NULL */
	struct smtp_caps caps;
	struct io io;
	char name[256];            /* "mx.example[192.0.2.1]:25", for messages and the log */
	char err[512];
};

/* One reply line: 3 digits (first 2-5), then ' ', '-' or the end. Returns 0 and fills *code,
 * *more (a '-' line) and *text (offset of the text), or -1. Pure; fuzzed. */
int smtp_reply_line_parse(const char *line, size_t len, int *code, int *more, size_t *text);
/* An enhanced status code ("5.1.1") at the start of text whose class matches code's first
 * digit, copied into enh (size >= 16). Returns its length including the following blank, or 0. */
size_t smtp_enh_parse(const char *text, int code, char *enh, size_t size);
/* Reads a whole reply. -1 on EOF, timeout, or a malformed reply (c->err set). */
int smtp_read_reply(struct smtp_conn *c, struct smtp_reply *r, int timeout_ms);
/* The EHLO keywords of a 250 reply (its text, lines joined by '\n'). */
void smtp_parse_ehlo(const struct smtp_reply *r, struct smtp_caps *caps);
/* "550 5.1.1 text text" on one line: the reply as a report or log shows it. */
void smtp_reply_oneline(const struct smtp_reply *r, char *out, size_t size);

/* Connects to addr (port set by the caller) within c->to.connect ms, with TCP_NODELAY (we
 * batch our own writes; the stall of PERF-NOTES trap 1 needs Nagle). c->name is the peer. */
struct sockaddr;
int smtp_connect(struct smtp_conn *c, const struct sockaddr *sa, unsigned salen);
/* Sends one command line (CRLF added) without flushing. */
int smtp_send(struct smtp_conn *c, const char *line);
/* Sends what is buffered, within timeout_ms. */
int smtp_flush(struct smtp_conn *c, int timeout_ms);
/* Sends a command and reads its reply. */
int smtp_cmd(struct smtp_conn *c, const char *line, struct smtp_reply *r, int timeout_ms);
/* Reads the greeting and says EHLO (HELO when EHLO gets a 5xx reply). A greeting or EHLO/HELO
 * that is not 2xx leaves its reply in *r and returns 1 (the caller tries the next host);
 * -1 is a connection failure. */
int smtp_greet(struct smtp_conn *c, const char *helo_name, struct smtp_reply *r);
/* After the greeting: EHLO again (after STARTTLS). Same return values. */
int smtp_ehlo(struct smtp_conn *c, const char *helo_name, struct smtp_reply *r);
/* STARTTLS: 0 when the server answered 220 (the caller runs tls_start()), 1 when it refused
 * (reply in *r), -1 on connection failure. */
int smtp_starttls_cmd(struct smtp_conn *c, struct smtp_reply *r);
/* AUTH with mechanism mech (enum auth_mech) as user with secret. 0 on 235, 1 on refusal
 * (the server's reply in *r), -1 on connection failure or a broken exchange. */
int smtp_auth(struct smtp_conn *c, int mech, const char *user, const char *secret, struct smtp_reply *r);
/* RSET before reusing a connection for the next transaction; 0 only on 250. */
int smtp_rset(struct smtp_conn *c);
/* QUIT (best effort, short timeout) and close. Safe on a closed connection. */
void smtp_quit(struct smtp_conn *c);
void smtp_close(struct smtp_conn *c);

/* ---- one mail transaction ---- */

struct smtp_result {
	int code;                  /* the reply code; 0: no reply (the connection failed) */
	int local;                 /* a diagnosis made here, not a server reply */
	char enh[16];
	char text[SMTP_TEXT_MAX + 1]; /* one line: the server's reply or our diagnosis */
};

struct smtp_txn_rcpt {
	const char *addr;
	unsigned notify;           /* NOTIFY_* of dsn_flags.h, 0 = not given */
	const char *orcpt;         /* "rfc822;addr" or NULL */
	struct smtp_result res;
};

struct smtp_txn {
	const char *sender;        /* "" is the null sender */
	long long size;            /* message size (SIZE=) */
	int body8, smtputf8;
	char ret;                  /* 'F', 'H' or 0 */
	const char *envid;         /* or NULL */
	int send_8bit_anyway;      /* without 8BITMIME at the server: send instead of failing */
	int fd;                    /* the message, positioned at its first header byte */
	struct smtp_txn_rcpt *rcpt;
	size_t n;
	/* SMTP_TXN_BUF bytes the caller keeps across messages for the body copy, or NULL (then
	 * allocated per message: a transport agent that reuses one saves an mmap/munmap pair per
	 * message, issue 13 point 3) */
	char *body_buf;
	/* the first `pre` bytes of the message (at most SMTP_TXN_IN) are already at the start of
	 * body_buf, read there by the caller (who looked at the header in them), and fd is
	 * positioned after them: the message is read once, not once for the caller and again here */
	size_t pre;
	/* filled in */
	size_t accepted;           /* recipients with a 2xx RCPT reply */
	unsigned long long folded; /* lines folded on the way out */
	struct smtp_result mail, data;
};

#define SMTP_TXN_STALE (-2)
#define SMTP_TXN_IN 16384 /* message bytes read per chunk, at the start of body_buf */
#define SMTP_TXN_BUF (SMTP_TXN_IN + 32768 + 8) /* message bytes read per chunk, wire bytes per write, the end */

/* Runs MAIL, RCPT..., DATA, the body and the end of data (pipelined in one write when the
 * server offers PIPELINING, and the end of data always in the same write as the last body
 * bytes). Each recipient's res gets its final outcome: the end-of-data reply when its RCPT was
 * accepted, else its RCPT (or MAIL, DATA) reply, or code 0 with the reason when the connection
 * failed first. Checks before MAIL: SIZE (5.3.4), 8-bit data without 8BITMIME (5.6.3), UTF-8
 * addresses without SMTPUTF8 (5.6.7) give every recipient a local permanent result and return 0.
 * Returns 0 when the connection is still usable afterwards, -1 when it is not.
 * With c->rset_pending, RSET leads the pipelined group (one round trip saved per reused
 * connection); when its reply does not come, nothing was done and SMTP_TXN_STALE is returned:
 * the caller opens a new connection and runs the transaction again. */
int smtp_transaction(struct smtp_conn *c, struct smtp_txn *t);
#endif
