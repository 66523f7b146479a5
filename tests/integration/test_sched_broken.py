"""The scheduler on a broken spool (issue 11 point 10, the scheduler's parts): a one-shot run
(-1) that leaves mail stuck exits 75 and says why, never 0; on a full disk the scheduler does not
run without its pid file (mailq, submit and the unclean-stop check find a scheduler by it)."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import BINARY, IS_ASAN
import sched_gen as gen

BASIC = """*/* interval=1s retries="1" expiry=1h
local command="STUB $channel"
smtp command="STUB $channel"
error command="STUB error"
"""
STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")


def sconf(box):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(BASIC.replace("STUB", STUB))


def once(box):
    p = box.run("scheduler", "-i", "-1", env={"STUB_LOG": os.path.join(box.base, "stub.log")}, timeout=60)
    return p.returncode, p.stderr.decode(errors="replace")


@pytest.mark.parametrize("breakage", ["queue_is_a_file", "message_file_gone"])
def test_one_shot_with_mail_stuck_exits_75(box, breakage):
    sconf(box)
    assert once(box)[0] == 0                                 # a sound (empty) spool: 0
    if breakage == "queue_is_a_file":
        # queue/ cannot hold control files: nothing can be picked up
        mid = gen.add_incoming(box.spool, [("local", "-", "ok")])
        shutil.rmtree(os.path.join(box.spool, "queue"), ignore_errors=True)
        with open(os.path.join(box.spool, "queue"), "w") as f:
            f.write("not a directory\n")
        stuck = os.path.join(box.spool, "incoming", mid)
    else:
        # a control file whose message file is gone cannot be delivered or rebuilt
        mid = gen.add_queued(box.spool, [("local", "-", "ok")])
        os.unlink(os.path.join(box.spool, "queue", mid[-1], mid + ".d"))
        stuck = os.path.join(box.spool, "queue", mid[-1], mid + ".c")
    rc, err = once(box)
    assert rc == 75, err
    assert "one-shot: mail is stuck in the queue" in err
    assert os.path.exists(stuck)                             # nothing was thrown away


@pytest.fixture
def full_spool(box):
    """The box's spool on a 256 KiB tmpfs, laid out by a first scheduler run, then filled up."""
    if os.geteuid() != 0:
        pytest.skip("needs root (tmpfs)")
    os.makedirs(box.spool, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", box.spool], capture_output=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a tmpfs: " + p.stderr.decode())
    try:
        yield box.spool
    finally:
        subprocess.run(["umount", "-l", box.spool])


def fill(path):
    fd = os.open(os.path.join(path, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"x" * 4096) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.skipif(IS_ASAN, reason="the sanitizer's own files need space")
def test_full_disk_scheduler_does_not_run_without_its_pid_file(box, full_spool):
    """A first start on a full disk: the pid cannot be written, so the scheduler does not run."""
    sconf(box)
    for d in ("tmp", "incoming", "queue", "due"):
        os.makedirs(os.path.join(full_spool, d))
    fill(full_spool)
    rc, err = once(box)
    assert rc == 75, err
    assert "cannot write my pid to" in err and "not starting" in err
    assert "started:" not in err                             # it did not run


@pytest.mark.skipif(IS_ASAN, reason="the sanitizer's own files need space")
def test_full_disk_scheduler_that_ran_before_starts_with_its_pid(box, full_spool):
    """A scheduler that ran before keeps room for its pid behind the empty file, so it starts on
    a full disk (it must, to drain the queue), names itself, and leaves the file empty again."""
    sconf(box)
    assert once(box)[0] == 0
    pidfile = os.path.join(full_spool, "scheduler.pid")
    assert os.path.getsize(pidfile) == 0
    fill(full_spool)
    p = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ({"STUB_LOG": "/dev/null"}),
                         stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 10
        while time.time() < deadline and open(pidfile).read().strip() != str(p.pid):
            time.sleep(0.05)
        assert open(pidfile).read().strip() == str(p.pid)
    finally:
        p.terminate()
        err = p.communicate(timeout=40)[1].decode(errors="replace")
    assert p.returncode == 0, err
    assert os.path.getsize(pidfile) == 0
