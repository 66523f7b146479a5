"""Reloading a running scheduler (issue 12 point 2, the scheduler's parts): HUP and USR1 read
spoolbox.conf and scheduler.conf again, so a new SMARTHOST takes effect without a restart (idle
agents end, busy ones after their job); a file with errors keeps the old configuration and the
log says why; with no /etc/passwd, the built-in user=root still runs its agents (uid 0)."""
import os
import signal
import subprocess
import time

import pytest

from conftest import BINARY, IS_ASAN
import sched_gen as gen
from smtpsink import SmtpSink


def wait_for(pred, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline and not pred():
        time.sleep(0.05)
    return pred()


def logtext(path):
    with open(path, errors="replace") as f:
        return f.read()


@pytest.fixture
def two_sinks():
    a, b = SmtpSink(), SmtpSink()
    a.start()
    b.start()
    yield a, b
    a.stop()
    b.stop()


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGUSR1])
def test_reload_takes_a_new_smarthost_without_a_restart(box, two_sinks, sig):
    a, b = two_sinks
    box.write_conf("SMARTHOST=[127.0.0.1]:%d tls=none\nSMTP_IDLE=60s\n" % a.port)
    log = os.path.join(box.base, "sched.log")
    p = subprocess.Popen([BINARY, "scheduler", "-i", "-L", log], env=box.environ(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: os.path.exists(log) and "started:" in logtext(log))
        gen.add_incoming(box.spool, [("smtp", "x.example", "one@x.example")])
        p.send_signal(signal.SIGALRM)
        assert wait_for(lambda: len(a.messages) == 1), logtext(log)
        # the agent stays idle with its connection to a (SMTP_IDLE): the reload must end it
        box.write_conf("SMARTHOST=[127.0.0.1]:%d tls=none\nSMTP_IDLE=60s\n" % b.port)
        p.send_signal(sig)
        assert wait_for(lambda: "spoolbox.conf: " + box.conf_path + " read again" in logtext(log)), logtext(log)
        gen.add_incoming(box.spool, [("smtp", "x.example", "two@x.example")])
        p.send_signal(signal.SIGALRM)
        assert wait_for(lambda: len(b.messages) == 1), logtext(log)
        assert [m.rcpt_tos for m in a.messages] == [["one@x.example"]]
        assert [m.rcpt_tos for m in b.messages] == [["two@x.example"]]
        # a file with errors changes nothing, and the log says where
        box.write_conf("SMARTHOST=[127.0.0.1]:%d tls=none\nSMTP_IDEL=60s\n" % a.port)
        p.send_signal(sig)
        assert wait_for(lambda: "reload: keeping the previous configuration" in logtext(log)), logtext(log)
        assert box.conf_path + ":2:" in logtext(log)
        gen.add_incoming(box.spool, [("smtp", "x.example", "three@x.example")])
        p.send_signal(signal.SIGALRM)
        assert wait_for(lambda: len(b.messages) == 2), logtext(log)
        assert len(a.messages) == 1
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=40)
    assert p.returncode == 0


@pytest.mark.skipif(IS_ASAN, reason="a private mount namespace for the sanitizer build is not needed")
def test_no_etc_passwd_agents_still_run_as_root(box):
    """Rescue images have no /etc/passwd: user=root (the built-in configuration's) is uid 0
    without it, so the agents start and the mail is delivered instead of piling up."""
    if os.geteuid() != 0:
        pytest.skip("needs root (a private mount namespace)")
    mid = gen.add_incoming(box.spool, [("local", "-", "root")])
    cmd = "mount --bind /dev/null /etc/passwd && exec \"$0\" scheduler -i -1"
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", cmd, BINARY],
                       env=box.environ(), capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0 and ("unshare:" in err or "mount:" in err):
        pytest.skip("cannot make a private mount namespace here: " + err)
    assert p.returncode == 0, err
    assert "cannot become user root" not in err
    assert not os.path.exists(os.path.join(box.spool, "queue", mid[-1], mid + ".c")), err


def test_missing_user_is_said_in_the_schedulers_log(box):
    """A clause whose user= does not exist: the scheduler says so (which clause, which user, what
    to do) and keeps the mail queued, instead of agents that die on their own stderr."""
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('*/* interval=1h user=nosuchuser-spoolbox\nlocal command=local\n')
    mid = gen.add_incoming(box.spool, [("local", "-", "root")])
    p = box.run("scheduler", "-i", "-1", timeout=60)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "local/-: user=nosuchuser-spoolbox: no such user (not in /etc/passwd, not a number): " \
           "its agents cannot start; fix scheduler.conf or create it" in err
    assert os.path.exists(os.path.join(box.spool, "queue", mid[-1], mid + ".c"))   # still queued
