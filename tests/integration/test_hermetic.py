"""Hermetic runs (issue 12 point 9): the box names its own spoolbox.conf through SPOOLBOX_CONF,
so no test reads the system's /etc/spoolbox, and an applet given -C passes its file on to the
processes it starts. The planted-file tests run the binary in a private mount namespace whose
/etc is an overlay holding a hostile /etc/spoolbox/spoolbox.conf (nothing touches the real /etc);
tests/hermetic.sh runs the whole suite that way."""
import os

import sysroot
from conftest import BINARY, CONF_KEYS
from spoolfmt import incoming, read_message_file



def planted(box, conf, args, env, input=b""):
    """Runs args with conf as the system's /etc/spoolbox/spoolbox.conf (sysroot.py)."""
    return sysroot.run(box.base, args, env, conf=conf, input=input)


HOSTILE = "MYHOSTNAME=planted.invalid\nSIZELIMIT=10\nROOT=planted-no-such-user\nBOGUS_KEY=1\n"


def test_box_environment_names_its_own_file_and_drops_inherited_keys(box, monkeypatch):
    monkeypatch.setenv("SMARTHOST", "leaked.example:2525")
    monkeypatch.setenv("SPOOLBOX_CONF", "/etc/spoolbox/spoolbox.conf")
    env = box.environ()
    assert env["SPOOLBOX_CONF"] == box.conf_path and os.path.exists(box.conf_path)
    assert "SMARTHOST" not in env
    assert not (CONF_KEYS - set(box.env)) & set(env)


def test_check_reads_the_planted_file_unless_told_not_to(box):
    """The plant is real (without SPOOLBOX_CONF the binary reads it and fails), so the second
    run proves SPOOLBOX_CONF keeps it out."""
    env = {k: v for k, v in box.environ().items() if k != "SPOOLBOX_CONF"}
    p = planted(box, HOSTILE, [BINARY, "--check"], env)
    assert p.returncode == 78, p.stderr
    assert b"/etc/spoolbox/spoolbox.conf:4: error: unknown key BOGUS_KEY" in p.stderr
    p = planted(box, HOSTILE, [BINARY, "--check"], box.environ())
    assert p.returncode == 0, p.stderr
    assert b"BOGUS" not in p.stderr, p.stderr
    assert b"/etc/spoolbox" not in p.stderr + p.stdout


def test_submit_ignores_the_planted_file(box):
    env = {k: v for k, v in box.environ().items() if k != "SPOOLBOX_CONF"}
    mail = b"Subject: hermetic\n\nlonger than ten bytes\n"
    hostile = HOSTILE.replace("BOGUS_KEY=1\n", "")
    p = planted(box, hostile, [BINARY, "submit", "root"], env, input=mail)
    assert p.returncode != 0 and incoming(box.spool) == [], p.stderr
    assert b"10" in p.stderr, p.stderr
    p = planted(box, hostile, [BINARY, "submit", "root"], box.environ(), input=mail)
    assert p.returncode == 0, p.stderr
    (mid,) = incoming(box.spool)
    m, _ = read_message_file(os.path.join(box.spool, "incoming", mid))
    assert m.sender == "root@box.example"


def test_spoolbox_conf_must_exist(box):
    p = box.run("submit", "root", input=b"x\n", env={"SPOOLBOX_CONF": os.path.join(box.base, "missing.conf")})
    assert p.returncode == 78
    assert b"missing.conf: cannot read: No such file or directory" in p.stderr
    assert incoming(box.spool) == []


def test_scheduler_C_reaches_its_agents(box):
    """scheduler -C FILE: the local agent it starts reads FILE, not the system's file (whose
    ROOT= would send root's mail to a user that does not exist)."""
    conf = "".join(f"{k}={v}\n" for k, v in box.env.items() if k != "SPOOLBOX_CONF")
    path = box.write_conf(conf)
    env = {}
    sh = (f'"{BINARY}" submit -C "{path}" root && exec "{BINARY}" scheduler -1 -C "{path}"')
    p = planted(box, HOSTILE.replace("BOGUS_KEY=1\n", "").replace("SIZELIMIT=10\n", ""),
                ["sh", "-c", sh], env, input=b"Subject: via -C\n\nhello\n")
    assert p.returncode == 0, p.stderr
    mbox = os.path.join(box.mail, "root")
    assert os.path.exists(mbox), p.stderr
    assert b"Subject: via -C\n" in open(mbox, "rb").read()
