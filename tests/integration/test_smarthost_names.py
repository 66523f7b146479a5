"""Smarthost names and credentials lines (issue 12 point 3): every form docs/tls.md shows for a
credentials line (host, host:port, [ip], [ip]:port) matches the SMARTHOST entry it names, each
proven by AUTH against a server that refuses mail without it; --check reports a line that
matches no SMARTHOST entry; name= verifies a relay reached by address against its certificate
name."""
import os

import pytest

from conftest import HAVE_TLS
from smtpsink import SmtpSink, TestCA
from ta_driver import TA, Queue

MSG = b"From: root@box.example\nSubject: names\n\nbody\n"


def write_creds(box, text):
    with open(box.env["CREDENTIALS"], "w") as f:
        f.write(text)
    os.chmod(box.env["CREDENTIALS"], 0o600)


# (SMARTHOST host part, credentials HOST field); {port} is the server's
FORMS = [
    ("localhost:{port}", "localhost"),
    ("localhost:{port}", "localhost:{port}"),
    ("localhost:{port}", "LocalHost"),
    ("[127.0.0.1]:{port}", "[127.0.0.1]"),
    ("[127.0.0.1]:{port}", "[127.0.0.1]:{port}"),
    ("127.0.0.1:{port}", "[127.0.0.1]:{port}"),
    ("[127.0.0.1]:{port}", "127.0.0.1:{port}"),
]


@pytest.mark.parametrize("smarthost,host", FORMS)
def test_every_credentials_form_authenticates(box, smarthost, host):
    """The measured failure: `[127.0.0.1]:587 user pass` (docs/tls.md's form for an address
    smarthost) never matched, so AUTH was never sent and the server's 530 bounced the mail."""
    with SmtpSink(users={"router": "s3cret"}, auth_require_tls=False, auth_required=True) as s:
        write_creds(box, f"{host.format(port=s.port)} router s3cret\n")
        q = Queue(box.spool)
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        env = {"SMARTHOST": f"{smarthost.format(port=s.port)} tls=none cleartext_auth"}
        with TA(box, env=env) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "ok2", (reps, ta.log)
        assert [(user, ok) for _, user, ok in s.logins] == [("router", True)]
        assert len(s.messages) == 1 and s.messages[0].auth_user == "router"
        p = check(box, env)
        assert p.returncode == 0, p.stderr


def check(box, env):
    """--check of the configuration alone: the spool Queue() made has no documented modes."""
    return box.run(None, "--check", env=dict(env, SPOOL=os.path.join(box.base, "no-spool")))


def test_a_line_for_another_port_is_not_used_and_check_says_so(box):
    with SmtpSink(users={"router": "s3cret"}, auth_require_tls=False, auth_required=True) as s:
        write_creds(box, "[127.0.0.1]:587 router s3cret\n")
        q = Queue(box.spool)
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}
        with TA(box, env=env) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status != "ok2" and s.logins == [] and not s.messages, reps
        p = check(box, env)
        assert p.returncode == 78
        assert (f"{box.env['CREDENTIALS']}:1: error: host [127.0.0.1]:587 matches no SMARTHOST entry "
                f"([127.0.0.1]:{s.port} tls=none cleartext_auth), so this line is never used").encode() in p.stderr


def test_check_accepts_lines_that_match_and_the_fallback(box):
    write_creds(box, "relay.example.net r1 p\n[192.0.2.7]:465 r2 p\n*:2525 r3 p\n")
    env = {"SMARTHOST": "relay.example.net:587 tls=may, [192.0.2.7] smtps tls=encrypt"}
    p = box.run(None, "--check", env=env)
    assert p.returncode == 0, p.stderr
    write_creds(box, "relay.example.net r1 p\nold-relay.example.net r2 p\n")
    p = box.run(None, "--check", env=env)
    assert p.returncode == 78
    assert f"{box.env['CREDENTIALS']}:2: error: host old-relay.example.net matches no SMARTHOST".encode() in p.stderr
    assert b":1: error" not in p.stderr
    # without a smarthost, lines name MX hosts: nothing to compare with
    p = box.run(None, "--check")
    assert p.returncode == 0, p.stderr


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("names-pki")
    ca = TestCA(d / "ca")
    return {"ca": ca.cert, "named": ca.issue("named", ["smtp.example.net"])}


@pytest.mark.skipif(not HAVE_TLS, reason="this spoolbox is built without TLS")
def test_name_verifies_a_relay_reached_by_address(box, pki):
    cert, key = pki["named"]
    with SmtpSink(tls="starttls", cert=cert, key=key) as s:
        q = Queue(box.spool)
        results = {}
        for opt in ("", " name=smtp.example.net"):
            mid = q.add("root@box.example", ["a@example.com"], MSG)
            env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=verify{opt}", "CAFILE": pki["ca"]}
            with TA(box, args=["-v"], env=env) as ta:
                results[opt] = (ta.job(q, mid, "example.com")[0], ta.log)
        rep, log = results[""]
        assert rep.status == "deferred" and "smtp.example.net" in rep.diag and "127.0.0.1" in rep.diag, rep
        rep, log = results[" name=smtp.example.net"]
        assert rep.status == "ok2", (rep, log)
        assert len(s.messages) == 1


def test_name_must_be_a_host_name(box):
    p = box.run(None, "--check", env={"SMARTHOST": "[192.0.2.1] name=bad/name"})
    assert p.returncode == 78 and b"name= wants a host name" in p.stderr


def test_check_reports_verify_without_trust_anchors(box, pki):
    """Issue 12 point 2: a tls=verify smarthost with no CA bundle deferred every message for
    days before anyone noticed; --check says so at once."""
    env = {"SMARTHOST": "relay.example.net:587", "CAFILE": os.path.join(box.base, "no-such-ca.pem")}
    p = check(box, env)
    assert p.returncode == 78
    if HAVE_TLS:
        assert (b"relay.example.net: tls=verify, but no trust anchors can be loaded (trust anchors "
                + env["CAFILE"].encode() + b": No such file or directory)") in p.stderr, p.stderr
        assert b"fix: install the CA bundle" in p.stderr
        p = check(box, dict(env, CAFILE=pki["ca"]))
        assert p.returncode == 0, p.stderr
    else:
        assert b"relay.example.net: tls=verify, but this spoolbox is built without TLS" in p.stderr
    # by MX with SMTP_TLS=verify, the same
    p = check(box, {"SMTP_TLS": "verify", "CAFILE": env["CAFILE"]})
    assert p.returncode == 78 and b"MX hosts (SMTP_TLS=verify): tls=verify, but" in p.stderr
    # encrypt with a pin needs no anchors
    pin = "0" * 64
    p = check(box, {"SMARTHOST": f"relay.example.net:587 tls=encrypt pin={pin}", "CAFILE": env["CAFILE"]})
    assert p.returncode == 0 or not HAVE_TLS, p.stderr
