"""submit's header rules and message storage (issue point 7, docs/submit.md): added fields,
system-mail rewriting and its precedence, bytes stored exactly, line endings, NUL and bare CR,
the size limit; and routing and SMTPUTF8 (point 8)."""
import re

import pytest

from submitlib import header, queued, refused, routes, sendmail, split


def test_missing_date_message_id_from_are_added_and_received_is_first(box):
    p = sendmail(box, "root", input=b"Subject: s\n\nbody\n")
    assert p.returncode == 0, p.stderr
    mid, m, msg = queued(box)
    fields, body = split(msg)
    assert fields[0][0] == "Received"
    assert fields[0][1].decode().startswith(f"from root by box.example (spoolbox) id {mid};")
    assert re.match(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}$", header(msg, "Date")[0])
    assert header(msg, "Message-ID") == [f"<{mid}@box.example>"]
    assert header(msg, "From") == ["root <root@box.example>"]
    assert body == b"body\n"


def test_present_fields_are_kept_not_duplicated(box):
    msg = b"From: Someone <s@example.org>\nDate: Mon, 2 Nov 2026 10:00:00 +0000\nMessage-Id: <abc@def>\nSubject: s\n\nb\n"
    p = sendmail(box, "root", input=msg)
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert header(stored, "From") == ["Someone <s@example.org>"]
    assert header(stored, "Date") == ["Mon, 2 Nov 2026 10:00:00 +0000"]
    assert header(stored, "Message-ID") == ["<abc@def>"]
    # everything after our Received: line is the caller's header, in order, unchanged
    assert stored.split(b"\n", 1)[1] == msg


def test_body_is_never_rewritten(box):
    body = b"From: root\nTo: root (x)\nroot\n\n.\nBcc: secret@x.org\n"
    p = sendmail(box, "-t", "-i", input=b"To: root\n\n" + body)
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert split(stored)[1] == body


def test_headerless_input_gets_a_header(box):
    p = sendmail(box, "root", input=b"just a line of text\nand another\n")
    assert p.returncode == 0
    _, _, stored = queued(box)
    fields, body = split(stored)
    assert body == b"just a line of text\nand another\n"
    assert [f for f, _ in fields] == ["Received", "Date", "Message-ID", "From"]


def test_leading_mbox_from_line_is_dropped(box):
    p = sendmail(box, "root", input=b"From root Sat Nov 21 10:00:00 2026\nSubject: s\n\nb\n")
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert b"From root Sat" not in stored
    assert header(stored, "Subject") == ["s"]


# ---- system-mail rewriting ----

def test_bare_addresses_are_qualified_in_envelope_and_address_fields(box):
    msg = (b"From: root (Cron Daemon)\nTo: admin, ops@example.com\nCc: Bob <bob>\nReply-To: noreply\n"
           b"Subject: root\nX-Other: root\n\nroot\n")
    p = sendmail(box, "-f", "cron", "-t", input=msg, env={"QUALIFYDOMAIN": "router.example.net"})
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert m.sender == "cron@router.example.net"
    assert header(stored, "From") == ["root@router.example.net (Cron Daemon)"]
    assert header(stored, "To") == ["admin@router.example.net, ops@example.com"]
    assert header(stored, "Cc") == ["Bob <bob@router.example.net>"]
    assert header(stored, "Reply-To") == ["noreply@router.example.net"]
    assert header(stored, "Subject") == ["root"]
    assert header(stored, "X-Other") == ["root"]
    assert split(stored)[1] == b"root\n"
    # bare recipients are local whatever QUALIFYDOMAIN says
    assert routes(m) == [("local", "admin", "admin"), ("smtp", "example.com", "ops@example.com"), ("local", "bob", "bob")]


def test_qualifydomain_defaults_to_myhostname(box):
    p = sendmail(box, "root", input=b"From: root\n\nx\n")
    assert p.returncode == 0
    _, m, stored = queued(box)
    assert m.sender == "root@box.example"
    assert header(stored, "From") == ["root@box.example"]


def test_unparsable_from_is_left_alone(box):
    p = sendmail(box, "root", input=b"From: broken <<\n\nx\n")
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert header(stored, "From") == ["broken <<"]


