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
# kprobectl's addresses where one fits. perf -V's places (@<FUNC+OFF>)
# count from the function's DWARF entry (its low_pc, perf's
# convert_to_trace_point), its -D targets and kprobectl's from the
# symbol; the two differ on arm64, by ftrace's patchable NOPs
# (-V vfs_read: @<vfs_read+0>; -D: vfs_read+8).
import argparse
import bisect
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

import parity_arch
import parity_classes as classes
import parity_dwarf

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


def perf_version(perf):
    """What `perf --version` says ("perf version 7.3.4"), or exits saying
    why the command cannot run."""
    p = run(perf + ["--version"], 60)
    said = p["stdout"].strip()
    if p["rc"] != 0 or not said.startswith("perf version "):
        sys.exit(f"bench/parity: --perf '{shlex.join(perf)}' does not run as perf: exit {p['rc']}, "
                 f"{(said or p['stderr'].strip())[:200]!r}")
    return said


def perf_answers(perf, version):
    """The directory, under a build-id's cache, of one perf's answers: the
    system's perf (the default) keeps 'perf', where the answers computed
    before --perf are; another perf's are apart, by its version
    ('perf-7.3.4'): perf 7.3's answers for a 7.3 image are not perf 6.1's."""
    return "perf" if perf == ["perf"] else "perf-" + version.split()[-1]


class Runner:
    """Runs one tool's command for a (kind, func); perf's answers are kept
    in the cache (they never change for a build-id and a perf), kprobectl's
    in the run's directory."""

    def __init__(self, opts, cache, rundir):
        self.opts, self.cache, self.rundir = opts, cache, rundir

    def path(self, tool, kind, func):
        base = self.cache / self.opts.perf_answers if tool == "perf" else self.rundir / "kprobectl"
        return base / kind / f"{func}.json"

    def argv(self, tool, kind, func):
        kp_words, perf_words = command_args(kind, func)
        if tool == "perf":
            return self.opts.perf + ["probe", "-k", self.opts.vmlinux] + perf_words
        return [self.opts.kprobectl, "-k", self.opts.vmlinux] + kp_words

    def job(self, tool, kind, func):
        path = self.path(tool, kind, func)
        result = run(self.argv(tool, kind, func), PERF_TIMEOUT if tool == "perf" else 120)
        write_json(path, result)
        return result

    def load(self, tool, kind, func):
        return json.loads(self.path(tool, kind, func).read_text())


def run_all(runner, jobs, funcs, tools, keep=False):
    """Every command, on `jobs` workers; perf's slow ones and kprobectl's
    fast ones interleaved so that both tools share the cores alike. An
    answer perf gave (or, with `keep`, kprobectl) is not asked again."""
    todo = [(tool, kind, func) for func in funcs for kind in KINDS for tool in tools]
    todo = [t for t in todo if not ((t[0] == "perf" or keep) and runner.path(*t).exists())]
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

def traceable_functions(path):
    """The image's traceable functions as available_filter_functions names
    them (module functions left out)."""
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt") as f:
        return {words[0] for words in (line.split() for line in f) if len(words) == 1}  # not "NAME [MODULE]"


def traceable_names(path):
    """The names a user would probe: the traceable functions with gcc's
    clone suffixes cut (foo.isra.0 is foo), each name once however many
    static functions share it."""
    return sorted({name.split(".")[0] for name in traceable_functions(path)})


def sample(names, size, seed):
    if size <= 0 or size >= len(names):
        return list(names)
    return sorted(random.Random(seed).sample(names, size))


# --- comparing -----------------------------------------------------------------


