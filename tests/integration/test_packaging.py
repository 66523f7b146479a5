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

from conftest import BINARY, IS_ASAN, ROOT, wait_for

PKG = os.path.join(ROOT, "packaging")
STUBS = os.path.join(os.path.dirname(__file__), "pkgstubs")


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
    assert re.search(r"SUBMIT_GROUP='mail' APPLETS_LIST=build/\S+/applets.list sh scripts/install.sh build/", p.stdout)


@pytest.mark.slow
def test_make_install_of_a_profile_links_only_the_applets_it_has(tmp_path):
    """The router profile has no local delivery: no local or newaliases link points at it."""
    dest = tmp_path / "root"
    p = subprocess.run(["make", "-s", "-C", ROOT, "install", "PROFILE=router", f"DESTDIR={dest}"],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    binpath = dest / "usr/sbin/spoolbox"
    out = subprocess.run([str(binpath), "--list"], capture_output=True, text=True, check=True).stdout
    want = sorted({ln.split(" -> ")[0] for ln in out.splitlines() if ln})
    assert "local" not in want
    linked = sorted({n for d in ("usr/sbin", "usr/bin", "usr/lib", "usr/libexec/spoolbox") if (dest / d).is_dir()
                     for n in os.listdir(dest / d) if os.path.islink(dest / d / n)})
    assert linked == want


# --- shell syntax -----------------------------------------------------------------------

def shell_scripts():
    """Every shell script under packaging/ and the stubs: a #!/bin/sh (or rc.common,
    openrc-run, execlineb-free) first line, or a name that says so."""
    found = []
    for d in (PKG, STUBS):
        for base, _, files in os.walk(d):
            for f in files:
                path = os.path.join(base, f)
                with open(path, "rb") as fh:
                    first = fh.readline()
                if first.startswith(b"#!/bin/sh") or first.startswith(b"#!/sbin/openrc-run") \
                        or f.endswith((".sh", ".hotplug", ".init", ".initd", ".confd")) or f in ("run", "finish"):
                    found.append(path)
    return sorted(found)


def test_there_are_shell_scripts_to_check():
    names = {os.path.relpath(p, ROOT) for p in shell_scripts()}
    for want in ("packaging/openwrt/spoolbox/files/spoolbox.init",
                 "packaging/openwrt/spoolbox/files/spoolbox.hotplug",
                 "packaging/alpine/spoolbox.initd", "packaging/runit/spoolbox/run",
                 "packaging/s6/spoolbox/run", "packaging/buildroot/spoolbox/S50spoolbox"):
        assert want in names, want


@pytest.mark.parametrize("script", shell_scripts(), ids=lambda p: os.path.relpath(p, ROOT))
def test_shell_script_parses_under_busybox_ash(script):
    p = subprocess.run(["busybox", "sh", "-n", script], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


# --- OpenWrt: procd init script, UCI translation, hotplug --------------------------------

OPENWRT = os.path.join(PKG, "openwrt", "spoolbox", "files")

LONG_RETRY = """*/*
\tinterval=1h expiry=3d retries="1" maxring=0 maxta=0 user=root
local/*
\tinterval=1h maxchannel=2 command=local
error
\tinterval=5m maxchannel=10 command=errormail
smtp
\tmaxchannel=10 maxring=5 command=smtp
"""


class OpenWrt:
    """A router's view of spoolbox: UCI config, /var/etc, procd state, all under tmp_path."""

    def __init__(self, box, tmp_path):
        self.box = box
        self.uci = tmp_path / "etc-config"
        self.state = tmp_path / "procd"
        self.varetc = tmp_path / "var-etc" / "spoolbox"
        for d in (self.uci, self.state):
            d.mkdir()
        self.conf = self.varetc / "spoolbox.conf"
        self.overrides = tmp_path / "overrides.sh"
        self.overrides.write_text(f"PROG='{BINARY}'\nCONF_DIR='{self.varetc}'\nCONF='{self.conf}'\n"
                                  f"CREDS='{self.varetc}/credentials'\n")
        # sendmail as the OpenWrt build makes it: its default configuration is the generated one
        self.bindir = tmp_path / "bin"
        self.bindir.mkdir()
        self.calls = tmp_path / "sendmail.calls"
        (self.bindir / "sendmail").write_text(
            f"#!/bin/sh\necho \"$*\" >>'{self.calls}'\nexec '{BINARY}' submit -C '{self.conf}' \"$@\"\n")
        os.chmod(self.bindir / "sendmail", 0o755)

    def uci_config(self, extra="", enabled="1"):
        b = self.box
        text = (f"config spoolbox 'main'\n\toption enabled '{enabled}'\n\toption spool '{b.spool}'\n"
                f"\toption myhostname 'box.example'\n\toption log 'stderr'\n\toption mbox_dir '{b.mail}'\n"
                f"\toption scheduler_conf '{b.env['SCHEDULER_CONF']}'\n\toption aliases '{b.env['ALIASES']}'\n"
                f"\toption flush_on_ifup 'wan wwan'\n"
                # the agents stay root like the box's: an installed spoolbox's user must not
                # reach this test's directories
                f"\toption agent_user 'root'\n" + extra)
        if "option username" not in extra:  # else the init script names its own file
            text += f"\toption credentials '{b.env['CREDENTIALS']}'\n"
        (self.uci / "spoolbox").write_text(text)

    def env(self, **extra):
        e = {"PATH": f"{self.bindir}:/usr/sbin:/usr/bin:/sbin:/bin", "UCI_CONFIG_DIR": str(self.uci),
             "STUB_STATE": str(self.state), "STUB_OVERRIDES": str(self.overrides), "HOME": str(self.box.base)}
        e.update(extra)
        return e

    def rc(self, action):
        return subprocess.run(["busybox", "sh", os.path.join(STUBS, "openwrt", "rc.common"),
                               os.path.join(OPENWRT, "spoolbox.init"), action],
                              env=self.env(), capture_output=True, text=True, timeout=60)

    def pid(self):
        f = self.state / "instance.pid"
        return int(f.read_text()) if f.exists() else None

    def hotplug(self, action, interface):
        return subprocess.run(["busybox", "sh", os.path.join(STUBS, "openwrt", "hotplug-call"),
                               os.path.join(OPENWRT, "spoolbox.hotplug")],
                              env=self.env(ACTION=action, INTERFACE=interface), capture_output=True, text=True,
                              timeout=60)

    def sendmail(self, *args, data=b""):
        return subprocess.run([BINARY, "submit", "-C", str(self.conf)] + list(args), input=data,
                              env=self.env(), capture_output=True, timeout=30)


def alive(pid):
    """True while pid runs (a zombie left for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False  # gone between the open and the read: ESRCH


def kill_if_alive(pid):
    if pid and alive(pid):
        os.kill(pid, signal.SIGKILL)


def service_fixture(cls):
    """A fixture giving cls(box, tmp_path), an init system's stub, whose scheduler is killed
    afterwards if a failed test left it running."""
    @pytest.fixture
    def fixture(box, tmp_path):
        o = cls(box, tmp_path)
        yield o
        kill_if_alive(o.pid())
    return fixture


openwrt = service_fixture(OpenWrt)


def mbox(box, user="root"):
    path = os.path.join(box.mail, user)
    return open(path, "rb").read() if os.path.exists(path) else b""


def test_procd_script_starts_and_stops_a_scheduler_that_delivers(openwrt, box):
    openwrt.uci_config("\toption qualifydomain 'example.net'\n")
    p = openwrt.rc("start")
    assert p.returncode == 0, p.stderr
    conf = openwrt.conf.read_text()
    assert f'SPOOL="{box.spool}"\n' in conf and 'QUALIFYDOMAIN="example.net"\n' in conf
    assert "ENABLED" not in conf and "FLUSH_ON_IFUP" not in conf
    params = (openwrt.state / "params").read_text()
    assert f"command {BINARY} scheduler -i -C {openwrt.conf}\n" in params
    assert f"file {openwrt.conf} " in params and "respawn " in params
    assert (openwrt.state / "triggers").read_text() == "spoolbox\n"
    pid = openwrt.pid()
    assert pid and alive(pid)
    s = openwrt.sendmail("-i", "root", data=b"Subject: from cron\n\nthe backup ran\n")
    assert s.returncode == 0, s.stderr
    assert wait_for(lambda: b"the backup ran" in mbox(box)), (openwrt.state / "instance.out").read_text()
    p = openwrt.rc("stop")
    assert p.returncode == 0, p.stderr
    assert wait_for(lambda: not alive(pid), 10)  # the stop returned: its exit is under way
    # with the scheduler gone, new mail waits in the spool
    s = openwrt.sendmail("-i", "root", data=b"Subject: later\n\nafter stop\n")
    assert s.returncode == 0
    time.sleep(0.5)
    assert b"after stop" not in mbox(box)
    assert os.listdir(os.path.join(box.spool, "incoming"))


def test_uci_values_are_quoted_and_the_login_goes_to_a_private_file(openwrt, box):
    openwrt.uci_config("\toption smarthost '[127.0.0.1]:2 tls=none'\n"
                       "\toption username 'router@example.net'\n"
                       "\toption password 'p\"a$s \\w'\n"
                       "\toption allmailfrom 'a$HOME@example.net'\n")
    p = openwrt.rc("start")
    assert p.returncode == 0, p.stderr
    conf = openwrt.conf.read_text()
    assert 'ALLMAILFROM="a\\$HOME@example.net"\n' in conf
    creds = openwrt.varetc / "credentials"
    assert f'CREDENTIALS="{creds}"\n' in conf
    assert stat.S_IMODE(os.stat(creds).st_mode) == 0o600
    assert creds.read_text() == '[127.0.0.1]:2 "router@example.net" "p\\"a$s \\\\w"\n'
    # spoolbox itself reads both back as they were meant (once the scheduler has made its spool:
    # --check looks at the spool's modes too, and the scheduler starts in the background)
    pidfile = os.path.join(box.spool, "scheduler.pid")
    deadline = time.time() + 10
    while not os.path.exists(pidfile) and time.time() < deadline:
        time.sleep(0.05)
    c = subprocess.run([BINARY, "--check", "-C", str(openwrt.conf)], env=openwrt.env(), capture_output=True)
    assert c.returncode == 0, c.stderr
    assert openwrt.pid() and alive(openwrt.pid())
    openwrt.rc("stop")


def test_procd_script_makes_the_directories_above_spool_and_mailboxes(openwrt, box, tmp_path):
    flash = tmp_path / "overlay" / "usr" / "var"
    openwrt.uci_config()
    text = (openwrt.uci / "spoolbox").read_text()
    text = text.replace(f"option spool '{box.spool}'", f"option spool '{flash}/spool/spoolbox'")
    text = text.replace(f"option mbox_dir '{box.mail}'", f"option mbox_dir '{flash}/mail'")
    (openwrt.uci / "spoolbox").write_text(text)
    assert openwrt.rc("start").returncode == 0
    try:
        assert wait_for(lambda: os.path.isdir(flash / "spool" / "spoolbox" / "incoming"))
        s = openwrt.sendmail("-i", "root", data=b"Subject: x\n\non flash\n")
        assert s.returncode == 0, s.stderr
        assert wait_for(lambda: b"on flash" in (flash / "mail" / "root").read_bytes()
                        if (flash / "mail" / "root").exists() else False)
    finally:
        openwrt.rc("stop")


def test_procd_script_does_not_start_with_a_broken_configuration(openwrt):
    openwrt.uci_config("\toption no_such_key 'x'\n")
    p = openwrt.rc("start")
    assert p.returncode != 0
    assert openwrt.pid() is None
    log = (openwrt.state / "logger").read_text()
    assert "not started: spoolbox --check found errors" in log
    assert "unknown key NO_SUCH_KEY" in log


def test_procd_script_starts_nothing_when_disabled(openwrt):
    openwrt.uci_config(enabled="0")
    p = openwrt.rc("start")
    assert p.returncode == 0, p.stderr
    assert openwrt.pid() is None and not openwrt.conf.exists()


def test_openwrt_build_keeps_the_spool_on_flash():
    mk = open(os.path.join(PKG, "openwrt", "spoolbox", "Makefile")).read()
    assert '#define DEFAULT_SPOOL "/usr/var/spool/spoolbox"' in mk
    assert '#define DEFAULT_CONF_PATH "/var/etc/spoolbox/spoolbox.conf"' in mk
    uci = open(os.path.join(OPENWRT, "spoolbox.config")).read()
    assert "option spool '/usr/var/spool/spoolbox'" in uci and "option mbox_dir '/usr/var/mail'" in uci
    init = open(os.path.join(OPENWRT, "spoolbox.init")).read()
    assert "CONF=$CONF_DIR/spoolbox.conf" in init and "CONF_DIR=/var/etc/spoolbox" in init


def test_hotplug_wan_up_makes_the_scheduler_retry_deferred_mail_at_once(openwrt, box, smtp_sink):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(LONG_RETRY)
    smtp_sink.mail_reply = "451 4.4.1 no route yet"
    openwrt.uci_config(f"\toption smarthost '[127.0.0.1]:{smtp_sink.port} tls=none'\n")
    assert openwrt.rc("start").returncode == 0
    s = openwrt.sendmail("-i", "admin@example.net", data=b"Subject: wan flapped\n\nlink down 3h\n")
    assert s.returncode == 0, s.stderr
    import spoolfmt

    assert wait_for(lambda: spoolfmt.has_attempts(box.spool)), (openwrt.state / "instance.out").read_text()
    smtp_sink.mail_reply = None  # the uplink works now; the next retry is an hour away
    # other events and interfaces do not run the queue
    for action, iface in (("ifdown", "wan"), ("ifup", "lan"), ("ifupdate", "wan")):
        assert openwrt.hotplug(action, iface).returncode == 0
    assert not openwrt.calls.exists()
    p = openwrt.hotplug("ifup", "wwan")
    assert p.returncode == 0, p.stderr
    assert openwrt.calls.read_text() == "-q\n"
    assert wait_for(lambda: len(smtp_sink.messages) == 1), (openwrt.state / "instance.out").read_text()
    assert smtp_sink.messages[0].rcpt_tos == ["admin@example.net"]
    assert b"link down 3h" in smtp_sink.messages[0].data
    assert "wwan is up: running the queue" in (openwrt.state / "logger").read_text()
    openwrt.rc("stop")


# --- Alpine: OpenRC ---------------------------------------------------------------------

def conf_from_box(box, extra=""):
    """The box's settings as a spoolbox.conf, for scripts that run with a clean environment."""
    return box.write_conf("".join(f'{k}="{v}"\n' for k, v in box.env.items() if k != "SPOOLBOX_CONF") + extra)


class OpenRC:
    def __init__(self, box, tmp_path):
        self.box = box
        self.confd = tmp_path / "conf.d"
        self.confd.mkdir()
        self.pidfile = tmp_path / "run" / "spoolbox.pid"
        self.pidfile.parent.mkdir()
        self.log = tmp_path / "scheduler.log"
        self.overrides = tmp_path / "overrides.sh"
        self.overrides.write_text(f"command='{BINARY}'\npidfile='{self.pidfile}'\n")
        (self.confd / "spoolbox").write_text(f"SPOOLBOX_CONF='{box.conf_path}'\nSPOOLBOX_OPTS='-L {self.log}'\n")

    def rc(self, action):
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "CONFD_DIR": str(self.confd),
               "STUB_OVERRIDES": str(self.overrides), "HOME": self.box.base}
        return subprocess.run(["busybox", "sh", os.path.join(STUBS, "openrc", "openrc-run"),
                               os.path.join(PKG, "alpine", "spoolbox.initd"), action],
                              env=env, capture_output=True, text=True, timeout=90)

    def pid(self):
        return int(self.pidfile.read_text()) if self.pidfile.exists() else None

    def logtext(self):
        return self.log.read_text() if self.log.exists() else ""


openrc = service_fixture(OpenRC)


def test_openrc_script_starts_reloads_flushes_and_stops_a_scheduler(openrc, box):
    conf_from_box(box)
    p = openrc.rc("start")
    assert p.returncode == 0, p.stdout + p.stderr
    assert wait_for(lambda: openrc.pid() and alive(openrc.pid()))
    pid = openrc.pid()
    # start-stop-daemon writes the pid before it execs the scheduler
    assert wait_for(lambda: open(f"/proc/{pid}/cmdline", "rb").read().startswith(
        b"spoolbox: scheduler -i -C " + box.conf_path.encode()))
    s = box.run("submit", "-i", "root", input=b"Subject: smartd\n\ndisk sda is failing\n")
    assert s.returncode == 0, s.stderr
    assert wait_for(lambda: b"disk sda is failing" in mbox(box)), openrc.logtext()
    assert openrc.rc("flush").returncode == 0
    assert wait_for(lambda: "trigger: run the whole queue" in openrc.logtext()), openrc.logtext()
    assert openrc.rc("reload").returncode == 0
    assert wait_for(lambda: "reload: " in openrc.logtext()), openrc.logtext()
    assert "already running" in openrc.rc("start").stdout  # no second scheduler
    assert openrc.pid() == pid
    p = openrc.rc("stop")
    assert p.returncode == 0, p.stdout + p.stderr
    assert wait_for(lambda: not alive(pid), 10)  # the stop returned: its exit is under way


def test_openrc_script_refuses_to_start_with_a_broken_configuration(openrc, box):
    conf_from_box(box, "SMARTHOST_TYPO=x\n")
    p = openrc.rc("start")
    assert p.returncode == 1
    assert "spoolbox --check found errors: not starting" in p.stderr
    assert "unknown key SMARTHOST_TYPO" in p.stderr
    assert openrc.pid() is None
    assert openrc.rc("checkconfig").returncode == 1


def test_apkbuild_checksums_match_its_local_files():
    import hashlib
    d = os.path.join(PKG, "alpine")
    text = open(os.path.join(d, "APKBUILD")).read()
    sums = dict((name, h) for h, name in re.findall(r"^([0-9a-f]{128})  (\S+)$", text, re.M))
    for f in ("spoolbox.initd", "spoolbox.confd"):
        want = hashlib.sha512(open(os.path.join(d, f), "rb").read()).hexdigest()
        assert sums.get(f) == want, f"APKBUILD: run abuild checksum (or set {want}  {f})"
    assert "pre-install" in text and os.path.exists(os.path.join(d, "spoolbox.pre-install"))


# --- runit and s6: the real supervisors run the scripts -----------------------------------

SUPERVISORS = {
    # name: (supervise a directory, take it down, let the supervisor exit)
    "runit": (["runsv"], ["sv", "down"], ["sv", "exit"]),
    "s6": (["s6-supervise"], ["s6-svc", "-d"], ["s6-svc", "-x"]),
}


@pytest.fixture(params=sorted(SUPERVISORS))
def supervised(request, box, tmp_path):
    """The packaging's service directory copied to tmp_path, with `spoolbox` on PATH (the run
    scripts call it by name) and the box's settings in the environment."""
    name = request.param
    if not shutil.which(SUPERVISORS[name][0][0]):
        pytest.fail(f"{SUPERVISORS[name][0][0]} is missing: scripts/deps.sh installs it")
    svc = tmp_path / "service" / "spoolbox"
    shutil.copytree(os.path.join(PKG, name, "spoolbox"), svc, symlinks=True)
    shutil.rmtree(svc / "log", ignore_errors=True)  # its logger writes /var/log: not in a test
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(BINARY, bindir / "spoolbox")
    env = box.environ({"PATH": f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin",
                       "LOG": "stderr"})
    if IS_ASAN and name == "runit":
        # `sv down` sends CONT right after TERM; arriving while LeakSanitizer's exit-time
        # tracer stops the process, it leaves the ASan build spinning in exit (the static
        # product has no such tracer)
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    procs = []

    def start():
        log = open(tmp_path / "supervisor.log", "ab")  # the service's output too (exec 2>&1)
        p = subprocess.Popen(SUPERVISORS[name][0] + [str(svc)], env=env, stdout=log, stderr=log)
        procs.append(p)
        return p

    yield name, svc, env, start
    for p in procs:
        if p.poll() is None:
            subprocess.run(SUPERVISORS[name][1] + [str(svc)], env=env, capture_output=True)
            subprocess.run(SUPERVISORS[name][2] + [str(svc)], env=env, capture_output=True)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def scheduler_pids(spool):
    """Schedulers running on this spool (its pid file names the one holding the lock)."""
    f = os.path.join(spool, "scheduler.pid")
    try:
        pid = int(open(f).read().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    return [pid] if alive(pid) else []


def test_run_script_under_its_supervisor_delivers_and_stops(supervised, box, tmp_path):
    name, svc, env, start = supervised
    sup = start()
    assert wait_for(lambda: scheduler_pids(box.spool)), name
    pid = scheduler_pids(box.spool)[0]
    s = box.run("submit", "-i", "root", input=b"Subject: supervised\n\nby " + name.encode() + b"\n")
    assert s.returncode == 0, s.stderr
    assert wait_for(lambda: b"by " + name.encode() in mbox(box))
    d = subprocess.run(SUPERVISORS[name][1] + [str(svc)], env=env, capture_output=True, text=True)
    assert d.returncode == 0, d.stderr
    assert wait_for(lambda: not alive(pid)), open(tmp_path / "supervisor.log").read()
    assert sup.poll() is None  # the supervisor stays, the service is down


def test_supervisor_does_not_restart_a_scheduler_with_a_broken_configuration(supervised, box, tmp_path):
    name, svc, env, start = supervised
    env["SIZELIMIT"] = "lots"  # not a size: the scheduler refuses the configuration (78)
    sup = start()
    # the finish script takes the service down instead of restarting it every second
    if name == "runit":
        def down():
            out = subprocess.run(["sv", "status", str(svc)], env=env, capture_output=True, text=True).stdout
            return out.startswith("down:") and "want up" not in out
    else:
        def down():
            out = subprocess.run(["s6-svstat", "-o", "up,wantedup", str(svc)], capture_output=True, text=True).stdout
            return out.split() == ["false", "false"]
    assert wait_for(down), open(tmp_path / "supervisor.log").read()
    assert sup.poll() is None


# --- systemd ----------------------------------------------------------------------------

UNIT = os.path.join(PKG, "systemd", "spoolbox.service")


def unit_settings(path=UNIT):
    """[Service] settings of a unit file: name -> list of values (in order)."""
    out, section = {}, None
    for line in open(path):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        k, _, v = line.partition("=")
        out.setdefault((section, k), []).append(v)
    return out


def writable_under(settings, path):
    """Whether the service may write path, by systemd.exec(5)'s rules for ProtectSystem,
    ProtectHome, ReadOnlyPaths, InaccessiblePaths and ReadWritePaths (the most specific wins)."""
    get = lambda k: settings.get(("Service", k), [""])[-1]
    rules = []  # (prefix, writable)
    ps = get("ProtectSystem")
    if ps in ("yes", "true", "full", "strict"):
        rules += [("/usr", False), ("/boot", False), ("/efi", False)]
    if ps in ("full", "strict"):
        rules.append(("/etc", False))
    if ps == "strict":
        rules += [("/", False), ("/dev", True), ("/proc", True), ("/sys", True)]
    if get("ProtectHome") in ("yes", "true", "read-only", "tmpfs"):
        rules += [("/home", False), ("/root", False), ("/run/user", False)]
    for k, w in (("ReadOnlyPaths", False), ("InaccessiblePaths", False), ("ReadWritePaths", True)):
        for v in settings.get(("Service", k), []):
            rules += [(p.lstrip("-+"), w) for p in v.split()]
    best = ("", True)
    for prefix, w in rules:
        p = prefix.rstrip("/") or "/"
        if (path == p or path.startswith(p.rstrip("/") + "/")) and len(p) >= len(best[0]):
            best = (p, w)
    return best[1]


def test_systemd_sandbox_still_lets_local_delivery_work():
    s = unit_settings()
    svc = lambda k: s.get(("Service", k), [""])[-1]
    # local writes mbox files, Maildirs in homes (root's too) and the spool
    for path in ("/var/mail/alice", "/var/spool/mail/alice", "/var/spool/spoolbox/queue/x",
                 "/home/alice/Maildir/new/x", "/root/Maildir/new/x"):
        assert writable_under(s, path), path
    # and the sandbox is there: the system itself is read-only
    for path in ("/usr/sbin/spoolbox", "/etc/spoolbox/spoolbox.conf", "/boot/vmlinuz"):
        assert not writable_under(s, path), path
    # deliveries run as the recipient: root with setuid/setgid
    assert svc("User") in ("", "root")
    caps = svc("CapabilityBoundingSet")
    for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SYS_ADMIN", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER"):
        assert (cap in caps.split()) != caps.startswith("~"), cap  # kept: listed, or not excluded
    # a |command that calls the setgid sendmail must keep its group
    assert svc("NoNewPrivileges") in ("", "no", "false")
    assert svc("ExecStart") == "/usr/sbin/spoolbox scheduler -i"
    assert svc("Type") == "simple" and svc("KillMode") == "mixed"


def test_systemd_unit_verifies(tmp_path):
    root = tmp_path / "root"
    assert install(root).returncode == 0
    units = root / "usr/lib/systemd/system"
    units.mkdir(parents=True)
    shutil.copy(UNIT, units)
    # the targets it names, and the kill its ExecReload runs
    for f in os.listdir("/usr/lib/systemd/system"):
        if f.endswith(".target"):
            shutil.copy(os.path.join("/usr/lib/systemd/system", f), units)
    (root / "bin").mkdir()
    shutil.copy("/bin/kill", root / "bin/kill")
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", f"--root={root}", "spoolbox.service"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout + p.stderr == "", p.stdout + p.stderr


def test_systemd_unit_is_more_confined_than_a_bare_one(tmp_path):
    bare = tmp_path / "bare.service"
    bare.write_text("[Service]\nExecStart=/usr/sbin/spoolbox scheduler -i\n")

    def exposure(unit):
        p = subprocess.run(["systemd-analyze", "security", "--offline=true", str(unit)],
                           capture_output=True, text=True)
        m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", p.stdout + p.stderr)
        assert m, p.stdout + p.stderr
        return float(m.group(1))

    assert exposure(UNIT) <= exposure(bare) - 3.0


# --- Buildroot: BusyBox init script with BusyBox's start-stop-daemon ----------------------

def test_buildroot_init_script_starts_and_stops_a_scheduler(box, tmp_path):
    conf_from_box(box)
    # the script's paths, moved into tmp_path; everything else runs as written
    text = open(os.path.join(PKG, "buildroot", "spoolbox", "S50spoolbox")).read()
    pidfile = tmp_path / "spoolbox.pid"
    default = tmp_path / "default-spoolbox"
    default.write_text(f'SPOOLBOX_CONF="{box.conf_path}"\n')
    for old, new in (("DAEMON=/usr/sbin/spoolbox", f"DAEMON={BINARY}"),
                     ("PIDFILE=/var/run/spoolbox.pid", f"PIDFILE={pidfile}"),
                     ("/etc/default/spoolbox", str(default))):
        assert old in text
        text = text.replace(old, new)
    script = tmp_path / "S50spoolbox"
    script.write_text(text)
    bb = tmp_path / "busybox-bin"  # BusyBox's applets first, as on a Buildroot system
    bb.mkdir()
    for applet in ("start-stop-daemon", "sleep", "cat", "rm", "printf"):
        os.symlink(shutil.which("busybox"), bb / applet)
    env = box.environ({"PATH": f"{bb}:/usr/bin:/bin"})
    run = lambda action: subprocess.run(["busybox", "sh", str(script), action], env=env, capture_output=True,
                                        text=True, timeout=60)
    p = run("start")
    assert p.returncode == 0 and p.stdout == "Starting spoolbox: OK\n", p.stdout + p.stderr
    assert wait_for(lambda: pidfile.exists() and alive(int(pidfile.read_text())))
    pid = int(pidfile.read_text())
    try:
        s = box.run("submit", "-i", "root", input=b"Subject: initramfs\n\nrescue log\n")
        assert s.returncode == 0, s.stderr
        assert wait_for(lambda: b"rescue log" in mbox(box))
        assert run("flush").returncode == 0
        p = run("stop")
        assert p.returncode == 0 and p.stdout == "Stopping spoolbox: OK\n", p.stdout + p.stderr
        assert wait_for(lambda: not alive(pid), 10) and not pidfile.exists()
    finally:
        kill_if_alive(pid)
    box.write_conf("NO_SUCH_KEY=1\n")
    p = run("start")
    assert p.returncode == 1 and "FAIL (spoolbox --check found errors)" in p.stdout
    assert not pidfile.exists()


# --- package builds, with stubs of the build systems -------------------------------------

def fake_bearssl_tarball(tmp_path):
    """A bearssl-0.6.tar.gz for builds that cannot download: its `make lib` provides the
    system's libbearssl.a and headers where the real tarball's build puts them."""
    src = tmp_path / "bearssl-src" / "bearssl-0.6"
    (src / "inc").mkdir(parents=True)
    for f in os.listdir("/usr/include"):
        if f.startswith("bearssl"):
            p = os.path.join("/usr/include", f)
            (shutil.copytree if os.path.isdir(p) else shutil.copy)(p, src / "inc" / f)
    import glob
    liba = (glob.glob("/usr/lib/*/libbearssl.a") + glob.glob("/usr/lib/libbearssl.a"))[0]
    (src / "Makefile").write_text(f"lib:\n\tmkdir -p build && cp {liba} build/libbearssl.a\n")
    dl = tmp_path / "dl"
    dl.mkdir()
    subprocess.run(["tar", "-czf", str(dl / "bearssl-0.6.tar.gz"), "-C", str(src.parent), "bearssl-0.6"], check=True)
    return dl


@pytest.mark.slow
def test_openwrt_package_builds_and_installs_with_the_sdk_s_steps(tmp_path):
    dl = fake_bearssl_tarball(tmp_path)
    ipkg = tmp_path / "ipkg"
    p = subprocess.run(["make", "-j2", "-C", os.path.join(PKG, "openwrt", "spoolbox"),
                        f"TOPDIR={STUBS}/openwrt/sdk", f"DL_DIR={dl}", f"BUILD_DIR={tmp_path}/build",
                        f"IPKG_ROOT={ipkg}", "TARGET_CC=musl-gcc", "install"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    binary = (ipkg / "usr/sbin/spoolbox").read_bytes()
    # built with the router's defaults: spool on flash, configuration made from UCI
    assert b"/usr/var/spool/spoolbox\0" in binary and b"/var/etc/spoolbox/spoolbox.conf\0" in binary
    assert os.path.samefile(ipkg / "usr/sbin/sendmail", ipkg / "usr/sbin/spoolbox")
    v = subprocess.run([str(ipkg / "usr/sbin/spoolbox"), "--version"], capture_output=True, text=True)
    assert "tls=bearssl" in v.stdout
    for f, mode in (("etc/init.d/spoolbox", 0o755), ("etc/config/spoolbox", 0o600),
                    ("etc/hotplug.d/iface/50-spoolbox", 0o644), ("etc/uci-defaults/90-spoolbox", 0o755)):
        assert stat.S_IMODE(os.stat(ipkg / f).st_mode) == mode, f
    assert not (ipkg / "usr/share").exists()  # no manual pages on a router
    assert not (ipkg / "etc/spoolbox/spoolbox.conf").exists()  # it is made from UCI


@pytest.mark.slow
def test_apkbuild_builds_and_packages_with_abuild_s_steps(tmp_path):
    """The APKBUILD's prepare, build and package run as abuild runs them (srcdir holding the
    unpacked sources and links to the local files, pkgdir empty), in BusyBox ash."""
    dl = fake_bearssl_tarball(tmp_path)
    srcdir, pkgdir = tmp_path / "src", tmp_path / "pkg"
    srcdir.mkdir()
    subprocess.run(["tar", "-xzf", str(dl / "bearssl-0.6.tar.gz"), "-C", str(srcdir)], check=True)
    for f in ("spoolbox.initd", "spoolbox.confd"):
        os.symlink(os.path.join(PKG, "alpine", f), srcdir / f)
    script = f"""
set -e
srcdir={srcdir} pkgdir={pkgdir} startdir={PKG}/alpine CC=musl-gcc CFLAGS=-Os
default_prepare() {{ :; }}
# abuild runs package() under fakeroot with pkggroups made: record what it asks for instead
chgrp() {{ echo "chgrp $*" >>{tmp_path}/chgrp; }}
. ./APKBUILD
prepare
build
package
"""
    p = subprocess.run(["busybox", "sh", "-c", script], cwd=os.path.join(PKG, "alpine"), capture_output=True,
                       text=True, timeout=600, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert (tmp_path / "chgrp").read_text() == f"chgrp spoolbox {pkgdir}/usr/sbin/spoolbox\n"
    st = os.stat(pkgdir / "usr/sbin/spoolbox")
    assert stat.S_IMODE(st.st_mode) == 0o2755
    assert b"/var/spool/spoolbox\0" in (pkgdir / "usr/sbin/spoolbox").read_bytes()
    assert os.path.samefile(pkgdir / "usr/bin/mailq", pkgdir / "usr/sbin/spoolbox")
    assert (pkgdir / "etc/init.d/spoolbox").read_bytes() == open(os.path.join(PKG, "alpine", "spoolbox.initd"), "rb").read()
    assert stat.S_IMODE(os.stat(pkgdir / "etc/init.d/spoolbox").st_mode) == 0o755
    assert (pkgdir / "etc/conf.d/spoolbox").is_file()
    assert (pkgdir / "usr/share/man/man8/spoolbox.8").is_file()  # for the -doc subpackage


@pytest.mark.slow
def test_buildroot_package_builds_and_installs_with_buildroot_s_steps(tmp_path):
    dl = fake_bearssl_tarball(tmp_path)
    target = tmp_path / "target"
    p = subprocess.run(["make", "-j2", "-f", os.path.join(STUBS, "buildroot", "Makefile"),
                        f"PKGMK={PKG}/buildroot/spoolbox/spoolbox.mk", f"BUILD_DIR={tmp_path}/build",
                        f"TARGET_DIR={target}", f"DL_DIR={dl}", "BR2_PACKAGE_SPOOLBOX_TLS=y",
                        'BR2_PACKAGE_SPOOLBOX_SPOOL="/data/spool/spoolbox"', "spoolbox-install"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    binary = target / "usr/sbin/spoolbox"
    assert b"/data/spool/spoolbox\0" in binary.read_bytes()  # the spool directory option
    v = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    assert "tls=bearssl" in v.stdout
    assert os.path.samefile(target / "usr/lib/sendmail", binary)
    assert stat.S_IMODE(os.stat(target / "etc/init.d/S50spoolbox").st_mode) == 0o755
    # setgid to the submit group, which the users table creates
    perms = (tmp_path / "build" / "spoolbox.permissions").read_text().split()
    assert perms[:5] == ["/usr/sbin/spoolbox", "f", "2755", "0", "spoolbox"]
    users = (tmp_path / "build" / "spoolbox.users").read_text().split()
    assert users[:4] == ["-", "-1", "spoolbox", "-1"]
