"""Per-destination concurrency (issue 14 point 2, issue 13 point 2) and dead destinations (issue
14 point 3), with real processes: submit, the scheduler, the smtp agents, and servers on
127.0.0.1 that count their connections.

- Several agents to one smarthost by default (the destination's initial concurrency, 5), each
  reusing its connection; `destination_concurrency_limit=1` gives one.
- A relay that accepts and hangs up at once (a handshake failure, 4.4.2): after
  `destination_concurrency_failed_cohort_limit` failed pseudo-cohorts the destination is
  suspended, its other queued mail deferred at once ("destination not responding") without a
  connection each, and when the relay is back one probe reopens it and every message is
  delivered exactly once."""
import os
import subprocess
import time

from conftest import BINARY
import spoolfmt
from listener import Listener
from smtpsink import SmtpSink

N = 20


class Slammer(Listener):
    """A dead relay: accepts a connection and closes it before the greeting; counts them."""

    def __init__(self, port=0):
        super().__init__(serve=lambda c: c.close(), port=port, reuse=True)


def sched_conf(box, smtp_extra=""):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('*/*\n\tinterval=2s expiry=3d retries="1" maxring=0 maxta=0 user=root\n'
                "local/*\n\tinterval=10s maxchannel=2 maxthr=1 command=local\n"
                "error\n\tinterval=5m maxchannel=10 command=errormail\n"
                f"smtp\n\tmaxchannel=20 maxring=20 {smtp_extra} command=smtp\n")


def submit_all(box, env):
    for i in range(N):
        p = box.run("submit", "-i", "-f", "root@box.example", "user%d@example.com" % i,
                    input=b"Subject: msg %d\n\nhello %d\n" % (i, i), env=env)
        assert p.returncode == 0, p.stderr


def start(box, env):
    err = open(os.path.join(box.base, "scheduler.err"), "ab")
    s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    return s


def stop(box, s):
    s.terminate()
    s.wait(timeout=40)
    with open(os.path.join(box.base, "scheduler.err"), errors="replace") as f:
        return f.read()


def wait_for(cond, secs=60):
    deadline = time.time() + secs
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


def control(box, mid):
    with open(os.path.join(box.spool, "queue", mid[-1], mid + ".c"), "rb") as f:
        return spoolfmt.Message(f.read())


def subjects(sink):
    out = []
    for m in sink.messages:
        data = m.data
        if isinstance(data, str):
            data = data.encode()
        for line in data.split(b"\n"):
            if line.startswith(b"Subject: "):
                out.append(line[9:].strip().decode())
    return out


def drain_to_sink(box, smtp_extra):
    sched_conf(box, smtp_extra)
    sink = SmtpSink()
    sink.start()
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "30s"}
    try:
        submit_all(box, env)
        s = start(box, env)
        try:
            ok = wait_for(lambda: len(sink.messages) >= N and not spoolfmt.queued_ids(box.spool))
        finally:
            log = stop(box, s)
        assert ok, (len(sink.messages), log)
        return sink, log
    finally:
        sink.stop()


def test_several_agents_to_one_smarthost_by_default(box):
    sink, log = drain_to_sink(box, "")
    assert sorted(subjects(sink)) == sorted("msg %d" % i for i in range(N))
    # 20 messages ready at once: the initial concurrency (5) agents, growing with positive
    # feedback (Postfix's default 1 per delivery) up to the limit, not one (maxthr=1 before)
    assert 2 <= sink.connections <= 20, (sink.connections, log)


def test_destination_concurrency_limit_one_is_one_connection(box):
    sink, log = drain_to_sink(box, "destination_concurrency_limit=1")
    assert sorted(subjects(sink)) == sorted("msg %d" % i for i in range(N))
    assert sink.connections == 1, (sink.connections, log)


def dead_then_back(box, smtp_extra, max_attempts):
    sched_conf(box, smtp_extra)
    dead = Slammer()
    port = dead.port
    env = {"SMARTHOST": f"[127.0.0.1]:{port} tls=none", "SMTP_IDLE": "30s"}
    sink = None
    try:
        submit_all(box, env)
        ids = []

        def all_deferred():
            ids[:] = spoolfmt.queued_ids(box.spool)
            ms = [control(box, mid) for mid in ids]
            return len(ms) == N and all(m.attempts and [r.tag for r in m.rcpts] == ["Q"] for m in ms)

        s = start(box, env)
        try:
            ok = wait_for(all_deferred, 30)
            attempts = dead.accepted
            states = {mid: [a[3:8] for a in control(box, mid).attempts] for mid in ids}
            dead.close()
            assert ok, (states, stop(box, s))
            # every message deferred in that one run, with at most max_attempts connections
            assert 1 <= attempts <= max_attempts, (attempts, states)
            texts = [a[4] for v in states.values() for a in v]
            suspended = [t for t in texts if t.startswith("destination not responding")]
            assert len(suspended) >= N - max_attempts * 2, texts  # overfeed 2: the rest never left
            assert all(a[2] in ("4.4.1", "4.4.2") for v in states.values() for a in v), states
            # the relay comes back on the same port: one probe reopens the destination
            sink = SmtpSink(port=port)
            sink.start()
            ok = wait_for(lambda: len(sink.messages) >= N and not spoolfmt.queued_ids(box.spool), 60)
        finally:
            log = stop(box, s)
        assert ok, (len(sink.messages) if sink else None, log)
        got = subjects(sink)
        assert sorted(got) == sorted("msg %d" % i for i in range(N)), got   # each exactly once
        assert "destination not responding" in log and "suspension over: one probe" in log, log
        return attempts
    finally:
        dead.close()
        if sink:
            sink.stop()


def test_dead_relay_initial_concurrency_one_costs_failed_cohort_limit_attempts(box):
    # a pseudo-cohort of one delivery: failed_cohort_limit (default 1) connection attempts
    assert dead_then_back(box, "initial_destination_concurrency=1", 1) == 1


def test_dead_relay_two_failed_cohorts(box):
    # at most 2; often 1, when the agent's second job is deferred "not tried" after its
    # first failed (applets/smtp.c), which is the second failed delivery
    assert dead_then_back(box, "initial_destination_concurrency=1 destination_concurrency_failed_cohort_limit=2",
                          2) <= 2


def test_dead_relay_with_the_defaults_costs_one_pseudo_cohort(box):
    # Postfix's defaults: initial concurrency 5, so one pseudo-cohort is up to 5 connections
    # (one per agent; the jobs queued behind them are not tried) instead of one per message
    dead_then_back(box, "", 5)


def test_check_validates_the_concurrency_keys(box):
    sched_conf(box, "initial_destination_concurrency=3 destination_concurrency_limit=9 "
               "destination_concurrency_positive_feedback=1/sqrt_concurrency "
               "destination_concurrency_negative_feedback=0.5/concurrency destination_concurrency_failed_cohort_limit=2")
    p = box.run(None, "--check")
    assert p.returncode == 0, p.stderr
    sched_conf(box, "destination_concurrency_negative_feedback=2")
    p = box.run(None, "--check")
    assert p.returncode == 78
    assert (f"{box.env['SCHEDULER_CONF']}:8: error: destination_concurrency_negative_feedback: '2' is not a feedback"
            in p.stderr.decode()), p.stderr
    sched_conf(box, "initial_destination_concurrency=0")
    p = box.run(None, "--check")
    assert p.returncode == 78 and b"initial_destination_concurrency: '0' is not a number from 1" in p.stderr, p.stderr
