/* Checkers run by `spoolbox --check`, one CHECKER(function) line each, in the order the system
 * reads its files. Each is int fn(const struct conf *c, conf_report_fn *report, void *ctx) and
 * returns its error count, reporting each finding as file:line: reason (a reason starting with
 * CONF_WARNING is a warning and is not counted). spoolbox.conf itself
 * is checked by --check before these run, and c is what it says. */

CHECKER(submit_check)
CHECKER(scheduler_check)
CHECKER(schedconf_users_check)
#if ENABLE_LOCAL
CHECKER(aliases_check)
#endif
CHECKER(smtp_check)
CHECKER(creds_check)
CHECKER(install_check)
