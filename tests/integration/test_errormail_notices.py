"""Success and delay notices end to end (issue 15 points 2 and 3; docs/errormail.md): real
submit, scheduler, local, smtp and errormail against local mailboxes and aiosmtpd servers with
and without the DSN extension. The notices are parsed with Python's email package; the control
files are read with spoolfmt. Time moves with the injectable clock (SPOOLBOX_TEST_CLOCK)."""
import os
import re
import signal
import subprocess

import pytest

from conftest import BINARY
from smtpsink import SmtpSink
import spoolfmt
from test_errormail import mbox_messages, parts, queue_empty, run_once, submit
from test_local_e2e import wait_for

pytestmark = pytest.mark.skipif(not os.path.exists(BINARY), reason="no binary")

SENDER = "root@box.example"
SUCCESS = "Successful Mail Delivery Report"
DELAYED = "Delayed Mail (still being retried)"


def notices(box, subject, user="root"):
    return [m for m in mbox_messages(box, user) if m["Subject"] == subject]


def made(box, subject):
    """The distinct notices (a notice delivered twice after a crash is still one)."""
    return sorted({m["Message-ID"] for m in notices(box, subject)})


def ctl_text(box, mid):
    with open(os.path.join(box.spool, "queue", mid[-1], mid + ".c"), "rb") as f:
        return f.read().decode(errors="replace")


def check_notice(n, subject):
    assert n["Return-Path"] == "<>"
    assert n["From"] == "Mail Delivery System <MAILER-DAEMON@box.example>"
    assert n["To"] == f"<{SENDER}>" and n["Subject"] == subject
    assert n["Auto-Submitted"] == "auto-replied"
    human, per_msg, rcpts, returned = parts(n)
    # RFC 3461 4.3: a report without a failure returns the header section only
    assert returned.get_content_type() == "text/rfc822-headers"
    assert b"secret body" not in n.as_bytes()
    return human, per_msg, rcpts, returned


# ---- point 3: success notices ----

def test_success_notice_for_a_local_delivery(box):
    submit(box, "-f", SENDER, "-N", "success", "root", body=b"Subject: hello\nX-Marker: m\n\nsecret body\n")
    log = run_once(box)
    assert queue_empty(box), log
    got = notices(box, SUCCESS)
    assert len(got) == 1, log  # exactly one
    human, per_msg, rcpts, returned = check_notice(got[0], SUCCESS)
    assert [(r["Final-Recipient"], r["Action"], r["Status"]) for r in rcpts] == [
        ("rfc822; root@box.example", "delivered", "2.0.0")]
    assert "X-Marker: m" in returned.get_payload()
    assert "delivered" in human.get_payload()
    # the original was delivered too, once
    assert [m["Subject"] for m in mbox_messages(box, "root")].count("hello") == 1
    assert re.search(r"rcpt 0: success notice reported as [0-9A-Z]+", log), log


def test_success_notice_relayed_by_a_server_without_dsn(box):
    sink = SmtpSink(dsn=False).start()
    try:
        env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
        submit(box, "-f", SENDER, "-N", "success", "bob@example.com", env=env, body=b"Subject: s\n\nsecret body\n")
        log = run_once(box, env)
    finally:
        sink.stop()
    assert queue_empty(box), log
    assert [m.rcpt_tos for m in sink.messages] == [["bob@example.com"]], log
    assert "NOTIFY" not in str(sink.messages[0].rcpt_options)  # it could not be passed on
    got = notices(box, SUCCESS)
    assert len(got) == 1, log
    _, _, rcpts, _ = check_notice(got[0], SUCCESS)
    r = rcpts[0]
    assert r["Final-Recipient"] == "rfc822; bob@example.com"
    assert r["Action"] == "relayed" and r["Status"].startswith("2.")
    assert r["Remote-MTA"] == "dns; 127.0.0.1[127.0.0.1]"
    assert r["Diagnostic-Code"].startswith("smtp; 250")


def test_no_notice_when_the_next_hop_takes_the_dsn_over(box):
    sink = SmtpSink().start()  # announces DSN
    try:
        env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
        submit(box, "-f", SENDER, "-N", "success", "bob@example.com", env=env)
        log = run_once(box, env)
    finally:
        sink.stop()
    assert queue_empty(box), log
    assert len(sink.messages) == 1, log
    assert sink.messages[0].dsn_rcpt[0].get("NOTIFY") == "SUCCESS"  # passed on instead
    assert mbox_messages(box, "root") == [], log
    assert "success notice" not in log


