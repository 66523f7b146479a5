/* Build-time options of spoolbox, in the manner of dropbear's default_options.h.
 *
 * Every option is 0 or 1 and is tested only with #if (the build uses -Wundef).
 * Override one with `make TLS=0`, with -DOPTION=value in CPPFLAGS, or by writing it
 * into config/local.h (not tracked), which is read first.
 * The size noted beside each option is its cost in the stripped static binary. */
#ifndef SPOOLBOX_CONFIG_DEFAULT_H
#define SPOOLBOX_CONFIG_DEFAULT_H

#if defined(__has_include)
#if __has_include("local.h")
#include "local.h"
#endif
#endif

/* STARTTLS and implicit TLS in the smtp transport, with BearSSL.
 * Cost: about 110 KiB (X.509 validation, RSA/EC, AES-GCM/ChaCha20, SHA-2). */
#ifndef ENABLE_TLS
#define ENABLE_TLS 1
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