class Symbols:
    """The image's symbols (nm, once per build-id, kept in the cache): by
    name, and the functions by address."""

    def __init__(self, vmlinux, cache, arch):
        self.arch = arch
        path = cache / "nm-typed.json"
        if not path.exists():
            out = subprocess.run(["nm", vmlinux], capture_output=True, text=True, check=True).stdout
            rows = [(int(w[0], 16), w[1], w[2]) for w in (line.split() for line in out.splitlines()) if len(w) == 3]
            write_json(path, rows)
        rows = json.loads(path.read_text())
        self.table = defaultdict(list)
        for addr, _, name in rows:
            self.table[name].append(addr)
        self.functions = sorted((addr, name) for addr, kind, name in rows if kind in "tTwW")
        self.starts = [addr for addr, _ in self.functions]
        # gcc's clones by the name without their suffix (perf names
        # tasklet_action_common.constprop.0 tasklet_action_common).
        self.clones = defaultdict(list)
        for name, addrs in self.table.items():
            if "." in name:
                self.clones[name.split(".")[0]].extend(addrs)

    def resolve(self, target, entry=None):
        """(the addresses a definition's target can stand for, whether it
        named a clone without its suffix): SYM+OFF is one per symbol of
        that name, OFF from the symbol or, with `entry` (a symbol's address
        to its function's DWARF entry), from the function's entry; MOD:...
        and raw addresses are left alone."""
        sym, _, off = target.partition("+")
        if ":" in sym:
            return set(), False
        if sym.startswith("0x"):
            return {int(sym, 16)}, False
        stripped = sym not in self.table and sym in self.clones
        bases = self.clones[sym] if stripped else self.table.get(sym, [])
        if entry:
            # perf -V names a place by its DWARF function's name, which for
            # code linked with renamed symbols (arm64's nVHE hypervisor,
            # objcopy --prefix-symbols=__kvm_nvhe_) is another function's
            # symbol: stage2_unmap_walker+104 for __kvm_nvhe_stage2_unmap_walker+104.
            bases = bases + [a for prefix in self.arch.renamed_prefixes for a in self.table.get(prefix + sym, [])]
        return {(entry(a) if entry else a) + int(off or "0", 0) for a in bases}, stripped

    def unsuffixed(self, address, entry=None):
        """`address` as perf -V names a place in a clone whose base name
        has a symbol of its own (mbox_controller_unregister.part.0+94 as
        mbox_controller_unregister+94): one address for each clone symbol
        at that code (5.10's devlink_fmsg_bool_pair_put.part.0 and
        devlink_fmsg_u8_pair_put.part.0 are one function, which perf names
        by either); with `entry`, the offset counts from each function's
        DWARF entry."""
        i = bisect.bisect_right(self.starts, address) - 1
        start = self.starts[i] if i >= 0 else None
        entry = entry or (lambda a: a)
        out = []
        for at, name in self.functions[bisect.bisect_left(self.starts, start):i + 1] if i >= 0 else []:
            base = self.table.get(name.split(".")[0]) if "." in name else None
            if base and len(base) == 1:
                out.append(entry(base[0]) + address - entry(at))
        return out

    def function_at(self, address):
        i = bisect.bisect_right(self.starts, address) - 1
        return self.functions[i][1] if i >= 0 else "?"

    def start(self, address):
        """The address of the function symbol that holds `address`."""
        i = bisect.bisect_right(self.starts, address) - 1
        return self.starts[i] if i >= 0 else address

    def where(self, address):
        i = bisect.bisect_right(self.starts, address) - 1
        return f"{self.functions[i][1]}+{address - self.starts[i]}" if i >= 0 else hex(address)

    def blacklisted(self, func):
        """On the kprobe blacklist as the image says: NOKPROBE_SYMBOL, or in
        a section the kernel refuses whole."""
        if f"_kbl_addr_{func}" in self.table:
            return True
        for section in self.arch.no_probe_sections:
            lo, hi = self.table.get(f"__{section}_text_start"), self.table.get(f"__{section}_text_end")
            if lo and hi and any(lo[0] <= a < hi[0] for a in self.table.get(func, [])):
                return True
        return False


DEF = re.compile(r"^[pr][0-9]*:\S+ (\S+)(.*)$")


