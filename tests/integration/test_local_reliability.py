"""Local delivery under a hostile or unlucky user (issue 11): one user cannot stop local delivery
for the others (a lock she holds, a delivery process she stops, a slow |command), a kill in the
middle of a mailbox write never leaves half a message for a reader, and a symlink planted in a
world-writable mail directory neither captures nor bounces another user's mail."""
import fcntl
import os
import signal
import subprocess

import pytest
from proclib import children, processes_of
from sysroot import drop_to
from test_local import NOBODY, TA, Report, log_text, mark_transit, pubdir, queue_message, user, write_forward  # noqa: F401
from test_local_e2e import count_in, scheduler, sendmail, wait_for  # noqa: F401


def own_mailbox(path, pw):
    with open(path, "wb"):
        pass
    os.chown(path, pw.pw_uid, pw.pw_gid)
    os.chmod(path, 0o600)


def start_delivery(box, ta, mid):
    """Hands the agent ta the job for mid without waiting for its report; returns the pid of
    the delivery process it forks (there must be exactly one)."""
    mark_transit(box, mid, ta.p.pid)
    ta.p.stdin.write(f"{mid}\t-\n".encode())
    ta.p.stdin.flush()
    assert wait_for(lambda: children(ta.p.pid)), "no delivery process"
    (child,) = children(ta.p.pid)
    return child


# ---------------------------------------------------------------- point 4: one user, everyone

def test_stopped_delivery_process_is_killed_and_deferred(box, pubdir):  # noqa: F811
    """She holds a lock on her own mailbox and stops our delivery process (it runs as her, so
    she may): the agent kills it at LOCK_TIMEOUT + DELIVERY_TIMEOUT, defers her, and goes on."""
    os.chmod(pubdir, 0o1777)
    mbox = os.path.join(pubdir, "nobody")
    own_mailbox(mbox, NOBODY)
    holder = open(mbox, "ab")
    fcntl.lockf(holder, fcntl.LOCK_EX)
    mid = queue_message(box, ["nobody"], b"Subject: to her\n\nx\n")
    # the time limit is long enough that a loaded machine stops the process before it ends
    ta = TA(box, {"MBOX_DIR": pubdir, "LOCK_TIMEOUT": "5s", "DELIVERY_TIMEOUT": "1s"})
    try:
        child = start_delivery(box, ta, mid)
        os.kill(child, signal.SIGSTOP)
        holder.close()  # the lock goes, but the stopped process cannot use it
        r = Report(ta.readline(30))
        assert (r.status, r.enh) == ("deferred", "4.3.0"), r
        assert "timed out after 6s" in r.diag and "killed" in r.diag, r
        assert ta.readline(5) == "#hungry"
        assert not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] == "Z"
        # the agent is free for the next user
        mid2 = queue_message(box, ["root"], b"Subject: to root\n\ny\n")
        (r2,) = ta.job(mid2)
        assert r2.status == "ok", (r2, log_text(box))
    finally:
        ta.close()
    assert b"Subject: to root" in open(os.path.join(pubdir, "root"), "rb").read()
    assert os.path.getsize(mbox) == 0
    assert "timed out after 6s: killed" in log_text(box)


def test_one_slow_user_does_not_hold_the_others(box, pubdir, user, scheduler):  # noqa: F811
    """Her .forward runs a command that waits (for a file here, for ever in the issue), and
    another time she holds a lock on her mailbox: root's mail is delivered meanwhile, because
    local deliveries are serialised per user, not for everyone (a thread per local user)."""
    os.chmod(pubdir, 0o1777)
    go, out = os.path.join(pubdir, "go"), os.path.join(user.pw_dir, "out")
    fwd = write_forward(user, f"\"|while [ ! -e {go} ]; do sleep 0.05; done; cat > {out}\"\n")
    env = {"MBOX_DIR": pubdir, "LOCK_TIMEOUT": "10m", "COMMAND_TIMEOUT": "10m"}
    scheduler(env)
    root_mbox = os.path.join(pubdir, "root")
    sendmail(box, "-i", user.pw_name, data=b"Subject: slow\n\nfor her\n")
    assert wait_for(lambda: processes_of(user.pw_uid)), "her command never started"
    sendmail(box, "-i", "root", data=b"Subject: first\n\nfor root\n")
    assert wait_for(lambda: count_in(root_mbox, b"Subject: first") == 1, 30), \
        open(os.path.join(box.base, "scheduler.log")).read()
    assert not os.path.exists(out)  # she is still being delivered
    open(go, "w").close()
    assert wait_for(lambda: os.path.exists(out) and b"for her" in open(out, "rb").read(), 30)
    # a lock she holds on her own mailbox, for as long as she likes
    os.unlink(fwd)
    mbox = os.path.join(pubdir, user.pw_name)
    own_mailbox(mbox, user)
    holder = open(mbox, "ab")
    fcntl.lockf(holder, fcntl.LOCK_EX)
    try:
        sendmail(box, "-i", user.pw_name, data=b"Subject: locked\n\nfor her\n")
        # her delivery process (running as her) waits for the lock before root's mail comes
        assert wait_for(lambda: processes_of(user.pw_uid)), "her delivery never started"
        sendmail(box, "-i", "root", data=b"Subject: second\n\nfor root\n")
        assert wait_for(lambda: count_in(root_mbox, b"Subject: second") == 1, 30), \
            open(os.path.join(box.base, "scheduler.log")).read()
        assert os.path.getsize(mbox) == 0
    finally:
        holder.close()
    assert wait_for(lambda: count_in(mbox, b"Subject: locked") == 1, 30)


