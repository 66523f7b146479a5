"""A relay that accepts the TCP connection and never answers (issue 11 point 5): each agent
(up to the destination's initial concurrency, issue 14 point 2) waits its greeting timeout once; every other message for that destination is
deferred with it (`deferall`) instead of waiting the same timeout again, one after the other.
Real processes: submit, the scheduler, the smtp agent, and a listener on 127.0.0.1 that counts
its accept()s and never writes a byte."""
import os
import re
import subprocess
import time

import pytest

from conftest import BINARY
import spoolfmt
from listener import Listener


class Mute(Listener):
    """Accepts connections, keeps them open, never speaks; counts them."""


def control(box, mid):
    with open(os.path.join(box.spool, "queue", mid[-1], mid + ".c"), "rb") as f:
        return spoolfmt.Message(f.read())


@pytest.mark.needs("mailq_proto")  # mailq -Q shows the held thread
def test_a_mute_relay_costs_one_timeout_for_all_its_messages(box):
    mute = Mute()
    env = {"SMARTHOST": f"[127.0.0.1]:{mute.port} tls=none", "SMTP_HELO_TIMEOUT": "1s",
           "SMTP_IDLE": "10s"}
    try:
        for i in range(20):
            p = box.run("submit", "-i", "-f", "root@box.example", "user%d@example.com" % i,
                        input=b"Subject: %d\n\nhello\n" % i, env=env)
            assert p.returncode == 0, p.stderr
        state = {}

        def held():
            # the scheduler's view (mailq -Q): the thread is blocked until its retry time
            # and has nothing ready; and the control files say who was tried
            q = box.run("mailq", "-Q", env=env)
            line = [ln for ln in q.stdout.decode().splitlines() if ln.startswith("smtp/")]
            state["thread"] = line
            ids = spoolfmt.queued_ids(box.spool)
            state["ids"] = ids
            ctls = {m: control(box, m) for m in ids}
            tried = [m for m in ids if ctls[m].attempts]
            state["tried"] = tried
            state["ctl"] = ctls
            settled = all(r.tag in ("Q", "N") for c in ctls.values() for r in c.rcpts)
            return (len(ids) == 20 and len(tried) >= 1 and len(line) == 1 and settled
                    and re.search(r"\tready=0\t", line[0]) and not re.search(r"\tblocked=0\t", line[0]))

        s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        deadline = time.time() + 60
        try:
            ok = False
            while time.time() < deadline and s.poll() is None:
                if held():
                    ok = True
                    break
                time.sleep(0.1)
        finally:
            s.terminate()
            _, err = s.communicate(timeout=30)
        log = err.decode(errors="replace")
        with open(os.path.join(box.base, "scheduler.err"), "w") as f:
            f.write(log)
        assert ok, (state, log)
        # one connection per agent: the destination's initial concurrency (5, issue 14 point 2)
        # agents each waited their timeout once, at the same time; the jobs already handed to
        # them (overfeed) were deferred with it, the rest are held with the thread or deferred
        # as a dead destination's (issue 14 point 3)
        assert 1 <= mute.accepted <= 5, (mute.accepted, log)
        texts = []
        # the control files as they were when the thread was seen held, before the test's own
        # stop: what the stop does to jobs still out (they end "lost" or deferred with it) is
        # not the relay's doing (CI under load: an attempt in the second before the stop)
        for mid in state["ids"]:
            m = state["ctl"][mid]
            # never in transit: deferred (Q), or held (N, untried)
            if m.attempts:
                assert [r.tag for r in m.rcpts] == ["Q"], (mid, m.attempts, log)
            else:
                assert [r.tag for r in m.rcpts] == ["N"], (mid, log)
            seen = m.attempts
            if seen:
                assert [a[3] for a in seen] in (["deferall"], ["retryat"]), (mid, m.attempts, log)
            texts += [a[7] for a in seen]
            assert all(a[5] in ("4.4.1", "4.4.2") for a in seen), m.attempts
        # one timeout per agent, never one per message: at least one per connection the relay
        # took, and no more than the initial concurrency's agents (under load the relay's accept
        # thread may not have counted the last connection yet: CI saw 5 timeouts, 4 accepted)
        timeouts = sum(t.startswith("timeout talking to") for t in texts)
        assert mute.accepted <= timeouts <= 5, (timeouts, mute.accepted, texts)
        assert all(t.startswith(("timeout talking to", "not tried: timeout", "destination not responding"))
                   for t in texts), texts
    finally:
        mute.close()


def test_after_idle_the_destination_is_tried_again(box):
    """The dead mark lives only for the jobs already handed out: a job after "#idle" (the
    scheduler's retry time) connects again."""
    from ta_driver import TA, Queue
    mute = Mute()
    q = Queue(box.spool)
    a = q.add("root@box.example", ["a@example.com"], b"Subject: a\n\nx\n")
    b = q.add("root@box.example", ["b@example.com"], b"Subject: b\n\nx\n")
    env = {"SMARTHOST": f"[127.0.0.1]:{mute.port} tls=none", "SMTP_HELO_TIMEOUT": "1s"}
    try:
        with TA(box, env=env) as ta:
            r1 = ta.job(q, a, "example.com", timeout=20)
            r2 = ta.job(q, b, "example.com", timeout=20)
            assert [r.status for r in r1 + r2] == ["deferall", "deferall"], (r1, r2)
            assert mute.accepted == 1
            ta.send("#idle")
            ta.expect("#hungry")
            r3 = ta.job(q, a, "example.com", timeout=20)
            assert [r.status for r in r3] == ["deferall"], r3
            assert mute.accepted == 2
    finally:
        mute.close()
