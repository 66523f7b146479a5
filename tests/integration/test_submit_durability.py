"""submit's durability (issue point 9, docs/spool.md 5): a full filesystem, signals and SIGKILL
at random moments never leave anything but complete messages in incoming/, and every failure
exits 75 naming what failed and where."""
import os
import random
import signal
import subprocess
import time

import pytest

from conftest import BINARY
from spoolfmt import incoming, read_message_file
from submitlib import sendmail


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "fs"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {p.stderr.strip()}")
    try:
        yield str(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


def fill(path, leave):
    """Fills the filesystem of path, leaving about `leave` bytes."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    with open(os.path.join(path, "filler"), "wb") as f:
        try:
            f.write(b"\0" * max(0, free - leave))
            f.flush()
            os.fsync(f.fileno())
        except OSError:
            pass


def snapshot(spool):
    out = {}
    for d in ("incoming", "tmp"):
        p = os.path.join(spool, d)
        out[d] = sorted(os.listdir(p)) if os.path.isdir(p) else []
    return out


@pytest.mark.parametrize("leave,size", [(0, 1000), (24 * 1024, 200 * 1024)])
def test_full_filesystem_exit_75_queue_unchanged(box, small_tmpfs, leave, size):
    box.env["SPOOL"] = spool = os.path.join(small_tmpfs, "spool")
    box.env["QUEUE_MINFREE"] = "0"  # the file system's own ENOSPC here (the reserve: test_spool_minfree.py)
    assert sendmail(box, "root", input=b"Subject: first\n\nok\n").returncode == 0
    before = snapshot(spool)
    fill(small_tmpfs, leave)
    p = sendmail(box, "root", input=b"Subject: big\n\n" + b"x" * size + b"\n")
    assert p.returncode == 75, p.stderr
    err = p.stderr.decode()
    assert "No space left on device" in err
    assert os.path.join(spool, "tmp") in err       # where
    assert "write" in err                           # what
    assert "message not queued" in err
    assert snapshot(spool) == before                # nothing new in incoming/, nothing left in tmp/
    os.unlink(os.path.join(small_tmpfs, "filler"))
    assert sendmail(box, "root", input=b"Subject: again\n\nok\n").returncode == 0


def test_unusable_spool_is_tempfail(box, tmp_path):
    f = tmp_path / "not-a-dir"
    f.write_text("x")
    p = sendmail(box, "root", input=b"x\n", env={"SPOOL": str(f)})
    assert p.returncode == 75
    assert str(f).encode() in p.stderr


def test_sigterm_while_reading_leaves_nothing(box):
    sendmail(box, "root", input=b"x\n")
    before = snapshot(box.spool)
    p = subprocess.Popen(["/usr/sbin/sendmail", "root"], executable=BINARY, stdin=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=box.environ())
    p.stdin.write(b"Subject: s\n\n" + b"y" * 100000)
    p.stdin.flush()
    deadline = time.time() + 5
    while not os.listdir(os.path.join(box.spool, "tmp")) and time.time() < deadline:
        time.sleep(0.01)
    assert os.listdir(os.path.join(box.spool, "tmp")), "submit did not start writing"
    p.send_signal(signal.SIGTERM)
    assert p.wait(10) == 75
    assert b"interrupted by a signal" in p.stderr.read()
    p.stdin.close()
    assert snapshot(box.spool) == before


def check_complete(spool, name, body):
    m, stored = read_message_file(os.path.join(spool, "incoming", name))
    assert m.id == name
    assert m.size == len(stored)
    assert stored.endswith(body), name
    assert [r.addr for r in m.rcpts] == ["b@example.com", "a@example.com"]


@pytest.mark.slow
def test_sigkill_at_random_moments_leaves_only_complete_messages(box, tmp_path):
    body = b"".join(b"line %06d of the message body, long enough to take a while to write\n" % i for i in range(4000))
    src = tmp_path / "msg"
    src.write_bytes(b"Subject: kill test\n\n" + body)
    sendmail(box, "root", input=b"x\n")  # creates the spool
    os.unlink(os.path.join(box.spool, "incoming", incoming(box.spool)[0]))
    env = box.environ()

    def run_once(delay):
        with open(src, "rb") as f:
            # both remote: a bare local name would be qualified by a build without local delivery
            p = subprocess.Popen(["/usr/sbin/sendmail", "b@example.com", "a@example.com"], executable=BINARY, stdin=f,
                                 stderr=subprocess.DEVNULL, env=env)
            if delay is not None:
                time.sleep(delay)
                p.kill()
            return p.wait(10)

    t0 = time.time()
    for _ in range(5):
        assert run_once(None) == 0
    typical = (time.time() - t0) / 5
    rng = random.Random(1234)
    ok = 0
    seen = set(incoming(box.spool))
    for n in seen:
        check_complete(box.spool, n, body)
    for _ in range(200):
        rc = run_once(rng.uniform(0, typical * 1.3))
        ok += rc == 0
        # after every trial, whatever appeared in incoming/ is a whole message
        now = set(incoming(box.spool))
        for n in now - seen:
            check_complete(box.spool, n, body)
        seen = now
    names = incoming(box.spool)
    # every run that reported success left its message; killed runs left a whole one or none
    assert len(names) >= 5 + ok
    assert len(names) <= 205
    # leftovers only in tmp/, which cleaner removes
    leftovers = os.listdir(os.path.join(box.spool, "tmp"))
    print(f"SIGKILL trials: {ok} finished, {len(names) - 5} queued, {len(leftovers)} tmp leftovers")
