"""spoolbox --install and the spool's modes whatever starts first (issue 12 point 1, docs/spool.md
8), and spoolbox --check's look at the installation. Group creation, setgid binaries and
`nobody` run in a private system (sysroot.py): /etc and /usr are overlays, the real ones stay
untouched."""
import os
import shutil
import stat
import subprocess

import pytest

import sysroot
from conftest import BINARY, IS_ASAN

pytestmark = pytest.mark.skipif(IS_ASAN, reason="LeakSanitizer cannot run in a setgid process")

# a group of this run's own: the machine may have a spoolbox group of an installed spoolbox
GROUP = f"sbx{os.getpid() % 100000}"
NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups"
# the spool entries of docs/spool.md 8: mode, and whether they are in the submit group
MODES = {"": (0o710, True), "tmp": (0o1770, True), "incoming": (0o1770, True), "trigger": (0o620, True),
         "queue": (0o2750, True), "due": (0o750, False), "corrupt": (0o750, False), "hold": (0o2750, True)}


@pytest.fixture
def system(box):
    """A directory nobody can enter holding a copy of the binary, the spool and the mailboxes,
    and the spoolbox.conf the private system gets as /etc/spoolbox/spoolbox.conf."""
    sysroot.need_root()
    top = sysroot.shared_dir()
    try:
        binary = os.path.join(top, "spoolbox")
        shutil.copy(BINARY, binary)
        os.chmod(binary, 0o755)
        spool, mail = os.path.join(top, "spool"), os.path.join(top, "mail")
        os.mkdir(mail)
        conf = (f"SPOOL={spool}\nMYHOSTNAME=box.example\nLOG=stderr\nMBOX_DIR={mail}\nSUBMIT_GROUP={GROUP}\n"
                f"ALIASES={box.etc}/aliases\nSCHEDULER_CONF={box.etc}/scheduler.conf\n")
        yield {"top": top, "bin": binary, "spool": spool, "mail": mail, "conf": conf}
    finally:
        shutil.rmtree(top, ignore_errors=True)


def in_system(box, system, script, input=b""):
    """Runs a shell script as root in the private system with the system's configuration at
    the default path (no SPOOLBOX_CONF: a setgid submit reads only that)."""
    env = {"BIN": system["bin"], "HOME": "/", "GROUP": GROUP}
    return sysroot.run(box.base, ["sh", "-c", script], env, conf=system["conf"], input=input)


def spool_modes(spool, gid):
    """The differences from MODES: [] when the spool is right."""
    bad = []
    for name, (mode, grouped) in MODES.items():
        st = os.lstat(os.path.join(spool, name))
        if stat.S_IMODE(st.st_mode) != mode or (grouped and st.st_gid != gid):
            bad.append((name, oct(stat.S_IMODE(st.st_mode)), st.st_gid))
    return bad


def field(out, prefix):
    for line in out.decode().splitlines():
        if line.startswith(prefix):
            return line[len(prefix):]
    raise AssertionError(f"no line {prefix!r} in {out!r}")


def test_install_as_root_makes_dirs_group_setgid_and_spool(box, system):
    """The measured failure: --install exited 73 when /usr/libexec/spoolbox did not exist."""
    p = in_system(box, system, 'set -e; "$BIN" --install; echo "rc=$?"; ls /usr/libexec/spoolbox; '
                               'echo "gid=$(getent group $GROUP | cut -d: -f3)"')
    out = p.stdout.decode()
    assert p.returncode == 0 and "rc=0" in out, (p.stdout, p.stderr)
    gid = int(field(p.stdout, "gid="))
    assert f"created group {GROUP} (gid {gid}) with groupadd -r" in out
    assert f"made {system['bin']} setgid {GROUP} (mode 2755)" in out
    assert f"spool {system['spool']} has the owners and modes of docs/spool.md 8" in out
    assert "to do as root" not in out
    for agent in ("smtp", "local", "errormail", "hold"):
        assert f"/usr/libexec/spoolbox/{agent} -> {system['bin']}" in out
        assert f"\n{agent}\n" in out
    st = os.stat(system["bin"])
    assert stat.S_IMODE(st.st_mode) == 0o2755 and st.st_gid == gid
    assert spool_modes(system["spool"], gid) == []


def test_install_into_a_new_directory_as_nobody_prints_the_commands(box, system):
    target = os.path.join(system["top"], "links", "bin")
    os.mkdir(os.path.dirname(target))
    os.chown(os.path.dirname(target), 65534, 65534)
    p = in_system(box, system, f'{NOBODY} "$BIN" --install {target}; echo "rc=$?"')
    out = p.stdout.decode()
    assert "rc=0" in out, (p.stdout, p.stderr)
    assert os.readlink(os.path.join(target, "sendmail")) == system["bin"]
    assert os.readlink(os.path.join(target, "smtp")) == system["bin"]
    b = system["bin"]
    assert f"to do as root: groupadd -r {GROUP}   (BusyBox: addgroup -S {GROUP})" in out
    assert f"to do as root: chgrp {GROUP} {b} && chmod 2755 {b}" in out
    assert "to do as root: spoolbox --install" in out
    assert not os.path.exists(system["spool"])
    assert stat.S_IMODE(os.stat(b).st_mode) == 0o755


