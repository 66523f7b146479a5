"""Local delivery speed: messages per second into an mbox and a Maildir.

Three figures, each printed beside the physical limit measured in the same run (an append of
the same size plus fsync, in a loop, on the same file system):
  - the agent alone: N queued messages fed to one `spoolbox local` over its protocol pipe;
  - end to end: N `sendmail` submissions to root with the scheduler running, until the mailbox
    holds them all (skipped, with a note, while submit or the scheduler cannot do it).
Run by tests/bench/bench.py (make bench), or alone: python3 tests/bench/bench_local.py BINARY."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

N = int(os.environ.get("BENCH_LOCAL_N", "500"))
BODY = b"Subject: bench\n\n" + (b"x" * 76 + b"\n") * 26  # about 2 KB


def fsync_loop(path, n, size):
    """The physical limit: append `size` bytes and fsync, n times."""
    data = b"y" * size
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    t0 = time.perf_counter()
    for _ in range(n):
        os.write(fd, data)
        os.fsync(fd)
    dt = time.perf_counter() - t0
    os.close(fd)
    os.unlink(path)
    return n / dt


def agent_alone(binary, base, style):
    import conftest
    conftest.BINARY = binary
    import test_local
    test_local.BINARY = binary
    from conftest import Box
    box = Box(base)
    env = {"MAILBOX_STYLE": style, "MAILDIR": os.path.join(base, "md", "%u")}
    ids = [test_local.queue_message(box, ["root"], BODY) for _ in range(N)]
    ta = test_local.TA(box, env)
    t0 = time.perf_counter()
    for mid in ids:
        r = ta.job(mid)
        assert r and r[0].status == "ok", r
    dt = time.perf_counter() - t0
    ta.close()
    return N / dt


def end_to_end(binary, base):
    """submit → scheduler → local → mbox. Returns msgs/s, or a reason it could not run."""
    spool = os.path.join(base, "e2e-spool")
    mail = os.path.join(base, "e2e-mail")
    os.makedirs(mail)
    env = dict(os.environ, SPOOL=spool, MBOX_DIR=mail, MYHOSTNAME="bench.example", LOG="stderr",
               ALIASES=os.path.join(base, "none"), SCHEDULER_CONF=os.path.join(base, "none.conf"))
    p = subprocess.run([binary, "submit", "--help"], capture_output=True, env=env)
    if p.returncode != 0:
        return "submit is not written yet"
    log = open(os.path.join(base, "e2e.log"), "wb")
    sched = subprocess.Popen([binary, "scheduler", "-i"], env=env, stdout=log, stderr=log)
    try:
        time.sleep(0.3)
        if sched.poll() is not None:
            return "the scheduler did not start (see its log)"
        mbox = os.path.join(mail, "root")
        t0 = time.perf_counter()
        for _ in range(N):
            r = subprocess.run([binary, "submit", "-i", "root"], input=BODY, env=env, capture_output=True)
            if r.returncode != 0:
                return "submit failed: " + r.stderr.decode(errors="replace")[:200]
        deadline = time.time() + 120
        while time.time() < deadline:
            if os.path.exists(mbox) and open(mbox, "rb").read().count(b"\nSubject: bench\n") >= N:
                break
            time.sleep(0.02)
        else:
            return "the mailbox did not receive every message within 120 s"
        return N / (time.perf_counter() - t0)
    finally:
        sched.terminate()
        try:
            sched.wait(10)
        except subprocess.TimeoutExpired:
            sched.kill()
        log.close()


def run(binary):
    base = tempfile.mkdtemp(prefix="spoolbox-bench-local-")
    try:
        limit = fsync_loop(os.path.join(base, "fsync-test"), N, len(BODY) + 120)
        print(f"local: append+fsync loop (the limit here)      {limit:8.0f} ops/s")
        for style in ("mbox", "maildir"):
            rate = agent_alone(binary, os.path.join(base, style), style)
            print(f"local: agent alone, {style:8s} ({N} msgs)         {rate:8.0f} msgs/s  "
                  f"= {rate / limit:.2f} x the fsync loop  (dma: ~220 msgs/s into mbox)")
        r = end_to_end(binary, base)
        if isinstance(r, str):
            print(f"local: end to end (submit -> mailbox): skipped: {r}")
        else:
            print(f"local: end to end, submit -> scheduler -> mbox {r:8.0f} msgs/s  "
                  f"= {r / limit:.2f} x the fsync loop")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    run(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "spoolbox"))