def definitions(stdout, symbols, notes, entry=None):
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
        addrs, stripped = symbols.resolve(m.group(1), entry)
        if stripped:
            notes.add("perf names a clone without its suffix")
        out.append((addrs, named, tuple(a[2] for a in args)))
    return out


VARS_AT = re.compile(r"^\s*@<([^>]+)>")


def var_blocks(stdout, symbols, notes, entry=None):
    """[(candidate addresses, (names...))] of vars / perf -V output (with
    `entry`, perf's: offsets from the function's DWARF entry)."""
    out = []
    for line in stdout.splitlines():
        m = VARS_AT.match(line)
        if m:
            addrs, stripped = symbols.resolve(m.group(1), entry)
            if stripped:
                notes.add("perf names a clone without its suffix")
            out.append([addrs, []])
        elif out and line.startswith("\t\t") and "\t" in line.strip():  # not "(No matched variables)"
            # "TYPE\tNAME", and for kprobectl "\t(in pieces: ...)" after a struct in pieces
            out[-1][1].append(line.strip().split("\t")[1].split()[-1])
    return [(a, tuple(sorted(set(v))), ()) for a, v in out]


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


class Outcome:
    """One row: its verdict, the classes that explain its differences, what
    nothing explains, and notes on a "same" row."""

    def __init__(self, verdict, detail=""):
        self.verdict, self.detail = verdict, detail
        self.classes, self.unexplained, self.notes = set(), [], set()

    def explain(self, key, what):
        if key:
            self.classes.add(key)
        else:
            self.unexplained.append(what)


class Context:
    def __init__(self, symbols, dwarf, traceable, blacklist):
        self.symbols, self.dwarf, self.traceable, self.blacklist = symbols, dwarf, traceable, blacklist
        self.arch = dwarf.arch
        self.probed_cache = {}

    def probed(self, func, address):
        key = (func, address)
        if key not in self.probed_cache:
            self.probed_cache[key] = classes.Probed(self.dwarf, func, address)
        return self.probed_cache[key]


def compare_definitions(out, ctx, func, at, ours, theirs, perf_stderr):
    """kprobectl's fetches `ours` at `at[0]` and perf's `theirs` at `at[1]`."""
    first = {}
    for name, fetch in theirs:
        if name not in first:
            first[name] = fetch
        elif first[name] == fetch:
            out.explain(classes.perf_repeat(ctx.probed(func, at[1]), name), f"perf repeats {name}={fetch}")
        else:
            out.explain(None, f"perf fetches {name} twice, as {first[name]} and {fetch}")
    mine = dict(ours)
    where = ctx.symbols.where(at[0])
    for name in mine.keys() - first.keys():
        if moved_away(ctx, func, at[::-1], name):
            out.explain("empty-entry", "")
            continue
        out.explain(classes.kp_only_fetch(ctx.probed(func, at[0]), name, mine[name]),
                    f"at {where}: only kprobectl fetches {name}={mine[name]}")
    for name in first.keys() - mine.keys():
        if moved_away(ctx, func, at, name):
            out.explain("empty-entry", "")
            continue
        if classes.members_for_whole(ctx.probed(func, at[0]), name, mine):
            out.explain("members", "")
            continue
        out.explain(classes.perf_only(ctx.probed(func, at[1]), name, first[name], perf_stderr),
                    f"at {where}: only perf fetches {name}={first[name]}")
    for name in mine.keys() & first.keys():
        if mine[name] != first[name] and moved_fetch(ctx, func, at, name, mine[name], first[name]):
            out.explain("empty-entry", "")
            continue
        if mine[name] != first[name]:
            out.explain(classes.both_fetch(ctx.probed(func, at[0]), name, mine[name], first[name], perf_stderr),
                        f"at {where}: {name} is {mine[name]} for kprobectl, {first[name]} for perf")


