"""The multicall binary: dispatch by name and by argument, --list, --install, --help, usage
errors, and applets that are not written yet."""
import os
import shutil
import subprocess

import sysroot
from conftest import BINARY

APPLETS = ["cleaner", "errormail", "hold", "local", "mailq", "newaliases", "scheduler", "smtp", "submit"]


def run(args, argv0=None, **kw):
    cmd = ([argv0] if argv0 else [BINARY]) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, executable=BINARY, timeout=10, **kw)


def test_list_names_every_applet_and_link():
    p = run(["--list"])
    assert p.returncode == 0
    lines = p.stdout.splitlines()
    for a in APPLETS:
        assert a in lines
    assert "sendmail -> submit" in lines


def test_every_applet_has_help_by_argument_and_by_name(tmp_path):
    for a in APPLETS:
        p = run([a, "--help"])
        assert p.returncode == 0, a
        assert p.stdout.startswith("usage: "), a
        p2 = run(["--help"], argv0=os.path.join(str(tmp_path), a))
        assert p2.returncode == 0 and p2.stdout == p.stdout, a


def test_sendmail_name_dispatches_to_submit():
    a = run(["--help"], argv0="/usr/sbin/sendmail")
    b = run(["submit", "--help"])
    assert a.returncode == 0 and a.stdout == b.stdout


def test_unknown_applet_is_usage_error():
    p = run(["frobnicate"])
    assert p.returncode == 64
    assert "unknown applet or option 'frobnicate'" in p.stderr
    assert "usage: spoolbox" in p.stderr
    p = run(["--frob"])
    assert p.returncode == 64
    p = run([])
    assert p.returncode == 64
    p = run(["x"], argv0="not-an-applet-name")
    assert p.returncode == 64


def test_spoolbox_help_mentions_install_locations():
    p = run(["--help"])
    assert p.returncode == 0
    for where in ("/usr/sbin/sendmail", "/usr/lib/sendmail", "/usr/bin/mailq"):
        assert where in p.stdout


def install(box, binary, target):
    """--install TARGET with a copy of the binary: as root it also makes a group, the setgid
    bit and the spool, so it runs in a private system (sysroot.py), never on the real one."""
    args = [binary, "--install", target]
    if os.geteuid() == 0:
        return sysroot.run(box.base, args, box.environ())
    return subprocess.run(args, capture_output=True, env=box.environ(), timeout=10)


def test_install_creates_symlinks(box, tmp_path):
    binary = str(tmp_path / "spoolbox")
    shutil.copy(BINARY, binary)
    links = tmp_path / "links"
    p = install(box, binary, str(links))
    assert p.returncode == 0, p.stderr
    for name in APPLETS + ["sendmail"]:
        link = links / name
        assert link.is_symlink(), name
        assert os.path.realpath(link) == binary
    # a link made by --install runs the applet
    q = subprocess.run([str(links / "sendmail"), "--help"], capture_output=True, text=True)
    assert q.returncode == 0 and "usage:" in q.stdout
    # installing again replaces links; a regular file in the way is left alone and reported
    (links / "mailq").unlink()
    (links / "mailq").write_text("not mine")
    p = install(box, binary, str(links))
    assert p.returncode == 73
    assert b"exists and is not a symlink" in p.stderr
    assert (links / "mailq").read_text() == "not mine"


def test_version_reports_tls_option():
    p = run(["--version"])
    assert p.returncode == 0
    assert p.stdout.startswith("spoolbox ")
    assert "tls=" in p.stdout


def test_processes_show_their_applet_names(box, smtp_sink):
    """ps shows "spoolbox: scheduler ..." and "spoolbox: smtp", pgrep finds "scheduler" and
    "smtp" (comm), instead of "exe" for the agents started through /proc/self/exe."""
    import time
    env = {"SMARTHOST": f"[127.0.0.1]:{smtp_sink.port} tls=none", "SMTP_IDLE": "60s"}
    p = box.run("submit", "-i", "someone@example.com", input=b"Subject: ps\n\nbody\n", env=env)
    assert p.returncode == 0, p.stderr
    s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 15
        while not smtp_sink.messages and time.time() < deadline:
            time.sleep(0.05)
        assert smtp_sink.messages
        def comm(pid):
            return open(f"/proc/{pid}/comm").read().strip()
        def cmdline(pid):
            return open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0].decode()
        assert comm(s.pid) == "scheduler"
        assert cmdline(s.pid) == "spoolbox: scheduler -i"
        kids = open(f"/proc/{s.pid}/task/{s.pid}/children").read().split()
        names = {comm(k): cmdline(k) for k in kids}
        assert names.get("smtp") == "spoolbox: smtp", names
    finally:
        s.terminate()
        s.wait(10)
