"""Scheduler figures for `make bench` (tests/bench/bench.py calls run(binary)):
  - idle RSS of a running scheduler on an empty spool (goal: <= 256 KiB);
  - with 100 000 queued messages: time from start to the first delivery (goal: < 1 s) and the
    RSS while it drains (goal: <= 8 MiB), with the stub transport agent of the tests;
  - end to end through our own local transport: messages/s for 1000 queued local messages;
  - a whole backlog (issue 13 point 1): 1 000 and then 20 000 deferred messages, a running
    scheduler with the default QUEUEHI, `sendmail -q`, our smtp agent into a minimal SMTP sink:
    messages/s from the -q to the last one received, and the scheduler's peak RSS (goal: the
    20 000 rate within 20 % of the 1 000 rate). This one runs on the disk (BENCH_DIR, default
    /var/tmp), as a real backlog does;
  - a mailing of 50 000 recipients (five control files of 10 000) through the stub agent with
    PARAMmessage_recipient_limit and recipient_limit at Postfix's 20 000 and at 2 000, and one of
    200 000 (issue 14 point 5): the scheduler's peak RSS, the most recipients it held in memory
    with the seed's bound, and the time.
The queue is written straight into the spool in its documented format (fast), on /dev/shm when
there is one, so the figures are the scheduler's and not the disk's. Printed, never asserted."""
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import sched_gen as gen  # noqa: E402

STUB = os.path.join(HERE, "..", "integration", "sched_stub_ta.py")


