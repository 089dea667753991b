#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The work of bench/line_parity (which see for usage): `line FUNC` of
# kprobectl and `perf probe -L FUNC` side by side, with the kernel's source
# tree (-s), on a seeded sample of the traceable functions. What is compared
# is the numbered lines (relative to the declaration): the set of each, and
# the last one, which says where each tool thinks the function ends. Stdlib
# only; perf's answers are kept in the cache (they never change for a
# build-id and a source tree).
#
# The rows:
#   same            the same numbered lines
#   kprobectl more  kprobectl numbers every line perf does, and more: lines
#                   perf leaves out because another line shares their
#                   address or because they lie in a nested inlined copy
#                   (docs/parity.md: kprobectl probes those)
#   perf more       perf numbers a line kprobectl does not
#   both differ     each numbers a line the other does not
#   one fails       one tool lists the function, the other does not
# and, apart, the functions whose last numbered line differs, which is
# where a listing that ran on into callers' lines would show.
import argparse
import concurrent.futures
import json
import lzma
import os
import random
import re
import subprocess
import sys
from pathlib import Path

NUMBERED = re.compile(r"^\s+(-?\d+)  ")


def run(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=300,
                           stdin=subprocess.DEVNULL)
        return {"rc": p.returncode, "out": p.stdout, "err": p.stderr}
    except subprocess.TimeoutExpired:
        return {"rc": 124, "out": "", "err": "timed out"}


def numbered(listing):
    """The numbered lines of a listing, and whether it had a header."""
    lines = listing.splitlines()
    if not lines or not lines[0].startswith("<"):
        return None
    return [int(m.group(1)) for m in map(NUMBERED.match, lines[1:]) if m]


def traceable_names(path):
    with lzma.open(path, "rt") as f:
        names = {words[0].split(".")[0] for words in (line.split() for line in f) if len(words) == 1}
    return sorted(names)


def build_id(vmlinux):
    out = subprocess.run(["readelf", "-n", vmlinux], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--source", required=True, help="the kernel's source tree (-s)")
    ap.add_argument("--kprobectl", required=True)
    ap.add_argument("--traceable", required=True)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--seed", type=int, default=71)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--perf", default="perf")
    ap.add_argument("--count-with", help="the kprobectl that counts a function's copies (default --kprobectl)")
    ap.add_argument("funcs", nargs="*")
    opts = ap.parse_args()

    names = opts.funcs or traceable_names(opts.traceable)
    if not opts.funcs and 0 < opts.sample < len(names):
        names = sorted(random.Random(opts.seed).sample(names, opts.sample))
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kprobectl-parity" / \
        build_id(opts.vmlinux) / "perf-L"
    cache.mkdir(parents=True, exist_ok=True)

    def perf(func):
        path = cache / f"{func}.json"
        if path.exists():
            return json.loads(path.read_text())
        result = run([opts.perf, "probe", "-k", opts.vmlinux, "-s", opts.source, "-L", func])
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(result))
        tmp.rename(path)
        return result

    def kprobectl(func):
        return run([opts.kprobectl, "-k", opts.vmlinux, "-s", opts.source, "line", func])

    def copies(func):
        out = run([opts.count_with or opts.kprobectl, "-q", "-k", opts.vmlinux, "-D", func, "--max-probes", "0"])["out"]
        return sum(1 for line in out.splitlines() if line.startswith("p:"))

    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        answers = list(pool.map(lambda f: (f, perf(f), kprobectl(f), copies(f)), names))

    rows = {}
    last_differs = []
    for func, p, k, n in answers:
        group = "with inlined copies" if n > 1 else "one instance"
        pl, kl = numbered(p["out"]), numbered(k["out"])
        if pl is None and kl is None:
            row = "both fail"
        elif pl is None or kl is None:
            row = "one fails"
            print(f"# {func}: {'perf' if pl is None else 'kprobectl'} fails: "
                  f"{(p if pl is None else k)['err'].strip().splitlines()[:1]}")
        else:
            ps, ks = set(pl), set(kl)
            row = ("same" if ps == ks else "kprobectl more" if ps < ks else "perf more" if ks < ps
                   else "both differ")
            if row in ("perf more", "both differ"):
                print(f"# {func}: only perf numbers {sorted(ps - ks)}, only kprobectl {sorted(ks - ps)}")
            if pl and kl and max(pl) != max(kl):
                last_differs.append(f"{func} (perf {max(pl)}, kprobectl {max(kl)})")
        rows.setdefault(group, {}).setdefault(row, 0)
        rows[group][row] += 1

    keys = ["same", "kprobectl more", "perf more", "both differ", "one fails", "both fail"]
    print("| functions | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for group in sorted(rows):
        total = sum(rows[group].values())
        print(f"| {group} ({total}) | " + " | ".join(str(rows[group].get(k, 0)) for k in keys) + " |")
    print(f"last numbered line differs: {len(last_differs)}")
    for line in last_differs:
        print(f"#   {line}")


if __name__ == "__main__":
    sys.exit(main())
