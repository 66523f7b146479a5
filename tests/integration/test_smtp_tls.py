"""TLS in the smtp transport against aiosmtpd servers with certificates from a test CA made by
openssl in the test: STARTTLS verified, the three refusals under `verify` (wrong host name,
expired, untrusted CA) with no fallback to clear text, implicit TLS, `may` and `encrypt`, pins,
and AUTH PLAIN/LOGIN over TLS. The smarthost is "localhost": the name the certificates carry."""
import base64
import os
import subprocess

import pytest

from conftest import HAVE_TLS
from smtpsink import SmtpSink, TestCA
from ta_driver import TA, Queue

pytestmark = pytest.mark.skipif(not HAVE_TLS, reason="this spoolbox is built without TLS")

MSG = b"From: root@box.example\nSubject: tls\n\nsecret body\n"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = TestCA(d / "ca")
    other = TestCA(d / "other", name="someone else's CA")
    p = {"ca": ca.cert, "good": ca.issue("good", ["localhost"]),
         "wrongname": ca.issue("wrongname", ["mail.example.org"]),
         "expired": ca.issue("expired", ["localhost"], start="20200101000000Z", end="20210101000000Z"),
         "untrusted": other.issue("untrusted", ["localhost"])}
    # An Ed25519 certificate: a key BearSSL does not speak, so every handshake fails.
    key, cert = str(d / "ed.key"), str(d / "ed.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ed25519", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "30", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    p["ed25519"] = (cert, key)
    return p


@pytest.fixture
def q(box):
    return Queue(box.spool)


def spki_pin(cert):
    pub = subprocess.run(["openssl", "x509", "-in", cert, "-pubkey", "-noout"], capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, capture_output=True,
                         check=True).stdout
    import hashlib
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def run(box, q, sink, opts, pki, extra_env=None, rcpts=("a@example.com",)):
    mid = q.add("root@box.example", list(rcpts), MSG)
    env = {"SMARTHOST": f"localhost:{sink.port} {opts}".strip(), "CAFILE": pki["ca"]}
    env.update(extra_env or {})
    with TA(box, args=["-v"], env=env) as ta:
        reps = ta.job(q, mid, "example.com")
    return reps, ta.log


def test_starttls_verified(box, q, pki):
    with SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1]) as s:
        reps, log = run(box, q, s, "", pki)
        assert reps[0].status == "ok2", (reps, log)
        assert s.messages[0].tls and s.messages[0].data == MSG.replace(b"\n", b"\r\n")
    assert "> STARTTLS" in log
    assert "TLS connection to localhost[127.0.0.1]:%d: TLSv1.2" % s.port in log, log
    assert "secret body" not in log


@pytest.mark.parametrize("case,why", [("wrongname", "certificate is for mail.example.org, not localhost"), ("expired", "expired"), ("untrusted", "does not lead to a trusted CA")])
def test_verify_refuses_bad_certificates_without_clear_text_fallback(box, q, pki, case, why):
    with SmtpSink(tls="starttls", cert=pki[case][0], key=pki[case][1]) as s:
        reps, log = run(box, q, s, "tls=verify", pki)
        assert reps[0].status == "deferred", (reps, log)
        assert reps[0].enh.startswith("4.7."), reps
        assert "TLS with localhost[127.0.0.1]" in reps[0].diag and "certificate" in reps[0].diag, reps
        if why:
            assert why.lower() in reps[0].diag.lower(), reps
        assert not s.messages
        # one connection, no second attempt in clear text
        assert s.connections == 1


def test_verify_requires_starttls(box, q, pki):
    with SmtpSink() as s:
        reps, log = run(box, q, s, "tls=verify", pki)
    assert reps[0].status == "deferred" and "does not offer STARTTLS" in reps[0].diag
    assert not s.messages


def test_implicit_tls(box, q, pki):
    with SmtpSink(tls="implicit", cert=pki["good"][0], key=pki["good"][1]) as s:
        reps, log = run(box, q, s, "smtps", pki)
        assert reps[0].status == "ok2", (reps, log)
        assert s.messages[0].tls
    assert "STARTTLS" not in log


def test_implicit_tls_wrong_name_refused(box, q, pki):
    with SmtpSink(tls="implicit", cert=pki["wrongname"][0], key=pki["wrongname"][1]) as s:
        reps, log = run(box, q, s, "tls=smtps", pki)
        assert reps[0].status == "deferred" and not s.messages


