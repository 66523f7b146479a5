"""submit for ordinary users (issue point 10, docs/spool.md 8): a copy of the binary installed
setgid to the submit group lets `nobody` queue mail into a spool with the modes of §8, and nobody
still cannot read the queue. The configuration must come from the default path (an -C or an
environment override drops the group), so the test runs submit in a private mount namespace
with its own /etc/spoolbox bind-mounted there."""
import ctypes
import grp
import os
import pwd
import shutil
import stat
import subprocess
import tempfile

import pytest

from conftest import BINARY, IS_ASAN
from spoolfmt import incoming, read_message_file

CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
GROUP = "mail"


def as_nobody(confdir):
    """preexec_fn: private mount namespace with confdir on /etc/spoolbox, then uid/gid nobody."""
    libc = ctypes.CDLL(None, use_errno=True)
    nobody = pwd.getpwnam("nobody")

    def pre():
        if libc.unshare(CLONE_NEWNS) != 0:
            os._exit(121)
        if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            os._exit(122)
        if libc.mount(confdir.encode(), b"/etc/spoolbox", None, MS_BIND, None) != 0:
            os._exit(123)
        os.setgroups([])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)
    return pre


@pytest.fixture
def setgid_install():
    if os.geteuid() != 0:
        pytest.skip("needs root to make a setgid binary and switch to nobody")
    if IS_ASAN:
        # a setgid process cannot read its own /proc/self/environ, so ASAN_OPTIONS cannot turn
        # off LeakSanitizer, which then aborts; the product and no-TLS builds run these tests
        pytest.skip("LeakSanitizer cannot run in a setgid process")
    try:
        gid = grp.getgrnam(GROUP).gr_gid
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip(f"no '{GROUP}' group or 'nobody' user on this system")
    made_etc = not os.path.isdir("/etc/spoolbox")
    if made_etc:
        os.makedirs("/etc/spoolbox")
    top = tempfile.mkdtemp(prefix="spoolbox-perm-", dir="/tmp")
    os.chmod(top, 0o755)
    try:
        binary = os.path.join(top, "spoolbox")
        shutil.copy(BINARY, binary)
        os.chown(binary, 0, gid)
        os.chmod(binary, 0o2755)
        spool = os.path.join(top, "spool")
        # the modes of docs/spool.md 8
        os.mkdir(spool)
        os.chown(spool, 0, gid)
        os.chmod(spool, 0o710)
        for d, mode, g in (("tmp", 0o1770, gid), ("incoming", 0o1770, gid), ("queue", 0o2750, gid), ("due", 0o750, 0),
                           ("corrupt", 0o750, 0), ("hold", 0o2750, gid)):
            p = os.path.join(spool, d)
            os.mkdir(p)
            os.chown(p, 0, g)
            os.chmod(p, mode)
        trig = os.path.join(spool, "trigger")
        os.mkfifo(trig)
        os.chown(trig, 0, gid)
        os.chmod(trig, 0o620)
        confdir = os.path.join(top, "etc")
        os.mkdir(confdir)
        with open(os.path.join(confdir, "spoolbox.conf"), "w") as f:
            f.write(f"SPOOL={spool}\nMYHOSTNAME=box.example\nLOG=stderr\nSUBMIT_GROUP={GROUP}\n")
        os.chmod(os.path.join(confdir, "spoolbox.conf"), 0o644)
        yield binary, spool, confdir, gid
    finally:
        shutil.rmtree(top, ignore_errors=True)
        if made_etc:
            os.rmdir("/etc/spoolbox")


def run_nobody(confdir, args, input=b"", env=None):
    env = dict(env) if env is not None else {"PATH": "/usr/bin:/bin"}
    return subprocess.run(args, input=input, capture_output=True, timeout=20, preexec_fn=as_nobody(confdir), env=env)


def test_nobody_submits_through_the_setgid_binary(setgid_install):
    binary, spool, confdir, gid = setgid_install
    p = run_nobody(confdir, [binary, "submit", "root"], input=b"Subject: from nobody\n\nhi\n")
    if p.returncode in (121, 122, 123):
        pytest.skip("cannot make a private mount namespace here")
    assert p.returncode == 0, p.stderr
    ids = incoming(spool)
    assert len(ids) == 1
    path = os.path.join(spool, "incoming", ids[0])
    st = os.stat(path)
    nobody = pwd.getpwnam("nobody")
    assert st.st_uid == nobody.pw_uid and st.st_gid == gid
    assert stat.S_IMODE(st.st_mode) == 0o640
    m, msg = read_message_file(path)
    assert m.field("u") == f"{nobody.pw_uid} nobody"
    assert m.sender == "nobody@box.example"
    assert m.recipients == ["root"]
    assert msg.endswith(b"\n\nhi\n")
    assert os.listdir(os.path.join(spool, "tmp")) == []


def test_nobody_cannot_read_the_queue(setgid_install):
    binary, spool, confdir, gid = setgid_install
    p = run_nobody(confdir, [binary, "submit", "root"], input=b"Subject: secret\n\nsecret\n")
    if p.returncode in (121, 122, 123):
        pytest.skip("cannot make a private mount namespace here")
    assert p.returncode == 0, p.stderr
    mid = incoming(spool)[0]
    for args in (["cat", os.path.join(spool, "incoming", mid)], ["ls", os.path.join(spool, "incoming")],
                 ["ls", spool], ["ls", os.path.join(spool, "queue")]):
        q = run_nobody(confdir, args)
        assert q.returncode != 0, args
        assert b"Permission denied" in q.stderr, (args, q.stderr)


def test_an_environment_override_drops_the_group(setgid_install):
    binary, spool, confdir, gid = setgid_install
    p = run_nobody(confdir, [binary, "submit", "root"], input=b"x\n",
                   env={"PATH": "/usr/bin:/bin", "MYHOSTNAME": "other.example"})
    if p.returncode in (121, 122, 123):
        pytest.skip("cannot make a private mount namespace here")
    assert p.returncode == 75
    assert b"cannot be used" in p.stderr or b"Permission denied" in p.stderr
    assert incoming(spool) == []


def test_C_drops_the_group(setgid_install):
    binary, spool, confdir, gid = setgid_install
    p = run_nobody(confdir, [binary, "submit", "-C", "/etc/spoolbox/spoolbox.conf", "root"], input=b"x\n")
    if p.returncode in (121, 122, 123):
        pytest.skip("cannot make a private mount namespace here")
    assert p.returncode == 75
    assert incoming(spool) == []
