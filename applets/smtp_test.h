/* smtp -t (smtp_test.c): the outgoing mail setup tested end to end, each step printed with its
 * verdict. */
#ifndef SPOOLBOX_SMTP_TEST_H
#define SPOOLBOX_SMTP_TEST_H
#include "conf.h"
#include "smtp_session.h"

/* Opens a session as a delivery to rcpt's domain would (rcpt NULL: no RCPT; the route is then
 * the smarthost, or example.invalid's MX), says MAIL FROM:<from> and RCPT TO:<rcpt>, and with
 * send a short test message; RSET otherwise. Returns 0 when the mail would be accepted,
 * EX_TEMPFAIL when it would be deferred, EX_UNAVAILABLE when refused, EX_USAGE for a bad rcpt. */
int smtp_test(struct smtp_session *s, const struct smtp_config *cfg, const struct conf *c, const char *from,
              const char *rcpt, int send);
#endif
