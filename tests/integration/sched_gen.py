"""Writes messages straight into a spool in the format of docs/spool.md (the envelope block of
section 3), for scheduler tests and the bench: into incoming/ (as submit would leave them, E3) or
fully queued (P3: queue/<h>/<id>.d and .c plus the due link), which is how 100 000 messages are
made in seconds."""
import os
import time

from spoolfmt import xtext

B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def b36(v, width):
    s = ""
    while True:
        s = B36[v % 36] + s
        v //= 36
        if not v:
            break
    return s.rjust(width, "0")


def make_id(sec, usec, ino):
    return b36(sec % 78364164096, 7) + b36(usec % 1679616, 4) + b36(ino, 1)


def envelope(mid, rcpts, arrival, sender="root@box.example", body_len=0):
    """rcpts: list of (channel, host, address). Returns the envelope block (str) with the o/z
    fields left for fix()."""
    lines = ["@ spoolbox 1", "i " + mid, "t %d" % arrival, "o %016d" % 0, "z %016d" % body_len, "b 7",
             "u 0 root", "s " + xtext(sender)]
    for ch, host, addr in rcpts:
        lines.append("r N 0000000000 0000 0000000000 %s %s %s 0" % (ch, host, xtext(addr)))
    lines.append(".")
    return "\n".join(lines) + "\n"


def message_bytes(mid, rcpts, arrival, body):
    env = envelope(mid, rcpts, arrival, body_len=len(body))
    off = len(env.encode())
    env = env.replace("o %016d" % 0, "o %016d" % off, 1)
    return env.encode() + body


def _new_file(dirpath):
    now = time.time()
    tmp = os.path.join(dirpath, "gen.%d.%d" % (os.getpid(), time.monotonic_ns()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    ino = os.fstat(fd).st_ino
    mid = make_id(int(now), int((now % 1) * 1e6), ino)
    return fd, tmp, mid


def add_incoming(spool, rcpts, body=b"Subject: test\n\nhello\n", arrival=None):
    """One message in incoming/ (state E3). Returns its id."""
    for d in ("tmp", "incoming"):
        os.makedirs(os.path.join(spool, d), exist_ok=True)
    fd, tmp, mid = _new_file(os.path.join(spool, "tmp"))
    os.write(fd, message_bytes(mid, rcpts, int(arrival or time.time()), body))
    os.close(fd)
    os.rename(tmp, os.path.join(spool, "incoming", mid))
    return mid


def add_queued(spool, rcpts, body=b"Subject: test\n\nhello\n", arrival=None, due=None):
    """One fully queued message (state P3, with its due link). Returns its id."""
    arrival = int(arrival or time.time())
    due = int(due or arrival)
    os.makedirs(os.path.join(spool, "tmp"), exist_ok=True)
    fd, tmp, mid = _new_file(os.path.join(spool, "tmp"))
    data = message_bytes(mid, rcpts, arrival, body)
    os.write(fd, data)
    os.close(fd)
    qdir = os.path.join(spool, "queue", mid[-1])
    ddir = os.path.join(spool, "due", str(due // 10000))
    os.makedirs(qdir, exist_ok=True)
    os.makedirs(ddir, exist_ok=True)
    env = data[:data.index(b"\n.\n") + 3]
    with open(os.path.join(qdir, mid + ".c"), "wb") as f:
        f.write(env)
    os.link(os.path.join(qdir, mid + ".c"), os.path.join(ddir, "%s.%d" % (mid, due)))
    os.rename(tmp, os.path.join(qdir, mid + ".d"))
    return mid
