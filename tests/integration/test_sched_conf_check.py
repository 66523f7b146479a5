"""Configuration honesty (issue 14 point 8): every scheduler.conf key and scheduler option that
is accepted without an effect is said — `spoolbox --check` (and the scheduler reading the file)
warns about each key with its file and line, the scheduler logs each option at start — and
the new keys (PARAMhostclass) are checked by --check. Real binary, private configuration."""
import os
import subprocess

import pytest

from conftest import BINARY

CLAUSES = "*/* interval=1m\nlocal/* command=local\nerror command=errormail\nsmtp command=smtp\n"


def conf(box, text):
    path = box.env["SCHEDULER_CONF"]
    with open(path, "w") as f:
        f.write(text)
    return path


def check(box):
    p = box.run(None, "--check")
    return p.returncode, p.stderr.decode(errors="replace"), p.stdout.decode(errors="replace")


def test_check_warns_about_each_key_without_effect_and_passes(box):
    path = conf(box, "*/*\n\tinterval=1m skew=5\nPARAMstore-error-on-error = 1\n" + CLAUSES[16:])
    rc, err, out = check(box)
    assert rc == 0, err
    assert f"{path}:2: warning: skew: not implemented" in err
    assert f"{path}:3: warning: PARAMstore-error-on-error: not implemented" in err
    assert "configuration is valid" in out


def test_check_is_quiet_about_the_keys_that_act(box):
    path = conf(box, 'PARAMmsgwriteasync = 0\nPARAMglobal-report-interval = 0\nPARAMhostclass = "* 4"\n' + CLAUSES)
    rc, err, _ = check(box)
    assert rc == 0, err
    assert path not in err, err


@pytest.mark.needs("preempt")
def test_check_is_quiet_about_the_preemption_keys(box):
    path = conf(box, "smtp/* delivery_slot_cost=4 delivery_slot_discount=60 delivery_slot_loan=2\n"
                "\tminimum_delivery_slots=5\n" + CLAUSES)
    rc, err, _ = check(box)
    assert rc == 0, err
    assert path not in err, err


def test_check_is_quiet_about_the_recipient_pool_keys(box):
    path = conf(box, "PARAMmessage_recipient_limit = 5000\nPARAMmessage_recipient_minimum = 20\n"
                "smtp/* recipient_limit=4000 extra_recipient_limit=200\n"
                "\trecipient_refill_limit=50 recipient_refill_delay=2s\n" + CLAUSES)
    rc, err, _ = check(box)
    assert rc == 0, err
    assert path not in err, err


@pytest.mark.parametrize("text,line,reason", [
    ("PARAMmessage_recipient_limit = 0\n", 1, "PARAMmessage_recipient_limit: '0' is not a number from 1 to 10000000"),
    ("smtp/*\n\trecipient_limit=0\n", 2, "recipient_limit: must be at least 1"),
    ("smtp/*\n\textra_recipient_limit=many\n", 2, "extra_recipient_limit: 'many' is not a number"),
    ("smtp/*\n\trecipient_refill_delay=soon\n", 2, "recipient_refill_delay: 'soon' is not an interval"),
    ("PARAMmessage_recipient_minimum = 30\nPARAMmessage_recipient_limit = 20\n", None,
     "PARAMmessage_recipient_minimum (30) is above PARAMmessage_recipient_limit (20)"),
])
def test_check_reports_a_bad_recipient_pool_key(box, text, line, reason):
    path = conf(box, text + CLAUSES)
    rc, err, _ = check(box)
    assert rc == 78, err
    assert reason in err and (line is None or f"{path}:{line}: " in err), err


def test_check_reports_a_bad_delivery_slot_key_at_its_line(box):
    path = conf(box, CLAUSES + "smtp/*\n\tdelivery_slot_discount=150\n")
    rc, err, _ = check(box)
    assert rc == 78, err
    assert f"{path}:6: " in err and "delivery_slot_discount: '150' is not a number from 0 to 100" in err, err


@pytest.mark.parametrize("line,reason", [
    ('PARAMhostclass = "* 2"\nPARAMhostclass = "relay.example 1"\n', "the class '*' of line 1 comes first"),
    ('PARAMhostclass = "relay.example 0"\n', "not a session limit from 1 to 100000"),
    ('PARAMhostclass = "relay*.example 1"\n', "is not a host, *.domain or *"),
])
def test_check_reports_bad_host_classes_at_their_line(box, line, reason):
    path = conf(box, line + CLAUSES)
    rc, err, _ = check(box)
    assert rc == 78, err
    n = line.count("\n")
    assert f"{path}:{n}: " in err and reason in err, err


def test_a_bad_host_class_stops_the_scheduler_from_starting(box):
    conf(box, 'PARAMhostclass = "relay.example many"\n' + CLAUSES)
    p = box.run("scheduler", "-i", "-1")
    assert p.returncode == 78
    assert b"scheduler.conf:1: " in p.stderr and b"not a session limit" in p.stderr


def test_scheduler_logs_each_option_that_is_not_implemented(box):
    conf(box, "*/*\n\tinterval=1m skew=5\n" + CLAUSES[16:])
    p = subprocess.run([BINARY, "scheduler", "-i", "-1", "-H", "-Q", "-W", "-q", "/nowhere", "-R", "5",
                        "-M", "2", "-Z", "/nowhere", "-E", "10,30"], env=box.environ(), capture_output=True,
                       timeout=60)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    for opt in "HQWqRMZ":
        assert f"-{opt}: not implemented (accepted for ZMailer compatibility); ignored" in err, opt
    assert "-E N,S: the seconds part S is not implemented; ignored" in err
    # the scheduler says the file's warnings too, with file and line
    assert "scheduler.conf:2: warning: skew: not implemented" in err


def test_scheduler_says_nothing_of_the_kind_without_such_options(box):
    p = box.run("scheduler", "-i", "-1", "-E", "10")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "not implemented" not in err, err
