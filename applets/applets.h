/* The one table of applets. APPLET(name, install directory, flags): the applet's code is
 * applets/<name>.c, which defines <name>_main() and <name>_usage[]. Adding an applet is one line
 * here plus that file. LINK(name, applet, directory) adds another name for an applet, installed
 * by `spoolbox --install` (sendmail in its two customary places). Keep APPLET lines sorted.
 * Flags (common.h): AF_SETGID keeps a setgid group (every other applet drops it at once; mailq
 * reads the queue with it);
 * AF_AGENT is a transport agent, whose stderr is the scheduler's, so its log lines go there when
 * syslog cannot be reached; AF_INTERACTIVE is run by a person, who sees its warnings and errors
 * on stderr whatever LOG says; AF_MAN1 has its man page in section 1 (usage: see NAME(1)).
 * Rows of an applet a build option removes sit inside its #if. */
APPLET(cleaner, "/usr/sbin", AF_INTERACTIVE)
APPLET(errormail, "/usr/libexec/spoolbox", AF_AGENT)
APPLET(hold, "/usr/libexec/spoolbox", AF_AGENT)
#if ENABLE_LOCAL
APPLET(local, "/usr/libexec/spoolbox", AF_AGENT)
#endif
APPLET(mailq, "/usr/bin", AF_SETGID | AF_INTERACTIVE | AF_MAN1)
#if ENABLE_LOCAL
APPLET(newaliases, "/usr/bin", AF_INTERACTIVE | AF_MAN1)
#endif
APPLET(scheduler, "/usr/sbin", 0)
APPLET(smtp, "/usr/libexec/spoolbox", AF_AGENT)
APPLET(submit, "/usr/sbin", AF_SETGID | AF_INTERACTIVE)
LINK(sendmail, submit, "/usr/sbin")
LINK(sendmail, submit, "/usr/lib")