def test_scheduler_first_then_nobody_submits_and_it_is_delivered(box, system):
    """The measured failure: a scheduler started before any submit made tmp/ and incoming/
    without the submit group, and every non-root sender got 75."""
    mbox = os.path.join(system["mail"], "root")
    script = f'''
groupadd -r $GROUP
chgrp $GROUP "$BIN" && chmod 2755 "$BIN"
"$BIN" scheduler -i 2>"{system['top']}/sched.log" &
s=$!
i=0; while [ ! -p "{system['spool']}/trigger" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
{NOBODY} "$BIN" submit root; echo "submit=$?"
i=0; while ! grep -q "Subject: from nobody" "{mbox}" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
kill $s; wait $s
echo "gid=$(getent group $GROUP | cut -d: -f3)"
'''
    p = in_system(box, system, script, input=b"Subject: from nobody\n\nhello\n")
    log = open(os.path.join(system["top"], "sched.log"), errors="replace").read()
    assert field(p.stdout, "submit=") == "0", (p.stdout, p.stderr, log)
    assert os.path.exists(mbox), log
    data = open(mbox, "rb").read()
    assert b"Subject: from nobody\n" in data and b"Return-Path: <nobody@box.example>" in data
    assert spool_modes(system["spool"], int(field(p.stdout, "gid="))) == []


def test_check_reports_a_spool_without_the_group_and_the_scheduler_repairs_it(box, system):
    """A spool made before the group existed: --check names each wrong entry with the command
    that fixes it (it used to say nothing) — as a warning, since the next scheduler start
    repairs it and an init script that runs --check first must still start the scheduler;
    after that start --check says nothing about it. Something that is not a directory where
    one belongs is an error."""
    script = f'''
"$BIN" scheduler -1 2>/dev/null; echo "first=$?"
groupadd -r $GROUP
chgrp $GROUP "$BIN" && chmod 2755 "$BIN"
"$BIN" --check; echo "check1=$?"
echo "== second check ==" >&2
"$BIN" scheduler -1 2>"{system['top']}/sched.log"; echo "second=$?"
"$BIN" --check; echo "check2=$?"
echo "gid=$(getent group $GROUP | cut -d: -f3)"
'''
    p = in_system(box, system, script)
    out, err = p.stdout.decode(), p.stderr.decode()
    assert field(p.stdout, "first=") == "0" and field(p.stdout, "second=") == "0", (out, err)
    gid = int(field(p.stdout, "gid="))
    sp = system["spool"]
    assert field(p.stdout, "check1=") == "0", (out, err)
    first, second = err.split("== second check ==", 1)
    for name in ("tmp", "incoming"):
        assert (f"{sp}/{name}: warning: group is not SUBMIT_GROUP (1770, uid 0, gid 0); the scheduler repairs "
                f"this when it starts (submit fails for users until then); fix now: chgrp {GROUP} {sp}/{name} && "
                f"chmod 1770 {sp}/{name}") in first, err
    assert f"{sp}/trigger: warning: group is not SUBMIT_GROUP" in first
    log = open(os.path.join(system["top"], "sched.log")).read()
    assert f"repaired {sp}/tmp: mode 1770, group {gid} (was 1770, group 0)" in log
    assert field(p.stdout, "check2=") == "0", (out, err)
    assert sp + "/" not in second, second
    assert spool_modes(sp, gid) == []


def test_check_reports_what_the_scheduler_cannot_repair(box):
    spool = os.path.join(box.base, "spool")
    os.makedirs(os.path.join(spool, "queue"))
    os.symlink("/tmp", os.path.join(spool, "tmp"))
    p = box.run(None, "--check")
    assert p.returncode == 78
    assert (f"{spool}/tmp: error: is not a directory; fix: rm {spool}/tmp and restart the scheduler, "
            "which makes it again").encode() in p.stderr


def test_check_warns_about_a_binary_that_is_not_setgid(box):
    p = box.run(None, "--check")
    assert p.returncode == 0, p.stderr
    assert f"{os.path.realpath(BINARY)}: warning: not setgid: only root can submit mail; fix: ".encode() in p.stderr


def test_check_warns_about_a_spool_in_ram(box):
    """OpenWrt's /var is RAM: queued mail would not survive a reboot (issue 12 point 2)."""
    ram = os.path.join(box.base, "ram")
    os.mkdir(ram)
    script = f'mount -t tmpfs ram {ram} && SPOOL={ram}/spool "$0" --check'
    p = sysroot.run(box.base, ["sh", "-c", script, BINARY], box.environ())
    assert p.returncode == 0, p.stderr
    assert (f"environment: warning: SPOOL={ram}/spool is on tmpfs: queued mail does not survive a reboot; "
            "set SPOOL to a directory on persistent storage").encode() in p.stderr
    on_disk = subprocess.run(["stat", "-f", "-c", "%T", box.base], capture_output=True, text=True).stdout.strip()
    if on_disk not in ("tmpfs", "ramfs"):
        p = box.run(None, "--check")
        assert p.returncode == 0 and b"reboot" not in p.stderr, p.stderr
