"""System calls per message (issue 13 point 3), counted by strace -f -c (in this benchmark only:
ptrace slows the processes down but does not change what they call). Three paths, each over its
own fresh spool:
  - submit: 50 sequential `sendmail -i` of a 2 KB message (goal <= 55 each: half of the 110 of
    issue 13);
  - drain: 500 queued messages relayed by `scheduler -i -1` and its smtp agents to a minimal SMTP
    sink (goal <= 35 each; the scheduler and every agent are counted);
  - local: 500 queued messages delivered into one mbox by `scheduler -i -1` and local.
Prints the calls per message as a ratio to its goal (the drain and local split into the
scheduler's and the agents') and the five most frequent calls of each path. Never asserted."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rawsink import RawSink  # noqa: E402

SIZE = 2048
N_SUBMIT = 50
N_DRAIN = 500


def message():
    head = b"From: bench@example.org\nTo: sink@example.com\nSubject: syscalls\n\n"
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n"
    return head + (line * (SIZE // len(line) + 1))[: SIZE - len(head)]


def traced(cmd, env, out, stdin=None):
    """Runs cmd under strace -f -c; returns {syscall: calls}."""
    subprocess.run(["strace", "-f", "-c", "-U", "calls,name", "-o", out] + cmd, env=env, stdin=stdin,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    calls = {}
    with open(out) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[0].isdigit() and parts[1] != "total":
                calls[parts[1]] = calls.get(parts[1], 0) + int(parts[0])
    return calls


def traced_split(cmd, env, out):
    """Runs cmd under strace -f (a full trace); returns ({syscall: calls}, calls of the first
    process, calls of all the others): the scheduler and its agents apart."""
    subprocess.run(["strace", "-f", "-qq", "-o", out] + cmd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=600)
    calls, first, mine, others = {}, None, 0, 0
    with open(out) as f:
        for line in f:
            pid, _, body = line.partition(" ")
            body = body.lstrip()
            if body.startswith(("<...", "+++", "---")) or "(" not in body:
                continue
            name = body.split("(", 1)[0]
            calls[name] = calls.get(name, 0) + 1
            first = first or pid
            if pid == first:
                mine += 1
            else:
                others += 1
    return calls, mine, others


def show(what, calls, n, goal):
    total = sum(calls.values())
    top = ", ".join(f"{k} {v / n:.1f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])[:5])
    goal_s = f" = {total / n / goal:.2f} x the goal of {goal}" if goal else ""
    print(f"{what:28} {total / n:7.1f} system calls per message{goal_s}; most: {top}")


def env_for(base, extra):
    e = {"SPOOL": os.path.join(base, "spool"), "MYHOSTNAME": "bench.example", "LOG": "syslog",
         "PATH": "/usr/bin:/bin", "SCHEDULER_CONF": os.path.join(base, "none.conf"),
         "MBOX_DIR": os.path.join(base, "mail")}
    os.makedirs(e["MBOX_DIR"], exist_ok=True)
    e.update(extra)
    return e


def fill(binary, env, rcpt, n):
    msg = message()
    for _ in range(n):
        subprocess.run([binary, "submit", "-i", "-f", "bench@example.org", rcpt], input=msg, env=env, check=True)


def run(binary):
    if not shutil.which("strace"):
        print("system calls: skipped (no strace)")
        return
    base = tempfile.mkdtemp(prefix="bench-sys-", dir=os.environ.get("BENCH_DIR", "/var/tmp"))
    sink = RawSink()
    try:
        # submit
        b = os.path.join(base, "submit")
        env = env_for(b, {})
        fill(binary, env, "root", 1)  # the spool exists: steady state
        msgfile = os.path.join(base, "msg")
        with open(msgfile, "wb") as f:
            f.write(message())
        total = {}
        for i in range(N_SUBMIT):
            with open(msgfile, "rb") as f:
                c = traced([binary, "submit", "-i", "root"], env, os.path.join(base, "st%d" % i), stdin=f)
            for k, v in c.items():
                total[k] = total.get(k, 0) + v
        show("submit", total, N_SUBMIT, 55)  # issue 13 point 5: half of the 110 it started from
        # drain to the sink
        b = os.path.join(base, "drain")
        env = env_for(b, {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "SMTP_IDLE": "30s"})
        fill(binary, env, "sink@example.com", N_DRAIN)
        before = sink.count
        c, sched, agents = traced_split([binary, "scheduler", "-i", "-1"], env, os.path.join(base, "sd"))
        got = sink.count - before
        show(f"drain to a sink ({got}/{N_DRAIN})", c, N_DRAIN, 35)
        print(f"{'':28}   of which the scheduler {sched / N_DRAIN:.1f}, the smtp agents {agents / N_DRAIN:.1f}")
        # local delivery into one mbox
        b = os.path.join(base, "local")
        env = env_for(b, {})
        fill(binary, env, "root", N_DRAIN)
        c, sched, agents = traced_split([binary, "scheduler", "-i", "-1"], env, os.path.join(base, "sl"))
        show("local delivery (mbox)", c, N_DRAIN, None)
        print(f"{'':28}   of which the scheduler {sched / N_DRAIN:.1f}, the local agent and its delivery "
              f"processes {agents / N_DRAIN:.1f}")
    finally:
        sink.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    run(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "spoolbox"))