def compare_vars(out, ctx, func, at, ours, theirs):
    where = ctx.symbols.where(at[0])
    for name in sorted(set(ours) - set(theirs)):
        if moved_away(ctx, func, at[::-1], name):
            out.explain("empty-entry", "")
            continue
        out.explain(classes.kp_only_var(ctx.probed(func, at[0]), name), f"at {where}: only kprobectl lists {name}")
    for name in sorted(set(theirs) - set(ours)):
        if moved_away(ctx, func, at, name):
            out.explain("empty-entry", "")
            continue
        out.explain(classes.perf_only(ctx.probed(func, at[1]), name, None, ""), f"at {where}: only perf lists {name}")


def moved_away(ctx, func, at, name):
    """perf probes an empty-entry copy at its entry_pc, kprobectl at its
    first instruction: a variable located at the second address of `at`
    (kprobectl's, perf's) only; reversed, at kprobectl's only (a lexical
    block of the copy whose range at perf's address is empty too)."""
    if at[0] == at[1]:
        return False
    there, here = ctx.probed(func, at[1]), ctx.probed(func, at[0])
    return bool(there.location(name)) and not here.location(name)


def moved_fetch(ctx, func, at, name, ours, theirs):
    """An empty-entry pair (kprobectl's address, perf's) where each tool
    fetches `name` from its own address's location: ipv6_chk_addr_and_flags
    strict, %cx at perf's entry_pc ipv6_chk_addr+8, %r8 at +13 after
    'mov %ecx,%r8d; xor %ecx,%ecx'."""
    if at[0] == at[1]:
        return False
    here, there = ctx.probed(func, at[0]).location(name), ctx.probed(func, at[1]).location(name)
    return bool(here and there) and classes.perf_fetch(ctx.arch, here) == ours and classes.perf_fetch(ctx.arch, there) == theirs


def match_addresses(out, ctx, func, ours, theirs, entry):
    """The pairs (kprobectl's address, perf's) to compare; the addresses
    only one tool probes are classified here."""
    only_kp, only_perf = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    pairs = [(a, a) for a in sorted(set(ours) & set(theirs))]
    for p in list(only_perf):
        k = next((k for k in only_kp if classes.empty_entry(ctx.dwarf, func, p, k)), None)
        if k is not None:
            out.explain(classes.entry_class(k, p), "")
            pairs.append((k, p))
            only_kp.remove(k)
            only_perf.remove(p)
    for k in list(only_kp):
        p = next((p for p in ctx.symbols.unsuffixed(k, entry) if p in only_perf), None)
        if p is not None:
            out.notes.add("perf names a clone without its suffix")
            theirs[k] = theirs.pop(p)  # the same place: its DWARF is k's
            pairs.append((k, k))
            only_kp.remove(k)
            only_perf.remove(p)
    for p in list(only_perf):
        k = next((k for k in only_kp if classes.init_percpu(ctx.symbols.table, k, p)), None)
        if k is not None:
            out.explain("init-percpu", "")
            only_kp.remove(k)
            only_perf.remove(p)
    for p in only_perf:
        fn = ctx.symbols.function_at(p)
        if ".part." in fn and fn.split(".")[0] == func.split(".")[0] and p == ctx.dwarf.entry_of(ctx.symbols.start(p)):
            out.explain("split-part", "")
            continue
        if ctx.blacklist and fn in ctx.blacklist:
            out.explain("blacklist-copy", "")
            continue
        out.explain("notrace" if ctx.traceable and fn not in ctx.traceable else None,
                    f"only perf probes {ctx.symbols.where(p)}")
    for k in only_kp:
        # Copies whose entry_pc is one address are one definition of
        # perf's (btf_type_str's two in 6.12's btf_check_type_match, both
        # at +1125), that address then paired already: each copy kprobectl
        # probes at its first instruction instead is one of those.
        p = next((p for p in sorted(theirs) if classes.empty_entry(ctx.dwarf, func, p, k)), None)
        if p is not None:
            out.explain(classes.entry_class(k, p), "")
            continue
        out.explain("redundant-copy" if classes.redundant_copy(ctx.dwarf, func, k) else None,
                    f"only kprobectl probes {ctx.symbols.where(k)}")
    return pairs


