"""mailq's control actions against crashes and a running scheduler (issue 10 point 6,
docs/spool.md 12): kill -9 in the middle of an action leaves a state the next scheduler start
resolves; with a scheduler running, the action is a trigger line the scheduler carries out."""
import os
import signal
import subprocess
import time

from conftest import BINARY, wait_for
from mailqlib import ctl_path, due_links, queue_msg
import sched_gen as gen
import spoolfmt

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")


def test_kill_9_in_the_middle_leaves_a_state_the_next_start_resolves(box, sink):
    """mailq killed with SIGKILL while holding many messages: the pid file still names it, so
    the next scheduler start counts as unclean and walks the whole queue; every message is then
    either held (hold link, no due link) or due and delivered: none lost, none both."""
    env = sink.smarthost_env()
    now = int(time.time())
    ids = [queue_msg(box.spool, [("u%d@example.com" % i, "Q", 1, now - 10)]) for i in range(400)]
    p = subprocess.Popen([BINARY, "mailq", "--hold", "ALL"], env=box.environ(), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    # kill it after its first few holds
    hold = os.path.join(box.spool, "hold")
    deadline = time.time() + 20
    while time.time() < deadline and not (os.path.isdir(hold) and len(os.listdir(hold)) >= 5):
        time.sleep(0.0005)
    p.kill()
    p.wait()
    assert open(os.path.join(box.spool, "scheduler.pid")).read().strip() == str(p.pid)
    held = set(os.listdir(hold))
    assert 5 <= len(held) < 400, "mailq finished before it was killed"
    s = box.scheduler_once(env)
    assert b"did not stop cleanly" in s.stderr, s.stderr
    delivered = {m.rcpt_tos[0] for m in sink.messages}
    left = set(spoolfmt.queued_ids(box.spool))
    for i, mid in enumerate(ids):
        addr = "u%d@example.com" % i
        if mid in left:
            # held, and only held
            assert mid in held and addr not in delivered and due_links(box.spool, mid) == [], mid
        else:
            assert addr in delivered and mid not in set(os.listdir(hold)), mid
    assert len(left) + len(delivered) == 400


def stub_log(box):
    path = os.path.join(box.base, "stub.log")
    return [ln.split() for ln in open(path)] if os.path.exists(path) else []


def delivered(box):
    return [e[4] for e in stub_log(box) if e[0] == "deliver"]


class Scheduler:
    """A foreground scheduler with the stub agent, one agent at a time (so the second host of
    a message waits while the first is being delivered)."""

    def __init__(self, box, slow="3"):
        with open(box.env["SCHEDULER_CONF"], "w") as f:
            f.write('*/* interval=1m retries="1" expiry=1d\nsmtp command="%s" maxchannel=1 maxta=1\n' % STUB)
        self.box = box
        self.p = subprocess.Popen([BINARY, "scheduler", "-i"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=box.environ({"STUB_LOG": os.path.join(box.base, "stub.log"),
                                                   "STUB_SLOW": slow}))

    def wait(self, cond, timeout=20):
        return wait_for(cond, timeout)

    def stop(self, sig=15):
        self.p.send_signal(sig)
        _, err = self.p.communicate(timeout=20)
        return err.decode(errors="replace")


def two_host_message(box):
    return gen.add_incoming(box.spool, [("smtp", "a.example", "slow1@a.example"), ("smtp", "b.example", "ok2@b.example")])


def in_transit(box, mid):
    p = ctl_path(box.spool, mid)
    return os.path.exists(p) and any(r.tag == "T" for r in spoolfmt.Message(open(p, "rb").read()).rcpts)


def test_hold_during_delivery_takes_effect_for_the_rest(box):
    mid = two_host_message(box)
    s = Scheduler(box)
    try:
        assert s.wait(lambda: in_transit(box, mid))
        p = box.run("mailq", "--hold", mid)
        assert p.returncode == 0 and b"asked the scheduler" in p.stdout, p.stderr
        assert s.wait(lambda: os.path.exists(os.path.join(box.spool, "hold", mid)))
        time.sleep(0.5)
    finally:
        log = s.stop()
    assert "%s: held, as mailq asked" % mid in log, log
    m = spoolfmt.Message(open(ctl_path(box.spool, mid), "rb").read())
    # the recipient out when the hold came was delivered; the other never went out
    assert [r.tag for r in m.rcpts] == ["D", "N"], log
    assert delivered(box) == ["slow1@a.example"]
    assert due_links(box.spool, mid) == []
    # a restarted scheduler leaves it alone; released through it, the rest goes out
    s = Scheduler(box, slow="0")
    try:
        time.sleep(0.5)
        assert delivered(box) == ["slow1@a.example"]
        p = box.run("mailq", "--release", mid)
        assert p.returncode == 0, p.stderr
        assert s.wait(lambda: not os.path.exists(ctl_path(box.spool, mid)))
    finally:
        log = s.stop()
    assert sorted(delivered(box)) == ["ok2@b.example", "slow1@a.example"], log
    assert "%s: released, as mailq asked" % mid in log


def test_delete_during_delivery_never_leaves_half_a_message(box):
    mid = two_host_message(box)
    keep = gen.add_incoming(box.spool, [("smtp", "c.example", "ok3@c.example")])
    s = Scheduler(box)
    try:
        assert s.wait(lambda: in_transit(box, mid))
        p = box.run("mailq", "--delete", mid)
        assert p.returncode == 0, p.stderr
        assert s.wait(lambda: not os.path.exists(os.path.join(box.spool, "queue", mid[-1], mid + ".d")))
        ok = s.wait(lambda: "ok3@c.example" in delivered(box))
    finally:
        log = s.stop()
    assert ok, log
    assert "%s: deleted, as mailq asked" % mid in log, log
    # the agent that had it finished its delivery; nothing else of it went out; no file is left
    assert "ok2@b.example" not in delivered(box) and "slow1@a.example" in delivered(box)
    assert not os.path.exists(ctl_path(box.spool, mid)) and due_links(box.spool, mid) == []
    assert keep not in spoolfmt.queued_ids(box.spool)


def test_retry_and_unknown_ids_with_a_running_scheduler(box):
    now = int(time.time())
    mid = queue_msg(box.spool, [("ok9@example.com", "Q", 1, now + 7200)], due=now + 7200)
    s = Scheduler(box, slow="0")
    try:
        time.sleep(0.5)
        assert delivered(box) == []
        p = box.run("mailq", "--retry", mid, "0000000000000")
        assert p.returncode == 66 and b"0000000000000: no such message" in p.stderr, p.stderr
        assert s.wait(lambda: delivered(box) == ["ok9@example.com"])
    finally:
        s.stop()


def test_a_held_message_survives_a_scheduler_killed_with_9(box):
    """The start after a kill -9 walks the whole queue and gives every control file without an
    index entry a due link; held messages count as indexed, so they stay held."""
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "ok1@a.example")])
    other = gen.add_incoming(box.spool, [("smtp", "a.example", "ok2@a.example")])
    assert box.run("mailq", "--hold", mid).returncode == 0
    s = Scheduler(box, slow="0")
    # delivered and its result recorded (the message removed): a kill before that may deliver
    # it again (at least once), which is not what this test is about
    assert s.wait(lambda: delivered(box) == ["ok2@a.example"] and other not in spoolfmt.queued_ids(box.spool))
    log = s.stop(signal.SIGKILL)
    s = Scheduler(box, slow="0")
    try:
        time.sleep(1)
    finally:
        log = s.stop()
    assert "did not stop cleanly" in log, log
    assert delivered(box) == ["ok2@a.example"] and other not in spoolfmt.queued_ids(box.spool)
    assert os.path.exists(os.path.join(box.spool, "hold", mid)) and due_links(box.spool, mid) == []
