"""A private system for tests that must change /etc or /usr (a planted /etc/spoolbox, groupadd,
`spoolbox --install` without a directory): the command runs as root in a private mount namespace
where /etc and /usr are overlays on a tmpfs, so nothing reaches the real system and everything
vanishes with the namespace. Files under the test's own directories are real and stay."""
import os
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
