/* The TLS client against real TLS servers on 127.0.0.1 (tests/unit/tls_server.py: Python's ssl,
 * i.e. OpenSSL) with a test PKI made by openssl (tests/unit/tls_fixtures.sh): verification
 * outcomes and their reasons, SNI, pins, the no-RTC clock, client certificates, STARTTLS after
 * plain bytes, data through struct io (pipelined batches, records larger than the buffer).
 * Skipped when TLS is not built in. */
#include "io.h"
#include "tls.h"
#include "unit.h"
#include "util.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char fx[64];            /* the fixture directory, made once */
static struct tls_anchors *ca; /* its CA, parsed once as the TA does */

static void fixtures_cleanup(void)
{
	char cmd[128];
	tls_anchors_free(ca);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", fx);
}

/* Makes the PKI once per run; 0, or -1 when it cannot (the tests then fail loudly). */
static int fixtures(void)
{
	char cmd[300], err[TLS_REASON_MAX], path[128];
	if (fx[0])
		return 0;
	snprintf(fx, sizeof fx, "/tmp/spoolbox-tls-XXXXXX");
	if (!mkdtemp(fx)) {
		fx[0] = 0;
		return -1;
	}
	atexit(fixtures_cleanup);
	snprintf(cmd, sizeof cmd, "sh tests/unit/tls_fixtures.sh '%s'", fx);
	if (system(cmd) != 0) {
		unit_fail(__FILE__, __LINE__, "tls_fixtures.sh failed");
		return -1;
	}
	snprintf(path, sizeof path, "%s/ca.pem", fx);
	ca = tls_anchors_load(path, err, sizeof err);
	if (!ca) {
		unit_fail(__FILE__, __LINE__, "loading the test CA: %s", err);
		return -1;
	}
	return 0;
}

struct server {
	pid_t pid;
	int port;
	char log[128], sni[128];
};

/* Starts tls_server.py with cert/key NAME.pem/NAME.key and extra arguments (space separated,
 * "@" expanded to the fixture directory). */
static int server_start(struct server *s, const char *name, const char *extra)
{
	static int seq;
	char portfile[128], cert[128], key[128], buf[512];
	char *argv[40];
	int argc = 0;
	memset(s, 0, sizeof *s);
	snprintf(portfile, sizeof portfile, "%s/port.%d", fx, ++seq);
	snprintf(s->log, sizeof s->log, "%s/log.%d", fx, seq);
	snprintf(s->sni, sizeof s->sni, "%s/sni.%d", fx, seq);
	snprintf(cert, sizeof cert, "%s/%s.pem", fx, name);
	snprintf(key, sizeof key, "%s/%s.key", fx, name);
	argv[argc++] = "/usr/bin/python3";
	argv[argc++] = "tests/unit/tls_server.py";
	argv[argc++] = "--cert";
	argv[argc++] = cert;
	argv[argc++] = "--key";
	argv[argc++] = key;
	argv[argc++] = "--port-file";
	argv[argc++] = portfile;
	argv[argc++] = "--log-file";
	argv[argc++] = s->log;
	argv[argc++] = "--sni-file";
	argv[argc++] = s->sni;
	/* expand "@/" to the fixture directory, then split on spaces */
	size_t o = 0;
	for (const char *e = extra ? extra : ""; *e && o + 64 < sizeof buf; e++) {
		if (*e == '@')
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", fx);
		else
			buf[o++] = *e;
	}
	buf[o] = 0;
	for (char *tok = strtok(buf, " "); tok && argc < 38; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	s->pid = fork();
	if (s->pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(portfile, "r");
		if (f) {
			int ok = fscanf(f, "%d", &s->port) == 1;
			fclose(f);
			if (ok)
				return 0;
		}
		usleep(10000);
	}
	unit_fail(__FILE__, __LINE__, "tls_server.py did not start");
	return -1;
}

static void server_stop(struct server *s)
{
	if (s->pid > 0) {
		int st;
		for (int i = 0; i < 200 && waitpid(s->pid, &st, WNOHANG) == 0; i++)
			usleep(10000);
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &st, 0);
		s->pid = 0;
	}
}

static int server_logged(const struct server *s, const char *what)
{
	char text[2048] = "";
	FILE *f = fopen(s->log, "r");
	if (!f)
		return 0;
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	return strstr(text, what) != NULL;
}

