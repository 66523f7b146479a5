"""Least privilege for the network-facing agents (issue 9 point 9, docs/spool.md 8 "Who runs as
whom"): smtp, errormail and hold run as AGENT_USER, reading the queue through the submit group;
local stays root. The sink records the uid of the process that connected (its socket's line in
/proc/net/tcp). Accounts are made by `spoolbox --install` in a private system (sysroot.py), so
the real /etc is never touched."""
import os
import subprocess

import pytest

import sysroot
from conftest import BINARY, IS_ASAN
from smtpsink import SmtpSink
from test_install import GROUP, field, in_system, system  # noqa: F401 (system is a fixture)

pytestmark = pytest.mark.skipif(IS_ASAN, reason="LeakSanitizer cannot run in a setgid process")

# a user of this run's own: the machine may have the spoolbox user of an installed spoolbox
AGENT = f"sba{os.getpid() % 100000}"

DELIVER = r'''
set -e
"$BIN" --install
echo "agent_uid=$(id -u $AGENT)"
"$BIN" scheduler -i 2>"$TOP/sched.log" &
s=$!
i=0; while [ ! -p "$SPOOL/trigger" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
printf 'Subject: privilege\n\nbody\n' | "$BIN" submit -f root@box.example far@example.net refused@example.net
echo "submit=$?"
# done when the bounce of refused@ is in root's mailbox and nothing is queued any more
i=0
while [ $i -lt 600 ]; do
	if grep -q "refused@example.net" "$MAIL/root" 2>/dev/null && [ -z "$(find "$SPOOL/queue" "$SPOOL/incoming" -type f)" ]; then break; fi
	sleep 0.05; i=$((i+1))
done
set +e
"$BIN" --check; echo "check=$?"
kill $s; wait $s
'''


def deliver(box, system, sink, creds):
    conf = system["conf"] + (f"AGENT_USER={AGENT}\nCREDENTIALS={system['top']}/credentials\n"
                             f"SMARTHOST=[127.0.0.1]:{sink.port} tls=none cleartext_auth\n")
    if creds:
        # root's, as it was while the agents ran as root: --install gives it to the agents' user
        path = os.path.join(system["top"], "credentials")
        with open(path, "w") as f:
            f.write("[127.0.0.1] router s3cret\n")
        os.chmod(path, 0o600)
    sink.rcpt_replies["refused@example.net"] = "550 5.1.1 no such user"
    env = {"BIN": system["bin"], "HOME": "/", "GROUP": GROUP, "AGENT": AGENT, "TOP": system["top"],
           "SPOOL": system["spool"], "MAIL": system["mail"]}
    p = sysroot.run(box.base, ["sh", "-c", DELIVER], env, conf=conf, timeout=90)
    log = open(os.path.join(system["top"], "sched.log"), errors="replace").read()
    return p, log


@pytest.mark.needs("local")  # the bounce goes to root's mailbox
@pytest.mark.parametrize("creds", [True, False], ids=["with-credentials", "without-credentials"])
def test_smtp_and_errormail_run_as_the_agent_user(box, system, creds):
    """The built-in policy: the smtp agent that connects has the agents' uid, not 0, and still
    delivers (a message submitted by root: pick-up gives its file the group the agent reads it
    with); with credentials it authenticates from a file only that user can read; errormail,
    also that user, queues the bounce of the refused recipient, which local (root) delivers."""
    users = {"router": "s3cret"} if creds else None
    with SmtpSink(users=users, auth_require_tls=False, **({"auth_required": True} if creds else {})) as sink:
        p, log = deliver(box, system, sink, creds)
    out, err = p.stdout.decode(), p.stderr.decode()
    assert field(p.stdout, "submit=") == "0", (out, err, log)
    uid = int(field(p.stdout, "agent_uid="))
    assert uid != 0
    assert f"created user {AGENT} (uid {uid}, group {GROUP}) with useradd -r" in out, out
    assert [m.rcpt_tos for m in sink.messages] == [["far@example.net"]], (out, err, log)
    assert sink.messages[0].peer_uid == uid, log
    if creds:
        assert f"gave {system['top']}/credentials to {AGENT} (mode 0600)" in out, out
        assert sink.messages[0].auth_user == "router", log
        st = os.stat(os.path.join(system["top"], "credentials"))
        assert st.st_uid == uid and st.st_mode & 0o777 == 0o600
    # the bounce was queued by errormail as the agents' user (pick-up logs who submitted)
    assert f"uid={uid} from=<>" in log, log
    mbox = open(os.path.join(system["mail"], "root"), "rb").read()
    assert b"refused@example.net" in mbox and b"550 5.1.1 no such user" in mbox
    assert field(p.stdout, "check=") == "0", err
    assert "AGENT_USER" not in err and "credentials" not in err, err


