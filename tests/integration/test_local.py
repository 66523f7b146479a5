"""local: the local transport agent, driven over its stdin/stdout exactly as the scheduler drives
it (docs/spool.md 11): messages are written into queue/ in the documented format, the
recipients are marked T with the agent's pid, the job line is sent, and the report lines and
the delivered bytes are checked. Also newaliases and `spoolbox --check` on the aliases file."""
import fcntl
import grp
import os
import pwd
import random
import re
import select
import shutil
import string
import subprocess
import tempfile
import time

import pytest
from conftest import BINARY
from spoolfmt import xtext

NOBODY = pwd.getpwnam("nobody")


# ---------------------------------------------------------------- spool and protocol helpers

def new_id():
    return "TL" + "".join(random.choice(string.ascii_uppercase + string.digits) for _ in range(12))


def queue_message(box, rcpts, message, sender="sender@example.org", channel="local", host="-"):
    """Writes queue/<h>/<id>.d and .c as pick-up leaves them (state P3) and returns the id."""
    if isinstance(message, str):
        message = message.encode()
    for d in ("tmp", "incoming", "due", "corrupt", "queue"):
        os.makedirs(os.path.join(box.spool, d), exist_ok=True)
    mid = new_id()
    lines = ["@ spoolbox 1", f"i {mid}", f"t {int(time.time())}", "o " + "X" * 16, "z %016d" % len(message),
             "b 8" if any(b > 127 for b in message) else "b 7", "u 0 root",
             "s " + (xtext(sender) if sender else "<>")]
    for r in rcpts:
        lines.append(f"r N 0000000000 0000 0000000000 {channel} {host} {xtext(r)} -1")
    lines.append(".")
    block = "\n".join(lines) + "\n"
    block = block.replace("o " + "X" * 16, "o %016d" % len(block.encode()))
    hd = os.path.join(box.spool, "queue", mid[-1])
    os.makedirs(hd, exist_ok=True)
    with open(os.path.join(hd, mid + ".c"), "wb") as f:
        f.write(block.encode())
    with open(os.path.join(hd, mid + ".d"), "wb") as f:
        f.write(block.encode() + message)
    return mid


def ctl_path(box, mid):
    return os.path.join(box.spool, "queue", mid[-1], mid + ".c")


def mark_transit(box, mid, pid, host="-"):
    """D1: every not-done local recipient of host becomes T with the agent's pid."""
    path = ctl_path(box, mid)
    data = open(path, "rb").read()
    pos = 0
    with open(path, "r+b") as f:
        for line in data.split(b"\n"):
            if line.startswith(b"r ") and line.split(b" ")[1] in (b"N", b"Q"):
                f.seek(pos + 2)
                f.write(b"T %010d 0000 %010d" % (pid, int(time.time())))
            if line == b".":
                break
            pos += len(line) + 1


class Report:
    def __init__(self, line):
        self.line = line
        head, notary, rest = line.split("\t", 2)
        self.id, off = head.split("/")
        self.off = int(off)
        f = notary.split("\x01")
        self.final, self.action, self.enh, self.diag, self.remote = f
        self.status, _, self.message = rest.partition(" ")

    def __repr__(self):
        return f"<Report {self.final} {self.status} {self.enh} {self.diag!r}>"


class TA:
    """A running `spoolbox local`, fed jobs the way the scheduler does."""

    def __init__(self, box, env=None, args=()):
        self.log = open(os.path.join(box.base, "local.log"), "ab")
        self.box = box
        self.p = subprocess.Popen([BINARY, "local"] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.log, env=box.environ(env))
        self.buf = b""
        assert self.readline(10) == "#hungry"

    def readline(self, timeout):
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            assert left > 0, "the agent did not answer in time"
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                assert chunk, "the agent closed its stdout"
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", "replace")

    def job(self, mid, host="-", timeout=30):
        mark_transit(self.box, mid, self.p.pid, host)
        self.p.stdin.write(f"{mid}\t{host}\n".encode())
        self.p.stdin.flush()
        reports = []
        while True:
            line = self.readline(timeout)
            if line == "#hungry":
                return reports
            if "\t" in line:
                reports.append(Report(line))

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(10)
        self.log.close()
        return rc


