"""The smtp client against a hostile network (issue 16), each case against a server this test
builds on 127.0.0.1 (Python ssl, certificates made by openssl in the test's tmp dir):
  - passwords only to a peer that proved who it is (verified or pinned); CRAM-MD5 allowed; the
    explicit opt-in `unverified_auth`, and the --check warning;
  - a pin requires TLS: a mismatch defers, never a retry in clear text, with or without
    credentials, and a server without STARTTLS gets nothing;
  - a reply before the end of data inside TLS (one record with the 354, or a record of its own)
    is not a delivery;
  - a final reply line cut by a close (clear text, TLS with and without close_notify) is not a
    reply: deferred, never "sent";
  - certificate rules under tls=verify: RSA under 2048 bits, a clientAuth-only leaf, a CN-only
    certificate, name constraints, an expired trust anchor; SNI without the trailing dot."""
import base64
import hashlib
import os
import socket
import ssl
import subprocess

import pytest

from conftest import HAVE_TLS
from listener import Listener
from smtpsink import SmtpSink, TestCA
from ta_driver import TA, Queue

pytestmark = pytest.mark.skipif(not HAVE_TLS, reason="this spoolbox is built without TLS")

MSG = b"From: root@box.example\nSubject: hostile\n\n" + b"secret body line\n" * 20
PASSWORD = "s3cret pass"


def recv_until(f, sep):
    """What f's socket sends up to sep (taken off f["buf"], sep dropped); EOFError at the end."""
    while sep not in f["buf"]:
        d = f["sock"].recv(65536)
        if not d:
            raise EOFError
        f["buf"] += d
    part, f["buf"] = f["buf"].split(sep, 1)
    return part


class Server:
    """A scripted SMTP server, one thread per connection. starttls: offer STARTTLS with
    cert/key; auth: the mechanisms its EHLO offers (it decodes and records what it is sent);
    data: what happens at DATA ("normal", "early-one", "early-split", "cut-close",
    "cut-notify", "cut-abort"). Records connections, SNI names, AUTH attempts, whether the
    end of data arrived, and the messages it accepted."""

    def __init__(self, cert=None, key=None, starttls=True, auth=("PLAIN", "LOGIN"), data="normal"):
        self.ctx = None
        if cert:
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let a weak key be offered at all
            self.ctx.load_cert_chain(cert, key)
            self.ctx.sni_callback = lambda sock, name, ctx: self.sni.append(name)
        self.starttls = starttls and cert is not None
        self.auth = auth
        self.data = data
        self.sni, self.auths, self.ends, self.accepted = [], [], 0, []
        self.listener = Listener(serve=self._serve, backlog=8)
        self.port = self.listener.port

    @property
    def connections(self):
        return self.listener.accepted

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.listener.close()

    def _serve(self, c):
        f = {"sock": c, "buf": b"", "tls": False}

        def send(b):
            f["sock"].sendall(b)

        def line():
            return recv_until(f, b"\r\n").decode("latin-1")

        try:
            send(b"220 hostile ESMTP\r\n")
            while True:
                cmd = line()
                verb = cmd.split(" ")[0].upper()
                if verb in ("EHLO", "HELO"):
                    ext = ["PIPELINING", "8BITMIME"]
                    if self.starttls and not f["tls"]:
                        ext.append("STARTTLS")
                    if self.auth:
                        ext.append("AUTH " + " ".join(self.auth))
                    send(("250-hostile\r\n" + "".join(f"250-{e}\r\n" for e in ext[:-1]) + f"250 {ext[-1]}\r\n").encode())
                elif verb == "STARTTLS":
                    send(b"220 2.0.0 go ahead\r\n")
                    f["sock"] = self.ctx.wrap_socket(f["sock"], server_side=True)
                    f["tls"] = True
                    f["buf"] = b""
                elif verb == "AUTH":
                    parts = cmd.split(" ")
                    mech = parts[1].upper()
                    if mech == "PLAIN":
                        resp = parts[2] if len(parts) > 2 else (send(b"334 \r\n") or line())
                        self.auths.append(("PLAIN", base64.b64decode(resp).split(b"\0")[1:]))
                    elif mech == "LOGIN":
                        send(b"334 VXNlcm5hbWU6\r\n")
                        u = base64.b64decode(line())
                        send(b"334 UGFzc3dvcmQ6\r\n")
                        self.auths.append(("LOGIN", [u, base64.b64decode(line())]))
                    elif mech == "CRAM-MD5":
                        send(b"334 " + base64.b64encode(b"<1.2@hostile>") + b"\r\n")
                        self.auths.append(("CRAM-MD5", base64.b64decode(line()).split(b" ")))
                    send(b"235 2.7.0 ok\r\n")
                elif verb == "DATA":
                    self._data(f, send)
                elif verb == "QUIT":
                    send(b"221 bye\r\n")
                    return
                else:
                    send(b"250 2.0.0 ok\r\n")
        except (EOFError, OSError, ssl.SSLError, ValueError):
            pass
        finally:
            try:
                f["sock"].close()
            except OSError:
                pass

    def _data(self, f, send):
        mode = self.data
        if mode == "early-one":
            send(b"354 go\r\n250 2.0.0 early ok\r\n")
        elif mode == "early-split":
            send(b"354 go\r\n")
            send(b"250 2.0.0 early ok\r\n")
        else:
            send(b"354 go\r\n")
        body = recv_until(f, b"\r\n.\r\n")
        self.ends += 1
        if mode.startswith("early"):
            send(b"554 5.7.1 rejected for real\r\n")
            return
        if mode.startswith("cut"):
            send(b"250 2.0.0 queu")
            s = f["sock"]
            if mode == "cut-notify" and f["tls"]:
                s.unwrap().close()
            elif f["tls"] and mode == "cut-abort":
                # no close_notify: the TCP connection just ends
                socket.socket(fileno=s.detach()).close()
            else:
                s.close()
            raise EOFError
        self.accepted.append(body)
        send(b"250 2.0.0 queued\r\n")


