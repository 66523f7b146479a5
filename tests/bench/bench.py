"""make bench: runs every tests/bench/bench_*.py module's run(binary) in turn and prints what
each measures. Figures are printed as ratios to a reference measured in the same run, never
asserted (DESIGN.md, Quality bar)."""
import glob
import importlib.util
import os
import sys


def main():
    if len(sys.argv) != 2:
        print("usage: bench.py BINARY", file=sys.stderr)
        return 64
    binary = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    status = 0
    for path in sorted(glob.glob(os.path.join(here, "bench_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        print(f"== {name}", flush=True)
        try:
            mod.run(binary)
        except Exception as e:  # one broken benchmark must not hide the others
            print(f"{name}: failed: {e!r}", flush=True)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
