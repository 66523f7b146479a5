"""Sequential submission speed: 1000 messages of 2 KB through `sendmail -i root`, spawned with
posix_spawn (a shell loop would be the bottleneck), next to the raw durable-enqueue loop (create,
write 2 KB, fsync, rename, fsync the directory) on the same filesystem in the same run. Prints
both in messages per second and their ratio (goal: >= 0.8)."""
import os
import shutil
import tempfile
import time

N = 1000
SIZE = 2048


def message():
    head = b"From: bench@example.org\nTo: root\nSubject: bench\n\n"
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n"
    body = (line * (SIZE // len(line) + 1))[: SIZE - len(head)]
    return head + body


def raw_loop(base, data):
    tmp, inc = os.path.join(base, "tmp"), os.path.join(base, "incoming")
    os.makedirs(tmp)
    os.makedirs(inc)
    dfd = os.open(inc, os.O_RDONLY | os.O_DIRECTORY)
    t0 = time.perf_counter()
    for i in range(N):
        p = os.path.join(tmp, str(i))
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        os.rename(p, os.path.join(inc, str(i)))
        os.fsync(dfd)
    dt = time.perf_counter() - t0
    os.close(dfd)
    return N / dt


def submit_loop(binary, base, data):
    spool = os.path.join(base, "spool")
    msgfile = os.path.join(base, "msg")
    with open(msgfile, "wb") as f:
        f.write(data)
    env = {"SPOOL": spool, "MYHOSTNAME": "bench.example", "LOG": "syslog", "PATH": "/usr/bin:/bin"}
    argv = ["sendmail", "-i", "root"]

    def one():
        fd = os.open(msgfile, os.O_RDONLY)
        pid = os.posix_spawn(binary, argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0)])
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"submit exited {os.waitstatus_to_exitcode(status)}")

    one()  # creates the spool
    t0 = time.perf_counter()
    for _ in range(N):
        one()
    dt = time.perf_counter() - t0
    queued = len(os.listdir(os.path.join(spool, "incoming")))
    if queued != N + 1:
        raise RuntimeError(f"{queued} messages queued, expected {N + 1}")
    return N / dt


def run(binary):
    root = os.environ.get("BENCH_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build")
    os.makedirs(root, exist_ok=True)
    base = tempfile.mkdtemp(prefix="bench-submit-", dir=root)
    try:
        data = message()
        fs = os.statvfs(base)
        raw = raw_loop(os.path.join(base, "raw"), data)
        sub = submit_loop(binary, base, data)
        raw2 = raw_loop(os.path.join(base, "raw2"), data)  # again, so disk drift shows
        ref = (raw + raw2) / 2
        print(f"submit: {N} sequential messages of {SIZE} bytes in {os.path.realpath(base)} (fs block {fs.f_frsize})")
        print(f"  raw durable-enqueue loop: {raw:8.0f} msgs/s (before) {raw2:8.0f} msgs/s (after)")
        print(f"  spoolbox sendmail -i:     {sub:8.0f} msgs/s")
        print(f"  ratio submit/raw:         {sub / ref:8.2f}   (goal >= 0.80)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
