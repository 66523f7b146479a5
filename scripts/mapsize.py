"""Sums the input sections a GNU ld link map kept after --gc-sections, by subsystem (the table
below) or, with -v, by object (each applet, each lib/ module, musl, BearSSL). Bytes are those
that occupy the file (.text, .rodata, .data); .bss is summed apart, as it costs RAM only.
Used by scripts/size.sh (`make size`). Usage: mapsize.py [-v] MAP [MAP...] (one column each)."""
import re
import sys
from collections import defaultdict

# (subsystem, pattern on the object's origin); the first match wins, anything else is "common".
SUBSYSTEMS = [
    ("musl libc", r"^musl libc$"),
    ("BearSSL", r"^BearSSL$"),
    ("own libc parts (lib/libc, fmt)", r"^lib/libc/|^lib/fmt$"),
    ("TLS glue", r"lib/tls"),
    ("scheduler", r"applet scheduler|lib/sched|lib/clock|lib/mqauth$"),
    ("smtp", r"applet smtp(_test)?$|lib/smtp_(client|session|txn|body)|lib/(dns|auth|creds|smarthost|mime7|md5|base64)$"),
    ("submit", r"applet submit|lib/(enqueue|smtpd|header|addr|route)$"),
    ("local", r"applet (local|newaliases)|lib/(aliases|aliases_expand|deliver|deliver_cmd|deliver_priv|mbox|mbox_journal|maildir)$"),
    ("mailq", r"applet mailq|lib/(mailq_\w+|qctl)$"),
    ("errormail", r"applet (errormail|hold)|lib/dsn$"),
    ("spool", r"lib/(spool_\w+|ta|io|fileio|secfile)$"),
    ("main, install, cleaner", r"applet (cleaner|main|common|install|check_users)"),
]
SECTION = re.compile(r"\.(text|rodata|data|bss|tbss|tdata|init_array|fini_array)")


def origin(path):
    if "libbearssl" in path:
        return "BearSSL"
    m = re.search(r"lib/libc/(\w+)\.o", path)
    if m:
        return "lib/libc/" + m.group(1)
    m = re.search(r"applets/(\w+)\.o", path)
    if m:
        return "applet " + m.group(1)
    m = re.search(r"libspool\.a\((\w+)\.o\)", path)
    if m:
        return "lib/" + m.group(1)
    if "libc.a" in path or "crt" in path or "libgcc" in path:
        return "musl libc"
    return "other"


def subsystem(o):
    for name, pat in SUBSYSTEMS:
        if re.search(pat, o):
            return name
    return "common (conf, log, util, ...)"


def parse(path):
    """{origin: [file bytes, bss bytes]} for one map."""
    totals = defaultdict(lambda: [0, 0])
    in_memmap = False
    pending = None

    def add(sec, size, obj):
        if SECTION.match(sec):
            totals[origin(obj)][1 if sec.startswith((".bss", ".tbss")) else 0] += size

    for line in open(path, errors="replace"):
        if line.startswith("Linker script and memory map"):
            in_memmap = True
            continue
        if not in_memmap or line.startswith("/DISCARD/"):
            continue
        parts = line.split()
        if pending is not None:
            if len(parts) >= 3 and parts[0].startswith("0x") and parts[1].startswith("0x"):
                add(pending, int(parts[1], 16), parts[2])
            pending = None
            continue
        if len(parts) == 1 and line.startswith(" ."):
            pending = parts[0]
            continue
        if len(parts) >= 4 and line.startswith(" .") and parts[1].startswith("0x") and parts[2].startswith("0x"):
            add(parts[0], int(parts[2], 16), parts[3])
    return totals


def main(argv):
    verbose = argv and argv[0] == "-v"
    maps = argv[1:] if verbose else argv
    cols = [parse(m) for m in maps]
    key = (lambda o: o) if verbose else subsystem
    rows = defaultdict(lambda: [0] * len(cols))
    bss = [0] * len(cols)
    for i, t in enumerate(cols):
        for o, (f, b) in t.items():
            rows[key(o)][i] += f
            bss[i] += b
    names = [re.sub(r"^build/|/spoolbox\.map$", "", m) for m in maps]
    w = max(12, *(len(n) for n in names))
    print(f"  {'bytes in the file, by ' + ('object' if verbose else 'subsystem'):<32}" + "".join(f"{n:>{w + 1}}" for n in names))
    for k, v in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        print(f"  {k:<32}" + "".join(f"{x:>{w + 1}}" for x in v))
    print(f"  {'total (.text .rodata .data)':<32}" + "".join(f"{sum(r[i] for r in rows.values()):>{w + 1}}" for i in range(len(cols))))
    print(f"  {'.bss (RAM only)':<32}" + "".join(f"{x:>{w + 1}}" for x in bss))


if __name__ == "__main__":
    main(sys.argv[1:])
