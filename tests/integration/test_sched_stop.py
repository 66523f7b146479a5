"""Stopping and killing the scheduler in the middle of a drain (issue 11 point 1): SIGTERM stops
as cleanly as SIGQUIT (nothing re-delivered), an agent whose scheduler is gone finishes the
message it is on and starts no other, and kill -9 of the scheduler at random moments loses
nothing and repeats at most about one message per running agent per kill. The sink is a real
SMTP server fed by our smtp agent through SMARTHOST; every message carries its number in the
Subject, so the sink counts lost and duplicate copies."""
import os
import random
import re
import signal
import subprocess
import time

import pytest

from conftest import BINARY, IS_ASAN
import sched_gen as gen
from ta_driver import TA, Queue

DOMAINS = 4  # one thread per recipient domain
# agents that may run at once: the built-in smtp clause's maxchannel (the destination
# concurrency of issue 14 point 2 may give each domain's thread several); the duplicate bound of
# a kill (docs/spool.md 7.1) is one message per running agent
AGENTS = 10


def smarthost(sink):
    return {"SMARTHOST": "[127.0.0.1]:%d tls=none" % sink.port, "SMTP_IDLE": "5s"}


def queue_messages(box, n):
    """n queued messages, message i to u@d<i % DOMAINS>.example with "Subject: m<i>"."""
    for i in range(n):
        d = "d%d.example" % (i % DOMAINS)
        gen.add_queued(box.spool, [("smtp", d, "u@" + d)], body=b"Subject: m%d\n\nhello %d\n" % (i, i))


def counts(sink):
    seen = {}
    for m in sink.messages:
        subj = re.search(rb"^Subject: m(\d+)", m.data, re.M)
        if subj:
            seen[int(subj.group(1))] = seen.get(int(subj.group(1)), 0) + 1
    return seen


def start(box, env, log):
    errf = open(log, "ab")
    p = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stderr=errf, stdout=subprocess.DEVNULL)
    errf.close()
    return p


def drain(box, env, log, timeout=600):
    with open(log, "ab") as errf:
        p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), stderr=errf,
                           stdout=subprocess.DEVNULL, timeout=timeout)
    assert p.returncode == 0, open(log, errors="replace").read()[-3000:]


def wait_for(pred, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline and not pred():
        time.sleep(0.02)
    return pred()


def test_sigterm_stops_cleanly_and_nothing_is_delivered_twice(box, smtp_sink):
    """Issue 11 point 1: 200 messages, SIGTERM while the agents are busy, a restart drains the
    rest: every message arrives exactly once (it used to re-deliver what had been handed out)."""
    n = 200
    queue_messages(box, n)
    env = smarthost(smtp_sink)
    log = os.path.join(box.base, "sched.log")
    p = start(box, env, log)
    assert wait_for(lambda: len(smtp_sink.messages) >= 20)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=40) == 0
    stopped_at = len(smtp_sink.messages)
    drain(box, env, log)
    seen = counts(smtp_sink)
    assert sorted(seen) == list(range(n))                    # nothing lost
    assert [i for i, c in seen.items() if c > 1] == []       # nothing twice
    assert stopped_at < n                                    # it did stop in the middle
    text = open(log, errors="replace").read()
    assert "SIGTERM: stopping the transport agents first" in text
    assert os.listdir(os.path.join(box.spool, "queue")) == [] or \
        all(os.listdir(os.path.join(box.spool, "queue", d)) == [] for d in os.listdir(os.path.join(box.spool, "queue")))