def test_missing_agent_user_falls_back_to_root_and_says_so(box, smtp_sink):
    """No such user (a rescue image without /etc/passwd, a binary copied without --install):
    mail still goes, as root, and both the scheduler's log and --check say why."""
    if os.geteuid() != 0:
        pytest.skip("needs root: only a root scheduler changes the agents' user")
    env = {"AGENT_USER": "nosuchuser-sbx", "SMARTHOST": f"[127.0.0.1]:{smtp_sink.port} tls=none"}
    p = box.run("submit", "-f", "root@box.example", "far@example.net", input=b"Subject: x\n\nbody\n", env=env)
    assert p.returncode == 0, p.stderr
    p = box.run("scheduler", "-i", "-1", env=env, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert len(smtp_sink.messages) == 1 and smtp_sink.messages[0].peer_uid == 0, err
    assert "AGENT_USER=nosuchuser-sbx: no such user or SUBMIT_GROUP: the agents run as root (spoolbox --install)" in err
    p = box.run(None, "--check", env=dict(env, SPOOL=os.path.join(box.base, "no-spool")))
    assert p.returncode == 0, p.stderr
    assert (b"warning: AGENT_USER=nosuchuser-sbx: no such user or SUBMIT_GROUP: the agents run as root; fix: "
            b"spoolbox --install") in p.stderr


def test_check_warns_when_the_agent_cannot_read_the_credentials(box):
    """The credentials are the agents' user's alone: --check (as root) reads a file that user
    owns, warns about one it cannot read (AUTH would be deferred), and refuses one others can
    read, as before."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the file to another user")
    creds = box.env["CREDENTIALS"]
    with open(creds, "w") as f:
        f.write("relay.example u p\n")
    os.chmod(creds, 0o600)
    env = {"AGENT_USER": "65534", "SPOOL": os.path.join(box.base, "no-spool")}
    p = box.run(None, "--check", env=env)
    assert p.returncode == 0, p.stderr
    assert (f"{creds}: warning: {creds}: owner uid 0, not AGENT_USER=65534: the smtp agent cannot read it (AUTH "
            f"deferred); fix: chown 65534 {creds}").encode() in p.stderr
    os.chown(creds, 65534, -1)
    p = box.run(None, "--check", env=env)
    assert p.returncode == 0 and creds.encode() not in p.stderr, p.stderr
    os.chmod(creds, 0o640)
    p = box.run(None, "--check", env=env)
    assert p.returncode == 78
    assert f"{creds}: error: mode 0640 lets others read it (refused: chmod 600)".encode() in p.stderr


def test_root_smtp_t_reads_the_credentials_of_the_agent_user_named_in_the_file(box):
    """smtp -t as root tests what the agent will do: a credentials file owned by AGENT_USER is
    the agent's and is used, also when AGENT_USER is set in spoolbox.conf only."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the file to another user")
    with SmtpSink(users={"router": "s3cret"}, auth_require_tls=False, auth_required=True) as s:
        creds = box.env["CREDENTIALS"]
        with open(creds, "w") as f:
            f.write("[127.0.0.1] router s3cret\n")
        os.chmod(creds, 0o600)
        os.chown(creds, 65534, -1)
        conf = box.write_conf(f"AGENT_USER=65534\nSMARTHOST=[127.0.0.1]:{s.port} tls=none cleartext_auth\n"
                              f"SPOOL={box.base}/no-spool\n")
        env = {k: v for k, v in box.environ().items() if k not in ("AGENT_USER", "SPOOL")}
        p = subprocess.run([BINARY, "smtp", "-t", "-C", conf, "admin@example.com"], env=env, capture_output=True,
                           timeout=30)
        out = p.stdout.decode()
        assert p.returncode == 0, (out, p.stderr)
        assert f"as router ({creds} line 1)" in out, out
        assert [(u, ok) for _, u, ok in s.logins] == [("router", True)]
