"""Drives a transport agent the way the scheduler does (docs/spool.md 11), for the smtp tests:
writes queued messages in the spool format (message file + control file under queue/<h>/),
starts `spoolbox smtp`, marks the recipients of a job "T" with the TA's pid, sends "ID\\tHOST",
and reads the report lines. Self-contained on purpose: it depends only on the documented format,
not on submit or the scheduler."""
import itertools
import os
import queue
import subprocess
import threading
import time

from spoolfmt import Message, xtext

B36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_counter = itertools.count(1)


def b36(n, width):
    s = ""
    while n:
        n, r = divmod(n, 36)
        s = B36[r] + s
    return s.rjust(width, "0")[-width:]


class Rcpt:
    def __init__(self, addr, host=None, notify=None, orcpt=None):
        self.addr = addr
        self.host = host or addr.rpartition("@")[2].lower()
        self.notify = notify      # "S,F" style or "N"
        self.orcpt = orcpt        # "rfc822;addr"


class Queue:
    """A spool directory with queued messages written directly in the documented format."""

    def __init__(self, spool):
        self.spool = spool
        for d in ("tmp", "incoming", "queue", "due", "corrupt"):
            os.makedirs(os.path.join(spool, d), exist_ok=True)

    def new_id(self):
        t = time.time()
        return b36(int(t), 7) + b36(int((t % 1) * 1e6) % 36 ** 4, 4) + b36(os.getpid() * 1000 + next(_counter), 6)

    def paths(self, mid):
        d = os.path.join(self.spool, "queue", mid[-1])
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, mid + ".c"), os.path.join(d, mid + ".d")

    def add(self, sender, rcpts, message, body8=None, smtputf8=False, ret=None, envid=None, arrival=None):
        """Queues message (bytes, LF line endings) from sender to rcpts (addresses or Rcpt)."""
        rcpts = [r if isinstance(r, Rcpt) else Rcpt(r) for r in rcpts]
        if isinstance(message, str):
            message = message.encode()
        mid = self.new_id()
        if body8 is None:
            body8 = any(b >= 0x80 for b in message)
        lines = ["@ spoolbox 1", "i " + mid, "t %d" % int(arrival or time.time()),
                 "o " + "0" * 16, "z %016d" % len(message), "b %d" % (8 if body8 else 7)]
        if smtputf8:
            lines.append("U")
        lines.append("u 0 root")
        lines.append("s " + (xtext(sender) if sender else "<>"))
        if ret:
            lines.append("R " + ret)
        if envid:
            lines.append("e " + xtext(envid))
        for r in rcpts:
            lines.append("r N 0000000000 0000 0000000000 smtp %s %s -1" % (r.host, xtext(r.addr)))
            if r.notify:
                lines.append("N " + r.notify)
            if r.orcpt:
                t, _, a = r.orcpt.partition(";")
                lines.append("O %s;%s" % (t, xtext(a)))
        lines.append(".")
        env = "\n".join(lines) + "\n"
        env = env.replace("o " + "0" * 16, "o %016d" % len(env))  # same length
        ctl, msg = self.paths(mid)
        with open(msg, "wb") as f:
            f.write(env.encode() + message)
        with open(ctl, "wb") as f:
            f.write(env.encode())
        return mid

    def control(self, mid):
        with open(self.paths(mid)[0], "rb") as f:
            return Message(f.read())

    def mark(self, mid, pid, host=None):
        """D1: every recipient (of host) that is not done goes to T with pid."""
        ctl = self.paths(mid)[0]
        m = self.control(mid)
        with open(ctl, "r+b") as f:
            for r in m.rcpts:
                if host and r.host != host:
                    continue
                if r.tag in ("D", "X", "F"):
                    continue
                f.seek(r.off + 2)
                f.write(b"T %010d %04d %010d" % (pid, r.tries, int(time.time())))


class Report:
    def __init__(self, line):
        self.line = line
        head, notary, rest = line.split("\t", 2)
        self.id, _, off = head.partition("/")
        self.offset = int(off)
        f = notary.split("\x01")
        self.final, self.action, self.enh, self.diag, self.remote = f[:5]
        self.status, _, self.message = rest.partition(" ")

    @property
    def addr(self):
        return self.final.partition(";")[2]

    def __repr__(self):
        return f"<Report {self.addr} {self.status} {self.enh} {self.diag!r} {self.remote}>"


class TA:
    """A running transport agent on pipes. Use as a context manager."""

    def __init__(self, box, applet="smtp", args=(), env=None, prefix=()):
        from conftest import BINARY
        self.box = box
        self.proc = subprocess.Popen(list(prefix) + [BINARY, applet] + list(args), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=box.environ(env))
        self.lines = queue.Queue()
        self.err = []
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        self.expect("#hungry")

    def _read_out(self):
        for line in self.proc.stdout:
            self.lines.put(line.decode("utf-8", errors="surrogateescape").rstrip("\n"))
        self.lines.put(None)

    def _read_err(self):
        for line in self.proc.stderr:
            self.err.append(line.decode("utf-8", errors="replace").rstrip("\n"))

    @property
    def pid(self):
        # Under a prefix such as `ip netns exec`, the command execs the TA: same pid.
        return self.proc.pid

    @property
    def log(self):
        return "\n".join(self.err)

    def readline(self, timeout=30):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("the TA did not answer within %ds; log:\n%s" % (timeout, self.log))
        if line is None:
            raise AssertionError("the TA exited (%s); log:\n%s" % (self.proc.poll(), self.log))
        return line

    def expect(self, what, timeout=30):
        line = self.readline(timeout)
        assert line == what, (line, self.log)

    def send(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def job(self, q, mid, host, timeout=60):
        """Hands out one job and returns its reports (one per recipient of host)."""
        q.mark(mid, self.pid, host)
        n = sum(1 for r in q.control(mid).rcpts if r.host == host and r.tag == "T" and r.pid == self.pid)
        self.send("%s\t%s" % (mid, host))
        reports = []
        while True:
            line = self.readline(timeout)
            if line == "#hungry":
                break
            if "\t" in line:
                reports.append(Report(line))
        assert len(reports) == n, (reports, self.log)
        return reports

    def close(self, timeout=20):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        time.sleep(0.05)  # let the stderr reader drain
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        rc = self.close()
        # A clean EOF ends a TA with 0; anything else (a sanitizer report, a crash) fails.
        if exc_type is None:
            assert rc == 0, "TA exit status %s; log:\n%s" % (rc, self.log)
