"""Logs that log tools read (issue 12 point 5): the REAL pflogsumm (Debian's, fetched by
scripts/pflogsumm.sh) run with --syslog-name=spoolbox over the syslog lines one submit →
scheduler → local/smtp/errormail run wrote counts what happened: received (pickup lines),
delivered, deferred and bounced (the agents' to=<>, relay=, status= lines), bytes (qmgr's
size=). docs/logging.md says which line each applet writes."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BINARY
from smtpsink import SmtpSink
from test_logging import SyslogSocket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PFLOGSUMM = os.path.join(ROOT, "build", "pflogsumm", "usr", "sbin", "pflogsumm")


def have_pflogsumm():
    if not os.path.exists(PFLOGSUMM):
        subprocess.run(["sh", os.path.join(ROOT, "scripts", "pflogsumm.sh"), os.path.join(ROOT, "build", "pflogsumm")],
                       capture_output=True)
    return os.path.exists(PFLOGSUMM) and shutil.which("perl")


def as_log_file(datagrams):
    """What syslogd writes: its own stamp and host name before "ident[pid]: text"."""
    out = []
    for d in datagrams:
        d = re.sub(r"^<\d+>", "", d)
        d = re.sub(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ", "", d)
        out.append("Nov 25 10:00:00 testhost " + d.rstrip("\n"))
    return "\n".join(out) + "\n"


def count(report, what):
    m = re.search(r"^\s*(\d+)\s+" + re.escape(what) + r"\b", report, re.M)
    assert m, report
    return int(m.group(1))


@pytest.mark.skipif(not have_pflogsumm(), reason="pflogsumm could not be fetched (scripts/pflogsumm.sh)")
def test_pflogsumm_counts_what_happened(box, tmp_path):
    sink = SmtpSink().start()
    sink.rcpt_replies["bob@example.com"] = "450 4.2.0 <bob@example.com>: try later"
    path = str(tmp_path / "log.sock")
    log = SyslogSocket(path)
    env = {"LOG": "syslog", "SPOOLBOX_SYSLOG_SOCKET": path, "SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
    try:
        for rcpt, body in (("root", b"Subject: one\n\ndelivered\n"), ("nosuchuser", b"Subject: two\n\nbounced\n"),
                           ("bob@example.com", b"Subject: three\n\ndeferred\n"),
                           ("carol@example.com", b"Subject: four\n\nsent by smtp\n")):
            p = box.run("submit", "-i", "-f", "root@box.example", rcpt, input=body, env=env)
            assert p.returncode == 0, p.stderr
        p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr
    finally:
        lines = log.close()
        sink.stop()
    text = as_log_file(lines)
    (tmp_path / "maillog").write_text(text)
    r = subprocess.run(["perl", PFLOGSUMM, "--syslog-name=spoolbox", str(tmp_path / "maillog")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rep = r.stdout
    # four submitted and the DSN for nosuchuser, each picked up once
    assert count(rep, "received") == 5, rep + text
    # root's message and the DSN (to root) delivered by local, carol's by smtp; nosuchuser
    # bounced; bob deferred (450)
    assert count(rep, "delivered") == 3, rep + text
    assert count(rep, "bounced") == 1, rep + text
    assert count(rep, "deferred") == 1, rep + text
    assert [m.rcpt_tos for m in sink.messages] == [["carol@example.com"]]
    # bytes: the qmgr size= of every received message, and of the two delivered ones
    sizes = dict(re.findall(r"spoolbox/qmgr\[\d+\]: (\w+): from=<[^>]*>, size=(\d+), nrcpt=1 \(queue active\)", text))
    assert len(sizes) == 5, text
    sent = set(re.findall(r": (\w+): to=<[^>]*>, relay=[^,]+, (?:conn_use=\d+, )?delay=[\d.]+, dsn=2\.0\.0, status=sent ", text))
    assert len(sent) == 3, text
    assert count(rep, "bytes received") == sum(int(v) for v in sizes.values()), rep
    assert count(rep, "bytes delivered") == sum(int(sizes[i]) for i in sent), rep
    assert all(int(v) > 20 for v in sizes.values()), sizes
    # one removed line per message that is gone (all but the deferred one)
    assert len(re.findall(r": \w+: removed$", text, re.M)) == 4, text
    assert re.search(r"spoolbox/bounce\[\d+\]: \w+: sender non-delivery notification: \w+$", text, re.M), text
    assert re.search(r"spoolbox/pickup\[\d+\]: \w+: uid=\d+ from=<root@box.example>$", text, re.M), text