@pytest.mark.parametrize("args", [("-N", "failure,delay"), ()], ids=["no-success", "notify-absent"])
def test_no_success_notice_unless_asked(box, args):
    submit(box, "-f", SENDER, *args, "root")
    log = run_once(box)
    assert queue_empty(box), log
    assert [m["Subject"] for m in mbox_messages(box, "root")] == ["hello"], log


def test_no_success_notice_for_the_null_sender(box):
    submit(box, "-f", "<>", "-N", "success", "root")
    log = run_once(box)
    assert queue_empty(box), log
    assert [m["Subject"] for m in mbox_messages(box, "root")] == ["hello"], log  # no notice, no postmaster copy


def test_a_failure_and_a_success_make_one_report_each(box):
    submit(box, "-f", SENDER, "-N", "success,failure", "root", "nosuchuser")
    log = run_once(box)
    assert queue_empty(box), log
    subjects = sorted(m["Subject"] for m in mbox_messages(box, "root"))
    assert subjects == sorted(["hello", SUCCESS, "Undelivered Mail Returned to Sender"]), log
    ok = parts(notices(box, SUCCESS)[0])[2]
    assert [(r["Final-Recipient"], r["Action"]) for r in ok] == [("rfc822; root@box.example", "delivered")]
    bad = parts(notices(box, "Undelivered Mail Returned to Sender")[0])[2]
    assert [(r["Final-Recipient"], r["Action"]) for r in bad] == [("rfc822; nosuchuser@box.example", "failed")]


def test_success_owed_is_kept_on_disk_as_S_and_sent_later(box):
    # an error channel that cannot start: the delivered recipient stays S (docs/spool.md 4.2),
    # the file becomes version 2, errormail -m shows the notice, and the real one sends it once
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write('*/* interval=1m expiry=3d retries="1"\nlocal/* command=local\n'
                'error command="/nonexistent/errormail" interval=1h\n')
    submit(box, "-f", SENDER, "-N", "success", "root")
    log = run_once(box)
    ids = spoolfmt.queued_ids(box.spool)
    assert len(ids) == 1, log
    mid = ids[0]
    text = ctl_text(box, mid)
    assert text.startswith("@ spoolbox 2\n"), text
    m = spoolfmt.Message(text.encode())
    assert [r.tag for r in m.rcpts] == ["S"], text
    assert [x["Subject"] for x in mbox_messages(box, "root")] == ["hello"]  # delivered, not twice
    p = box.run("mailq", "-v")
    assert p.returncode == 0 and b"state delivered-notice-owed," in p.stdout, p.stdout + p.stderr
    p = box.run("errormail", "-m", mid)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert out.startswith(f"# success notice from <> to <{SENDER}>"), out
    assert "\nAction: delivered\nStatus: 2.0.0\n" in out
    os.unlink(box.env["SCHEDULER_CONF"])
    log = run_once(box, {"SPOOLBOX_TEST_CLOCK": "+2h"})
    assert queue_empty(box), log
    assert len(notices(box, SUCCESS)) == 1, log
    assert [x["Subject"] for x in mbox_messages(box, "root")].count("hello") == 1, log


# ---- point 2: delay notices ----

# every gap between attempts counts up to 2m (interval x the largest factor + interval), so with
# attempts every 2m the message has been tried for 6m at its fourth attempt
DELAY_CONF = ('*/* interval=1m retries="1" expiry=1d\nsmtp/* command=smtp\nlocal/* command=local\n'
              'error interval=5m command=errormail\n')


@pytest.fixture
def greylist(box):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(DELAY_CONF)
    sink = SmtpSink().start()
    for a in ("bob@example.com", "carol@example.net", "dave@example.org"):
        sink.rcpt_replies[a] = "451 4.7.1 greylisted"
    yield sink, {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "DELAY_WARN": "5m"}
    sink.stop()


def at(env, seconds, speed=None):
    return dict(env, SPOOLBOX_TEST_CLOCK=f"+{seconds}s" + (f"*{speed}" if speed else ""))


