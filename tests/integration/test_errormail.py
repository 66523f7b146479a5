"""errormail end to end: a message fails for real (local's unknown user, an SMTP 550 from the
aiosmtpd sink), the scheduler runs one-shot (`scheduler -i -1`) through the error channel, and
the delivery status notification arrives where the sender's mail goes (a local mbox, or the
sink) from the null sender. The DSN is parsed with Python's email package. Also: failures of
null-sender mail go to the postmaster once (never a bounce of a bounce), NOTIFY=NEVER and NOTIFY without FAILURE, RET=HDRS, ENVID and ORCPT
echoed, the size cap, and `errormail -m ID` by hand."""
import email
import mailbox
import os
import re
import subprocess
import time

import pytest

from conftest import BINARY
import spoolfmt


def scheduler_written():
    p = subprocess.run([BINARY, "scheduler", "--help"], capture_output=True)
    return p.returncode == 0 and b"not written yet" not in p.stdout + p.stderr


pytestmark = pytest.mark.skipif(not os.path.exists(BINARY) or not scheduler_written(),
                                reason="the scheduler applet is not written in this build")


def submit(box, *args, body=b"Subject: hello\n\nbody line\n", env=None):
    p = box.run("submit", "-i", *args, input=body, env=env)
    assert p.returncode == 0, p.stderr
    return p


def run_once(box, env=None, *args):
    """The scheduler until nothing is due and no agent runs; returns its log."""
    p = subprocess.run([BINARY, "scheduler", "-i", "-1"] + list(args), env=box.environ(env),
                       capture_output=True, timeout=30)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log
    return log


def queue_empty(box):
    q = os.path.join(box.spool, "queue")
    left = [f for h in os.listdir(q) for f in os.listdir(os.path.join(q, h))] if os.path.isdir(q) else []
    return not left and not spoolfmt.incoming(box.spool)


def mbox_messages(box, user):
    path = os.path.join(box.mail, user)
    if not os.path.exists(path):
        return []
    return list(mailbox.mbox(path))


def parts(dsn):
    """The three parts of a DSN, and the per-message and per-recipient status blocks."""
    assert dsn.get_content_type() == "multipart/report"
    assert dsn.get_param("report-type") == "delivery-status"
    p = dsn.get_payload()
    assert [x.get_content_type() for x in p[:2]] == ["text/plain", "message/delivery-status"]
    blocks = p[1].get_payload()
    return p[0], blocks[0], blocks[1:], p[2]


def check_dsn_headers(dsn, to):
    assert dsn["From"] == "Mail Delivery System <MAILER-DAEMON@box.example>"
    assert dsn["To"] == f"<{to}>"
    assert dsn["Subject"] == "Undelivered Mail Returned to Sender"
    assert dsn["Auto-Submitted"] == "auto-replied"
    assert re.fullmatch(r"<[0-9A-Z]+@box\.example>", dsn["Message-ID"])
    assert dsn["Date"]


def test_local_unknown_users_get_one_dsn(box):
    submit(box, "-f", "root@box.example", "nosuchuser", "other.nobody@box.example",
           body=b"Subject: hello\nX-Marker: original\n\nbody line\n")
    log = run_once(box)
    assert queue_empty(box), log  # the original and the DSN are both gone
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    dsn = msgs[0]
    assert dsn["Return-Path"] == "<>"  # the null envelope sender
    check_dsn_headers(dsn, "root@box.example")
    human, per_msg, rcpts, returned = parts(dsn)
    assert "nosuchuser@box.example" in human.get_payload()
    assert per_msg["Reporting-MTA"] == "dns; box.example"
    assert per_msg["Arrival-Date"] and per_msg["Original-Envelope-Id"] is None
    assert [r["Final-Recipient"] for r in rcpts] == ["rfc822; nosuchuser@box.example",
                                                     "rfc822; other.nobody@box.example"]
    for r in rcpts:
        assert r["Action"] == "failed" and r["Status"] == "5.1.1"
        assert r["Diagnostic-Code"].startswith("X-Spoolbox; unknown user")
        assert r["Last-Attempt-Date"] and r["Remote-MTA"] is None
    assert returned.get_content_type() == "message/rfc822"
    orig = returned.get_payload()[0]
    assert orig["X-Marker"] == "original" and orig.get_payload() == "body line\n"
    # one DSN for both recipients: both failures name the same id
    ids = re.findall(r"rcpt \d: failure reported as ([0-9A-Z]+)", log)
    assert len(ids) == 2 and ids[0] == ids[1], log
    assert dsn["Message-ID"] == f"<{ids[0]}@box.example>"