static int connect_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		unit_fail(__FILE__, __LINE__, "connect: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Sends cmd (NULL: nothing) and checks that the next line is want. */
static void exchange(struct io *io, const char *cmd, const char *want)
{
	char line[256];
	if (cmd) {
		CHECK_INT(io_puts(io, cmd), 0);
		CHECK_INT(io_flush(io), 0);
	}
	CHECK(io_getline(io, line, sizeof line) > 0);
	CHECK_STR(line, want);
}

/* One connection to a fresh server under the given parameters: the status of tls_start and
 * its reason; on success a line is sent and its echo checked, then QUIT. */
static enum tls_status try_tls(const char *cert, const char *extra, struct tls_params *p, char *reason, size_t rs,
                               char *desc, size_t ds)
{
	struct server s;
	struct io io;
	if (server_start(&s, cert, extra) < 0)
		return TLS_E_IO;
	int fd = connect_port(s.port);
	if (fd < 0) {
		server_stop(&s);
		return TLS_E_IO;
	}
	io_init_fd(&io, fd, 5000);
	enum tls_status st = tls_start(&io, p, reason, rs);
	if (desc && ds)
		desc[0] = 0;
	if (st == TLS_OK) {
		CHECK(tls_active(&io));
		if (desc)
			tls_describe(&io, desc, ds);
		exchange(&io, "hello over TLS\r\n", "echo: hello over TLS\r\n");
		exchange(&io, "QUIT\r\n", "221 bye\r\n");
	} else {
		CHECK(!tls_active(&io));
	}
	CHECK_INT(io_close(&io), 0);
	server_stop(&s);
	return st;
}

static struct tls_params verify_params(const char *name)
{
	struct tls_params p = {.policy = TLS_VERIFY, .server_name = name, .anchors = ca};
	return p;
}

#define SKIP_WITHOUT_TLS()              \
	do {                            \
		if (!tls_available())   \
			return;         \
		if (fixtures() < 0)     \
			return;         \
	} while (0)

TEST(tls_verified_roundtrip)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX], desc[128];
	struct tls_params p = verify_params("mail.test");
	CHECK_INT(try_tls("server", NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
	CHECK_STR(reason, "");
	CHECK(strstr(desc, "TLSv1.2 ECDHE-ECDSA-") == desc);
	CHECK(strstr(desc, " verified") != NULL);
	/* the same with an RSA certificate: ECDHE_RSA */
	p.server_name = "rsa.test";
	CHECK_INT(try_tls("rsa", NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
	if (!strstr(desc, "ECDHE-RSA-"))
		unit_fail(__FILE__, __LINE__, "desc %s", desc);
	/* a trailing dot and other case are the same name */
	p.server_name = "MAIL.test.";
	CHECK_INT(try_tls("server", NULL, &p, reason, sizeof reason, NULL, 0), TLS_OK);
}

/* Verification (tls=verify, the test CA): the server's certificate, the name asked for, the
 * status, and the reason: all of it, or its start (NULL: not checked). */
static const struct {
	const char *cert, *name;
	enum tls_status st;
	const char *reason, *reason_starts;
} verify_cases[] = {
	{"server", "other.test", TLS_E_CERT, "certificate is for mail.test, localhost, 127.0.0.1, not other.test"},
	{"expired", "mail.test", TLS_E_CERT, "certificate expired on 2020-02-01"},
	{"future", "mail.test", TLS_E_CERT, NULL, "certificate not yet valid: valid from 2098-01-01, clock is 20"},
	/* RFC 6125: a wildcard covers one label, never the parent */
	{"wild", "a.wild.test", TLS_OK, ""},
	{"wild", "wild.test", TLS_E_CERT},
	{"wild", "a.b.wild.test", TLS_E_CERT},
	/* no subjectAltName at all: the CN does not count either (docs/tls.md: no CN fallback) */
	{"cnonly", "cnonly.test", TLS_E_CERT, "certificate is for CN=cnonly.test only, no subjectAltName, not cnonly.test"},
	/* a dNSName exists: the CN does not count (BearSSL alone would accept good.test here) */
	{"cnsan", "good.test", TLS_E_CERT, "certificate is for other.test, not good.test"},
	{"cnsan", "other.test", TLS_OK, ""},
};

TEST(tls_verify_names_and_dates)
{
	SKIP_WITHOUT_TLS();
	for (size_t i = 0; i < ARRAY_LEN(verify_cases); i++) {
		char reason[TLS_REASON_MAX];
		struct tls_params p = verify_params(verify_cases[i].name);
		unit_case(verify_cases[i].name);
		CHECK_INT(try_tls(verify_cases[i].cert, NULL, &p, reason, sizeof reason, NULL, 0), verify_cases[i].st);
		if (verify_cases[i].reason)
			CHECK_STR(reason, verify_cases[i].reason);
		if (verify_cases[i].reason_starts)
			CHECK(strstr(reason, verify_cases[i].reason_starts) == reason);
	}
}

TEST(tls_clock_not_set)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX];
	char want[TLS_REASON_MAX], day[16];
	struct tls_params p = verify_params("mail.test");
	p.now = 2 * 86400 + 3600; /* a board without RTC, two days after power-on in 1970 */
	CHECK_INT(try_tls("server", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CLOCK);
	time_t t = time(NULL);
	strftime(day, sizeof day, "%Y-%m-%d", gmtime(&t));
	snprintf(want, sizeof want, "system clock is 1970-01-03, certificate not yet valid (valid from %s): clock not set", day);
	CHECK_STR(reason, want);
	/* an expired certificate with an unset clock is still expired, not "clock not set" */
	p.now = TLS_CLOCK_PLAUSIBLE - 86400;
	CHECK_INT(try_tls("expired", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CERT);
	CHECK_STR(reason, "certificate expired on 2020-02-01");
	/* a clock that is set but wrong the other way is a certificate problem, not "clock not set" */
	p.now = t + 200LL * 365 * 86400;
	CHECK_INT(try_tls("server", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CERT);
	CHECK(strstr(reason, "certificate expired on 2099-12-31") != NULL);
}

TEST(tls_untrusted_ca)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX], desc[128];
	struct tls_params p = verify_params("mail.test");
	CHECK_INT(try_tls("untrusted", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CERT);
	CHECK_STR(reason, "certificate verification failed: the chain does not lead to a trusted CA");
	/* encrypt: TLS without verification accepts it; so does may */
	p.policy = TLS_ENCRYPT;
	p.anchors = NULL;
	CHECK_INT(try_tls("untrusted", NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
	CHECK(strstr(desc, " unverified") != NULL);
	p.policy = TLS_MAY;
	p.server_name = NULL;
	CHECK_INT(try_tls("expired", NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
}

TEST(tls_self_signed_relay_as_anchor)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX], desc[128], path[128];
	/* CAFILE holding just the relay's own certificate, with or without CA:TRUE */
	static const char *const kinds[] = {"selfca", "selfee"};
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s.pem", fx, kinds[i]);
		struct tls_anchors *own = tls_anchors_load(path, reason, sizeof reason);
		CHECK(own != NULL);
		struct tls_params p = {.policy = TLS_VERIFY, .server_name = "relay.test", .anchors = own};
		CHECK_INT(try_tls(kinds[i], NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
		CHECK(strstr(desc, " verified") != NULL);
		p.server_name = "other.test";
		CHECK_INT(try_tls(kinds[i], NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CERT);
		/* the other relay's certificate is not trusted by this one */
		p.server_name = "relay.test";
		CHECK_INT(try_tls(kinds[1 - i], NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CERT);
		tls_anchors_free(own);
	}
}

TEST(tls_sni_sent)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX], sent[64] = "";
	struct server s;
	struct io io;
	/* the server's default certificate is untrusted; only SNI "sni.test" gets the good one */
	CHECK_INT(server_start(&s, "untrusted", "--sni-name sni.test --cert2 @/sni.pem --key2 @/sni.key"), 0);
	int fd = connect_port(s.port);
	io_init_fd(&io, fd, 5000);
	struct tls_params p = verify_params("sni.test");
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_OK);
	io_close(&io);
	server_stop(&s);
	FILE *f = fopen(s.sni, "r");
	CHECK(f != NULL);
	if (f) {
		CHECK(fgets(sent, sizeof sent, f) != NULL);
		fclose(f);
	}
	CHECK_STR(sent, "sni.test");
	/* an address literal: no SNI (RFC 6066), and the iPAddress SAN is what is verified */
	CHECK_INT(server_start(&s, "server", NULL), 0);
	fd = connect_port(s.port);
	io_init_fd(&io, fd, 5000);
	p = verify_params("[127.0.0.1]");
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_OK);
	io_close(&io);
	server_stop(&s);
	f = fopen(s.sni, "r");
	sent[0] = 0;
	if (f) {
		if (!fgets(sent, sizeof sent, f))
			sent[0] = 0;
		fclose(f);
	}
	CHECK_STR(sent, "");
}

/* The SPKI pin of a fixture certificate, the way docs/tls.md tells users to compute it. */
static void pin_of(const char *name, char *out, size_t size)
{
	char cmd[400];
	snprintf(cmd, sizeof cmd,
	         "openssl x509 -in %s/%s.pem -pubkey -noout | openssl pkey -pubin -outform der | "
	         "openssl dgst -sha256 -binary | base64",
	         fx, name);
	FILE *p = popen(cmd, "r");
	out[0] = 0;
	if (p) {
		if (!fgets(out, (int)size, p))
			out[0] = 0;
		pclose(p);
	}
	out[strcspn(out, "\n")] = 0;
}

TEST(tls_pins)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX], desc[128], pin[80], pins[200], other[80];
	pin_of("untrusted", pin, sizeof pin);
	pin_of("server", other, sizeof other);
	CHECK_INT(strlen(pin), 44);
	/* encrypt + pin: the pin replaces chain verification (a self-signed private relay) */
	snprintf(pins, sizeof pins, "sha256//%s, sha256//%s", other, pin);
	struct tls_params p = {.policy = TLS_ENCRYPT, .server_name = "mail.test", .pins = pins};
	CHECK_INT(try_tls("untrusted", NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
	CHECK(strstr(desc, " pinned") != NULL);
	p.pins = other;
	CHECK_INT(try_tls("untrusted", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_PIN);
	snprintf(pins, sizeof pins, "server key sha256//%s matches no pin", pin);
	CHECK_STR(reason, pins);
	/* verify + pin: both must hold */
	p = verify_params("mail.test");
	p.pins = other;
	CHECK_INT(try_tls("server", NULL, &p, reason, sizeof reason, desc, sizeof desc), TLS_OK);
	CHECK(strstr(desc, "verified+pinned") != NULL);
	p.pins = pin;
	CHECK_INT(try_tls("server", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_PIN);
	CHECK_INT(try_tls("untrusted", NULL, &p, reason, sizeof reason, NULL, 0), TLS_E_CERT);
}

TEST(tls_client_certificate)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX], cert[128], key[128];
	struct server s;
	struct io io;
	snprintf(cert, sizeof cert, "%s/client.pem", fx);
	snprintf(key, sizeof key, "%s/client.key", fx);
	struct tls_params p = verify_params("mail.test");
	p.client_cert = cert;
	p.client_key = key;
	CHECK_INT(try_tls("server", "--client-ca @/ca.pem", &p, reason, sizeof reason, NULL, 0), TLS_OK);
	/* without one, the server refuses */
	CHECK_INT(server_start(&s, "server", "--client-ca @/ca.pem"), 0);
	io_init_fd(&io, connect_port(s.port), 5000);
	p.client_cert = p.client_key = NULL;
	enum tls_status st = tls_start(&io, &p, reason, sizeof reason);
	if (st == TLS_OK) {
		/* TLS 1.2 servers may reject only after the client's Finished: the next read fails */
		char line[64];
		io_puts(&io, "x\r\n");
		io_flush(&io);
		CHECK(io_getline(&io, line, sizeof line) <= 0);
	} else {
		CHECK(st == TLS_E_PROTOCOL || st == TLS_E_IO);
	}
	io_close(&io);
	server_stop(&s);
	CHECK(server_logged(&s, "handshake failed"));
	/* a key readable by others is refused before connecting anywhere */
	chmod(key, 0644);
	p.client_cert = cert;
	p.client_key = key;
	io_init_fd(&io, -1, 1000);
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	CHECK(strstr(reason, "mode 0644") != NULL);
	chmod(key, 0600);
}

TEST(tls_starttls_discards_injection)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX];
	struct server s;
	struct io io;
	CHECK_INT(server_start(&s, "server", "--starttls --inject 250-INJECTED"), 0);
	io_init_fd(&io, connect_port(s.port), 5000);
	exchange(&io, NULL, "220 test ESMTP\r\n");
	exchange(&io, "STARTTLS\r\n", "220 go ahead\r\n");
	/* give the injected line time to arrive; it must be dropped, not read after TLS */
	usleep(100000);
	struct tls_params p = verify_params("mail.test");
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_OK);
	CHECK_INT(io_pending(&io), 0);
	exchange(&io, "EHLO client\r\n", "echo: EHLO client\r\n");
	io_close(&io);
	server_stop(&s);
	/* unflushed output at STARTTLS is a caller bug, refused */
	CHECK_INT(server_start(&s, "server", "--starttls"), 0);
	io_init_fd(&io, connect_port(s.port), 5000);
	io_puts(&io, "STARTTLS\r\n");
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	io_close(&io);
	server_stop(&s);
}

TEST(tls_pipelined_batches_and_big_records)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX];
	static char line[40000];
	struct server s;
	struct io io;
	CHECK_INT(server_start(&s, "server", "--big 30000"), 0);
	io_init_fd(&io, connect_port(s.port), 5000);
	struct tls_params p = verify_params("mail.test");
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_OK);
	/* a pipelined batch: 200 commands in one flush (several io buffers), then the replies */
	for (int i = 0; i < 200; i++) {
		char cmd[64];
		snprintf(cmd, sizeof cmd, "RCPT TO:<user%d@example.test>\r\n", i);
		CHECK_INT(io_puts(&io, cmd), 0);
	}
	CHECK_INT(io_flush(&io), 0);
	int ok = 0;
	for (int i = 0; i < 200; i++) {
		char want[80];
		snprintf(want, sizeof want, "echo: RCPT TO:<user%d@example.test>\r\n", i);
		ok += io_getline(&io, line, sizeof line) > 0 && strcmp(line, want) == 0;
	}
	CHECK_INT(ok, 200);
	/* a reply larger than one TLS record (16 KiB) and than the half-duplex buffer */
	io_puts(&io, "BIG\r\n");
	io_flush(&io);
	CHECK_INT(io_getline(&io, line, sizeof line), 30002);
	/* a body of 1 MiB in lines, echoed back: reads interleave with writes per batch */
	for (int b = 0; b < 16; b++) {
		for (int i = 0; i < 64; i++) {
			memset(line, 'a' + b, 1022);
			memcpy(line + 1022, "\r\n", 3);
			io_puts(&io, line);
		}
		CHECK_INT(io_flush(&io), 0);
		int good = 0;
		for (int i = 0; i < 64; i++)
			good += io_getline(&io, line, sizeof line) == 1030 && line[6] == 'a' + b;
		CHECK_INT(good, 64);
	}
	io_puts(&io, "QUIT\r\n");
	io_flush(&io);
	CHECK(io_getline(&io, line, sizeof line) > 0);
	/* after 221 the server closes: EOF, not an error */
	CHECK_INT(io_getline(&io, line, sizeof line), 0);
	io_close(&io);
	server_stop(&s);
}