def intermediate(root, ca, ext):
    """Re-signs ca's certificate by root as an intermediate CA with the extensions ext."""
    csr, extfile = os.path.join(ca.dir, "int.csr"), os.path.join(ca.dir, "int.ext")
    with open(extfile, "w") as f:
        f.write("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n" + "".join(e + "\n" for e in ext))
    subprocess.run(["openssl", "x509", "-x509toreq", "-in", ca.cert, "-signkey", ca.key, "-out", csr],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "ca", "-batch", "-config", root._conf("int"), "-cert", root.cert, "-keyfile", root.key,
                    "-in", csr, "-out", ca.cert, "-extfile", extfile, "-notext", "-days", "30"],
                   check=True, capture_output=True)
    return ca


def chain(leaf, *issuers):
    """A certificate file holding the leaf and the issuers after it (what the server sends)."""
    cert, key = leaf
    path = cert + ".chain"
    with open(path, "w") as out:
        for c in (cert,) + issuers:
            out.write(open(c).read())
    return path, key


def bundle(path, *cas):
    with open(path, "w") as out:
        for c in cas:
            out.write(open(c).read())
    return str(path)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile-pki")
    ca = TestCA(d / "ca")
    mitm = TestCA(d / "mitm", name="the man in the middle")
    nc_root = TestCA(d / "ncroot", name="constrained root", extra_ext=["nameConstraints=permitted;DNS:localhost"])
    nc_int = intermediate(ca, TestCA(d / "ncint", name="constrained intermediate"),
                          ["nameConstraints=permitted;DNS:localhost"])
    expired = TestCA(d / "expired", name="expired CA", start="20200101000000Z", end="20210101000000Z")
    return {
        "ca": ca, "good": ca.issue("good", ["localhost"]),
        "mitm": mitm.issue("mitm", ["localhost"]),
        "rsa1024": ca.issue("rsa1024", ["localhost"], newkey=("rsa:1024",)),
        "rsa2048": ca.issue("rsa2048", ["localhost"], newkey=("rsa:2048",)),
        "clientauth": ca.issue("clientauth", ["localhost"], eku="clientAuth"),
        "noeku": ca.issue("noeku", ["localhost"], eku=None),
        "cnonly": ca.issue("cnonly", ["localhost"], san=False),
        "constrained_int": chain(nc_int.issue("leafint", ["localhost"]), nc_int.cert),
        "constrained_root": nc_root.issue("leafroot", ["localhost"]),
        "expired_anchor": expired.issue("underexpired", ["localhost"]),
        # the system bundle's situation: good anchors beside the ones our rules refuse
        "bundle": bundle(d / "bundle.pem", ca.cert, nc_root.cert, expired.cert),
    }


