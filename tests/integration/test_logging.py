"""The one logging setup (issue 9 point 4, issue 12 point 2, issue 13 points 3 and 6), beside
test_errormail.py's syslog tests: the syslog socket is SPOOLBOX_SYSLOG_SOCKET (a UNIX datagram
socket this test binds in tmp_path); transport agents write to their stderr (the scheduler's)
what syslog cannot take; a failed syslog socket is not tried again for every line; a foreground
scheduler's errors reach stderr even with syslog; every agent, started as the scheduler starts
it, shows `spoolbox: APPLET` in ps with the applet's name as comm."""
import os
import re
import shutil
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

    def __init__(self, path, stall=0):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self.lines = []
        self.running = True
        self.stall = stall  # seconds before the first read: a busy log daemon
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        time.sleep(self.stall)
        while self.running:
            try:
                self.lines.append(self.sock.recv(4096).decode(errors="replace"))
            except socket.timeout:
                pass

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.setblocking(False)
        try:
            while True:  # what arrived after the thread's last look
                self.lines.append(self.sock.recv(4096).decode(errors="replace"))
        except BlockingIOError:
            pass
        self.sock.close()
        return self.lines


@pytest.fixture(autouse=True)
def spool(box):
    Queue(box.spool)  # the directories an agent needs


def syslog_env(path):
    return {"LOG": "syslog", "SPOOLBOX_SYSLOG_SOCKET": str(path)}


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


def test_a_busy_log_daemon_loses_no_line(box, tmp_path):
    """A log daemon that reads nothing for a moment while the scheduler logs a burst (a dozen
    messages loaded at once): the socket's queue can be as short as 10 datagrams
    (net.unix.max_dgram_qlen), and a line that found it full was dropped at once -- CI lost a
    "removed" line that way and pflogsumm miscounted. The sender now waits a moment for room."""
    from test_scheduler import BASIC, sconf, stub_env
    sconf(box, BASIC)
    ids = [gen.add_queued(box.spool, [("smtp", "h.example", "ok%d@h.example" % i)]) for i in range(12)]
    rx = SyslogSocket(tmp_path / "log", stall=0.6)
    env = dict(stub_env(box), **syslog_env(tmp_path / "log"))
    p = box.run("scheduler", "-i", "-1", env=env, timeout=60)
    lines = rx.close()
    assert p.returncode == 0, p.stderr
    for mid in ids:
        assert any(re.search(r"spoolbox/qmgr\[\d+\]: %s: from=" % mid, ln) for ln in lines), (mid, lines)
        assert any(ln.rstrip("\n").endswith("%s: removed" % mid) for ln in lines), (mid, lines)


def wait_for(cond, ta, limit=10):
    deadline = time.time() + limit
    while not cond():
        assert time.time() < deadline, ta.log
        time.sleep(0.02)


@pytest.mark.parametrize("applet", ["hold", "local", "smtp", "errormail"])
def test_agents_log_to_their_stderr_without_syslog(box, tmp_path, applet):
    """An agent's stderr is the scheduler's: what syslog cannot take goes there (a malformed
    job line is something every agent logs)."""
    with TA(box, applet, env=syslog_env(tmp_path / "no-such-socket")) as ta:
        ta.send("bad")
        ta.expect("#hungry")
        wait_for(lambda: f"spoolbox/{applet}[" in ta.log and "malformed job line" in ta.log, ta)


def test_foreground_scheduler_writes_errors_to_stderr_with_syslog(box, tmp_path):
    """With a syslog daemon, a foreground scheduler's warnings and errors still reach its
    stderr (the supervisor's log), and its ordinary lines do not."""
    rx = SyslogSocket(tmp_path / "log")
    env = syslog_env(rx.path)
    env["SPOOLBOX_TEST_CLOCK"] = "not-an-offset"  # a warning the scheduler logs at start
    p = box.run("scheduler", "-i", "-1", env=env, timeout=30)
    lines = rx.close()
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    mine = [re.match(r"<(\d+)>(?:.*? )?spoolbox/scheduler\[\d+\]: (.*)", l) for l in lines]  # stamp optional
    mine = [(int(m.group(1)), m.group(2)) for m in mine if m]
    warnings = [t for pri, t in mine if pri == (2 << 3) | 4]
    infos = [t for pri, t in mine if pri == (2 << 3) | 6]
    assert warnings and infos, lines
    assert all(t in err for t in warnings), (warnings, err)
    assert not any(t in err for t in infos), (infos, err)


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace")
@pytest.mark.needs("local")
def test_a_drain_without_a_syslog_socket_connects_once_per_process(box, tmp_path):
    """Issue 13 point 3, counted with strace: a drain of several messages logs many lines
    (scheduler, local agent, pickup), but each process tries the missing syslog socket once at
    most (a connect per line was ten system calls per message)."""
    env = syslog_env(tmp_path / "no-such-socket")
    # the sanitizer build's leak check cannot run under ptrace
    env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))
    for i in range(4):
        p = box.run("submit", "-i", "root", input=b"Subject: %d\n\nbody\n" % i)
        assert p.returncode == 0, p.stderr
    trace = tmp_path / "trace"
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace), BINARY, "scheduler",
                        "-i", "-1"], env=box.environ(env), capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert err.count("status=sent") == 4, err  # the lines syslog could not take: on stderr
    tries = [l.split()[0] for l in trace.read_text().splitlines() if "no-such-socket" in l]
    assert tries, trace.read_text()  # strace saw the attempts
    assert len(tries) == len(set(tries)), tries  # one per process (pid) at most
    assert len(tries) < err.count("\n") / 4, (tries, err)


def proc_title(pid):
    with open(f"/proc/{pid}/comm", "rb") as f:
        comm = f.read().rstrip(b"\n")
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        cmdline = f.read().rstrip(b"\0")
    return comm, cmdline


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
