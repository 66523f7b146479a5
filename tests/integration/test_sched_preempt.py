"""Preemption (issue 14 point 4, seed 004), with real processes: submit, the scheduler and its
transport agents (sched_stub_ta.py, each delivery of the mailing taking STUB_SLOW seconds).

A 600-recipient mailing to 600 domains drains through two agents (smtp clause, maxring=2,
overfeed=1). A one-recipient alert submitted while it drains is delivered within the first few
deliveries after its submission: the agents are given its destination as soon as the mailing's
job has a delivery slot to give (Postfix's defaults: cost 5, discount 50, loan 3). With
`delivery_slot_cost=1` (preemption off, as in Postfix) it waits behind the whole mailing, which
is what the scheduler did before (601st of 601)."""
import os
import subprocess
import time

import pytest

from conftest import BINARY

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")
N = 600


def deliveries(box):
    try:
        with open(os.path.join(box.base, "stub.log")) as f:
            return [ln.split()[4] for ln in f if ln.startswith("deliver ")]
    except FileNotFoundError:
        return []


def wait_for(pred, timeout=120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return pred()


def drain_with_alert(box, smtp_extra):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(f'*/* interval=1m\nerror command="{STUB} error"\n'
                f'smtp/* maxchannel=2 maxring=2 overfeed=1 {smtp_extra} command="{STUB}"\n')
    env = {"STUB_LOG": os.path.join(box.base, "stub.log"), "STUB_SLOW": "0.2"}
    mailing = [f"slow{i}@d{i}.example" for i in range(N)]
    p = box.run("submit", "-i", "-f", "list@box.example", *mailing, input=b"Subject: news\n\nlong\n", env=env)
    assert p.returncode == 0, p.stderr
    err = open(os.path.join(box.base, "scheduler.err"), "ab")
    s = subprocess.Popen([BINARY, "scheduler", "-i"], env=box.environ(env), stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    try:
        assert wait_for(lambda: len(deliveries(box)) >= 10), "the mailing did not start"
        p = box.run("submit", "-i", "-f", "monitor@box.example", "ok@alert.example",
                    input=b"Subject: disk failing\n\nsda\n", env=env)
        assert p.returncode == 0, p.stderr
        before = len(deliveries(box))
        # the alert, or 30 mailing deliveries after its submission, whichever comes first
        got = wait_for(lambda: "ok@alert.example" in deliveries(box) or len(deliveries(box)) >= before + 30)
        assert got, "nothing was delivered after the alert's submission"
        d = deliveries(box)
        return d, before
    finally:
        s.terminate()
        s.wait(timeout=40)


@pytest.mark.needs("preempt")
def test_an_alert_preempts_a_600_domain_mailing(box):
    d, before = drain_with_alert(box, "")
    assert "ok@alert.example" in d, f"not delivered within 30 deliveries of its submission ({before} before it)"
    pos = d.index("ok@alert.example") - before + 1
    # two agents, one job each in flight when it arrived; then it goes next
    assert pos <= 4, f"the alert was delivery {pos} after its submission"
    assert all(a.startswith("slow") for a in d if a != "ok@alert.example")
    assert len(set(d)) == len(d)  # nothing delivered twice


def test_without_preemption_the_alert_waits_behind_the_mailing(box):
    d, before = drain_with_alert(box, "delivery_slot_cost=1")
    assert len(d) >= before + 30
    assert "ok@alert.example" not in d[:before + 30]
