"""Courier's scheduling rules (seed 003; issue 14 point 6), real scheduler and stub agent, with
messages written straight into the spool (sched_gen.py):
- the high watermark: a scan of the due index that finds memory full does not stop at the
  first entries it reads; it goes on through the bucket, and an entry due earlier than the
  latest one chosen takes its place. With room for one message the queue drains in due order,
  whatever order the directory lists its entries in;
- MAXRCPT at the scheduler (clause key maxrcpt): a job carries at most that many recipients."""
import os
import random
import time

import sched_gen as gen

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sched_stub_ta.py")


def test_full_memory_loads_the_earliest_due_message_first(box):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(f'*/* interval=1m\nerror command="{STUB} error"\nsmtp/* command="{STUB}"\n')
    now = int(time.time())
    base = now // gen_bucket() * gen_bucket()
    if now - base < 30:
        base -= gen_bucket()  # all in one past bucket
    dues = [base + 1 + 2 * k for k in range(8)]
    order = list(range(8))
    random.Random(14).shuffle(order)
    # created in a shuffled order, and the earliest-due one created first (readdir orders
    # by name hash or newest first, never by due time)
    order.remove(0)
    order.insert(0, 0)
    ids = {}
    for k in order:
        ids[gen.add_queued(box.spool, [("smtp", f"h{k}.example", f"ok{k}@h{k}.example")],
                           arrival=dues[k], due=dues[k])] = k
    env = {"STUB_LOG": os.path.join(box.base, "stub.log"), "QUEUEHI": "1", "QUEUELO": "1"}
    p = box.run("scheduler", "-i", "-1", env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(box.base, "stub.log")) as f:
        delivered = [ids[ln.split()[2]] for ln in f if ln.startswith("deliver ")]
    assert delivered == list(range(8))


def gen_bucket():
    return 10000  # SPOOL_BUCKET, lib/spool.h: seconds per due-index bucket


def test_maxrcpt_splits_a_message_into_jobs_of_at_most_that_many_recipients(box):
    with open(box.env["SCHEDULER_CONF"], "w") as f:
        f.write(f'*/* interval=1m\nerror command="{STUB} error"\nsmtp/* maxrcpt=3 command="{STUB}"\n')
    rcpts = [("smtp", "h.example", f"ok{i}@h.example") for i in range(7)]
    mid = gen.add_queued(box.spool, rcpts)
    env = {"STUB_LOG": os.path.join(box.base, "stub.log")}
    p = box.run("scheduler", "-i", "-1", env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    sizes, n, got = [], 0, []
    with open(os.path.join(box.base, "stub.log")) as f:
        for ln in f:
            w = ln.split()
            if w[0] == "deliver":
                n += 1
                got.append(w[4])
            elif w[0] == "job" and w[4] == mid:
                sizes.append(n)
                n = 0
    assert sizes == [3, 3, 1]
    assert sorted(got) == sorted(a for _, _, a in rcpts)
