"""End to end: sendmail -> spool -> scheduler -> smtp agent -> an aiosmtpd smarthost. Checks
what arrives, that one connection carries a burst of messages, and that a deferral is recorded
in the control file with the notary data the agent reported. Skipped while the scheduler
applet is not in the binary under test."""
import os
import subprocess
import time

import pytest

from conftest import BINARY
import spoolfmt


def scheduler_written():
    p = subprocess.run([BINARY, "scheduler", "--help"], capture_output=True)
    return p.returncode == 0 and b"not written yet" not in p.stdout + p.stderr


pytestmark = pytest.mark.skipif(not os.path.exists(BINARY) or not scheduler_written(),
                                reason="the scheduler applet is not written in this build")


def submit(box, env, rcpt, body):
    p = box.run("submit", "-i", "-f", "root@box.example", rcpt, input=body, env=env)
    assert p.returncode == 0, p.stderr


def run_scheduler(box, env, until, timeout=30):
    """Runs the scheduler in the foreground until until() is true, then stops it."""
    s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    deadline = time.time() + timeout
    try:
        while not until() and time.time() < deadline and s.poll() is None:
            time.sleep(0.02)
    finally:
        s.terminate()
        _, err = s.communicate(timeout=10)
    return err.decode(errors="replace")


def test_burst_through_the_scheduler_uses_one_connection(box, sink):
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "10s"}
    for i in range(10):
        submit(box, env, "user%d@example.com" % i, b"Subject: e2e %d\n\nhello\n" % i)
    log = run_scheduler(box, env, lambda: len(sink.messages) == 10 and not spoolfmt.queued_ids(box.spool))
    assert len(sink.messages) == 10, log
    assert sorted(m.rcpt_tos[0] for m in sink.messages) == sorted("user%d@example.com" % i for i in range(10))
    assert all(m.mail_from == "root@box.example" for m in sink.messages)
    assert sink.connections <= 2, log  # one agent, one cached connection (two if a second agent started)
    assert spoolfmt.queued_ids(box.spool) == [], log


def test_deferral_is_recorded_with_the_notary_data(box, sink):
    sink.mail_reply = "451 4.3.0 greylisted, come back later"
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
    submit(box, env, "a@example.com", b"Subject: later\n\nx\n")

    log = run_scheduler(box, env, lambda: spoolfmt.has_attempts(box.spool))
    ids = spoolfmt.queued_ids(box.spool)
    assert len(ids) == 1, log
    m = spoolfmt.ctl_message(box.spool, ids[0])
    a = m.attempts[0]
    # A N TIME CODE ACTION ENH REMOTE TEXT
    assert a[3] == "deferred" and a[4] == "delayed" and a[5] == "4.3.0", a
    assert spoolfmt.xtext_decode(a[6]) == "127.0.0.1[127.0.0.1]"
    assert "451 4.3.0 greylisted" in a[7]
    assert m.rcpts[0].tag == "Q"
    assert not sink.messages
