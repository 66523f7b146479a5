"""A private system for tests that must change /etc or /usr (a planted /etc/spoolbox, groupadd,
`spoolbox --install` without a directory): the command runs as root in a private mount namespace
where /etc and /usr are overlays on a tmpfs, so nothing reaches the real system and everything
vanishes with the namespace. Files under the test's own directories are real and stay."""
import ctypes
import os
import pwd
import subprocess
import tempfile

import pytest

SETUP = r'''
set -e
top=$1; shift
mount -t tmpfs sysroot "$top"
for d in etc usr; do
	mkdir "$top/$d.up" "$top/$d.work"
	mount -t overlay overlay -o "lowerdir=/$d,upperdir=$top/$d.up,workdir=$top/$d.work" "/$d"
done
mkdir -p /etc/spoolbox
if [ -n "$SYSROOT_CONF" ]; then cp "$SYSROOT_CONF" /etc/spoolbox/spoolbox.conf; fi
exec "$@" <"$SYSROOT_INPUT"
'''


def need_root():
    if os.geteuid() != 0:
        pytest.skip("needs root for a private mount namespace")


def shared_dir(prefix="spoolbox-sys-"):
    """A directory every user may enter (pytest's own are root-only): for binaries and spools
    that `nobody` must reach. The caller removes it."""
    top = tempfile.mkdtemp(prefix=prefix)
    os.chmod(top, 0o755)
    return top


def run(work, args, env, conf=None, input=b"", timeout=60):
    """Runs args in the private system. work: a directory of the test's (scratch space goes
    there); conf: text for /etc/spoolbox/spoolbox.conf, or None for no file."""
    need_root()
    top = os.path.join(work, ".sysroot")
    os.makedirs(top, exist_ok=True)
    inp = os.path.join(work, ".sysroot-input")
    with open(inp, "wb") as f:
        f.write(input)
    extra = {"SYSROOT_INPUT": inp, "SYSROOT_CONF": ""}
    if conf is not None:
        extra["SYSROOT_CONF"] = os.path.join(work, ".sysroot-conf")
        with open(extra["SYSROOT_CONF"], "w") as f:
            f.write(conf)
    env = dict(env, **extra)
    env.setdefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", SETUP, "sh", top] + list(args),
                       capture_output=True, timeout=timeout, env=env)
    if p.returncode != 0 and (b"mount:" in p.stderr or b"unshare:" in p.stderr):
        pytest.skip("cannot make a private mount namespace here: " + p.stderr.decode(errors="replace"))
    return p


CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
# exit codes of a child whose private system could not be made (the caller skips on them)
NS_FAILED = (121, 122, 123)


def drop_to(pw):
    """In a child: the uid and gid of pw (a passwd entry, looked up before the fork), no
    supplementary groups."""
    os.setgroups([])
    os.setgid(pw.pw_gid)
    os.setuid(pw.pw_uid)


def as_user(user="nobody", confdir=None):
    """A preexec_fn: with confdir, a private mount namespace whose /etc is an overlay on a tmpfs
    with confdir bound on /etc/spoolbox (for a setgid binary, which reads only the default path),
    so the real /etc is neither read nor changed, /etc/spoolbox missing or not; then user's
    privileges. Exits 121..123 (NS_FAILED) when the namespace cannot be made."""
    libc = ctypes.CDLL(None, use_errno=True)
    scratch = None
    if confdir is not None:
        scratch = os.path.join(os.path.dirname(os.path.abspath(confdir)), ".sysroot-etc")
        os.makedirs(scratch, exist_ok=True)
    pw = pwd.getpwnam(user)

    def pre():
        if confdir is not None:
            if libc.unshare(CLONE_NEWNS) != 0:
                os._exit(121)
            if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                os._exit(122)
            if libc.mount(b"sysroot", scratch.encode(), b"tmpfs", 0, None) != 0:
                os._exit(123)
            up, work = os.path.join(scratch, "up"), os.path.join(scratch, "work")
            os.mkdir(up)
            os.mkdir(work)
            opts = f"lowerdir=/etc,upperdir={up},workdir={work}".encode()
            if libc.mount(b"overlay", b"/etc", b"overlay", 0, opts) != 0:
                os._exit(123)
            # /etc is the overlay mounted just above (its upper layer on the private tmpfs), so
            # this directory is made there, never on the machine's /etc
            os.makedirs("/etc/spoolbox", exist_ok=True)
            if libc.mount(confdir.encode(), b"/etc/spoolbox", None, MS_BIND, None) != 0:
                os._exit(123)
        drop_to(pw)
    return pre
