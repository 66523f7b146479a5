"""Reads spoolbox's spool format (docs/spool.md) from Python, so tests assert on what is really
on disk: the envelope block of a message file, the control file records, the queue layout."""
import os
import re

STATUS_LEN = 29


def xtext(s):
    """RFC 3461 xtext of s as the spool stores it (docs/spool.md 4.1); lone surrogates in s
    stand for bytes that are not UTF-8."""
    return "".join(chr(c) if 0x21 <= c <= 0x7E and c not in (0x2B, 0x3D) else "+%02X" % c
                   for c in s.encode("utf-8", errors="surrogateescape"))


def xtext_decode(s):
    out = bytearray()
    i = 0
    b = s.encode() if isinstance(s, str) else s
    while i < len(b):
        if b[i:i + 1] == b"+":
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(b[i])
            i += 1
    return out.decode("utf-8", errors="surrogateescape")


class Rcpt:
    def __init__(self, line, off):
        # r T PPPPPPPPPP NNNN TTTTTTTTTT channel host user priv
        f = line.split(" ")
        self.off = off
        self.tag = f[1]
        self.pid = int(f[2])
        self.tries = int(f[3])
        self.next = int(f[4])
        self.channel = f[5]
        self.host = f[6]
        self.addr = xtext_decode(f[7])
        self.priv = int(f[8])
        self.notify = None
        self.orcpt = None

    def __repr__(self):
        return f"<Rcpt {self.tag} {self.channel}/{self.host} {self.addr}>"


class Message:
    """Parsed envelope block (and, for a control file, the records after it)."""

    def __init__(self, data):
        self.raw = data
        self.records = []
        self.rcpts = []
        self.attempts = []
        self.fields = {}
        pos = 0
        in_env = True
        while pos < len(data):
            end = data.find(b"\n", pos)
            if end < 0:
                end = len(data)
            line = data[pos:end].decode("utf-8", errors="surrogateescape")
            off = pos
            pos = end + 1
            if in_env:
                if line == ".":
                    in_env = False
                    self.env_end = pos
                    continue
                kind, _, rest = line.partition(" ")
                if kind == "r":
                    self.rcpts.append(Rcpt(line, off))
                elif kind == "N":
                    self.rcpts[-1].notify = rest
                elif kind == "O":
                    t, _, a = rest.partition(";")
                    self.rcpts[-1].orcpt = t + ";" + xtext_decode(a)
                else:
                    self.fields.setdefault(kind, []).append(rest)
            else:
                if line.startswith("A "):
                    self.attempts.append(line.split(" ", 7))
                self.records.append(line)
                if "o" in self.fields and pos > int(self.fields["o"][0]):
                    break

    def field(self, k):
        v = self.fields.get(k)
        return v[0] if v else None

    @property
    def id(self):
        return self.field("i")

    @property
    def sender(self):
        s = self.field("s")
        return "" if s == "<>" else xtext_decode(s)

    @property
    def recipients(self):
        return [r.addr for r in self.rcpts]

    @property
    def body_offset(self):
        return int(self.field("o"))

    @property
    def size(self):
        return int(self.field("z"))


def read_message_file(path):
    """Returns (Message, message bytes) for incoming/<id> or queue/<h>/<id>.d."""
    with open(path, "rb") as f:
        data = f.read()
    m = Message(data[:data.find(b"\n.\n") + 3])
    return m, data[m.body_offset:]


def incoming(spool):
    d = os.path.join(spool, "incoming")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def queued_ids(spool):
    out = []
    q = os.path.join(spool, "queue")
    if os.path.isdir(q):
        for h in os.listdir(q):
            for f in os.listdir(os.path.join(q, h)):
                if f.endswith(".c"):
                    out.append(f[:-2])
    return sorted(out)


def ctl_message(spool, mid):
    """The Message of a queued message's control file."""
    with open(os.path.join(spool, "queue", mid[-1], mid + ".c"), "rb") as f:
        return Message(f.read())


def has_attempts(spool):
    """True when the first queued message's control file records an attempt (a deferral)."""
    ids = queued_ids(spool)
    return bool(ids) and bool(ctl_message(spool, ids[0]).attempts)


def only_incoming(spool):
    """The single message in incoming/: (id, Message, bytes)."""
    ids = incoming(spool)
    assert len(ids) == 1, ids
    m, body = read_message_file(os.path.join(spool, "incoming", ids[0]))
    return ids[0], m, body


ID_RE = re.compile(r"^[0-9A-Z]{12,24}$")
