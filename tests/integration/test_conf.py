"""spoolbox.conf through the binary: --check findings as file:line: reason, -C, environment
overrides, and the exit codes."""
import pytest

# Files --check accepts. tls=may: a verify smarthost would need trust anchors (test_install.py
# checks that).
GOOD_FILES = [
    pytest.param("# comment\nSPOOL=/var/spool/x\nSMARTHOST=\"relay.example:587 tls=may\"\n", id="spool_and_smarthost"),
    pytest.param("ALLMAILFROM=router@example.net\nLOCALDOMAINS=a.org b.org\n", id="submit_keys"),
]

# Files it refuses (exit 78): each finding as "line: error: reason", and the count line if any.
BAD_FILES = [
    pytest.param("SPOOL=/a\nBOGUS=1\nSPOOL=/b\nSIZELIMIT=huge\nnot a line\nHELO_NAME=\"x\n",
                 ["2: error: unknown key BOGUS", "3: error: duplicate key SPOOL (first set on line 1)",
                  "4: error: SIZELIMIT: not a size", "5: error: expected NAME=value",
                  "6: error: HELO_NAME: unterminated quoted value"], "5 errors", id="every_error_with_location"),
    pytest.param("ALLMAILFROM=not an address\nQUALIFYDOMAIN=bad..domain\nLOCALDOMAINS=a.org, b!.org\n",
                 ["1: error: ALLMAILFROM: not an address with a domain", "2: error: QUALIFYDOMAIN: empty label in domain",
                  "3: error: LOCALDOMAINS: character not allowed in a domain name"], None, id="submit_keys"),
    # a whole number is digits only
    pytest.param("HOPCOUNT_LIMIT=+5\n", ["1: error: HOPCOUNT_LIMIT: not a non-negative whole number"], None,
                 id="signed_number"),
]


@pytest.mark.parametrize("text", GOOD_FILES)
def test_check_valid_file(box, text):
    path = box.write_conf(text)
    p = box.run(None, "--check", "-C", path)
    assert p.returncode == 0, p.stderr
    assert b"configuration is valid" in p.stdout


@pytest.mark.parametrize("text,findings,total", BAD_FILES)
def test_check_reports_every_error_with_location(box, text, findings, total):
    path = box.write_conf(text)
    p = box.run(None, "--check", "-C", path)
    assert p.returncode == 78
    err = p.stderr.decode()
    for f in findings:
        assert f"{path}:{f}" in err, err
    if total:
        assert total in err, err


def test_check_missing_explicit_file(box):
    p = box.run(None, "--check", "-C", box.base + "/nonexistent.conf")
    assert p.returncode == 78
    assert b"nonexistent.conf: error: cannot read: No such file or directory" in p.stderr


def test_check_environment_override_is_validated(box):
    path = box.write_conf("SPOOL=/ok\n")
    p = box.run(None, "--check", "-C", path, env={"SIZELIMIT": "12Q"})
    assert p.returncode == 78
    assert b"environment: error: SIZELIMIT: not a size" in p.stderr


def test_check_without_any_file_uses_defaults(box):
    # the default path does not exist on a test machine: that is a valid configuration
    p = box.run(None, "--check")
    assert p.returncode == 0, p.stderr


def test_check_usage_error(box):
    p = box.run(None, "--check", "extra")
    assert p.returncode == 64


def test_every_key_is_documented():
    import os
    import re
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    keys = re.findall(r"^CONF\((\w+),", open(os.path.join(root, "lib", "conf_keys.h")).read(), re.M)
    doc = open(os.path.join(root, "docs", "configuration.md")).read()
    missing = [k for k in keys if f"`{k}`" not in doc]
    assert not missing, f"keys missing from docs/configuration.md: {missing}"


def test_applet_refuses_broken_configuration(box):
    path = box.write_conf("NO_SUCH=1\n")
    p = box.run("cleaner", "-C", path)
    assert p.returncode == 78
    assert f"{path}:1: error: unknown key NO_SUCH".encode() in p.stderr


def test_check_reports_scheduler_users_and_groups_that_do_not_exist(box):
    """Issue 11 point 10: a user= that does not exist stopped every transport agent of its
    clause while --check said the configuration was valid."""
    sc = box.env["SCHEDULER_CONF"]
    with open(sc, "w") as f:
        f.write("*/*\n\tuser=no-such-user-sbx\nsmtp/*\n\tgroup=no-such-group-sbx command=smtp\n"
                "local/*\n\tuser=65534 group=65534 command=local\nerror\n\tuser=root command=errormail\n")
    p = box.run(None, "--check")
    assert p.returncode == 78
    err = p.stderr.decode()
    assert f"{sc}:1: error: user=no-such-user-sbx: no such user, so no transport agent of this clause can start" in err
    assert f"{sc}:3: error: group=no-such-group-sbx: no such group" in err
    assert "2 errors" in err
    with open(sc, "w") as f:
        f.write("*/*\n\tuser=root\nlocal/*\n\tuser=65534 command=local\n")
    p = box.run(None, "--check")
    assert p.returncode == 0, p.stderr
