"""mailq's listings (issue 10 points 1-3): the Postfix format under its three names, checked by
the real check_mailq from Debian's monitoring-plugins; -v, --json (valid for any byte) and -s;
damaged control files, unknown ids, and the word on stderr that the spool was read."""
import json
import os
import subprocess
import time

from conftest import BINARY
from mailqlib import check_mailq, ctl_path, listing, queue_msg
from smtpsink import SmtpSink
from setgidlib import run_nobody
import spoolfmt


def submit(box, rcpts, body=b"Subject: t\n\nhello\n", sender="root@box.example", env=None):
    p = box.run("submit", "-i", "-f", sender, *rcpts, input=body, env=env)
    assert p.returncode == 0, p.stderr


def mailq(box, *args, **kw):
    return box.run("mailq", *args, **kw)


def test_empty_queue_and_a_missing_spool(box):
    p = mailq(box)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"Mail queue is empty\n"
    assert b"no scheduler is running" in p.stderr and box.spool.encode() in p.stderr


def test_postfix_listing_under_every_name(box):
    submit(box, ["a@example.com", "b@example.org"])
    submit(box, ["c@example.net"], body=b"Subject: big\n\n" + b"x" * 3000 + b"\n", sender="")
    p = mailq(box)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith(b"----Queue ID----- --Size-- ---Arrival Time---- --Sender/Recipient------\n")
    msgs, last = listing(out)
    assert len(msgs) == 2
    by_rcpt = {tuple(v[3]): v for v in msgs.values()}
    assert by_rcpt[("a@example.com", "b@example.org")][2] == "root@box.example"
    assert by_rcpt[("c@example.net",)][2] == "MAILER-DAEMON"  # the null sender, as Postfix shows it
    sizes = [os.path.getsize(os.path.join(box.spool, "incoming", i)) for i in spoolfmt.incoming(box.spool)]
    assert last == "-- %d Kbytes in 2 Requests." % (sum(int(v[1]) for v in msgs.values()) // 1024)
    assert sum(sizes) > 3000
    # the same bytes from sendmail -bp, from the mailq name, and from spoolbox mailq
    assert box.run(None, "-bp", argv0="/usr/sbin/sendmail").stdout == out
    assert box.run(None, argv0="/usr/bin/mailq").stdout == out


def test_check_mailq_counts_exactly_the_queued_messages(box, tmp_path):
    box.write_conf("")
    run = check_mailq(tmp_path, BINARY, box.conf_path)
    p = run(box, "-M", "postfix", "-w", "5", "-c", "10")
    assert p.returncode == 0 and p.stdout.startswith(b"OK: postfix mailq reports queue is empty"), p.stdout + p.stderr
    sink = SmtpSink().start()
    try:
        env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none"}
        for i in range(3):
            submit(box, ["u%d@example.com" % i], env=env)
        p = run(box, "-M", "postfix", "-w", "5", "-c", "10")
        assert p.returncode == 0, p.stdout
        assert b"|unsent=3;5;10;0" in p.stdout, p.stdout
        p = run(box, "-M", "postfix", "-w", "2", "-c", "3")
        assert p.returncode == 2 and b"CRITICAL: postfix mailq is 3" in p.stdout, p.stdout
        # delivered: 0
        s = subprocess.run([BINARY, "scheduler", "-1", "-i"], env=box.environ(env), capture_output=True, timeout=60)
        assert s.returncode == 0, s.stderr
        assert len(sink.messages) == 3
    finally:
        sink.stop()
    p = run(box, "-M", "postfix", "-w", "5", "-c", "10")
    assert p.returncode == 0 and b"queue is empty" in p.stdout and b"unsent=0" in p.stdout, p.stdout


def test_delivered_recipients_are_not_listed_and_reasons_are(box):
    now = int(time.time())
    mid = queue_msg(box.spool, [("done@example.com", "D", 1, now), ("later@example.com", "Q", 2, now + 600),
                                ("also@example.com", "Q", 2, now + 600), ("new@example.com", "N", 0, 0)],
                    attempts=[(0, now - 60, "ok", "relayed", "2.0.0", "mx.example.com", "250 ok"),
                              (1, now - 120, "deferred", "delayed", "4.4.1", "mx.example.com", "old reason"),
                              (1, now - 60, "deferred", "delayed", "4.4.1", "mx.example.com", "connect: Connection refused"),
                              (2, now - 60, "deferred", "delayed", "4.4.1", "mx.example.com", "connect: Connection refused")])
    p = mailq(box)
    assert p.returncode == 0, p.stderr
    msgs, last = listing(p.stdout)
    assert msgs[mid][3] == ["later@example.com", "also@example.com", "new@example.com"]
    text = p.stdout.decode()
    # one reason line for the two recipients that share it (Postfix), the latest attempt's
    assert text.count("(4.4.1 mx.example.com: connect: Connection refused)") == 1
    assert "old reason" not in text and "done@example.com" not in text
    assert text.index("Connection refused") < text.index("later@example.com")
    assert "(reason unavailable)" in text  # the new recipient after one with a reason
    assert last == "-- 0 Kbytes in 1 Request."


def test_markers_in_transit_and_held(box):
    now = int(time.time())
    busy = queue_msg(box.spool, [("a@example.com", "T", 0, now)])
    held = queue_msg(box.spool, [("b@example.com", "Q", 1, now + 60)])
    os.makedirs(os.path.join(box.spool, "hold"))
    os.link(ctl_path(box.spool, held), os.path.join(box.spool, "hold", held))
    msgs, _ = listing(mailq(box).stdout)
    assert msgs[busy][0] == "*" and msgs[held][0] == "!"


def test_verbose_shows_every_attempt(box):
    now = int(time.time())
    mid = queue_msg(box.spool, [("done@example.com", "D", 1, now), ("later@example.com", "Q", 2, now + 600)],
                    attempts=[(0, now - 60, "ok", "relayed", "2.0.0", "mx.example.com", "250 2.0.0 queued as X"),
                              (1, now - 120, "deferred", "delayed", "4.7.1", "mx2.example.com", "greylisted"),
                              (1, now - 60, "deferred", "delayed", "4.4.1", "mx.example.com", "refused")])
    p = mailq(box, "-v")
    assert p.returncode == 0
    text = p.stdout.decode()
    assert "done@example.com" in text and "state delivered, 1 tries" in text
    assert "state deferred, 2 tries, next " in text and "via smtp/example.com" in text
    for s in ("ok relayed 2.0.0 mx.example.com: 250 2.0.0 queued as X", "deferred delayed 4.7.1 mx2.example.com: greylisted",
              "deferred delayed 4.4.1 mx.example.com: refused"):
        assert s in text, text
    assert text.index("deferred delayed 4.7.1") < text.index("deferred delayed 4.4.1")
    assert mid in text


def test_json_is_valid_for_any_byte(box):
    now = int(time.time())
    nasty = "\x01\"\\\x7f\udcff\u00e9\U0001F600 <x>"
    addr = "q" + nasty + "@example.com"
    mid = queue_msg(box.spool, [(addr, "Q", 3, now + 900), ("ok@example.com", "D", 1, now)],
                    attempts=[(0, now - 5, "deferred", "delayed", "4.2.2", "mx\x02.example.com", "full \x1b[31m \xff box")],
                    sender="s\udcc3(@example.com")
    bad = os.path.join(box.spool, "queue", "Z")
    os.makedirs(bad, exist_ok=True)
    p = mailq(box, "--json")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 2
    o = json.loads(lines[0])  # bytes that are not UTF-8 become the code point of the same value
    assert o["id"] == mid and o["queue"] == "queue" and o["held"] is False and o["in_transit"] is False
    assert o["sender"] == "s\u00c3(@example.com"
    r0, r1 = o["recipients"]
    assert r0["address"] == "q\x01\"\\\x7f\u00ff\u00e9\U0001F600 <x>@example.com"
    assert (r0["state"], r0["tries"], r0["next_attempt"], r0["enhanced"]) == ("deferred", 3, now + 900, "4.2.2")
    assert r0["remote"] == "mx\x02.example.com" and r0["text"] == "full \x1b[31m \u00ff box"
    assert (r1["state"], r1["next_attempt"], r1["remote"]) == ("delivered", None, None)
    assert o["size"] > 0 and o["arrival"] > 0
    # the text listing shows control bytes as '?'
    assert b"q?\"\\?" in mailq(box).stdout


def test_summary_line(box):
    now = int(time.time())
    queue_msg(box.spool, [("a@example.com", "Q", 1, now + 60)], arrival=now - 7200,
              attempts=[(0, now - 30, "deferred", "delayed", "4.4.1", "mx.example.com", "refused")])
    queue_msg(box.spool, [("b@example.com", "T", 0, now)], arrival=now - 100)
    h = queue_msg(box.spool, [("c@example.com", "Q", 1, now + 60)], arrival=now - 50,
                  attempts=[(0, now - 10, "deferred", "delayed", "4.7.0", "mx.example.org", "latest trouble")])
    os.makedirs(os.path.join(box.spool, "hold"))
    os.link(ctl_path(box.spool, h), os.path.join(box.spool, "hold", h))
    submit(box, ["d@example.com"])
    p = mailq(box, "-s")
    assert p.returncode == 0
    line = p.stdout.decode()
    assert line.count("\n") == 1
    f = dict(kv.split("=", 1) for kv in line.split(" last_error=")[0].split())
    assert (f["queued"], f["deferred"], f["held"], f["in_transit"], f["damaged"]) == ("4", "2", "1", "1", "0")
    assert 7200 <= int(f["oldest"]) < 7300
    assert line.split(" last_error=")[1] == "%s 4.7.0 mx.example.org: latest trouble\n" % h


def test_damaged_control_file_is_shown_with_its_reason(box):
    now = int(time.time())
    good = queue_msg(box.spool, [("a@example.com", "Q", 1, now + 60)])
    bad = queue_msg(box.spool, [("b@example.com", "Q", 1, now + 60)])
    with open(ctl_path(box.spool, bad), "r+b") as f:
        data = f.read().replace(b"r Q ", b"r ? ", 1)
        f.seek(0)
        f.write(data)
    p = mailq(box)
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode()
    msgs, last = listing(p.stdout)
    assert msgs[bad][0] == "?" and msgs[good][3] == ["a@example.com"]
    assert "(damaged)" in text and "line 9: recipient record: bad status field" in text and bad + ".c" in text, text
    assert last.endswith("in 2 Requests.")
    o = [json.loads(ln) for ln in mailq(box, "--json").stdout.splitlines()]
    assert [x for x in o if x["id"] == bad][0]["damaged"].endswith("recipient record: bad status field")
    assert "damaged=1" in mailq(box, "-s").stdout.decode()
    # a file of random bytes is no worse
    with open(ctl_path(box.spool, bad), "wb") as f:
        f.write(os.urandom(5000))
    p = mailq(box, "-v")
    assert p.returncode == 0 and b"(damaged)" in p.stdout


def test_one_message_by_id_and_unknown_ids(box):
    now = int(time.time())
    a = queue_msg(box.spool, [("a@example.com", "Q", 1, now + 60)])
    queue_msg(box.spool, [("b@example.com", "Q", 1, now + 60)])
    p = mailq(box, a)
    assert p.returncode == 0
    msgs, last = listing(p.stdout)
    assert list(msgs) == [a]
    p = mailq(box, "0000000000000")
    assert p.returncode == 66 and b"0000000000000: no such message in the queue" in p.stderr
    p = mailq(box, "../etc/passwd")
    assert p.returncode == 66 and b"../etc/passwd: not a message id" in p.stderr


def test_no_word_on_stderr_with_a_scheduler_running(box):
    s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            p = mailq(box)
            if b"no scheduler" not in p.stderr:
                break
            time.sleep(0.05)
        assert p.returncode == 0 and p.stderr == b"", p.stderr
    finally:
        s.terminate()
        s.wait(timeout=10)


def test_a_user_lists_envelopes_through_the_setgid_binary(setgid_install):
    """As with Postfix, any user may list the queue: the binary is setgid to the submit group,
    queue/ and hold/ belong to that group (docs/spool.md 8), and mailq reads control files and
    envelope blocks only. MAILQ_RESTRICT=yes keeps users out (77); -C keeps the group away."""
    binary, spool, confdir, gid = setgid_install
    q = os.path.join(spool, "queue")
    os.chown(q, 0, gid)
    os.chmod(q, 0o2750)
    now = int(time.time())
    mid = queue_msg(spool, [("admin@example.com", "Q", 1, now + 60)],
                    attempts=[(0, now - 5, "deferred", "delayed", "4.4.1", "mx.example.com", "refused")])
    assert os.stat(os.path.dirname(ctl_path(spool, mid))).st_gid == gid
    p = run_nobody(confdir, [binary, "mailq"])
    assert p.returncode == 0, p.stderr
    msgs, last = listing(p.stdout)
    assert msgs[mid][3] == ["admin@example.com"] and last == "-- 0 Kbytes in 1 Request."
    assert b"(4.4.1 mx.example.com: refused)" in p.stdout
    # sendmail -bp drops the group and runs mailq, whose exec of the setgid binary has it again
    assert run_nobody(confdir, [binary, "submit", "-bp"]).stdout == p.stdout
    # without the group, nobody cannot read it: the listing is the group's doing
    p = run_nobody(confdir, [binary, "mailq", "-C", "/etc/spoolbox/spoolbox.conf"])
    assert p.returncode == 77 and b"Permission denied" in p.stderr, p.stderr
    # and control stays root's
    p = run_nobody(confdir, [binary, "mailq", "--delete", mid])
    assert p.returncode == 77 and os.path.exists(ctl_path(spool, mid))
    with open(os.path.join(confdir, "spoolbox.conf"), "a") as f:
        f.write("MAILQ_RESTRICT=yes\n")
    p = run_nobody(confdir, [binary, "mailq"])
    assert p.returncode == 77 and b"MAILQ_RESTRICT=yes" in p.stderr, p.stderr
    assert p.stdout == b""


def test_damaged_incoming_envelope_is_shown_with_its_reason(box):
    """A message still in incoming/ whose envelope block is cut short or does not parse is listed
    as damaged with the reason, prefixed by its place."""
    mid = queue_msg(box.spool, [("a@example.com", "Q", 1, int(time.time()) + 60)])
    os.unlink(ctl_path(box.spool, mid))
    os.makedirs(os.path.join(box.spool, "incoming"), exist_ok=True)
    path = os.path.join(box.spool, "incoming", mid)
    with open(path, "wb") as f:
        f.write(b"no end of the envelope block here\n")
    p = mailq(box)
    assert p.returncode == 0, p.stderr
    assert "(incoming/%s: no complete envelope block)" % mid in p.stdout.decode(), p.stdout
    with open(path, "wb") as f:
        f.write(b"x nonsense\n.\nSubject: t\n\nbody\n")
    p = mailq(box)
    assert p.returncode == 0 and "(damaged)" in p.stdout.decode() and "(incoming/%s: line 1: " % mid in p.stdout.decode(), p.stdout
