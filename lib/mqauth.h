/* The MAILQv2 authentication file of seed 000 (PARAMauthfile): lines
 *
 *     user:password:ATTR ATTR ...:[a.b.c.d]/len [a.b.c.d]/len ...
 *
 * '#' comments and blank lines ignored; the first line whose user matches and whose address
 * list holds the peer's address applies (the same user may appear on several lines). Attributes:
 * ALL, SNMP (SHOW SNMP), QQ (SHOW QUEUE SHORT), TT (SHOW QUEUE THREADS, SHOW THREAD), ETRN,
 * KILL (KILL MSG, KILL THREAD). The password is plain text (the seed's APOP-like scheme needs
 * it), so the file MUST be mode 0600 and owned by the scheduler's user, or it is refused.
 * Limits: file 64 KiB, line 1024 bytes. Nothing here allocates. */
#ifndef SPOOLBOX_MQAUTH_H
#define SPOOLBOX_MQAUTH_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MQAUTH_FILE_MAX (64 * 1024)
#define MQAUTH_LINE_MAX 1024

enum {
	MQA_SNMP = 1,
	MQA_QQ = 2,
	MQA_TT = 4,
	MQA_ETRN = 8,
	MQA_KILL = 16,
	MQA_ALL = 31,
};

/* The attributes and password of the first line for user whose address list holds the IPv4
 * address ip (host order; a UNIX-socket peer is 127.0.0.1). Returns 1 found (pass gets the
 * password, cut to passlen), 0 none, -1 a malformed line on the way (err: "line N: reason"). */
int mqauth_lookup(const char *text, size_t len, const char *user, uint32_t ip, char *pass, size_t passlen,
                  unsigned *attrs, char *err, size_t errlen);
/* Reads the file at path into buf (size bytes): -1 with the reason in err when it cannot be read,
 * is larger than size - 1, is not a regular file, not mode 0600, or not owned by owner. */
int mqauth_read(const char *path, uid_t owner, char *buf, size_t size, size_t *len, char *err, size_t errlen);
/* The seed's authenticator: lower-case hex MD5 of challenge (without its newline) + password. */
void mqauth_digest(const char *challenge, const char *password, char out[33]);
#endif
