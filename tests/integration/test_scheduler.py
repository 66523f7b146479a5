"""The scheduler through the real binary on a private spool: pick-up, results in the control file,
retries, retryat, deferall, expiry and expiry2 (with the SPOOLBOX_TEST_CLOCK hook), lost
recipients, the error channel, the limits (a stub TA records its concurrency), idle reuse, the
pid lock, signals, trigger lines, the statistics log and the hold TA. Messages are written
straight into the spool (sched_gen.py); the transport agent is sched_stub_ta.py unless a test
uses our own applets."""
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import BINARY, IS_ASAN
import sched_gen as gen
from spoolfmt import Message

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")


def sconf(box, text):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(text.replace("STUB", STUB))


def stub_env(box, extra=None):
    env = {"STUB_LOG": os.path.join(box.base, "stub.log")}
    env.update(extra or {})
    return env


def once(box, *args, env=None, timeout=60):
    """One-shot run: exits when nothing is due and no TA runs."""
    p = box.run("scheduler", "-i", "-1", *args, env=stub_env(box, env), timeout=timeout)
    return p, p.stderr.decode(errors="replace")


def events(box):
    path = os.path.join(box.base, "stub.log")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


def deliveries(box):
    return [e for e in events(box) if e[0] == "deliver"]


def ctl(box, mid):
    with open(os.path.join(box.spool, "queue", mid[-1], mid + ".c"), "rb") as f:
        data = f.read()
    end = data.index(b"\n.\n") + 3
    m = Message(data[:end])
    # every record after the envelope (spoolfmt stops at the message file's body offset)
    m.records = data[end:].decode(errors="replace").splitlines()
    m.attempts = [r.split(" ", 7) for r in m.records if r.startswith("A ")]
    return m


def queued(box, mid):
    return os.path.exists(os.path.join(box.spool, "queue", mid[-1], mid + ".c"))


def due_links(box, mid):
    out = []
    d = os.path.join(box.spool, "due")
    for b in os.listdir(d) if os.path.isdir(d) else []:
        out += [int(n.split(".")[1]) for n in os.listdir(os.path.join(d, b)) if n.startswith(mid + ".")]
    return out


