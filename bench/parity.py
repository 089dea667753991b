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


# --- comparing -----------------------------------------------------------------


class Symbols:
    """The image's symbols by name (nm, once per build-id, kept in the cache)."""

    def __init__(self, vmlinux, cache):
        path = cache / "nm.json"
        if not path.exists():
            out = subprocess.run(["nm", vmlinux], capture_output=True, text=True, check=True).stdout
            table = defaultdict(list)
            for line in out.splitlines():
                words = line.split()
                if len(words) == 3:
                    table[words[2]].append(int(words[0], 16))
            write_json(path, table)
        self.table = json.loads(path.read_text())

    def addresses(self, target):
        """The addresses a definition's target can stand for: SYM+OFF is one
        per symbol of that name; MOD:... and raw addresses are left alone."""
        sym, _, off = target.partition("+")
        if ":" in sym:
            return set()
        if sym.startswith("0x"):
            return {int(sym, 16)}
        return {a + int(off or "0", 0) for a in self.table.get(sym, [])}


DEF = re.compile(r"^[pr][0-9]*:\S+ (\S+)(.*)$")


def definitions(stdout, symbols):
    """[(candidate addresses, ((name, fetch), ...), (types...))] of -D output."""
    out = []
    for line in stdout.splitlines():
        m = DEF.match(line.strip())
        if not m:
            continue
        args = []
        for word in m.group(2).split():
            name, _, rest = word.rpartition("=") if "=" in word.split("(")[0] else ("", "", word)
            fetch, _, typ = rest.rpartition(":") if ":" in rest else (rest, "", "")
            args.append((name, fetch, typ))
        # An unnamed argument is named by the kernel after its fetch
        # ($retval -> retval); compare what is fetched, not how it is spelt.
        named = tuple((a[0] or a[1].lstrip("$"), a[1]) for a in args)
        out.append((symbols.addresses(m.group(1)), named, tuple(a[2] for a in args)))
    return out


VARS_AT = re.compile(r"^\s*@<([^>]+)>")


def var_blocks(stdout, symbols):
    """[(candidate addresses, (names...))] of vars / perf -V output."""
    out = []
    for line in stdout.splitlines():
        m = VARS_AT.match(line)
        if m:
            out.append([symbols.addresses(m.group(1)), []])
        elif out and line.startswith("\t\t"):
            out[-1][1].append(line.split()[-1])
    return [(a, tuple(sorted(v)), ()) for a, v in out]


def assign(entries):
    """Each entry's address: the only candidate, or (for a name several
    statics share) the first candidate no other entry took."""
    taken, result = set(), {}
    for cands, value, types in sorted(entries, key=lambda e: len(e[0])):
        free = sorted(c for c in cands if c not in taken) or sorted(cands)
        if not free:
            return None
        taken.add(free[0])
        result[free[0]] = (value, types)
    return result


def compare(kind, kp, perf, symbols):
    parse = var_blocks if kind == "vars" else definitions
    ok_kp, ok_perf = kp["rc"] == 0, perf["rc"] == 0
    if not ok_kp and not ok_perf:
        return "both fail", ""
    if ok_kp and not ok_perf:
        return "only kprobectl succeeds", perf["stderr"].strip().splitlines()[-1:] and perf["stderr"].strip().splitlines()[-1]
    if ok_perf and not ok_kp:
        return "only perf succeeds", kp["stderr"].strip().splitlines()[0] if kp["stderr"].strip() else ""
    a_entries, b_entries = parse(kp["stdout"], symbols), parse(perf["stdout"], symbols)
    # perf's candidates constrain ours: a name perf shares among statics is
    # matched to whichever of its addresses kprobectl probes.
    ours = assign(a_entries)
    if ours is None:
        return "different", "kprobectl's targets do not resolve"
    theirs = {}
    for cands, value, types in b_entries:
        hit = sorted(c for c in cands if c in ours and c not in theirs) or sorted(c for c in cands if c not in theirs)
        if not hit:
            return "different", "perf's targets do not resolve"
        theirs[hit[0]] = (value, types)
    if set(ours) != set(theirs):
        only_kp = sorted(set(ours) - set(theirs))
        only_perf = sorted(set(theirs) - set(ours))
        return "different", f"addresses: {len(only_kp)} only kprobectl, {len(only_perf)} only perf"
    notes = set()
    for addr in ours:
        a, b = ours[addr][0], theirs[addr][0]
        if a == b:
            continue
        # Explained classes (README, "Parity with perf"):
        deduped = tuple(dict.fromkeys(b))
        if deduped != b:
            notes.add("perf repeats a parameter")
            b = deduped
        if kind != "vars" and set(b) <= set(a) and all(f.startswith("\\") for _, f in set(a) - set(b)):
            notes.add("kprobectl also fetches constants (\\IMM) perf leaves out")
            continue
        if sorted(a) == sorted(b):
            continue
        return "different", f"at {addr:#x}: kprobectl {a} perf {b}"
    types = any(ours[a][1] != theirs[a][1] for a in ours)
    if types:
        notes.add("types differ")
    return "same", "; ".join(sorted(notes))