def refused_by_kernel(stdout, ctx):
    """Whether a target of perf's definitions is in a function the kernel's
    kprobe blacklist names (by name: its addresses are KASLR's): the kernel
    refuses that definition, and perf's command fails there (pci_serr_error:
    perf also offers pci_serr_error.part.0, which the kernel would take)."""
    targets = [m.group(1) for m in (DEF.match(line.strip()) for line in stdout.splitlines()) if m]
    for target in targets:
        addrs, _ = ctx.symbols.resolve(target)
        if addrs and all(ctx.symbols.function_at(a) in ctx.blacklist for a in addrs):
            return True
    return False


def kernel_blacklist(path):
    """The names debugfs kprobes/blacklist lists ("START-END\tNAME")."""
    if not path:
        return set()
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt") as f:
        return {words[1] for words in (line.split() for line in f) if len(words) == 2}


def weak_at_nops(ctx, address, ours):
    """perf's SYM+0 for an overridden weak definition on an architecture
    with ftrace's patchable NOPs (arm64): the first NOP of the function that
    runs, whose entry after them (SYM+8) kprobectl probes too (6.12's
    arch_bpf_trampoline_size: perf +8 and +0, both fire on each call)."""
    return bool(ctx.arch.patchable_entry) and address not in ours and ctx.symbols.start(address) == address and \
        ctx.dwarf.entry_of(address) != address and ctx.dwarf.entry_of(address) in ours


def elsewhere(ctx, func, stdout):
    """Each place perf -V lists is in a function symbol other than `func`'s
    own, which the image has."""
    places = [a for cands, _, _ in var_blocks(stdout, ctx.symbols, set()) for a in cands]
    return bool(places) and func in ctx.symbols.table and \
        all(ctx.symbols.function_at(a) != func for a in places)


