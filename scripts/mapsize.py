"""Sums the input sections a GNU ld link map kept, by origin: each applet, each lib/ module,
BearSSL and libc. Used by `make size`."""
import re
import sys
from collections import defaultdict

def origin(path):
    if "libbearssl" in path:
        return "BearSSL"
    m = re.search(r"applets/(\w+)\.o", path)
    if m:
        return "applet " + m.group(1)
    m = re.search(r"libspool\.a\((\w+)\.o\)", path)
    if m:
        return "lib/" + m.group(1)
    if "libc.a" in path or "crt" in path or "libgcc" in path:
        return "musl libc + runtime"
    return "other"

totals = defaultdict(int)
in_memmap = False
pending = None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("Linker script and memory map"):
        in_memmap = True
        continue
    if not in_memmap or line.startswith("/DISCARD/"):
        continue
    parts = line.split()
    if pending is not None:
        if len(parts) >= 3 and parts[0].startswith("0x") and parts[1].startswith("0x"):
            if re.match(r"\.(text|rodata|data|bss)", pending):
                totals[origin(parts[2])] += int(parts[1], 16)
        pending = None
        continue
    if len(parts) == 1 and re.match(r"^\.(text|rodata|data|bss)", parts[0]) and line.startswith(" "):
        pending = parts[0]
        continue
    if len(parts) >= 4 and line.startswith(" .") and parts[1].startswith("0x") and parts[2].startswith("0x"):
        if re.match(r"\.(text|rodata|data|bss)", parts[0]):
            totals[origin(parts[3])] += int(parts[2], 16)

print("\ncode and data kept after --gc-sections, by origin (bytes):")
for k, v in sorted(totals.items(), key=lambda kv: -kv[1]):
    print(f"  {k:<28} {v:8d}")
print(f"  {'total':<28} {sum(totals.values()):8d}")