def max_overlap(jobs):
    """Largest number of (t0, t1) intervals open at once."""
    pts = sorted([(float(a), 1) for a, b in jobs] + [(float(b), -1) for a, b in jobs], key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _, d in pts:
        cur += d
        best = max(best, cur)
    return best


BASIC = """*/* interval=1s retries="1" expiry=1h
local command="STUB $channel"
smtp command="STUB $channel"
error command="STUB error"
"""


def test_delivers_every_channel_and_removes(box):
    sconf(box, BASIC)
    a = gen.add_incoming(box.spool, [("local", "-", "ok1"), ("local", "-", "ok2"), ("smtp", "a.example", "ok@a.example")])
    b = gen.add_queued(box.spool, [("smtp", "b.example", "ok@b.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    got = sorted((d[2], d[4]) for d in deliveries(box))
    assert got == sorted([(a, "ok1"), (a, "ok2"), (a, "ok@a.example"), (b, "ok@b.example")])
    assert not queued(box, a) and not queued(box, b)
    assert not os.path.exists(os.path.join(box.spool, "queue", a[-1], a + ".d"))
    assert due_links(box, a) == [] and os.listdir(os.path.join(box.spool, "incoming")) == []
    assert f"{a}: uid=" in err and f"{a}: removed\n" in err
    # one job per message and thread: the two local recipients went to one job
    jobs = [e for e in events(box) if e[0] == "job" and e[4] == a]
    assert sorted(j[5] for j in jobs) == ["-", "a.example"]


def test_deferral_is_recorded_then_retried_on_schedule(box):
    sconf(box, """*/* interval=10s retries="1 3" expiry=1h
smtp command="STUB"
""")
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "defer@a.example"), ("smtp", "a.example", "ok@a.example")])
    t0 = int(time.time())
    p, err = once(box)
    assert p.returncode == 0, err
    m = ctl(box, mid)
    r0, r1 = m.rcpts
    assert r1.tag == "D" and r0.tag == "Q" and r0.tries == 1
    assert t0 + 10 <= r0.next <= int(time.time()) + 10          # interval x retries[0]
    assert due_links(box, mid) == [r0.next]                         # the index follows
    codes = [(a[1], a[3], a[4], a[5]) for a in m.attempts]
    assert ("0", "deferred", "delayed", "4.4.1") in codes and ("1", "ok", "delivered", "2.0.0") in codes
    # nothing is due now: another one-shot run makes no attempt
    once(box)
    assert ctl(box, mid).rcpts[0].tries == 1
    # 12 s later (the test clock) it is due: second attempt, then 3 x interval
    p, err = once(box, env={"SPOOLBOX_TEST_CLOCK": "+12s"})
    r0 = ctl(box, mid).rcpts[0]
    assert r0.tries == 2, err
    assert t0 + 12 + 30 <= r0.next <= int(time.time()) + 12 + 30
    # past the end of the sequence: a random spot of it, again and again, never outside it
    for k in range(4):
        prev = ctl(box, mid).rcpts[0]
        once(box, env={"SPOOLBOX_TEST_CLOCK": "+%ds" % (prev.next - int(time.time()) + 1)})
        cur = ctl(box, mid).rcpts[0]
        assert cur.tries == prev.tries + 1
        step = cur.next - int(ctl(box, mid).attempts[-1][2])
        assert step in (10, 30), step


def test_retryat_and_deferall(box):
    sconf(box, """*/* interval=1h retries="1" expiry=1d
smtp command="STUB"
""")
    r = gen.add_incoming(box.spool, [("smtp", "r.example", "retryat7@r.example")])
    d1 = gen.add_incoming(box.spool, [("smtp", "down.example", "deferall@down.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    rr = ctl(box, r).rcpts[0]
    att = ctl(box, r).attempts[-1]
    assert rr.tag == "Q" and rr.next == int(att[2]) + 7            # retryat +7 wins over interval
    assert ctl(box, d1).rcpts[0].next == int(ctl(box, d1).attempts[-1][2]) + 3600


def test_deferall_blocks_the_thread_within_a_run(box):
    sconf(box, """*/* interval=1h retries="1" expiry=1d
smtp command="STUB" maxthr=1 overfeed=1
""")
    a = gen.add_queued(box.spool, [("smtp", "down.example", "deferall@down.example")], arrival=time.time() - 5)
    b = gen.add_queued(box.spool, [("smtp", "down.example", "ok@down.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    tags = {ctl(box, a).rcpts[0].tag, ctl(box, b).rcpts[0].tag} if queued(box, b) else None
    # whichever went first: if the deferall came first, the other one was not tried
    if queued(box, b):
        assert tags == {"Q", "N"} or ctl(box, b).rcpts[0].tag == "N"
        assert due_links(box, b) and due_links(box, b)[0] >= int(time.time()) + 3500
    else:
        assert [d[4] for d in deliveries(box)] == ["ok@down.example"]


def test_failure_goes_to_the_error_channel_then_removed(box):
    sconf(box, BASIC)
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "fail@a.example"), ("local", "-", "ok")])
    p, err = once(box)
    assert p.returncode == 0, err
    assert not queued(box, mid)
    starts = [e for e in events(box) if e[0] == "start"]
    assert any(s[3:] == ["error"] for s in starts)       # the error channel's TA ran
    assert [(e[2], e[4]) for e in events(box) if e[0] == "dsn"] == [(mid, "fail@a.example")]
    assert f"{mid}: rcpt 0: failure reported as 0TESTDSN0001Z" in err
    assert "rcpt 0 rfc822;fail@a.example smtp/a.example: error 5.1.1 no such user" in err


def test_error_channel_that_cannot_start_keeps_the_message(box):
    # the built-in error clause names errormail; in this build it may not exist yet or may fail
    sconf(box, """*/* interval=1s retries="1" expiry=1h
smtp command="STUB"
error command="/nonexistent/errormail" interval=1h
""")
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "fail@a.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    m = ctl(box, mid)
    assert m.rcpts[0].tag == "F"
    assert "could not be started" in err and "its work stays queued" in err
    assert due_links(box, mid) and due_links(box, mid)[0] >= int(time.time()) + 3500


def test_lost_recipients_go_back_to_the_queue(box):
    # a long interval: under load the first round can outlast a 1 s retry, and the one-shot
    # scheduler would then try again before exiting (tries == 2)
    sconf(box, BASIC.replace("interval=1s", "interval=1h"))
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "silent@a.example")])
    die = gen.add_incoming(box.spool, [("smtp", "d.example", "die@d.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    for x in (mid, die):
        m = ctl(box, x)
        assert m.rcpts[0].tag == "Q" and m.rcpts[0].tries == 1, err
        assert m.attempts[-1][3] == "lost"


def test_expiry_needs_an_attempt_in_this_run(box):
    # interval=1h: one gap between the arrival and the attempt may count for up to 2h of
    # trying (expiry counts tried time, docs/scheduler.md "Clock jumps")
    sconf(box, """*/* interval=1h retries="1" expiry=1h
smtp command="STUB"
error command="/nonexistent/errormail" interval=1h
""")
    old = time.time() - 7200
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "defer@a.example")], arrival=old)
    # frozen (-F): no attempt, so no expiry (expiry2 is 0)
    p, err = once(box, "-F")
    assert ctl(box, mid).rcpts[0].tag == "N", err
    p, err = once(box)
    m = ctl(box, mid)
    assert m.rcpts[0].tag == "F", err
    assert [a[3:6] for a in m.attempts] == [["deferred", "delayed", "4.4.1"], ["error", "failed", "4.4.7"]]
    assert "expired" in m.attempts[-1][7]


def test_expiry2_without_any_attempt(box):
    sconf(box, """*/* interval=1s retries="1" expiry=1h expiry2=1h
smtp command="STUB"
error command="/nonexistent/errormail" interval=1h
""")
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")], arrival=time.time() - 60)
    # three hours later by the test clock: past expiry + expiry2, so failed without an attempt
    p, err = once(box, "-F", env={"SPOOLBOX_TEST_CLOCK": "+3h"})
    m = ctl(box, mid)
    assert m.rcpts[0].tag == "F", err
    assert m.attempts[-1][3:6] == ["error", "failed", "4.4.7"]
    assert deliveries(box) == []


def test_no_matching_clause_is_deferred_with_a_reason(box):
    sconf(box, """*/* interval=1m retries="1" expiry=1h
smtp command="STUB"
""")
    mid = gen.add_incoming(box.spool, [("uucp", "x", "someone")])
    p, err = once(box)
    m = ctl(box, mid)
    assert m.rcpts[0].tag == "Q"
    assert "no scheduler.conf clause with a command matches uucp/x" in m.attempts[-1][7]


@pytest.mark.parametrize("limit,conf,hosts,expect", [
    ("maxchannel", "smtp command=STUB maxchannel=2 overfeed=1", 6, 2),
    ("maxring", "smtp command=STUB maxring=3 overfeed=1", 6, 3),
    ("maxta", "smtp command=STUB maxta=1 overfeed=1", 4, 1),
    ("maxthr", "smtp command=STUB maxthr=3 overfeed=1", 1, 3),
])
def test_limits(box, limit, conf, hosts, expect):
    sconf(box, '*/* interval=1s retries="1" expiry=1h\n' + conf + "\n")
    for i in range(12):
        gen.add_queued(box.spool, [("smtp", "h%d.example" % (i % hosts), "slow%d@h%d.example" % (i, i % hosts))])
    p, err = once(box, env={"STUB_SLOW": "0.25"})
    assert p.returncode == 0, err
    assert len(deliveries(box)) == 12
    jobs = [(e[2], e[3]) for e in events(box) if e[0] == "job"]
    # the limit was reached and never exceeded (jobs are the TAs' busy intervals)
    assert max_overlap(jobs) == expect, (limit, jobs)


def test_busy_host_does_not_starve_another(box):
    """One TA for the ring (maxring=1): it stays with its host while it has work (MRU), but a
    waiting host gets its turn after overfeed jobs (Courier's anti-starvation rule)."""
    sconf(box, """*/* interval=1s retries="1" expiry=1h
smtp command="STUB" maxring=1 overfeed=2
""")
    for i in range(12):
        gen.add_queued(box.spool, [("smtp", "busy.example", "ok%d@busy.example" % i)], arrival=time.time() - 100 + i)
    lone = gen.add_queued(box.spool, [("smtp", "lone.example", "ok@lone.example")], arrival=time.time())
    p, err = once(box)
    assert p.returncode == 0, err
    order = [e[5] for e in events(box) if e[0] == "job"]
    assert len(order) == 13 and len([e for e in events(box) if e[0] == "start"]) == 1
    assert order.index("lone.example") <= 6, order


def test_idle_transport_agent_is_reused_then_ended(box):
    sconf(box, """*/* interval=1s retries="1" expiry=1h
smtp command="STUB" maxchannel=1 idlemax=1s
""")
    a = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")])
    b = gen.add_queued(box.spool, [("smtp", "b.example", "ok@b.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    starts = [e for e in events(box) if e[0] == "start"]
    assert len(starts) == 1                                   # one TA served both hosts
    jobs = [e for e in events(box) if e[0] == "job"]
    assert sorted(j[5] for j in jobs) == ["a.example", "b.example"]
    assert any(e[0] == "exit" for e in events(box))           # and was ended at the end


def test_idlemax_ends_idle_agents_in_a_running_scheduler(box):
    sconf(box, """*/* interval=1s retries="1" expiry=1h
smtp command="STUB" idlemax=1s
""")
    gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")])
    proc = start_daemon(box)
    try:
        deadline = time.time() + 15
        while time.time() < deadline and not any(e[0] == "exit" for e in events(box)):
            time.sleep(0.1)
        assert any(e[0] == "exit" for e in events(box)), "idle TA was not ended"
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    assert proc.returncode == 0


def deliver_one_now(box, pid):
    """A new local message and ALRM to scheduler pid; asserts that it is delivered."""
    gen.add_incoming(box.spool, [("local", "-", "ok")])
    os.kill(pid, signal.SIGALRM)
    deadline = time.time() + 10
    while time.time() < deadline and not deliveries(box):
        time.sleep(0.05)
    assert deliveries(box)


def start_daemon(box, *args, env=None):
    # stderr to a file: a pipe nobody reads would fill up and stop the scheduler in write()
    errlog = open(os.path.join(box.base, "scheduler.err"), "ab")
    proc = subprocess.Popen([BINARY, "scheduler", "-i"] + list(args), env=box.environ(stub_env(box, env)),
                            stderr=errlog, stdout=subprocess.DEVNULL)
    errlog.close()
    pidfile = os.path.join(box.spool, "scheduler.pid")
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with open(pidfile) as f:
                if f.read().strip() == str(proc.pid):
                    break
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    time.sleep(0.2)
    return proc


def stop(box, proc, sig=signal.SIGTERM):
    proc.send_signal(sig)
    proc.wait(timeout=40)
    with open(os.path.join(box.base, "scheduler.err"), errors="replace") as f:
        return proc.returncode, f.read()


def test_second_scheduler_refuses_with_the_first_pid(box):
    sconf(box, BASIC)
    first = start_daemon(box)
    try:
        p = box.run("scheduler", "-i")
        assert p.returncode == 75
        assert f"another scheduler (pid {first.pid}) is running" in p.stderr.decode()
    finally:
        rc, err = stop(box, first)
    assert rc == 0, err
    with open(os.path.join(box.spool, "scheduler.pid")) as f:
        assert f.read() == ""                                # a clean stop


def test_trigger_wakes_a_running_scheduler(box):
    sconf(box, BASIC)
    proc = start_daemon(box)
    try:
        mid = gen.add_incoming(box.spool, [("local", "-", "ok")])
        fd = os.open(os.path.join(box.spool, "trigger"), os.O_WRONLY | os.O_NONBLOCK)
        t0 = time.time()
        os.write(fd, b"\n")
        os.close(fd)
        while time.time() - t0 < 10 and not deliveries(box):
            time.sleep(0.02)
        assert [d[2] for d in deliveries(box)] == [mid]
        assert time.time() - t0 < 5
    finally:
        rc, err = stop(box, proc)
    assert rc == 0, err


def test_trigger_Q_runs_deferred_mail_now(box):
    sconf(box, """*/* interval=1h retries="1" expiry=1d
smtp/*.etrn.example command="STUB" queueonly
smtp command="STUB"
""")
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")], due=time.time() + 3000)
    q = gen.add_queued(box.spool, [("smtp", "mx.etrn.example", "ok@mx.etrn.example")])
    proc = start_daemon(box)
    try:
        time.sleep(0.5)
        assert deliveries(box) == []                         # not due yet, and queueonly waits
        fd = os.open(os.path.join(box.spool, "trigger"), os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"Retrn.example\n")
        os.close(fd)
        deadline = time.time() + 10
        while time.time() < deadline and not deliveries(box):
            time.sleep(0.05)
        assert [d[2] for d in deliveries(box)] == [q]
        fd = os.open(os.path.join(box.spool, "trigger"), os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"Ra.example\n")
        os.close(fd)
        deadline = time.time() + 10
        while time.time() < deadline and len(deliveries(box)) < 2:
            time.sleep(0.05)
        assert [d[2] for d in deliveries(box)] == [q, mid]
    finally:
        rc, err = stop(box, proc)
    assert "trigger: run the queue for a.example" in err


def test_signals_usr2_usr1_hup_quit(box):
    sconf(box, BASIC)
    logfile = os.path.join(box.base, "sched.log")
    proc = start_daemon(box, "-L", logfile)
    try:
        proc.send_signal(signal.SIGUSR2)
        time.sleep(0.3)
        assert "state: 0 messages in memory" in open(logfile).read()
        # a bad reload keeps the old configuration and says why
        sconf(box, BASIC + "bogus line=\n")
        proc.send_signal(signal.SIGUSR1)
        time.sleep(0.3)
        text = open(logfile).read()
        assert "keeping the previous configuration" in text and "scheduler.conf:5:" in text
        # a good one is taken
        sconf(box, BASIC)
        proc.send_signal(signal.SIGUSR1)
        time.sleep(0.3)
        assert "reload: " + box.env["SCHEDULER_CONF"] + " read (4 clauses)" in open(logfile).read()
        # HUP reopens the log file
        os.rename(logfile, logfile + ".1")
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        assert "SIGHUP: log files reopened" in open(logfile).read()
        # the old configuration still delivers
        deliver_one_now(box, proc.pid)
    finally:
        rc, _ = stop(box, proc, signal.SIGQUIT)
    assert rc == 0
    text = open(logfile).read()
    assert "SIGQUIT: stopping the transport agents first" in text
    assert any(e[0] == "exit" for e in events(box))             # the TA was told to finish


def test_statistics_log(box):
    sconf(box, BASIC)
    stats = os.path.join(box.base, "stats")
    mid = gen.add_incoming(box.spool, [("local", "-", "ok"), ("smtp", "a.example", "fail@a.example")])
    p, err = once(box, "-l", stats)
    lines = open(stats).read().splitlines()
    assert any(re.fullmatch(re.escape(mid) + r" \d+ \d+ ok local/-", l) for l in lines), lines
    assert any(re.fullmatch(re.escape(mid) + r" \d+ \d+ error smtp/a\.example", l) for l in lines), lines


def test_demo_flag_E_without_value_is_one_shot(box):
    sconf(box, BASIC)
    gen.add_incoming(box.spool, [("local", "-", "ok")])
    p = box.run("scheduler", "-i", "-E", env=stub_env(box), timeout=30)
    assert p.returncode == 0, p.stderr
    assert len(deliveries(box)) == 1


def test_hold_keeps_mail(box):
    # the built-in configuration: hold/* runs our hold applet
    mid = gen.add_incoming(box.spool, [("hold", "x", "someone@example.com")])
    p, err = once(box)
    assert p.returncode == 0, err
    m = ctl(box, mid)
    r = m.rcpts[0]
    assert r.tag == "Q"
    assert m.attempts[-1][3:6] == ["retryat", "delayed", "4.3.2"]
    assert r.next >= int(m.attempts[-1][2]) + 30 * 86400


def test_bad_configuration_is_refused_with_its_line(box):
    sconf(box, "*/* interval=1m\n\tretries=\"1 x\"\nsmtp command=STUB\n")
    p = box.run("scheduler", "-i", "-1")
    assert p.returncode == 78
    assert f"{box.env['SCHEDULER_CONF']}:2: error: retries: 'x' is not a number" in p.stderr.decode()
    p = box.run(None, "--check")
    assert p.returncode == 78 and b":2: error: retries" in p.stderr


def test_restart_waits_for_a_transport_agent_that_still_runs(box):
    """kill -9 of the scheduler while its TA is in the middle of a delivery: the restarted
    scheduler sees the recipient T with a live TA pid and does not start a second delivery until
    that TA is gone; then the attempt counts as lost and the recipient is delivered again."""
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "slow@a.example")])
    old = start_daemon(box, env={"STUB_SLOW": "2"})
    deadline = time.time() + 10
    while time.time() < deadline and not [e for e in events(box) if e[0] == "start"]:
        time.sleep(0.05)
    time.sleep(0.5)                                  # the TA is inside its job now
    old_ta = [e for e in events(box) if e[0] == "start"][0][1]
    os.kill(old.pid, signal.SIGKILL)
    old.wait()
    assert ctl(box, mid).rcpts[0].tag == "T"
    new = start_daemon(box, env={"STUB_SLOW": "0.01"})
    try:
        deadline = time.time() + 20
        while time.time() < deadline and len(deliveries(box)) < 2:
            time.sleep(0.05)
    finally:
        rc, err = stop(box, new)
    d = deliveries(box)
    assert len(d) == 2, (d, err)
    # the old TA delivered first; the second delivery started only after it had ended
    assert d[0][1] == old_ta and d[1][1] != old_ta, d
    assert float(d[1][5]) > float(d[0][5])
    assert "of an earlier scheduler ended without a report" in err
    assert not queued(box, mid)


@pytest.mark.skipif(IS_ASAN, reason="timing-heavy; product and no-TLS builds only")
def test_crash_and_restart_never_loses_a_recipient(box):
    """kill -9 of the scheduler and of its TAs, again and again, under load; then a clean run.
    Every recipient is delivered at least once; duplicates are counted and reported."""
    sconf(box, """*/* interval=1s retries="1" expiry=1d
smtp command="STUB" maxchannel=4 overfeed=2
""")
    want = set()
    for i in range(60):
        addrs = ["slow%d.%d@h%d.example" % (i, k, i % 5) for k in range(2)]
        mid = gen.add_queued(box.spool, [("smtp", "h%d.example" % (i % 5), a) for a in addrs])
        want |= {(mid, a) for a in addrs}
    env = {"STUB_SLOW": "0.05"}
    for rnd in range(6):
        proc = start_daemon(box, env=env)
        time.sleep(0.3 + 0.1 * rnd)
        # the TAs are the scheduler's children: killed by pid, nothing else is touched
        tas = children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        for pid in tas[: rnd % 3]:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
    # let orphaned TAs finish or die, then a clean run to the end
    p, err = once(box, env=env, timeout=120)
    deadline = time.time() + 30
    while gen_left(box) and time.time() < deadline:
        time.sleep(1)
        p, err = once(box, env=env, timeout=120)
    got = [(d[2], d[4]) for d in deliveries(box)]
    assert want <= set(got), sorted(want - set(got))[:5]
    dups = len(got) - len(set(got))
    print(f"\ncrash test: {len(want)} recipients, {len(got)} deliveries, {dups} duplicates")
    assert gen_left(box) == 0, err


def children(ppid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == ppid:
                        out.append(d)
            except (OSError, IndexError, ValueError):
                pass
    return out


def gen_left(box):
    q = os.path.join(box.spool, "queue")
    return sum(len([f for f in os.listdir(os.path.join(q, h)) if f.endswith(".c")]) for h in os.listdir(q)) \
        if os.path.isdir(q) else 0


@pytest.mark.slow
def test_ten_thousand_queued_stay_within_the_watermark(box):
    sconf(box, """*/* interval=1s retries="1" expiry=1d
smtp command="STUB" maxchannel=4
""")
    for i in range(10000):
        gen.add_queued(box.spool, [("smtp", "h%d.example" % (i % 50), "ok%d@h%d.example" % (i, i % 50))])
    proc = start_daemon(box, env={"QUEUELO": "100", "QUEUEHI": "200"})
    peak = 0
    try:
        deadline = time.time() + 240
        while gen_left(box) and time.time() < deadline and proc.poll() is None:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
            time.sleep(0.2)
    finally:
        rc, err = stop(box, proc)
    assert gen_left(box) == 0
    print(f"\n10000 queued, watermarks 100/200: peak RSS {peak} KiB")
    assert peak < 2048


def test_end_to_end_submit_trigger_local(box):
    """The real chain with the built-in configuration: submit pulls the trigger of a running
    scheduler, which runs our local transport into an mbox."""
    user = os.environ.get("USER") or "root"
    with open(box.env["ALIASES"], "w") as f:
        f.write("")
    proc = start_daemon(box)
    try:
        p = box.run("submit", "-i", user, input="Subject: e2e\n\nhello from the test\n")
        assert p.returncode == 0, p.stderr
        mbox = os.path.join(box.mail, user)
        deadline = time.time() + 10
        while time.time() < deadline and not (os.path.exists(mbox) and b"hello from the test" in open(mbox, "rb").read()):
            time.sleep(0.05)
        assert b"hello from the test" in open(mbox, "rb").read()
        deadline = time.time() + 5
        while time.time() < deadline and gen_left(box):
            time.sleep(0.05)
        assert gen_left(box) == 0
    finally:
        rc, err = stop(box, proc)
    assert rc == 0, err


def test_global_report_interval_reports_failures_early(box):
    sconf(box, """PARAMglobal-report-interval = 1m
*/* interval=1h retries="1" expiry=1d
smtp command="STUB"
error command="STUB error"
""")
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "fail@a.example"), ("smtp", "b.example", "defer@b.example")])
    once(box)
    assert [r.tag for r in ctl(box, mid).rcpts] == ["F", "Q"]      # the other recipient is pending
    assert not any(e[0] == "start" and e[3:] == ["error"] for e in events(box))
    p, err = once(box, env={"SPOOLBOX_TEST_CLOCK": "+2m"})
    m = ctl(box, mid)
    assert [r.tag for r in m.rcpts] == ["X", "Q"], err              # reported before the end
    assert any(re.fullmatch(r"B \d+ 0TESTDSN0001Z", rec) for rec in m.records), m.records
    assert any(e[0] == "start" and e[3:] == ["error"] for e in events(box))


