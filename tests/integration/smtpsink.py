"""An aiosmtpd SMTP server for tests. It records every transaction (envelope sender, recipients,
ESMTP and DSN parameters, exact bytes, TLS, AUTH user), counts connections, and can be told to
fail in chosen ways: chosen replies to MAIL/RCPT/DATA, a greeting such as "421 busy", dropping
the connection in the middle of DATA, extensions added to or removed from its EHLO reply,
STARTTLS or implicit TLS with a given certificate, AUTH PLAIN/LOGIN against a user table.

Also: TestCA, a certificate authority made with the openssl command line for TLS tests."""
import asyncio
import os
import socket
import ssl
import subprocess
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword


class Received:
    def __init__(self, mail_from, rcpt_tos, data, mail_options, rcpt_options, peer, dsn_mail=None,
                 dsn_rcpt=None, tls=False, auth_user=None, pipelined=0, peer_uid=None):
        self.mail_from = mail_from
        self.rcpt_tos = rcpt_tos
        self.data = data
        self.mail_options = mail_options
        self.rcpt_options = rcpt_options
        self.peer = peer
        self.dsn_mail = dsn_mail or {}      # {"RET": "FULL", "ENVID": "..."}
        self.dsn_rcpt = dsn_rcpt or []      # [{"NOTIFY": ..., "ORCPT": ...}] per accepted rcpt
        self.tls = tls
        self.auth_user = auth_user
        self.pipelined = pipelined          # bytes already buffered behind MAIL FROM
        self.peer_uid = peer_uid            # the sending process's uid (/proc/net/tcp)

    def __repr__(self):
        return f"<Received from={self.mail_from!r} to={self.rcpt_tos!r} {len(self.data)} bytes>"


def peer_uid(peer, server_port):
    """The uid owning the client's end of a live connection from 127.0.0.1 (its socket's line
    in /proc/net/tcp: established, local port = the peer's port, remote port = ours), or None:
    which user the sending process ran as. (A TIME_WAIT line of an earlier connection on the
    same port shows uid 0, and another connection may share the local port towards another
    server: neither may answer.)"""
    port, ours = "%04X" % peer[1], "%04X" % server_port
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[1].rsplit(":", 1)[1] == port and f[2].rsplit(":", 1)[1] == ours and f[3] == "01":
                return int(f[7])
    return None


def _split_params(arg, names):
    """Removes NAME=value tokens (names upper case) from an SMTP argument; returns both."""
    kept, found = [], {}
    for tok in arg.split(" "):
        key, eq, val = tok.partition("=")
        if eq and key.upper() in names:
            found[key.upper()] = val
        else:
            kept.append(tok)
    return " ".join(kept), found


class Handler:
    def __init__(self, sink):
        self.sink = sink

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        out = [r for r in responses if r[4:].split(" ")[0].upper() not in self.sink.ehlo_drop]
        extra = [f"250-{kw}" for kw in self.sink.ehlo_add if not (kw == "DSN" and "DSN" in self.sink.ehlo_drop)]
        # Keep the last line "250 ..." last.
        last = out.pop()
        out.extend(extra)
        out.append("250-" + last[4:])
        out[-1] = "250 " + out[-1][4:]
        return out

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        reply = self.sink.rcpt_replies.get(address)
        if callable(reply):
            reply = reply()
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.append(rcpt_options)
        if not hasattr(envelope, "dsn_rcpt"):
            envelope.dsn_rcpt = []
        envelope.dsn_rcpt.append(getattr(server, "pending_rcpt_dsn", {}))
        return "250 2.1.5 OK"

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        # How much the client had sent behind MAIL FROM when we read it: > 0 means pipelined.
        envelope.pipelined = len(server._reader._buffer)
        reply = self.sink.mail_reply
        if isinstance(reply, list):
            reply = reply.pop(0) if reply else None
        if reply:
            return reply
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        envelope.dsn_mail = getattr(server, "pending_mail_dsn", {})
        return "250 2.1.0 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.sink.data_replies:
            reply = self.sink.data_replies.pop(0)
            if reply:
                return reply
        user = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        self.sink.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                           envelope.original_content or envelope.content,
                                           list(envelope.mail_options), list(envelope.rcpt_options),
                                           session.peer, getattr(envelope, "dsn_mail", {}),
                                           list(getattr(envelope, "dsn_rcpt", [])),
                                           session.ssl is not None or self.sink.tls == "implicit", user,
                                           getattr(envelope, "pipelined", 0), peer_uid(session.peer, self.sink.port)))
        return "250 2.0.0 OK queued"