def test_encrypt_accepts_an_unverified_certificate(box, q, pki):
    with SmtpSink(tls="starttls", cert=pki["untrusted"][0], key=pki["untrusted"][1]) as s:
        reps, log = run(box, q, s, "tls=encrypt", pki)
        assert reps[0].status == "ok2" and s.messages[0].tls


def test_pin_replaces_the_chain_under_encrypt_and_a_wrong_pin_refuses(box, q, pki):
    cert, key = pki["untrusted"]
    with SmtpSink(tls="starttls", cert=cert, key=key) as s:
        reps, _ = run(box, q, s, f"tls=encrypt pin={spki_pin(cert)}", pki)
        assert reps[0].status == "ok2"
        reps, _ = run(box, q, s, f"tls=encrypt pin={spki_pin(pki['good'][0])}", pki)
        assert reps[0].status == "deferred" and "pin" in reps[0].diag.lower()
        assert len(s.messages) == 1


def test_may_uses_tls_when_offered(box, q, pki):
    with SmtpSink(tls="starttls", cert=pki["untrusted"][0], key=pki["untrusted"][1]) as s:
        reps, _ = run(box, q, s, "tls=may", pki)
        assert reps[0].status == "ok2" and s.messages[0].tls


def test_may_retries_in_clear_text_after_a_failed_handshake(box, q, pki):
    with SmtpSink(tls="starttls", cert=pki["ed25519"][0], key=pki["ed25519"][1]) as s:
        reps, log = run(box, q, s, "tls=may", pki)
        assert reps[0].status == "ok2", (reps, log)
        assert not s.messages[0].tls
        assert s.connections == 2
    assert "retrying localhost[127.0.0.1] without TLS" in log


@pytest.mark.parametrize("mech", ["PLAIN", "LOGIN"])
@pytest.mark.parametrize("right", [True, False])
def test_auth_over_starttls(box, q, pki, mech, right):
    password = "correct horse"
    with SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1], users={"relayuser": password}) as s:
        with open(box.env["CREDENTIALS"], "w") as f:
            f.write(f'localhost relayuser "{password if right else "battery staple"}"\n')
        os.chmod(box.env["CREDENTIALS"], 0o600)
        reps, log = run(box, q, s, f"auth={mech}", pki)
        if right:
            assert reps[0].status == "ok2", (reps, log)
            assert s.messages[0].auth_user == "relayuser" and s.messages[0].tls
        else:
            assert reps[0].status == "deferred" and "535" in reps[0].diag, (reps, log)
            assert not s.messages
        assert s.logins == [(mech, "relayuser", right)]
    for secret in ("correct horse", "battery staple", base64.b64encode(b"correct horse").decode(),
                   base64.b64encode(b"battery staple").decode()):
        assert secret not in log


def test_untrusted_ca_file_missing_is_deferred(box, q, pki, tmp_path):
    with SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1]) as s:
        reps, _ = run(box, q, s, "", pki, extra_env={"CAFILE": str(tmp_path / "nope.pem")})
        assert reps[0].status == "deferred" and "nope.pem" in reps[0].diag
        assert not s.messages


@pytest.mark.parametrize("right", [True, False])
def test_xoauth2_token_file(box, q, pki, tmp_path, right):
    token = "ya29.a0AfH6SMBx-token-value"
    tokfile = tmp_path / "token"
    tokfile.write_text((token if right else "expired-token") + "\n")
    os.chmod(tokfile, 0o600)
    with SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1], users={"me@gmail.test": token}) as s:
        with open(box.env["CREDENTIALS"], "w") as f:
            f.write(f"localhost me@gmail.test xoauth2 {tokfile}\n")
        os.chmod(box.env["CREDENTIALS"], 0o600)
        reps, log = run(box, q, s, "", pki)
        assert s.logins == [("XOAUTH2", "me@gmail.test", right)], (s.logins, log)
        assert reps[0].status == ("ok2" if right else "deferred"), (reps, log)
    assert token not in log and "expired-token" not in log
    assert base64.b64encode(f"user=me@gmail.test\x01auth=Bearer {token}\x01\x01".encode()).decode() not in log


def test_client_certificate(box, q, pki, tmp_path):
    ca = TestCA(tmp_path / "clients", name="client CA")
    cert, key = ca.issue("box", ["box.example"], eku="clientAuth")
    with SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1], client_ca=ca.cert) as s:
        reps, log = run(box, q, s, "", pki)
        assert reps[0].status == "deferred" and not s.messages, reps  # no certificate: refused
        reps, log = run(box, q, s, f"cert={cert} key={key}", pki)
        assert reps[0].status == "ok2", (reps, log)
        assert len(s.messages) == 1