def test_agent_starts_no_job_after_its_scheduler_is_gone(box, smtp_sink):
    """An agent whose scheduler closed its end (stopped or died) finishes the message it is on
    and starts no job already written to it: job 1 is held at RCPT by the sink while job 2 and
    EOF arrive; job 1 is delivered and reported, job 2 is not started (no delivery, no report,
    its recipient still T for the next scheduler), exit 0, and a log line says why."""
    import threading
    q = Queue(box.spool)
    m1 = q.add("root@box.example", ["a@example.com"], b"Subject: one\n\n1\n")
    m2 = q.add("root@box.example", ["b@example.com"], b"Subject: two\n\n2\n")
    reached, release = threading.Event(), threading.Event()

    def hold():
        reached.set()
        release.wait(20)
        return None

    smtp_sink.rcpt_replies["a@example.com"] = hold
    ta = TA(box, env=smarthost(smtp_sink))
    q.mark(m1, ta.pid, "example.com")
    ta.send("%s\texample.com" % m1)
    assert reached.wait(20), ta.log                         # job 1 is in progress
    q.mark(m2, ta.pid, "example.com")
    ta.send("%s\texample.com" % m2)
    ta.proc.stdin.close()                                   # the scheduler is gone
    release.set()
    assert ta.proc.wait(20) == 0, ta.log
    lines = []
    while True:
        try:
            lines.append(ta.readline(5))
        except AssertionError:
            break
    reports = [line for line in lines if "\t" in line]
    assert len(reports) == 1 and reports[0].startswith(m1 + "/"), lines
    assert [m.rcpt_tos for m in smtp_sink.messages] == [["a@example.com"]]
    time.sleep(0.1)
    assert "the scheduler has gone: this job and any after it are not started" in ta.log
    assert q.control(m2).rcpts[0].tag == "T"                 # left for the next scheduler to find


def crash_trials(box, sink, n, trials, seed):
    """Queues n messages, kills the scheduler with SIGKILL `trials` times at random moments of
    the drain (each run lasts 0.1-1.0 s), then lets a last run finish. Returns (lost, dups)."""
    queue_messages(box, n)
    env = smarthost(sink)
    log = os.path.join(box.base, "sched.log")
    rnd = random.Random(seed)
    for _ in range(trials):
        p = start(box, env, log)
        time.sleep(rnd.uniform(0.1, 1.0))
        p.kill()
        p.wait(timeout=10)
    drain(box, env, log)
    seen = counts(sink)
    lost = n - len(seen)
    dups = sum(c - 1 for c in seen.values())
    return lost, dups


@pytest.mark.skipif(IS_ASAN, reason="timing-dependent load; the product build carries it")
def test_kill_9_during_a_drain_loses_nothing_and_repeats_little(box, smtp_sink):
    """Issue 11 point 1 (the suite's short version): 300 messages, 6 kills."""
    trials = 6
    lost, dups = crash_trials(box, smtp_sink, 300, trials, seed=11)
    assert lost == 0
    assert dups <= trials * AGENTS, dups


@pytest.mark.slow
@pytest.mark.skipif(IS_ASAN, reason="timing-dependent load; the product build carries it")
def test_kill_9_during_a_drain_100_trials(box, smtp_sink):
    """Issue 11 point 1's target: a 1 000-message drain, 100 kills: 0 lost, duplicates no more
    than one per trial per running agent. The figures go to docs/spool.md."""
    trials = 100
    lost, dups = crash_trials(box, smtp_sink, 1000, trials, seed=1)
    print("crash test: %d trials, %d messages, lost %d, duplicates %d" % (trials, 1000, lost, dups))
    assert lost == 0
    assert dups <= trials * AGENTS, dups


def test_term_right_after_the_pid_appears_is_a_clean_stop(box):
    """A supervisor (or a test) that sends TERM as soon as scheduler.pid names the new scheduler
    gets a clean stop — exit 0 and an emptied pid file — not the default death before the
    handlers are set, which left the pid behind for the next start to take for a crash (seen as
    a flaky test_full_disk_scheduler_that_ran_before_starts_with_its_pid: about 1 start in 4)."""
    for i in range(20):
        # a new spool each time: its directories are made after the pid is written, which is
        # the window
        spool = os.path.join(box.base, "spool%d" % i)
        pidfile = os.path.join(spool, "scheduler.pid")
        p = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ({"SPOOL": spool}),
                             stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while time.time() < deadline and p.poll() is None:
            try:
                if open(pidfile).read().strip() == str(p.pid):
                    break
            except OSError:
                pass
        p.terminate()
        err = p.communicate(timeout=40)[1].decode(errors="replace")
        assert p.returncode == 0, err
        assert os.path.getsize(pidfile) == 0
