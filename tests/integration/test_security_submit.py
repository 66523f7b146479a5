"""Security review of submit: no envelope address can forge a header line or a log line, and a
setgid submit interrupted by a signal leaves nothing behind in the spool's tmp/."""
import os
import signal
import subprocess
import time

import pytest

from conftest import BINARY
from submitlib import header, nothing_queued, queued, sendmail, split
from setgidlib import as_nobody


def test_f_with_an_escaped_line_break_forges_no_header(box):
    for sender in ('"x\\\nX-Evil: 1"@example.com', '"x\\\r\\\nX-Evil: 1"@example.com', '<"x\\\rX: y"@example.com>'):
        p = sendmail(box, "-f", sender, "root", input=b"Subject: s\n\nbody\n")
        assert p.returncode == 65, (sender, p.stderr)
        assert b"sender address '" in p.stderr and b"control character 0x0" in p.stderr, p.stderr
        nothing_queued(box)


def test_f_with_a_folded_quoted_string_is_refused(box):
    # folding belongs in header fields, not in a command-line argument: a CR LF there is refused
    # like any control character (it was unfolded before; issue 11 point 8)
    p = sendmail(box, "-f", '"a\r\n b"@example.com', "root", input=b"Subject: s\n\nbody\n")
    assert p.returncode == 65, p.stderr
    assert b"control character 0x0d at position 3" in p.stderr
    nothing_queued(box)


def test_bs_mail_from_and_rcpt_with_an_escaped_cr_are_refused(box):
    script = (b"EHLO c\r\n"
              b"MAIL FROM:<\"x\\\rX-Evil: 1\"@example.com>\r\n"
              b"MAIL FROM:<a@example.com>\r\n"
              b"RCPT TO:<\"r\\\rX\"@box.example>\r\n"
              b"QUIT\r\n")
    p = sendmail(box, "-bs", input=script)
    lines = p.stdout.split(b"\r\n")
    codes = [ln[:3] for ln in lines if ln[:3].isdigit() and ln[3:4] == b" "]
    # greeting, EHLO, the refused MAIL, the good MAIL, the refused RCPT, QUIT
    assert codes[0] == b"220" and codes[1] == b"250"
    assert codes[2][:1] == b"5" and codes[3] == b"250" and codes[4][:1] == b"5" and codes[5] == b"221", p.stdout
    nothing_queued(box)


def test_L_tag_cannot_forge_a_log_line(box):
    p = sendmail(box, "-L", "tag\nforged[1]: queued: from=<ceo@bank>", "-v", "root", input=b"Subject: s\n\nb\n")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.decode().splitlines()
    assert lines and not any(ln.startswith("forged") for ln in lines), lines
    assert any(ln.startswith("tag_forged[") and "queued:" in ln for ln in lines), lines


def test_setgid_submit_killed_mid_message_leaves_no_tmp_file(setgid_install):
    binary, spool, confdir, gid = setgid_install
    tmp = os.path.join(spool, "tmp")
    p = subprocess.Popen([binary, "submit", "root"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=as_nobody(confdir), env={"PATH": "/usr/bin:/bin"})
    try:
        # the header ends here, so the queue file exists in tmp/ while the body is awaited
        p.stdin.write(b"Subject: half\n\nfirst part of the body\n")
        p.stdin.flush()
        deadline = time.time() + 10
        while not os.listdir(tmp) and time.time() < deadline and p.poll() is None:
            time.sleep(0.01)
        if p.poll() is not None and p.returncode in (121, 122, 123):
            pytest.skip("cannot make a private mount namespace here")
        assert os.listdir(tmp), p.stderr.read() if p.poll() is not None else "no tmp file appeared"
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 75, err
    assert b"interrupted by a signal" in err
    assert os.listdir(tmp) == []
    assert os.listdir(os.path.join(spool, "incoming")) == []


@pytest.mark.parametrize("args,where,pos,code", [
    (["root\r\nBcc: victim@evil.example"], "recipient", 5, 0x0d),
    (["root\nvictim@evil.example"], "recipient", 5, 0x0a),
    (["ok@example.org", "a\tb@example.org"], "recipient", 2, 0x09),
    (["-f", "me@example.org\r\nSubject: forged", "root"], "sender address", 15, 0x0d),
    (["-f", "me\x7f@example.org", "root"], "sender address", 3, 0x7f),
])
def test_control_characters_in_command_line_addresses_are_refused(box, args, where, pos, code):
    p = box.run("submit", "-i", *args, input=b"Subject: x\n\nbody\n")
    assert p.returncode == 65, p.stderr
    err = p.stderr.decode()
    assert f"{where} '" in err and f"control character 0x{code:02x} at position {pos}" in err, err
    assert "\r" not in err and err.count("\n") == 1, err  # shown escaped: no forged log line
    incoming = os.path.join(box.spool, "incoming")
    assert not os.path.isdir(incoming) or os.listdir(incoming) == []  # nothing queued, not even in part
