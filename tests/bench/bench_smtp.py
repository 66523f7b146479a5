"""Relaying to a local SMTP sink: 1000 queued messages of 2 KB sent through the smtp transport
to an aiosmtpd sink on 127.0.0.1 (the SMARTHOST). Prints messages per second, the connections
the sink saw, and the transport's CPU time, next to the reference measured in the same run: the
same 1000 messages pushed by Python's smtplib over one connection to the same sink (what the
sink itself can take). Two ways, when both exist:
  - through the scheduler (submit + scheduler + its smtp agents), the real path;
  - one smtp agent fed directly over its pipes (the agent alone, no scheduler).
Then (issue 13 point 2) the same messages drained through the scheduler to a raw sink
(rawsink.py) with the destination's concurrency fixed at 1, 2, 4 and 8 agents
(initial_destination_concurrency = destination_concurrency_limit = N in scheduler.conf).
Figures are printed, never asserted."""
import os
import resource
import shutil
import smtplib
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from smtpsink import SmtpSink  # noqa: E402
from ta_driver import Queue  # noqa: E402

N = 1000
SIZE = 2048


def message(i):
    head = b"From: bench@example.org\nTo: sink@example.com\nSubject: bench %d\n\n" % i
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n"
    return head + (line * (SIZE // len(line) + 1))[: SIZE - len(head)]


def reference(sink):
    """smtplib over one connection: the sink's own ceiling."""
    before = len(sink.messages)
    t0 = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", sink.port) as c:
        for i in range(N):
            c.sendmail("bench@example.org", ["sink@example.com"], message(i).replace(b"\n", b"\r\n"))
    dt = time.perf_counter() - t0
    assert len(sink.messages) - before == N
    return N / dt


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def agent_alone(binary, base, sink):
    """One smtp agent, jobs written to its stdin as the scheduler would."""
    spool = os.path.join(base, "spool-ta")
    q = Queue(spool)
    ids = [q.add("bench@example.org", ["sink@example.com"], message(i)) for i in range(N)]
    env = {"SPOOL": spool, "MYHOSTNAME": "bench.example", "LOG": "syslog", "PATH": "/usr/bin:/bin",
           "SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "30s"}
    cpu0 = cpu_children()
    # its log lines (stderr when there is no /dev/log) are not the bench's output
    p = subprocess.Popen([binary, "smtp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=env)
    for mid in ids:
        q.mark(mid, p.pid)
    conns0, got0 = sink.connections, len(sink.messages)
    assert p.stdout.readline() == b"#hungry\n"
    t0 = time.perf_counter()
    ok = 0
    for mid in ids:
        p.stdin.write(b"%s\texample.com\n" % mid.encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line or line == b"#hungry\n":
                break
            ok += b"\tok" in line
    dt = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    return ok, N / dt, sink.connections - conns0, len(sink.messages) - got0, cpu_children() - cpu0


def scheduler_available(binary):
    # --list, not --help: a build without usage texts (the default since 2026-11-27) has no
    # synopsis to look in
    p = subprocess.run([binary, "--list"], capture_output=True)
    return p.returncode == 0 and b"scheduler" in p.stdout.split()


def through_scheduler(binary, base, sink):
    spool = os.path.join(base, "spool-sched")
    env = {"SPOOL": spool, "MYHOSTNAME": "bench.example", "LOG": "syslog", "PATH": "/usr/bin:/bin",
           "SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "30s",
           "SCHEDULER_CONF": os.path.join(base, "none.conf")}
    msgfile = os.path.join(base, "msg")
    for i in range(N):
        with open(msgfile, "wb") as f:
            f.write(message(i))
        with open(msgfile, "rb") as f:
            subprocess.run([binary, "submit", "-i", "-f", "bench@example.org", "sink@example.com"], stdin=f,
                           env=env, check=True)
    conns0, got0 = sink.connections, len(sink.messages)
    cpu0 = cpu_children()
    t0 = time.perf_counter()
    # -i: in the foreground (a daemon would escape terminate() below)
    s = subprocess.Popen([binary, "scheduler", "-i"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = t0 + 120
    while len(sink.messages) - got0 < N and time.perf_counter() < deadline and s.poll() is None:
        time.sleep(0.005)
    dt = time.perf_counter() - t0
    got = len(sink.messages) - got0
    s.terminate()
    s.wait(10)
    return got, (got / dt if dt else 0), sink.connections - conns0, cpu_children() - cpu0


CONC_CONF = """*/*
	interval=1m expiry=3d retries="1 1 2 3 5 8 13 21 34" maxta=0
local/*
	interval=10s maxchannel=2 maxthr=1 command=local
error
	command=errormail
smtp
	maxchannel=%(n)d maxring=%(n)d initial_destination_concurrency=%(n)d destination_concurrency_limit=%(n)d command=smtp
"""


def drain_with_concurrency(binary, base, n):
    """N queued messages drained by the scheduler to a raw sink with n agents."""
    from rawsink import RawSink
    sink = RawSink()
    spool = os.path.join(base, "spool-conc-%d" % n)
    conf = os.path.join(base, "conc-%d.conf" % n)
    with open(conf, "w") as f:
        f.write(CONC_CONF % {"n": n})
    # LOG=stderr (to /dev/null): a syslog daemon that falls behind after the first run would
    # block the later ones in send() and measure itself
    env = {"SPOOL": spool, "MYHOSTNAME": "bench.example", "LOG": "stderr", "PATH": "/usr/bin:/bin",
           "SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "30s", "SCHEDULER_CONF": conf}
    msgfile = os.path.join(base, "msg")
    try:
        for i in range(N):
            with open(msgfile, "wb") as f:
                f.write(message(i))
            with open(msgfile, "rb") as f:
                subprocess.run([binary, "submit", "-i", "-f", "bench@example.org", "sink@example.com"], stdin=f,
                               env=env, check=True, stderr=subprocess.DEVNULL)
        t0 = time.perf_counter()
        s = subprocess.Popen([binary, "scheduler", "-i"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = t0 + 120
        while sink.count < N and time.perf_counter() < deadline and s.poll() is None:
            time.sleep(0.002)
        dt = time.perf_counter() - t0
        got = sink.count
        s.terminate()
        s.wait(10)
        return got, (got / dt if dt else 0), sink.connections
    finally:
        sink.stop()
        shutil.rmtree(spool, ignore_errors=True)


def by_concurrency(binary, base):
    where = tempfile.mkdtemp(prefix="bench-conc-", dir="/dev/shm") if os.path.isdir("/dev/shm") else base
    try:
        one = None
        for n in (1, 2, 4, 8):
            got, rate, conns = drain_with_concurrency(binary, where, n)
            one = one or rate
            print(f"drain to a raw sink, destination concurrency {n}: {got}/{N} relayed, {rate:8.0f} msgs/s "
                  f"({rate / one:.2f} x concurrency 1), {conns} connection(s), spool on "
                  f"{'tmpfs' if where != base else 'disk'}", flush=True)
    finally:
        if where != base:
            shutil.rmtree(where, ignore_errors=True)


def run(binary):
    base = tempfile.mkdtemp(prefix="bench-smtp-")
    sink = SmtpSink().start()
    try:
        ref = reference(sink)
        print(f"reference: Python smtplib, one connection, same sink: {ref:8.0f} msgs/s")
        if scheduler_available(binary):
            # The spool on this disk, then on tmpfs: the difference is the cost of the fsyncs.
            places = [("disk", base)]
            if os.path.isdir("/dev/shm"):
                places.append(("tmpfs", tempfile.mkdtemp(prefix="bench-smtp-", dir="/dev/shm")))
            for what, where in places:
                try:
                    got, rate, conns, cpu = through_scheduler(binary, where, sink)
                finally:
                    if where != base:
                        shutil.rmtree(where, ignore_errors=True)
                print(f"scheduler + smtp agents, spool on {what:5}: {got}/{N} relayed, {rate:8.0f} msgs/s "
                      f"({rate / ref:.2f} x reference), {conns} connection(s), {cpu:.2f} s CPU")
        else:
            print("scheduler + smtp agents: skipped (the scheduler applet is not in this build)")
        ok, rate, conns, got, cpu = agent_alone(binary, base, sink)
        print(f"smtp agent alone (spool on disk):          {ok}/{N} ok, {got} received, {rate:8.0f} msgs/s "
              f"({rate / ref:.2f} x reference), {conns} connection(s), {cpu:.2f} s CPU")
        if scheduler_available(binary):
            by_concurrency(binary, base)
    finally:
        sink.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    run(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "spoolbox"))
