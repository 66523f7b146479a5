"""The scheduler's live query socket (issue 10 point 4, seed 000's MAILQv2; docs/spool.md 13):
greeting and challenge, SO_PEERCRED for root, AUTH with the MD5 scheme and PARAMauthfile (first
matching line, attributes, mode 0600 or refused), SHOW SNMP / QUEUE SHORT / QUEUE THREADS /
THREAD, ETRN, KILL MSG, POP-style replies; mailq -Q, -QQ, -QQQ; and a loop that never waits for a
client: one that never reads while mail flows, the client limit, an overlong line."""
import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import BINARY
from mailqlib import ctl_path
import sched_gen as gen
import spoolfmt
from sysroot import as_user

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")


class Sched:
    def __init__(self, box, authfile=None, slow="0", mailqpath=None):
        with open(box.env["SCHEDULER_CONF"], "w") as f:
            if authfile:
                f.write('PARAMauthfile="%s"\n' % authfile)
            if mailqpath:
                f.write('PARAMmailqpath="%s"\n' % mailqpath)
            f.write('*/* interval=1m retries="1" expiry=1d\nsmtp command="%s"\n' % STUB)
        self.box = box
        self.sock = os.path.join(box.spool, "scheduler.sock")
        self.p = subprocess.Popen([BINARY, "scheduler", "-i"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=box.environ({"STUB_LOG": os.path.join(box.base, "stub.log"), "STUB_SLOW": slow}))
        assert mailqpath or wait(lambda: os.path.exists(self.sock))

    def stop(self):
        self.p.terminate()
        return self.p.communicate(timeout=20)[1].decode(errors="replace")


def wait(cond, timeout=20):
    """cond() until true; a control file caught halfway through a write counts as not yet."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return True
        except (IndexError, ValueError, FileNotFoundError):
            pass
        time.sleep(0.02)
    return False


def delivered(box):
    path = os.path.join(box.base, "stub.log")
    return [ln.split()[4] for ln in open(path) if ln.startswith("deliver")] if os.path.exists(path) else []


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(20)
        self.s.connect(path)
        self.f = self.s.makefile("rb")
        self.version = self.f.readline()
        self.challenge = self.f.readline().decode().rstrip("\n")

    def ask(self, line):
        self.s.sendall(line.encode() + b"\n")
        first = self.f.readline().decode()
        if not first.startswith("+OK until"):
            return first.rstrip("\n"), None
        body = []
        while True:
            ln = self.f.readline().decode()
            assert ln, "connection closed inside an answer"
            if ln == ".\n":
                return first.rstrip("\n"), body
            body.append(ln[1:] if ln.startswith("..") else ln.rstrip("\n"))

    def close(self):
        self.s.close()


def md5auth(challenge, password):
    return hashlib.md5((challenge + password).encode()).hexdigest()


def test_greeting_root_views_and_mailq_Q(box):
    assert box.run("mailq", "-QQQ").returncode == 69  # no scheduler
    mid = gen.add_incoming(box.spool, [("smtp", "a.example", "defer1@a.example")])
    s = Sched(box)
    try:
        assert wait(lambda: os.path.exists(ctl_path(box.spool, mid)) and
                    spoolfmt.Message(open(ctl_path(box.spool, mid), "rb").read()).rcpts[0].tag == "Q")
        c = Client(s.sock)
        assert c.version == b"version zmailer 2.0\n"
        assert c.challenge.startswith("MAILQ-V2-CHALLENGE: ")
        assert Client(s.sock).challenge != c.challenge  # each one differs
        first, body = c.ask("SHOW SNMP")
        assert first == "+OK until LF.LF" and "messages-in-memory: 1" in body and "deferred: 1" in body, body
        first, body = c.ask("SHOW QUEUE SHORT")
        assert body == ["smtp/a.example\tR=0\tA=0"] or body[0].startswith("smtp/a.example\t"), body
        first, body = c.ask("SHOW THREAD smtp a.example")
        (line,) = body
        f = line.split("\t")
        assert f[0] == "queue/%s/%s.c" % (mid[-1], mid) and f[1] == "0" and f[4] == "1" and f[5] == "retry later"
        assert c.ask("KILL THREAD smtp a.example")[0].startswith("-ERR")
        assert c.ask("NONSENSE")[0] == "-ERR unknown command"
        assert c.ask("QUIT")[0] == "+OK"
        c.close()
        p = box.run("mailq", "-QQQ")
        assert p.returncode == 0 and b"messages-in-memory: 1\n" in p.stdout, p.stderr
        p = box.run("mailq", "-Q")
        assert p.returncode == 0 and p.stdout.startswith(b"smtp/a.example\tready=0\tagents=") and b"recipients=1" in p.stdout
        assert box.run("mailq", "-QQ").stdout.startswith(b"smtp/a.example\tR=0")
    finally:
        s.stop()
    assert not os.path.exists(s.sock)  # removed at the end


def test_version_1_dump(box):
    """The seed's "zmailer 1.0" dump on SOCKET.v1: vertices, channels, hosts, End:, then close;
    for a peer with the TT right (root here)."""
    a = gen.add_incoming(box.spool, [("smtp", "a.example", "defer1@a.example"), ("smtp", "b.example", "defer2@b.example")])
    b = gen.add_incoming(box.spool, [("smtp", "b.example", "defer3@b.example")])
    s = Sched(box)
    try:
        assert wait(lambda: all(os.path.exists(ctl_path(box.spool, i)) and
                                "A " in open(ctl_path(box.spool, i), errors="replace").read() for i in (a, b)))
        c = socket.socket(socket.AF_UNIX)
        c.settimeout(20)
        c.connect(s.sock + ".v1")
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
        c.close()
    finally:
        s.stop()
    lines = data.decode().split("\n")
    assert lines[:2] == ["version zmailer 1.0", "Vertices:"] and lines[-2:] == ["End:", ""], lines
    vert = {}
    i = 2
    while lines[i] != "Channels:":
        key, rest = lines[i].split(":\t", 1)
        path, addrs = rest.split("\t")
        n, offs = addrs.split(";")
        vert[os.path.basename(path)[:-2]] = (key, int(n), offs.strip().split(","))
        i += 1
    assert vert[a][1] == 2 and vert[b][1] == 1
    m = spoolfmt.Message(open(ctl_path(box.spool, a), "rb").read())
    assert vert[a][2] == [str(r.off) for r in m.rcpts]
    rest = lines[i:]
    def keys(word):
        (line,) = [ln for ln in rest if ln.startswith(word + ":\t")]
        return sorted(line.split(">")[1:])
    assert rest.index("Hosts:") > rest.index("Channels:")
    assert keys("smtp") == sorted([vert[a][0], vert[b][0]])
    assert keys("a.example") == [vert[a][0]] and keys("b.example") == sorted([vert[a][0], vert[b][0]])


def test_auth_with_the_md5_challenge_and_the_auth_file(box):
    auth = os.path.join(box.etc, "mailq.auth")
    with open(auth, "w") as f:
        f.write("# comment\nwatcher:other:ALL:[10.0.0.0]/8\nwatcher:s3cret:SNMP QQ:[127.0.0.0]/8\n")
    os.chmod(auth, 0o600)
    s = Sched(box, authfile=auth)
    try:
        c = Client(s.sock)
        # AUTH replaces root's everything with the user's attributes (the first line whose
        # addresses hold the peer: the UNIX socket's peer is 127.0.0.1)
        assert c.ask("AUTH watcher " + md5auth(c.challenge, "other"))[0] == "-LOGIN FAILED"
        assert c.ask("AUTH nobody " + md5auth(c.challenge, "nobody"))[0] == "-LOGIN FAILED"
        assert c.ask("AUTH watcher " + md5auth(c.challenge, "s3cret"))[0] == "+OK"
        assert c.ask("SHOW SNMP")[0] == "+OK until LF.LF"
        assert c.ask("SHOW QUEUE SHORT")[0] == "+OK until LF.LF"
        assert c.ask("SHOW QUEUE THREADS")[0] == "-ERR not allowed"
        assert c.ask("KILL MSG 0000000000000")[0] == "-ERR not allowed"
        assert c.ask("ETRN example.com")[0] == "-ERR not allowed"
        c.close()
        # a file others can read is refused (it holds passwords)
        os.chmod(auth, 0o644)
        c = Client(s.sock)
        assert c.ask("AUTH watcher " + md5auth(c.challenge, "s3cret"))[0] == "-LOGIN FAILED"
        c.close()
    finally:
        log = s.stop()
    assert "not mode 0600" in log, log


def test_a_user_gets_what_the_auth_file_gives_its_name(box):
    """SO_PEERCRED: a non-root peer is the user of its uid (no password on the UNIX socket);
    with no line for it, the nobody line; with neither, nothing."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to nobody")
    top = tempfile.mkdtemp(prefix="spoolbox-mq-")  # pytest's directories are root's only
    os.chmod(top, 0o755)
    box.spool = box.env["SPOOL"] = os.path.join(top, "spool")
    auth = os.path.join(box.etc, "mailq.auth")
    try:
        with open(auth, "w") as f:
            f.write("nobody:x:SNMP:[127.0.0.1]\n")
        os.chmod(auth, 0o600)
        s = Sched(box, authfile=auth)
        os.chmod(box.spool, 0o755)
        code = ("import socket,sys\ns=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);f=s.makefile('rb')\n"
                "f.readline();f.readline()\nfor c in sys.argv[2:]:\n s.sendall(c.encode()+b'\\n')\n"
                " while True:\n  ln=f.readline().decode();print(ln.strip())\n"
                "  if not ln.startswith('+OK until') and ln.strip() in ('.','') or ln.startswith('-'): break\n")
        try:
            p = subprocess.run(["/usr/bin/python3", "-c", code, s.sock, "SHOW SNMP", "SHOW QUEUE SHORT"],
                               capture_output=True, preexec_fn=as_user("nobody"), timeout=30)
        finally:
            s.stop()
        assert p.stdout.decode().split("\n")[:2] == ["+OK until LF.LF", "messages-in-memory: 0"], p.stdout + p.stderr
        assert p.stdout.decode().split("\n")[-2] == "-ERR not allowed", p.stdout
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_kill_msg_and_etrn(box):
    now = int(time.time())
    victim = gen.add_queued(box.spool, [("smtp", "k.example", "ok1@k.example")], due=now + 3600)
    later = gen.add_queued(box.spool, [("smtp", "e.example", "ok2@e.example")], due=now + 3600)
    s = Sched(box)
    try:
        c = Client(s.sock)
        assert c.ask("KILL MSG " + victim)[0] == "+OK"
        assert wait(lambda: not os.path.exists(ctl_path(box.spool, victim)))
        assert c.ask("ETRN e.example")[0] == "+OK"
        assert wait(lambda: delivered(box) == ["ok2@e.example"])
        assert later not in spoolfmt.queued_ids(box.spool) or wait(lambda: later not in spoolfmt.queued_ids(box.spool))
    finally:
        log = s.stop()
    assert "%s: deleted, as mailq asked" % victim in log


