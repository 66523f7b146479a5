"""Sequential submission speed: 1000 messages of 2 KB through `sendmail -i root`, spawned with
posix_spawn (a shell loop would be the bottleneck), next to the raw durable-enqueue loop (create,
write 2 KB, fsync, rename, fsync the directory) on the same filesystem in the same run. The two
alternate in rounds of 100, so that a disk whose speed drifts during the run (a shared virtual
disk does) weighs on both alike. Prints both in messages per second and their ratio
(goal: >= 0.8)."""
import os
import shutil
import tempfile
import time

N = 1000
ROUND = 100
SIZE = 2048


def message():
    head = b"From: bench@example.org\nTo: root\nSubject: bench\n\n"
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n"
    body = (line * (SIZE // len(line) + 1))[: SIZE - len(head)]
    return head + body


class Raw:
    """What any durable enqueue must do at least: two fsyncs per message."""

    def __init__(self, base, data):
        self.tmp, self.inc = os.path.join(base, "tmp"), os.path.join(base, "incoming")
        os.makedirs(self.tmp)
        os.makedirs(self.inc)
        self.dfd = os.open(self.inc, os.O_RDONLY | os.O_DIRECTORY)
        self.data = data
        self.n = 0

    def one(self):
        self.n += 1
        p = os.path.join(self.tmp, str(self.n))
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
        os.write(fd, self.data)
        os.fsync(fd)
        os.close(fd)
        os.rename(p, os.path.join(self.inc, str(self.n)))
        os.fsync(self.dfd)

    def close(self):
        os.close(self.dfd)


class Submit:
    def __init__(self, binary, base, data):
        self.binary = binary
        self.spool = os.path.join(base, "spool")
        self.msgfile = os.path.join(base, "msg")
        with open(self.msgfile, "wb") as f:
            f.write(data)
        self.env = {"SPOOL": self.spool, "MYHOSTNAME": "bench.example", "LOG": "syslog", "PATH": "/usr/bin:/bin"}
        self.one()  # creates the spool

    def one(self):
        fd = os.open(self.msgfile, os.O_RDONLY)
        pid = os.posix_spawn(self.binary, ["sendmail", "-i", "root"], self.env,
                             file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0)])
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"submit exited {os.waitstatus_to_exitcode(status)}")

    def check(self, expected):
        queued = len(os.listdir(os.path.join(self.spool, "incoming")))
        if queued != expected:
            raise RuntimeError(f"{queued} messages queued, expected {expected}")


def timed(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return time.perf_counter() - t0


def run(binary):
    root = os.environ.get("BENCH_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")
    os.makedirs(root, exist_ok=True)
    base = tempfile.mkdtemp(prefix="bench-submit-", dir=root)
    try:
        data = message()
        raw = Raw(os.path.join(base, "raw"), data)
        sub = Submit(binary, base, data)
        t_raw = t_sub = 0.0
        for _ in range(N // ROUND):
            t_raw += timed(raw.one, ROUND)
            t_sub += timed(sub.one, ROUND)
        raw.close()
        sub.check(N + 1)
        r, s = N / t_raw, N / t_sub
        print(f"submit: {N} sequential messages of {SIZE} bytes, in {os.path.realpath(base)}")
        print(f"  raw durable-enqueue loop: {r:8.0f} msgs/s")
        print(f"  spoolbox sendmail -i:     {s:8.0f} msgs/s")
        print(f"  ratio submit/raw:         {s / r:8.2f}   (goal >= 0.80)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
