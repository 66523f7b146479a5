"""submit -bs: the SMTP dialogue on stdin/stdout that Symfony Mailer / SwiftMailer and Laravel
use by default and pine uses as `-bs -odb -oem`, driven the way those clients drive it."""
import subprocess

from conftest import BINARY
from submitlib import all_queued, header, queued, routes, split


class Dialogue:
    """A client talking to `sendmail ARGS` over pipes, one command and reply at a time."""

    def __init__(self, box, *args):
        self.p = subprocess.Popen(["/usr/sbin/sendmail"] + list(args), executable=BINARY, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=box.environ())

    def reply(self):
        lines = []
        while True:
            line = self.p.stdout.readline()
            assert line.endswith(b"\r\n"), (lines, line)
            lines.append(line)
            if line[3:4] != b"-":
                return int(line[:3]), b"".join(lines)

    def cmd(self, text):
        self.p.stdin.write(text.encode() + b"\r\n")
        self.p.stdin.flush()
        return self.reply()

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(10)
        self.stderr = self.p.stderr.read()
        return rc


def test_symfony_swiftmailer_step_by_step(box):
    d = Dialogue(box, "-bs")
    code, greet = d.reply()
    assert code == 220 and b"box.example" in greet
    code, ehlo = d.cmd("EHLO [127.0.0.1]")
    assert code == 250
    for ext in (b"PIPELINING", b"8BITMIME", b"SIZE 10485760", b"DSN", b"ENHANCEDSTATUSCODES", b"SMTPUTF8"):
        assert b"250-" + ext in ehlo or b"250 " + ext in ehlo
    assert d.cmd("MAIL FROM:<app@example.org>")[0] == 250
    assert d.cmd("RCPT TO:<customer@example.com>")[0] == 250
    assert d.cmd("RCPT TO:<Copy <x>")[0] == 501
    assert d.cmd("DATA")[0] == 354
    body = ("From: App <app@example.org>\r\nTo: customer@example.com\r\nSubject: Your order\r\n"
            "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n..leading dot\r\nThanks\r\n.")
    code, text = d.cmd(body)
    assert code == 250, text
    mid = text.split(b"queued as ")[1].strip().decode()
    assert d.cmd("QUIT")[0] == 221
    assert d.close() == 0
    qid, m, stored = queued(box)
    assert qid == mid
    assert m.sender == "app@example.org"
    assert routes(m) == [("smtp", "example.com", "customer@example.com")]
    assert split(stored)[1] == b".leading dot\nThanks\n"
    assert header(stored, "Received")[0].startswith("from [127.0.0.1] (root, uid 0)\n\tby box.example (spoolbox) with ESMTP id " + mid + ";")