def test_clients_never_stall_the_loop(box):
    """A client that asks and never reads, a crowd over the client limit and an overlong line:
    mail keeps flowing and other clients are answered."""
    ids = [gen.add_incoming(box.spool, [("smtp", "f.example", "ok%d@f.example" % i)]) for i in range(20)]
    s = Sched(box)
    hog = socket.socket(socket.AF_UNIX)
    hog.connect(s.sock)
    hog.setblocking(False)
    crowd = []
    try:
        # ask for far more than the output buffer, never read a byte of it
        sent = 0
        try:
            for _ in range(20000):
                sent += hog.send(b"SHOW SNMP\nSHOW QUEUE THREADS\n")
        except BlockingIOError:
            pass
        assert sent > 0
        for i in range(20):
            crowd.append(Client(s.sock) if i < 14 else socket.socket(socket.AF_UNIX))
            if i >= 14:
                crowd[-1].connect(s.sock)
        # 16 clients at most: the hog, 14 polite ones, and one more; later ones are refused
        refused = [c for c in crowd[14:] if c.recv(100).startswith(b"-ERR too many clients")]
        assert len(refused) >= 4
        more = [gen.add_incoming(box.spool, [("smtp", "g.example", "ok%d@g.example" % i)]) for i in range(10)]
        assert box.run("submit", "-i", "-f", "root@box.example", "ok-x@h.example", input=b"x\n").returncode == 0
        assert wait(lambda: len(delivered(box)) == 31, timeout=60), delivered(box)
        assert crowd[0].ask("SHOW SNMP")[0] == "+OK until LF.LF"
        for c in crowd[1:]:
            c.close()
        crowd = crowd[:1]
        # the slots come free as the scheduler sees them close
        long = None
        for _ in range(100):
            long = Client(s.sock)
            if long.version.startswith(b"version"):
                break
            long.close()
            time.sleep(0.05)
        long.s.sendall(b"X" * 1024)  # a full buffer and no line end: all read, so no reset
        assert long.f.readline() == b"-ERR line too long\n"
        assert long.f.readline() == b""  # and closed
        assert s.p.poll() is None
    finally:
        hog.close()
        for c in crowd:
            c.close()
        s.stop()
    assert all(i not in spoolfmt.queued_ids(box.spool) for i in ids + more)


