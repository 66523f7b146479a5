"""cleaner: removes abandoned temporary files and orphaned message files, keeps queued mail."""
import os
import time


def test_cleaner_removes_only_leftovers(box):
    spool = box.spool
    for d in ("tmp", "incoming", "queue/K", "due"):
        os.makedirs(os.path.join(spool, d), exist_ok=True)
    old = os.path.join(spool, "tmp", "123.1.2")
    fresh = os.path.join(spool, "tmp", "124.1.2")
    for p in (old, fresh):
        open(p, "w").write("partial")
    os.utime(old, (time.time() - 40 * 3600,) * 2)
    orphan = os.path.join(spool, "queue", "K", "0TOUHN7E3TX6IRPK.d")
    open(orphan, "w").write("x")
    kept_c = os.path.join(spool, "queue", "K", "0TOUHN7E3TX6IRQK.c")
    kept_d = os.path.join(spool, "queue", "K", "0TOUHN7E3TX6IRQK.d")
    open(kept_c, "w").write("c")
    open(kept_d, "w").write("d")
    p = box.run("cleaner", "-v")
    assert p.returncode == 0, p.stderr
    assert b"removed 1 temporary, 1 orphaned message, 0 stale index files" in p.stdout
    assert not os.path.exists(old) and os.path.exists(fresh)
    assert not os.path.exists(orphan)
    assert os.path.exists(kept_c) and os.path.exists(kept_d)


def test_cleaner_without_spool_is_tempfail(box):
    p = box.run("cleaner")
    assert p.returncode == 75
    assert b"cannot open the spool" in p.stderr