def spki_pin(cert):
    pub = subprocess.run(["openssl", "x509", "-in", cert, "-pubkey", "-noout"], capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, capture_output=True,
                         check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def creds(box, host="localhost"):
    with open(box.env["CREDENTIALS"], "w") as f:
        f.write(f'{host} relay@example.net "{PASSWORD}"\n')
    os.chmod(box.env["CREDENTIALS"], 0o600)


def deliver(box, srv, opts, cafile, host="localhost", env=None):
    q = Queue(box.spool)
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    e = {"SMARTHOST": f"{host}:{srv.port} {opts}".strip(), "CAFILE": cafile}
    e.update(env or {})
    with TA(box, args=["-v"], env=e) as ta:
        reps = ta.job(q, mid, "example.com")
    return reps[0], ta.log


def sent_password(srv):
    return any(PASSWORD.encode() in b"".join(a[1]) for a in srv.auths)


# ---- 1. passwords only to an authenticated peer ----

@pytest.mark.parametrize("policy", ["may", "encrypt"])
def test_no_password_to_an_unverified_tls_peer(box, pki, policy):
    creds(box)
    with Server(*pki["mitm"]) as srv:
        rep, log = deliver(box, srv, f"tls={policy}", pki["ca"].cert)
    assert rep.status == "deferred", (rep, log)
    assert "not sending the password" in rep.diag and "not verified" in rep.diag, rep
    assert srv.auths == [] and not sent_password(srv)
    assert srv.ends == 0 and srv.accepted == []
    assert PASSWORD not in log


def test_cram_md5_is_allowed_to_an_unverified_peer(box, pki):
    creds(box)
    with Server(*pki["mitm"], auth=("PLAIN", "LOGIN", "CRAM-MD5")) as srv:
        rep, log = deliver(box, srv, "tls=may", pki["ca"].cert)
    assert rep.status.startswith("ok"), (rep, log)
    assert [a[0] for a in srv.auths] == ["CRAM-MD5"] and not sent_password(srv)


def test_unverified_auth_is_an_explicit_opt_in(box, pki):
    creds(box)
    with Server(*pki["mitm"]) as srv:
        rep, log = deliver(box, srv, "tls=encrypt unverified_auth", pki["ca"].cert)
    assert rep.status.startswith("ok"), (rep, log)
    assert srv.auths[0][0] == "PLAIN" and sent_password(srv)


@pytest.mark.parametrize("how", ["verified", "pinned"])
def test_password_goes_to_a_verified_or_pinned_peer(box, pki, how):
    creds(box)
    cert = pki["good"] if how == "verified" else pki["mitm"]
    opts = "tls=verify" if how == "verified" else f"tls=encrypt pin={spki_pin(cert[0])}"
    with Server(*cert) as srv:
        rep, log = deliver(box, srv, opts, pki["ca"].cert)
    assert rep.status.startswith("ok"), (rep, log)
    assert srv.auths[0][0] == "PLAIN" and sent_password(srv)


def test_check_warns_about_unverified_auth(box):
    box.write_conf('SMARTHOST="relay.example.net:587 tls=may unverified_auth"\n')
    p = box.run(None, "--check", "-C", box.conf_path)
    assert p.returncode == 0, p.stderr
    assert b"warning: SMARTHOST relay.example.net: unverified_auth sends the password" in p.stdout + p.stderr


# ---- 2. a pin requires TLS ----

@pytest.mark.parametrize("with_creds", [False, True])
def test_pin_mismatch_defers_and_never_falls_back_to_clear_text(box, pki, with_creds):
    if with_creds:
        creds(box)
    with Server(*pki["mitm"]) as srv:
        rep, log = deliver(box, srv, f"tls=may pin={spki_pin(pki['good'][0])}", pki["ca"].cert)
    assert rep.status == "deferred" and "matches no pin" in rep.diag, (rep, log)
    assert srv.connections == 1  # no second connection in clear text
    assert srv.ends == 0 and srv.auths == []


def test_pin_with_a_server_that_offers_no_starttls(box, pki):
    creds(box)
    with Server(starttls=False) as srv:
        rep, log = deliver(box, srv, f"tls=may pin={spki_pin(pki['good'][0])}", pki["ca"].cert)
    assert rep.status == "deferred" and "does not offer STARTTLS" in rep.diag, (rep, log)
    assert srv.ends == 0 and srv.auths == []


def test_pin_with_tls_none_is_a_configuration_error(box, pki):
    box.write_conf(f'SMARTHOST="relay.example.net tls=none pin={spki_pin(pki["good"][0])}"\n')
    p = box.run(None, "--check", "-C", box.conf_path)
    assert p.returncode == 78 and b"pin= needs TLS" in p.stdout + p.stderr


# ---- 3. a reply before the end of data, inside TLS ----

@pytest.mark.parametrize("mode", ["early-one", "early-split"])
def test_early_reply_inside_tls_is_not_a_delivery(box, pki, mode):
    with Server(*pki["good"], data=mode) as srv:
        rep, log = deliver(box, srv, "tls=verify", pki["ca"].cert)
    assert rep.status == "deferred", (rep, log)
    assert "answered before the end of data" in rep.diag, rep
    assert srv.ends == 0  # the dot was never sent: the server cannot take it as given


# ---- 4. a cut final reply ----

@pytest.mark.parametrize("tls,mode", [(False, "cut-close"), (True, "cut-notify"), (True, "cut-abort")])
def test_cut_final_reply_is_not_a_reply(box, pki, tls, mode):
    kw = dict(cert=pki["good"][0], key=pki["good"][1]) if tls else dict(starttls=False)
    with Server(data=mode, auth=(), **kw) as srv:
        rep, log = deliver(box, srv, "tls=verify" if tls else "tls=none", pki["ca"].cert)
    assert srv.ends == 1
    assert rep.status == "deferred", (rep, log)
    assert "status=sent" not in log


# ---- 5. certificate rules ----

@pytest.mark.parametrize("case,why", [
    ("rsa1024", "too weak"),
    ("clientauth", "not for TLS servers"),
    ("cnonly", "no subjectAltName"),
    ("constrained_int", "name constraints"),
    ("constrained_root", "does not lead to a trusted CA"),
    ("expired_anchor", "does not lead to a trusted CA"),
])
def test_certificate_rules_under_verify(box, pki, case, why):
    with Server(*pki[case]) as srv:
        rep, log = deliver(box, srv, "tls=verify", pki["bundle"])
    assert rep.status == "deferred", (rep, log)
    assert why in rep.diag, rep
    assert srv.ends == 0
    if case in ("constrained_root", "expired_anchor"):
        assert "not used: 1 expired, 0 with RSA keys under 2048 bits, 1 with name constraints" in log, log


@pytest.mark.parametrize("case", ["rsa2048", "noeku"])
def test_certificates_that_pass_the_rules(box, pki, case):
    with Server(*pki[case]) as srv:
        rep, log = deliver(box, srv, "tls=verify", pki["bundle"])
    assert rep.status.startswith("ok"), (rep, log)


def test_sni_without_the_trailing_dot(box, pki):
    with Server(*pki["good"]) as srv:
        rep, log = deliver(box, srv, "tls=verify", pki["ca"].cert, host="localhost.")
    if "address lookup of localhost." in rep.diag:
        # musl asks DNS for a name with the trailing dot (not /etc/hosts): no network here
        pytest.skip("no DNS server answers for 'localhost.' here (tests/hermetic.sh)")
    assert rep.status.startswith("ok"), (rep, log)
    assert srv.sni == ["localhost"]