def compare(kind, func, kp, perf, ctx):
    ok_kp, ok_perf = kp["rc"] == 0, perf["rc"] == 0
    if not ok_kp and not ok_perf:
        return Outcome("both fail")
    if ok_kp and not ok_perf:
        lines = perf["stderr"].strip().splitlines()
        return Outcome("only kprobectl succeeds", lines[-1] if lines else "")
    if ok_perf and not ok_kp:
        first = kp["stderr"].strip().splitlines()[0] if kp["stderr"].strip() else ""
        if kind != "vars" and "kprobe blacklist" in first and refused_by_kernel(perf["stdout"], ctx):
            # perf wrote definitions the kernel refuses (EINVAL): it fails
            # there too, where kprobectl says why before writing.
            return Outcome("both fail", "perf's definitions are on the kernel's kprobe blacklist")
        out = Outcome("only perf succeeds", first)
        if kind == "vars" and first.startswith(f"kprobectl: error: no function '{func}' in the debuginfo") and \
                elsewhere(ctx, func, perf["stdout"]):
            out.explain("other-function", "")
            return out
        out.explain("blacklist" if "blacklist" in first and ctx.symbols.blacklisted(func) else None, first)
        return out
    out = Outcome("same")
    parse = var_blocks if kind == "vars" else definitions
    # perf -V counts from the function's DWARF entry, its -D and kprobectl
    # from the symbol.
    entry = ctx.dwarf.entry_of if kind == "vars" and ctx.arch.patchable_entry else None
    ours = assign(parse(kp["stdout"], ctx.symbols, set()))
    if ours is None:
        out.verdict = "different"
        out.explain(None, "kprobectl's targets do not resolve")
        return out
    theirs = {}
    for cands, value, types in parse(perf["stdout"], ctx.symbols, out.notes, entry):
        hit = sorted(c for c in cands if c in ours and c not in theirs) or sorted(c for c in cands if c not in theirs)
        if not hit and len(cands) == 1 and "no symbol holds its code" in kp["stderr"]:
            # One symbol of the name, already probed: perf wrote SYM+0
            # for a second definition (a weak one overridden), which the
            # kernel resolves to the first.
            out.explain("weak-twice", "")
            continue
        if not hit and len(cands) == 1 and f"left out {func.split('.')[0]}.part." in kp["stderr"]:
            # perf -V names the split-off part FUNC.part.N as FUNC+0, before
            # or after FUNC's own +0 (7.3's vfs_statfs: the part's block,
            # buf alone, first; 5.10's acpi_ns_internalize_name: the part's,
            # with its local info, first): of the two, the one that differs
            # more from kprobectl's is the part's.
            (c,) = cands
            if c in ours and c in theirs and \
                    len(set(value) ^ set(ours[c][0])) < len(set(theirs[c][0]) ^ set(ours[c][0])):
                theirs[c] = (value, types)
            out.explain("split-part", "")
            continue
        if hit and len(cands) == 1 and "no symbol holds its code" in kp["stderr"] and weak_at_nops(ctx, hit[0], ours):
            out.explain("weak-twice", "")
            continue
        if not hit:
            out.verdict = "different"
            out.explain(None, "perf's targets do not resolve")
            return out
        if entry and ctx.arch.renamed_prefixes and ctx.symbols.function_at(hit[0]).startswith(ctx.arch.renamed_prefixes):
            out.notes.add("perf -V names a renamed copy by its DWARF name")
        theirs[hit[0]] = (value, types)
    for k, p in match_addresses(out, ctx, func, ours, theirs, entry):
        if kind == "vars":
            compare_vars(out, ctx, func, (k, p), ours[k][0], theirs[p][0])
        else:
            compare_definitions(out, ctx, func, (k, p), ours[k][0], theirs[p][0], perf["stderr"])
        if ours[k][1] != theirs[p][1] and sorted(ours[k][0]) == sorted(theirs[p][0]):
            out.notes.add("types differ")
    if out.classes or out.unexplained:
        out.verdict = "different"
    return out


