"""The crash-point proof (issue 11 point 11, docs/spool.md 7.2): the process is killed (SIGKILL,
through the test-only SPOOLBOX_TEST_CRASH hook, lib/crashpoint.c) right after each durable step
of submit -> scheduler (pick-up, hand-out, records, removal) -> local delivery, and of the
mailq control actions, looping N over every step; then the spool is run again without the hook.
Every message acknowledged (submit exit 0) must be in the mailbox (0 lost), at most the
documented duplicate bound more than once, and the queue must end empty."""
import os
import signal
import subprocess

import pytest

from conftest import BINARY, Box
import spoolfmt

pytestmark = pytest.mark.needs("local")  # the messages go to a mailbox

MAX_STEPS = 200  # far more steps than any path has: the loop ends when a run goes through


def mbox_count(box, tag):
    path = os.path.join(box.mail, "root")
    return open(path, "rb").read().count(b"\nSubject: %s\n" % tag.encode()) if os.path.exists(path) else 0


def queue_files(box):
    q = os.path.join(box.spool, "queue")
    left = [f for h in os.listdir(q) for f in os.listdir(os.path.join(q, h))] if os.path.isdir(q) else []
    return left + spoolfmt.incoming(box.spool)


def submit(box, tag, env=None):
    return box.run("submit", "-i", "-f", "alice@example.org", "root", input=b"Subject: %s\n\nbody\n" % tag.encode(),
                   env=env)


def once(box, env=None):
    return subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), capture_output=True, timeout=60)


def drain(box):
    """Runs the queue without the hook until it is empty (a crash may have left a recipient
    deferred with a later retry time: --retry makes it due now)."""
    log = ""
    for _ in range(4):
        p = once(box)
        log += p.stderr.decode(errors="replace")
        assert p.returncode == 0, log
        if not queue_files(box):
            return log
        box.run("mailq", "--retry", "ALL")
    raise AssertionError("the queue does not drain: %s\n%s" % (queue_files(box), log))


def crashed(p):
    return p.returncode == -signal.SIGKILL and b"test crash point" in p.stderr


class Tally:
    def __init__(self):
        self.trials = self.lost = self.dups = 0

    def __repr__(self):
        return "trials=%d lost=%d duplicates=%d" % (self.trials, self.lost, self.dups)


def test_crash_at_every_step_of_submit(tmp_path):
    t = Tally()
    for n in range(1, MAX_STEPS):
        box = Box(tmp_path / ("s%d" % n))
        p = submit(box, "m", env={"SPOOLBOX_TEST_CRASH": "%d:submit" % n})
        if not crashed(p):
            assert p.returncode == 0, p.stderr
        acked = p.returncode == 0
        drain(box)
        got = mbox_count(box, "m")
        t.trials += 1
        t.lost += acked and got == 0
        t.dups += max(0, got - 1)
        # unacknowledged: absent or whole (delivered once); acknowledged: exactly once
        assert got == 1 if acked else got in (0, 1), (n, acked, got)
        assert not queue_files(box)
        if acked:
            break
    print("submit:", t)
    assert t.trials >= 3 and t.lost == 0 and t.dups == 0, t


def run_crash_loop(tmp_path, name, crash_env, per_trial_bound):
    """Three acknowledged messages; the scheduler run once with crash_env(n, box); then drained.
    Returns the tally; asserts 0 lost and the bound on every trial."""
    t = Tally()
    for n in range(1, MAX_STEPS):
        box = Box(tmp_path / ("%s%d" % (name, n)))
        tags = ["m%d" % i for i in range(3)]
        for tag in tags:
            p = submit(box, tag)
            assert p.returncode == 0, p.stderr
        env, fired = crash_env(n, box)
        p = once(box, env)
        went_through = not fired(p)
        if went_through:
            assert p.returncode == 0, p.stderr
        log = p.stderr.decode(errors="replace") + drain(box)
        counts = [mbox_count(box, tag) for tag in tags]
        t.trials += 1
        t.lost += counts.count(0)
        extra = sum(c - 1 for c in counts if c > 1)
        t.dups += extra
        assert 0 not in counts, (n, counts, log)
        assert extra <= per_trial_bound, (n, counts, log)
        assert not queue_files(box), (n, queue_files(box), log)
        if went_through:
            break
    return t


def test_crash_at_every_step_of_the_scheduler(tmp_path):
    """Pick-up (P1-P3), hand-out (D1), results and their sync (D2), removal (R1-R3)."""
    def env(n, box):
        return {"SPOOLBOX_TEST_CRASH": "%d:scheduler" % n}, crashed
    # a killed scheduler repeats at most the message each running agent is on, plus one
    # reported but not yet read (docs/spool.md 7.1): local runs up to 2 agents (maxchannel)
    t = run_crash_loop(tmp_path, "sched", env, per_trial_bound=2 * 2)
    print("scheduler:", t)
    assert t.trials >= 10 and t.lost == 0, t


def test_crash_at_every_step_of_local_delivery(tmp_path):
    """The local agent (and its mailbox child) killed after each of its durable steps, once
    per trial (the agent started after it goes through)."""
    def env(n, box):
        flag = os.path.join(box.base, "crashed")
        return ({"SPOOLBOX_TEST_CRASH": "%d:local:%s" % (n, flag)}, lambda p: os.path.exists(flag))
    # a killed agent repeats at most the message it was on
    t = run_crash_loop(tmp_path, "local", env, per_trial_bound=1)
    print("local:", t)
    assert t.trials >= 2 and t.lost == 0, t


def mailq_crash_loop(tmp_path, action, check):
    t = Tally()
    for n in range(1, MAX_STEPS):
        box = Box(tmp_path / ("%s%d" % (action, n)))
        p = submit(box, "m")
        assert p.returncode == 0, p.stderr
        mid = spoolfmt.incoming(box.spool)[0]
        p = box.run("mailq", "--" + action, mid, env={"SPOOLBOX_TEST_CRASH": "%d:mailq" % n})
        went_through = not crashed(p)
        if went_through:
            assert p.returncode == 0, p.stderr
        t.trials += 1
        check(box, mid, went_through, t)
        assert not queue_files(box), (n, queue_files(box))
        if went_through:
            break
    return t


def test_crash_at_every_step_of_mailq_hold(tmp_path):
    """Held or not held, never lost or doubled: after the crash one run delivers it only if it
    is not held; a release then lets it go; in the end it is in the mailbox exactly once."""
    def check(box, mid, done, t):
        p = once(box)
        assert p.returncode == 0, p.stderr
        first = mbox_count(box, "m")
        assert first == (0 if done else first) and first in (0, 1), first
        if first == 0:
            # held: a run left it alone; the release lets it go
            r = box.run("mailq", "--release", mid)
            assert r.returncode == 0, r.stderr
        drain(box)
        got = mbox_count(box, "m")
        t.lost += got == 0
        t.dups += max(0, got - 1)
        assert got == 1, (mid, got)
    t = mailq_crash_loop(tmp_path, "hold", check)
    print("mailq --hold:", t)
    assert t.trials >= 3 and t.lost == 0 and t.dups == 0, t


def test_crash_at_every_step_of_mailq_delete(tmp_path):
    """Deleted or as it was (then delivered once), never half: no leftover file in the queue."""
    def check(box, mid, done, t):
        drain(box)
        got = mbox_count(box, "m")
        t.dups += max(0, got - 1)
        assert got == (0 if done else got) and got in (0, 1), (mid, got)
    t = mailq_crash_loop(tmp_path, "delete", check)
    print("mailq --delete:", t)
    assert t.trials >= 3 and t.dups == 0, t
