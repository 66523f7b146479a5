"""The spool's free-space reserve (issue 11 point 3, QUEUE_MINFREE, docs/spool.md 5): on a small
tmpfs, an ordinary user submitting through the setgid binary is refused with 75 once the reserve
is reached and never fills it; root may go on into half of it; and the scheduler still picks up
everything and records its results, so the queue drains instead of wedging."""
import os
import subprocess

import pytest
import setgidlib
from setgidlib import run_nobody
from spoolfmt import incoming

MINFREE = 512 * 1024
MSG = b"Subject: filler\n\n" + b"x" * 100 * 1024 + b"\n"


def free_bytes(path):
    v = os.statvfs(path)
    return v.f_bavail * v.f_frsize


@pytest.fixture
def small_spool():
    """The setgid install (setgidlib) on a 2 MiB tmpfs spool, with QUEUE_MINFREE and local
    delivery into the test's own directories."""
    conf = (f"QUEUE_MINFREE={MINFREE // 1024}K\nMBOX_DIR={{top}}/mail\nALIASES={{top}}/etc/aliases\n"
            "SCHEDULER_CONF={top}/etc/scheduler.conf\n")
    with setgidlib.setgid_install(size="2m", conf=conf) as (binary, spool, confdir, gid):
        mail = os.path.join(os.path.dirname(confdir), "mail")
        os.mkdir(mail)
        yield binary, spool, confdir, mail


def test_submit_keeps_the_reserve_and_the_queue_still_drains(small_spool):
    binary, spool, confdir, mail = small_spool
    conf = os.path.join(confdir, "spoolbox.conf")
    accepted = 0
    for _ in range(40):
        p = run_nobody(confdir, [binary, "submit", "root"], input=MSG)
        if p.returncode != 0:
            break
        accepted += 1
    assert p.returncode == 75, (accepted, p.stderr)
    assert b"QUEUE_MINFREE" in p.stderr and b"not queued" in p.stderr, p.stderr
    assert accepted >= 5
    assert free_bytes(spool) >= MINFREE, "a user ate into the reserve"
    assert os.listdir(os.path.join(spool, "tmp")) == []  # the refused message left nothing behind
    # root (cron, the monitors) may use half of the reserve, and is stopped there
    env = {"PATH": "/usr/bin:/bin"}
    p = subprocess.run([binary, "submit", "-C", conf, "root"], input=b"Subject: from cron\n\ndisk alert\n",
                       capture_output=True, env=env, timeout=20)
    assert p.returncode == 0, p.stderr
    for _ in range(40):
        p = subprocess.run([binary, "submit", "-C", conf, "root"], input=MSG, capture_output=True, env=env, timeout=20)
        if p.returncode:
            break
    assert p.returncode == 75 and b"QUEUE_MINFREE" in p.stderr, p.stderr
    assert free_bytes(spool) >= MINFREE // 2
    queued = len(incoming(spool))
    assert queued == accepted + 1 + _
    # the scheduler picks every message up, delivers it and records the results in what is left
    p = subprocess.run([binary, "scheduler", "-C", conf, "-i", "-1"], capture_output=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert incoming(spool) == []
    assert all(not os.listdir(os.path.join(spool, "queue", h)) for h in os.listdir(os.path.join(spool, "queue")))
    data = open(os.path.join(mail, "root"), "rb").read()
    assert data.count(b"\nSubject: filler\n") == queued - 1 and b"disk alert" in data