def test_tcp_only_when_mailqpath_asks(box):
    """PARAMmailqpath="TCP:port": the same protocol on TCP (and no UNIX socket); a TCP peer has no
    uid, so it gets what the auth file's nobody line gives its address until it AUTHs."""
    from smtpsink import free_port
    port = free_port()
    auth = os.path.join(box.etc, "mailq.auth")
    with open(auth, "w") as f:
        f.write("nobody:nobody:SNMP:[127.0.0.0]/8\nroot:r00t:ALL:[127.0.0.1]/32\n")
    os.chmod(auth, 0o600)
    s = Sched(box, authfile=auth, mailqpath="TCP:%d" % port)
    try:
        c = None
        for _ in range(200):
            try:
                c = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                time.sleep(0.05)
        f = c.makefile("rb")
        assert f.readline() == b"version zmailer 2.0\n"
        challenge = f.readline().decode().rstrip("\n")

        def ask(line):
            c.sendall(line.encode() + b"\n")
            first = f.readline().decode().rstrip("\n")
            if first.startswith("+OK until"):
                while f.readline() != b".\n":
                    pass
            return first
        assert ask("SHOW SNMP") == "+OK until LF.LF"
        assert ask("SHOW QUEUE THREADS") == "-ERR not allowed"
        assert ask("AUTH root " + md5auth(challenge, "r00t")) == "+OK"
        assert ask("SHOW QUEUE THREADS") == "+OK until LF.LF"
        c.close()
        assert not os.path.exists(s.sock)
    finally:
        s.stop()