class CountingSMTP(SMTP):
    sink_ref = None

    def connection_made(self, transport):
        self.sink_ref.connections += 1
        super().connection_made(transport)

    async def _handle_client(self):
        sink = self.sink_ref
        if sink.greeting:
            greeting = sink.greeting.pop(0) if isinstance(sink.greeting, list) else sink.greeting
            if greeting:
                await self.push(greeting)
                self.transport.close()
                return
        await super()._handle_client()

    async def smtp_MAIL(self, arg):
        arg, self.pending_mail_dsn = _split_params(arg or "", {"RET", "ENVID"})
        if self.pending_mail_dsn and "DSN" not in self.sink_ref.ehlo_add:
            return await self.push("555 5.5.4 DSN parameters without DSN")
        return await super().smtp_MAIL(arg)

    async def smtp_RCPT(self, arg):
        arg, self.pending_rcpt_dsn = _split_params(arg or "", {"NOTIFY", "ORCPT"})
        if self.pending_rcpt_dsn and "DSN" not in self.sink_ref.ehlo_add:
            return await self.push("555 5.5.4 DSN parameters without DSN")
        return await super().smtp_RCPT(arg)

    async def smtp_RSET(self, arg):
        # Bytes already waiting behind RSET: > 0 means it was pipelined with MAIL.
        self.sink_ref.rsets.append(len(self._reader._buffer))
        return await super().smtp_RSET(arg)

    async def auth_XOAUTH2(self, _, args):
        # RFC-less but documented by Google/Microsoft: base64("user=U\x01auth=Bearer T\x01\x01").
        import base64
        try:
            raw = base64.b64decode(args[1], validate=True).decode()
            fields = dict(f.split("=", 1) for f in raw.split("\x01") if f)
            user, token = fields["user"], fields["auth"].split(" ", 1)[1]
        except Exception:
            await self.push("501 5.5.2 bad XOAUTH2 response")
            return AuthResult(success=False, handled=True)
        return self._authenticate("XOAUTH2", LoginPassword(user.encode(), token.encode()))

    async def auth_CRAM__MD5(self, _, args):
        # RFC 2195: the server sends a challenge, the client answers "user hex(HMAC-MD5)".
        import hashlib
        import hmac
        challenge = b"<%d.%d@sink.test>" % (os.getpid(), self.sink_ref.connections)
        resp = await self.challenge_auth(challenge)
        try:
            user, digest = resp.decode().split(" ", 1)
        except Exception:
            return AuthResult(success=False)
        secret = (self.sink_ref.users or {}).get(user)
        ok = secret is not None and hmac.compare_digest(
            hmac.new(secret.encode(), challenge, hashlib.md5).hexdigest(), digest)
        self.sink_ref.logins.append(("CRAM-MD5", user, ok))
        return AuthResult(success=ok, handled=False, auth_data=LoginPassword(user.encode(), b""))

    async def smtp_DATA(self, arg):
        sink = self.sink_ref
        if sink.hangup_after_354 and self.envelope.rcpt_tos:
            # 354 and the hang-up together: the client finds the close before it sends a byte.
            self.transport.write(b"354 go ahead\r\n")
            sink.dropped += 1
            # transport.close() would send the FIN only on a later loop turn: send it now.
            self.transport.get_extra_info("socket").shutdown(socket.SHUT_WR)
            self.transport.close()
            return
        if sink.drop_in_data and self.envelope.rcpt_tos:
            # Take part of the message, then vanish: the client must not count it delivered.
            await self.push("354 End data with <CR><LF>.<CR><LF>")
            await self._reader.read(sink.drop_in_data)
            sink.dropped += 1
            self.transport.close()
            return
        r = await super().smtp_DATA(arg)
        if sink.close_after_data:
            # A server that hangs up at once after a message (an idle timeout of zero).
            self.transport.close()
        return r


