"""Host classes with session limits, Sendmail's XLA (seed 002; issue 14 point 7): real
processes — submit, the scheduler, our smtp agent — against an aiosmtpd relay on 127.0.0.1 that
counts its concurrent sessions, and the stub agent for classes by recipient domain. Over the
limit deliveries wait in the queue: every message arrives, once, and none is deferred."""
import asyncio
import os
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

import sched_gen as gen
from smtpsink import free_port

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")
HOLD = 0.5  # how long a DATA waits for a crowd (so that sessions overlap when allowed to)

CLAUSES = """*/*
	interval=1m expiry=3d retries="1 1 2 3 5 8 13 21 34" maxring=0 maxta=0
error
	interval=5m maxchannel=10 command=errormail
smtp
	maxchannel=10 maxring=5 command=smtp
"""


class SessionSink:
    """An SMTP relay that counts the sessions open at once (`most`). Each DATA is answered once
    `crowd` sessions are open or after HOLD seconds: the sessions a client is allowed overlap."""

    def __init__(self, crowd):
        self.crowd = crowd
        self.open = 0
        self.most = 0
        self.rcpts = []
        sink = self

        class Server(SMTP):
            def connection_made(self, transport):
                sink.open += 1
                sink.most = max(sink.most, sink.open)
                super().connection_made(transport)

            def connection_lost(self, exc):
                sink.open -= 1
                super().connection_lost(exc)

        class Ctl(Controller):
            def factory(self):
                return Server(self.handler, decode_data=False)

        self.port = free_port()
        self.ctl = Ctl(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server, session, envelope):
        loop = asyncio.get_running_loop()
        end = loop.time() + HOLD
        while self.open < self.crowd and loop.time() < end:
            await asyncio.sleep(0.02)
        self.rcpts.extend(envelope.rcpt_tos)
        return "250 2.0.0 OK"

    def start(self):
        self.ctl.start()
        # the controller's own readiness probe was a session
        deadline = time.time() + 5
        while self.open and time.time() < deadline:
            time.sleep(0.01)
        self.most = 0
        return self

    def stop(self):
        self.ctl.stop()


def relay_run(box, classes, n=8):
    """n messages to n domains through the relay; returns (sink, scheduler stderr)."""
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(classes + CLAUSES)
    sink = SessionSink(crowd=3).start()
    try:
        env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "1s"}
        for i in range(n):
            p = box.run("submit", "-i", "-f", "root@box.example", f"user{i}@d{i}.example",
                        input=b"Subject: %d\n\nhello\n" % i, env=env)
            assert p.returncode == 0, p.stderr
        p = box.run("scheduler", "-i", "-1", env=env, timeout=120)
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 0, err
    finally:
        sink.stop()
    return sink, err


def test_relay_class_limits_the_sessions_and_everything_is_delivered(box):
    # the recipients' domains are in a class of 50: with a smarthost the relay's class applies
    sink, err = relay_run(box, 'PARAMhostclass = "*.example 50"\nPARAMhostclass = "127.0.0.1 2"\n'
                               'PARAMhostclass = "* 1"\n')
    assert sink.most <= 2, f"{sink.most} sessions at once, the class allows 2"
    assert sorted(sink.rcpts) == sorted(f"user{i}@d{i}.example" for i in range(8))
    assert "deferred" not in err and "delayed" not in err, err
    # the queue is empty: nothing waits
    assert not [f for d in os.listdir(os.path.join(box.spool, "queue"))
                for f in os.listdir(os.path.join(box.spool, "queue", d))]


def test_without_a_class_the_relay_sees_more_sessions(box):
    # the control for the test above: this relay does see the overlap a class prevents
    sink, _ = relay_run(box, "")
    assert sink.most >= 3
    assert len(sink.rcpts) == 8


def stub_jobs(box):
    with open(os.path.join(box.base, "stub.log")) as f:
        return [ln.split() for ln in f if ln.startswith("job ")]


def most_at_once(intervals):
    edges = sorted([(a, 1) for a, b in intervals] + [(b, -1) for a, b in intervals], key=lambda e: (e[0], e[1]))
    n = most = 0
    for _, d in edges:
        n += d
        most = max(most, n)
    return most


def test_without_a_smarthost_the_recipient_domain_picks_the_class(box):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('PARAMhostclass = "h0.slow.example 1"\nPARAMhostclass = "*.slow.example 2"\n'
                'PARAMhostclass = "* 100"\n'
                f"*/* interval=1m\nerror command=\"{STUB} error\"\n"
                f"smtp/* maxchannel=10 maxring=8 command=\"{STUB}\"\n")
    slow = [gen.add_incoming(box.spool, [("smtp", f"h{i}.slow.example", f"slow{i}@h{i}.slow.example")])
            for i in range(6)]
    fast = [gen.add_incoming(box.spool, [("smtp", f"f{i}.other.example", f"ok{i}@f{i}.other.example")])
            for i in range(6)]
    env = {"STUB_LOG": os.path.join(box.base, "stub.log"), "STUB_SLOW": "0.4"}
    p = box.run("scheduler", "-i", "-1", env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    jobs = stub_jobs(box)
    by_id = {j[4]: j for j in jobs}
    # every message once, at the first attempt (nothing deferred)
    assert sorted(by_id) == sorted(slow + fast) and len(jobs) == 12
    # h0 has a class of its own (first match); the other five share one of 2 sessions
    shared = [(float(j[2]), float(j[3])) for j in jobs if j[5].endswith(".slow.example") and j[5] != "h0.slow.example"]
    assert len(shared) == 5 and most_at_once(shared) <= 2