def percentile(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


VERDICTS = ["same", "only kprobectl succeeds", "only perf succeeds", "both fail", "different"]
LABELS = {"params": "-D 'FUNC $params'", "retval": "-D 'FUNC%return $retval'", "vars": "vars FUNC / -V FUNC"}


def table(rows, funcs, opts):
    lines = [f"bench/parity: {len(funcs)} functions (seed {opts.seed}) of {opts.vmlinux}",
             f"bench/parity: {opts.perf_version} ({shlex.join(opts.perf)})", ""]
    lines.append(f"{'command':<26}" + "".join(f"{v:>25}" for v in VERDICTS) + f"{'unexplained':>13}")
    for kind in KINDS:
        unexplained = sum(1 for v in ("different", "only perf succeeds") for o in rows[kind][v] if o[1].unexplained)
        lines.append(f"{LABELS[kind]:<26}" + "".join(f"{len(rows[kind][v]):>25}" for v in VERDICTS)
                     + f"{unexplained:>13}")
    lines += ["", "rows of \"different\" and \"only perf succeeds\" by class (a row can have several):",
              f"  {'class':<16}{'params':>8}{'retval':>8}{'vars':>8}  what"]
    for c in classes.CLASSES + [classes.Class("unexplained", "differences no class explains", "")]:
        counts = [sum(1 for v in ("different", "only perf succeeds") for o in rows[kind][v]
                      if (c.key in o[1].classes) or (c.key == "unexplained" and o[1].unexplained)) for kind in KINDS]
        lines.append(f"  {c.key:<16}" + "".join(f"{n:>8}" for n in counts) + f"  {c.title}")
    lines += ["", "notes on \"same\" rows:"]
    notes = defaultdict(int)
    for kind in KINDS:
        for _, o in rows[kind]["same"]:
            for note in o.notes:
                notes[(kind, note)] += 1
    lines += [f"  {kind}: {note}: {n}" for (kind, note), n in sorted(notes.items())]
    return lines


def report(opts, cache, runner, funcs):
    arch = parity_arch.of_image(opts.vmlinux)
    symbols = Symbols(opts.vmlinux, cache, arch)
    dwarf = parity_dwarf.Dwarf(opts.vmlinux, cache, arch)
    if not dwarf.tool:
        print("bench/parity: no llvm-dwarfdump: the classes that read the DWARF cannot explain", file=sys.stderr)
        if arch.patchable_entry:
            sys.exit(f"bench/parity: perf -V's places on {arch.name} count from the DWARF's entries: "
                     "llvm-dwarfdump is needed")
    ctx = Context(symbols, dwarf, traceable_functions(opts.traceable), kernel_blacklist(opts.blacklist))
    rows = defaultdict(lambda: defaultdict(list))
    times = defaultdict(list)
    for func in funcs:
        for kind in KINDS:
            kp, perf = runner.load("kprobectl", kind, func), runner.load("perf", kind, func)
            times[("kprobectl", kind)].append(kp["seconds"])
            times[("perf", kind)].append(perf["seconds"])
            outcome = compare(kind, func, kp, perf, ctx)
            rows[kind][outcome.verdict].append((func, outcome))
    lines = table(rows, funcs, opts)
    lines += ["", f"{'time per command (s)':<28}{'median':>10}{'p99':>10}{'worst':>10}"]
    for tool in ("kprobectl", "perf"):
        for kind in KINDS:
            t = times[(tool, kind)]
            lines.append(f"{tool + ' ' + kind:<28}{percentile(t, 0.5):>10.3f}{percentile(t, 0.99):>10.3f}{max(t):>10.3f}")
    for kind in KINDS:
        for verdict in ("different", "only perf succeeds"):
            if rows[kind][verdict]:
                lines += ["", f"{kind}: {verdict}:"]
                for func, o in rows[kind][verdict]:
                    what = ", ".join(sorted(o.classes)) or "-"
                    lines.append(f"  {func}: {what}" + "".join(f"\n      UNEXPLAINED {u}" for u in o.unexplained))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if opts.report:
        Path(opts.report).write_text(text)
    bad = sum(1 for k in KINDS for v in ("different", "only perf succeeds") for _, o in rows[k][v] if o.unexplained)
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
    ap.add_argument("--perf", default="perf", help="the perf command (words split as the shell splits them)")
    ap.add_argument("--traceable", required=True)
    ap.add_argument("--blacklist", help="the kernel's debugfs kprobes/blacklist (perf's definitions there are refused)")
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=61)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                                   "kprobectl-parity"))
    ap.add_argument("--report")
    ap.add_argument("--perf-only", action="store_true")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep kprobectl's answers in DIR, and compare those already there again (no new runs)")
    ap.add_argument("funcs", nargs="*")
    opts = ap.parse_args()

    opts.perf = shlex.split(opts.perf)
    opts.perf_version = perf_version(opts.perf)
    opts.perf_answers = perf_answers(opts.perf, opts.perf_version)
    bid = build_id(opts.vmlinux)
    cache = Path(opts.cache) / bid
    funcs = opts.funcs or sample(traceable_names(opts.traceable), opts.sample, opts.seed)
    with tempfile.TemporaryDirectory(prefix="kprobectl-parity.") as tmp:
        runner = Runner(opts, cache, Path(opts.keep or tmp))
        if opts.perf_only:
            run_all(runner, opts.jobs, funcs, ["perf"])
            return 0
        # kprobectl's index is built once, before the timed commands: they
        # are compared warm, as a user's second command runs.
        run([opts.kprobectl, "-k", opts.vmlinux, "-D", "vfs_read"], 900)
        run_all(runner, opts.jobs, funcs, ["perf", "kprobectl"], keep=bool(opts.keep))
        return report(opts, cache, runner, funcs)


if __name__ == "__main__":
    sys.exit(main())