class SmtpSink:
    """The server. Keyword arguments not listed below go to aiosmtpd's SMTP()."""

    def __init__(self, host="127.0.0.1", port=0, tls=None, cert=None, key=None, users=None,
                 auth_require_tls=True, pipelining=True, dsn=True, ehlo_drop=(), cram_md5=False,
                 client_ca=None, **smtp_kwargs):
        self.host = host
        self.port = port
        self.messages = []
        self.rcpt_replies = {}   # address -> "550 5.1.1 no such user" (or a callable giving one)
        self.mail_reply = None   # e.g. "451 4.3.0 try later", or a list consumed per MAIL
        self.data_replies = []   # consumed one per DATA; None means accept
        self.greeting = None     # e.g. "421 4.3.2 busy": said instead of 220, then hang up
        self.hangup_after_354 = False
        self.drop_in_data = 0    # > 0: read that many body bytes after 354, then hang up
        self.dropped = 0
        self.rsets = []          # per RSET: bytes pipelined behind it
        self.close_after_data = False  # hang up after each message, without a word
        self.connections = 0
        self.logins = []         # (mechanism, user, success)
        self.users = users
        self.tls = tls           # None, "starttls" or "implicit"
        self.ehlo_add = (["PIPELINING"] if pipelining else []) + (["DSN"] if dsn else [])
        self.ehlo_drop = {k.upper() for k in ehlo_drop}
        self.smtp_kwargs = dict(smtp_kwargs)
        self.smtp_kwargs.setdefault("decode_data", False)
        self.smtp_kwargs.setdefault("enable_SMTPUTF8", True)
        self.ssl_context = None
        if tls:
            self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ssl_context.load_cert_chain(cert, key)
            if client_ca:  # require a client certificate from this CA
                self.ssl_context.verify_mode = ssl.CERT_REQUIRED
                self.ssl_context.load_verify_locations(client_ca)
            if tls == "starttls":
                self.smtp_kwargs["tls_context"] = self.ssl_context
        if users is not None:
            self.smtp_kwargs["authenticator"] = self._authenticate
            self.smtp_kwargs["auth_require_tls"] = auth_require_tls
            if not cram_md5:
                self.smtp_kwargs.setdefault("auth_exclude_mechanism", ["CRAM-MD5"])
        self.controller = None

    def smarthost_env(self):
        """The environment that routes all mail to this server in clear text."""
        return {"SMARTHOST": f"[{self.host}]:{self.port} tls=none"}

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and self.users.get(auth_data.login.decode(errors="replace")) == auth_data.password.decode(errors="replace"))
        self.logins.append((mechanism, auth_data.login.decode(errors="replace") if isinstance(auth_data, LoginPassword) else None, ok))
        return AuthResult(success=ok, handled=False, auth_data=auth_data)

    def start(self):
        sink = self

        class _SMTP(CountingSMTP):
            sink_ref = sink

        class _Controller(Controller):
            def factory(self_inner):
                return _SMTP(self_inner.handler, **sink.smtp_kwargs)

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        if self.port == 0:
            s = socket.socket(family)
            s.bind((self.host, 0))
            self.port = s.getsockname()[1]
            s.close()
        kw = {}
        if self.tls == "implicit":
            kw["ssl_context"] = self.ssl_context
        self.controller = _Controller(Handler(self), hostname=self.host, port=self.port, **kw)
        self.controller.start()
        # The controller's own readiness probe counted as a connection.
        self.connections = 0
        return self

    def stop(self):
        if self.controller:
            self.controller.stop()
            self.controller = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def free_port(host="127.0.0.1"):
    """A port nobody listens on (bound and released)."""
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class TestCA:
    __test__ = False  # not a pytest test class
    """A throw-away certificate authority made with the openssl command line."""

    def __init__(self, directory, name="spoolbox test CA", extra_ext=(), start=None, end=None):
        """extra_ext: more CA extensions ("nameConstraints=..."); start/end (YYYYMMDDHHMMSSZ): a CA
        certificate valid only then (an expired trust anchor)."""
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.key = os.path.join(self.dir, "ca.key")
        self.cert = os.path.join(self.dir, "ca.pem")
        with open(os.path.join(self.dir, "index.txt"), "w"):
            pass
        with open(os.path.join(self.dir, "serial"), "w") as f:
            f.write("1000\n")
        exts = ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"] + list(extra_ext)
        if not (start or end):
            args = []
            for e in exts:
                args += ["-addext", e]
            self._openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                          "-keyout", self.key, "-out", self.cert, "-days", "3650", "-subj", "/CN=" + name, *args)
            return
        csr, ext = os.path.join(self.dir, "ca.csr"), os.path.join(self.dir, "ca.ext")
        with open(ext, "w") as f:
            f.write("\n".join(exts) + "\n")
        self._openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", self.key,
                      "-out", csr, "-subj", "/CN=" + name)
        self._openssl("ca", "-batch", "-selfsign", "-config", self._conf("ca"), "-keyfile", self.key, "-in", csr,
                      "-out", self.cert, "-extfile", ext, "-notext", "-startdate", start or "20200101000000Z",
                      "-enddate", end or "20300101000000Z")

    def _openssl(self, *args):
        p = subprocess.run(["openssl"] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("openssl %s: %s" % (args[0], p.stderr))

    def _conf(self, name):
        conf = os.path.join(self.dir, name + ".cnf")
        with open(conf, "w") as f:
            f.write(f"""[ca]
default_ca = test
[test]
dir = {self.dir}
database = {self.dir}/index.txt
serial = {self.dir}/serial
new_certs_dir = {self.dir}
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
commonName = supplied
""")
        return conf

    def issue(self, name, dns_names, start=None, end=None, days=365, eku="serverAuth", newkey=("ec", "-pkeyopt",
              "ec_paramgen_curve:P-256"), san=True, cn=None):
        """Issues a server certificate for dns_names; start/end as YYYYMMDDHHMMSSZ make it
        expired or not yet valid; eku=None leaves extendedKeyUsage out; newkey are openssl req's
        -newkey arguments ("rsa:1024",); san=False makes a CN-only certificate.
        Returns (cert_path, key_path)."""
        key = os.path.join(self.dir, name + ".key")
        csr = os.path.join(self.dir, name + ".csr")
        cert = os.path.join(self.dir, name + ".pem")
        ext = os.path.join(self.dir, name + ".ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature" + (",keyEncipherment" if newkey[0].startswith("rsa") else "") + "\n"
                    + ("extendedKeyUsage=" + eku + "\n" if eku else "")
                    + ("subjectAltName=" + ",".join("DNS:" + d for d in dns_names) + "\n" if san else ""))
        conf = self._conf(name)
        self._openssl("req", "-newkey", *newkey, "-nodes", "-keyout", key,
                      "-out", csr, "-subj", "/CN=" + (cn or dns_names[0]))
        args = ["ca", "-batch", "-config", conf, "-cert", self.cert, "-keyfile", self.key, "-in", csr,
                "-out", cert, "-extfile", ext, "-notext"]
        if start or end:
            args += ["-startdate", start or "20200101000000Z", "-enddate", end or "20300101000000Z"]
        else:
            args += ["-days", str(days)]
        self._openssl(*args)
        return cert, key