def test_agent_that_never_says_hungry_is_killed(box):
    sconf(box, """*/* interval=1h retries="1" expiry=1d
smtp command="/bin/sleep 30"
""")
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "ok@a.example")])
    t0 = time.time()
    p, err = once(box, env={"SPOOLBOX_TEST_CLOCK": "+0*100"}, timeout=20)
    assert p.returncode == 0, err
    assert time.time() - t0 < 10
    assert "said nothing for 60s after its start: killed" in err and "could not be started" in err
    assert ctl(box, mid).rcpts[0].tag == "N"                        # the work is still queued


def test_daemon_mode_detaches_when_ready(box):
    sconf(box, BASIC)
    p = box.run("scheduler", "-d", "-L", os.path.join(box.base, "d.log"), env=stub_env(box), timeout=20)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(box.spool, "scheduler.pid")) as f:
        pid = int(f.read())
    try:
        os.kill(pid, 0)                                           # it runs, detached
        assert os.getsid(pid) == pid
        deliver_one_now(box, pid)
    finally:
        os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 10
    while time.time() < deadline and os.path.exists(f"/proc/{pid}"):
        time.sleep(0.05)
    assert "SIGTERM: stopping the transport agents first" in open(os.path.join(box.base, "d.log")).read()


def test_run_the_queue_right_after_a_deferral_tries_again(box):
    """A run of the queue asked for in the same second as a message's last attempt (a link-up
    flush just after the link-down deferral) tries that message again; it used to be taken as
    already tried in this run."""
    sconf(box, BASIC.replace("interval=1s", "interval=1h"))
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "defer@a.example")])
    proc = start_daemon(box)
    try:
        deadline = time.time() + 10
        while not any(e[0] == "deliver" or e[0] == "job" for e in events(box)) and time.time() < deadline:
            time.sleep(0.01)
        while ctl(box, mid).rcpts[0].tag != "Q" and time.time() < deadline:
            time.sleep(0.01)  # the deferral is recorded
        fd = os.open(os.path.join(box.spool, "trigger"), os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"Q\n")
        os.close(fd)
        deadline = time.time() + 10
        while len([e for e in events(box) if e[0] == "job"]) < 2 and time.time() < deadline:
            time.sleep(0.05)
    finally:
        stop(box, proc)
    assert len([e for e in events(box) if e[0] == "job"]) == 2, events(box)