/* A peer on a plain socket: mode 0 never answers, 1 closes at once, 2 speaks plain SMTP. */
static pid_t plain_peer(int mode, int *port)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof sa;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(ls, (struct sockaddr *)&sa, sizeof sa);
	listen(ls, 1);
	getsockname(ls, (struct sockaddr *)&sa, &sl);
	*port = ntohs(sa.sin_port);
	pid_t pid = fork();
	if (pid == 0) {
		int c = accept(ls, NULL, NULL);
		if (mode == 1)
			_exit(0);
		if (mode == 2) {
			char b[512];
			if (write(c, "220 plain text here\r\n", 21) < 0 || read(c, b, sizeof b) < 0)
				_exit(1);
		}
		sleep(3);
		_exit(0);
	}
	close(ls);
	return pid;
}

TEST(tls_failures_are_precise)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX];
	struct io io;
	int port, st;
	struct tls_params p = {.policy = TLS_ENCRYPT};
	pid_t pid = plain_peer(0, &port);
	io_init_fd(&io, connect_port(port), 300);
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_IO);
	CHECK_STR(reason, "timeout during the TLS handshake");
	io_close(&io);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	pid = plain_peer(1, &port);
	io_init_fd(&io, connect_port(port), 3000);
	enum tls_status s = tls_start(&io, &p, reason, sizeof reason);
	CHECK_INT(s, TLS_E_IO);
	CHECK(strstr(reason, "TLS handshake") != NULL);
	io_close(&io);
	waitpid(pid, &st, 0);
	pid = plain_peer(2, &port);
	io_init_fd(&io, connect_port(port), 3000);
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_PROTOCOL);
	CHECK_STR(reason, "TLS handshake failed: the server does not speak TLS 1.2 (or not TLS at all)");
	io_close(&io);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