def test_allmailfrom_overrides_f_but_not_the_null_sender(box):
    env = {"ALLMAILFROM": "router@example.net"}
    p = sendmail(box, "-f", "someone@else.org", "root", input=b"Subject: s\n\nx\n", env=env)
    assert p.returncode == 0
    _, m, stored = queued(box)
    assert m.sender == "router@example.net"
    assert header(stored, "From") == ["root <router@example.net>"]
    box_reset(box)
    p = sendmail(box, "-f", "", "root", input=b"Subject: s\n\nx\n", env=env)
    assert p.returncode == 0
    _, m, _ = queued(box)
    assert m.field("s") == "<>"


def test_rewrite_from_replaces_local_from_only(box):
    env = {"REWRITE_FROM": "alerts@example.net"}
    p = sendmail(box, "-FNAS", "root", input=b"From: root (Cron Daemon)\nSubject: s\n\nx\n", env=env)
    assert p.returncode == 0
    _, m, stored = queued(box)
    assert header(stored, "From") == ["NAS <alerts@example.net>"]
    assert m.sender == "root@box.example"  # the envelope is ALLMAILFROM's business
    box_reset(box)
    p = sendmail(box, "root", input=b"From: user@localhost\n\nx\n", env=env)
    _, _, stored = queued(box)
    assert header(stored, "From")[0].endswith("<alerts@example.net>")
    box_reset(box)
    p = sendmail(box, "root", input=b"From: Real Person <real@elsewhere.org>\n\nx\n", env=env)
    _, _, stored = queued(box)
    assert header(stored, "From") == ["Real Person <real@elsewhere.org>"]
    box_reset(box)
    p = sendmail(box, "root", input=b"Subject: no from\n\nx\n", env=env)
    _, _, stored = queued(box)
    assert header(stored, "From")[0].endswith("<alerts@example.net>")


def test_bad_rewrite_configuration_is_ignored_with_a_warning(box):
    """sendmail never refuses mail for a mistake it can work around (issue 12 point 2)."""
    p = sendmail(box, "root", input=b"x\n", env={"ALLMAILFROM": "not an address"})
    assert p.returncode == 0, p.stderr
    assert b"ALLMAILFROM=not an address: not an address with a domain" in p.stderr
    _, m, _ = queued(box)
    assert m.sender == "root@box.example"
    box_reset(box)
    p = sendmail(box, "root", input=b"x\n", env={"REWRITE_FROM": "bare"})
    assert p.returncode == 0 and b"REWRITE_FROM=bare" in p.stderr


def box_reset(box):
    import shutil
    shutil.rmtree(box.spool, ignore_errors=True)


# ---- bytes stored exactly ----

def test_8bit_and_long_lines_are_stored_exactly(box):
    long_line = bytes(range(0x20, 0x7f)) * 60 + bytes(range(0x80, 0x100)) * 10  # 8260 bytes, no LF
    body = b"short\n" + long_line + b"\n" + b"x" * 20000 + b"\nend\n"
    msg = b"Subject: " + b"\xc3\xa9" * 600 + b"\n\n" + body
    p = sendmail(box, "root", input=msg)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert split(stored)[1] == body
    assert header(stored, "Subject") == ["é" * 600]
    assert m.field("b") == "8"
    assert m.size == len(stored)


@pytest.mark.parametrize("nl", [b"\n", b"\r\n"])
def test_line_endings_become_lf(box, nl):
    msg = nl.join([b"Subject: s", b"To: root", b"", b"a", b"b", b""])
    p = sendmail(box, "root", input=msg)
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert b"\r" not in stored
    assert split(stored)[1] == b"a\nb\n"


def test_mixed_line_endings_and_missing_final_newline(box):
    p = sendmail(box, "root", input=b"Subject: s\r\n\r\na\r\nb\nc")
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert split(stored)[1] == b"a\nb\nc"


def test_bare_cr_becomes_a_line_break(box):
    p = sendmail(box, "root", input=b"Subject: s\n\nold mac\rtext\r\r\nx\n")
    assert p.returncode == 0
    _, _, stored = queued(box)
    assert split(stored)[1] == b"old mac\ntext\n\nx\n"


def test_nul_bytes_are_stored_not_truncated(box):
    body = b"before\x00after\n\x00\x00\nend\n"
    p = sendmail(box, "root", input=b"Subject: s\n\n" + body)
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert split(stored)[1] == body
    assert m.size == len(stored)


# ---- size limit ----

