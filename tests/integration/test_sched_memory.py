"""Recipients in memory (seed 004's memory management; issue 14 point 5), real scheduler and stub
agent, messages written straight into the spool (sched_gen.py):
- a mailing of 50 000 recipients, as five control files of 10 000 (SPOOL_RCPT_MAX, the most one
  control file holds: docs/scheduler.md "Recipients in memory" says why the limit stays), is
  delivered, every recipient exactly once, while the scheduler never holds more recipients in
  memory than PARAMmessage_recipient_limit: the windows move through the control files as
  recipients finish;
- recipients that are deferred leave memory while their message has more on disk (the ones
  behind them are not held up), and come back on a new pass over the file at their retry time;
- the seed's bound formula: what the scheduler says at its exit is the test's own computation."""
import os
import re
import subprocess
import time

import pytest

from conftest import BINARY

import sched_gen as gen

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")
PEAK = re.compile(rb"recipients in memory: at most (\d+) \(message_recipient_limit (\d+), bound (\d+)\)")


def conf(box, limit, minimum, rlimit, xlimit, extra=""):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(f"PARAMmessage_recipient_limit = {limit}\nPARAMmessage_recipient_minimum = {minimum}\n"
                f'*/* interval=1m\nerror command="{STUB} error"\n'
                f"smtp/* recipient_limit={rlimit} extra_recipient_limit={xlimit} recipient_refill_delay=1s "
                f'{extra}command="{STUB}"\n')


def deliveries(box):
    try:
        with open(os.path.join(box.base, "stub.log")) as f:
            return [tuple(ln.split()[2:5]) for ln in f if ln.startswith("deliver ")]
    except FileNotFoundError:
        return []


def bound(limit, minimum, active, pools):
    """Seed 004: max(minimum x active + sum(recipient_limit + extra_recipient_limit), limit)."""
    return max(minimum * active + sum(r + x for r, x in pools), limit)


def test_a_50000_recipient_mailing_is_delivered_with_memory_under_the_limit(box):
    limit, minimum, rlimit, xlimit, active = 5000, 10, 5000, 500, 5
    conf(box, limit, minimum, rlimit, xlimit)
    want = set()
    for k in range(5):
        rcpts = [("smtp", "h.example", f"ok{k}.{i}@h.example") for i in range(10000)]
        mid = gen.add_queued(box.spool, rcpts)
        want |= {(mid, a) for _, _, a in rcpts}
    env = {"STUB_LOG": os.path.join(box.base, "stub.log"), "QUEUEHI": str(active), "QUEUELO": "1"}
    p = box.run("scheduler", "-i", "-1", env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    got = deliveries(box)
    assert len(got) == 50000  # every recipient once: no repeat ...
    assert {(mid, addr) for mid, _, addr in got} == want  # ... and none missing
    m = PEAK.search(p.stderr)
    assert m, p.stderr[-2000:]
    peak, said_limit, said_bound = (int(x) for x in m.groups())
    # the seed's bound, as the scheduler computes it: 10 x 5 + 5000 + 500
    assert said_limit == limit and said_bound == bound(limit, minimum, active, [(rlimit, xlimit)]) == 5550
    # never above it, and the windows were used: the first batch filled the global pool
    assert limit <= peak <= said_bound
    # every message left the queue
    assert not any(f.endswith(".c") for _, _, fs in os.walk(os.path.join(box.spool, "queue")) for f in fs)


def run_daemon(box, env, until, then=None):
    """The scheduler as a daemon until the stub has delivered `until` recipients (then calls
    then() and waits for 100); returns its stderr."""
    err = open(os.path.join(box.base, "scheduler.err"), "w+b")
    s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stdout=subprocess.DEVNULL, stderr=err)
    try:
        for want, action in ((until, then), (100, None)):
            end = time.monotonic() + 180
            while len(deliveries(box)) < want and time.monotonic() < end and s.poll() is None:
                time.sleep(0.1)
            if action:
                action()
    finally:
        s.terminate()
        s.wait(timeout=40)
    err.seek(0)
    return err.read()


