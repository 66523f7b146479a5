/* Exit codes of sendmail's <sysexits.h>: the contract between spoolbox and its callers.
 * musl ships no sysexits.h, so the values (fixed by 4.4BSD) live here. See docs/exit-codes.md. */
#ifndef SPOOLBOX_SYSEXITS_H
#define SPOOLBOX_SYSEXITS_H
enum {
	EX_OK = 0,
	EX_USAGE = 64,       /* command line usage error */
	EX_DATAERR = 65,     /* data format error (bad address, bad message) */
	EX_NOINPUT = 66,     /* cannot open input */
	EX_NOUSER = 67,      /* addressee unknown */
	EX_NOHOST = 68,      /* host name unknown */
	EX_UNAVAILABLE = 69, /* service unavailable (also: applet not written yet) */
	EX_SOFTWARE = 70,    /* internal software error */
	EX_OSERR = 71,       /* system error (fork, pipe) */
	EX_OSFILE = 72,      /* critical OS file missing */
	EX_CANTCREAT = 73,   /* cannot create (user) output file; also: message too large */
	EX_IOERR = 74,       /* input/output error */
	EX_TEMPFAIL = 75,    /* temporary failure; the caller should retry */
	EX_PROTOCOL = 76,    /* remote error in protocol */
	EX_NOPERM = 77,      /* permission denied */
	EX_CONFIG = 78,      /* configuration error */
};
#endif