def test_the_socket_appears_only_once_it_listens(box, tmp_path):
    """A client that connects the moment scheduler.sock exists must not be refused: the socket
    is bound and made listening under a temporary name and renamed into place (it was bound at
    its path and listened a moment later, and a quick mailq -Q met ECONNREFUSED in between)."""
    trace = str(tmp_path / "trace")
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('*/* interval=1m retries="1" expiry=1d\nsmtp command="%s"\n' % STUB)
    sock = os.path.join(box.spool, "scheduler.sock")
    p = subprocess.run(["strace", "-qq", "-e", "trace=bind,listen,rename", "-o", trace, BINARY, "scheduler", "-i", "-1"],
                       capture_output=True, env=box.environ({"ASAN_OPTIONS": "detect_leaks=0"}), timeout=60)
    assert p.returncode == 0, p.stderr
    calls = [ln for ln in open(trace) if '"%s' % sock in ln or ln.startswith("listen(")]
    # for each socket: bind to NAME.new, listen, rename NAME.new -> NAME; never a bind at NAME
    assert not [ln for ln in calls if ln.startswith("bind(") and '"%s"' % sock in ln], calls
    assert [ln.split("(")[0] for ln in calls] == ["bind", "listen", "rename"] * 2, calls
    assert '"%s.new", "%s"' % (sock, sock) in calls[2], calls


@pytest.mark.parametrize("mailqpath,says", [
    ("TCP:bogus", "PARAMmailqpath=TCP:bogus: not TCP:PORT: no live queries"),
    ("UNIX:/" + "x" * 120, "the mailq socket path is too long: no live queries"),
])
def test_unusable_mailqpath_is_said_and_no_socket_made(box, mailqpath, says):
    """A PARAMmailqpath that names no usable place: the scheduler says so and runs without live queries."""
    s = Sched(box, mailqpath=mailqpath)
    time.sleep(0.5)
    err = s.stop()
    assert says in err, err
    assert not os.path.exists(s.sock)
