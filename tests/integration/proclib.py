"""What /proc says about running processes, for tests that look for a daemon's children or for
the processes of one user (the delivery a user's .forward started)."""
import os


def _status(pid):
    """(ppid, real uid, state) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["PPid"]), int(fields["Uid"].split()[0]), fields["State"].split()[0]
    except (OSError, KeyError, ValueError, IndexError):
        return None


def pids(match):
    """Pids of the processes for whose (ppid, uid, state) match() is true."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _status(d)
            if st and match(*st):
                out.append(int(d))
    return out


def children(ppid):
    """Pids whose parent is ppid."""
    return pids(lambda parent, uid, state: parent == ppid)


def processes_of(uid):
    """Pids of the processes whose real uid is uid."""
    return pids(lambda parent, u, state: u == uid)
