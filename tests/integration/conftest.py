"""Shared pytest fixtures: the binary under test, a private spool and configuration per test,
running applets with a timeout, and an aiosmtpd SMTP server on 127.0.0.1 that records what it
receives. The binary comes from $SPOOLBOX (make test sets it to each build variant)."""
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from smtpsink import SmtpSink  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("SPOOLBOX") or os.path.join(ROOT, "spoolbox")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running (run against the product build only)")
    config.addinivalue_line("markers", "root: needs root (tmpfs, other users)")
    config.addinivalue_line("markers", "tls: needs a TLS build")


def binary_features():
    out = subprocess.run([BINARY, "--version"], capture_output=True, text=True).stdout
    return {"tls": "tls=bearssl" in out}


# Every spoolbox.conf key: a value the developer's shell happens to export never reaches a test.
with open(os.path.join(ROOT, "lib", "conf_keys.h")) as _f:
    CONF_KEYS = frozenset(re.findall(r"^CONF\((\w+),", _f.read(), re.M))


HAVE_TLS = binary_features()["tls"] if os.path.exists(BINARY) else False
IS_ASAN = "gcc-asan" in BINARY


class Box:
    """One private spoolbox installation: spool, configuration and mail directories under a
    temporary directory. Every applet run gets the keys below through the environment, and
    SPOOLBOX_CONF names the box's own spoolbox.conf (empty until a test writes it), so that no
    run reads the system's /etc/spoolbox (tests/hermetic.sh proves it)."""

    def __init__(self, base):
        self.base = str(base)
        self.spool = os.path.join(self.base, "spool")
        self.etc = os.path.join(self.base, "etc")
        self.mail = os.path.join(self.base, "mail")
        for d in (self.etc, self.mail):
            os.makedirs(d, exist_ok=True)
        self.conf_path = os.path.join(self.etc, "spoolbox.conf")
        with open(self.conf_path, "w") as f:
            f.write("# this test's spoolbox.conf\n")
        self.env = {
            "SPOOLBOX_CONF": self.conf_path,
            "SPOOL": self.spool,
            "MYHOSTNAME": "box.example",
            "LOG": "stderr",
            "SCHEDULER_CONF": os.path.join(self.etc, "scheduler.conf"),
            "ALIASES": os.path.join(self.etc, "aliases"),
            "MBOX_DIR": self.mail,
            "CREDENTIALS": os.path.join(self.etc, "credentials"),
        }

    def environ(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if k not in self.env and k not in CONF_KEYS and not k.startswith("SPOOLBOX")}
        env.update(self.env)
        if extra:
            env.update(extra)
        return env

    def run(self, applet, *args, input=None, timeout=20, env=None, argv0=None, check=False, **kw):
        """Runs `spoolbox APPLET ARGS` (or the binary under the name argv0) and returns the
        CompletedProcess with bytes stdout/stderr."""
        if isinstance(input, str):
            input = input.encode()
        if argv0:
            cmd = [argv0] + list(args)
            executable = BINARY
        else:
            cmd = [BINARY, applet] + list(args) if applet else [BINARY] + list(args)
            executable = None
        p = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout,
                           env=self.environ(env), executable=executable, **kw)
        if check and p.returncode != 0:
            raise AssertionError(f"{cmd} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
        return p

    def write_conf(self, text):
        with open(self.conf_path, "w") as f:
            f.write(text)
        return self.conf_path


@pytest.fixture
def box(tmp_path):
    return Box(tmp_path)


@pytest.fixture
def binary():
    return BINARY


@pytest.fixture
def smtp_sink():
    """An accepting SMTP server on 127.0.0.1; .messages holds what it received."""
    sink = SmtpSink()
    sink.start()
    yield sink
    sink.stop()