def rss_kib(pid, key="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def env_for(base, extra=None):
    env = dict(os.environ)
    env.update({"SPOOL": os.path.join(base, "spool"), "LOG": "stderr", "MYHOSTNAME": "bench.example",
                "SCHEDULER_CONF": os.path.join(base, "scheduler.conf"), "STUB_LOG": os.path.join(base, "stub.log"),
                "MBOX_DIR": os.path.join(base, "mail"), "ALIASES": os.path.join(base, "aliases")})
    env.update(extra or {})
    return env


def workdir():
    root = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.mkdtemp(prefix="bench-sched-", dir=root)


@contextlib.contextmanager
def workspace():
    """A scratch directory (in RAM where possible), removed afterwards."""
    base = workdir()
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def idle_rss(binary):
    with workspace() as base:
        p = subprocess.Popen([binary, "scheduler", "-i"], env=env_for(base), stderr=subprocess.DEVNULL)
        time.sleep(0.7)
        rss, anon = rss_kib(p.pid), rss_kib(p.pid, "RssAnon")
        p.terminate()
        p.wait(timeout=10)
        print(f"scheduler idle RSS: {rss} KiB (goal <= 256 KiB: {rss / 256:.2f} of the budget); of it "
              f"{anon} KiB private (heap, stack, data) and {rss - anon} KiB the binary's text, shared "
              f"with every other spoolbox process")


def first_delivery(binary, n=100000):
    with workspace() as base:
        spool = os.path.join(base, "spool")
        t0 = time.time()
        for i in range(n):
            gen.add_queued(spool, [("smtp", "h%d.example" % (i % 100), "ok%d@h%d.example" % (i, i % 100))])
        made = time.time() - t0
        with open(os.path.join(base, "scheduler.conf"), "w") as f:
            f.write('*/* interval=1m retries="1" expiry=1d\nsmtp command="%s" maxchannel=8\n' % STUB)
        log = os.path.join(base, "stub.log")
        start = time.time()
        p = subprocess.Popen([binary, "scheduler", "-i"], env=env_for(base), stderr=subprocess.DEVNULL)
        first = None
        peak = 0
        while time.time() - start < 30:
            peak = max(peak, rss_kib(p.pid))
            if first is None and os.path.exists(log):
                with open(log) as f:
                    for line in f:
                        if line.startswith("deliver"):
                            first = time.time() - start
                            break
            if first is not None and time.time() - start > first + 5:
                break
            time.sleep(0.01)
        drained = 0
        if os.path.exists(log):
            with open(log) as f:
                drained = sum(1 for line in f if line.startswith("deliver"))
        elapsed = time.time() - start
        p.terminate()
        p.wait(timeout=30)
        print(f"{n} queued (written in {made:.1f} s): first delivery {first if first is None else round(first, 3)} s "
              f"after start (goal < 1 s); peak RSS {peak} KiB over {elapsed:.1f} s of draining "
              f"(goal <= 8192 KiB: {peak / 8192:.2f} of it); {drained / elapsed:.0f} msgs/s with the Python stub TA")


def local_end_to_end(binary, n=1000):
    with workspace() as base:
        spool = os.path.join(base, "spool")
        os.makedirs(os.path.join(base, "mail"))
        user = os.environ.get("USER") or "root"
        with open(os.path.join(base, "aliases"), "w") as f:
            f.write("")
        for i in range(n):
            gen.add_queued(spool, [("local", "-", user)])
        t0 = time.time()
        p = subprocess.run([binary, "scheduler", "-i", "-1"], env=env_for(base), capture_output=True, timeout=600)
        dt = time.time() - t0
        left = sum(len(fs) for _, _, fs in os.walk(os.path.join(spool, "queue")))
        if p.returncode != 0 or left:
            print(f"local end to end: scheduler exited {p.returncode}, {left} files left "
                  f"(the local transport may not be usable here): {p.stderr.decode(errors='replace')[-300:]}")
            return
        print(f"end to end, {n} messages through the local transport into an mbox: {n / dt:.0f} msgs/s "
              f"(goal >= 1000 msgs/s for local delivery: {n / dt / 1000:.2f} of it)")


def backlog_once(binary, n):
    """n deferred messages (due in an hour) drained by one `sendmail -q`: (msgs/s, peak KiB)."""
    from rawsink import RawSink
    base = tempfile.mkdtemp(prefix="bench-backlog-", dir=os.environ.get("BENCH_DIR", "/var/tmp"))
    sink = RawSink()
    p = None
    try:
        spool = os.path.join(base, "spool")
        later = int(time.time()) + 3600
        body = b"Subject: backlog\n\n" + b"x" * 1000 + b"\n"
        for i in range(n):
            gen.add_queued(spool, [("smtp", "example.com", "sink%d@example.com" % i)], body=body, due=later)
        env = env_for(base, {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "30s"})
        env.pop("SCHEDULER_CONF")  # the built-in scheduler.conf, default QUEUEHI
        p = subprocess.Popen([binary, "scheduler", "-i"], env=env, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while not os.path.exists(os.path.join(spool, "scheduler.pid")) and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        t0 = time.time()
        subprocess.run([binary, "submit", "-q"], env=env, check=True, capture_output=True)
        deadline = t0 + 300
        while sink.count < n and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        dt = time.time() - t0
        return sink.count, dt, rss_kib(p.pid, "VmHWM")  # the kernel's peak resident size
    finally:
        if p and p.poll() is None:
            p.terminate()
            p.wait(timeout=60)
        sink.stop()
        shutil.rmtree(base, ignore_errors=True)


def backlog(binary):
    rates = {}
    for n in (1000, 20000):
        got, dt, peak = backlog_once(binary, n)
        rates[n] = got / dt
        print(f"backlog of {n:5} deferred messages, one sendmail -q (default QUEUEHI), smtp to a sink: "
              f"{got}/{n} in {dt:.1f} s = {got / dt:5.0f} msgs/s, scheduler peak RSS {peak} KiB")
    print(f"backlog rate 20 000 / 1 000: {rates[20000] / rates[1000]:.2f} (goal >= 0.80)")


def big_mailing_once(binary, limit, files=5):
    """files x 10 000 recipients (50 hosts), one-shot, message_recipient_limit and the smtp clause's
    recipient_limit at limit: (seconds, peak KiB, delivered, (most in memory, bound))."""
    import re
    with workspace() as base:
        spool = os.path.join(base, "spool")
        for k in range(files):
            gen.add_queued(spool, [("smtp", "h%d.example" % (i % 50), "ok%d.%d@h%d.example" % (k, i, i % 50))
                                   for i in range(10000)])
        with open(os.path.join(base, "scheduler.conf"), "w") as f:
            f.write('PARAMmessage_recipient_limit = %d\n*/* interval=1m\nsmtp recipient_limit=%d command="%s"\n'
                    % (limit, limit, STUB))
        err = open(os.path.join(base, "sched.err"), "w+b")
        t0 = time.time()
        p = subprocess.Popen([binary, "scheduler", "-i", "-1"], env=env_for(base), stderr=err)
        peak = 0
        while p.poll() is None:
            peak = max(peak, rss_kib(p.pid, "VmHWM"))  # the kernel's peak, read until the exit
            time.sleep(0.02)
        dt = time.time() - t0
        err.seek(0)
        m = re.search(rb"recipients in memory: at most (\d+) \(message_recipient_limit \d+, bound (\d+)\)", err.read())
        with open(os.path.join(base, "stub.log")) as f:
            got = sum(1 for line in f if line.startswith("deliver"))
        return dt, peak, got, (int(m.group(1)), int(m.group(2))) if m else (None, None)


def big_mailing(binary):
    for files, limit in ((5, 20000), (5, 2000), (20, 20000)):
        dt, peak, got, (most, bound) = big_mailing_once(binary, limit, files)
        print(f"mailing of {files * 10000} recipients ({files} control files, 50 hosts), message_recipient_limit "
              f"and recipient_limit {limit}: {got} delivered in {dt:.1f} s, at most {most} recipients in memory "
              f"(the seed's bound {bound}), scheduler peak RSS {peak} KiB")


def run(binary):
    idle_rss(binary)
    big_mailing(binary)
    first_delivery(binary)
    local_end_to_end(binary)
    backlog(binary)


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "spoolbox"))