TEST(tls_configuration_errors)
{
	SKIP_WITHOUT_TLS();
	char reason[TLS_REASON_MAX];
	struct io io;
	io_init_fd(&io, -1, 1000);
	struct tls_params p = {.policy = TLS_VERIFY, .server_name = "mail.test"};
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	CHECK_STR(reason, "TLS policy verify needs trust anchors");
	p.anchors = ca;
	p.server_name = NULL;
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	CHECK_STR(reason, "TLS policy verify needs a server name");
	p.server_name = "mail.test";
	p.pins = "sha256//notbase64";
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	p.pins = NULL;
	p.client_cert = "/nonexistent.pem";
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	p.client_key = "/nonexistent.key";
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
	CHECK(strstr(reason, "/nonexistent.pem") != NULL);
	p.policy = TLS_NONE;
	CHECK_INT(tls_start(&io, &p, reason, sizeof reason), TLS_E_CONFIG);
}

TEST(tls_anchor_loading)
{
	SKIP_WITHOUT_TLS();
	char err[TLS_REASON_MAX], path[128];
	/* the system bundle (Debian's has well over 100 CAs), parsed as the TA does */
	struct tls_anchors *a = tls_anchors_load(NULL, err, sizeof err);
	if (access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) {
		CHECK(a != NULL);
		CHECK(tls_anchors_count(a) > 100);
		CHECK_STR(tls_anchors_file(a), "/etc/ssl/certs/ca-certificates.crt");
	}
	tls_anchors_free(a);
	snprintf(path, sizeof path, "%s/server-chain.pem", fx);
	a = tls_anchors_load(path, err, sizeof err);
	CHECK_INT(tls_anchors_count(a), 2);
	tls_anchors_free(a);
	CHECK(tls_anchors_load("/nonexistent/ca.pem", err, sizeof err) == NULL);
	CHECK(strstr(err, "/nonexistent/ca.pem") != NULL);
	/* a key file has no CERTIFICATE */
	snprintf(path, sizeof path, "%s/server.key", fx);
	CHECK(tls_anchors_load(path, err, sizeof err) == NULL);
	CHECK(strstr(err, "no usable CA certificate") != NULL);
	static const char trunc[] = "-----BEGIN CERTIFICATE-----\nMIIB\n";
	CHECK(tls_anchors_parse(trunc, sizeof trunc - 1, "t", err, sizeof err) == NULL);
	static const char junk[] = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
	CHECK(tls_anchors_parse(junk, sizeof junk - 1, "j", err, sizeof err) == NULL);
	CHECK(strstr(err, "j:") != NULL);
}