def test_smtp_550_bounces_to_a_remote_sender_from_the_null_sender(box, sink):
    sink.rcpt_replies["bob@example.com"] = "550 5.1.1 <bob@example.com>: no such user here"
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
    submit(box, "-f", "alice@example.org", "bob@example.com", env=env)
    log = run_once(box, env)
    assert queue_empty(box), log
    assert len(sink.messages) == 1, log
    got = sink.messages[0]
    assert got.mail_from == "<>" and got.rcpt_tos == ["alice@example.org"]
    dsn = email.message_from_bytes(got.data.replace(b"\r\n", b"\n"))
    check_dsn_headers(dsn, "alice@example.org")
    _, per_msg, rcpts, returned = parts(dsn)
    assert len(rcpts) == 1
    r = rcpts[0]
    assert r["Final-Recipient"] == "rfc822; bob@example.com"
    assert r["Status"] == "5.1.1" and r["Action"] == "failed"
    assert r["Remote-MTA"] == "dns; 127.0.0.1[127.0.0.1]"
    assert r["Diagnostic-Code"] == "smtp; 550 5.1.1 <bob@example.com>: no such user here"
    assert returned.get_payload()[0]["Subject"] == "hello"


def test_failures_at_several_domains_make_one_report(box, sink):
    # three threads (local, and smtp to two domains) fail: the sender gets one DSN naming all
    for a in ("bob@example.com", "carol@example.net"):
        sink.rcpt_replies[a] = f"550 5.1.1 <{a}>: no such user here"
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
    submit(box, "-f", "root@box.example", "nosuchuser", "bob@example.com", "carol@example.net", env=env)
    log = run_once(box, env)
    assert queue_empty(box), log
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    _, _, rcpts, _ = parts(msgs[0])
    assert sorted(r["Final-Recipient"] for r in rcpts) == [
        "rfc822; bob@example.com", "rfc822; carol@example.net", "rfc822; nosuchuser@box.example"]
    ids = re.findall(r"rcpt \d: failure reported as ([0-9A-Z]+)", log)
    assert len(ids) == 3 and len(set(ids)) == 1, log


