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
    # DNS names are case-blind and may be absolute; musl's hosts file lookup is neither
    ("LOCALHOST:{port}", "localhost"),
    ("LocalHost.:{port}", "localhost"),
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
        assert p.returncode == 0, p.stderr
        assert (f"{box.env['CREDENTIALS']}:1: warning: host [127.0.0.1]:587 matches no SMARTHOST entry "
                f"([127.0.0.1]:{s.port} tls=none cleartext_auth), so this line is never used").encode() in p.stderr


def test_check_accepts_lines_that_match_and_the_fallback(box):
    write_creds(box, "relay.example.net r1 p\n[192.0.2.7]:465 r2 p\n*:2525 r3 p\n")
    env = {"SMARTHOST": "relay.example.net:587 tls=may, [192.0.2.7] smtps tls=encrypt"}
    p = box.run(None, "--check", env=env)
    assert p.returncode == 0, p.stderr
    write_creds(box, "relay.example.net r1 p\nold-relay.example.net r2 p\n")
    p = box.run(None, "--check", env=env)
    assert p.returncode == 0, p.stderr
    assert f"{box.env['CREDENTIALS']}:2: warning: host old-relay.example.net matches no SMARTHOST".encode() in p.stderr
    assert b":1: warning" not in p.stderr
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
    # warnings: the scheduler must still start for local mail (init scripts run --check first)
    p = check(box, env)
    assert p.returncode == 0, p.stderr
    assert b"warning: relay.example.net: tls=verify, but" in p.stderr
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
    assert p.returncode == 0 and b"warning: MX hosts (SMTP_TLS=verify): tls=verify, but" in p.stderr
    # encrypt with a pin needs no anchors
    pin = "0" * 64
    p = check(box, {"SMARTHOST": f"relay.example.net:587 tls=encrypt pin={pin}", "CAFILE": env["CAFILE"]})
    assert b"trust anchors" not in p.stderr, p.stderr


# ---- smtp -t: the setup tested end to end (issue 12 point 3) ----

def smtp_t(box, *args, env):
    p = box.run("smtp", "-t", *args, env=dict(env, SPOOL=os.path.join(box.base, "no-spool")))
    return p, p.stdout.decode(), p.stderr.decode()


def lines(out):
    """{step: (verdict, rest)} of smtp -t's output."""
    d = {}
    for ln in out.splitlines():
        parts = ln.split(None, 2)
        d[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return d


def test_smtp_t_prints_each_step_and_sends_nothing(box):
    with SmtpSink(users={"router": "s3cret"}, auth_require_tls=False, auth_required=True) as s:
        write_creds(box, "[127.0.0.1] router s3cret\n")
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}
        p, out, err = smtp_t(box, "-f", "router@example.net", "admin@example.com", env=env)
        assert p.returncode == 0, (out, err)
        d = lines(out)
        assert d["route"][1].startswith(f"SMARTHOST [127.0.0.1]:{s.port} tls=none")
        assert d["connect"] == ("ok", f"127.0.0.1[127.0.0.1]:{s.port}")
        assert d["TLS"] == ("ok", "none (clear text)")
        assert d["AUTH"] == ("ok", f"as router ({box.env['CREDENTIALS']} line 1)")
        assert d["MAIL"][0] == "ok" and d["MAIL"][1].startswith("250")
        assert d["RCPT"][0] == "ok" and d["RCPT"][1].startswith("250")
        assert d["DATA"] == ("ok", "not sent (-s sends a test message)")
        assert d["verdict"][1] == "the setup works: mail would be accepted"
        assert s.messages == [] and [(u, ok) for _, u, ok in s.logins] == [("router", True)]
        assert "s3cret" not in out + err


def test_smtp_t_s_sends_a_test_message(box):
    with SmtpSink(users={"router": "s3cret"}, auth_require_tls=False, auth_required=True) as s:
        write_creds(box, "[127.0.0.1] router s3cret\n")
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth", "ALLMAILFROM": "router@example.net"}
        p, out, err = smtp_t(box, "-s", "admin@example.com", env=env)
        assert p.returncode == 0, (out, err)
        assert lines(out)["verdict"][1] == "the setup works: a test message was accepted"
        assert len(s.messages) == 1
        m = s.messages[0]
        assert m.mail_from == "router@example.net" and m.rcpt_tos == ["admin@example.com"]
        assert b"Subject: spoolbox smarthost test\r\n" in m.data, m.data


def test_smtp_t_names_the_failing_step(box):
    with SmtpSink(users={"router": "right"}, auth_require_tls=False, auth_required=True) as s:
        write_creds(box, "[127.0.0.1] router wrong\n")
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}
        p, out, err = smtp_t(box, "admin@example.com", env=env)
        assert p.returncode == 75, (out, err)
        d = lines(out)
        assert d["session"][0] == "FAIL" and "535" in d["session"][1], out
        assert "MAIL" not in d and d["verdict"][1].startswith("mail would be deferred")
        # a recipient the relay refuses
        write_creds(box, "[127.0.0.1] router right\n")
        s.rcpt_replies["nobody@example.com"] = "550 5.1.1 no such user"
        p, out, err = smtp_t(box, "nobody@example.com", env=env)
        assert p.returncode == 69, (out, err)
        d = lines(out)
        assert d["RCPT"][0] == "FAIL" and d["RCPT"][1].startswith("550"), out
        assert d["verdict"][1].startswith("mail would bounce")
        assert s.messages == []


@pytest.mark.skipif(not HAVE_TLS, reason="this spoolbox is built without TLS")
def test_smtp_t_gives_the_certificate_verdict(box, pki):
    cert, key = pki["named"]
    with SmtpSink(tls="starttls", cert=cert, key=key) as s:
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=verify", "CAFILE": pki["ca"]}
        p, out, err = smtp_t(box, "admin@example.com", env=env)
        assert p.returncode == 75, (out, err)
        d = lines(out)
        assert d["session"][0] == "FAIL" and "smtp.example.net" in d["session"][1], out
        env["SMARTHOST"] += " name=smtp.example.net"
        p, out, err = smtp_t(box, "admin@example.com", env=env)
        assert p.returncode == 0, (out, err)
        d = lines(out)
        assert d["TLS"][0] == "ok" and d["TLS"][1].startswith("TLSv1.2") and d["TLS"][1].endswith("verified"), out
        assert "name=smtp.example.net" in d["route"][1]
        assert s.messages == []
