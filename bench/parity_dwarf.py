# SPDX-License-Identifier: GPL-2.0-or-later
#
# The DWARF facts bench/parity's classes check, read with llvm-dwarfdump
# (not with kprobectl, whose answers are under test, nor with perf): the
# scopes that hold an address (the out-of-line function, its lexical blocks
# and inlined copies), the variables of each and their locations there.
# Asked only for the rows where the tools disagree; each answer is kept in
# the cache beside perf's (it never changes for a build-id).
#
# What it reads is llvm-dwarfdump's text: a DIE is "0xOFFSET:<indent>TAG"
# (two spaces of indent per level), an attribute "DW_AT_x\t(VALUE" with a
# location list or ranges continued on lines of their own ("[lo, hi): ops").
import json
import re
import shutil
import subprocess

DIE = re.compile(r"^0x([0-9a-f]+):(\s+)(DW_TAG_\w+|NULL)")
ATTR = re.compile(r"^\s+(DW_AT_\w+)\t\((.*)$")
RANGE = re.compile(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)(?:: (.*))?")
QUOTED = re.compile(r'"([^"]*)"')
SCOPE_TAGS = ("DW_TAG_subprogram", "DW_TAG_lexical_block", "DW_TAG_inlined_subroutine")
VAR_TAGS = ("DW_TAG_formal_parameter", "DW_TAG_variable")


def dwarfdump_tool():
    for name in ("llvm-dwarfdump-19", "llvm-dwarfdump-14", "llvm-dwarfdump"):
        if shutil.which(name):
            return name
    return None


def parse(text):
    """DIEs of a dump in order, each {off, tag, depth, attrs}; children
    follow their parent at depth + 1."""
    dies, attr = [], None
    for line in text.splitlines():
        m = DIE.match(line)
        if m:
            attr = None
            if m.group(3) != "NULL":
                dies.append({"off": int(m.group(1), 16), "tag": m.group(3), "depth": (len(m.group(2)) - 1) // 2,
                             "attrs": {}})
            continue
        m = ATTR.match(line)
        if m and dies:
            attr = m.group(1)
            dies[-1]["attrs"][attr] = m.group(2)
        elif attr and line.strip():
            dies[-1]["attrs"][attr] += "\n" + line.strip()
        else:
            attr = None
    for die in dies:  # the value's closing parenthesis
        for key, value in die["attrs"].items():
            die["attrs"][key] = value[:-1] if value.endswith(")") else value
    return dies


class Die:
    def __init__(self, raw, children=()):
        self.off, self.tag, self.attrs = raw["off"], raw["tag"], raw["attrs"]
        self.children = list(children)

    @property
    def name(self):
        for key in ("DW_AT_name", "DW_AT_abstract_origin", "DW_AT_specification"):
            if key in self.attrs:
                m = QUOTED.search(self.attrs[key])
                return m.group(1) if m else self.attrs[key].strip('"')
        return ""

    def number(self, key):
        value = self.attrs.get(key)
        return int(value.split()[0], 0) if value else None

    def ranges(self):
        """[(lo, hi)] of the DIE's code, empty ranges included."""
        if "DW_AT_low_pc" in self.attrs and "DW_AT_high_pc" in self.attrs:
            return [(self.number("DW_AT_low_pc"), self.number("DW_AT_high_pc"))]
        return [(int(a, 16), int(b, 16)) for a, b, _ in RANGE.findall(self.attrs.get("DW_AT_ranges", ""))]

    def has_pc(self, address):
        return any(lo <= address < hi for lo, hi in self.ranges())

    def location_at(self, address):
        """The location expression text in force at `address` (an entry
        that starts there first, as a probe fires at its first view; else
        one that covers it), "" for none; None without DW_AT_location."""
        text = self.attrs.get("DW_AT_location")
        if text is None:
            return None
        entries = RANGE.findall(text)
        if not entries:
            return text.strip()
        spans = [(int(a, 16), int(b, 16), ops) for a, b, ops in entries]
        for lo, hi, ops in spans:
            if lo == address and hi >= lo:
                return ops
        for lo, hi, ops in spans:
            if lo <= address < hi:
                return ops
        return ""

    def variables(self):
        return [c for c in self.children if c.tag in VAR_TAGS]

    def scopes(self):
        return [c for c in self.children if c.tag in SCOPE_TAGS]


def tree(dies):
    """The root Die of a parsed dump, children attached."""
    stack, root = [], None
    for raw in dies:
        die = Die(raw)
        while stack and stack[-1][0] >= raw["depth"]:
            stack.pop()
        if stack:
            stack[-1][1].children.append(die)
        else:
            root = die
        stack.append((raw["depth"], die))
    return root


class Dwarf:
    """The DWARF of `vmlinux` as llvm-dwarfdump prints it, per function."""

    def __init__(self, vmlinux, cache, arch):
        self.vmlinux, self.tool, self.arch = vmlinux, dwarfdump_tool(), arch
        self.cache = cache / "dwarf"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.lookups_path = self.cache / "lookups.json"
        self.lookups = json.loads(self.lookups_path.read_text()) if self.lookups_path.exists() else {}
        self.trees = {}

    def dump(self, args):
        return subprocess.run([self.tool] + args + [self.vmlinux], capture_output=True, text=True,
                              errors="replace").stdout

    def outer_function(self, address):
        """The DIE offset of the out-of-line function whose code holds
        `address`, or None."""
        key = hex(address)
        if key not in self.lookups:
            dies = parse(self.dump([f"--lookup={key}", "-p"]))
            subs = [d["off"] for d in dies if d["tag"] == "DW_TAG_subprogram"]
            self.lookups[key] = subs[0] if subs else None
            tmp = self.lookups_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.lookups))
            tmp.rename(self.lookups_path)
        return self.lookups[key]

    def entry_of(self, symbol):
        """The DWARF's entry (low_pc) of the function whose symbol is at
        `symbol`: past ftrace's patchable NOPs when they lie outside every
        function's code and the code after them is a function's (arm64's
        traced functions), else the symbol (x86-64's; arm64's notrace
        functions, which have no NOPs)."""
        skip = self.arch.patchable_entry
        if not skip or not self.tool or self.outer_function(symbol) is not None:
            return symbol
        return symbol + skip if self.outer_function(symbol + skip) is not None else symbol

    def function(self, offset):
        """The out-of-line function at `offset` with all its DIEs."""
        if offset not in self.trees:
            path = self.cache / f"{offset:x}.json"
            if not path.exists():
                dies = parse(self.dump([f"--debug-info={offset:#x}", "-c"]))
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(dies))
                tmp.rename(path)
            self.trees[offset] = tree(json.loads(path.read_text()))
        return self.trees[offset]

    def die(self, offset):
        """One DIE alone (an abstract origin, a type)."""
        path = self.cache / f"die-{offset:x}.json"
        if not path.exists():
            dies = parse(self.dump([f"--debug-info={offset:#x}"]))
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(dies[:1]))
            tmp.rename(path)
        dies = json.loads(path.read_text())
        return Die(dies[0]) if dies else None

    def chain(self, address):
        """The scopes that hold `address`, outermost first: the out-of-line
        function, then lexical blocks and inlined copies."""
        offset = self.outer_function(address)
        if offset is None:
            return []
        scope = self.function(offset)
        out = [scope]
        while True:
            inner = [s for s in scope.scopes() if s.has_pc(address)]
            if not inner:
                return out
            scope = inner[0]
            out.append(scope)
