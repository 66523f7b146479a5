"""local end to end: `sendmail` → scheduler → local → mailbox, and alias targets that re-enter
the queue through submit (with the original envelope sender, or owner-NAME)."""
import os
import signal
import subprocess

import pytest
from conftest import BINARY, wait_for
from spoolfmt import incoming, read_message_file
from test_local import TA, queue_message, write_aliases


@pytest.fixture
def scheduler(box):
    """A scheduler in the foreground on the box's spool (built-in scheduler.conf)."""
    log = open(os.path.join(box.base, "scheduler.log"), "ab")
    procs = []

    def start(env=None):
        p = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stdout=log, stderr=log)
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    log.close()


def count_in(path, what):
    return open(path, "rb").read().count(what) if os.path.exists(path) else 0


def sendmail(box, *args, data):
    p = box.run(None, *args, input=data, argv0="sendmail")
    assert p.returncode == 0, p.stderr
    return p


def queue_empty(box):
    q = os.path.join(box.spool, "queue")
    return not incoming(box.spool) and all(not os.listdir(os.path.join(q, h)) for h in os.listdir(q)) \
        if os.path.isdir(q) else False


def test_submit_scheduler_local_mbox(box, scheduler):
    mbox = os.path.join(box.mail, "root")
    write_aliases(box, "postmaster: root\n")
    scheduler()
    for rcpt in ("root", "root@localhost", "root@box.example", "postmaster"):
        sendmail(box, "-i", "-f", "alice@example.org", rcpt, data=f"Subject: to {rcpt}\n\nhello\n".encode())
    assert wait_for(lambda: count_in(mbox, b"\nSubject: to ") == 4), open(os.path.join(box.base, "scheduler.log")).read()
    data = open(mbox, "rb").read()
    for rcpt in ("root", "root@localhost", "root@box.example", "postmaster"):
        assert f"Subject: to {rcpt}\n".encode() in data
    assert data.count(b"\nReturn-Path: <alice@example.org>\n") == 4
    assert data.count(b"From alice@example.org ") == 4
    assert wait_for(lambda: queue_empty(box)), "delivered messages are removed from the queue"


def test_unknown_user_end_to_end_bounces(box, scheduler):
    """A 5.1.1 from local goes to the scheduler as a failure: the recipient is no longer queued
    for local (errormail's DSN, when it exists, goes back to the sender)."""
    scheduler()
    sendmail(box, "-i", "-f", "root@box.example", "nosuchuser", data=b"Subject: x\n\n")
    log = os.path.join(box.base, "scheduler.log")
    assert wait_for(lambda: b"5.1.1" in open(log, "rb").read()), open(log).read()


def test_remote_alias_targets_reenter_the_queue(box):
    write_aliases(box, "list: \\root, far@remote.example, other@remote.example\n"
                       "owned: near@remote.example\nowner-owned: root\n")
    msg = b"Subject: list\n\nbody\n"
    mid = queue_message(box, ["list", "owned"], msg, sender="alice@example.org")
    ta = TA(box)
    try:
        r = ta.job(mid)
    finally:
        ta.close()
    assert [x.status for x in r] == ["ok", "ok"], r
    assert r[0].action == "expanded" and r[1].action == "relayed"
    new = {}
    for i in incoming(box.spool):
        m, body = read_message_file(os.path.join(box.spool, "incoming", i))
        new[tuple(sorted(m.recipients))] = (m, body)
    assert set(new) == {("far@remote.example", "other@remote.example"), ("near@remote.example",)}
    m, body = new[("far@remote.example", "other@remote.example")]
    assert m.sender == "alice@example.org"  # the original envelope sender
    assert all(rc.channel == "smtp" for rc in m.rcpts)
    # submit puts its Received: first; ours follows, then the message as we got it
    assert body.startswith(b"Received: ") and b"\nDelivered-To: list@box.example\nSubject: list\n" in body
    assert body.endswith(b"\n\nbody\n") and b"Return-Path" not in body
    m, body = new[("near@remote.example",)]
    assert m.sender == "owner-owned@box.example"  # sendmail's owner-NAME rule
    assert b"\nDelivered-To: owned@box.example\nSubject: list\n" in body


def test_root_setting_to_a_remote_admin_keeps_the_null_sender(box):
    mid = queue_message(box, ["root"], b"Subject: cron\n\nout\n", sender="")
    ta = TA(box, {"ROOT": "admin@remote.example"})
    try:
        r = ta.job(mid)
    finally:
        ta.close()
    assert r[0].status == "ok" and r[0].action == "relayed", r
    (i,) = incoming(box.spool)
    m, body = read_message_file(os.path.join(box.spool, "incoming", i))
    assert m.recipients == ["admin@remote.example"] and m.sender == ""
    assert not os.path.exists(os.path.join(box.mail, "root"))


def test_loop_through_a_remote_host_is_caught(box):
    """What we sent out for `list` comes back to `list`: Delivered-To stops it (5.4.6)."""
    write_aliases(box, "list: far@remote.example\n")
    mid = queue_message(box, ["list"], b"Subject: l\n\n")
    ta = TA(box)
    try:
        assert ta.job(mid)[0].status == "ok"
        (i,) = incoming(box.spool)
        _, body = read_message_file(os.path.join(box.spool, "incoming", i))
        back = queue_message(box, ["list"], body)
        r = ta.job(back)
    finally:
        ta.close()
    assert (r[0].status, r[0].enh) == ("error", "5.4.6"), r
