#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The work of bench/parity (which see for usage): samples traceable
# functions, runs kprobectl and perf on each, compares their answers by
# address, classifies the differences and prints the tables. Stdlib only.
#
# What is compared, per function and command kind:
#   params  -D 'FUNC $params'           definitions: the set of probed
#   retval  -D 'FUNC%return $retval'    addresses, and at each the fetched
#                                       locations (types compared apart)
#   vars    vars FUNC / perf -V FUNC    the set of addresses, and at each
#                                       the variables' names (types apart)
# Each target (SYM+OFF, _text+OFF) is turned into an address in the image
# through its symbol table (nm, once per build-id, cached). perf names a
# static function that several symbols share by its name alone (c_start+0
# three times): such a target stands for all of them, and is matched to
# kprobectl's addresses where one fits.
import argparse
import concurrent.futures
import json
import lzma
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

KINDS = ("params", "retval", "vars")
PERF_TIMEOUT = 300


def command_args(kind, func):
    """The tool-neutral words of one command: kprobectl's and perf's."""
    if kind == "params":
        return ["-D", f"{func} $params"], ["-D", f"{func} $params"]
    if kind == "retval":
        return ["-D", f"{func}%return $retval"], ["-D", f"{func}%return $retval"]
    return ["vars", func], ["-V", func]


# --- running ---------------------------------------------------------------


def run(argv, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = 124, "", f"timed out after {timeout} s"
    return {"argv": argv, "rc": rc, "stdout": out, "stderr": err, "seconds": time.monotonic() - start}


def write_json(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data))
    tmp.rename(path)


class Runner:
    """Runs one tool's command for a (kind, func); perf's answers are kept
    in the cache (they never change for a build-id), kprobectl's in the
    run's directory."""

    def __init__(self, opts, cache, rundir):
        self.opts, self.cache, self.rundir = opts, cache, rundir

    def path(self, tool, kind, func):
        base = self.cache / "perf" if tool == "perf" else self.rundir / "kprobectl"
        return base / kind / f"{func}.json"

    def argv(self, tool, kind, func):
        kp_words, perf_words = command_args(kind, func)
        if tool == "perf":
            return [self.opts.perf, "probe", "-k", self.opts.vmlinux] + perf_words
        return [self.opts.kprobectl, "-k", self.opts.vmlinux] + kp_words

    def job(self, tool, kind, func):
        path = self.path(tool, kind, func)
        if tool == "perf" and path.exists():
            return None
        result = run(self.argv(tool, kind, func), PERF_TIMEOUT if tool == "perf" else 120)
        write_json(path, result)
        return result

    def load(self, tool, kind, func):
        return json.loads(self.path(tool, kind, func).read_text())


def run_all(runner, jobs, funcs, tools):
    """Every command, on `jobs` workers; perf's slow ones and kprobectl's
    fast ones interleaved so that both tools share the cores alike."""
    todo = [(tool, kind, func) for func in funcs for kind in KINDS for tool in tools]
    todo = [t for t in todo if not (t[0] == "perf" and runner.path(*t).exists())]
    total, done, started = len(todo), 0, time.monotonic()
    if not total:
        return
    tty = sys.stderr.isatty()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for _ in pool.map(lambda t: runner.job(*t), todo):
            done += 1
            if tty or done % 500 == 0 or done == total:
                eta = (time.monotonic() - started) / done * (total - done)
                print(f"\rbench/parity: {done}/{total} commands run, ~{eta / 60:.0f} min left ",
                      end="" if tty and done < total else "\n", file=sys.stderr, flush=True)


# --- the sample ----------------------------------------------------------------

def traceable_names(path):
    """The names a user would probe: the image's traceable functions, module
    functions left out, gcc's clone suffixes cut (foo.isra.0 is foo), each
    name once however many static functions share it."""
    opener = lzma.open if str(path).endswith(".xz") else open
    names = set()
    with opener(path, "rt") as f:
        for line in f:
            words = line.split()
            if not words or len(words) > 1:  # "NAME [MODULE]"
                continue
            names.add(words[0].split(".")[0])
    return sorted(names)


def sample(names, size, seed):
    if size <= 0 or size >= len(names):
        return list(names)
    return sorted(random.Random(seed).sample(names, size))


# --- main ----------------------------------------------------------------------


def build_id(vmlinux):
    out = subprocess.run(["readelf", "-n", vmlinux], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    if not m:
        sys.exit(f"bench/parity: {vmlinux} has no build-id")
    return m.group(1)


def main():
    ap = argparse.ArgumentParser(prog="bench/parity")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--kprobectl", required=True)
    ap.add_argument("--perf", default="perf")
    ap.add_argument("--traceable", required=True)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=61)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                                   "kprobectl-parity"))
    ap.add_argument("--report")
    ap.add_argument("--perf-only", action="store_true")
    ap.add_argument("funcs", nargs="*")
    opts = ap.parse_args()

    bid = build_id(opts.vmlinux)
    cache = Path(opts.cache) / bid
    funcs = opts.funcs or sample(traceable_names(opts.traceable), opts.sample, opts.seed)
    with tempfile.TemporaryDirectory(prefix="kprobectl-parity.") as tmp:
        runner = Runner(opts, cache, Path(tmp))
        if opts.perf_only:
            run_all(runner, opts.jobs, funcs, ["perf"])
            return 0
        run_all(runner, opts.jobs, funcs, ["perf", "kprobectl"])
        return report(opts, cache, runner, funcs)


if __name__ == "__main__":
    sys.exit(main())
