/* The one table of applets. APPLET(name, install directory): the applet's code is
 * applets/<name>.c, which defines <name>_main() and <name>_usage[]. Adding an applet is one line
 * here plus that file. LINK(name, applet, directory) adds another name for an applet, installed
 * by `spoolbox --install` (sendmail in its two customary places). Keep APPLET lines sorted. */
APPLET(cleaner, "/usr/sbin")
APPLET(errormail, "/usr/libexec/spoolbox")
APPLET(hold, "/usr/libexec/spoolbox")
APPLET(local, "/usr/libexec/spoolbox")
APPLET(mailq, "/usr/bin")
APPLET(newaliases, "/usr/bin")
APPLET(scheduler, "/usr/sbin")
APPLET(smtp, "/usr/libexec/spoolbox")
APPLET(submit, "/usr/sbin")
LINK(sendmail, submit, "/usr/sbin")
LINK(sendmail, submit, "/usr/lib")