def percentile(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def report(opts, cache, runner, funcs):
    symbols = Symbols(opts.vmlinux, cache)
    rows = defaultdict(lambda: defaultdict(list))
    times = defaultdict(list)
    type_diffs = defaultdict(int)
    for func in funcs:
        for kind in KINDS:
            kp, perf = runner.load("kprobectl", kind, func), runner.load("perf", kind, func)
            times[("kprobectl", kind)].append(kp["seconds"])
            times[("perf", kind)].append(perf["seconds"])
            verdict, detail = compare(kind, kp, perf, symbols)
            rows[kind][verdict].append((func, detail))
            if verdict == "same":
                for note in filter(None, detail.split("; ")):
                    type_diffs[(kind, note)] += 1
    verdicts = ["same", "only kprobectl succeeds", "only perf succeeds", "both fail", "different"]
    lines = [f"bench/parity: {len(funcs)} functions (seed {opts.seed}) of {opts.vmlinux}", ""]
    lines.append(f"{'command':<28}" + "".join(f"{v:>25}" for v in verdicts))
    for kind in KINDS:
        label = {"params": "-D 'FUNC $params'", "retval": "-D 'FUNC%return $retval'", "vars": "vars FUNC / -V FUNC"}[kind]
        lines.append(f"{label:<28}" + "".join(f"{len(rows[kind][v]):>25}" for v in verdicts))
    lines.append("")
    lines.append("of \"same\", explained differences:")
    for (kind, note), count in sorted(type_diffs.items()):
        lines.append(f"  {kind}: {note}: {count}")
    lines.append("")
    lines.append(f"{'time per command (s)':<28}{'median':>10}{'p99':>10}{'worst':>10}")
    for tool in ("kprobectl", "perf"):
        for kind in KINDS:
            t = times[(tool, kind)]
            lines.append(f"{tool + ' ' + kind:<28}{percentile(t, 0.5):>10.3f}{percentile(t, 0.99):>10.3f}{max(t):>10.3f}")
    for kind in KINDS:
        for verdict in ("different", "only perf succeeds"):
            if rows[kind][verdict]:
                lines.append("")
                lines.append(f"{kind}: {verdict}:")
                for func, detail in rows[kind][verdict]:
                    lines.append(f"  {func}: {detail}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if opts.report:
        Path(opts.report).write_text(text)
    bad = sum(len(rows[k]["different"]) + len(rows[k]["only perf succeeds"]) for k in KINDS)
    return 1 if bad else 0


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
        # kprobectl's index is built once, before the timed commands: they
        # are compared warm, as a user's second command runs.
        run([opts.kprobectl, "-k", opts.vmlinux, "-D", "vfs_read"], 900)
        run_all(runner, opts.jobs, funcs, ["perf", "kprobectl"])
        return report(opts, cache, runner, funcs)


if __name__ == "__main__":
    sys.exit(main())
