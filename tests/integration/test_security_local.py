"""Security review of local delivery: files a user names in ~/.forward are read by root, so
root must not even open one that is not a regular file (a device's open has effects of its own:
a watchdog arms, a tape rewinds; a FIFO's writer wakes up)."""
import os
import threading
import time

from test_local import log_text, pubdir, user, write_forward  # noqa: F401 (fixtures)


def test_include_of_a_fifo_or_device_is_never_opened(box, pubdir, user):  # noqa: F811
    fifo = os.path.join(pubdir, "fifo")
    os.mkfifo(fifo)
    os.chmod(fifo, 0o644)
    os.chown(fifo, user.pw_uid, user.pw_gid)
    write_forward(user, f":include:{fifo}\n:include:/dev/null\n")
    opened = []

    def writer():
        # blocks until some process opens the FIFO for reading
        fd = os.open(fifo, os.O_WRONLY)
        opened.append(True)
        os.close(fd)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        p = box.run("local", "-x", user.pw_name)
        t.join(0.5)
        assert not opened, "root opened the FIFO a user named in ~/.forward"
        out = p.stdout.decode()
        assert f":include: file {fifo} missing or unsafe" in out, (out, p.stderr)
        assert ":include: file /dev/null missing or unsafe" in out
        assert f"ignoring {fifo}: not a regular file" in p.stderr.decode()
    finally:
        if not opened:  # let the writer go
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            t.join(2)
            os.close(fd)


def test_forward_symlink_still_ignored(box, pubdir, user):  # noqa: F811
    target = os.path.join(pubdir, "real-forward")
    with open(target, "w") as f:
        f.write('"|touch %s"\n' % os.path.join(box.base, "should-not-run"))
    os.chown(target, user.pw_uid, user.pw_gid)
    os.symlink(target, os.path.join(user.pw_dir, ".forward"))
    p = box.run("local", "-x", user.pw_name)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode().startswith("mailbox "), p.stdout
    assert "is a symlink" in p.stderr.decode()
    assert not os.path.exists(os.path.join(box.base, "should-not-run"))


def test_include_fan_out_is_bounded(box, pubdir, user):  # noqa: F811
    """Each include file names the next one eight times: 8^12 expansions without a budget."""
    depth = 12
    for i in range(1, depth + 1):
        p = os.path.join(pubdir, f"f{i}")
        with open(p, "w") as f:
            f.write(f":include:{pubdir}/f{i + 1}\n" * 8 if i < depth else f"{user.pw_name}@elsewhere.example\n")
        os.chown(p, user.pw_uid, user.pw_gid)
        os.chmod(p, 0o644)
    write_forward(user, f":include:{pubdir}/f1\n")
    p = box.run("local", "-x", user.pw_name, timeout=10)
    out = p.stdout.decode()
    assert p.returncode == 67, (p.returncode, out[-500:])
    assert f"remote {user.pw_name}@elsewhere.example" in out
    assert "error 5.4.6 expansion too large: more than 10000 aliases" in out


def test_command_gets_no_extra_fds_and_its_group_dies_at_the_timeout(box, pubdir):  # noqa: F811
    from test_local import deliver, write_aliases
    out = os.path.join(pubdir, "cmd")
    os.mkdir(out)
    os.chmod(out, 0o1777)
    write_aliases(box, f"grp: \"|ls /proc/self/fd > {out}/fds; env > {out}/env; sleep 60 & echo $! > {out}/pid; sleep 60\"\n")
    r = deliver(box, ["grp"], b"Subject: x\n\nbody\n",
                env={"COMMAND_TIMEOUT": "1s", "LD_PRELOAD": "/nonexistent.so", "IFS": "x"})
    assert r[0].status == "deferred" and "timed out" in r[0].diag, r
    # stdin, stdout, stderr and ls's own directory: no message file, spool or scheduler pipe
    assert sorted(int(x) for x in open(f"{out}/fds").read().split()) == [0, 1, 2, 3]
    env = open(f"{out}/env").read()
    assert "LD_PRELOAD" not in env and "IFS=" not in env and "SPOOL=" not in env, env
    pid = int(open(f"{out}/pid").read())
    for _ in range(100):  # the background job was in the command's process group: killed too
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        stat = open(f"/proc/{pid}/stat").read()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"background job {pid} of a timed-out command still runs")


