"""The spool's free-space reserve (issue 11 point 3, QUEUE_MINFREE, docs/spool.md 5): on a small
tmpfs, an ordinary user submitting through the setgid binary is refused with 75 once the reserve
is reached and never fills it; root may go on into half of it; and the scheduler still picks up
everything and records its results, so the queue drains instead of wedging."""
import grp
import os
import shutil
import subprocess
import tempfile

import pytest
from conftest import BINARY, IS_ASAN
from spoolfmt import incoming
from test_submit_perm import GROUP, run_nobody

MINFREE = 512 * 1024
MSG = b"Subject: filler\n\n" + b"x" * 100 * 1024 + b"\n"


def free_bytes(path):
    v = os.statvfs(path)
    return v.f_bavail * v.f_frsize


@pytest.fixture
def small_spool():
    """A setgid copy of the binary and a 2 MiB tmpfs spool with the modes of docs/spool.md 8."""
    if os.geteuid() != 0:
        pytest.skip("needs root (tmpfs, setgid binary, nobody)")
    if IS_ASAN:
        pytest.skip("LeakSanitizer cannot run in a setgid process")
    try:
        gid = grp.getgrnam(GROUP).gr_gid
    except KeyError:
        pytest.skip(f"no '{GROUP}' group")
    made_etc = not os.path.isdir("/etc/spoolbox")
    if made_etc:
        os.makedirs("/etc/spoolbox")
    top = tempfile.mkdtemp(prefix="spoolbox-minfree-", dir="/tmp")
    os.chmod(top, 0o755)
    spool = os.path.join(top, "spool")
    os.mkdir(spool)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0710", "tmpfs", spool], capture_output=True)
    if p.returncode != 0:
        shutil.rmtree(top, ignore_errors=True)
        pytest.skip("cannot mount a tmpfs: " + p.stderr.decode())
    try:
        binary = os.path.join(top, "spoolbox")
        shutil.copy(BINARY, binary)
        os.chown(binary, 0, gid)
        os.chmod(binary, 0o2755)
        os.chown(spool, 0, gid)
        os.chmod(spool, 0o710)
        for d, mode, g in (("tmp", 0o1770, gid), ("incoming", 0o1770, gid), ("queue", 0o2750, gid), ("due", 0o750, 0),
                           ("corrupt", 0o750, 0), ("hold", 0o2750, gid)):
            os.mkdir(os.path.join(spool, d))
            os.chown(os.path.join(spool, d), 0, g)
            os.chmod(os.path.join(spool, d), mode)
        trig = os.path.join(spool, "trigger")
        os.mkfifo(trig)
        os.chown(trig, 0, gid)
        os.chmod(trig, 0o620)
        confdir = os.path.join(top, "etc")
        os.mkdir(confdir)
        mail = os.path.join(top, "mail")
        os.mkdir(mail)
        conf = (f"SPOOL={spool}\nMYHOSTNAME=box.example\nLOG=stderr\nSUBMIT_GROUP={GROUP}\n"
                f"QUEUE_MINFREE={MINFREE // 1024}K\nMBOX_DIR={mail}\nALIASES={confdir}/aliases\n"
                f"SCHEDULER_CONF={confdir}/scheduler.conf\n")
        with open(os.path.join(confdir, "spoolbox.conf"), "w") as f:
            f.write(conf)
        os.chmod(os.path.join(confdir, "spoolbox.conf"), 0o644)
        yield binary, spool, confdir, mail
    finally:
        subprocess.run(["umount", "-l", spool])
        shutil.rmtree(top, ignore_errors=True)
        if made_etc:
            os.rmdir("/etc/spoolbox")


def test_submit_keeps_the_reserve_and_the_queue_still_drains(small_spool):
    binary, spool, confdir, mail = small_spool
    conf = os.path.join(confdir, "spoolbox.conf")
    accepted = 0
    for _ in range(40):
        p = run_nobody(confdir, [binary, "submit", "root"], input=MSG)
        if p.returncode in (121, 122, 123):
            pytest.skip("cannot make a private mount namespace here")
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
