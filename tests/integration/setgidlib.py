"""The setgid install of docs/spool.md 8 for tests where an ordinary user submits or lists: a
copy of the binary setgid to the submit group, a spool with the modes of §8 (on a small tmpfs
when a size is given) and a spoolbox.conf that the binary finds at /etc/spoolbox in a private
mount namespace (sysroot.as_user), so nothing is made on the real system."""
import contextlib
import grp
import os
import shutil
import subprocess

import pytest

import sysroot
from conftest import BINARY, IS_ASAN

GROUP = "mail"
# name, mode, in the submit group (else root's group): docs/spool.md 8
SPOOL_DIRS = (("tmp", 0o1770, True), ("incoming", 0o1770, True), ("queue", 0o2750, True), ("due", 0o750, False),
              ("corrupt", 0o750, False), ("hold", 0o2750, True))


def need_setgid():
    """Skips unless a setgid binary can run here as nobody; returns the submit group's gid."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a setgid binary and switch to nobody")
    if IS_ASAN:
        # a setgid process cannot read its own /proc/self/environ, so ASAN_OPTIONS cannot turn
        # off LeakSanitizer, which then aborts; the product and no-TLS builds run these tests
        pytest.skip("LeakSanitizer cannot run in a setgid process")
    try:
        import pwd
        pwd.getpwnam("nobody")
        return grp.getgrnam(GROUP).gr_gid
    except KeyError:
        pytest.skip(f"no '{GROUP}' group or 'nobody' user on this system")


def make_spool(spool, gid):
    """The spool's directories and trigger with the owners and modes of docs/spool.md 8."""
    os.chown(spool, 0, gid)
    os.chmod(spool, 0o710)
    for d, mode, ours in SPOOL_DIRS:
        p = os.path.join(spool, d)
        os.mkdir(p)
        os.chown(p, 0, gid if ours else 0)
        os.chmod(p, mode)
    trig = os.path.join(spool, "trigger")
    os.mkfifo(trig)
    os.chown(trig, 0, gid)
    os.chmod(trig, 0o620)


@contextlib.contextmanager
def setgid_install(size=None, conf=""):
    """(binary, spool, confdir, gid): the setgid copy, the spool (a tmpfs of size when given)
    and the directory bound on /etc/spoolbox, whose spoolbox.conf has SPOOL, MYHOSTNAME, LOG and
    SUBMIT_GROUP and then conf (may use {top})."""
    gid = need_setgid()
    top = sysroot.shared_dir("spoolbox-setgid-")
    spool = os.path.join(top, "spool")
    os.mkdir(spool)
    mounted = False
    try:
        if size:
            p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0710", "tmpfs", spool],
                               capture_output=True)
            if p.returncode != 0:
                pytest.skip("cannot mount a tmpfs: " + p.stderr.decode())
            mounted = True
        binary = os.path.join(top, "spoolbox")
        shutil.copy(BINARY, binary)
        os.chown(binary, 0, gid)
        os.chmod(binary, 0o2755)
        make_spool(spool, gid)
        confdir = os.path.join(top, "etc")
        os.mkdir(confdir)
        with open(os.path.join(confdir, "spoolbox.conf"), "w") as f:
            f.write(f"SPOOL={spool}\nMYHOSTNAME=box.example\nLOG=stderr\nSUBMIT_GROUP={GROUP}\n"
                    + conf.format(top=top))
        os.chmod(os.path.join(confdir, "spoolbox.conf"), 0o644)
        yield binary, spool, confdir, gid
    finally:
        if mounted:
            subprocess.run(["umount", "-l", spool])
        shutil.rmtree(top, ignore_errors=True)


def as_nobody(confdir):
    """preexec_fn: the private /etc with confdir on /etc/spoolbox, then nobody."""
    return sysroot.as_user("nobody", confdir)


def run_nobody(confdir, args, input=b"", env=None):
    """Runs args as nobody with confdir on /etc/spoolbox; skips when no namespace can be made."""
    env = dict(env) if env is not None else {"PATH": "/usr/bin:/bin"}
    p = subprocess.run(args, input=input, capture_output=True, timeout=20, preexec_fn=as_nobody(confdir), env=env)
    if p.returncode in sysroot.NS_FAILED:
        pytest.skip("cannot make a private mount namespace here: exit %d" % p.returncode)
    return p
