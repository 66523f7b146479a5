#!/usr/bin/python3
"""A transport agent for scheduler tests, speaking seed 000's protocol (docs/spool.md 11). It
handles the recipients the scheduler marked T with its pid and the job's host, and decides by the
address's local part:
  ok*        ok (delivered)             fail*      error 5.1.1
  defer*     deferred 4.4.1             deferall*  deferall 4.4.1
  retryat*   retryat +N (N from "retryatN", default 5)
  silent*    no report (the scheduler must call it lost)
  die*       exits in the middle of the job (after reporting nothing)
  slow*      sleeps STUB_SLOW seconds (default 0.3), then ok
  once*      retryat $STUB_ONCE (default +60) the first time (logged "deferonce PID ID OFFSET ADDR"),
             then ok
Run with the argument "error" it is the error channel: every recipient is "ok" with a DSN id.
Every event is appended to $STUB_LOG as one line:
  start PID TIME / job PID TIME0 TIME1 ID HOST / deliver PID ID OFFSET ADDR [TIME] / exit PID TIME
"""
import os
import sys
import time

from spoolfmt import xtext_decode

SPOOL = os.environ["SPOOL"]
LOG = os.environ.get("STUB_LOG", "/dev/null")
SLOW = float(os.environ.get("STUB_SLOW", "0.3"))
ME = os.getpid()
DSN_ID = "0TESTDSN0001Z"  # a well-formed id for the B record


def log(line):
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (line + "\n").encode())
    os.close(fd)


def mine(mid, host):
    path = os.path.join(SPOOL, "queue", mid[-1], mid + ".c")
    out = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    for raw in data.split(b"\n"):
        line = raw.decode(errors="replace")
        if line == ".":
            break
        if line.startswith("r "):
            f = line.split(" ")
            if f[1] == "T" and int(f[2]) == ME and (host == "*" or f[6] == host):
                out.append((pos, xtext_decode(f[7])))
        pos += len(raw) + 1
    return out


def out(s):
    sys.stdout.write(s)
    sys.stdout.flush()


def report(mid, off, addr, status, enh, text):
    action = {"ok": "delivered", "error": "failed"}.get(status, "delayed")
    out("%s/%d\trfc822;%s\x01%s\x01%s\x01%s\x01\t%s %s\n" % (mid, off, addr, action, enh, text, status, text))


def main():
    log("start %d %.3f %s" % (ME, time.time(), " ".join(sys.argv[1:])))
    while True:
        out("#hungry\n")
        line = sys.stdin.readline()
        if not line:
            break
        line = line.rstrip("\n")
        if line == "#idle":
            continue
        mid, host = line.split("\t")[:2]
        t0 = time.time()
        for off, addr in mine(mid, host):
            local = addr.split("@")[0]
            if sys.argv[1:2] == ["error"]:
                # the error channel: "queue" a DSN and name it, as errormail will
                log("dsn %d %s %d %s" % (ME, mid, off, addr))
                report(mid, off, addr, "ok", "2.0.0", "%s DSN queued" % DSN_ID)
                continue
            if local.startswith("slow"):
                time.sleep(SLOW)
            if local.startswith("die"):
                log("died %d %s" % (ME, mid))
                os._exit(3)
            if local.startswith("silent"):
                continue
            if local.startswith("once"):
                with open(LOG) as f:
                    seen = any(ln.startswith("deferonce ") and ln.split()[4] == addr for ln in f)
                if not seen:
                    log("deferonce %d %s %d %s" % (ME, mid, off, addr))
                    report(mid, off, addr, "retryat", "4.4.1", os.environ.get("STUB_ONCE", "+60") + " wait")
                    continue
            if local.startswith("ok") or local.startswith("slow") or local.startswith("once"):
                log("deliver %d %s %d %s %.3f" % (ME, mid, off, addr, time.time()))
                report(mid, off, addr, "ok", "2.0.0", "delivered by stub")
            elif local.startswith("fail"):
                report(mid, off, addr, "error", "5.1.1", "no such user")
            elif local.startswith("deferall"):
                report(mid, off, addr, "deferall", "4.4.1", "host down")
            elif local.startswith("defer"):
                report(mid, off, addr, "deferred", "4.4.1", "try later")
            elif local.startswith("retryat"):
                n = local[7:] or "5"
                report(mid, off, addr, "retryat", "4.4.1", "+%s wait" % n)
            else:
                report(mid, off, addr, "ok", "2.0.0", "delivered by stub")
                log("deliver %d %s %d %s" % (ME, mid, off, addr))
        log("job %d %.3f %.3f %s %s" % (ME, t0, time.time(), mid, host))
    log("exit %d %.3f" % (ME, time.time()))


main()