def deferred_first(box, env_extra, then=None):
    # a window of 20, and the first 20 recipients deferred the first time: the 80 behind them are
    # read and delivered while they wait, then the 20 come back, each delivered once
    conf(box, 20, 1, 10, 2)
    rcpts = [f"once{i}@h.example" for i in range(20)] + [f"ok{i}@h.example" for i in range(80)]
    mid = gen.add_queued(box.spool, [("smtp", "h.example", a) for a in rcpts])
    env = {"STUB_LOG": os.path.join(box.base, "stub.log"), "QUEUEHI": "1", "QUEUELO": "1", **env_extra}
    err = run_daemon(box, env, 80, then and (lambda: then(mid)))
    got = [a for _, _, a in deliveries(box)]
    assert sorted(got) == sorted(rcpts)
    assert all(a.startswith("ok") for a in got[:80])  # none waited behind the deferred ones
    with open(os.path.join(box.base, "stub.log")) as f:
        assert sorted(ln.split()[4] for ln in f if ln.startswith("deferonce ")) == sorted(rcpts[:20])
    m = PEAK.search(err)
    assert m and int(m.group(1)) <= 20


def test_deferred_recipients_leave_memory_and_come_back_at_their_retry(box):
    # retry in 60 s, on a test clock 30 times faster: a new pass over the file at that time
    deferred_first(box, {"SPOOLBOX_TEST_CLOCK": "+0*30"})


@pytest.mark.parametrize("how", ["trigger Q", "mailq --retry ID"])
def test_a_run_of_the_queue_reaches_recipients_that_left_memory(box, how):
    # retry in an hour; trigger Q (sendmail -q; mailq --retry ALL sends it too), or mailq --retry
    # of the message, once the 80 are delivered brings the 20 back now
    def run_queue(mid):
        if how == "trigger Q":
            fd = os.open(os.path.join(box.spool, "trigger"), os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"Q\n")
            os.close(fd)
        else:
            p = box.run("mailq", "--retry", mid)
            assert p.returncode == 0, p.stderr
    deferred_first(box, {"STUB_ONCE": "+3600"}, run_queue)


def test_a_scheduler_killed_at_any_step_of_a_windowed_message_loses_nothing(tmp_path):
    """Crash safety with windows (docs/spool.md 7): the scheduler is killed (SIGKILL, the
    test-only SPOOLBOX_TEST_CRASH hook) after its n-th durable step while a 40-recipient message
    goes through windows of a few recipients; then the queue is drained with smaller windows,
    so that recipients the killed run left in transit are read in later windows (their recovery
    comes from the refill's reading of the A records). Every recipient is delivered, the queue
    ends empty, and a repeat is only of what was in transit at the kill."""
    from conftest import Box
    rcpts = [f"ok{i}@h.example" for i in range(40)]
    trials = recovered = 0
    for n in range(1, 600, 7):
        box = Box(tmp_path / f"c{n}")
        gen.add_queued(box.spool, [("smtp", "h.example", a) for a in rcpts])
        env = {"STUB_LOG": os.path.join(box.base, "stub.log"), "QUEUEHI": "1", "QUEUELO": "1"}
        conf(box, 8, 2, 4, 1)
        p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ({**env, "SPOOLBOX_TEST_CRASH": f"{n}:scheduler"}),
                           capture_output=True, timeout=120)
        through = b"test crash point" not in p.stderr
        log = p.stderr.decode(errors="replace")
        conf(box, 3, 1, 1, 1)
        for _ in range(4):
            q = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), capture_output=True, timeout=120)
            log += q.stderr.decode(errors="replace")
            assert q.returncode == 0, log[-3000:]
            if not any(fs for _, _, fs in os.walk(os.path.join(box.spool, "queue"))):
                break
            box.run("mailq", "--retry", "ALL")
        got = [a for _, _, a in deliveries(box)]
        assert set(got) == set(rcpts), (n, log[-3000:])  # none lost
        assert len(got) - len(rcpts) <= 8, (n, len(got))  # repeats: at most a window in transit
        assert not any(fs for _, _, fs in os.walk(os.path.join(box.spool, "queue"))), (n, log[-3000:])
        trials += 1
        recovered += log.count("of an earlier scheduler ended without a report")
        if through:
            break
    # the kills left recipients in transit, and later windows recovered them
    assert trials >= 5 and recovered > 0, (trials, recovered)
