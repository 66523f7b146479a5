"""The smtp transport agent against hostile or broken servers on 127.0.0.1 (a scripted socket
server, not aiosmtpd: these servers break the protocol on purpose). Every case must end in a
clear per-recipient deferral within its time limit: never a hang, a crash or a false delivery."""
import socket
import time

import pytest

from conftest import HAVE_TLS
from listener import Listener
from ta_driver import TA, Queue

MSG = b"From: root@box.example\nTo: a@example.com\nSubject: test\n\nhello\n"
EHLO = b"250-hostile.example\r\n250-PIPELINING\r\n250 8BITMIME\r\n"


class Hostile(Listener):
    """Accepts connections and runs script(conn, lines) for each; lines() yields the client's
    lines. Records every line received."""

    def __init__(self, script):
        self.script = script
        self.got = []
        super().__init__(serve=self._one, backlog=8)

    def _one(self, c):
        buf = b""

        def lines():
            nonlocal buf
            while True:
                while b"\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                line, buf = buf.split(b"\n", 1)
                self.got.append(line)
                yield line

        try:
            self.script(c, lines())
        except OSError:
            pass
        finally:
            c.close()


def run_job(box, script, timeouts="2s", limit=25, tls="none", status="deferred"):
    """status: "deferall" when the server times out (the whole destination waits with it)."""
    srv = Hostile(script)
    q = Queue(box.spool)
    mid = q.add("root@box.example", ["a@example.com", "b@example.com"], MSG)
    env = {"SMARTHOST": f"[127.0.0.1]:{srv.port} tls={tls}"}
    for k in ("HELO", "CMD", "DATA_INIT", "DATA_DONE", "DATA_BLOCK"):
        env[f"SMTP_{k}_TIMEOUT"] = timeouts
    try:
        with TA(box, env=env) as ta:
            t0 = time.time()
            reps = ta.job(q, mid, "example.com", timeout=limit + 5)
            took = time.time() - t0
    finally:
        srv.close()
    assert took < limit, took
    assert [r.status for r in reps] == [status, status], reps
    assert all(r.enh.startswith("4.") for r in reps), reps
    return reps, srv


def until(lines, prefix):
    for line in lines:
        if line.upper().startswith(prefix):
            return line
    return None


def greet(c, lines, banner=b"220 hi\r\n"):
    """The banner, then the EHLO reply once the client says EHLO."""
    c.sendall(banner)
    until(lines, b"EHLO")
    c.sendall(EHLO)


def to_data(c, lines, more=b""):
    """Greets, waits for the pipelined DATA, accepts MAIL, both RCPTs and DATA, then sends more."""
    greet(c, lines)
    until(lines, b"DATA")
    c.sendall(b"250 ok\r\n250 ok\r\n250 ok\r\n354 go\r\n" + more)


def answer_until_quit(c, lines, reply=None):
    """221 to QUIT (and done); reply, if any, to every other line."""
    for line in lines:
        if line.upper().startswith(b"QUIT"):
            c.sendall(b"221 bye\r\n")
            return
        if reply:
            c.sendall(reply)


def test_endless_multiline_greeting(box):
    def script(c, lines):
        while True:
            c.sendall(b"220-hello hello hello\r\n" * 64)
    reps, _ = run_job(box, script)
    assert "lines" in reps[0].diag or "malformed" in reps[0].diag, reps


def test_endless_greeting_line_without_newline(box):
    # a flood of bytes that never ends a line: the greeting time limit still fires
    def script(c, lines):
        c.sendall(b"220 ")
        while True:
            c.sendall(b"x" * 65536)
    reps, _ = run_job(box, script, timeouts="2s", limit=15, status="deferall")
    assert "timeout" in reps[0].diag, reps


def test_slowloris_greeting(box):
    # one byte at a time, each inside the per-read limit: the reply as a whole must still time out
    def script(c, lines):
        for ch in b"220-" + b"s" * 1000:
            c.sendall(bytes([ch]))
            time.sleep(0.2)
    reps, _ = run_job(box, script, timeouts="2s", limit=15, status="deferall")
    assert "timeout" in reps[0].diag, reps


def test_one_megabyte_reply_line(box):
    def script(c, lines):
        c.sendall(b"220 " + b"x" * (1 << 20) + b"\r\n")
        until(lines, b"EHLO")
        c.sendall(b"421 " + b"y" * (1 << 20) + b"\r\n")
    reps, _ = run_job(box, script)
    assert "421" in reps[0].diag, reps


def test_nul_and_bare_cr_in_replies(box):
    def script(c, lines):
        greet(c, lines, b"220 hi\x00there\rfoo\r\n")
        until(lines, b"MAIL")
        c.sendall(b"451 4.3.0 busy\x00\rnow\r\n")
        answer_until_quit(c, lines, b"503 5.5.1 no\r\n")
    reps, _ = run_job(box, script)
    assert "451" in reps[0].diag, reps
    assert "\x00" not in reps[0].diag


def test_250_instead_of_354_to_data_is_not_a_delivery(box):
    def script(c, lines):
        greet(c, lines)
        answer_until_quit(c, lines, b"250 ok\r\n")  # to everything, DATA included
    reps, srv = run_job(box, script)
    assert not any(l.startswith(b"hello") for l in srv.got)


def test_pipelined_replies_missing(box):
    # MAIL answered, the RCPT replies never come
    def script(c, lines):
        greet(c, lines)
        until(lines, b"MAIL")
        c.sendall(b"250 ok\r\n")
        for _ in lines:
            pass
    reps, _ = run_job(box, script, status="deferall")
    assert "timeout" in reps[0].diag, reps


def test_server_closes_after_354(box):
    def script(c, lines):
        to_data(c, lines)
        until(lines, b".")
        c.shutdown(socket.SHUT_RDWR)
    run_job(box, script)


@pytest.mark.parametrize("reply", [b"2", b"25", b"250", b"abc def", b"999 odd", b"250-x\r\n251 y", b"\r"])
def test_malformed_greetings(box, reply):
    def script(c, lines):
        c.sendall(reply + b"\r\n")
        time.sleep(0.2)
        c.shutdown(socket.SHUT_RDWR)
    run_job(box, script)


@pytest.mark.skipif(not HAVE_TLS, reason="this spoolbox is built without TLS")
def test_tls_handshake_trickled_a_byte_at_a_time_times_out(box):
    # implicit TLS: the "server hello" record announces 16 KiB and arrives a byte every 0.2 s,
    # each byte inside the per-read limit; the handshake as a whole must still time out
    def script(c, lines):
        c.recv(65536)
        c.sendall(b"\x16\x03\x03\x40\x00")
        for _ in range(16384):
            c.sendall(b"\x00")
            time.sleep(0.2)
    reps, _ = run_job(box, script, timeouts="2s", limit=15, tls="smtps")
    assert "timeout" in reps[0].diag, reps


def test_250_before_the_end_of_data_is_not_a_delivery(box):
    # the server says 250 right after its 354, before the message (and its dot) was sent
    def script(c, lines):
        to_data(c, lines, b"250 2.0.0 queued, honest\r\n")
        answer_until_quit(c, lines)
    reps, srv = run_job(box, script)
    assert "before the end of data" in reps[0].diag, reps
    assert b"." not in [l.rstrip(b"\r") for l in srv.got], srv.got
