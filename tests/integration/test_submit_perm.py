"""submit for ordinary users (issue point 10, docs/spool.md 8): a copy of the binary installed
setgid to the submit group lets `nobody` queue mail into a spool with the modes of §8, and nobody
still cannot read the queue. The configuration must come from the default path (an -C or an
environment override drops the group), so the test runs submit in a private mount namespace
with its own /etc/spoolbox bind-mounted there, over a private /etc (setgidlib, sysroot)."""
import os
import pwd
import stat

import pytest

from setgidlib import run_nobody
from spoolfmt import incoming, read_message_file


def test_nobody_submits_through_the_setgid_binary(setgid_install):
    binary, spool, confdir, gid = setgid_install
    p = run_nobody(confdir, [binary, "submit", "root"], input=b"Subject: from nobody\n\nhi\n")
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
    assert p.returncode == 0, p.stderr
    mid = incoming(spool)[0]
    for args in (["cat", os.path.join(spool, "incoming", mid)], ["ls", os.path.join(spool, "incoming")],
                 ["ls", spool], ["ls", os.path.join(spool, "queue")]):
        q = run_nobody(confdir, args)
        assert q.returncode != 0, args
        assert b"Permission denied" in q.stderr, (args, q.stderr)


@pytest.mark.parametrize("args,env", [
    (["root"], {"MYHOSTNAME": "other.example"}),                 # an environment override
    (["-C", "/etc/spoolbox/spoolbox.conf", "root"], {}),         # -C, even naming the default
], ids=["environment", "C"])
def test_an_override_drops_the_group(setgid_install, args, env):
    binary, spool, confdir, gid = setgid_install
    p = run_nobody(confdir, [binary, "submit"] + args, input=b"x\n", env=dict({"PATH": "/usr/bin:/bin"}, **env))
    assert p.returncode == 75, p.stderr
    assert b"cannot be used" in p.stderr or b"Permission denied" in p.stderr, p.stderr
    assert incoming(spool) == []


ETC_SPOOLBOX_AT_IMPORT = os.path.isdir("/etc/spoolbox")


def test_the_setgid_install_leaves_the_real_etc_alone(setgid_install):
    """The binary finds the test's spoolbox.conf at /etc/spoolbox only inside the private mount
    namespace (sysroot.as_user): the real /etc gains no /etc/spoolbox, during the test or after,
    and a real one (tests/hermetic.sh plants one) is hidden, not read."""
    binary, spool, confdir, gid = setgid_install
    assert os.path.isdir("/etc/spoolbox") == ETC_SPOOLBOX_AT_IMPORT
    p = run_nobody(confdir, ["cat", "/etc/spoolbox/spoolbox.conf"])
    assert p.returncode == 0 and p.stdout == open(os.path.join(confdir, "spoolbox.conf"), "rb").read(), p
    p = run_nobody(confdir, [binary, "submit", "root"], input=b"Subject: hermetic\n\nx\n")
    assert p.returncode == 0, p.stderr
    assert os.path.isdir("/etc/spoolbox") == ETC_SPOOLBOX_AT_IMPORT