def test_run_the_queue_drains_more_than_the_high_watermark(box):
    """sendmail -q runs the whole queue, not only the QUEUEHI messages that fit in memory: the
    scheduler keeps refilling from the due index as messages finish (issue 13 point 1). The
    deliveries are slow enough that one load of QUEUEHI messages takes longer than a second, so
    the scheduler's ordinary once-a-second look at the due index happens in the middle of the run
    (it used to end the run: CI delivered 100 of 300)."""
    sconf(box, BASIC.replace("interval=1s", "interval=1h"))
    later = int(time.time()) + 3600  # every message waits for a retry an hour away
    ids = [gen.add_queued(box.spool, [("smtp", "a.example", "slow%d@a.example" % i)], due=later) for i in range(200)]
    env = {"QUEUEHI": "50", "QUEUELO": "10", "STUB_SLOW": "0.025"}
    proc = start_daemon(box, env=env)
    try:
        time.sleep(0.3)
        assert deliveries(box) == []  # nothing is due yet
        p = box.run("submit", "-q", env=stub_env(box, env))
        assert p.returncode == 0, p.stderr
        deadline = time.time() + 30
        while len(deliveries(box)) < len(ids) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        rc, err = stop(box, proc)
    got = [d[2] for d in deliveries(box)]
    assert sorted(got) == sorted(ids), (len(got), err[-2000:])  # every one, once


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace")
def test_pickup_hands_the_envelope_to_load_without_reading_it_back(box, tmp_path):
    """Issue 9 point 7: pick-up parses the envelope once and hands it to the load step, so the
    scheduler opens the new control file once (to create it) and never reads it back. -F keeps
    every other open (status writes to hand out) away."""
    sconf(box, BASIC)
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "ok@a.example"), ("local", "-", "bob")])
    trace = str(tmp_path / "trace")
    # (LeakSanitizer cannot run under ptrace: the ASan build runs without it here)
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", trace, BINARY, "scheduler",
                        "-i", "-1", "-F"], env=box.environ(stub_env(box, {"ASAN_OPTIONS": "detect_leaks=0"})),
                       capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert f"{mid}: uid=" in err and "started: 1 messages due in memory" in err
    with open(trace) as f:
        opens = [line for line in f if mid + ".c" in line and "= -1" not in line]
    assert len(opens) == 1, opens
    assert "O_CREAT" in opens[0]
    m = ctl(box, mid)
    assert [r.tag for r in m.rcpts] == ["N", "N"]


