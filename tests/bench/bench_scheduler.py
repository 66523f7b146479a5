"""Scheduler figures for `make bench` (tests/bench/bench.py calls run(binary)):
  - idle RSS of a running scheduler on an empty spool (goal: <= 256 KiB);
  - with 100 000 queued messages: time from start to the first delivery (goal: < 1 s) and the
    RSS while it drains (goal: <= 8 MiB), with the stub transport agent of the tests;
  - end to end through our own local transport: messages/s for 1000 queued local messages.
The queue is written straight into the spool in its documented format (fast), on /dev/shm when
there is one, so the figures are the scheduler's and not the disk's. Printed, never asserted."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
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


def idle_rss(binary):
    base = workdir()
    try:
        p = subprocess.Popen([binary, "scheduler", "-i"], env=env_for(base), stderr=subprocess.DEVNULL)
        time.sleep(0.7)
        rss, anon = rss_kib(p.pid), rss_kib(p.pid, "RssAnon")
        p.terminate()
        p.wait(timeout=10)
        print(f"scheduler idle RSS: {rss} KiB (goal <= 256 KiB: {rss / 256:.2f} of the budget); of it "
              f"{anon} KiB private (heap, stack, data) and {rss - anon} KiB the binary's text, shared "
              f"with every other spoolbox process")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def first_delivery(binary, n=100000):
    base = workdir()
    try:
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
    finally:
        shutil.rmtree(base, ignore_errors=True)


def local_end_to_end(binary, n=1000):
    base = workdir()
    try:
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
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run(binary):
    idle_rss(binary)
    first_delivery(binary)
    local_end_to_end(binary)


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "spoolbox"))
