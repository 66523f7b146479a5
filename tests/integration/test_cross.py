"""Cross-built binaries (`make cross-test`, issue 12 point 7) end to end under qemu-user-static:
sendmail -> spool -> scheduler -> local mbox, and -> smtp over verified STARTTLS to an aiosmtpd
smarthost. Every process of the foreign binary runs under qemu: the scheduler starts its agents
through scheduler.conf commands that name qemu (no binfmt_misc is needed, nor changed).

Runs only when CROSS_ARCHS names the architectures (make cross-test sets it, e.g.
"arm64 armhf"); each then must have build/ARCH-musl-tls/spoolbox, or the test fails."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import ROOT
from smtpsink import SmtpSink, TestCA

QEMU = {"arm64": "qemu-aarch64-static", "armhf": "qemu-arm-static", "armel": "qemu-arm-static",
        "mipsel": "qemu-mipsel-static", "mips64el": "qemu-mips64el-static", "i386": "qemu-i386-static",
        "ppc64el": "qemu-ppc64le-static", "s390x": "qemu-s390x-static", "riscv64": "qemu-riscv64-static"}
ARCHS = os.environ.get("CROSS_ARCHS", "").split()
MSG = b"From: root@box.example\nSubject: cross\n\nbuilt for another machine\n"

pytestmark = pytest.mark.skipif(not ARCHS, reason="CROSS_ARCHS not set (make cross-test)")


class Foreign:
    """One cross-built binary and the qemu that runs it."""

    def __init__(self, arch, variant="musl-tls"):
        self.arch = arch
        self.binary = os.path.join(ROOT, "build", f"{arch}-{variant}", "spoolbox")
        self.qemu = shutil.which(QEMU.get(arch, ""))
        assert os.path.exists(self.binary), f"{self.binary} missing: make CROSS_COMPILE=... variant"
        assert self.qemu, f"{QEMU.get(arch)} missing (qemu-user-static, scripts/deps-cross.sh)"

    def cmd(self, *args):
        return [self.qemu, self.binary] + list(args)

    def scheduler_conf(self, path):
        """The built-in clauses, each agent started through qemu."""
        run = f"{self.qemu} {self.binary}"
        with open(path, "w") as f:
            f.write('*/* interval=1m expiry=3d retries="1 1 2" maxring=0 maxta=0 skew=5 user=root\n'
                    f'local/* interval=10s maxchannel=2 command="{run} local"\n'
                    f'error interval=5m maxchannel=2 command="{run} errormail"\n'
                    f'smtp maxchannel=2 maxring=1 command="{run} smtp"\n')


@pytest.fixture(params=ARCHS)
def foreign(request):
    return Foreign(request.param)


def run_until(box, f, env, done, timeout=120):
    """The foreign scheduler in the foreground until done() (qemu is slow: a generous cap)."""
    f.scheduler_conf(box.env["SCHEDULER_CONF"])
    s = subprocess.Popen(f.cmd("scheduler", "-i"), env=box.environ(env), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    deadline = time.time() + timeout
    try:
        while not done() and time.time() < deadline and s.poll() is None:
            time.sleep(0.1)
    finally:
        s.terminate()
        _, err = s.communicate(timeout=30)
    return err.decode(errors="replace")


def submit(box, f, env, *rcpts):
    p = subprocess.run(f.cmd("submit", "-i", "-f", "root@box.example", *rcpts), input=MSG,
                       capture_output=True, env=box.environ(env), timeout=60)
    assert p.returncode == 0, p.stderr


def test_version_runs_under_qemu(foreign):
    p = subprocess.run(foreign.cmd("--version"), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("spoolbox ") and "+tls" in p.stdout, p


def test_submit_scheduler_local_mbox(box, foreign):
    submit(box, foreign, None, "root")
    mbox = os.path.join(box.mail, "root")
    log = run_until(box, foreign, None, lambda: os.path.exists(mbox) and b"built for another" in open(mbox, "rb").read())
    data = open(mbox, "rb").read()
    assert data.startswith(b"From root@box.example "), (data, log)
    assert b"\nSubject: cross\n" in data and data.endswith(b"built for another machine\n\n"), data


def test_submit_scheduler_smtp_over_verified_starttls(box, foreign, tmp_path):
    ca = TestCA(tmp_path / "ca")
    cert, key = ca.issue("sink", ["localhost"])
    with SmtpSink(tls="starttls", cert=cert, key=key) as sink:
        env = {"SMARTHOST": f"localhost:{sink.port} tls=verify", "CAFILE": ca.cert}
        submit(box, foreign, env, "someone@example.com")
        log = run_until(box, foreign, env, lambda: len(sink.messages) == 1)
        assert len(sink.messages) == 1, log
        m = sink.messages[0]
        assert m.tls and m.mail_from == "root@box.example" and m.rcpt_tos == ["someone@example.com"], log
        assert m.data.endswith(b"built for another machine\r\n"), m.data
