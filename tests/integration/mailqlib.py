"""Helpers of the mailq tests: queued messages with chosen recipient states and attempt records
written straight into a spool (docs/spool.md 4), the real check_mailq from Debian's
monitoring-plugins (fetched by scripts/check_mailq.sh into build/, never installed), and
parsing of the Postfix listing."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT
import sched_gen
from spoolfmt import xtext


def queue_msg(spool, rcpts, attempts=(), sender="root@box.example", body=b"Subject: t\n\nhello\n",
              arrival=None, due=None):
    """A fully queued message. rcpts: (address, tag, tries, next) tuples, host taken from the
    address; attempts: (rcpt, time, code, action, enh, remote, text). Returns its id."""
    plain = [("smtp", a.rsplit("@", 1)[-1].lower(), "placeholder@x") for a, *_ in rcpts]
    mid = sched_gen.add_queued(spool, plain, body=body, arrival=arrival, due=due)
    path = ctl_path(spool, mid)
    data = open(path, "rb").read().decode("utf-8", errors="surrogateescape")
    lines = data.split("\n")
    k = 0
    for i, line in enumerate(lines):
        if line.startswith("r "):
            _, tag, tries, nxt = rcpts[k]
            f = line.split(" ")
            f[1], f[2], f[3], f[4] = tag, "%010d" % (os.getpid() if tag == "T" else 0), "%04d" % tries, "%010d" % nxt
            f[7] = xtext(rcpts[k][0])
            lines[i] = " ".join(f)
            k += 1
        elif line.startswith("s "):
            lines[i] = "s " + (xtext(sender) if sender else "<>")
    out = "\n".join(lines)
    # the message file starts with the same envelope block as the control file (docs/spool.md 3;
    # the smtp agent reads it from there, docs/spool.md 11): rewritten alike, its body offset too
    env = out[:out.index("\n.\n") + 3].encode("utf-8", errors="surrogateescape")
    env = re.sub(rb"\no \d{16}\n", b"\no %016d\n" % len(env), env, count=1)
    dpath = path[:-2] + ".d"
    with open(dpath, "rb") as f:
        raw = f.read()
    with open(dpath, "wb") as f:
        f.write(env + raw[raw.index(b"\n.\n") + 3:])
    out = env.decode("utf-8", errors="surrogateescape") + out[out.index("\n.\n") + 3:]
    for n, t, code, action, enh, remote, text in attempts:
        out += "A %d %d %s %s %s %s %s\n" % (n, t, code, action, enh, xtext(remote) if remote else "-", text)
    with open(path, "wb") as f:  # same inode: the due link stays
        f.write(out.encode("utf-8", errors="surrogateescape"))
    return mid


def ctl_path(spool, mid):
    return os.path.join(spool, "queue", mid[-1], mid + ".c")


def due_links(spool, mid):
    out = []
    d = os.path.join(spool, "due")
    for b in os.listdir(d) if os.path.isdir(d) else []:
        out += [n for n in os.listdir(os.path.join(d, b)) if n.startswith(mid + ".")]
    return out


def listing(out):
    """{id: (marker, size, sender, [recipients])} and the last line of a Postfix listing."""
    lines = out.decode().rstrip("\n").split("\n")
    msgs = {}
    cur = None
    for ln in lines[1:]:
        if not ln.strip() or ln.startswith("-- "):
            cur = None
            continue
        if ln[0] != " ":
            f = ln.split()
            qid = f[0].rstrip("*!?")
            cur = msgs[qid] = [f[0][len(qid):], f[1], f[-1], []]
        elif ln.strip().startswith("("):
            continue
        elif cur is not None:
            cur[3].append(ln.strip())
    return msgs, lines[-1]


def check_mailq(tmp_path, binary, conf_path):
    """A runnable copy of the real check_mailq whose utils.pm names our binary as mailq (the
    path is set at the plugin's build time; the plugin itself is not changed). Returns a
    function running it with arguments."""
    plugins = os.path.join(ROOT, "build", "check_mailq", "usr", "lib", "nagios", "plugins")
    if not os.path.exists(os.path.join(plugins, "check_mailq")):
        subprocess.run(["sh", os.path.join(ROOT, "scripts", "check_mailq.sh"),
                        os.path.join(ROOT, "build", "check_mailq")], cwd=ROOT)
    if not os.path.exists(os.path.join(plugins, "check_mailq")):
        pytest.skip("check_mailq could not be downloaded (apt-get download monitoring-plugins-standard)")
    d = tmp_path / "plugins"
    d.mkdir()
    shutil.copy(os.path.join(plugins, "check_mailq"), d / "check_mailq")
    link = tmp_path / "mailq"
    os.symlink(binary, link)
    utils = open(os.path.join(plugins, "utils.pm")).read()
    assert '$PATH_TO_MAILQ   = "/usr/bin/mailq";' in utils
    (d / "utils.pm").write_text(utils.replace('"/usr/bin/mailq"', '"%s"' % link))

    def run(box, *args):
        return subprocess.run(["perl", str(d / "check_mailq"), "-d", conf_path] + list(args),
                              capture_output=True, env=box.environ(), timeout=60)
    return run