def test_ret_hdrs_envid_and_orcpt_are_echoed(box):
    session = (b"EHLO c\r\nMAIL FROM:<root@box.example> RET=HDRS ENVID=env+2Bid42\r\n"
               b"RCPT TO:<nosuchuser@box.example> NOTIFY=FAILURE,DELAY ORCPT=rfc822;Orig+40Example.net\r\n"
               b"DATA\r\nSubject: hdrs\r\nX-Marker: kept\r\n\r\nsecret body\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0, p.stderr
    log = run_once(box)
    assert queue_empty(box), log
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    human, per_msg, rcpts, returned = parts(msgs[0])
    assert per_msg["Original-Envelope-Id"] == "env+id42"
    assert rcpts[0]["Original-Recipient"] == "rfc822; Orig@Example.net"
    assert rcpts[0]["Final-Recipient"] == "rfc822; nosuchuser@box.example"
    assert returned.get_content_type() == "text/rfc822-headers"
    text = returned.get_payload()
    assert "X-Marker: kept" in text and "Subject: hdrs" in text
    assert b"secret body" not in msgs[0].as_bytes()
    assert "headers only" in human.get_payload()


def postmaster_notice(box, user="root"):
    msgs = mbox_messages(box, user)
    assert len(msgs) == 1, [m["Subject"] for m in msgs]
    n = msgs[0]
    assert n["Subject"] == "Postmaster Copy: Undelivered Mail"
    assert n["Return-Path"] == "<double-bounce@box.example>"
    return n


def test_null_sender_failure_goes_to_the_postmaster_with_headers_only(box):
    submit(box, "-f", "<>", "-N", "never", "nosuchuser",
           body=b"Subject: from the null sender\nX-Marker: null\n\nsecret body\n")
    log = run_once(box)
    assert queue_empty(box), log
    n = postmaster_notice(box)
    human, _, rcpts, returned = parts(n)
    assert "postmaster" in human.get_payload()
    assert [r["Final-Recipient"] for r in rcpts] == ["rfc822; nosuchuser@box.example"]
    assert returned.get_content_type() == "text/rfc822-headers"  # never the body
    assert "X-Marker: null" in returned.get_payload()
    assert b"secret body" not in n.as_bytes()


def test_a_bounce_that_cannot_be_delivered_goes_to_the_postmaster_once(box):
    # the sender does not exist either: its DSN fails, and that failure is the postmaster's
    submit(box, "-f", "ghost@box.example", "nosuchuser", body=b"Subject: first\n\nbody\n")
    log = run_once(box)
    assert queue_empty(box), log
    n = postmaster_notice(box)
    _, _, rcpts, returned = parts(n)
    assert [r["Final-Recipient"] for r in rcpts] == ["rfc822; ghost@box.example"]
    assert "Subject: Undelivered Mail Returned to Sender" in returned.get_payload()
    assert mbox_messages(box, "ghost") == []


# A failure of the null sender: POSTMASTER, what the log says, and how many postmaster notices
# are queued (one, never again, when the notice itself fails).
@pytest.mark.parametrize("postmaster,says,notices", [
    pytest.param("nobody.here", "a postmaster notice could not be delivered: dropped", 1,
                 id="failed_postmaster_notice_is_dropped_not_looped"),
    pytest.param("", "no DSN for the null sender, and POSTMASTER is empty: dropped", 0,
                 id="no_postmaster_drops_null_sender_failures"),
    pytest.param("two@@at.example", "no postmaster notice: POSTMASTER is unusable: ", 0,
                 id="unusable_postmaster_is_said_and_the_failure_closed"),
])
def test_null_sender_failure_is_dropped(box, postmaster, says, notices):
    env = {"POSTMASTER": postmaster}
    submit(box, "-f", "<>", "nosuchuser", env=env)
    log = run_once(box, env)
    assert queue_empty(box), log
    assert says in log
    assert len(re.findall(r"postmaster notice [0-9A-Z]+ queued", log)) == notices, log
    assert mbox_messages(box, "root") == []


def test_ret_default_hdrs_returns_headers_when_ret_is_absent(box):
    env = {"DSN_RET_DEFAULT": "hdrs"}
    submit(box, "-f", "root@box.example", "nosuchuser", body=b"Subject: s\nX-Marker: m\n\nsecret body\n", env=env)
    log = run_once(box, env)
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    _, _, _, returned = parts(msgs[0])
    assert returned.get_content_type() == "text/rfc822-headers"
    assert b"secret body" not in msgs[0].as_bytes()
    # the sender's own RET=FULL still wins over the default
    submit(box, "-f", "root@box.example", "-R", "full", "nosuchuser", body=b"Subject: t\n\nfull body\n", env=env)
    run_once(box, env)
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 2 and b"full body" in msgs[1].as_bytes()


def test_scheduler_n_makes_headers_the_default_return(box):
    submit(box, "-f", "root@box.example", "nosuchuser", body=b"Subject: s\n\nsecret body\n")
    log = run_once(box, None, "-n")
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    assert parts(msgs[0])[3].get_content_type() == "text/rfc822-headers"
    assert b"secret body" not in msgs[0].as_bytes()


@pytest.mark.parametrize("notify,why", [("never", "NOTIFY=NEVER: no DSN wanted"),
                                        ("success,delay", "NOTIFY=SUCCESS,DELAY: no failure DSN wanted")])
def test_notify_without_failure_gets_no_dsn(box, notify, why):
    submit(box, "-f", "root@box.example", "-N", notify, "nosuchuser")
    log = run_once(box)
    assert queue_empty(box), log
    assert mbox_messages(box, "root") == []
    assert why in log, log


def test_large_message_returns_only_its_header(box):
    body = b"Subject: big\nX-Marker: big\n\n" + b"x" * 70 + b"\n" + (b"y" * 99 + b"\n") * 30
    env = {"DSN_RETURN_LIMIT": "1K"}
    submit(box, "-f", "root@box.example", "nosuchuser", body=body, env=env)
    log = run_once(box, env)
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    human, _, _, returned = parts(msgs[0])
    assert returned.get_content_type() == "text/rfc822-headers"
    assert "X-Marker: big" in returned.get_payload()
    assert b"yyyy" not in msgs[0].as_bytes()
    assert "more than the 1024 bytes" in human.get_payload()


def test_by_hand_prints_the_dsn_and_changes_nothing(box):
    # an error channel that cannot start leaves the failure F (docs/scheduler.md)
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('*/* interval=1m expiry=3d retries="1"\nlocal/* command=local\n'
                'error command="/nonexistent/errormail" interval=1h\n')
    submit(box, "-f", "root@box.example", "nosuchuser")
    log = run_once(box)
    ids = spoolfmt.queued_ids(box.spool)
    assert len(ids) == 1, log
    mid = ids[0]
    ctl = os.path.join(box.spool, "queue", mid[-1], mid + ".c")
    before = open(ctl, "rb").read()
    p = box.run("errormail", "-m", mid)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert out.startswith(f"# DSN from <> to <root@box.example> (channel local, host root), for 1 recipient of {mid}:\n")
    assert "\nStatus: 5.1.1\n" in out and "\nFinal-Recipient: rfc822; nosuchuser@box.example\n" in out
    assert re.search(re.escape(mid) + r"/\d+\trfc822;nosuchuser\x01failed\x015\.1\.1\x01- \(by hand: not queued\)\x01\tok ", out)
    assert open(ctl, "rb").read() == before
    assert spoolfmt.incoming(box.spool) == [] and spoolfmt.queued_ids(box.spool) == [mid]
    assert mbox_messages(box, "root") == []
    # the real error channel later (the retry is an hour away: a test clock two hours ahead)
    os.unlink(box.env["SCHEDULER_CONF"])
    log = run_once(box, {"SPOOLBOX_TEST_CLOCK": "+2h"})
    assert queue_empty(box), log
    assert len(mbox_messages(box, "root")) == 1, log


def test_by_hand_usage_and_unknown_message(box):
    assert box.run("errormail", "-x").returncode == 64
    run_once(box)  # makes the spool
    assert box.run("errormail", "-m", "../etc").returncode == 64
    p = box.run("errormail", "-m", "0TOUJKOD84Y6KCBT")
    assert p.returncode == 66, p.stderr


def test_expired_recipient_is_reported_with_4_4_7(box, sink):
    # greylisted for ever: deferred, retried every two hours (test clock), and expired once it
    # has been tried for its whole expiry (6h): on the fourth attempt, not at the first one
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('*/* interval=2h retries="1" expiry=6h\nsmtp/* command=smtp\nlocal/* command=local\n'
                'error interval=5m command=errormail\n')
    sink.rcpt_replies["slow@example.com"] = "451 4.7.1 greylisted"
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
    submit(box, "-f", "root@box.example", "slow@example.com", env=env)
    log = run_once(box, env)
    assert len(spoolfmt.queued_ids(box.spool)) == 1, log
    for hours in (2, 4, 6):
        assert [m for m in mbox_messages(box, "root") if m["Subject"].startswith("Undelivered")] == [], log
        log = run_once(box, dict(env, SPOOLBOX_TEST_CLOCK=f"+{hours}h"))
    assert queue_empty(box), log
    msgs = mbox_messages(box, "root")
    # after 4h of trying (DELAY_WARN) the sender was warned once, then told of the failure
    assert [m["Subject"] for m in msgs] == ["Delayed Mail (still being retried)", "Undelivered Mail Returned to Sender"], log
    msgs = msgs[1:]
    _, _, rcpts, _ = parts(msgs[0])
    r = rcpts[0]
    assert r["Final-Recipient"] == "rfc822; slow@example.com"
    assert r["Action"] == "failed" and r["Status"] == "4.4.7"
    assert r["Remote-MTA"] == "dns; 127.0.0.1[127.0.0.1]"
    assert r["Diagnostic-Code"].startswith("X-Spoolbox; expired: ") and "451 4.7.1 greylisted" in r["Diagnostic-Code"]


def hops(n):
    return b"".join(b"Received: from hop%d.example by hop%d.example; Tue, 24 Nov 2026 10:00:00 +0000\n" % (i, i + 1)
                    for i in range(n))


@pytest.mark.parametrize("given,looped", [(48, False), (50, True)])
def test_too_many_received_fields_bounce_as_a_loop_locally(box, given, looped):
    # submit adds its own Received: line, so 50 given are 51: one more than the limit of 50
    submit(box, "-f", "root@box.example", "root", body=hops(given) + b"Subject: loop?\n\nbody\n")
    log = run_once(box)
    assert queue_empty(box), log
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    if not looped:
        assert msgs[0]["Subject"] == "loop?", log
        return
    assert msgs[0]["Subject"] == "Undelivered Mail Returned to Sender", log
    _, _, rcpts, _ = parts(msgs[0])
    assert rcpts[0]["Status"] == "5.4.6"
    assert "mail forwarding loop: 51 Received: header fields (limit 50)" in rcpts[0]["Diagnostic-Code"]


def test_too_many_received_fields_bounce_before_smtp(box, sink):
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "HOPCOUNT_LIMIT": "5"}
    submit(box, "-f", "root@box.example", "bob@remote.example", body=hops(5) + b"Subject: loop?\n\nbody\n", env=env)
    log = run_once(box, env)
    assert queue_empty(box), log
    assert sink.messages == [], log  # never relayed once more
    msgs = mbox_messages(box, "root")
    assert len(msgs) == 1, log
    _, _, rcpts, _ = parts(msgs[0])
    assert rcpts[0]["Status"] == "5.4.6" and "6 Received: header fields (limit 5)" in rcpts[0]["Diagnostic-Code"]