def test_one_delay_notice_after_delay_warn(box, greylist):
    sink, env = greylist
    submit(box, "-f", SENDER, "bob@example.com", env=env, body=b"Subject: s\nX-Marker: m\n\nsecret body\n")
    log = run_once(box, env)
    mid = spoolfmt.queued_ids(box.spool)[0]
    for t in (120, 240):  # tried for 2m, 4m: not yet
        log = run_once(box, at(env, t))
        assert notices(box, DELAYED) == [], log
    assert "\nW " not in ctl_text(box, mid)
    log = run_once(box, at(env, 360))  # 6m >= DELAY_WARN
    got = notices(box, DELAYED)
    assert len(got) == 1, log
    assert re.search(r"\nW \d+\n", ctl_text(box, mid)), ctl_text(box, mid)  # the notice is on record
    human, per_msg, rcpts, returned = check_notice(got[0], DELAYED)
    assert "still being tried" in human.get_payload()
    assert per_msg["X-Spoolbox-Queue-ID"] == mid
    r = rcpts[0]
    assert (r["Final-Recipient"], r["Action"], r["Status"]) == ("rfc822; bob@example.com", "delayed", "4.7.1")
    assert r["Diagnostic-Code"] == "smtp; 451 4.7.1 greylisted"
    assert r["Remote-MTA"] == "dns; 127.0.0.1[127.0.0.1]" and r["Last-Attempt-Date"]
    assert "X-Marker: m" in returned.get_payload()
    for t in (480, 600, 720):  # still waiting: never a second one
        log = run_once(box, at(env, t))
    assert len(notices(box, DELAYED)) == 1, log
    del sink.rcpt_replies["bob@example.com"]
    log = run_once(box, at(env, 840))
    assert queue_empty(box), log
    assert [m.rcpt_tos for m in sink.messages] == [["bob@example.com"]]
    assert len(notices(box, DELAYED)) == 1 and mbox_messages(box, "root")[1:] == [], log


def test_one_delay_notice_covers_every_waiting_recipient_that_asked(box, greylist):
    sink, env = greylist
    # NOTIFY absent (delay is ours to give), NOTIFY with DELAY, and NOTIFY=FAILURE (no delay
    # notice wanted), at three domains, so three threads
    session = (b"EHLO c\r\nMAIL FROM:<root@box.example>\r\nRCPT TO:<bob@example.com>\r\n"
               b"RCPT TO:<carol@example.net> NOTIFY=DELAY,FAILURE\r\nRCPT TO:<dave@example.org> NOTIFY=FAILURE\r\n"
               b"DATA\r\nSubject: three\r\n\r\nbody\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail", env=env)
    assert p.returncode == 0, p.stderr
    log = run_once(box, env)
    for t in (120, 240, 360, 480):
        log += run_once(box, at(env, t))
    got = notices(box, DELAYED)
    assert len(got) == 1, log
    _, _, rcpts, _ = check_notice(got[0], DELAYED)
    assert sorted(r["Final-Recipient"] for r in rcpts) == ["rfc822; bob@example.com", "rfc822; carol@example.net"]
    assert all(r["Action"] == "delayed" for r in rcpts)


@pytest.mark.parametrize("args", [("-f", "<>"), ("-f", SENDER, "-N", "failure"), ("-f", SENDER, "-N", "never")],
                         ids=["null-sender", "notify-failure", "notify-never"])
def test_no_delay_notice_when_nobody_asked(box, greylist, args):
    sink, env = greylist
    submit(box, *args, "bob@example.com", env=env)
    log = run_once(box, env)
    mid = spoolfmt.queued_ids(box.spool)[0]
    for t in (120, 240, 360, 480):
        log += run_once(box, at(env, t))
    assert mbox_messages(box, "root") == [], log  # no notice, and no postmaster copy either
    assert "delay notice" not in log
    assert "\nW " not in ctl_text(box, mid)


def test_delay_warn_zero_sends_none(box, greylist):
    sink, env = greylist
    env = dict(env, DELAY_WARN="0")
    submit(box, "-f", SENDER, "bob@example.com", env=env)
    log = run_once(box, env)
    for t in (120, 240, 360, 480):
        log += run_once(box, at(env, t))
    assert mbox_messages(box, "root") == [], log


def test_a_clock_step_does_not_bring_the_notice_early(box, greylist):
    # a day ahead after the first attempt (NTP after a boot without RTC): tried time, not
    # wall-clock age, decides, so the next attempt adds at most 2m and there is no notice yet
    sink, env = greylist
    submit(box, "-f", SENDER, "bob@example.com", env=env)
    run_once(box, env)
    log = run_once(box, at(env, 86400))
    assert notices(box, DELAYED) == [], log