def test_laravel_pipelined_with_i(box):
    # Laravel's default: "/usr/sbin/sendmail -bs -i"; Symfony pipelines MAIL, RCPT, DATA.
    session = (b"EHLO laravel.test\r\nMAIL FROM:<noreply@laravel.test> BODY=8BITMIME SIZE=200\r\n"
               b"RCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com> NOTIFY=FAILURE,DELAY ORCPT=rfc822;b@example.com\r\n"
               b"DATA\r\nSubject: Welcome\r\n\r\nHi \xc3\xa9\r\n.\r\n"
               b"MAIL FROM:<noreply@laravel.test>\r\nRCPT TO:<c@example.com>\r\nDATA\r\nSubject: 2\r\n\r\nsecond\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", "-i", input=session, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0, p.stderr
    replies = p.stdout.split(b"\r\n")
    codes = [r[:3] for r in replies if r[3:4] == b" "]
    assert codes == [b"220", b"250", b"250", b"250", b"250", b"354", b"250", b"250", b"250", b"354", b"250", b"221"]
    msgs = sorted(all_queued(box), key=lambda mb: mb[0].recipients)
    (m1, s1), (m2, s2) = msgs
    assert m1.recipients == ["a@example.com", "b@example.com"]
    assert m1.field("b") == "8"
    assert m1.rcpts[0].notify is None and m1.rcpts[1].notify == "F,D"
    assert m1.rcpts[1].orcpt == "rfc822;b@example.com"
    assert split(s1)[1] == "Hi é\n".encode()
    assert m2.recipients == ["c@example.com"]
    assert split(s2)[1] == b"second\n"


def test_pine_bs_odb_oem(box):
    d = Dialogue(box, "-bs", "-odb", "-oem")
    assert d.reply()[0] == 220
    assert d.cmd("HELO router")[0] == 250
    assert d.cmd("MAIL FROM:<alice@box.example>")[0] == 250
    assert d.cmd("RCPT TO:<root>")[0] == 250
    assert d.cmd("RCPT TO:<friend@example.org>")[0] == 250
    assert d.cmd("DATA")[0] == 354
    assert d.cmd("Date: Sat, 21 Nov 2026 10:00:00 +0000\r\nFrom: Alice <alice@box.example>\r\nTo: root\r\n"
                 "Subject: pine\r\n\r\nhello from pine\r\n.")[0] == 250
    assert d.cmd("QUIT")[0] == 221
    assert d.close() == 0
    _, m, stored = queued(box)
    assert routes(m) == [("local", "root", "root"), ("smtp", "example.org", "friend@example.org")]
    assert header(stored, "To") == ["root@box.example"]
    assert "with SMTP" in header(stored, "Received")[0]


def test_bs_null_sender_dsn_and_rset(box):
    session = (b"EHLO c\r\nMAIL FROM:<> RET=HDRS ENVID=id+2B1\r\nRCPT TO:<root>\r\nRSET\r\n"
               b"MAIL FROM:<> RET=FULL ENVID=id+2B2\r\nRCPT TO:<root> NOTIFY=NEVER\r\nDATA\r\nSubject: x\r\n\r\ny\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0
    _, m, _ = queued(box)
    assert m.field("s") == "<>"
    assert m.field("R") == "F"
    assert m.field("e") == "id+2B2"
    assert m.rcpts[0].notify == "N"


def test_bs_errors_and_refusals(box):
    session = (b"EHLO c\r\nMAIL FROM:<a@x.org> SIZE=99999999999\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<bad@@x>\r\n"
               b"RCPT TO:<u@b\xc3\xbccher.example>\r\nDATA\r\nVRFY root\r\nEXPN staff\r\nHELP\r\nNOOP\r\n"
               b"XYZZY\r\n" + b"NOOP " + b"x" * 3000 + b"\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    out = p.stdout
    assert b"552 5.3.4" in out
    assert b"501 5.1.3 Bad recipient address syntax" in out
    assert b"553 5.6.7" in out  # UTF-8 without SMTPUTF8
    assert b"554 5.5.1 No valid recipients" in out
    assert b"252 2.5.2" in out
    assert b"502 5.5.1" in out
    assert b"214 " in out
    assert b"500 5.5.2 Syntax error" in out
    assert b"500 5.5.2 Line too long" in out
    assert out.endswith(b"221 2.0.0 box.example closing connection\r\n")
    assert all_queued(box) == []


def test_bs_smtputf8_and_utf8_domain(box):
    session = ("EHLO c\r\nMAIL FROM:<a@x.org> SMTPUTF8\r\nRCPT TO:<jørn@example.com>\r\nRCPT TO:<u@bücher.example>\r\n"
               "DATA\r\nSubject: s\r\n\r\nb\r\n.\r\nQUIT\r\n").encode()
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert b"553 5.1.3 recipient 'u@b\xc3\xbccher.example': non-ASCII domain" in p.stdout
    _, m, _ = queued(box)
    assert "U" in m.fields
    assert m.recipients == ["jørn@example.com"]


def test_bs_refusal_whose_address_holds_4_5_3_is_permanent(box):
    # the reply code follows the refusal, not a "4.5.3" that the refused address itself holds
    session = ("EHLO c\r\nMAIL FROM:<a@x.org> SMTPUTF8\r\nRCPT TO:<4.5.3@bücher.example>\r\n"
               "RCPT TO:<b@example.com>\r\nDATA\r\nSubject: s\r\n\r\nb\r\n.\r\nQUIT\r\n").encode()
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert b"553 5.1.3 recipient '4.5.3@b\xc3\xbccher.example': non-ASCII domain" in p.stdout, p.stdout
    _, m, _ = queued(box)
    assert m.recipients == ["b@example.com"]


def test_bs_size_limit_rejects_data_and_queues_nothing(box):
    session = (b"EHLO c\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<root>\r\nDATA\r\n" + b"z" * 5000 + b"\r\n.\r\n"
               b"MAIL FROM:<a@x.org>\r\nRCPT TO:<root>\r\nDATA\r\nsmall\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail", env={"SIZELIMIT": "4k"})
    assert b"250-SIZE 4096" in p.stdout
    assert b"552 5.3.4 message larger than the size limit" in p.stdout
    msgs = all_queued(box)
    assert len(msgs) == 1 and split(msgs[0][1])[1] == b"small\n"


def test_bs_smuggling_attempt_is_one_message(box):
    session = (b"EHLO c\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<root>\r\nDATA\r\nSubject: s\r\n\r\nA\n.\n"
               b"MAIL FROM:<evil@x.org>\r\nRCPT TO:<victim@y.org>\r\nDATA\r\nforged\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0
    msgs = all_queued(box)
    assert len(msgs) == 1
    m, stored = msgs[0]
    assert m.sender == "a@x.org" and m.recipients == ["root"]
    # the would-be commands are content, stored as lines; the smtp transport dot-stuffs them
    assert split(stored)[1] == b"A\n.\nMAIL FROM:<evil@x.org>\nRCPT TO:<victim@y.org>\nDATA\nforged\n"


def test_bs_end_of_input_without_quit_queues_nothing_partial(box):
    session = b"HELO c\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<root>\r\nDATA\r\npartial message\r\n"
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0
    assert all_queued(box) == []
    import os
    assert os.listdir(os.path.join(box.spool, "tmp")) == []


def test_bs_helo_name_made_safe_for_received(box):
    # the HELO name goes into the Received: line: 63 bytes at most, no ";()", nothing unprintable
    helo = b"a;b(c)\xc3\xa9" + b"x" * 70
    session = b"HELO " + helo + b"\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<root>\r\nDATA\r\nSubject: x\r\n\r\ny\r\n.\r\nQUIT\r\n"
    p = box.run(None, "-bs", input=session, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0, p.stderr
    _, _, stored = queued(box)
    assert header(stored, "Received")[0].startswith("from a?b?c???" + "x" * 55 + " (root, uid 0)\n")


def test_bs_recipient_limit(box):
    # MAXRCPT_SUBMIT: the RCPT past it gets 452 4.5.3 (a duplicate counts), and the message
    # goes with those accepted
    session = (b"EHLO c\r\nMAIL FROM:<a@x.org>\r\nRCPT TO:<r1@x.org>\r\nRCPT TO:<r1@x.org>\r\nRCPT TO:<r2@x.org>\r\n"
               b"DATA\r\nSubject: x\r\n\r\ny\r\n.\r\nQUIT\r\n")
    p = box.run(None, "-bs", input=session, env={"MAXRCPT_SUBMIT": "2"}, argv0="/usr/sbin/sendmail")
    assert p.returncode == 0, p.stderr
    assert b"\r\n452 4.5.3 Too many recipients\r\n354 " in p.stdout
    _, m, _ = queued(box)
    assert m.recipients == ["r1@x.org"]