CLOCK_CONF = ('*/* interval=1m retries="1" expiry=1h\nsmtp/* command=smtp\nlocal/* command=local\n'
              'error interval=5m command=errormail\n')


def greylisted(box, sink):
    """CLOCK_CONF, and one message queued for slow@example.com, whom the sink greylists; the
    environment that sends through the sink."""
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(CLOCK_CONF)
    sink.rcpt_replies["slow@example.com"] = "451 4.7.1 greylisted"
    env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
    submit(box, "-f", "root@box.example", "slow@example.com", env=env)
    return env


def test_clock_stepped_ahead_does_not_expire_untried_mail(box, sink):
    # a router booted with a clock 400 days behind, queued the mail, then NTP stepped it
    env = greylisted(box, sink)
    log = run_once(box, dict(env, SPOOLBOX_TEST_CLOCK="+400d"))
    assert "expired" not in log and mbox_messages(box, "root") == [], log  # deferred, not bounced
    assert len(spoolfmt.queued_ids(box.spool)) == 1, log
    assert "next attempt in 60s" in log, log
    # retried on schedule, one minute later by that clock, and delivered
    del sink.rcpt_replies["slow@example.com"]
    log = run_once(box, dict(env, SPOOLBOX_TEST_CLOCK="+%d" % (400 * 86400 + 90)))
    assert queue_empty(box), log
    assert [m.rcpt_tos for m in sink.messages] == [["slow@example.com"]]
    assert mbox_messages(box, "root") == []


