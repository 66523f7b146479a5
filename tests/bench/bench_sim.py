"""The scheduling simulator (docs/simulate.md, issue 14 point 1): the real scheduler on virtual
time against simulated servers, for the workloads in tests/sim/. Prints each run's figures with
the expected ones beside them (seed 004's theoretical and measured defer rates for a server that
answers 421 above 5 connections; seed 004's bound on the recipients in memory), and the wall time
the simulation took. Never asserted here:
tests/unit/test_sched_sim.c checks the rates and the byte-identical output."""
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SIM = os.path.join(ROOT, "tests", "sim")

# seed 004, "Impact of active server concurrency limiter": client limit 20, server limit 5
SEED = {"limited_1n": ("1/N", 1 / 6, 16.5), "limited_sqrt": ("1/sqrt(N)", 1 / 4, 24.5),
        "limited_1": ("1", 1 / 2, 49.7)}


def schedsim():
    subprocess.run(["make", "-s", "sim"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    found = sorted(glob.glob(os.path.join(ROOT, "build", "*", "schedsim")), key=os.path.getmtime)
    return found[-1]


def simulate(sim, path, extra=""):
    with open(path) as f:
        text = f.read() + extra
    with tempfile.NamedTemporaryFile("w", suffix=".sim", delete=False) as f:
        f.write(text)
        name = f.name
    try:
        t0 = time.perf_counter()
        p = subprocess.run([sim, name], capture_output=True, text=True, check=True)
        return p.stdout, time.perf_counter() - t0
    finally:
        os.unlink(name)


def lines(out, word):
    return [ln for ln in out.splitlines() if ln.startswith(word + " ")]


def run(binary):
    sim = schedsim()
    print("server limit 5 (421 above it), client limit 20, initial 5, 1000 messages of one recipient:")
    for name, (fb, theory, measured) in SEED.items():
        out, dt = simulate(sim, os.path.join(SIM, name + ".sim"))
        m = re.search(r"first_deferred=(\d+)/(\d+) \(([\d.]+)%\)", out)
        conc = re.search(r"open_avg=([\d.]+)", out)
        print(f"  feedback {fb:10} deferred {float(m.group(3)):5.1f}%   seed 004: theory {100 * theory:4.1f}%, "
              f"measured {measured:4.1f}%   server connections avg {conc.group(1)}   ({dt:.2f} s wall)")
    out, dt = simulate(sim, os.path.join(SIM, "dead.sim"))
    never, _ = simulate(sim, os.path.join(SIM, "dead.sim"),
                        "conf smtp/* destination_concurrency_failed_cohort_limit=0\n")
    att = re.search(r"refused=(\d+)", lines(out, "dest")[0]).group(1)
    att0 = re.search(r"refused=(\d+)", lines(never, "dest")[0]).group(1)
    print(f"dead relay for 10 min, 100 messages: {att} connection attempts while down "
          f"(never suspended, failed_cohort_limit=0: {att0}); {lines(out, 'total')[0]}  ({dt:.2f} s wall)")
    # preemption (issue 14 point 4): alerts during a 600-domain mailing, with and without
    print("preemption, a 600-domain mailing through 2 agents (seed 004: the mailing within k/(k-1) = 1.25 at cost 5):")
    for name in ("preempt", "preempt_heavy"):
        path = os.path.join(SIM, name + ".sim")
        on, dt = simulate(sim, path)
        off, _ = simulate(sim, path, "conf smtp/* delivery_slot_cost=1\n")
        cls = {}
        for tag, out in (("on", on), ("off", off)):
            for ln in lines(out, "class"):
                w = ln.split()
                cls[(tag, w[1])] = int(re.search(r"max=(\d+)ms", ln).group(1)), re.search(r"p50=(\d+)ms", ln).group(1)
        ratio = cls[("on", "mailing")][0] / cls[("off", "mailing")][0]
        print(f"  {name}: mailing {cls[('on', 'mailing')][0] / 1000:.1f} s, without preemption "
              f"{cls[('off', 'mailing')][0] / 1000:.1f} s (x{ratio:.3f}, bound 1.25); alerts p50/max "
              f"{cls[('on', 'alert')][1]}/{cls[('on', 'alert')][0]} ms, without {cls[('off', 'alert')][1]}/"
              f"{cls[('off', 'alert')][0]} ms  ({dt:.2f} s wall)")
    print("a non-stop stream to one host (4 agents busy for minutes), a message every 3 s to three others:")
    for of in (1, 2, 5, 20, 1000):
        out, dt = simulate(sim, os.path.join(SIM, "stream.sim"), f"conf smtp overfeed={of}\n")
        cls = {c.split()[1]: c for c in lines(out, "class")}
        ms = {k: re.search(k + r"=(\d+)ms", cls["others"]).group(1) for k in ("p99", "max")}
        stream = re.search(r"p50=(\d+)ms", cls["stream"]).group(1)
        bound = f"bound {of * 300 + 1070} ms" if of < 1000 else "no useful bound"
        print(f"  overfeed {of:4}: others p99/max {ms['p99']}/{ms['max']} ms ({bound}); "
              f"stream p50 {stream} ms  ({dt:.2f} s wall)")
    # recipients in memory (issue 14 point 5): a 50 000-recipient mailing through small pools
    print("recipients in memory, a 50 000-recipient mailing in 5 control files on 100 domains, an alert every 5 s "
          "(L 1000, M 10, R 1000, E 200, QUEUEHI 8; seed 004: B = max(M x QUEUEHI + R + E, L) = 1280):")
    path = os.path.join(SIM, "recipients.sim")
    for tag, extra in (("windows", ""), ("limits raised to 100 000 (no windows)",
                                         "conf PARAMmessage_recipient_limit = 100000\nconf smtp/* recipient_limit=100000\n")):
        out, dt = simulate(sim, path, extra)
        r = dict(kv.split("=") for kv in lines(out, "rcpts")[0].split()[1:])
        cls = {c.split()[1]: c for c in lines(out, "class")}
        mail = int(re.search(r"max=(\d+)ms", cls["mailing"]).group(1))
        alert = [re.search(k + r"=(\d+)ms", cls["alert"]).group(1) for k in ("p50", "max")]
        print(f"  {tag}: at most {r['in_memory_max']} recipients in memory of {r['total']} (bound {r['bound']}, "
              f"message_recipient_limit {r['limit']}), {r['refills']} refills, delivered once {r['once']}, "
              f"twice or more {r['more']}, never {r['never']}; mailing {mail / 1000:.1f} s, alerts p50/max "
              f"{alert[0]}/{alert[1]} ms  ({dt:.2f} s wall)")
    out, dt = simulate(sim, os.path.join(SIM, "mixed.sim"))
    print(f"mixed (600-message mailing to a limited server, alerts to another), {dt:.2f} s wall:")
    for ln in lines(out, "dest") + lines(out, "class") + lines(out, "total"):
        print("  " + ln)


if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else "spoolbox")
