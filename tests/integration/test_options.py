"""Build options (config/config_default.h): `spoolbox --version` names every option of the
header, and what each compiled-out option leaves in its place (a null client without local
delivery, -bs refused, UTC dates, ...). Each test here skips unless the binary under test was
built with its option off; what an option adds is tested by the other files, which skip when
it is off. `make variants-test` runs this file against the router profile and against a build
with the remaining options off (build/musl-lean)."""
import os
import re
import subprocess

import pytest

from conftest import BINARY, FEATURES, HAVE_TLS, ROOT
from smtpsink import SmtpSink, TestCA
from submitlib import header, queued, routes, sendmail
from ta_driver import TA, Queue

MSG = b"Subject: options\n\nbody\n"


def off(name):
    return pytest.mark.skipif(FEATURES.get(name, True), reason=f"built with {name}")


def on(name):
    return pytest.mark.skipif(not FEATURES.get(name, True), reason=f"built without {name}")


@pytest.fixture
def q(box):
    return Queue(box.spool)


def test_version_names_every_option_of_the_header():
    text = open(os.path.join(ROOT, "config", "config_default.h")).read()
    header_opts = [n.lower() for n in re.findall(r"^#ifndef ENABLE_(\w+)$", text, re.M)]
    out = subprocess.run([BINARY, "--version"], capture_output=True, text=True, check=True).stdout
    line = [l for l in out.splitlines() if l.startswith("options:")]
    assert len(line) == 1, out
    shown = [w[1:] for w in line[0].split()[1:]]
    assert all(w[0] in "+-" for w in line[0].split()[1:]), line
    assert shown == header_opts


def test_max_profile_turns_on_every_option_the_default_leaves_off():
    """config/profile_max.h lists only the options that are 0 in config_default.h: a new option
    that is off by default must be added there, or PROFILE=max (the sanitizer build) loses it."""
    default = open(os.path.join(ROOT, "config", "config_default.h")).read()
    off_by_default = re.findall(r"^#define ENABLE_(\w+) 0$", default, re.M)
    assert "TLS_CLIENT_CERT" in off_by_default, off_by_default
    maxp = open(os.path.join(ROOT, "config", "profile_max.h")).read()
    assert sorted(re.findall(r"^#define ENABLE_(\w+) 1$", maxp, re.M)) == sorted(off_by_default)