# Input refused before anything is queued: arguments, input, environment, exit code, parts of
# the reason.
REFUSED = [
    pytest.param(["-t"], b"To: ro\x00ot@x.org\n\nx\n", None, 65, [b"NUL"], id="nul_in_a_t_address_field"),
    pytest.param(["root"], b"Subject: s\n\n" + b"y" * 3000 + b"\n", {"SIZELIMIT": "2k"}, 73,
                 [b"size limit of 2048 bytes (SIZELIMIT)"], id="sizelimit"),
    pytest.param(["root"], b"X-Big: " + b"h" * 5000 + b"\n\nb\n", {"SIZELIMIT": "4k"}, 73, [],
                 id="sizelimit_counts_big_headers_too"),
    pytest.param(["root"], b"".join(b"X-H%d: %s\n" % (i, b"v" * 1000) for i in range(1100)) + b"\nb\n",
                 {"SIZELIMIT": "0"}, 65, [b"header section larger than"], id="header_section_limit"),
    pytest.param(["user@bücher.example"], b"x\n", None, 65, [b"xn--"], id="utf8_domain_with_the_reason"),
]


@pytest.mark.parametrize("args,input,env,code,why", REFUSED)
def test_refused(box, args, input, env, code, why):
    refused(box, args, input, code, why, env=env)


def test_sizelimit_lets_a_smaller_message_pass(box):
    p = sendmail(box, "root", input=b"Subject: s\n\n" + b"y" * 1000 + b"\n", env={"SIZELIMIT": "2k"})
    assert p.returncode == 0


# ---- routing ----

def test_localdomains_setting(box):
    p = sendmail(box, "a@Mail.Example.org", "b@box.example", "c@other.org", input=b"x\n",
                 env={"LOCALDOMAINS": "mail.example.org, other.net"})
    assert p.returncode == 0
    _, m, _ = queued(box)
    assert routes(m) == [("local", "a", "a"), ("smtp", "box.example", "b@box.example"), ("smtp", "other.org", "c@other.org")]


def test_smarthost_does_not_change_the_route(box):
    p = sendmail(box, "a@Example.com", input=b"x\n", env={"SMARTHOST": "relay.example.net"})
    assert p.returncode == 0
    _, m, _ = queued(box)
    assert routes(m) == [("smtp", "example.com", "a@Example.com")]


# ---- SMTPUTF8 ----

def test_utf8_local_part_sets_U(box):
    p = sendmail(box, "jørn@example.com".encode().decode(), "root", input=b"x\n")
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert "U" in m.fields
    assert m.recipients[0] == "jørn@example.com"


def test_ascii_mail_has_no_U(box):
    p = sendmail(box, "root", input="Subject: ü\n\nü\n".encode())
    assert p.returncode == 0
    _, m, _ = queued(box)
    assert "U" not in m.fields


def test_invalid_utf8_is_refused(box):
    p = box.run(None, b"us\xc3er@x.org", input=b"x\n", argv0="/usr/sbin/sendmail")
    assert p.returncode == 65
    assert b"UTF-8" in p.stderr


def test_8bit_display_names_do_not_break_t(box):
    # raw Latin-1 from an old script: only the addresses themselves must be UTF-8
    p = sendmail(box, "-t", input=b"To: J\xf6rg <joerg@example.com>, root (M\xfcller)\n\nx\n")
    assert p.returncode == 0, p.stderr
    _, m, stored = queued(box)
    assert m.recipients == ["joerg@example.com", "root"]
    assert b"To: J\xf6rg <joerg@example.com>, root@box.example (M\xfcller)\n" in stored


def test_host_name_from_uname_and_a_bad_myhostname(box):
    import socket
    env = dict(box.env)
    del env["MYHOSTNAME"]
    box.env = env
    p = sendmail(box, "root", input=b"x\n")
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    name = socket.gethostname()
    assert m.sender == f"root@{name}" or m.sender == "root@localhost"
    box_reset(box)
    p = sendmail(box, "root", input=b"x\n", env={"MYHOSTNAME": "(none)"})
    assert p.returncode == 0, p.stderr
    assert b"MYHOSTNAME=(none) is not a domain name" in p.stderr and b"the system's name is used" in p.stderr
    _, m, _ = queued(box)
    assert m.sender == f"root@{name}" or m.sender == "root@localhost"
