"""Installing and packaging: `make install` into a temporary DESTDIR (scripts/install.sh), and
the scripts under packaging/ (OpenWrt procd init, UCI translation and hotplug; Alpine OpenRC;
Buildroot; systemd; runit; s6). The init scripts run under BusyBox ash against small stubs of
their frameworks (tests/integration/pkgstubs/) and start and stop a real scheduler, which then
delivers real mail; nothing here reads /etc or a fixed path of the machine."""
import grp
import os
import re
import shutil
import signal
import stat
import subprocess
import time

import pytest

from conftest import BINARY, ROOT

PKG = os.path.join(ROOT, "packaging")
STUBS = os.path.join(os.path.dirname(__file__), "pkgstubs")


def wait_for(pred, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def names_from_list():
    """Every name the binary answers to, from `spoolbox --list` (applets and their links)."""
    out = subprocess.run([BINARY, "--list"], capture_output=True, text=True, check=True).stdout
    return sorted({ln.split(" -> ")[0] for ln in out.splitlines() if ln})


def install(destdir, **env):
    e = dict(os.environ, DESTDIR=str(destdir))
    e.update(env)
    return subprocess.run(["sh", os.path.join(ROOT, "scripts", "install.sh"), BINARY], env=e,
                          capture_output=True, text=True)


# --- make install -----------------------------------------------------------------------

def test_install_puts_binary_links_manpages_and_config_into_destdir(box, tmp_path):
    dest = tmp_path / "root"
    inst = install(dest)
    assert inst.returncode == 0, inst.stderr
    assert "chgrp spoolbox /usr/sbin/spoolbox && chmod 2755 /usr/sbin/spoolbox" in inst.stdout
    binpath = dest / "usr/sbin/spoolbox"
    assert binpath.is_file() and not binpath.is_symlink()
    assert stat.S_IMODE(binpath.stat().st_mode) == 0o755
    found = {}
    for d in ("usr/sbin", "usr/bin", "usr/lib", "usr/libexec/spoolbox"):
        for n in os.listdir(dest / d) if (dest / d).is_dir() else []:
            if (dest / d / n).is_symlink():
                # relative, so it works inside DESTDIR and after unpacking
                assert not os.readlink(dest / d / n).startswith("/"), n
                assert os.path.samefile(dest / d / n, binpath), n
                found.setdefault(n, []).append(d)
    assert sorted(found) == names_from_list()
    assert sorted(found["sendmail"]) == ["usr/lib", "usr/sbin"]
    assert found["mailq"] == ["usr/bin"] and found["smtp"] == ["usr/libexec/spoolbox"]
    # a link dispatches to its applet: sendmail queues a message in the box's spool
    p = subprocess.run([str(dest / "usr/lib/sendmail"), "-i", "root"], input=b"Subject: via link\n\nhi\n",
                       env=box.environ(), capture_output=True)
    assert p.returncode == 0, p.stderr
    inc = os.path.join(box.spool, "incoming")
    assert any(open(os.path.join(inc, f), "rb").read().find(b"via link") >= 0 for f in os.listdir(inc))
    for page in ("man8/spoolbox.8", "man5/spoolbox.conf.5", "man8/scheduler.8", "man1/mailq.1"):
        assert (dest / "usr/share/man" / page).is_file(), page
    etc = dest / "etc/spoolbox"
    assert (etc / "spoolbox.conf").read_bytes() == open(os.path.join(ROOT, "config/spoolbox.conf.sample"), "rb").read()
    for s in ("spoolbox.conf.sample", "scheduler.conf.sample", "aliases.sample", "credentials.sample"):
        assert (etc / s).is_file(), s
    assert not (etc / "credentials").exists()  # secrets are the admin's to write
    assert (dest / "etc/aliases").is_file()
    c = box.run(None, "--check", "-C", str(etc / "spoolbox.conf"),
                env={"ALIASES": str(dest / "etc/aliases")})
    assert c.returncode == 0, c.stderr


def test_install_never_overwrites_configuration(tmp_path):
    dest = tmp_path / "root"
    (dest / "etc/spoolbox").mkdir(parents=True)
    (dest / "etc/spoolbox/spoolbox.conf").write_text("SMARTHOST=mine.example:587\n")
    (dest / "etc/spoolbox/aliases.sample").write_text("# edited\n")
    (dest / "etc/aliases").write_text("root: admin@example.net\n")
    p = install(dest)
    assert p.returncode == 0, p.stderr
    assert (dest / "etc/spoolbox/spoolbox.conf").read_text() == "SMARTHOST=mine.example:587\n"
    assert (dest / "etc/spoolbox/aliases.sample").read_text() == "# edited\n"
    assert (dest / "etc/aliases").read_text() == "root: admin@example.net\n"
    assert f"{dest}/etc/spoolbox/spoolbox.conf: exists, kept" in p.stdout
    # a second run over a complete install changes nothing and succeeds (links are replaced)
    assert install(dest).returncode == 0


def test_install_prefix_and_mandir(tmp_path):
    dest = tmp_path / "root"
    p = install(dest, PREFIX="/usr/local", SYSCONFDIR="/usr/local/etc")
    assert p.returncode == 0, p.stderr
    assert os.path.samefile(dest / "usr/local/libexec/spoolbox/local", dest / "usr/local/sbin/spoolbox")
    assert os.path.samefile(dest / "usr/local/bin/mailq", dest / "usr/local/sbin/spoolbox")
    assert (dest / "usr/local/share/man/man8/spoolbox.8").is_file()
    assert (dest / "usr/local/etc/spoolbox/spoolbox.conf").is_file()
    assert not (dest / "usr/sbin").exists() and not (dest / "etc").exists()


def test_install_leaves_another_mta_s_file_alone(tmp_path):
    dest = tmp_path / "root"
    (dest / "usr/sbin").mkdir(parents=True)
    (dest / "usr/sbin/sendmail").write_text("#!/bin/sh\n# another MTA\n")
    p = install(dest)
    assert p.returncode == 1
    assert "usr/sbin/sendmail exists and is not a symlink; left alone" in p.stderr
    assert (dest / "usr/sbin/sendmail").read_text() == "#!/bin/sh\n# another MTA\n"
    assert os.path.samefile(dest / "usr/bin/mailq", dest / "usr/sbin/spoolbox")  # the rest is done


@pytest.mark.skipif(os.geteuid() != 0, reason="chgrp to another group needs root")
def test_install_with_submit_group_makes_the_binary_setgid(tmp_path):
    dest = tmp_path / "root"
    group = grp.getgrgid(os.getgid()).gr_name
    p = install(dest, SUBMIT_GROUP=group)
    assert p.returncode == 0, p.stderr
    st = os.stat(dest / "usr/sbin/spoolbox")
    assert stat.S_IMODE(st.st_mode) == 0o2755 and st.st_gid == os.getgid()
    assert "groupadd" not in p.stdout


def test_install_rejects_a_relative_prefix(tmp_path):
    p = install(tmp_path / "root", PREFIX="usr")
    assert p.returncode == 64 and "PREFIX must be an absolute path" in p.stderr


def test_make_install_runs_the_installer_with_its_variables(tmp_path):
    p = subprocess.run(["make", "-n", "-C", ROOT, "install", f"DESTDIR={tmp_path}", "PREFIX=/opt/sb",
                        "SUBMIT_GROUP=mail"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"DESTDIR='{tmp_path}' PREFIX='/opt/sb'" in p.stdout
    assert "SUBMIT_GROUP='mail' sh scripts/install.sh build/" in p.stdout