def _vm_size(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize")


def _wait_count(path, needle, count, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(path, errors="replace") as f:
            if f.read().count(needle) >= count:
                return True
        time.sleep(0.01)
    return False


@pytest.mark.skipif(IS_ASAN, reason="address-space limits do not apply to an ASan build")
def test_reload_out_of_memory_keeps_the_old_configuration(box):
    """Issue 9 point 8: the daemon never exits on out-of-memory. Its address space is capped
    (RLIMIT_AS) at every page from just below its size up, and a scheduler.conf with long values
    is reloaded under each cap: wherever the allocation fails (the file, a clause, a command), the
    reload is refused with a reason and the old configuration stays; the scheduler lives on and,
    with the cap lifted, takes the new file and delivers."""
    import resource
    sconf(box, BASIC)
    logfile = os.path.join(box.base, "sched.log")
    proc = start_daemon(box, "-L", logfile)
    big = BASIC + "".join('big%d/* command="STUB %s" user=%s group=%s\n' % (i, "x" * (900 + i), "u" * 60, "g" * 60)
                          for i in range(8))
    try:
        sconf(box, big)
        base = _vm_size(proc.pid)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        refused = 0
        for k, extra in enumerate(range(-4, 160)):
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (base + extra * 4096, hard))
            proc.send_signal(signal.SIGUSR1)
            assert _wait_count(logfile, "reload: ", k + 1), "no reload line under cap %d" % extra
            assert proc.poll() is None, "the scheduler exited under a cap of %d pages" % extra
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (hard, hard))
            # the next cap starts from a settled heap
            with open(logfile, errors="replace") as f:
                refused = f.read().count("keeping the previous configuration")
        text = open(logfile, errors="replace").read()
        assert refused > 0 and "out of memory" in text.lower()
        proc.send_signal(signal.SIGUSR1)
        assert _wait_count(logfile, "read (12 clauses)", 1)
        deliver_one_now(box, proc.pid)
    finally:
        rc, err = stop(box, proc, signal.SIGQUIT)
    assert rc == 0, err


