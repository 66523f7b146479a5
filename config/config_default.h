/* Build-time options of spoolbox, in the manner of dropbear's default_options.h.
 *
 * Every option is 0 or 1 and is tested only with #if or `if (ENABLE_X)` (the build uses -Wundef,
 * so a file that forgets to include this header does not compile). Override an option with
 * `make OPTIONS="ENABLE_X=0"`, with a profile (`make PROFILE=router`: config/profile_router.h),
 * or in config/local.h (not tracked), which is read first. config/check.h stops the build on a
 * contradiction. `spoolbox --version` prints the options the binary was built with; the tests of
 * a compiled-out feature skip after asking it.
 *
 * The cost beside each option is what turning it off saves in the stripped static x86-64 binary
 * (musl, -Oz): the bytes of the file, measured with everything else on (PROFILE=max), on 2026-11-27
 * after the fourth session's cuts, by
 * `make size-options` (scripts/size-options.sh). docs/size.md has the table; `make size` prints
 * the binaries and their subsystems.
 *
 * The defaults are the full build that the 300 KiB budget (issue 9, DESIGN.md) holds: every
 * feature DESIGN.md asks for, on. Four options it does not ask for are off by default since
 * 2026-11-27 (docs/size.md, "The default build and PROFILE=max"): client certificates, ChaCha20,
 * the verbose usage texts and local time. `make PROFILE=max` (config/profile_max.h)
 * builds everything on; the sanitizer build is that profile, so every option's tests run. */
#ifndef SPOOLBOX_CONFIG_DEFAULT_H
#define SPOOLBOX_CONFIG_DEFAULT_H

#if defined(__has_include)
#if __has_include("local.h")
#include "local.h"
#endif
#endif

/* STARTTLS and implicit TLS in the smtp transport, with BearSSL: X.509 validation, ECDHE on
 * P-256/P-384/X25519, RSA and ECDSA signatures, AES-GCM, SHA-2. `make TLS=0` sets it.
 * Cost: 66.3 KiB (BearSSL 50.5 KiB, the glue in lib/tls*.c 15.4 KiB). */
#ifndef ENABLE_TLS
#define ENABLE_TLS 1
#endif

/* A client certificate and key for the smarthost (CLIENT_CERT, CLIENT_KEY): BearSSL's private
 * key decoder and RSA/ECDSA signing. Without it, a configured client certificate is an error.
 * Off by default (smarthosts authenticate with AUTH and the credentials file). Cost: 7.8 KiB. */
#ifndef ENABLE_TLS_CLIENT_CERT
#define ENABLE_TLS_CLIENT_CERT 0
#endif

/* ChaCha20-Poly1305 cipher suites beside AES-GCM (faster on CPUs without AES instructions;
 * every server that offers them also offers AES-GCM). Off by default. Cost: 2.6 KiB. */
#ifndef ENABLE_CHACHA20
#define ENABLE_CHACHA20 0
#endif

/* CRAM-MD5 among the AUTH mechanisms (the only one allowed to an unverified peer without
 * unverified_auth, as it does not reveal the password). Cost: 0.6 KiB. */
#ifndef ENABLE_CRAM_MD5
#define ENABLE_CRAM_MD5 1
#endif

/* `sendmail -bs`: an SMTP dialogue on standard input and output (PHP, Symfony, Laravel, pine).
 * Without it -bs is refused with 64. Cost: 6.0 KiB. */
#ifndef ENABLE_SMTPD
#define ENABLE_SMTPD 1
#endif

/* Local delivery: the local transport agent (mbox), aliases, .forward and newaliases. Without it
 * spoolbox is a null client, as Postfix with an empty mydestination: every recipient, a bare
 * local name qualified with QUALIFYDOMAIN included, goes out by SMTP (docs/size.md).
 * Cost: 29.7 KiB, Maildir and |command included. */
#ifndef ENABLE_LOCAL
#define ENABLE_LOCAL 1
#endif

/* Maildir delivery (MAILDIR, a mailbox path ending in '/'); without it local writes mbox only
 * and defers a Maildir target with a reason. Cost: 1.0 KiB. Needs ENABLE_LOCAL. */
#ifndef ENABLE_MAILDIR
#define ENABLE_MAILDIR 1
#endif

/* `|command` and `:include:` targets in aliases and .forward; without them such a target fails
 * the recipient with 5.3.5 and a reason. Cost: 2.8 KiB. Needs ENABLE_LOCAL. */
#ifndef ENABLE_DELIVER_CMD
#define ENABLE_DELIVER_CMD 1
#endif

/* The full usage text of every applet and of `spoolbox --help`; without it `--help` and a usage
 * error name the applet's man page ("usage: see submit(8)"). Off by default. Cost: 7.4 KiB. */
#ifndef ENABLE_VERBOSE_USAGE
#define ENABLE_VERBOSE_USAGE 0
#endif

/* Local time in the Date: header, the mbox From_ line and syslog timestamps, with musl's
 * time-zone code (TZ, /etc/localtime). Without it Date: is written in UTC ("+0000", as valid
 * and unambiguous) and syslog lines carry no timestamp, so the log daemon stamps them with its
 * own local time (RFC 3164 section 4.3.2). Off by default (mail readers show Date: in the reader's
 * own zone either way). Cost: 3.7 KiB. */
#ifndef ENABLE_LOCALTIME
#define ENABLE_LOCALTIME 0
#endif

/* The scheduler's live query socket (seed 000's MAILQv2 on SPOOL/scheduler.sock, the v1 dump,
 * PARAMmailqpath, the auth file) and `mailq -Q`; without it the scheduler listens on nothing,
 * mailq -Q exits 64, and plain mailq lists the queue from the spool as always.
 * Cost: 8.7 KiB. */
#ifndef ENABLE_MAILQ_PROTO
#define ENABLE_MAILQ_PROTO 1
#endif

/* Delivery status notifications beyond the bounce (RFC 3461): the DSN extension in `-bs` (NOTIFY,
 * RET, ENVID, ORCPT), submit's -N, -R and -V, passing them on to a next hop that offers DSN, and
 * success and delay notices. Without it those options are accepted and ignored (-bs refuses the
 * parameters and does not offer DSN), no success or delay notice is ever sent, and a failed
 * recipient still gets its failure report (RFC 3464) as always, the postmaster notice included.
 * Cost: 1.6 KiB. */
#ifndef ENABLE_DSN
#define ENABLE_DSN 1
#endif

/* Postfix's preemptive scheduling (issue 14 point 4, lib/sched_preempt.c): a message with few
 * recipients slips past a big mailing in the same scheduler.conf clause, within the
 * delivery_slot_* keys. Without it the keys are accepted and the clause's destinations are served
 * round robin in arrival order. Cost: 0.9 KiB. */
#ifndef ENABLE_PREEMPT
#define ENABLE_PREEMPT 1
#endif

/* Compiled-in defaults of run-time configuration. */
#ifndef DEFAULT_CONF_PATH
#define DEFAULT_CONF_PATH "/etc/spoolbox/spoolbox.conf"
#endif
#ifndef DEFAULT_SPOOL
#define DEFAULT_SPOOL "/var/spool/spoolbox"
#endif

#include "check.h"
#endif