def test_user_owned_include_cannot_make_root_read_a_private_file(box, pubdir, user):  # noqa: F811
    """An aliases entry delegates a list to a user (`list: :include:/home/u/list`). Root reads
    that file; what it includes in turn must be the user's own or readable by everyone, or the
    user gets root-only files back in bounce texts."""
    from test_local import write_aliases
    secret = os.path.join(pubdir, "secret")
    with open(secret, "w") as f:
        f.write("topsecret-hash-xyz\n")
    os.chmod(secret, 0o600)  # root's
    public = os.path.join(pubdir, "public")
    with open(public, "w") as f:
        f.write("public-member@elsewhere.example\n")
    os.chmod(public, 0o644)  # root's, readable by everyone: fine
    own = os.path.join(pubdir, "own")
    with open(own, "w") as f:
        f.write("own-member@elsewhere.example\n")
    os.chown(own, user.pw_uid, user.pw_gid)
    os.chmod(own, 0o600)  # the user's own: fine
    lst = os.path.join(pubdir, "list")
    with open(lst, "w") as f:
        f.write(f":include:{secret}\n:include:{public}\n:include:{own}\n")
    os.chown(lst, user.pw_uid, user.pw_gid)
    os.chmod(lst, 0o644)
    write_aliases(box, f"list: :include:{lst}\n")
    p = box.run("local", "-x", "list")
    out = p.stdout.decode()
    assert "topsecret" not in out and "topsecret" not in p.stderr.decode(), out
    assert f":include: file {secret} missing or unsafe" in out
    assert "remote public-member@elsewhere.example" in out
    assert "remote own-member@elsewhere.example" in out


def test_forward_include_is_read_with_the_users_rights_and_never_echoed(box, pubdir, user):  # noqa: F811
    """Issue 11 point 9: `:include:` in a .forward naming a world-readable file inside a directory
    its owner cannot enter: root must not read it for her (the file is opened with her rights),
    and nothing read from her files comes back in a report (a bounce text)."""
    from test_local import TA, queue_message
    private = os.path.join(pubdir, "private")
    os.mkdir(private, 0o700)  # root's: she cannot enter it
    inner = os.path.join(private, "f")
    with open(inner, "w") as f:
        f.write("secretword\n")
    os.chmod(inner, 0o644)  # world-readable, and still out of her reach
    fwd = write_forward(user, f":include:{inner}\n")
    p = box.run("local", "-x", user.pw_name)
    assert "secretword" not in p.stdout.decode() + p.stderr.decode(), p.stdout
    assert f":include: file {inner} missing or unsafe" in p.stdout.decode(), p.stdout
    assert "Permission denied" in p.stderr.decode()
    # her own file, with a word that is no user: the report names no content of it
    own = os.path.join(user.pw_dir, "list")
    with open(own, "w") as f:
        f.write("nosuchuserword\n")
    os.chown(own, user.pw_uid, user.pw_gid)
    with open(fwd, "w") as f:
        f.write(f":include:{own}\n")
    mid = queue_message(box, [user.pw_name], b"Subject: x\n\n")
    ta = TA(box)
    try:
        (r,) = ta.job(mid)
    finally:
        ta.close()
    assert (r.status, r.enh) == ("error", "5.1.1"), r
    assert "nosuchuserword" not in r.line, r.line
    assert fwd in r.diag and "mail log" in r.diag, r
    assert "unknown user: nosuchuserword" in log_text(box)  # the admin sees it
