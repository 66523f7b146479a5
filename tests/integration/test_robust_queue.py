"""Crash safety of the scheduler's queue (docs/spool.md 6, 7, 9): control files damaged on disk,
torn appends, stale pick-up states, kill -9 at random moments of pick-up, delivery, the error
phase and removal, and a full disk (a small tmpfs) during pick-up. The promise checked each time:
every message is delivered (or bounced) at least once, none is lost, none stays stuck."""
import os
import random
import signal
import subprocess
import threading
import time

import pytest

from conftest import BINARY, IS_ASAN
import sched_gen as gen
from test_scheduler import BASIC, STUB, ctl, deliveries, events, once, sconf, start_daemon, stop, stub_env


def ctl_path(box, mid):
    return os.path.join(box.spool, "queue", mid[-1], mid + ".c")


def leftovers(box):
    """Every file still in incoming/, queue/ and due/."""
    out = []
    for top in ("incoming", "queue", "due"):
        for dp, _, files in os.walk(os.path.join(box.spool, top)):
            out += [os.path.join(dp, f) for f in files]
    return out


def script(box, name, text):
    """An executable script of that text in the box; its path."""
    path = os.path.join(box.base, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


def dsns(box):
    return [e for e in events(box) if e[0] == "dsn"]


def test_torn_attempt_record_at_the_end_is_tolerated(box):
    # a crash in the middle of appending an A record leaves a line without its newline
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")])
    with open(ctl_path(box, mid), "ab") as f:
        f.write(b"A 0 1795246800 deferred delay")
    p, err = once(box)
    assert p.returncode == 0, err
    assert [d[2] for d in deliveries(box)] == [mid], err
    assert not leftovers(box), err


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "bad-status"])
def test_damaged_control_file_is_rebuilt_from_the_message_file(box, damage):
    """docs/spool.md 3: the envelope block in the message file rebuilds a damaged control file
    (in place: the due link keeps pointing at it); the message is delivered, not parked."""
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok1@a.example"), ("local", "-", "ok2"),
                                     ("smtp", "b.example", "defer@b.example")])
    path = ctl_path(box, mid)
    with open(path, "r+b") as f:
        data = f.read()
        f.seek(0)
        if damage == "garbage":
            f.write(b"\x00\xffgarbage\n" * 8)
        elif damage == "truncated":
            f.truncate(len(data) // 2)
        elif damage == "empty":
            f.truncate(0)
        else:
            f.write(data.replace(b"r N 0000000000", b"r ? 00000x0000", 1))
    p, err = once(box)
    assert p.returncode == 0, err
    assert "rebuilt" in err, err
    assert sorted(d[4] for d in deliveries(box)) == ["ok1@a.example", "ok2"], err
    # rebuilt in place: the one due link is still a name of the control file, which holds the
    # envelope block again and the new history
    links = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(box.spool, "due")) for f in fs]
    assert len(links) == 1 and os.path.samefile(links[0], path), (links, err)
    m = ctl(box, mid)
    assert [r.tag for r in m.rcpts] == ["D", "D", "Q"], err


def test_control_file_of_a_newer_format_is_not_rebuilt(box):
    # a version this binary does not know is left alone (an upgrade must not be undone)
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")])
    path = ctl_path(box, mid)
    with open(path, "rb") as f:
        data = f.read()
    for p in (path, os.path.join(box.spool, "queue", mid[-1], mid + ".d")):
        with open(p, "r+b") as f:
            body = f.read()
            f.seek(0)
            f.write(body.replace(b"@ spoolbox 1", b"@ spoolbox 9", 1))
    p, err = once(box)
    assert not deliveries(box), err
    with open(path, "rb") as f:
        assert f.read() == data.replace(b"@ spoolbox 1", b"@ spoolbox 9", 1)


