"""MX routing for real: a network namespace made by the test, with dnsmasq answering MX, A and
AAAA questions for test domains and aiosmtpd servers on port 25 of 127.0.0.2, 127.0.0.3 and ::1
inside it. `ip netns exec` bind-mounts /etc/netns/NAME/resolv.conf over /etc/resolv.conf, so the
transport's resolver (musl's res_query and getaddrinfo) asks the test's dnsmasq.

The servers are started from this process: a thread that has entered the namespace (setns)
creates them, and their sockets stay in it. Skipped, with the reason, where namespaces cannot
be made (not root, no iproute2/dnsmasq, a container without CAP_SYS_ADMIN)."""
import ctypes
import os
import shutil
import subprocess
import time

import pytest

from conftest import BINARY
from smtpsink import SmtpSink
from ta_driver import TA, Queue

MSG = b"From: root@box.example\nSubject: mx\n\nhello\n"
CLONE_NEWNET = 0x40000000

RECORDS = [
    # order.test: two MX hosts, preferences 10 and 20
    "--mx-host=order.test,mx1.order.test,10", "--mx-host=order.test,mx2.order.test,20",
    "--host-record=mx1.order.test,127.0.0.2", "--host-record=mx2.order.test,127.0.0.3",
    # spread.test: two MX hosts of equal preference
    "--mx-host=spread.test,a.spread.test,10", "--mx-host=spread.test,b.spread.test,10",
    "--host-record=a.spread.test,127.0.0.2", "--host-record=b.spread.test,127.0.0.3",
    # afall.test: no MX, an A record (RFC 5321 5.1 implicit MX)
    "--host-record=afall.test,127.0.0.2",
    # dual.test: no MX; AAAA ::1 and A 127.0.0.2 (IPv6 is tried first)
    "--host-record=dual.test,127.0.0.2,::1",
    # nullmx.test: RFC 7505 "MX 0 ." as raw RDATA (preference 0, the root name)
    "--dns-rr=nullmx.test,15,000000", "--host-record=nullmx.test,127.0.0.2",
    # dead.test: an MX whose host has no address, then a good one
    "--mx-host=dead.test,nowhere.dead.test,5", "--mx-host=dead.test,mx.dead.test,10",
    "--host-record=mx.dead.test,127.0.0.3",
]