def test_kill_9_after_the_W_record_sends_no_second_notice(box, greylist):
    sink, env = greylist
    submit(box, "-f", SENDER, "bob@example.com", env=env)
    mid = spoolfmt.only_incoming(box.spool)[0]
    # a running scheduler, its clock 120 times faster: DELAY_WARN comes after ~3 s
    p = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(at(env, 1, 120)), stderr=subprocess.PIPE)
    try:
        path = os.path.join(box.spool, "queue", mid[-1], mid + ".c")
        seen = wait_for(lambda: os.path.exists(path) and "\nW " in ctl_text(box, mid))
        p.send_signal(signal.SIGKILL)
    finally:
        p.kill()
        log = p.communicate(timeout=10)[1].decode(errors="replace")
    assert seen, log
    # started again, later: the notice (queued before the W) is delivered, and none is made again
    for t in (1200, 1320, 1440):
        log += run_once(box, at(env, t))
    # one notice; the kill may have caught local delivering it, which delivers it again (at
    # least once): the same message twice, never a second notice
    assert len(made(box, DELAYED)) == 1, log
    assert spoolfmt.queued_ids(box.spool) == [mid]


KILLER = r'''#!/usr/bin/python3
# The error channel for a crash test: becomes the real errormail (same pid, which the scheduler
# marked its recipients with), its output read by a helper process that, the first time
# errormail reports a queued $KILLON notice ("delay", "success"), kills the scheduler with
# SIGKILL before the report reaches it: the notice is durable, the scheduler never hears of it.
import os, signal, sys
sched = os.getppid()
r, w = os.pipe()
if os.fork() == 0:
    os.close(w)
    for line in os.fdopen(r, "rb"):
        if os.environ["KILLON"].encode() + b" notice queued" in line and not os.path.exists(os.environ["KILLMARK"]):
            open(os.environ["KILLMARK"], "w").close()
            os.kill(sched, signal.SIGKILL)
            os._exit(0)
        os.write(1, line)
    os._exit(0)
os.close(r)
os.dup2(w, 1)
os.close(w)
os.execv(sys.argv[1], [sys.argv[1], "errormail"])
'''


def killer_conf(box, tmp_path, on):
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    killer.chmod(0o755)
    mark = tmp_path / "killed"
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(DELAY_CONF.replace("command=errormail", f'command="KILLON={on} KILLMARK={mark} {killer} {BINARY}"'))
    return mark


def test_kill_9_between_the_notice_and_its_W_record_sends_it_again_once(box, greylist, tmp_path):
    sink, env = greylist
    mark = killer_conf(box, tmp_path, "delay")
    submit(box, "-f", SENDER, "bob@example.com", env=env)
    mid = spoolfmt.only_incoming(box.spool)[0]
    log = run_once(box, env)
    for t in (120, 240, 360):
        p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(at(env, t)), capture_output=True,
                           timeout=30)
        log += p.stderr.decode(errors="replace")
        if p.returncode == -signal.SIGKILL:
            break
    assert mark.exists(), log
    assert "\nW " not in ctl_text(box, mid)  # the crash came before the record
    # restarted: the notice already queued is delivered, and made once more (at worst one
    # duplicate, never none); then never again
    for t in (480, 600, 720, 840):
        log += run_once(box, at(env, t))
    assert len(made(box, DELAYED)) == 2, log
    assert "\nW " in ctl_text(box, mid)


def test_kill_9_while_a_success_notice_is_out_never_delivers_again(box, tmp_path):
    # the scheduler dies after the success notice is queued, before it hears so: restarted, the
    # recipient (T for a dead errormail, last record "ok") goes back to S, not to delivery
    mark = killer_conf(box, tmp_path, "success")
    submit(box, "-f", SENDER, "-N", "success", "root")
    mid = spoolfmt.only_incoming(box.spool)[0]
    p = subprocess.run([BINARY, "scheduler", "-i", "-1"], env=box.environ(), capture_output=True, timeout=30)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == -signal.SIGKILL and mark.exists(), log
    assert [r.tag for r in spoolfmt.Message(ctl_text(box, mid).encode()).rcpts] == ["T"]
    log += run_once(box)
    assert queue_empty(box), log
    assert [m["Subject"] for m in mbox_messages(box, "root")].count("hello") == 1, log  # delivered once
    assert len(made(box, SUCCESS)) == 2, log  # notified again (a duplicate), never not at all


def test_held_mail_gets_no_delay_notice(box):
    # the hold channel keeps mail on purpose: not "still being tried" (Postfix's hold queue
    # sends no delay warning either); three hours of a clock later it has counted the hold
    # clause's longest wait (175m) of trying, well past DELAY_WARN
    import sched_gen
    env = {"DELAY_WARN": "5m"}
    mid = sched_gen.add_incoming(box.spool, [("hold", "x", "someone@example.com")])
    log = run_once(box, env)
    log += run_once(box, at(env, 3 * 3600))
    assert spoolfmt.queued_ids(box.spool) == [mid], log
    assert mbox_messages(box, "root") == [] and "delay notice" not in log, log