def test_stale_pickup_state_is_not_delivered_before_its_message_file(box):
    """A crash after P2 (control file and due link made, message still in incoming/) leaves
    a due link to a message that has no .d yet: it must be picked up, not handed to a TA from
    the index (docs/spool.md 6: deliverable only in P3) and then delivered a second time."""
    sconf(box, BASIC)
    ids = []
    for i in range(6):
        mid = gen.add_incoming(box.spool, [("smtp", "a.example", "ok%d@a.example" % i)])
        ids.append(mid)
        with open(os.path.join(box.spool, "incoming", mid), "rb") as f:
            data = f.read()
        env = data[:data.index(b"\n.\n") + 3]
        arrival = int([l for l in env.split(b"\n") if l.startswith(b"t ")][0][2:])
        qdir = os.path.join(box.spool, "queue", mid[-1])
        ddir = os.path.join(box.spool, "due", str(arrival // 10000))
        os.makedirs(qdir, exist_ok=True)
        os.makedirs(ddir, exist_ok=True)
        with open(os.path.join(qdir, mid + ".c"), "wb") as f:
            f.write(env)
        os.link(os.path.join(qdir, mid + ".c"), os.path.join(ddir, "%s.%d" % (mid, arrival)))
    p, err = once(box, "-E", "1")
    assert p.returncode == 0, err
    got = sorted(d[2] for d in deliveries(box))
    assert got == sorted(ids), err
    assert not leftovers(box), err


def test_a_second_due_link_of_a_delivered_message_is_gone_after_a_one_shot_run(box):
    """A crash can leave a message with two due links (two names of its control file). The run
    that delivers it removes it under one: the other must not stay behind as a stale entry
    (seen as a leftover of the random kill test)."""
    sconf(box, BASIC)
    now = int(time.time())
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")], due=now - 5)
    ctlf = os.path.join(box.spool, "queue", mid[-1], mid + ".c")
    other = os.path.join(box.spool, "due", str((now + 30) // 10000), "%s.%d" % (mid, now + 30))
    os.makedirs(os.path.dirname(other), exist_ok=True)
    os.link(ctlf, other)
    p, err = once(box)
    assert p.returncode == 0, err
    assert [d[2] for d in deliveries(box)] == [mid], err
    assert not leftovers(box), (leftovers(box), err)
    assert "one-shot: removed 1 stale due entries" in err, err


def test_a_one_shot_run_waits_for_an_agent_of_the_killed_scheduler(box):
    """kill -9 of a daemon while its agent is inside a job, then at once a one-shot run (the
    random kill test's last step): the recipient is T with a live agent of the dead scheduler.
    The run must wait for that agent to end and then deliver again, not exit as if nothing were
    due and leave the message behind (seen in the random kill test, a leftover)."""
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "slow@a.example")])
    old = start_daemon(box, env={"STUB_SLOW": "1.5"})
    deadline = time.time() + 10
    while time.time() < deadline and not [e for e in events(box) if e[0] == "job" or e[0] == "start"]:
        time.sleep(0.05)
    time.sleep(0.4)
    os.kill(old.pid, signal.SIGKILL)
    old.wait()
    assert ctl(box, mid).rcpts[0].tag == "T"
    p, err = once(box, env={"STUB_SLOW": "0.01"})
    assert p.returncode == 0, err
    assert len(deliveries(box)) == 2, (deliveries(box), err)
    assert "of an earlier scheduler ended without a report" in err, err
    assert not leftovers(box), (leftovers(box), err)


def test_a_failure_report_claimed_by_a_dead_schedulers_error_agent_is_still_sent(box):
    """The error phase cut by kill -9 after the claim and before the job line went out: the
    failed recipient is T with the pid of that scheduler's error agent, which is still alive when
    a one-shot run loads the message (it ends when it sees its input closed). The run waits for
    it, and the failure is reported: never removed or left without a report (CI saw fail0,
    fail4, ... unreported after the random kill test)."""
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "h.example", "ok@h.example"), ("local", "-", "fail0")])
    agent = subprocess.Popen(["/usr/bin/python3", STUB, "error"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, env=box.environ(stub_env(box)))
    path = ctl_path(box, mid)
    now = int(time.time())
    with open(path, "rb") as f:
        data = f.read()
    data = data.replace(b"r N 0000000000 0000 0000000000 smtp", b"r D 0000000000 0001 %010d smtp" % now, 1)
    data = data.replace(b"r N 0000000000 0000 0000000000 local",
                        b"r T %010d 0001 %010d local" % (agent.pid, now), 1)
    data += b"A 0 %d ok delivered 2.0.0 - delivered by stub\nA 1 %d error failed 5.1.1 - no such user\n" % (now, now)
    with open(path, "wb") as f:
        f.write(data)
    # the old agent ends a moment after the run has loaded the message
    threading.Timer(1.0, agent.stdin.close).start()
    try:
        p, err = once(box)
    finally:
        agent.wait(timeout=10)
    assert p.returncode == 0, err
    assert [(e[2], e[4]) for e in dsns(box)] == [(mid, "fail0")], (events(box), err)
    assert not leftovers(box), (leftovers(box), err)


def test_a_delivery_on_record_of_a_dead_agent_owes_no_unasked_success_notice(box):
    """A crash between a delivery's attempt record and its status leaves the recipient T with a
    delivery on record: it is done (not delivered again), and no success notice goes to a sender
    who did not ask for one (NOTIFY without SUCCESS)."""
    sconf(box, BASIC)
    mid = gen.add_queued(box.spool, [("smtp", "h.example", "ok@h.example")])
    gone = subprocess.Popen(["/bin/true"])
    gone.wait()
    path = ctl_path(box, mid)
    now = int(time.time())
    with open(path, "rb") as f:
        data = f.read()
    data = data.replace(b"r N 0000000000 0000 0000000000 smtp", b"r T %010d 0001 %010d smtp" % (gone.pid, now), 1)
    data += b"A 0 %d ok delivered 2.0.0 - delivered by stub\n" % now
    with open(path, "wb") as f:
        f.write(data)
    p, err = once(box)
    assert p.returncode == 0, err
    assert not deliveries(box) and not dsns(box), (events(box), err)
    assert not leftovers(box), (leftovers(box), err)


def kill_loop(box, rounds, seed):
    rnd = random.Random(seed)
    for _ in range(rounds):
        proc = start_daemon(box, env={"STUB_SLOW": "0.01"})
        time.sleep(rnd.uniform(0.02, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_at_random_moments_loses_nothing(box, seed):
    """Many messages, some with failing recipients (error phase), the scheduler killed with -9
    at random moments of pick-up, delivery, the error phase and removal, then one clean run:
    every good recipient delivered at least once, every failed one reported at least once, and
    nothing left in the spool."""
    sconf(box, BASIC)
    good, bad = set(), set()
    for i in range(60):
        rc = [("smtp", "h%d.example" % (i % 3), "ok%d@h.example" % i)]
        good.add("ok%d@h.example" % i)
        if i % 4 == 0:
            rc.append(("local", "-", "fail%d" % i))
            bad.add("fail%d" % i)
        if i % 2:
            gen.add_incoming(box.spool, rc)
        else:
            gen.add_queued(box.spool, rc)
    kill_loop(box, 4, seed)
    # more mail arrives between the crashes
    for i in range(60, 90):
        gen.add_incoming(box.spool, [("smtp", "h.example", "ok%d@h.example" % i)])
        good.add("ok%d@h.example" % i)
    kill_loop(box, 3, seed + 100)
    p, err = once(box, timeout=120)
    assert p.returncode == 0, err
    got = {d[4] for d in deliveries(box)}
    assert good <= got, (sorted(good - got), err[-3000:])
    reported = {e[4] for e in dsns(box)}
    assert bad <= reported, (sorted(bad - reported), err[-3000:])
    assert not leftovers(box), (leftovers(box), err[-3000:])
    assert not os.path.exists(os.path.join(box.spool, "corrupt")) or not os.listdir(os.path.join(box.spool, "corrupt"))


GARBAGE_TA = r'''#!/usr/bin/python3
# A transport agent that wraps each correct report in noise: binary junk, NUL bytes, a flood of
# chatter, a line of exactly 8192 bytes whose "tail" would read "#hungry", and a report split
# over two writes with a pause between them.
import os, sys, time
SPOOL = os.environ["SPOOL"]
ME = os.getpid()
def out(b):
    os.write(1, b)
out(b"#hungry\n")
for line in sys.stdin:
    line = line.rstrip("\n")
    if line == "#idle":
        out(b"#hungry\n")
        continue
    mid, host = line.split("\t")[:2]
    data = open(os.path.join(SPOOL, "queue", mid[-1], mid + ".c"), "rb").read()
    pos, mine = 0, []
    for raw in data.split(b"\n"):
        if raw == b".":
            break
        f = raw.split(b" ")
        if f[0] == b"r" and f[1] == b"T" and int(f[2]) == ME and f[6].decode() == host:
            mine.append((pos, f[7].decode()))
        pos += len(raw) + 1
    out(b"\x00\xff\xfe garbage \x01\x02\n")
    out(b"chatter line\n" * 5000)
    out(b"Z" * 8192 + b"#hungry\n")
    out(b"no newline at the end, then more" * 3)
    out(b"\n")
    for off, addr in mine:
        rep = ("%s/%d\trfc822;%s\x01delivered\x012.0.0\x01fine\x01\tok fine\n" % (mid, off, addr)).encode()
        out(rep[:10])
        time.sleep(0.3)
        out(rep[10:])
        with open(os.environ["STUB_LOG"], "a") as f:
            f.write("deliver %d %s %d %s\n" % (ME, mid, off, addr))
    out(b"#hungry\n")
'''


def test_transport_agent_noise_is_logged_not_acted_on(box):
    sconf(box, """*/* interval=1s retries="1" expiry=1h
smtp command="%s"
error command="STUB error"
""" % script(box, "garbage_ta.py", GARBAGE_TA))
    ids = [gen.add_queued(box.spool, [("smtp", "a.example", "ok%d@a.example" % i)]) for i in range(3)]
    p, err = once(box, timeout=60)
    assert p.returncode == 0, err[-3000:]
    d = sorted(x[2] for x in deliveries(box))
    assert d == sorted(ids), (d, err[-3000:])     # each exactly once: nothing was "lost"
    assert "lost" not in err and "line longer than 8192 bytes dropped" in err, err[-3000:]
    assert not leftovers(box), err[-3000:]


@pytest.fixture
def small_spool(box):
    """The box's spool on a 2 MiB tmpfs of its own (root only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root for mount")
    os.makedirs(box.spool)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs", box.spool], check=True)
    try:
        yield box
    finally:
        subprocess.run(["umount", "-l", box.spool])


def fill(path):
    """Writes path until the filesystem is full."""
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass


def test_full_disk_during_pickup_keeps_the_message_and_retries(small_spool):
    box = small_spool
    sconf(box, BASIC)
    mids = [gen.add_incoming(box.spool, [("smtp", "a.example", "ok%d@a.example" % i)]) for i in range(3)]
    filler = os.path.join(box.spool, "filler")
    fill(filler)
    t0 = time.time()
    p, err = once(box, timeout=30)
    assert time.time() - t0 < 20, err           # no spin, no hang
    assert "No space left on device" in err, err
    assert not deliveries(box), err
    corrupt = os.path.join(box.spool, "corrupt")
    assert not os.path.isdir(corrupt) or not os.listdir(corrupt), err
    for mid in mids:   # each still whole, in incoming/ (or queued with its message file)
        assert (os.path.exists(os.path.join(box.spool, "incoming", mid)) or
                os.path.exists(os.path.join(box.spool, "queue", mid[-1], mid + ".d"))), err
    os.unlink(filler)
    p, err = once(box, "-S")
    assert p.returncode == 0, err
    assert sorted(d[2] for d in deliveries(box)) == sorted(mids), err
    assert not leftovers(box), err


def test_full_disk_while_recording_results_retries_and_loses_nothing(small_spool):
    """The attempt record cannot be appended (ENOSPC): the result is not acted on, the
    message stays queued, and a later run delivers it (at least once, never lost)."""
    box = small_spool
    sconf(box, BASIC)
    # a scheduler that ran before keeps room for its pid, so it starts on the full disk (a
    # first start there refuses: test_sched_broken.py)
    assert once(box)[0].returncode == 0
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")])
    path = ctl_path(box, mid)
    # history up to the end of the control file's page, so the next append needs a new one
    rec = b"A 0 1795246800 deferred delayed 4.4.1 - padding\n"
    with open(path, "ab") as f:
        while f.tell() + len(rec) <= 4096 - 100:
            f.write(rec)
        head = b"A 0 1795246800 deferred delayed 4.4.1 - "
        f.write(head + b"p" * (4096 - f.tell() - len(head) - 1) + b"\n")
    assert os.path.getsize(path) == 4096
    filler = os.path.join(box.spool, "filler")
    fill(filler)
    t0 = time.time()
    p, err = once(box, timeout=30)
    assert time.time() - t0 < 20, err
    assert "No space left on device" in err, err
    assert len(deliveries(box)) == 1, err
    assert os.path.exists(path) and os.path.exists(path[:-1] + "d"), err   # still queued
    os.unlink(filler)
    deadline = time.time() + 30
    while os.path.exists(path) and time.time() < deadline:
        p, err = once(box, env={"SPOOLBOX_TEST_CLOCK": "+120"})
    assert not os.path.exists(path), err
    assert len(deliveries(box)) == 2, err
    assert not leftovers(box), err


def test_trigger_flood_does_not_stall_the_scheduler(box):
    """A writer that never stops writing to the trigger FIFO must not keep the scheduler in its
    read loop: mail is still picked up and delivered."""
    import threading
    sconf(box, BASIC)
    proc = start_daemon(box, env={"STUB_SLOW": "0.01"})
    stop_flag = []

    def flood():
        fd = os.open(os.path.join(box.spool, "trigger"), os.O_WRONLY)
        chunk = b"\n" * 4096
        while not stop_flag:
            try:
                os.write(fd, chunk)
            except BlockingIOError:
                pass
        os.close(fd)

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        mids = [gen.add_incoming(box.spool, [("smtp", "a.example", "ok%d@a.example" % i)]) for i in range(3)]
        deadline = time.time() + 20
        while time.time() < deadline and len(deliveries(box)) < 3:
            time.sleep(0.1)
        got = sorted(d[2] for d in deliveries(box))
    finally:
        stop_flag.append(1)
        for t in threads:
            t.join(5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    assert got == sorted(mids)


def test_trigger_replaced_by_a_regular_file(box):
    """A regular file where the FIFO belongs (an admin's mistake, a restore from a backup) is
    replaced at start: the scheduler runs and new mail still wakes it."""
    sconf(box, BASIC)
    os.makedirs(box.spool, exist_ok=True)
    with open(os.path.join(box.spool, "trigger"), "w") as f:
        f.write("junk\n")
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example")])
    p, err = once(box)
    assert p.returncode == 0, err
    assert [d[2] for d in deliveries(box)] == [mid], err
    import stat
    assert stat.S_ISFIFO(os.stat(os.path.join(box.spool, "trigger")).st_mode)


@pytest.mark.skipif(IS_ASAN, reason="address-space limits and ASan do not mix")
def test_out_of_memory_is_not_damage(box):
    """Under an address-space limit, looser each run, reading a big envelope runs out of memory
    part-way. That must never read as a damaged file: a message in incoming/ is not quarantined
    (it is picked up once memory allows), a queued control file is not rebuilt (its history
    stays), and nothing is removed."""
    sconf(box, BASIC)
    host = "h%04d." + "x" * 200 + ".example"
    rc = [("smtp", host % i, "ok@" + host % i) for i in range(3000)]
    mid = gen.add_queued(box.spool, rc)
    path = ctl_path(box, mid)
    with open(path, "ab") as f:
        f.write(b"A 0 1795246800 deferred delayed 4.4.1 - history\n")
    with open(path, "rb") as f:
        before = f.read()
    new = gen.add_incoming(box.spool, rc)
    corrupt = os.path.join(box.spool, "corrupt")
    picked = False
    for kb in range(1024, 16 * 1024, 256):
        p = subprocess.run(["prlimit", "--as=%d" % (kb << 10), BINARY, "scheduler", "-i", "-1", "-F"],
                           env=box.environ(stub_env(box)), capture_output=True, timeout=60)
        err = p.stderr.decode(errors="replace")[-2000:]
        with open(path, "rb") as f:
            assert f.read() == before, (kb, err)
        assert not os.path.isdir(corrupt) or not os.listdir(corrupt), (kb, err)
        assert os.path.exists(path[:-1] + "d"), (kb, err)
        if os.path.exists(os.path.join(box.spool, "queue", new[-1], new + ".d")):
            picked = True
            break
        assert os.path.exists(os.path.join(box.spool, "incoming", new)), (kb, err)
    assert picked
    assert not deliveries(box)


def test_due_link_that_cannot_move_keeps_the_message_in_memory(box):
    """No inode left for the next attempt's bucket directory: the due link cannot move. The
    message must wait in memory for its time, not be dropped from memory and read back from
    its old (due) link every second, over and over."""
    if os.geteuid() != 0:
        pytest.skip("needs root for mount")
    os.makedirs(box.spool)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,nr_inodes=200,mode=0755", "tmpfs", box.spool], check=True)
    try:
        sconf(box, BASIC)
        mid = gen.add_queued(box.spool, [("smtp", "a.example", "retryat30000@a.example")])
        once(box, "-F")     # makes scheduler.pid and the trigger while there are inodes
        n = 0
        try:
            while True:
                open(os.path.join(box.spool, "tmp", "f%d" % n), "w").close()
                n += 1
        except OSError:
            pass
        proc = start_daemon(box, env={"QUEUELO": "0", "QUEUEHI": "10"})
        time.sleep(4)
        rc, err = stop(box, proc)
        assert ctl(box, mid).rcpts[0].tag == "Q", err
        assert err.count("spoolbox/pickup[") == 0 and err.count("next attempt in") == 1, err
        loads = err.count("mkdir")
        assert 1 <= loads <= 2, err     # tried once (and maybe at the next look), not every second
    finally:
        subprocess.run(["umount", "-l", box.spool])


FLOOD_TA = r'''#!/usr/bin/python3
# A transport agent that answers the start and then writes chatter without end.
import os
os.write(1, b"#hungry\n")
line = b"chatter " * 10000 + b"\n"
while True:
    os.write(1, line)
'''


def test_flooding_transport_agent_does_not_starve_the_others(box):
    sconf(box, """*/* interval=1s retries="1" expiry=1h
flood command="%s"
smtp command="STUB $channel"
error command="STUB error"
""" % script(box, "flood_ta.py", FLOOD_TA))
    gen.add_queued(box.spool, [("flood", "f.example", "x@f.example")])
    proc = start_daemon(box, env={"STUB_SLOW": "0.01"})
    try:
        time.sleep(1)                      # the flood runs
        mid = gen.add_incoming(box.spool, [("smtp", "a.example", "ok@a.example")])
        with open(os.path.join(box.spool, "trigger"), "wb", buffering=0) as t:
            t.write(b"\n")
        deadline = time.time() + 15
        while time.time() < deadline and not deliveries(box):
            time.sleep(0.1)
        got = [d[2] for d in deliveries(box)]
    finally:
        proc.send_signal(signal.SIGKILL)     # the flooder then dies of EPIPE
        proc.wait()
    assert got == [mid]


def test_a_torn_history_record_is_not_damage(box):
    # a full disk tore an A record in the middle of its write; a later append must not turn it
    # into a malformed line that makes the next start rebuild the file (losing the D mark of a
    # delivered recipient, who would then get a second copy)
    sconf(box, BASIC.replace("interval=1s", "interval=1h").replace("expiry=1h", "expiry=30d"))
    mid = gen.add_queued(box.spool, [("smtp", "a.example", "ok@a.example"), ("smtp", "b.example", "defer@b.example")])
    p, err = once(box)
    assert [r.tag for r in ctl(box, mid).rcpts] == ["D", "Q"], err
    path = os.path.join(box.spool, "queue", mid[-1], mid + ".c")
    with open(path, "ab") as f:
        f.write(b"A 1 1795000000 defer")  # no line end: torn in the middle of its fields
    for hours in (2, 4):
        p, err = once(box, env={"SPOOLBOX_TEST_CLOCK": f"+{hours}h"})
        assert p.returncode == 0, err
        assert "rebuilt" not in err and "damaged" not in err, err
    m = ctl(box, mid)
    assert [r.tag for r in m.rcpts] == ["D", "Q"]
    assert all(r.startswith(("A ", "B ", "W ")) for r in m.records), m.records  # no torn line left
    assert [d[4] for d in deliveries(box)].count("ok@a.example") == 1, deliveries(box)
