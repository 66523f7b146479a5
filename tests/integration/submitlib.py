"""Helpers shared by the submit tests: run submit as sendmail, read what it queued, split a
stored message into its header fields and body."""
import os

from spoolfmt import incoming, only_incoming, read_message_file


def sendmail(box, *args, input=b"", env=None, timeout=20):
    """Runs the binary under the name sendmail, as callers do."""
    return box.run(None, *args, input=input, env=env, argv0="/usr/sbin/sendmail", timeout=timeout)


def refused(box, args, input, code, why, env=None):
    """sendmail args must exit code with every part of why in its stderr, and queue nothing."""
    p = sendmail(box, *args, input=input, env=env)
    assert p.returncode == code, p.stderr
    for part in why:
        assert part in p.stderr, p.stderr
    nothing_queued(box)


def queued(box):
    """(id, Message, stored message bytes) of the single message in incoming/."""
    return only_incoming(box.spool)


def all_queued(box):
    return [read_message_file(os.path.join(box.spool, "incoming", i)) for i in incoming(box.spool)]


def nothing_queued(box):
    assert incoming(box.spool) == []
    tmp = os.path.join(box.spool, "tmp")
    assert not os.path.isdir(tmp) or os.listdir(tmp) == []


def split(msg):
    """(list of (name, raw value) fields, body) of stored message bytes (LF line endings)."""
    head, sep, body = msg.partition(b"\n\n")
    assert sep, msg[:200]
    fields = []
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t") and fields:
            name, val = fields[-1]
            fields[-1] = (name, val + b"\n" + line)
        else:
            name, _, val = line.partition(b":")
            fields.append((name.decode(), val.strip()))
    return fields, body


def header(msg, name):
    """Values of every field called name (case-insensitive), as str."""
    fields, _ = split(msg)
    return [v.decode("utf-8", "surrogateescape") for n, v in fields if n.lower() == name.lower()]


def routes(m):
    return [(r.channel, r.host, r.addr) for r in m.rcpts]
