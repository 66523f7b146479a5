/* The SMARTHOST list: relays tried in order, each with its own port, TLS policy, credentials,
 * pin and client certificate. docs/smtp.md ("Smarthosts") is the user's description.
 *
 *   SMARTHOST="relay1.example:587 tls=verify, [192.0.2.1]:465 tls=smtps"
 *
 * Entries are separated by commas. An entry is a host, then options separated by blanks:
 *   host        name, name:port, [name-or-address], [address]:port (IPv6 only in brackets)
 *   tls=P       none | may | encrypt | verify (default verify) | smtps (= verify + implicit TLS)
 *   smtps       implicit TLS (the default for port 465); starttls forces STARTTLS on 465
 *   mx          look the name up as a mail domain (MX records) instead of as a host
 *   auth=MECH   force a SASL mechanism (PLAIN, LOGIN, CRAM-MD5, XOAUTH2)
 *   noauth      never authenticate to this host
 *   cleartext_auth   allow AUTH without TLS (only for a relay on a trusted link)
 *   unverified_auth  allow PLAIN, LOGIN and XOAUTH2 over TLS to a peer whose certificate is not
 *               verified (tls=may/encrypt without pin); without it only CRAM-MD5 goes there
 *   pin=SHA256  the server's public key (lib/tls.h's forms: 64 hex digits, base64, sha256//b64);
 *               repeat it for a key rollover (at most TLS_MAX_PINS). A pin requires TLS:
 *               tls=may becomes tls=encrypt, tls=none is an error
 *   cert=PATH key=PATH   client certificate chain and private key (PEM)
 *   name=HOST   the name the server's certificate is verified against (and sent as SNI) instead
 *               of the host: for a relay reached by address, [192.0.2.1] name=smtp.example.net
 * Credentials come from the CREDENTIALS file, by host name (and port): see lib/creds.h.
 * A smarthost name is never looked up as MX unless `mx` is given (msmtp's and dma's habit: the
 * relay an admin names is the host to talk to). The parser never allocates and never reads
 * past the string; bad input returns -1 with the entry number and the reason. */
#ifndef SPOOLBOX_SMARTHOST_H
#define SPOOLBOX_SMARTHOST_H
#include "tls.h"
#include <stddef.h>

#define SMARTHOST_MAX 8          /* entries in the list */
#define SMARTHOST_LEN 4096       /* longest SMARTHOST value */
#define SMARTHOST_PATH_MAX 256

struct smarthost {
	unsigned port;              /* 0: the default (465 for smtps, else 25) */
	int bracket;                /* written as [host] */
	int mx;                     /* `mx`: resolve as a mail domain */
	enum tls_policy policy;
	int smtps;                  /* implicit TLS */
	int noauth, cleartext_auth;
	int unverified_auth;        /* PLAIN/LOGIN/XOAUTH2 also to a TLS peer that is not verified */
	char mech[16];              /* "" = chosen from the server's EHLO */
	char host[256];             /* name or address, without brackets */
	char pins[TLS_MAX_PINS * 72]; /* "" = no pin; comma-separated, as tls_pins_parse() reads */
	char cert[SMARTHOST_PATH_MAX], key[SMARTHOST_PATH_MAX];
	char tls_name[256];         /* name=: "" = the host */
};

/* Parses s into out[0..max). Returns the number of entries (0 for an empty or blank string), or
 * -1 with "entry N: reason" in err (errlen bytes, at least 1: every caller wants the reason). */
int smarthost_parse(const char *s, struct smarthost *out, size_t max, char *err, size_t errlen);
/* The port an entry connects to: its own, else 465 for smtps, else 25. */
unsigned smarthost_port(const struct smarthost *h);
#endif