def deliver(box, rcpts, message, env=None, sender="sender@example.org", timeout=30):
    """One message through a fresh agent: returns the reports, in recipient order."""
    mid = queue_message(box, rcpts, message, sender=sender)
    ta = TA(box, env)
    try:
        reports = ta.job(mid, timeout=timeout)
    finally:
        assert ta.close() == 0
    assert len(reports) == len(rcpts), reports
    assert all(r.id == mid for r in reports)
    return reports


def log_text(box):
    p = os.path.join(box.base, "local.log")
    return open(p, errors="replace").read() if os.path.exists(p) else ""


FROM_RE = re.compile(rb"^From (\S+) [A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\n")


def mboxrd(body):
    """The reference quoting: one more '>' before every line matching ^>*From ."""
    out = []
    for line in body.split(b"\n"):
        out.append(b">" + line if re.match(rb"^>*From ", line) else line)
    return b"\n".join(out)


@pytest.fixture
def pubdir():
    """A directory other users can reach (pytest's tmp_path is inside a 0700 directory)."""
    d = tempfile.mkdtemp(prefix="spoolbox-local-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def write_aliases(box, text, mode=0o644):
    p = box.env["ALIASES"]
    with open(p, "w") as f:
        f.write(text)
    os.chmod(p, mode)
    return p


TRICKY = (b"Subject: tricky \xe9t\xe9\n"
          b"From: someone@example.org\n"
          b"\n"
          b"From the start\n"
          b">From quoted once\n"
          b">>From quoted twice\n"
          b"From\n"
          b" From indented\n"
          b".\n"
          b"..\n"
          b"8-bit: \xff\xfe\x80 caf\xc3\xa9\n"
          + b"L" * 70000 + b"\n"
          b"\n"
          b"From after a blank line\n"
          b"last line without newline")


# ---------------------------------------------------------------- mbox and Maildir bytes

def test_mbox_bytes_exact(box):
    msg = TRICKY
    r = deliver(box, ["root"], msg)
    assert (r[0].status, r[0].action, r[0].enh) == ("ok", "delivered", "2.0.0"), r
    assert r[0].final == "rfc822;root"
    mbox = open(os.path.join(box.mail, "root"), "rb").read()
    m = FROM_RE.match(mbox)
    assert m and m.group(1) == b"sender@example.org", mbox[:100]
    expect = (b"Return-Path: <sender@example.org>\nDelivered-To: root@box.example\n" + mboxrd(msg) + b"\n\n")
    assert mbox[m.end():] == expect
    # a second message is appended after the blank line, with its own From_ line
    r = deliver(box, ["root"], b"Subject: two\n\nFrom me\n", sender="")
    assert r[0].status == "ok"
    mbox2 = open(os.path.join(box.mail, "root"), "rb").read()
    assert mbox2.startswith(mbox)
    rest = mbox2[len(mbox):]
    m = FROM_RE.match(rest)
    assert m and m.group(1) == b"MAILER-DAEMON"
    assert rest[m.end():] == b"Return-Path: <>\nDelivered-To: root@box.example\nSubject: two\n\n>From me\n\n"
    st = os.stat(os.path.join(box.mail, "root"))
    assert st.st_uid == 0 and (st.st_mode & 0o777) == 0o600


def test_mbox_separator_after_unterminated_mailbox(box):
    p = os.path.join(box.mail, "root")
    with open(p, "wb") as f:
        f.write(b"From x Thu Jan  1 00:00:00 1970\nSubject: old\n\nno newline at the end")
    os.chmod(p, 0o600)
    deliver(box, ["root"], b"Subject: new\n\nbody\n")
    data = open(p, "rb").read()
    assert b"no newline at the end\n\nFrom sender@example.org " in data


def test_maildir_bytes_exact(box, pubdir):
    env = {"MAILBOX_STYLE": "maildir", "MAILDIR": pubdir + "/%u/Maildir"}
    r = deliver(box, ["root"], TRICKY, env=env)
    assert r[0].status == "ok", r
    md = os.path.join(pubdir, "root", "Maildir")
    for sub in ("tmp", "new", "cur"):
        assert os.path.isdir(os.path.join(md, sub))
        assert (os.stat(os.path.join(md, sub)).st_mode & 0o777) == 0o700
    assert os.listdir(os.path.join(md, "tmp")) == []
    files = os.listdir(os.path.join(md, "new"))
    assert len(files) == 1 and re.match(r"^\d+\.M\d+P\d+Q\d+\.box\.example$", files[0]), files
    data = open(os.path.join(md, "new", files[0]), "rb").read()
    assert data == b"Return-Path: <sender@example.org>\nDelivered-To: root@box.example\n" + TRICKY
    r = deliver(box, ["root"], b"Subject: 2\n\nx\n", env=env)
    assert len(os.listdir(os.path.join(md, "new"))) == 2


def test_several_recipients_one_job(box):
    r = deliver(box, ["root", "nosuchuser", "ROOT@box.example"], b"Subject: x\n\nhi\n")
    assert [x.status for x in r] == ["ok", "error", "ok"]
    assert r[1].enh == "5.1.1" and "unknown user: nosuchuser" in r[1].diag and r[1].action == "failed"
    # the same mailbox twice in one message: two copies (two recipients), each with its header
    data = open(os.path.join(box.mail, "root"), "rb").read()
    assert data.count(b"\nSubject: x\n") == 2
    assert b"Delivered-To: ROOT@box.example\n" in data


def test_only_marked_recipients_are_handled(box):
    """Only recipients marked T with the agent's pid are delivered; the control file is never
    written by the agent."""
    mid = queue_message(box, ["root"], b"Subject: x\n\n")
    path = ctl_path(box, mid)
    ta = TA(box)
    try:
        ta.p.stdin.write(f"{mid}\t-\n".encode())  # not marked T: nothing to do
        ta.p.stdin.flush()
        assert ta.readline(10) == "#hungry"
        assert not os.path.exists(os.path.join(box.mail, "root"))
        reports = ta.job(mid)
        assert len(reports) == 1 and reports[0].status == "ok"
        assert reports[0].off == open(path, "rb").read().index(b"\nr ") + 1
        assert b"\nr T %010d " % ta.p.pid in open(path, "rb").read()
    finally:
        ta.close()


def test_unknown_user(box):
    r = deliver(box, ["no-such-user-xyz"], b"Subject: x\n\n")
    assert (r[0].status, r[0].action, r[0].enh) == ("error", "failed", "5.1.1")
    assert r[0].diag == "unknown user: no-such-user-xyz"
    assert not os.listdir(box.mail)


def test_hostile_local_parts_never_reach_paths(box):
    pwned, target = os.path.join(box.base, "pwned"), os.path.join(box.base, "x")
    r = deliver(box, ["../../etc/passwd", f"|/bin/touch {pwned}", target], b"Subject: x\n\n")
    assert all(x.status == "error" and x.enh == "5.1.1" for x in r), r
    assert not os.path.exists(pwned)
    assert not os.path.exists(target)


def test_debug_mode_delivers_and_changes_nothing(box):
    mid = queue_message(box, ["root"], b"Subject: dbg\n\nx\n")
    before = open(ctl_path(box, mid), "rb").read()
    p = box.run("local", "-m", mid)
    assert p.returncode == 0, p.stderr
    line = p.stdout.decode().strip()
    assert line.startswith(mid + "/") and "\tok " in line
    assert open(ctl_path(box, mid), "rb").read() == before
    assert b"Subject: dbg" in open(os.path.join(box.mail, "root"), "rb").read()
    assert box.run("local", "-m", "NOSUCHMESSAGE1").returncode == 66


# ---------------------------------------------------------------- aliases

def test_every_alias_syntax(box, pubdir):
    out = os.path.join(pubdir, "out")
    os.mkdir(out)
    os.chmod(out, 0o1777)
    inc = os.path.join(pubdir, "list.inc")
    with open(inc, "w") as f:
        f.write(f"# an include file\n{out}/from-include\n\n\"|cat > {out}/include-cmd\"\n")
    write_aliases(box, f"""# comment
postmaster: root
team: {out}/file-a,
  {out}/file-b,   "|cat > {out}/cmd-a",
\t|cat > {out}/cmd-b
# comment inside nothing
"Quoted Name": {out}/quoted
inc-list: :include:{inc}
back: \\root
fqdn: root@box.example, root@localhost, root
""")
    r = deliver(box, ["team", "quoted name", "inc-list", "back", "postmaster", "fqdn"], b"Subject: a\n\nbody\n")
    assert [x.status for x in r] == ["ok"] * 6, r
    assert r[0].action == "expanded" and r[0].diag == "delivered to 4 targets"
    for name in ("file-a", "file-b", "quoted", "from-include"):
        data = open(os.path.join(out, name), "rb").read()
        assert FROM_RE.match(data) and data.endswith(b"\nSubject: a\n\nbody\n\n"), name
        st = os.stat(os.path.join(out, name))
        assert st.st_uid == NOBODY.pw_uid, name  # root owns the aliases file: DEFAULT_USER runs it
    for name in ("cmd-a", "cmd-b", "include-cmd"):
        assert open(os.path.join(out, name), "rb").read().endswith(b"Subject: a\n\nbody\n")
    # \root, postmaster and the three spellings of root in "fqdn" (one mailbox: deduplicated)
    mbox = open(os.path.join(box.mail, "root"), "rb").read()
    assert mbox.count(b"Subject: a") == 3


def test_root_spellings_are_aliased_alike(box, pubdir):
    target = os.path.join(pubdir, "admin")
    open(target, "w").close()
    os.chown(target, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(pubdir, 0o777)
    write_aliases(box, f"root: {target}\n")
    r = deliver(box, ["root", "root@localhost", "root@box.example", "RooT@BOX.example"], b"Subject: r\n\n")
    assert [x.status for x in r] == ["ok"] * 4, r
    assert open(target, "rb").read().count(b"Subject: r") == 4
    assert not os.path.exists(os.path.join(box.mail, "root"))


def test_root_setting_overrides_aliases(box, pubdir):
    write_aliases(box, "root: nosuchuser\n")
    os.chmod(pubdir, 0o777)
    r = deliver(box, ["root"], b"Subject: r\n\n", env={"ROOT": "\\nobody", "MBOX_DIR": pubdir})
    assert r[0].status == "ok", r
    st = os.stat(os.path.join(pubdir, "nobody"))
    assert st.st_uid == NOBODY.pw_uid


def test_catch_all_and_plus_detail(box):
    write_aliases(box, "*: \\root\n")
    r = deliver(box, ["whoever", "root+tag"], b"Subject: c\n\n")
    assert [x.status for x in r] == ["ok", "ok"], r
    assert open(os.path.join(box.mail, "root"), "rb").read().count(b"Subject: c") == 2


def test_alias_loops(box):
    write_aliases(box, "a: b\nb: c\nc: a\nself: self\nme: \\root, me\n")
    r = deliver(box, ["a", "self", "me"], b"Subject: l\n\n")
    assert (r[0].status, r[0].enh) == ("error", "5.4.6") and "alias loop: a -> b -> c -> a" in r[0].diag, r
    # "self: self" names a user that does not exist: nothing to deliver to
    assert r[1].status == "error"
    assert r[2].status == "ok"  # "me: \root, me" is root's mailbox (me is not a user: 5.1.1 part)


def test_delivered_to_loop(box, pubdir):
    msg = b"Delivered-To: someone@else\nDelivered-To: Root@Box.Example\nSubject: loop\n\nx\n"
    os.chmod(pubdir, 0o1777)
    r = deliver(box, ["root", "nobody"], msg, env={"MBOX_DIR": pubdir})
    assert (r[0].status, r[0].enh, r[0].action) == ("error", "5.4.6", "failed")
    assert "loop" in r[0].diag
    assert r[1].status == "ok"  # a different recipient is not a loop
    # Delivered-To below the header does not count
    r = deliver(box, ["root"], b"Subject: x\n\nDelivered-To: root@box.example\n")
    assert r[0].status == "ok"


def test_aliases_file_errors_defer_everything(box):
    write_aliases(box, "good: root\nbad line without colon\n")
    r = deliver(box, ["root"], b"Subject: x\n\n")
    assert (r[0].status, r[0].enh, r[0].action) == ("deferred", "4.3.5", "delayed")
    assert "aliases:2: missing ':'" in r[0].diag
    assert not os.path.exists(os.path.join(box.mail, "root"))


def test_group_writable_aliases_refuse_commands(box):
    target = os.path.join(box.base, "should-not-exist")
    write_aliases(box, f"x: \"|cat > {target}\"\n", mode=0o664)
    r = deliver(box, ["x"], b"Subject: x\n\n")
    assert (r[0].status, r[0].enh) == ("deferred", "4.3.5") and "group or world writable" in r[0].diag
    assert not os.path.exists(target)


def test_owner_alias_and_expansion_view(box):
    write_aliases(box, "list: a@remote.example, root\nowner-list: root\n")
    p = box.run("local", "-x", "list")
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode().splitlines()
    assert "remote a@remote.example sender owner-list@box.example" in out
    assert "mailbox root user root" in out
    p = box.run("local", "-x", "nosuch")
    assert p.returncode == 67 and b"5.1.1 unknown user: nosuch" in p.stdout


# ---------------------------------------------------------------- |command

def test_command_stdin_environment_and_user(box, pubdir):
    out = os.path.join(pubdir, "cmd")
    os.mkdir(out)
    os.chmod(out, 0o1777)
    write_aliases(box, f"prog: \"|cat > {out}/stdin; env > {out}/env; id -u > {out}/uid; pwd > {out}/pwd\"\n")
    msg = b"Subject: cmd\n\n\xffbody\n"
    r = deliver(box, ["prog"], msg, sender="we`ird$(x)@example.org")
    assert r[0].status == "ok", r
    assert open(f"{out}/stdin", "rb").read() == (b"Return-Path: <we`ird$(x)@example.org>\n"
                                                 b"Delivered-To: prog@box.example\n" + msg)
    env = dict(line.split("=", 1) for line in open(f"{out}/env").read().splitlines() if "=" in line)
    assert env["SENDER"] == "we_ird__x_@example.org"  # only harmless characters
    assert env["RECIPIENT"] == "prog@box.example"
    assert env["LOCAL"] == "prog" and env["HOST"] == "box.example"
    assert env["PATH"] == "/usr/bin:/bin"
    assert "SPOOL" not in env and "ALIASES" not in env  # a clean environment
    assert int(open(f"{out}/uid").read()) == NOBODY.pw_uid
    assert open(f"{out}/pwd").read().strip() in (NOBODY.pw_dir, "/")


def test_command_exit_codes_and_timeout(box):
    write_aliases(box, "temp: \"|cat >/dev/null; echo try later; exit 75\"\n"
                       "perm: \"|echo no such mailbox here >&2; exit 67\"\n"
                       "other: \"|exit 1\"\n"
                       "slow: \"|sleep 30\"\n"
                       "noread: \"|exit 0\"\n")
    t0 = time.time()
    r = deliver(box, ["temp", "perm", "other", "slow", "noread"], b"Subject: x\n\n" + b"y" * 300000 + b"\n",
                env={"COMMAND_TIMEOUT": "1s"})
    assert (r[0].status, r[0].enh) == ("deferred", "4.3.0") and "try later" in r[0].diag
    assert (r[1].status, r[1].enh) == ("error", "5.1.1") and "no such mailbox here" in r[1].diag
    assert "command exited 67 (user unknown)" in r[1].diag, r[1].diag
    assert (r[2].status, r[2].enh) == ("error", "5.3.0") and "command exited 1 (unknown error)" in r[2].diag, r[2].diag
    assert r[3].status == "deferred" and "timed out" in r[3].diag
    assert r[4].status == "ok"  # exited 0 without reading: its exit code decides
    assert time.time() - t0 < 15


# ---------------------------------------------------------------- locking

def test_mbox_waits_for_fcntl_lock_never_interleaves(box):
    p = os.path.join(box.mail, "root")
    with open(p, "wb") as f:
        f.write(b"")
    os.chmod(p, 0o600)
    holder = subprocess.Popen(["/usr/bin/python3", "-c", f"""
import fcntl, sys, time
f = open({p!r}, "ab")
fcntl.lockf(f, fcntl.LOCK_EX)
print("locked", flush=True)
f.write(b"From reader Thu Jan  1 00:00:00 1970\\nSubject: reader\\n\\nwritten while locked\\n\\n")
f.flush()
time.sleep(1.5)
"""], stdout=subprocess.PIPE)
    assert holder.stdout.readline() == b"locked\n"
    t0 = time.time()
    r = deliver(box, ["root"], b"Subject: waited\n\nx\n", env={"LOCK_TIMEOUT": "20s"})
    holder.wait()
    assert r[0].status == "ok"
    assert time.time() - t0 >= 1.0  # it waited for the lock
    data = open(p, "rb").read()
    assert data.startswith(b"From reader Thu Jan  1 00:00:00 1970\nSubject: reader\n\nwritten while locked\n\n")
    assert data.count(b"From ") == 2 and data.endswith(b"Subject: waited\n\nx\n\n")


def test_mbox_dotlock_held_defers_then_stale_is_broken(box):
    p = os.path.join(box.mail, "root")
    lock = p + ".lock"
    with open(lock, "w") as f:
        f.write("%d\n" % os.getpid())  # a live process holds it
    r = deliver(box, ["root"], b"Subject: x\n\n", env={"LOCK_TIMEOUT": "1s"})
    assert (r[0].status, r[0].enh) == ("deferred", "4.2.0") and "locked" in r[0].diag
    assert not os.path.exists(p) or os.path.getsize(p) == 0
    assert os.path.exists(lock)
    # the same lock, left behind by a process that is gone, is stale
    with open(lock, "w") as f:
        f.write("999999999\n")
    r = deliver(box, ["root"], b"Subject: y\n\n", env={"LOCK_TIMEOUT": "1s"})
    assert r[0].status == "ok", r
    assert not os.path.exists(lock)
    # an old lock with no pid is stale too
    open(lock, "w").close()
    os.utime(lock, (time.time() - 3600,) * 2)
    r = deliver(box, ["root"], b"Subject: z\n\n", env={"LOCK_TIMEOUT": "1s"})
    assert r[0].status == "ok" and not os.path.exists(lock)


# ---------------------------------------------------------------- safety

def test_symlink_hardlink_and_foreign_mailbox_refused(box, pubdir):
    victim = os.path.join(pubdir, "victim")
    with open(victim, "wb") as f:
        f.write(b"precious\n")
    p = os.path.join(box.mail, "root")
    os.symlink(victim, p)
    r = deliver(box, ["root"], b"Subject: attack\n\n")
    assert (r[0].status, r[0].enh) == ("deferred", "4.2.0") and "symlink" in r[0].diag
    assert open(victim, "rb").read() == b"precious\n"
    os.unlink(p)
    os.link(victim, p)
    r = deliver(box, ["root"], b"Subject: attack\n\n")
    assert r[0].status == "deferred" and "hard link" in r[0].diag
    assert open(victim, "rb").read() == b"precious\n"
    os.unlink(p)
    with open(p, "wb") as f:
        f.write(b"")
    os.chown(p, NOBODY.pw_uid, NOBODY.pw_gid)
    r = deliver(box, ["root"], b"Subject: attack\n\n")
    assert r[0].status == "deferred" and "owned by another user" in r[0].diag
    assert os.path.getsize(p) == 0


def test_nonroot_recipient_owns_its_mailbox(box, pubdir):
    env = {"MBOX_DIR": pubdir}
    r = deliver(box, ["nobody"], b"Subject: n\n\nx\n", env=env)
    assert r[0].status == "ok", (r, log_text(box))
    st = os.stat(os.path.join(pubdir, "nobody"))
    assert (st.st_uid, st.st_mode & 0o777) == (NOBODY.pw_uid, 0o600)
    # the Debian layout: MBOX_DIR group-writable by a mail group: the user makes its own dotlock
    try:
        mailgid = grp.getgrnam("mail").gr_gid
    except KeyError:
        return
    os.chown(pubdir, 0, mailgid)
    os.chmod(pubdir, 0o2775)
    os.unlink(os.path.join(pubdir, "nobody"))
    r = deliver(box, ["nobody"], b"Subject: n2\n\nx\n", env=env)
    assert r[0].status == "ok", (r, log_text(box))
    st = os.stat(os.path.join(pubdir, "nobody"))
    assert st.st_uid == NOBODY.pw_uid


@pytest.fixture
def user(pubdir):
    """A throw-away user with a home directory, for .forward tests."""
    name = "sbxl%d" % (os.getpid() % 100000)
    home = os.path.join(pubdir, "home")
    subprocess.run(["userdel", name], capture_output=True)
    p = subprocess.run(["useradd", "-M", "-d", home, "-s", "/bin/sh", name], capture_output=True)
    if p.returncode != 0:
        pytest.skip("useradd failed: " + p.stderr.decode())
    os.mkdir(home)
    pw = pwd.getpwnam(name)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    yield pw
    subprocess.run(["userdel", name], capture_output=True)


def write_forward(user, text):
    """Writes user's ~/.forward as she would (hers, mode 644); returns its path."""
    fwd = os.path.join(user.pw_dir, ".forward")
    with open(fwd, "w") as f:
        f.write(text)
    os.chown(fwd, user.pw_uid, user.pw_gid)
    os.chmod(fwd, 0o644)
    return fwd


def test_forward_file(box, pubdir, user):
    out = os.path.join(user.pw_dir, "fwd-out")
    fwd = write_forward(user, f"# my forward\n\\{user.pw_name}\n\"|cat > {out}; id -u >> {out}\"\n")
    env = {"MBOX_DIR": pubdir}
    os.chmod(pubdir, 0o1777)
    r = deliver(box, [user.pw_name], b"Subject: f\n\nx\n", env=env)
    assert r[0].status == "ok" and r[0].action == "expanded", (r, log_text(box))
    assert open(out).read().endswith("x\n%d\n" % user.pw_uid)  # ran as the user
    assert b"Subject: f" in open(os.path.join(pubdir, user.pw_name), "rb").read()
    # an unsafe .forward (group-writable) is ignored: plain mailbox delivery
    os.chmod(fwd, 0o664)
    os.unlink(out)
    r = deliver(box, [user.pw_name], b"Subject: g\n\nx\n", env=env)
    assert r[0].status == "ok" and r[0].action == "delivered"
    assert not os.path.exists(out)
    # FORWARD=no ignores it as well
    os.chmod(fwd, 0o644)
    r = deliver(box, [user.pw_name], b"Subject: h\n\nx\n", env=dict(env, FORWARD="no"))
    assert r[0].action == "delivered" and not os.path.exists(out)


@pytest.mark.root
def test_disk_full_defers_and_truncates(box, pubdir):
    mnt = os.path.join(pubdir, "small")
    os.mkdir(mnt)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", mnt], capture_output=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a tmpfs (needs root / CAP_SYS_ADMIN): " + p.stderr.decode())
    try:
        env = {"MBOX_DIR": mnt}
        r = deliver(box, ["root"], b"Subject: small\n\nfits\n", env=env)
        assert r[0].status == "ok"
        before = open(os.path.join(mnt, "root"), "rb").read()
        r = deliver(box, ["root"], b"Subject: big\n\n" + b"z" * 400000 + b"\n", env=env)
        assert (r[0].status, r[0].enh, r[0].action) == ("deferred", "4.3.1", "delayed"), r
        assert mnt + "/root" in r[0].diag and "No space left on device" in r[0].diag
        assert open(os.path.join(mnt, "root"), "rb").read() == before  # never half a message
        # Maildir: the temporary file goes, nothing reaches new/
        env = {"MAILBOX_STYLE": "maildir", "MAILDIR": mnt + "/md/%u"}
        r = deliver(box, ["root"], b"Subject: big\n\n" + b"z" * 400000 + b"\n", env=env)
        assert (r[0].status, r[0].enh) == ("deferred", "4.3.1"), r
        assert os.listdir(mnt + "/md/root/new") == [] and os.listdir(mnt + "/md/root/tmp") == []
    finally:
        subprocess.run(["umount", "-l", mnt])


# ---------------------------------------------------------------- newaliases and --check

def test_newaliases_and_check_report_file_line(box):
    path = write_aliases(box, "ok: root\n\"unterminated: x\n  orphan\nbad: a b\ndup: x\ndup: y\nempty:\n"
                              "inc: :include:relative\n")
    p = box.run("newaliases")
    assert p.returncode == 78
    err = p.stderr.decode()
    for expect in (f"{path}:2: error: unterminated quoted name", f"{path}:4: error: alias 'bad': bad address 'a b'",
                   f"{path}:6: error: duplicate alias 'dup' (first at line 5)",
                   f"{path}:7: error: alias 'empty' has no targets",
                   f"{path}:8: error: alias 'inc': :include: needs an absolute path"):
        assert expect in err, err
    p = box.run(None, "--check")
    assert p.returncode == 78 and f"{path}:6:" in p.stderr.decode()
    write_aliases(box, "ok: root\n")
    p = box.run("newaliases")
    assert p.returncode == 0 and b"1 aliases" in p.stdout
    os.unlink(path)
    assert box.run("newaliases").returncode == 0  # no aliases file is fine
    assert box.run(None, "--check").returncode == 0


def test_maildir_of_a_user_is_owned_by_the_user(box, user):
    env = {"MAILBOX_STYLE": "maildir"}  # the default MAILDIR: ~/Maildir
    r = deliver(box, [user.pw_name], b"Subject: m\n\nx\n", env=env)
    assert r[0].status == "ok", (r, log_text(box))
    md = os.path.join(user.pw_dir, "Maildir")
    for d in (md, md + "/new", md + "/tmp", md + "/cur"):
        st = os.stat(d)
        assert (st.st_uid, st.st_mode & 0o777) == (user.pw_uid, 0o700), d
    (name,) = os.listdir(md + "/new")
    st = os.stat(os.path.join(md, "new", name))
    assert (st.st_uid, st.st_mode & 0o777) == (user.pw_uid, 0o600)


def test_file_and_maildir_alias_targets(box, pubdir):
    os.chmod(pubdir, 0o1777)
    foreign = os.path.join(pubdir, "foreign")
    open(foreign, "w").close()  # root's file: nobody (the alias user) must not write it,
    os.chmod(foreign, 0o666)    # even when the file's mode would let it
    write_aliases(box, f"arch: {pubdir}/archive/\nf: {foreign}\n")
    r = deliver(box, ["arch", "f"], b"Subject: t\n\nx\n")
    assert r[0].status == "ok", (r, log_text(box))
    (name,) = os.listdir(f"{pubdir}/archive/new")
    assert os.stat(f"{pubdir}/archive/new/{name}").st_uid == NOBODY.pw_uid
    assert r[1].status == "deferred" and "owned by another user" in r[1].diag
    assert os.path.getsize(foreign) == 0


def test_mbox_waits_for_a_dotlock_released_in_time(box):
    p = os.path.join(box.mail, "root")
    lock = p + ".lock"
    with open(lock, "w") as f:
        f.write("%d\n" % os.getpid())
    mid = queue_message(box, ["root"], b"Subject: after the lock\n\n")
    ta = TA(box, {"LOCK_TIMEOUT": "20s"})
    try:
        mark_transit(box, mid, ta.p.pid)
        ta.p.stdin.write(f"{mid}\t-\n".encode())
        ta.p.stdin.flush()
        time.sleep(1)
        assert not os.path.exists(p)  # still waiting
        os.unlink(lock)
        line = ta.readline(20)
        assert Report(line).status == "ok"
        assert ta.readline(5) == "#hungry"
    finally:
        ta.close()
    assert b"Subject: after the lock" in open(p, "rb").read()