# ---------------------------------------------------------------- point 7: kill during a write

def norm(data):
    """A mailbox with its From_ line dates replaced (they differ from one delivery to the next)."""
    import re
    return re.sub(rb"(?m)^From (\S+) .*\n", rb"From \1 DATE\n", data)


def test_kill_during_mbox_write_never_leaves_half_a_message(box, tmp_path):
    """The delivery process is killed (SIGKILL, injected by strace) at its Nth write, for every
    N of the append (dotlock, From_ line, each 64 KiB of the body) and at its fsync: right after
    the kill, and after the next delivery, the mailbox holds only whole messages."""
    import shutil
    if not shutil.which("strace"):
        pytest.skip("strace is needed to kill at an exact write")
    big = b"Subject: big\n\n" + b"".join(b"line %06d of a long message\n" % i for i in range(12000))
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    mid = queue_message(box, ["root"], big)
    ta = TA(box, {"MBOX_DIR": str(ref_dir)})
    try:
        assert ta.job(mid)[0].status == "ok"
    finally:
        ta.close()
    copy = norm(open(ref_dir / "root", "rb").read())
    mbox = os.path.join(box.mail, "root")
    ta = TA(box)
    try:
        assert ta.job(queue_message(box, ["root"], b"Subject: first\n\nalready there\n"))[0].status == "ok"
    finally:
        ta.close()
    raw_before = open(mbox, "rb").read()
    before = norm(raw_before)

    def whole(data, least):
        data = norm(data)
        assert data.startswith(before), data[:300]
        rest = data[len(before):]
        k = len(rest) // len(copy) if copy else 0
        assert rest == copy * k and k >= least, "half a message in the mailbox (%d bytes after the first)" % len(rest)
        return k

    killed = 0
    rounds = [(f"write:signal=KILL:when={n}", False) for n in range(1, 10)] + [("fsync:signal=KILL", False)]
    # the agent dies with its delivery process (a kill -9 of the lot): the next delivery repairs
    rounds += [(f"write:signal=KILL:when={n}", True) for n in (2, 4)]
    for inject, agent_dies in rounds:
        holder = open(mbox, "ab")
        fcntl.lockf(holder, fcntl.LOCK_EX)
        mid = queue_message(box, ["root"], big)
        ta = TA(box, {"LOCK_TIMEOUT": "60s"})
        try:
            child = start_delivery(box, ta, mid)
            st = subprocess.Popen(["strace", "-p", str(child), "-o", "/dev/null", "-e", "trace=write,fsync",
                                   "-e", "inject=" + inject], stderr=subprocess.PIPE)
            line = st.stderr.readline()
            if b"attached" not in line:
                st.kill()
                pytest.skip("strace cannot attach: %r" % line)
            if agent_dies:
                os.kill(ta.p.pid, signal.SIGSTOP)
            holder.close()  # the delivery process takes the lock and writes
            if agent_dies:
                st.wait(10)
                os.kill(ta.p.pid, signal.SIGKILL)
                ta.p.wait(10)
                assert len(open(mbox, "rb").read()) > len(raw_before)  # half a message, for now
                mid2 = queue_message(box, ["root"], big)
                ta.log.close()
                ta = TA(box)
                (r2,) = ta.job(mid2)
                assert r2.status == "ok", (r2, log_text(box))
                assert whole(open(mbox, "rb").read(), 1) == 1
                killed += 1
                continue  # (the mailbox is reset below, in finally)
            r = Report(ta.readline(30))
            st.wait(10)
            if r.status == "deferred":
                assert "killed by signal 9" in r.diag, r
                killed += 1
            else:
                assert r.status == "ok", r
            assert ta.readline(5) == "#hungry"
            # right after the kill: the agent has already undone the unfinished append
            n_before = whole(open(mbox, "rb").read(), 0)
            # and the message is delivered whole by the next attempt
            (r2,) = ta.job(queue_message(box, ["root"], big))
            assert r2.status == "ok", (r2, log_text(box))
            assert whole(open(mbox, "rb").read(), 1) == n_before + 1
        finally:
            holder.close()
            ta.close()
            with open(mbox, "r+b") as f:  # the next round starts from the first message alone
                f.write(raw_before)
                f.truncate(len(raw_before))
    assert killed >= 8, "the kill moments did not hit the append"
    assert "removed an unfinished append" in log_text(box)