@off("local")
def test_null_client_routes_every_recipient_out_by_smtp(box):
    env = {"QUALIFYDOMAIN": "example.net"}
    p = sendmail(box, "-bv", "root", "postmaster@box.example", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (b"root: channel smtp host example.net user root@example.net\n"
                        b"postmaster@box.example: channel smtp host box.example user postmaster@box.example\n")
    p = sendmail(box, "root", input=MSG, env=env)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert routes(m) == [("smtp", "example.net", "root@example.net")]


@off("local")
def test_null_client_delivers_root_to_the_smarthost(box):
    from test_smtp_e2e import run_scheduler
    with SmtpSink() as sink:
        env = {"SMARTHOST": f"[127.0.0.1]:{sink.port} tls=none", "QUALIFYDOMAIN": "example.net"}
        p = box.run("submit", "-i", "root", input=MSG, env=env)
        assert p.returncode == 0, p.stderr
        log = run_scheduler(box, env, lambda: len(sink.messages) == 1)
        assert [m.rcpt_tos for m in sink.messages] == [["root@example.net"]], log


@off("local")
def test_without_local_delivery_bi_has_nothing_to_do(box):
    p = sendmail(box, "-bi")
    assert p.returncode == 0
    assert b"no local delivery" in p.stderr
    p = box.run(None, "local")
    assert p.returncode == 64 and b"unknown applet" in p.stderr


@off("smtpd")
def test_bs_is_refused_without_the_smtp_dialogue(box):
    p = sendmail(box, "-bs", input=b"HELO x\r\nQUIT\r\n")
    assert p.returncode == 64
    assert b"ENABLE_SMTPD" in p.stderr
    assert p.stdout == b""


@off("verbose_usage")
def test_short_usage_points_at_the_man_page(box):
    p = box.run("submit", "--help")
    assert p.returncode == 0
    assert p.stdout == b"usage: see submit(8) (this spoolbox is built without usage texts)\n"
    p = box.run(None, "--help")
    assert p.stdout.startswith(b"usage: see spoolbox(8)")


@off("mailq_proto")
def test_mailq_Q_is_refused_and_plain_mailq_lists_without_the_query_socket(box):
    assert box.run("submit", "-i", "someone@example.com", input=MSG).returncode == 0
    p = box.run("scheduler", "-i", "-1")
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(os.path.join(box.spool, "scheduler.sock"))
    p = box.run("mailq", "-Q")
    assert p.returncode == 64 and b"ENABLE_MAILQ_PROTO" in p.stderr, p.stderr
    p = box.run("mailq")
    assert p.returncode == 0 and b"someone@example.com" in p.stdout, p


def _date_offset(box, tz):
    p = sendmail(box, "root@example.com", input=MSG, env={"TZ": tz})
    assert p.returncode == 0, p.stderr
    _, _, stored = queued(box)
    return header(stored, "Date")[0].strip().split()[-1]


@on("localtime")
def test_date_is_local_time(box):
    assert _date_offset(box, "ABC-5") == "+0500"


@off("dsn")
def test_dsn_options_are_accepted_and_ignored_without_dsn(box):
    """Without DSN (the router profile) a script's -N, -R and -V still queue the message; no
    NOTIFY, RET or ENVID is kept, so nothing asks for a success or delay notice (a failure still
    bounces: test_errormail.py)."""
    p = sendmail(box, "-N", "success,delay", "-R", "hdrs", "-V", "env+id=1", "a@x.org", input=MSG)
    assert p.returncode == 0, p.stderr
    _, m, _ = queued(box)
    assert [r.notify for r in m.rcpts] == [None]
    assert m.field("R") is None and m.field("e") is None
    p = sendmail(box, "-N", "sometimes", "a@x.org", input=MSG)
    assert p.returncode == 64  # a bad value is still a usage error


@off("preempt")
def test_delivery_slot_keys_have_no_effect_without_preemption(box):
    """Without preemption scheduler.conf still accepts the delivery_slot_* keys, and --check
    says at their line that they do nothing in this build."""
    path = box.env["SCHEDULER_CONF"]
    with open(path, "w") as f:
        f.write("*/* interval=1m\nsmtp delivery_slot_cost=4 command=smtp\n")
    p = box.run(None, "--check")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert f"{path}:2: warning: delivery_slot_cost: preemption is not in this build (ENABLE_PREEMPT=0)" in err


@off("localtime")
def test_date_is_utc_without_local_time(box):
    assert _date_offset(box, "ABC-5") == "+0000"


@off("cram_md5")
def test_cram_md5_is_not_offered_to_the_choice(box, q):
    from test_smtp import write_creds
    with SmtpSink(users={"alerts": "tanstaaftanstaaf"}, auth_require_tls=False, cram_md5=True) as s:
        write_creds(box, "127.0.0.1 alerts tanstaaftanstaaf\n")
        mid = q.add("root@box.example", ["a@example.com"], MSG)
        with TA(box, env={"SMARTHOST": f"[127.0.0.1]:{s.port} tls=none cleartext_auth"}) as ta:
            reps = ta.job(q, mid, "example.com")
        assert reps[0].status == "ok2", (reps, ta.log)
        assert s.logins == [("PLAIN", "alerts", True)]  # CRAM-MD5 comes first when compiled in


@off("deliver_cmd")
@on("local")
def test_command_and_include_targets_fail_without_deliver_cmd(box):
    with open(box.env["ALIASES"], "w") as f:
        f.write("pipe: |/bin/cat\ninc: :include:/dev/null\n")
    for name, what in (("pipe", b"|command"), ("inc", b":include:")):
        p = box.run("local", "-x", name)
        assert b"5.3.5" in p.stdout + p.stderr, (p.stdout, p.stderr)
        assert what + b" " in p.stdout + p.stderr and b"ENABLE_DELIVER_CMD" in p.stdout + p.stderr


@off("maildir")
@on("local")
def test_maildir_is_deferred_without_maildir(box, tmp_path):
    from test_local import deliver
    env = {"MAILBOX_STYLE": "maildir", "MAILDIR": str(tmp_path) + "/%u/Maildir"}
    r = deliver(box, ["root"], MSG, env=env)
    assert (r[0].status, r[0].enh) == ("deferred", "4.3.5"), r
    assert "ENABLE_MAILDIR" in r[0].diag, r
    assert not os.path.exists(tmp_path / "root")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = TestCA(d / "ca")
    return {"ca": ca.cert, "good": ca.issue("good", ["localhost"]), "client": ca.issue("box", ["box.example"],
                                                                                        eku="clientAuth")}


def _tls_job(box, q, sink, pki, opts=""):
    mid = q.add("root@box.example", ["a@example.com"], MSG)
    env = {"SMARTHOST": f"localhost:{sink.port} {opts}".strip(), "CAFILE": pki["ca"]}
    with TA(box, args=["-v"], env=env) as ta:
        return ta.job(q, mid, "example.com"), ta.log


@pytest.mark.skipif(not HAVE_TLS, reason="built without TLS")
@pytest.mark.parametrize("compiled", [True, False])
def test_chacha20_only_server(box, q, pki, compiled):
    if FEATURES.get("chacha20", True) != compiled:
        pytest.skip("the other build")
    s = SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1])
    s.ssl_context.set_ciphers("ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305")
    with s:
        reps, log = _tls_job(box, q, s, pki)
    if compiled:
        assert reps[0].status == "ok2", (reps, log)
    else:
        assert reps[0].status == "deferred" and not s.messages, (reps, log)
        assert "TLS" in reps[0].diag, reps


@pytest.mark.skipif(not HAVE_TLS, reason="built without TLS")
@off("tls_client_cert")
def test_client_certificate_is_a_configuration_error_without_the_option(box, q, pki):
    cert, key = pki["client"]
    with SmtpSink(tls="starttls", cert=pki["good"][0], key=pki["good"][1]) as s:
        reps, log = _tls_job(box, q, s, pki, f"cert={cert} key={key}")
    assert reps[0].status == "deferred" and not s.messages, (reps, log)
    assert "ENABLE_TLS_CLIENT_CERT" in reps[0].diag, reps


def test_options_are_tested_with_if_only():
    """dropbear's lint: an option is always defined (0 or 1), so #ifdef would be true for both
    values; -Wundef catches a file that forgets config_default.h."""
    bad = []
    for top in ("lib", "applets", "tests/unit", "tests/fuzz"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".c", ".h")):
                    path = os.path.join(dirpath, name)
                    for n, line in enumerate(open(path, errors="replace"), 1):
                        if re.search(r"#\s*if(n?def\s+|.*defined\s*\(?\s*)ENABLE_", line):
                            bad.append(f"{os.path.relpath(path, ROOT)}:{n}: {line.strip()}")
    assert bad == []
