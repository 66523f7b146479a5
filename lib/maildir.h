/* Maildir delivery: a unique name in tmp/, write, fsync, link into new/, fsync new/; missing
 * Maildir directories are created mode 0700.
 *
 * Contract: runs with the privileges of the Maildir's owner (a child of dl_run_as()). Reports
 * success only once the file is in new/ and new/ is fsync'd; on failure nothing is left in new/
 * and the temporary file is removed. */
#ifndef SPOOLBOX_MAILDIR_H
#define SPOOLBOX_MAILDIR_H
#include "deliver.h"

/* dir is the Maildir (with or without a trailing slash); host names the file (qmail's rule:
 * '/' and ':' are written \057 and \072). */
void maildir_deliver(const char *dir, const char *host, const struct dl_msg *m, struct dl_result *r);
#endif