@pytest.mark.skipif(IS_ASAN, reason="address-space limits do not apply to an ASan build")
def test_agent_start_out_of_memory_is_retried_later(box):
    """Issue 9 point 8: starting a transport agent under an address-space cap (every page from
    just below the scheduler's size up; one new agent per host, as the command names $host) fails
    as a start that is tried again later, never as an exit; with the cap lifted every message is
    delivered."""
    import resource
    sconf(box, """*/* interval=1s retries="1" expiry=1h
smtp command="STUB $host"
error command="STUB error"
""")
    logfile = os.path.join(box.base, "sched.log")
    proc = start_daemon(box, "-L", logfile)
    mids = []
    try:
        base = _vm_size(proc.pid)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        ooms = 0
        for k, extra in enumerate(range(-4, 80)):
            mids.append(gen.add_incoming(box.spool, [("smtp", "h%d.example" % k, "ok@h%d.example" % k)]))
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (base + extra * 4096, hard))
            proc.send_signal(signal.SIGALRM)
            # under the cap until the scheduler got as far as it could: host k's agent started
            # (or failed to), or something else ran out of memory
            deadline = time.time() + 2
            while time.time() < deadline and proc.poll() is None:
                with open(logfile, errors="replace") as f:
                    text = f.read()
                if "smtp/h%d.example" % k in text or text.count("out of memory") > ooms:
                    break
                time.sleep(0.01)
            ooms = text.count("out of memory")
            assert proc.poll() is None, "the scheduler exited (%s) under a cap of %d pages: %s" % (
                proc.returncode, extra, text[-2000:])
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (hard, hard))
        deadline = time.time() + 90
        while time.time() < deadline and len({d[2] for d in deliveries(box)}) < len(mids):
            proc.send_signal(signal.SIGALRM)
            time.sleep(0.2)
        missing = set(mids) - {d[2] for d in deliveries(box)}
        assert not missing, (sorted(missing), open(logfile, errors="replace").read()[-3000:])
        assert proc.poll() is None
    finally:
        rc, err = stop(box, proc, signal.SIGQUIT)
    assert rc == 0, err