class Netns:
    def __init__(self, name):
        self.name = name
        self.etc = f"/etc/netns/{name}"
        self.dnsmasq = None
        self.sinks = []

    def run(self, *cmd, check=True):
        return subprocess.run(["ip", "netns", "exec", self.name] + list(cmd), capture_output=True, text=True,
                              check=check, timeout=20)

    def setup(self):
        subprocess.run(["ip", "netns", "add", self.name], check=True, capture_output=True)
        self.run("ip", "link", "set", "lo", "up")
        os.makedirs(self.etc, exist_ok=True)
        with open(f"{self.etc}/resolv.conf", "w") as f:
            f.write("nameserver 127.0.0.1\noptions timeout:2 attempts:1\n")
        with open(f"{self.etc}/hosts", "w") as f:
            f.write("127.0.0.1 localhost\n::1 localhost\n")
        self.dnsmasq = subprocess.Popen(
            ["ip", "netns", "exec", self.name, "dnsmasq", "-k", "--conf-file=/dev/null", "--no-resolv",
             "--no-hosts", "--listen-address=127.0.0.1", "--bind-interfaces", "--local=/test/", "--user=root",
             "--pid-file=" + f"{self.etc}/dnsmasq.pid"] + RECORDS,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(50):
            if self.dnsmasq.poll() is None and self._ready():
                return
            time.sleep(0.1)
        raise RuntimeError("dnsmasq did not start: %s" % self.dnsmasq.stderr.read().decode(errors="replace"))

    def _ready(self):
        p = self.run("cat", "/proc/net/udp", check=False)
        return ":0035 " in p.stdout  # something listens on port 53

    def sink(self, host, **kw):
        """An SmtpSink on host:25 inside the namespace."""
        libc = ctypes.CDLL(None, use_errno=True)
        mine = os.open("/proc/self/ns/net", os.O_RDONLY)
        theirs = os.open(f"/var/run/netns/{self.name}", os.O_RDONLY)
        try:
            if libc.setns(theirs, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
            try:
                s = SmtpSink(host=host, port=25, **kw).start()
            finally:
                libc.setns(mine, CLONE_NEWNET)
        finally:
            os.close(mine)
            os.close(theirs)
        self.sinks.append(s)
        return s

    def teardown(self):
        for s in self.sinks:
            s.stop()
        if self.dnsmasq:
            self.dnsmasq.terminate()
            self.dnsmasq.wait(5)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)
        shutil.rmtree(self.etc, ignore_errors=True)


@pytest.fixture
def ns():
    if os.geteuid() != 0:
        pytest.skip("network namespace tests need root")
    for tool in ("ip", "dnsmasq"):
        if not shutil.which(tool):
            pytest.skip(f"network namespace tests need {tool} (scripts/deps.sh installs it)")
    n = Netns("sbx%d" % os.getpid())
    try:
        n.setup()
    except (subprocess.CalledProcessError, OSError, RuntimeError) as e:
        n.teardown()
        msg = getattr(e, "stderr", "") or str(e)
        pytest.skip(f"cannot make a network namespace here: {msg}")
    yield n
    n.teardown()


@pytest.fixture
def q(box):
    return Queue(box.spool)


def mx_ta(box, ns, **env):
    e = {"SMTP_TLS": "none", "SMTP_CONNECT_TIMEOUT": "3s"}
    e.update(env)
    return TA(box, env=e, prefix=["ip", "netns", "exec", ns.name])


def by_hand(box, ns, mid, **env):
    e = {"SMTP_TLS": "none", "SMTP_CONNECT_TIMEOUT": "3s"}
    e.update(env)
    return subprocess.run(["ip", "netns", "exec", ns.name, BINARY, "smtp", "-m", mid], capture_output=True,
                          env=box.environ(e), timeout=30)


# One job against the test zones: the sinks that listen (address: greeting, None for the usual
# one), then the report (status, enhanced code, remote, parts of the diagnostic) and how many
# messages (and, where given, connections) each sink saw.
ROUTES = [
    pytest.param("order.test", {"127.0.0.2": None, "127.0.0.3": None}, "ok2", None, "mx1.order.test[127.0.0.2]", [],
                 {"127.0.0.2": 1, "127.0.0.3": 0}, {}, id="mx_preference_order"),
    pytest.param("order.test", {"127.0.0.3": None}, "ok2", None, "mx2.order.test[127.0.0.3]", [],
                 {"127.0.0.3": 1}, {}, id="next_mx_when_the_first_is_down"),
    pytest.param("order.test", {"127.0.0.2": "421 4.3.2 mx1 overloaded", "127.0.0.3": None}, "ok2", None,
                 "mx2.order.test[127.0.0.3]", [], {"127.0.0.2": 0, "127.0.0.3": 1}, {"127.0.0.2": 1},
                 id="421_greeting_goes_to_the_next_mx"),
    pytest.param("afall.test", {"127.0.0.2": None}, "ok2", None, "afall.test[127.0.0.2]", [], {"127.0.0.2": 1}, {},
                 id="a_record_fallback_without_mx"),
    pytest.param("nullmx.test", {"127.0.0.2": None}, "error", "5.1.10", None, ["null MX"], {}, {"127.0.0.2": 0},
                 id="null_mx_is_permanent"),
    pytest.param("dead.test", {"127.0.0.3": None}, "ok2", None, "mx.dead.test[127.0.0.3]", [], {}, {},
                 id="mx_host_without_address_is_skipped"),
    pytest.param("nx.test", {}, "deferred", "4.4.3", None, ["nx.test", "NXDOMAIN"], {}, {},
                 id="nonexistent_domain_is_deferred"),
    pytest.param("order.test", {}, "deferred", "4.4.1", None, ["Connection refused"], {}, {},
                 id="all_mx_down_is_deferred_with_the_reason"),
]


@pytest.mark.parametrize("domain,up,status,enh,remote,diag,messages,connections", ROUTES)
def test_route(box, q, ns, domain, up, status, enh, remote, diag, messages, connections):
    sinks = {}
    for addr, greeting in up.items():
        sinks[addr] = ns.sink(addr)
        if greeting:
            sinks[addr].greeting = greeting
    mid = q.add("root@box.example", [f"a@{domain}"], MSG)
    with mx_ta(box, ns) as ta:
        reps = ta.job(q, mid, domain)
    assert reps[0].status == status, reps
    if enh:
        assert reps[0].enh == enh, reps
    if remote:
        assert reps[0].remote == remote, reps
    for part in diag:
        assert part in reps[0].diag, reps
    for addr, n in messages.items():
        assert len(sinks[addr].messages) == n, addr
    for addr, n in connections.items():
        assert sinks[addr].connections == n, addr


def test_equal_preference_spreads(box, q, ns):
    a, b = ns.sink("127.0.0.2"), ns.sink("127.0.0.3")
    mid = q.add("root@box.example", ["x@spread.test"], MSG)
    for _ in range(16):
        p = by_hand(box, ns, mid)
        assert b"\tok2 " in p.stdout, p.stderr
    # Each run is a new process with its own random order: both hosts get mail
    # (all 16 on one side has probability 2 * 2**-16).
    assert len(a.messages) + len(b.messages) == 16
    assert a.messages and b.messages, (len(a.messages), len(b.messages))


def test_ipv6_first_then_ipv4(box, q, ns):
    v4 = ns.sink("127.0.0.2")
    mid = q.add("root@box.example", ["a@dual.test"], MSG)
    with mx_ta(box, ns, LOG="stderr") as ta:
        reps = ta.job(q, mid, "dual.test")
    # Nothing listens on [::1]:25: refused, then 127.0.0.2.
    assert reps[0].status == "ok2" and reps[0].remote == "dual.test[127.0.0.2]", reps
    assert len(v4.messages) == 1
    v6 = ns.sink("::1")
    with mx_ta(box, ns) as ta:
        reps = ta.job(q, mid, "dual.test")
    assert reps[0].status == "ok2" and reps[0].remote == "dual.test[::1]", reps
    assert len(v6.messages) == 1 and len(v4.messages) == 1
