"""mailq figures for `make bench` (tests/bench/bench.py calls run(binary)): listing a spool of
100 000 queued messages in the Postfix format, --json and -s, each timed against reading the
same control files with cat (the bytes mailq cannot avoid reading) in the same run, and peak
RSS (the process's VmHWM) against a listing of 1 000 messages (a streamed listing needs the
same memory for both).
The spool is written straight in its documented format, on /dev/shm when there is one.
Printed, never asserted."""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import sched_gen as gen  # noqa: E402


def hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def timed(cmd, env, cwd=None):
    """(seconds, peak RSS KiB, bytes of output) of one run of cmd. The peak is the process's
    own VmHWM, sampled until it exits (wait4's ru_maxrss would count the memory of the Python
    process it was forked from)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = [0]

    def drain():
        while True:
            b = p.stdout.read(1 << 16)
            if not b:
                return
            out[0] += len(b)
    t = threading.Thread(target=drain)
    t.start()
    peak = 0
    while p.poll() is None:
        peak = max(peak, hwm_kib(p.pid))
        time.sleep(0.0005)
    secs = time.time() - t0
    t.join()
    return secs, peak, out[0]


def fill(spool, n, start=0):
    now = int(time.time())
    for i in range(start, n):
        gen.add_queued(spool, [("smtp", "h%d.example" % (i % 100), "user%d@h%d.example" % (i, i % 100)),
                               ("local", "-", "root")], arrival=now - i)


def run(binary, n=100000):
    root = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    base = tempfile.mkdtemp(prefix="bench-mailq-", dir=root)
    try:
        spool = os.path.join(base, "spool")
        env = dict(os.environ, SPOOL=spool, LOG="stderr", MYHOSTNAME="bench.example")
        fill(spool, 1000)
        _, rss_small, _ = timed([binary, "mailq"], env)
        t0 = time.time()
        fill(spool, n, 1000)
        made = time.time() - t0
        ref, _, _ = timed(["sh", "-c", "find queue -name '*.c' -exec cat {} +"], env, cwd=spool)
        print(f"mailq: {n} queued messages written in {made:.1f}s; cat of their control files: {ref:.2f}s")
        for args in ([], ["--json"], ["-s"]):
            secs, rss, out = timed([binary, "mailq"] + args, env)
            name = " ".join(["mailq"] + args)
            print(f"{name}: {n} messages in {secs:.2f}s ({secs / n * 1e6:.1f} us/message, {secs / ref:.2f}x the "
                  f"cat), {out / 1e6:.1f} MB out; peak RSS {rss} KiB ({rss / rss_small:.2f}x a listing of 1000)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