def test_hung_agent_is_killed_after_the_time_limit_and_deferred(box):
    """Issue 11 point 6: a job that runs past its clause's timelimit gets its TA killed and its
    recipients deferred (Q, an A record with the reason), instead of staying T for ever; the
    other clause's default limit (5h) leaves its own job alone. The clock runs 100 times as fast:
    timelimit=2m is 1.2 s of real time; the stub would sleep 60 s."""
    sconf(box, """*/* interval=1h retries="1" expiry=1d
smtp/hung.example command="STUB" timelimit=2m
smtp command="STUB"
""")
    hung = gen.add_incoming(box.spool, [("smtp", "hung.example", "slow@hung.example")])
    fine = gen.add_incoming(box.spool, [("smtp", "a.example", "ok@a.example")])
    t0 = time.time()
    p, err = once(box, env={"SPOOLBOX_TEST_CLOCK": "+0*100", "STUB_SLOW": "60"}, timeout=50)
    assert p.returncode == 0, err
    assert time.time() - t0 < 40                                  # not the stub's 60 s
    m = ctl(box, hung)
    assert m.rcpts[0].tag == "Q"
    assert m.attempts and m.attempts[-1][3] == "lost"
    assert "ran over its time limit of 120s (timelimit)" in m.attempts[-1][7]
    assert "killed: the job ran over its time limit of 120s" in err
    assert not queued(box, fine)                                  # delivered, not killed
    assert [d[2] for d in deliveries(box)] == [fine]