def test_clock_stepped_back_does_not_park_mail(box, sink):
    # deferred with a retry a minute away; then the clock goes back a year (a board that lost
    # its time): the retry comes after at most the clause's longest wait, not in a year
    env = greylisted(box, sink)
    log = run_once(box, env)
    assert len(spoolfmt.queued_ids(box.spool)) == 1, log
    del sink.rcpt_replies["slow@example.com"]
    # a year back, and 600 times faster: the two minutes of the clause pass in 0.2 s
    p = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(dict(env, SPOOLBOX_TEST_CLOCK="-365d*600")),
                         stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 20
        while not sink.messages and time.time() < deadline:
            time.sleep(0.05)
    finally:
        p.terminate()
        log = p.communicate(timeout=10)[1].decode(errors="replace")
    assert [m.rcpt_tos for m in sink.messages] == [["slow@example.com"]], log
    assert "the clock went back" in log, log


def test_errormail_and_hold_log_to_syslog(box, tmp_path):
    """LOG=syslog reaches the syslog socket from every applet, errormail included (it used to
    write to stderr only, which a daemon's scheduler sends nowhere; hold has the same setup)."""
    import socket
    path = str(tmp_path / "log.sock")
    import threading
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(path)
    srv.settimeout(0.5)
    lines = []

    def reader():  # a log daemon: reads as lines come
        while True:
            try:
                lines.append(srv.recv(4096).decode(errors="replace"))
            except (socket.timeout, OSError):
                return
    t = threading.Thread(target=reader)
    t.start()
    try:
        env = {"LOG": "syslog", "SPOOLBOX_SYSLOG_SOCKET": path}
        submit(box, "-f", "root@box.example", "nosuchuser", env=env)
        p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), capture_output=True, timeout=30)
        assert p.returncode == 0, p.stderr
    finally:
        t.join()
        srv.close()
    assert any(ln.startswith("<22>") and "spoolbox/errormail[" in ln and "DSN" in ln for ln in lines), lines
    assert any("spoolbox/local[" in ln for ln in lines) and any("spoolbox/scheduler[" in ln for ln in lines), lines


def test_foreground_scheduler_without_a_syslog_socket_speaks_on_stderr(box, tmp_path):
    env = {"LOG": "syslog", "SPOOLBOX_SYSLOG_SOCKET": str(tmp_path / "no-such-socket")}
    submit(box, "-f", "root@box.example", "root", env=env)
    p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), capture_output=True, timeout=30)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "spoolbox/scheduler[" in err and ": removed\n" in err, err
    assert len(mbox_messages(box, "root")) == 1


def test_a_log_daemon_that_never_reads_blocks_nothing(box, tmp_path):
    import socket
    path = str(tmp_path / "stuck.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(path)  # bound, never read: its queue fills after a few lines
    try:
        env = {"LOG": "syslog", "SPOOLBOX_SYSLOG_SOCKET": path}
        for _ in range(20):
            submit(box, "-f", "root@box.example", "root", env=env)
        p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(env), capture_output=True, timeout=30)
        assert p.returncode == 0, p.stderr
    finally:
        srv.close()
    assert len(mbox_messages(box, "root")) == 20