#if ENABLE_TLS
#include "tls_bearssl.h"

/* lib/tls.c defines br_rsa_i31_public() (BearSSL's steps with br_i31_modpow): the same results
 * as BearSSL's i15 code, for keys of three sizes, values below and at or above n, and an even
 * modulus. */
TEST(tls_rsa_public_as_bearssl)
{
	static unsigned char kpriv[BR_RSA_KBUF_PRIV_SIZE(4096)], kpub[BR_RSA_KBUF_PUB_SIZE(4096)];
	static const unsigned sizes[] = {1024, 2048, 4096};
	br_hmac_drbg_context rng;
	br_hmac_drbg_init(&rng, &br_sha256_vtable, "spoolbox", 8);
	for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
		br_rsa_private_key sk;
		br_rsa_public_key pk;
		CHECK_INT(br_rsa_i15_keygen(&rng.vtable, &sk, kpriv, &pk, kpub, sizes[k], 65537), 1);
		for (int i = 0; i < 6; i++) {
			unsigned char a[512], b[512];
			br_hmac_drbg_generate(&rng, a, pk.nlen);
			a[0] = 0; /* below n */
			if (i == 4)
				memcpy(a, pk.n, pk.nlen); /* x = n: refused */
			if (i == 5)
				memset(a, 0xff, pk.nlen); /* x > n: refused */
			memcpy(b, a, pk.nlen);
			uint32_t ra = br_rsa_i31_public(a, pk.nlen, &pk), rb = br_rsa_i15_public(b, pk.nlen, &pk);
			CHECK_INT(ra, rb);
			CHECK_INT(ra, i < 4);
			if (ra)
				CHECK(memcmp(a, b, pk.nlen) == 0);
		}
		CHECK_INT(br_rsa_i31_public(kpub, pk.nlen - 1, &pk), 0); /* a wrong length */
	}
	unsigned char even_n[128], x[128] = {1};
	memset(even_n, 0xf0, sizeof even_n);
	br_rsa_public_key even = {even_n, sizeof even_n, (unsigned char *)"\x01\x00\x01", 3};
	CHECK_INT(br_rsa_i31_public(x, sizeof x, &even), 0);
}
#endif
