"""The smtp transport agent against real aiosmtpd servers on 127.0.0.1, driven over its
stdin/stdout exactly as the scheduler drives it (ta_driver.py): delivery bytes and envelopes,
pipelining, per-recipient results, failures of every kind, failover, connection reuse, logging."""
import os
import re
import socket
import threading
import time

import pytest

from smtpsink import SmtpSink, free_port
from ta_driver import TA, Queue, Rcpt

MSG = (b"From: root@box.example\nTo: a@example.com\nSubject: test\n\n"
       b"line one\n.starts with a dot\n..two dots\n\nlast line\n")


def smarthost_env(*sinks, extra=""):
    hosts = ", ".join(f"[127.0.0.1]:{s.port} tls=none{extra}" for s in sinks)
    return {"SMARTHOST": hosts, "SMTP_IDLE": "5s"}


@pytest.fixture
def q(box):
    return Queue(box.spool)


def wire(msg):
    """What the server must receive for a stored message: CRLF and dot-stuffing undone by the
    server, so the bytes are the message with CRLF line ends."""
    return msg.replace(b"\n", b"\r\n")


def test_plain_delivery_exact_envelope_and_bytes(box, q, sink):
    mid = q.add("root@box.example", ["a@example.com", "b@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    assert [r.status for r in reps] == ["ok2", "ok2"]          # the sink speaks DSN
    assert [r.addr for r in reps] == ["a@example.com", "b@example.com"]
    assert all(r.action == "delivered" and r.enh == "2.0.0" for r in reps)
    assert all(r.remote == "127.0.0.1[127.0.0.1]" for r in reps)
    assert "250 2.0.0 OK queued" in reps[0].diag
    ctl = q.control(mid)
    assert [r.offset for r in reps] == [r.off for r in ctl.rcpts]
    assert len(sink.messages) == 1
    m = sink.messages[0]
    assert m.mail_from == "root@box.example"
    assert m.rcpt_tos == ["a@example.com", "b@example.com"]
    assert m.data == wire(MSG)
    assert "SIZE=%d" % len(MSG) in m.mail_options


def test_pipelining_sends_the_transaction_in_one_go(box, q, sink):
    mid = q.add("root@box.example", ["a@example.com", "b@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        ta.job(q, mid, "example.com")
    # When the server read MAIL FROM, the RCPTs and DATA were already waiting behind it.
    assert sink.messages[0].pipelined >= len("RCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n")


def test_without_pipelining_commands_wait_for_replies(box, q):
    with SmtpSink(pipelining=False) as s:
        mid = q.add("root@box.example", ["a@example.com", "b@example.com"], MSG)
        with TA(box, env=smarthost_env(s)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert [r.status for r in reps] == ["ok2", "ok2"]
        assert s.messages[0].pipelined == 0
        assert s.messages[0].data == wire(MSG)


def test_delay_in_the_log_line_is_the_time_since_arrival(box, q, sink):
    # delay= is the message's age (Postfix's field): a queued hour and a bit shows as such, to
    # the hundredth. The printf-like functions take no floating point (lib/util.h PRINTF_LIKE),
    # so ta.c formats it from whole numbers: a double passed there would print garbage.
    mid = q.add("root@box.example", ["a@example.com"], MSG, arrival=int(time.time()) - 3725)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    assert reps[0].status == "ok2"
    m = re.search(r"to=<a@example.com>, relay=127.0.0.1\[127.0.0.1\]:\d+, delay=(\d+)\.(\d\d), dsn=2.0.0, ", ta.log)
    assert m, ta.log
    assert 3725 <= int(m.group(1)) <= 3785, ta.log


def test_451_then_250(box, q, sink):
    sink.mail_reply = ["451 4.3.0 try again later"]
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        r1 = ta.job(q, mid, "example.com")
        assert r1[0].status == "deferred" and r1[0].enh == "4.3.0"
        assert "451 4.3.0 try again later" in r1[0].diag
        assert r1[0].action == "delayed"
        assert not sink.messages
        r2 = ta.job(q, mid, "example.com")
        assert r2[0].status == "ok2"
    assert len(sink.messages) == 1


def test_550_for_one_recipient_of_two(box, q, sink):
    sink.rcpt_replies["bad@example.com"] = "550 5.1.1 <bad@example.com>: no such user"
    mid = q.add("root@box.example", ["good@example.com", "bad@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    by = {r.addr: r for r in reps}
    assert by["good@example.com"].status == "ok2"
    bad = by["bad@example.com"]
    assert bad.status == "error" and bad.action == "failed" and bad.enh == "5.1.1"
    assert "no such user" in bad.diag and bad.remote == "127.0.0.1[127.0.0.1]"
    assert sink.messages[0].rcpt_tos == ["good@example.com"]
    assert re.search(r"to=<bad@example.com>, relay=127.0.0.1\[127.0.0.1\]:\d+, delay=[\d.]+, dsn=5.1.1, "
                     r"status=bounced \(550 5.1.1 <bad@example.com>: no such user\)", ta.log), ta.log
    assert re.search(r"to=<good@example.com>, relay=127.0.0.1\[127.0.0.1\]:\d+, delay=[\d.]+, dsn=2.0.0, "
                     r"status=sent \(250 2.0.0 OK queued\)", ta.log), ta.log


# The server refuses: replies to RCPT (by address) and at the end of data, the recipients, and
# each one's report: status, enhanced code, a part of the diagnostic, or all of it (None: not
# checked).
SERVER_REFUSALS = [
    pytest.param({"later@example.com": "452 4.2.2 mailbox full"}, [], ["later@example.com", "now@example.com"],
                 {"later@example.com": ("deferred", "4.2.2", None, None), "now@example.com": ("ok2", None, None, None)},
                 id="4xx_on_rcpt_defers_only_that_recipient"),
    pytest.param({}, ["554 5.7.1 message refused: spam"], ["a@example.com", "b@example.com"],
                 {"a@example.com": ("error", "5.7.1", "spam", None), "b@example.com": ("error", "5.7.1", "spam", None)},
                 id="data_rejected_after_end_of_data"),
    pytest.param({}, ["552 5.3.4 message size exceeds fixed maximum"], ["a@example.com"],
                 {"a@example.com": ("error", "5.3.4", None, "552 5.3.4 message size exceeds fixed maximum")},
                 id="552_from_the_server_at_the_end_of_data"),
]


@pytest.mark.parametrize("rcpt_replies,data_replies,rcpts,want", SERVER_REFUSALS)
def test_server_refusals(box, q, sink, rcpt_replies, data_replies, rcpts, want):
    sink.rcpt_replies.update(rcpt_replies)
    if data_replies:
        sink.data_replies = data_replies
    mid = q.add("root@box.example", rcpts, MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    assert sorted(r.addr for r in reps) == sorted(want), reps
    for r in reps:
        status, enh, diag_has, diag_is = want[r.addr]
        assert r.status == status, r
        if enh:
            assert r.enh == enh, r
        if diag_has:
            assert diag_has in r.diag, r
        if diag_is:
            assert r.diag == diag_is, r


def test_552_size_refused_before_data(box, q):
    with SmtpSink(data_size_limit=100) as s:
        mid = q.add("root@box.example", ["a@example.com"], MSG + b"x" * 200 + b"\n")
        with TA(box, env=smarthost_env(s)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "error" and reps[0].enh == "5.3.4", reps
        assert "size limit 100" in reps[0].diag
        assert not s.messages


def test_hangup_right_after_354_is_a_lost_connection_not_an_early_answer(box, q, sink):
    # The close is the only thing on the socket when the body is ready: it must be reported
    # as a closed connection (the CI run of 442cca2 saw "answered before the end of data").
    sink.hangup_after_354 = True
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    assert [(r.status, r.enh[:2]) for r in reps] == [("deferred", "4.")], reps
    assert "answered" not in reps[0].diag, reps
    assert "connection closed" in reps[0].diag or "lost connection" in reps[0].diag, reps
    assert sink.dropped == 1 and not sink.messages


def test_connection_dropped_mid_data_is_deferred_never_delivered(box, q, sink):
    sink.drop_in_data = 50
    mid = q.add("root@box.example", ["a@example.com", "b@example.com"], MSG + b"body " * 20000 + b"\n")
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
        assert [r.status for r in reps] == ["deferred", "deferred"], reps
        assert all(r.enh.startswith("4.") for r in reps)
        assert all("lost connection" in r.diag or "connection closed" in r.diag for r in reps), reps
        assert sink.dropped == 1 and not sink.messages
        # The next job reconnects and delivers.
        sink.drop_in_data = 0
        reps = ta.job(q, mid, "example.com")
        assert [r.status for r in reps] == ["ok2", "ok2"]
    assert len(sink.messages) == 1


def test_connection_refused_is_deferred(box, q):
    port = free_port()
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    env = {"SMARTHOST": f"[127.0.0.1]:{port} tls=none"}
    with TA(box, env=env) as ta:
        reps = ta.job(q, mid, "example.com")
    assert reps[0].status == "deferred" and reps[0].enh == "4.4.1"
    assert "Connection refused" in reps[0].diag and f"127.0.0.1[127.0.0.1]:{port}" in reps[0].diag


def test_smarthost_name_not_resolving_is_deferred(box, q):
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    with TA(box, env={"SMARTHOST": "relay.invalid:25 tls=none"}) as ta:
        reps = ta.job(q, mid, "example.com")
    assert reps[0].status == "deferred" and reps[0].enh == "4.4.3", reps
    assert "relay.invalid" in reps[0].diag


def test_timeout_is_deferred(box, q):
    # A server that accepts the connection and never says anything: deferred, and with it the
    # destination's other recipients (deferall, issue 11 point 5).
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    env = {"SMARTHOST": f"[127.0.0.1]:{port} tls=none", "SMTP_HELO_TIMEOUT": "1s"}
    try:
        with TA(box, env=env) as ta:
            t0 = time.time()
            reps = ta.job(q, mid, "example.com")
            assert time.time() - t0 < 10
    finally:
        srv.close()
    assert reps[0].status == "deferall" and reps[0].enh == "4.4.2"
    assert "timeout" in reps[0].diag


def test_smarthost_failover_first_down(box, q, sink):
    down = free_port()
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    env = {"SMARTHOST": f"[127.0.0.1]:{down} tls=none, [127.0.0.1]:{sink.port} tls=none"}
    with TA(box, env=env) as ta:
        reps = ta.job(q, mid, "example.com")
    assert reps[0].status == "ok2"
    assert len(sink.messages) == 1


def test_421_greeting_tries_the_next_host(box, q, sink):
    with SmtpSink() as busy:
        busy.greeting = "421 4.3.2 too busy, try another"
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        with TA(box, env=smarthost_env(busy, sink)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "ok2"
        assert busy.connections == 1 and not busy.messages
    assert len(sink.messages) == 1


def test_all_hosts_greet_421_deferred_with_their_reply(box, q):
    with SmtpSink() as busy:
        busy.greeting = "421 4.3.2 too busy"
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        with TA(box, env=smarthost_env(busy)) as ta:
            reps = ta.job(q, mid, "example.com")
    assert reps[0].status == "deferred" and reps[0].enh == "4.3.2"
    assert "refused to talk to me: 421 4.3.2 too busy" in reps[0].diag


def test_connection_reuse_one_connection_for_many_messages(box, q, sink):
    ids = [q.add("root@box.example", ["a@example.com"], MSG) for _ in range(5)]
    with TA(box, env=smarthost_env(sink)) as ta:
        for mid in ids:
            assert ta.job(q, mid, "example.com")[0].status == "ok2"
    assert len(sink.messages) == 5
    assert sink.connections == 1
    assert re.search(r"to=<a@example.com>, relay=127.0.0.1\[127.0.0.1\]:\d+, conn_use=5, delay=", ta.log), ta.log


def test_idle_message_keeps_the_connection_for_the_next_job(box, q, sink):
    """Issue 13 point 4: "#idle" (the agent joins the idle pool) no longer closes the cached
    connection: a message that comes within SMTP_IDLE goes out without a connect, a greeting
    and an EHLO (the idle timer still ends it: the next test)."""
    a = q.add("root@box.example", ["a@example.com"], MSG)
    b = q.add("root@box.example", ["a@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        ta.job(q, a, "example.com")
        ta.send("#idle")
        ta.expect("#hungry")
        assert ta.job(q, b, "example.com")[0].status == "ok2"
    assert sink.connections == 1 and len(sink.messages) == 2


def test_idle_timeout_closes_and_next_job_reconnects(box, q, sink):
    a = q.add("root@box.example", ["a@example.com"], MSG)
    b = q.add("root@box.example", ["a@example.com"], MSG)
    env = smarthost_env(sink)
    env["SMTP_IDLE"] = "1s"
    with TA(box, env=env) as ta:
        ta.job(q, a, "example.com")
        ta.send("#idle")  # in the idle pool too
        ta.expect("#hungry")
        time.sleep(1.6)
        assert ta.job(q, b, "example.com")[0].status == "ok2"
    assert sink.connections == 2 and len(sink.messages) == 2


def test_maxrcpt_splits_transactions_on_one_connection(box, q, sink):
    rcpts = ["u%d@example.com" % i for i in range(5)]
    mid = q.add("root@box.example", rcpts, MSG)
    env = smarthost_env(sink)
    env["SMTP_MAXRCPT"] = "2"
    with TA(box, env=env) as ta:
        reps = ta.job(q, mid, "example.com")
    assert [r.status for r in reps] == ["ok2"] * 5
    assert [m.rcpt_tos for m in sink.messages] == [rcpts[0:2], rcpts[2:4], rcpts[4:5]]
    assert sink.connections == 1


def test_dsn_parameters_passed_on(box, q, sink):
    rcpts = [Rcpt("a@example.com", notify="S,F", orcpt="rfc822;orig+x@example.org"), Rcpt("b@example.com", notify="N")]
    mid = q.add("root@box.example", rcpts, MSG, ret="H", envid="env id 1")
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    assert [r.status for r in reps] == ["ok2", "ok2"]
    m = sink.messages[0]
    assert m.dsn_mail == {"RET": "HDRS", "ENVID": "env+20id+201"}
    assert m.dsn_rcpt[0] == {"NOTIFY": "SUCCESS,FAILURE", "ORCPT": "rfc822;orig+2Bx@example.org"}
    assert m.dsn_rcpt[1] == {"NOTIFY": "NEVER"}


def test_without_dsn_no_parameters_and_action_relayed(box, q):
    with SmtpSink(dsn=False) as s:
        rcpts = [Rcpt("a@example.com", notify="S,F", orcpt="rfc822;a@example.com")]
        mid = q.add("root@box.example", rcpts, MSG, ret="F", envid="x")
        with TA(box, env=smarthost_env(s)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "ok" and reps[0].action == "relayed"
        assert s.messages[0].dsn_mail == {} and s.messages[0].dsn_rcpt == [{}]


def test_8bit_body_with_8bitmime(box, q, sink):
    body = "Subject: caf\u00e9\n\nd\u00e9j\u00e0 vu\n".encode()
    mid = q.add("root@box.example", ["a@example.com"], body)
    with TA(box, env=smarthost_env(sink)) as ta:
        assert ta.job(q, mid, "example.com")[0].status == "ok2"
    assert "BODY=8BITMIME" in sink.messages[0].mail_options
    assert sink.messages[0].data == wire(body)


EIGHT_BIT_MESSAGES = {
    # a plain text message, headers with 8-bit left alone, long lines, trailing blanks, "=", a dot
    "plain": ("Subject: caf\u00e9\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n"
              "d\u00e9j\u00e0 vu = 100%  \n" + "\u00fc" * 120 + "\n.leading dot\nlast line \u00e9 \t\n").encode(),
    # multipart: an 8-bit text part, a 7-bit part, a nested message with 8-bit text
    "multipart": ("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"=_b1\"\nContent-Transfer-Encoding: 8bit\n\n"
                  "preamble\n--=_b1\nContent-Type: text/plain; charset=iso-8859-1\n\n").encode() + b"\xe9t\xe9 \xe0 Paris\n" +
                 ("--=_b1\nContent-Type: text/plain\n\nplain ascii\n--=_b1\nContent-Type: message/rfc822\n\n"
                  "Subject: inner\nContent-Type: text/plain; charset=utf-8\n\nStra\u00dfe\n--=_b1--\nepilogue\n").encode(),
}


def mime_leaves(msg):
    """(content type, decoded bytes) of every leaf of an email.message, nested messages included."""
    import email.message
    out = []
    for part in msg.walk():
        if part.is_multipart() or part.get_content_type() == "message/rfc822":
            continue
        out.append((part.get_content_type(), part.get_payload(decode=True)))
    return out


@pytest.mark.parametrize("kind", sorted(EIGHT_BIT_MESSAGES))
def test_8bit_body_is_converted_for_a_server_without_8bitmime(box, q, kind):
    import email
    import email.policy
    body = EIGHT_BIT_MESSAGES[kind]
    with SmtpSink(ehlo_drop=["8BITMIME"]) as s:
        mid = q.add("root@box.example", ["a@example.com"], body)
        with TA(box, env=smarthost_env(s)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "ok2", (reps, ta.log)
        assert "converted to 7 bit" in ta.log
        got = s.messages[0]
    assert "BODY=8BITMIME" not in got.mail_options
    head, _, rest = got.data.partition(b"\r\n\r\n")
    assert all(b < 0x80 for b in rest), "the body went out with 8-bit bytes"
    assert all(len(line) <= 76 for line in rest.split(b"\r\n")), "RFC 2045: encoded lines of 76 at most"
    sent = email.message_from_bytes(got.data.replace(b"\r\n", b"\n"), policy=email.policy.compat32)
    orig = email.message_from_bytes(body, policy=email.policy.compat32)
    # every part decodes to the original bytes
    assert mime_leaves(sent) == mime_leaves(orig)
    assert sent["Subject"] == orig["Subject"]  # header fields are left alone


def test_8bit_that_cannot_be_converted_is_refused_with_5_6_3(box, q):
    body = (b"MIME-Version: 1.0\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: binary\n\n"
            b"\x00\xff\xfe raw")
    with SmtpSink(ehlo_drop=["8BITMIME"]) as s:
        mid = q.add("root@box.example", ["a@example.com"], body)
        with TA(box, env=smarthost_env(s)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "error" and reps[0].enh == "5.6.3", reps
        assert "cannot be converted to 7 bit: a application/octet-stream part is declared binary" in reps[0].diag
        assert not s.messages
        # the administrator's way around it: send it as it is
        env = smarthost_env(s)
        env["SMTP_8BIT_FALLBACK"] = "send"
        with TA(box, env=env) as ta:
            assert ta.job(q, mid, "example.com")[0].status == "ok2"
        assert s.messages[0].data.endswith(b"\xff\xfe raw\r\n")


def test_smtputf8_address(box, q, sink):
    mid = q.add("r\u00f6ot@box.example", ["j\u00fcrgen@example.com"], MSG, smtputf8=True)
    with TA(box, env=smarthost_env(sink)) as ta:
        assert ta.job(q, mid, "example.com")[0].status == "ok2"
    assert "SMTPUTF8" in sink.messages[0].mail_options
    assert sink.messages[0].rcpt_tos == ["j\u00fcrgen@example.com"]


def test_smtputf8_address_to_a_server_without_it(box, q):
    with SmtpSink(ehlo_drop=["SMTPUTF8"], enable_SMTPUTF8=False) as s:
        mid = q.add("root@box.example", ["j\u00fcrgen@example.com"], MSG, smtputf8=True)
        with TA(box, env=smarthost_env(s)) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "error" and reps[0].enh == "5.6.7"
        assert not s.messages


def test_long_lines_folded_and_dot_stuffing(box, q, sink):
    long = b"x" * 2500
    body = b"Subject: long\n\n" + long + b"\n." + b"y" * 1200 + b"\nend"  # no final LF
    mid = q.add("root@box.example", ["a@example.com"], body)
    with TA(box, env=smarthost_env(sink)) as ta:
        assert ta.job(q, mid, "example.com")[0].status == "ok2"
    data = sink.messages[0].data
    assert all(len(line) <= 998 for line in data.split(b"\r\n"))
    # Postfix-style folding: CRLF SPACE after every 998 bytes of a line.
    expect = (b"Subject: long\r\n\r\n" + b"x" * 998 + b"\r\n " + b"x" * 997 + b"\r\n " + b"x" * 505 + b"\r\n"
              + b"." + b"y" * 996 + b"\r\n " + b"y" * 204 + b"\r\nend\r\n")  # ".." counts on the wire
    assert data == expect
    assert "folded 3 lines" in ta.log


def test_null_sender(box, q, sink):
    mid = q.add("", ["a@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        assert ta.job(q, mid, "example.com")[0].status == "ok2"
    assert sink.messages[0].mail_from == "<>"


def test_recipient_address_with_control_characters_never_reaches_the_wire(box, q, sink):
    mid = q.add("root@box.example", ["evil@example.com>\r\nRCPT TO:<x@example.com", "ok@example.com"], MSG)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com")
    by = {r.addr: r.status for r in reps}
    assert by["ok@example.com"] == "ok2"
    assert list(by.values()).count("error") == 1
    assert sink.messages[0].rcpt_tos == ["ok@example.com"]


@pytest.mark.slow
def test_20mb_message(box, q, sink):
    line = b"0123456789" * 7 + b"\n"
    body = b"Subject: big\n\n" + line * (20 * 1024 * 1024 // len(line))
    mid = q.add("root@box.example", ["a@example.com"], body)
    with TA(box, env=smarthost_env(sink)) as ta:
        reps = ta.job(q, mid, "example.com", timeout=120)
    assert reps[0].status == "ok2"
    assert sink.messages[0].data == wire(body)


def test_20mb_message_quick(box, q, sink):
    """The same path as the 20 MB test, smaller, for the sanitizer and no-TLS builds."""
    line = b"0123456789" * 7 + b"\n"
    body = b"Subject: big\n\n" + line * 30000
    mid = q.add("root@box.example", ["a@example.com"], body)
    with TA(box, env=smarthost_env(sink)) as ta:
        assert ta.job(q, mid, "example.com")[0].status == "ok2"
    assert sink.messages[0].data == wire(body)


def test_by_hand_mode_prints_reports_and_changes_nothing(box, q, sink):
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    before = open(q.paths(mid)[0], "rb").read()
    p = box.run("smtp", "-m", mid, env=smarthost_env(sink))
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.decode().splitlines() if "\t" in l]
    assert len(lines) == 1 and lines[0].endswith("\tok2 250 2.0.0 OK queued")
    assert open(q.paths(mid)[0], "rb").read() == before
    assert len(sink.messages) == 1


def test_verbose_transcript(box, q, sink):
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    p = box.run("smtp", "-v", "-m", mid, env=smarthost_env(sink))
    err = p.stderr.decode()
    assert "> MAIL FROM:<root@box.example>" in err and "< 250 2.0.0 OK queued" in err, err


def test_bad_smarthost_is_a_configuration_error(box):
    p = box.run("smtp", "-m", "T4G2KQ80A1F3Z7K", env={"SMARTHOST": "relay:99999"})
    assert p.returncode == 78
    assert b"SMARTHOST entry 1: bad port" in p.stderr
    p = box.run(None, "--check", env={"SMARTHOST": "relay tls=sometimes"})
    assert p.returncode == 78 and b"tls= wants" in p.stderr


# ---- AUTH (in clear text here, explicitly allowed; over TLS in test_smtp_tls.py) ----

def write_creds(box, text):
    with open(box.env["CREDENTIALS"], "w") as f:
        f.write(text)
    os.chmod(box.env["CREDENTIALS"], 0o600)


@pytest.mark.parametrize("mech", ["PLAIN", "LOGIN"])
def test_auth_right_password(box, q, mech):
    secret = "s3cret pass#word"
    with SmtpSink(users={"alerts": secret}, auth_require_tls=False) as s:
        write_creds(box, f'127.0.0.1 alerts "{secret}"\n')
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth auth={mech}"}
        p = box.run("smtp", "-v", "-m", mid, env=env)
        assert b"\tok2 " in p.stdout, p.stderr
        assert s.logins == [(mech, "alerts", True)]
        assert s.messages[0].auth_user == "alerts"
        err = p.stderr.decode()
        assert "authenticated to 127.0.0.1[127.0.0.1] as alerts with " + mech in err
        # Neither the password nor its base64 forms appear in the transcript.
        import base64
        for bad in (secret, base64.b64encode(secret.encode()).decode(),
                    base64.b64encode(b"\0alerts\0" + secret.encode()).decode()):
            assert bad not in err and bad.encode() not in p.stdout


@pytest.mark.parametrize("mech", ["PLAIN", "LOGIN"])
def test_auth_wrong_password_deferred_with_server_text(box, q, mech):
    with SmtpSink(users={"alerts": "right"}, auth_require_tls=False) as s:
        write_creds(box, "127.0.0.1 alerts wrong\n")
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth auth={mech}"}
        with TA(box, args=["-v"], env=env) as ta:
            reps = ta.job(q, mid, "example.com")
            assert reps[0].status == "deferred", reps
            assert "535" in reps[0].diag and "refused AUTH " + mech in reps[0].diag
            assert reps[0].enh.startswith("4.7.")
            # One attempt per job: no tight retry loop.
            assert len(s.logins) == 1 and s.connections == 1
        assert not s.messages
        assert "wrong" not in ta.log.replace("wrong password", "")


def test_auth_one_login_per_connection(box, q):
    with SmtpSink(users={"alerts": "pw"}, auth_require_tls=False) as s:
        write_creds(box, "127.0.0.1 alerts pw\n")
        ids = [q.add("root@box.example", ["a@example.com"], MSG) for _ in range(3)]
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}
        with TA(box, env=env) as ta:
            for mid in ids:
                assert ta.job(q, mid, "example.com")[0].status == "ok2"
        assert len(s.logins) == 1 and s.connections == 1 and len(s.messages) == 3


def test_no_auth_over_cleartext_unless_allowed(box, q):
    with SmtpSink(users={"alerts": "pw"}, auth_require_tls=False) as s:
        write_creds(box, "127.0.0.1 alerts pw\n")
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        with TA(box, env={"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none"}) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "deferred" and "without TLS" in reps[0].diag
        assert s.logins == [] and not s.messages


def test_credentials_file_with_open_permissions_is_refused(box, q):
    with SmtpSink(users={"alerts": "pw"}, auth_require_tls=False) as s:
        write_creds(box, "127.0.0.1 alerts pw\n")
        os.chmod(box.env["CREDENTIALS"], 0o644)
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}
        with TA(box, env=env) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "deferred" and "credentials file" in reps[0].diag
        assert s.logins == [] and not s.messages
        assert "pw" not in ta.log.split("credentials")[0]


def test_idle_zero_means_one_connection_per_job(box, q, sink):
    ids = [q.add("root@box.example", ["a@example.com"], MSG) for _ in range(2)]
    env = smarthost_env(sink)
    env["SMTP_IDLE"] = "0"
    with TA(box, env=env) as ta:
        for mid in ids:
            assert ta.job(q, mid, "example.com")[0].status == "ok2"
    assert sink.connections == 2


def test_cached_connection_closed_by_the_server_reconnects_without_deferring(box, q, sink):
    sink.close_after_data = True
    ids = [q.add("root@box.example", ["a@example.com"], MSG) for _ in range(3)]
    with TA(box, args=["-v"], env=smarthost_env(sink)) as ta:
        for mid in ids:
            assert ta.job(q, mid, "example.com")[0].status == "ok2", ta.log
    assert len(sink.messages) == 3 and sink.connections == 3
    assert "reconnecting" in ta.log


def test_reused_connection_sends_rset_pipelined_with_mail(box, q, sink):
    ids = [q.add("root@box.example", ["a@example.com"], MSG) for _ in range(2)]
    with TA(box, env=smarthost_env(sink)) as ta:
        for mid in ids:
            ta.job(q, mid, "example.com")
    assert sink.connections == 1
    # one RSET, before the second message, with MAIL, RCPT and DATA right behind it
    assert len(sink.rsets) == 1
    assert sink.rsets[0] >= len("MAIL FROM:<root@box.example>\r\nRCPT TO:<a@example.com>\r\nDATA\r\n")


@pytest.mark.parametrize("right", [True, False])
def test_auth_cram_md5_is_preferred_in_clear_text(box, q, right):
    with SmtpSink(users={"alerts": "tanstaaftanstaaf"}, auth_require_tls=False, cram_md5=True) as s:
        write_creds(box, "127.0.0.1 alerts %s\n" % ("tanstaaftanstaaf" if right else "nope"))
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        env = {"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}
        with TA(box, args=["-v"], env=env) as ta:
            reps = ta.job(q, mid, "example.com")
        assert s.logins == [("CRAM-MD5", "alerts", right)]
        assert reps[0].status == ("ok2" if right else "deferred"), reps
        assert "tanstaaf" not in ta.log


def test_ipv6_literal_smarthost(box, q):
    try:
        s = SmtpSink(host="::1").start()
    except OSError as e:
        pytest.skip(f"no IPv6 loopback here: {e}")
    try:
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        with TA(box, env={"SMARTHOST": f"[::1]:{s.port} tls=none"}) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "ok2" and reps[0].remote == "::1[::1]"
        assert f"relay=::1[::1]:{s.port}" in ta.log
    finally:
        s.stop()


def test_by_hand_mode_one_job_per_host_on_one_connection(box, q, sink):
    mid = q.add("root@box.example", ["a@one.example", "b@two.example", "c@one.example"], MSG)
    p = box.run("smtp", "-m", mid, env=smarthost_env(sink))
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.decode().splitlines() if "\t" in l]
    assert len(lines) == 3 and all("\tok2 " in l for l in lines)
    assert sorted(m.rcpt_tos for m in sink.messages) == [["a@one.example", "c@one.example"], ["b@two.example"]]
    assert sink.connections == 1


def test_syslog_facility_mail_one_line_per_recipient(box, q, sink, tmp_path):
    """The real syslog path: a private mount namespace puts our socket at /dev/log."""
    import shutil
    import socket as sk
    import subprocess
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare(1) to give the agent a private /dev/log")
    path = str(tmp_path / "log")
    rx = sk.socket(sk.AF_UNIX, sk.SOCK_DGRAM)
    rx.bind(path)
    rx.settimeout(5)
    sink.rcpt_replies["b@example.com"] = "550 5.1.1 no such user"
    mid = q.add("root@box.example", ["a@example.com", "b@example.com"], MSG)
    env = smarthost_env(sink)
    env["LOG"] = "syslog"
    script = ('mount -t tmpfs none /dev && : > /dev/log && mount --bind "$1" /dev/log && '
              'exec "$2" smtp -m "$3"')
    from conftest import BINARY
    p = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", path, BINARY, mid], capture_output=True,
                       env=box.environ(env), timeout=30)
    if p.returncode != 0 and b"mount" in p.stderr:
        pytest.skip(f"cannot make a private /dev/log here: {p.stderr.decode(errors='replace')}")
    assert p.returncode == 0, p.stderr
    lines = []
    try:
        while True:
            lines.append(rx.recv(4096).decode())
            if sum("to=<" in l for l in lines) >= 2:
                break
    except sk.timeout:
        pass
    rx.close()
    mine = [l for l in lines if "to=<" in l]
    assert len(mine) == 2, lines
    # <22> is facility mail (2) * 8 + info (6)
    assert all(l.startswith("<22>") for l in mine), mine
    assert any(re.search(r"spoolbox/smtp\[\d+\]: %s: to=<a@example.com>, relay=127.0.0.1\[127.0.0.1\]:%d, "
                         r"delay=[\d.]+, dsn=2.0.0, status=sent \(250 2.0.0 OK queued\)" % (mid, sink.port), l)
               for l in mine), mine
    assert any("to=<b@example.com>" in l and "dsn=5.1.1, status=bounced (550 5.1.1 no such user)" in l for l in mine)
