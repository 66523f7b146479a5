"""submit as sendmail: every flag and every real caller's invocation, checked on the stored
envelope and message in incoming/ (docs/submit.md)."""
import os
import select
import stat

import pytest

from conftest import BINARY
from submitlib import all_queued, header, nothing_queued, queued, refused, routes, sendmail, split

MSG = b"Subject: test\n\nhello\n"


# ---- recipients, -t, -i ----

# Recipient arguments and the routes they get, in order; duplicates go.
ROUTED = [
    pytest.param(["root", "Admin@Example.COM", "user@localhost", "x@box.example"],
                 [("local", "root", "root"), ("smtp", "example.com", "Admin@Example.COM"), ("local", "user", "user"),
                  ("local", "x", "x")], id="arguments"),
    pytest.param(["a@x.org, B <b@y.org>", "a@x.org", "\"john doe\"@x.org", "u@[192.0.2.1]"],
                 [("smtp", "x.org", "a@x.org"), ("smtp", "y.org", "b@y.org"), ("smtp", "x.org", '"john doe"@x.org'),
                  ("smtp", "[192.0.2.1]", "u@[192.0.2.1]")], id="lists_and_duplicates"),
]


@pytest.mark.parametrize("args,want", ROUTED)
def test_recipients_are_routed(box, args, want):
    p = sendmail(box, *args, input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, msg = queued(box)
    assert routes(m) == want
    assert m.sender == "root@box.example"
    assert all(r.tag == "N" and r.priv == -1 for r in m.rcpts)
    assert msg.endswith(b"\n\nhello\n")
    assert header(msg, "Subject") == ["test"]


# -t: arguments, input, then the recipients (sorted), header fields as stored (name: values),
# bytes that must not be stored, and how the stored message ends.
T_CASES = [
    pytest.param(["-t", "extra@w.org"],
                 b"From: me@x.org\nTo: a@x.org, Group: g1@y.org, \"Q, R\" <g2@y.org>;\nCc: c@z.org (comment)\n"
                 b"Bcc: secret@hidden.org\nBCC: other@hidden.org\nSubject: s\n\nbody\nTo: not@header.org\n",
                 ["a@x.org", "c@z.org", "extra@w.org", "g1@y.org", "g2@y.org", "other@hidden.org", "secret@hidden.org"],
                 {"Bcc": [], "Cc": ["c@z.org (comment)"]}, [b"secret@hidden.org"], b"\n\nbody\nTo: not@header.org\n",
                 id="reads_to_cc_bcc_and_removes_bcc"),
    pytest.param(["-t"],
                 b"Resent-From: fw@x.org\nResent-To: new@y.org\nResent-Bcc: hid@y.org\nTo: old@z.org\n"
                 b"Cc: oldcc@z.org\nSubject: fwd\n\nbody\n",
                 ["hid@y.org", "new@y.org"], {"Resent-Bcc": [], "To": ["old@z.org"]}, [], None,
                 id="uses_resent_fields_when_present"),
    # PHP writes CRLF or LF depending on version; the To: line comes from mail()'s first argument
    pytest.param(["-t", "-i"],
                 b"To: user@example.com\r\nSubject: Order\r\nFrom: shop@example.com\r\n"
                 b"X-PHP-Originating-Script: 33:x.php\r\n\r\nThanks\r\n",
                 ["user@example.com"], {}, [b"\r"], b"\n\nThanks\n", id="php_mail"),
]


@pytest.mark.parametrize("args,msg,rcpts,fields,absent,ending", T_CASES)
def test_t(box, args, msg, rcpts, fields, absent, ending):
    p = sendmail(box, *args, input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert sorted(m.recipients) == rcpts
    for name, values in fields.items():
        assert header(stored, name) == values, name
    for b in absent:
        assert b not in stored
    if ending:
        assert stored.endswith(ending)


def test_dot_line_ends_input_without_i(box):
    p = sendmail(box, "root", input=b"Subject: d\n\nline\n.\nnot part of it\n")
    assert p.returncode == 0, p.stderr
    _, _, msg = queued(box)
    assert msg.endswith(b"\n\nline\n")
    assert b"not part" not in msg


@pytest.mark.parametrize("flag", ["-i", "-oi", "-oi=true", "-oiTrue"])
def test_i_and_oi_keep_dot_lines(box, flag):
    p = sendmail(box, flag, "root", input=b"Subject: d\n\nline\n.\nstill here\n..\n")
    assert p.returncode == 0, p.stderr
    _, _, msg = queued(box)
    assert msg.endswith(b"\n\nline\n.\nstill here\n..\n")


def test_oi_with_another_value_keeps_the_dot_end(box):
    p = sendmail(box, "-oi=false", "root", input=b"Subject: d\n\nline\n.\nnot stored\n")
    assert p.returncode == 0, p.stderr
    _, _, msg = queued(box)
    assert msg.endswith(b"\n\nline\n")


# ---- sender, full name, DSN, body type ----

@pytest.mark.parametrize("flag", ["-f", "-r"])
def test_f_and_r_set_the_sender(box, flag):
    p = sendmail(box, flag, "Sender@Example.ORG", "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, msg = queued(box)
    assert m.sender == "Sender@Example.ORG"
    assert header(msg, "From") == ["Sender@Example.ORG"] or header(msg, "From")[0].endswith("<Sender@Example.ORG>")


@pytest.mark.parametrize("args", [["-f", ""], ["-f", "<>"], ["-f<>"]])
def test_null_sender(box, args):
    p = sendmail(box, *args, "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, msg = queued(box)
    assert m.field("s") == "<>" and m.sender == ""
    # the From: line submit adds still names the user, never an empty address
    assert header(msg, "From")[0].endswith("<root@box.example>") or header(msg, "From") == ["root@box.example"]


def test_bare_f_is_qualified(box):
    p = sendmail(box, "-f", "backup", "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.sender == "backup@box.example"


@pytest.mark.parametrize("args", [["-F", "Backup Job"], ["-FBackup Job"]])
def test_F_sets_the_full_name(box, args):
    p = sendmail(box, *args, "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, _, msg = queued(box)
    assert header(msg, "From") == ["Backup Job <root@box.example>"]


def test_F_with_specials_is_quoted(box):
    p = sendmail(box, "-F", 'Doe, "J"', "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, _, msg = queued(box)
    assert header(msg, "From") == ['"Doe, \\"J\\"" <root@box.example>']


def test_dsn_flags(box):
    p = sendmail(box, "-N", "success,delay", "-R", "hdrs", "-V", "env+id=1", "a@x.org", "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert [r.notify for r in m.rcpts] == ["S,D", "S,D"]
    assert m.field("R") == "H"
    from spoolfmt import xtext_decode
    assert xtext_decode(m.field("e")) == "env+id=1"
    p = sendmail(box, "-N", "never", "-R", "FULL", "b@x.org", input=MSG)
    assert p.returncode == 0
    ms = {m.recipients[0]: m for m, _ in all_queued(box)}
    assert ms["b@x.org"].rcpts[0].notify == "N" and ms["b@x.org"].field("R") == "F"


@pytest.mark.parametrize("args,why", [(["-N", "sometimes"], b"-N sometimes"), (["-R", "most"], b"-R most"),
                                      (["-V", "has space"], b"-V has space"), (["-B", "BINARYMIME"], b"-B BINARYMIME")])
def test_bad_flag_values_are_usage_errors(box, args, why):
    p = sendmail(box, *args, "root", input=MSG)
    assert p.returncode == 64
    assert why in p.stderr
    nothing_queued(box)


@pytest.mark.parametrize("args,flag", [(["-B", "8BITMIME"], "8"), (["-B8BITMIME"], "8"), (["-B", "7BIT"], "7"), ([], "7")])
def test_B_body_type(box, args, flag):
    p = sendmail(box, *args, "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.field("b") == flag


def test_8bit_data_sets_the_body_flag_whatever_B_says(box):
    p = sendmail(box, "-B", "7BIT", "root", input="Subject: é\n\nnaïve\n".encode())
    assert p.returncode == 0
    _, m, msg = queued(box)
    assert m.field("b") == "8"
    assert msg.endswith("\n\nnaïve\n".encode())


# ---- modes ----

def test_bm_is_the_default_mode(box):
    p = sendmail(box, "-bm", "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.recipients == ["root"]


def test_bp_runs_mailq_and_passes_its_exit_code(box):
    import re
    direct = box.run("mailq")
    p = sendmail(box, "-bp")
    assert p.returncode == direct.returncode
    assert p.stdout == direct.stdout
    pid = re.compile(rb"\[\d+\]")
    assert pid.sub(b"", p.stderr) == pid.sub(b"", direct.stderr)
    nothing_queued(box)


def test_bv_shows_routes_and_queues_nothing(box):
    p = sendmail(box, "-bv", "root", "a@Example.com")
    assert p.returncode == 0
    assert p.stdout == b"root: channel local host root user root\na@Example.com: channel smtp host example.com user a@Example.com\n"
    p = sendmail(box, "-bv", "a@@b")
    assert p.returncode == 65
    assert not os.path.exists(os.path.join(box.spool, "incoming")) or os.listdir(os.path.join(box.spool, "incoming")) == []


def _trigger_reader(box):
    sendmail(box, "root", input=MSG)  # creates the spool and its FIFO
    return os.open(os.path.join(box.spool, "trigger"), os.O_RDONLY | os.O_NONBLOCK)


def _read_trigger(fd):
    select.select([fd], [], [], 5)
    return os.read(fd, 512)


def test_q_writes_Q_to_the_trigger(box):
    fd = _trigger_reader(box)
    try:
        os.read(fd, 512)  # the submission's own wake-up byte
        p = sendmail(box, "-q")
        assert p.returncode == 0, p.stderr
        assert _read_trigger(fd) == b"Q\n"
    finally:
        os.close(fd)


@pytest.mark.parametrize("args", [["-qR", "Example.org"], ["-qRExample.org"]])
def test_qR_writes_the_domain_to_the_trigger(box, args):
    fd = _trigger_reader(box)
    try:
        os.read(fd, 512)
        p = sendmail(box, *args)
        assert p.returncode == 0, p.stderr
        assert _read_trigger(fd) == b"RExample.org\n"
    finally:
        os.close(fd)


def test_q_without_scheduler_runs_the_queue_once(box):
    # issue 10 point 5: root's -q with no scheduler runs the queue in the foreground (mailq -q,
    # then scheduler -1); tests/integration/test_mailq_control.py checks what it delivers
    sendmail(box, "root", input=MSG)
    p = sendmail(box, "-q", timeout=60)
    assert p.returncode == 0, p.stderr
    assert b"no scheduler: running the queue once in the foreground" in p.stderr
    p = sendmail(box, "-qR", "bad domain")
    assert p.returncode == 64


def test_submission_wakes_a_listening_scheduler(box):
    fd = _trigger_reader(box)
    try:
        os.read(fd, 512)
        p = sendmail(box, "root", input=MSG)
        assert p.returncode == 0
        assert _read_trigger(fd) == b"\n"
    finally:
        os.close(fd)


def test_no_scheduler_mail_waits_in_incoming(box):
    for i in range(3):
        assert sendmail(box, "root", input=MSG).returncode == 0
    assert len(all_queued(box)) == 3


def test_v_reports_the_queue_id(box):
    p = sendmail(box, "-v", "root", input=MSG, env={"LOG": "syslog"})
    assert p.returncode == 0
    mid, _, _ = queued(box)
    assert mid.encode() + b": queued" in p.stderr
    p = sendmail(box, "root", input=MSG, env={"LOG": "syslog"})
    assert p.returncode == 0 and p.stderr == b""


def test_C_reads_another_configuration(box):
    path = box.write_conf("QUALIFYDOMAIN=from-file.example\n")
    p = sendmail(box, "-C", path, "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.sender == "root@from-file.example"
    p = sendmail(box, "-C", os.path.join(box.base, "missing.conf"), "root", input=MSG)
    assert p.returncode == 78


def test_a_configuration_mistake_never_refuses_mail(box):
    """Issue 12 point 2: one misspelled key made sendmail refuse all mail (78). Now it queues,
    logs each mistake, and spoolbox --check still reports them as errors."""
    path = box.write_conf("QUALIFYDOMAIN=from-file.example\nSMARTHSOT=relay.example\nSIZELIMIT=huge\n"
                          "not a line\nALLMAILFROM=not an address\n")
    p = sendmail(box, "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.sender == "root@from-file.example" and m.recipients == ["root"]
    err = p.stderr.decode()
    for where, what in ((2, "unknown key SMARTHSOT"), (3, "SIZELIMIT: not a size"), (4, "expected NAME=value")):
        assert f"configuration error ignored, mail is queued all the same: {path}:{where}: {what}" in err, err
    assert "ALLMAILFROM=not an address: not an address with a domain" in err and "ignored until it is fixed" in err
    p = box.run(None, "--check")
    assert p.returncode == 78
    assert f"{path}:2: error: unknown key SMARTHSOT".encode() in p.stderr


def test_a_configuration_submit_cannot_work_around_is_refused(box):
    box.write_conf("SPOOL=relative/spool\n")
    p = sendmail(box, "root", input=MSG)
    assert p.returncode == 78
    assert b"SPOOL: not an absolute path" in p.stderr and b"message not queued" in p.stderr


def test_compatibility_options_are_accepted(box):
    args = ["-oem", "-oep", "-oee", "-oeq", "-oew", "-odi", "-odb", "-odq", "-om", "-oQ/var/spool/mqueue",
            "-oXfile", "-oL9", "-G", "-U", "-L", "mytag", "-X", "/dev/null", "-O", "DeliveryMode=b",
            "-c", "-I", "-m", "-n", "-s", "-h", "5", "-d0.1", "-e", "m", "-A", "c", "-p", "smtp", "-Q", "r",
            "-M", "Sx", "root"]
    p = sendmail(box, *args, input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.recipients == ["root"]


# Other sendmails' options (issue 12 point 4): (arguments, what the log names). Each is
# accepted, its argument is not taken for a recipient, and the log says it was ignored.
FOREIGN = [
    (["-a", "work"], "-a (with its argument)"),                      # msmtp account
    (["-awork"], "-a (with its argument)"),
    (["--read-envelope-from"], "--read-envelope-from"),             # msmtp
    (["--account=work"], "--account (with its argument)"),
    (["--account", "work"], "--account (with its argument)"),
    (["--tls-trust-file", "/etc/ssl/ca.pem"], "--tls-trust-file (with its argument)"),
    (["--auth=on"], "--auth (with its argument)"),
    (["-S", "smtp.example.net:587"], "-S (with its argument)"),     # BusyBox
    (["-Ssmtp.example.net"], "-S (with its argument)"),
    (["-au", "bob"], "-au (with its argument)"),
    (["-aubob"], "-a (with its argument)"),
    (["-ap", "SECRETPW"], "-ap (with its argument)"),
    (["-am", "PLAIN"], "-am (with its argument)"),
    (["-w", "30"], "-w (with its argument)"),
    (["-H", "openssl s_client -quiet -connect smtp.example.net:465"], "-H (with its argument)"),
    (["-Z"], "-Z"),                                                 # any other letter
    (["-Zi"], "-Z"),
]


@pytest.mark.parametrize("args,logged", FOREIGN, ids=[" ".join(a) for a, _ in FOREIGN])
def test_other_sendmails_options_are_accepted_and_logged(box, args, logged):
    p = sendmail(box, *args, "root", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.recipients == ["root"]
    assert f"ignored option {logged}: spoolbox does not use it".encode() in p.stderr
    assert b"SECRETPW" not in p.stderr


def test_busybox_invocation_as_one_line(box):
    p = sendmail(box, "-S", "smtp.example.net", "-au", "bob", "-ap", "SECRETPW", "-w", "10", "-t",
                 input=b"To: root\nSubject: busybox\n\nx\n")
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.recipients == ["root"] and b"SECRETPW" not in p.stderr


def test_msmtp_long_forms_that_mean_something(box):
    p = sendmail(box, "--read-recipients", "--from=alice@example.org", input=b"To: root\n\nx\n")
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.recipients == ["root"] and m.sender == "alice@example.org"


def test_usage_errors_that_remain(box):
    p = sendmail(box, "--account", input=MSG)
    assert p.returncode == 64 and b"option --account needs an argument" in p.stderr
    for args, name in ((["root", "-f"], b"-f"), (["-qR"], b"-qR"), (["-qI"], b"-qI")):
        p = sendmail(box, *args, input=MSG)
        assert p.returncode == 64 and b"option " + name + b" needs an argument" in p.stderr, p.stderr
    p = sendmail(box, input=MSG)
    assert p.returncode == 64
    assert b"no recipients given" in p.stderr
    p = sendmail(box, "-bd")
    assert p.returncode == 64 and b"scheduler" in p.stderr


# ---- the exact invocations of real callers ----

def test_cron(box):
    msg = ("From: root (Cron Daemon)\nTo: root\nSubject: Cron <root@router> /usr/local/bin/backup\n"
           "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n"
           "X-Cron-Env: <SHELL=/bin/sh>\n\nbackup done: 3 Dateien übertragen\n").encode()
    p = sendmail(box, "-FCronDaemon", "-i", "-B8BITMIME", "-oem", "root", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert m.sender == "root@box.example"
    assert routes(m) == [("local", "root", "root")]
    assert m.field("b") == "8"
    assert header(stored, "From") == ["root@box.example (Cron Daemon)"]
    assert header(stored, "To") == ["root@box.example"]
    assert stored.endswith("\n\nbackup done: 3 Dateien übertragen\n".encode())


def test_mailx_t(box):
    msg = b"To: admin@example.com\nSubject: disk\nUser-Agent: mailx\n\nfull\n"
    p = sendmail(box, "-oi", "-t", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert routes(m) == [("smtp", "example.com", "admin@example.com")]
    assert stored.endswith(b"\n\nfull\n")


def test_mailx_user(box):
    p = sendmail(box, "-i", "admin", input=b"Subject: x\n\n.\nbody\n")
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert routes(m) == [("local", "admin", "admin")]
    assert stored.endswith(b"\n\n.\nbody\n")


def test_mutt(box):
    msg = (b"Date: Sat, 21 Nov 2026 10:00:00 +0100\nFrom: Me <me@example.org>\nTo: you@example.net\n"
           b"Cc: third@example.net\nBcc: hidden@example.net\nMessage-ID: <x@y>\nSubject: hi\n\nbody\n")
    p = sendmail(box, "-oem", "-oi", "--", "you@example.net", "third@example.net", "hidden@example.net", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert m.recipients == ["you@example.net", "third@example.net", "hidden@example.net"]
    # mutt's own Date and Message-ID stay, none added
    assert header(stored, "Date") == ["Sat, 21 Nov 2026 10:00:00 +0100"]
    assert header(stored, "Message-ID") == ["<x@y>"]
    assert header(stored, "Bcc") == []  # Bcc is never stored


def test_git_send_email(box):
    msg = (b"From: Dev <dev@example.org>\nTo: list@example.com\nCc: rev@example.net\n"
           b"Subject: [PATCH] fix\nDate: Sat, 21 Nov 2026 10:00:00 +0000\nMessage-ID: <p@dev>\n"
           b"X-Mailer: git-send-email 2.39\n\n---\n file | 2 +-\n.\n")
    p = sendmail(box, "-i", "-f", "dev@example.org", "list@example.com", "rev@example.net", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert m.sender == "dev@example.org"
    assert m.recipients == ["list@example.com", "rev@example.net"]
    assert stored.endswith(b"\n\n---\n file | 2 +-\n.\n")


def test_sudo(box):
    msg = (b"To: root\nFrom: root\nAuto-Submitted: auto-generated\nSubject: *** SECURITY information for router ***\n"
           b"\nrouter : Nov 21 10:00:00 : alice : user NOT in sudoers ; TTY=pts/0 ; COMMAND=/bin/sh\n")
    p = sendmail(box, "-t", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert routes(m) == [("local", "root", "root")]
    assert header(stored, "From") == ["root@box.example"]
    assert header(stored, "To") == ["root@box.example"]


def test_mailutils_f(box):
    msg = b"To: ops@example.com\nSubject: report\n\nok\n"
    p = sendmail(box, "-oi", "-f", "reports@example.org", "-t", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert m.sender == "reports@example.org"
    assert m.recipients == ["ops@example.com"]
    assert header(stored, "From") == ["root <reports@example.org>"] or header(stored, "From") == ["reports@example.org"]


def test_f_empty_passes_the_null_sender(box):
    p = sendmail(box, "-f", "", "-t", input=b"To: a@example.com\nSubject: bounce\n\nx\n")
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert m.field("s") == "<>"


def test_sendmail_and_submit_names_are_the_same(box):
    p = box.run("submit", "root", input=MSG)
    assert p.returncode == 0
    p = box.run(None, "root", input=MSG, argv0="/usr/lib/sendmail")
    assert p.returncode == 0
    assert len(all_queued(box)) == 2


# ---- malformed recipients ----

# Submissions refused before anything is queued: arguments, input, exit code, parts of the reason.
REFUSED = [
    pytest.param(["-t"], b"Subject: nobody\n\nx\n", 65, [b"no recipient addresses found in the header"],
                 id="t_without_recipients"),
    pytest.param(["-t"], b"To: good@x.org, bad@@x.org\n\nx\n", 65, [b"To: header", b"column"], id="t_with_malformed_to"),
    pytest.param(["-f", "a b c", "root"], MSG, 65, [b"sender address 'a b c'"], id="bad_f"),
    # malformed recipients
    pytest.param(["good@x.org", "a@"], MSG, 65, [b"missing domain"], id="rcpt_without_domain"),
    pytest.param(["good@x.org", "john doe"], MSG, 65, [b"column 6"], id="rcpt_two_words"),
    pytest.param(["good@x.org", "<a@b.c"], MSG, 65, [b"missing '>'"], id="rcpt_open_angle"),
    pytest.param(["good@x.org", "a@exa mple.com"], MSG, 65, [b"recipient"], id="rcpt_space_in_domain"),
    pytest.param(["good@x.org", "a@b..c"], MSG, 65, [b"empty label"], id="rcpt_empty_label"),
    pytest.param(["good@x.org", "a@[300.1.1.1]"], MSG, 65, [b"literal"], id="rcpt_bad_literal"),
    pytest.param(["good@x.org", ""], MSG, 65, [b"no address"], id="rcpt_empty"),
    pytest.param(["good@x.org", "a@b\x01c.org"], MSG, 65, [b"control character"], id="rcpt_control_character"),
    # overlong addresses
    pytest.param(["a" * 256 + "@x.org"], MSG, 65, [b"local part too long"], id="local_part_too_long"),
    pytest.param(["a@" + "b" * 64 + ".org"], MSG, 65, [b"63"], id="label_too_long"),
]


@pytest.mark.parametrize("args,input,code,why", REFUSED)
def test_refused(box, args, input, code, why):
    refused(box, args, input, code, why)


def test_recipient_limit(box):
    refused(box, [f"u{i}@x.org" for i in range(6)], MSG, 65, [b"too many recipients"], env={"MAXRCPT_SUBMIT": "5"})


def test_binary_runs(binary):
    assert os.path.exists(binary) and BINARY == binary


def test_bi_runs_newaliases_and_passes_its_exit_code(box):
    direct = box.run("newaliases")
    p = sendmail(box, "-bi")
    assert p.returncode == direct.returncode
    assert p.stdout == direct.stdout


def test_L_sets_the_log_tag(box):
    p = sendmail(box, "-L", "backupjob", "-v", "root", input=MSG)
    assert p.returncode == 0
    assert p.stderr.startswith(b"backupjob[")


def test_submit_never_resolves_names(box, tmp_path):
    """PERF-NOTES trap 6: a name lookup on the submit path. /etc/hosts and /etc/resolv.conf are
    replaced by FIFOs in a private mount namespace: any resolver that opens one blocks, and the
    run times out."""
    import ctypes
    import subprocess
    fifo = tmp_path / "trap"
    os.mkfifo(fifo)
    libc = ctypes.CDLL(None, use_errno=True)
    targets = [p for p in (b"/etc/hosts", b"/etc/resolv.conf") if os.path.exists(p)]

    def pre():
        if libc.unshare(0x00020000) != 0 or libc.mount(b"none", b"/", None, 16384 | (1 << 18), None) != 0:
            os._exit(121)
        for t in targets:
            if libc.mount(str(fifo).encode(), t, None, 4096, None) != 0:
                os._exit(122)

    box.env.pop("MYHOSTNAME")  # the host's own name must come from uname, not from a lookup
    for args, data in ((["root", "a@example.com"], b"Subject: s\n\nx\n"),
                       (["-bs"], b"EHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<b@example.com>\r\nDATA\r\nx\r\n.\r\nQUIT\r\n")):
        try:
            p = subprocess.run([BINARY, "submit"] + args, input=data, capture_output=True, timeout=10,
                               preexec_fn=pre, env=box.environ())
        except subprocess.TimeoutExpired:
            pytest.fail(f"submit {args} opened a resolver file (it hung on the FIFO)")
        if p.returncode in (121, 122):
            pytest.skip("cannot make a private mount namespace here")
        assert p.returncode == 0, p.stderr
    assert len(all_queued(box)) == 2


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002, 0o000])
def test_queued_file_is_0640_whatever_the_umask(box, umask):
    """The message file is 0640 (the scheduler reads it through the group) under any umask of
    the caller: the create's mode where the umask leaves it, an fchmod where it does not."""
    p = box.run(None, "root", input=b"Subject: m\n\nbody\n", argv0="/usr/sbin/sendmail",
                preexec_fn=lambda: os.umask(umask))
    assert p.returncode == 0, p.stderr
    names = os.listdir(os.path.join(box.spool, "incoming"))
    assert len(names) == 1
    st = os.stat(os.path.join(box.spool, "incoming", names[0]))
    assert stat.S_IMODE(st.st_mode) == 0o640, oct(st.st_mode)
