"""The one logging setup and the process names (issue 9 point 4, issue 12 point 2, issue 13
points 3 and 6): every applet, errormail and hold included, reaches the syslog socket that LOG and
SYSLOG_SOCKET name (a UNIX datagram socket this test binds in tmp_path); a foreground scheduler
and its agents write to stderr when there is no syslog socket; a failed syslog socket is not
tried again for every line; ps shows `spoolbox: APPLET` with the applet's name as comm."""
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import BINARY
import sched_gen as gen
from ta_driver import TA, Queue


class SyslogSocket:
    """A syslog daemon's socket: collects every datagram in a thread (a full socket queue would
    block the sender)."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self.lines = []
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                self.lines.append(self.sock.recv(4096).decode(errors="replace"))
            except socket.timeout:
                pass

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()
        return self.lines


@pytest.fixture(autouse=True)
def spool(box):
    Queue(box.spool)  # the directories an agent needs


def syslog_env(path):
    return {"LOG": "syslog", "SYSLOG_SOCKET": str(path)}


def test_errormail_logs_to_syslog(box, tmp_path):
    rx = SyslogSocket(tmp_path / "log")
    p = box.run("submit", "-i", "nosuchuser", input=b"Subject: x\n\nbody\n", env=syslog_env(rx.path))
    assert p.returncode == 0, p.stderr
    p = box.run("scheduler", "-i", "-1", env=syslog_env(rx.path), timeout=30)
    lines = rx.close()
    assert p.returncode == 0, p.stderr
    # facility mail (2 << 3) and the applet's own tag
    assert [l for l in lines if l.startswith("<22>submit[") and "queued: from=<root@box.example>" in l], lines
    assert [l for l in lines if l.startswith("<22>spoolbox/errormail[") and "queued for <root" in l], \
        "\n".join(lines) + p.stderr.decode()
    assert [l for l in lines if l.startswith("<2") and l.split("[")[0].endswith("spoolbox/scheduler")], lines


def test_hold_logs_to_syslog(box, tmp_path):
    rx = SyslogSocket(tmp_path / "log")
    with TA(box, "hold", env=syslog_env(rx.path)) as ta:
        ta.send("not a job line")
        ta.expect("#hungry")
    lines = rx.close()
    assert [l for l in lines if l.startswith("<20>spoolbox/hold[") and "ignored a malformed job line" in l], lines
    assert "ignored a malformed job line" not in ta.log


def test_failed_syslog_socket_is_not_retried_for_every_line(box, tmp_path):
    path = tmp_path / "log"
    with TA(box, "hold", env=syslog_env(path)) as ta:
        ta.send("first bad line")
        ta.expect("#hungry")
        wait_for(lambda: ta.log.count("ignored a malformed job line") == 1, ta)
        rx = SyslogSocket(path)  # the daemon comes up: the agent tries again only after a while
        ta.send("second bad line")
        ta.expect("#hungry")
        wait_for(lambda: ta.log.count("ignored a malformed job line") == 2, ta)
    assert rx.close() == []


def wait_for(cond, ta, limit=10):
    deadline = time.time() + limit
    while not cond():
        assert time.time() < deadline, ta.log
        time.sleep(0.02)


def test_foreground_scheduler_and_agents_log_to_stderr_without_syslog(box, tmp_path):
    mid = gen.add_incoming(box.spool, [("hold", "x", "someone@example.com")])
    env = syslog_env(tmp_path / "no-such-socket")
    p = box.run("scheduler", "-i", "-1", "-S", env=env, timeout=30)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "spoolbox/scheduler[" in err
    # an agent's lines reach the same place (a malformed job is the one thing hold logs)
    with TA(box, "hold", env=env) as ta:
        ta.send("bad")
        ta.expect("#hungry")
        wait_for(lambda: "spoolbox/hold[" in ta.log, ta)
    assert mid


def test_foreground_scheduler_writes_errors_to_stderr_with_syslog(box, tmp_path):
    """With a syslog daemon, a foreground scheduler's errors still reach its stderr, and its
    ordinary lines do not."""
    rx = SyslogSocket(tmp_path / "log")
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write("*/* command=/nonexistent/agent\n")
    gen.add_queued(box.spool, [("smtp", "a.example", "x@a.example")])
    p = box.run("scheduler", "-i", "-1", env=syslog_env(rx.path), timeout=30)
    lines = rx.close()
    err = p.stderr.decode(errors="replace")
    errors = [l for l in lines if l.startswith("<19>spoolbox/scheduler[")]  # mail.err
    assert errors, lines
    text = errors[0].split(": ", 1)[1]
    assert text in err, (text, err)
    infos = [l for l in lines if l.startswith("<22>spoolbox/scheduler[")]
    assert not infos or infos[0].split(": ", 1)[1] not in err


def proc_title(pid):
    with open(f"/proc/{pid}/comm", "rb") as f:
        comm = f.read().rstrip(b"\n")
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        cmdline = f.read().rstrip(b"\0")
    return comm, cmdline


def test_ps_shows_the_scheduler(box):
    errlog = open(os.path.join(box.base, "scheduler.err"), "wb")
    proc = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(), stderr=errlog,
                            stdout=subprocess.DEVNULL)
    errlog.close()
    try:
        deadline = time.time() + 10
        while proc_title(proc.pid)[0] != b"scheduler":
            assert time.time() < deadline, proc_title(proc.pid)
            time.sleep(0.02)
        assert proc_title(proc.pid) == (b"scheduler", b"spoolbox: scheduler")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


@pytest.mark.parametrize("applet", ["smtp", "local", "hold", "errormail"])
def test_ps_shows_an_agent(box, applet):
    # the scheduler starts agents as execv("/proc/self/exe", {"smtp", ...}): argv[0] is the
    # bare applet name, so comm would be "exe" and the command line "smtp"
    proc = subprocess.Popen([applet], executable=BINARY, env=box.environ(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout.readline() == b"#hungry\n"
        assert proc_title(proc.pid) == (applet.encode(), b"spoolbox: " + applet.encode())
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