# ---------------------------------------------------------------- point 10: planted mailboxes

def as_nobody(fn):
    """Runs fn in a child process with nobody's privileges (the attacker)."""
    pid = os.fork()
    if pid == 0:
        try:
            drop_to(NOBODY)
            fn()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, st = os.waitpid(pid, 0)
    assert st == 0


def test_planted_mailbox_in_world_writable_dir_is_moved_aside_and_mail_delivered(box, pubdir, user):  # noqa: F811
    """In a world-writable (sticky) mail directory nobody plants a symlink under another user's
    mailbox name, or a file of her own: it is moved aside and logged as an attack, and the mail
    is delivered into a fresh mailbox of the recipient now, not deferred for 3 hours and bounced."""
    os.chmod(pubdir, 0o1777)
    env = {"MBOX_DIR": pubdir}
    mbox = os.path.join(pubdir, user.pw_name)
    trap = os.path.join(pubdir, "trap")

    def plant_symlink():
        with open(trap, "wb"):
            pass
        os.chmod(trap, 0o666)
        os.symlink(trap, mbox)

    as_nobody(plant_symlink)
    mid = queue_message(box, [user.pw_name], b"Subject: one\n\nfor the user\n")
    ta = TA(box, env)
    try:
        (r,) = ta.job(mid)
        assert (r.status, r.action) == ("ok", "delivered"), (r, log_text(box))
        st = os.lstat(mbox)
        assert (st.st_uid, st.st_mode & 0o7777) == (user.pw_uid, 0o600) and not os.path.islink(mbox)
        assert b"for the user" in open(mbox, "rb").read()
        assert os.path.getsize(trap) == 0
        aside = [n for n in os.listdir(pubdir) if n.startswith(f".{user.pw_name}.planted.")]
        assert len(aside) == 1 and os.path.islink(os.path.join(pubdir, aside[0])), os.listdir(pubdir)
        log = log_text(box)
        assert f"mailbox {mbox} of {user.pw_name} was a symlink planted by uid {NOBODY.pw_uid}" in log, log
        # a file of her own under his name (to read his mail): the same
        os.unlink(mbox)

        def plant_file():
            with open(mbox, "wb") as f:
                f.write(b"hers\n")
            os.chmod(mbox, 0o666)

        as_nobody(plant_file)
        (r,) = ta.job(queue_message(box, [user.pw_name], b"Subject: two\n\nagain\n"))
        assert r.status == "ok", (r, log_text(box))
        assert os.stat(mbox).st_uid == user.pw_uid and b"hers" not in open(mbox, "rb").read()
        assert f"mailbox {mbox} of {user.pw_name} was a file planted by uid {NOBODY.pw_uid}" in log_text(box)
        # the recipient's own symlink is her business: refused (deferred), nothing moved
        os.unlink(mbox)
        os.symlink(trap, mbox)
        os.lchown(mbox, user.pw_uid, user.pw_gid)
        (r,) = ta.job(queue_message(box, [user.pw_name], b"Subject: three\n\n"))
        assert (r.status, r.enh) == ("deferred", "4.2.0") and "symlink" in r.diag, r
        assert os.path.islink(mbox)
    finally:
        ta.close()


def test_unusable_journal_directory_is_said_once_and_delivery_goes_on(box, tmp_path):
    """SPOOL/mbox is not a private directory of ours (here a symlink elsewhere): nothing is
    written through it, one log line says appends are not journaled, and mail is delivered."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    mids = [queue_message(box, ["root"], b"Subject: %d\n\nx\n" % i) for i in range(2)]
    os.symlink(elsewhere, os.path.join(box.spool, "mbox"))
    ta = TA(box)
    try:
        assert [ta.job(m)[0].status for m in mids] == ["ok", "ok"], log_text(box)
    finally:
        ta.close()
    assert os.listdir(elsewhere) == []
    assert log_text(box).count("mailbox appends are not journaled") == 1
    assert open(os.path.join(box.mail, "root"), "rb").read().count(b"\nSubject: ") == 2
