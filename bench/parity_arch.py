# SPDX-License-Identifier: GPL-2.0-or-later
#
# What differs between the architectures of the images bench/parity reads,
# chosen by the image's ELF machine (as perf chooses its register names,
# and as kprobectl's src/arch/ does): the kernel's names of the DWARF
# registers, ftrace's patchable entry (bytes between a function's symbol
# and its DWARF low_pc), the sections the kprobe blacklist refuses whole and
# the prefixes of symbols renamed at link time.
import re
import subprocess
from collections import namedtuple

Arch = namedtuple("Arch", "name patchable_entry no_probe_sections renamed_prefixes register")


def _x86_64_register(number, llvm_name):
    """perf's name (arch/x86/util/dwarf-regs.c) of the register llvm-dwarfdump
    calls `llvm_name` (RDI: di; R8: r8)."""
    del number
    reg = llvm_name.lower()
    return {"rax": "ax", "rbx": "bx", "rcx": "cx", "rdx": "dx", "rsi": "si", "rdi": "di", "rbp": "bp",
            "rsp": "sp"}.get(reg, reg)


def _arm64_register(number, llvm_name):
    """perf's name (arch/arm64/util/dwarf-regs.c) of DWARF register `number`:
    x0..x29, lr (30), sp (31); llvm-dwarfdump prints W0..W30 and WSP, the
    32-bit names, whatever the width. The vector registers (64..95) have no
    kernel name."""
    del llvm_name
    if 0 <= number <= 29:
        return f"x{number}"
    return {30: "lr", 31: "sp"}.get(number)


ARCHES = {
    # arch/x86/kernel/kprobes/core.c and kernel/kprobes.c: .kprobes.text,
    # .noinstr.text, .entry.text.
    "X86-64": Arch("x86_64", 0, ("kprobes", "noinstr", "entry"), (), _x86_64_register),
    # arch/arm64/kernel/probes/kprobes.c, arch_populate_kprobe_blacklist:
    # also .irqentry.text, .hyp.text and .hyp.idmap.text. Functions begin
    # with ftrace's two NOPs (-fpatchable-function-entry=2), outside the
    # DWARF's function: vfs_read's symbol is at ...0710, its DW_AT_low_pc
    # ...0718. The nVHE hypervisor's objects are linked with their symbols
    # renamed (arch/arm64/kvm/hyp/nvhe/Makefile: --prefix-symbols=__kvm_nvhe_),
    # their DWARF keeps the source's names.
    "AArch64": Arch("arm64", 8, ("kprobes", "noinstr", "entry", "irqentry", "hyp", "hyp_idmap"), ("__kvm_nvhe_",),
                    _arm64_register),
}


def of_image(path):
    """The Arch of an ELF file, by its machine as readelf names it."""
    out = subprocess.run(["readelf", "-h", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^\s*Machine:\s+(.*)$", out, re.M)
    machine = m.group(1).strip() if m else "?"
    for key, arch in ARCHES.items():
        if key in machine:
            return arch
    raise SystemExit(f"bench/parity: {path} is for {machine}, which bench/parity does not know")


def register_of(arch, ops):
    """The kernel's name of the register of a DW_OP_regN location (first
    piece), or None."""
    m = re.match(r"^DW_OP_reg(\d+) (\w+)", ops)
    return arch.register(int(m.group(1)), m.group(2)) if m else None


def breg_of(arch, op):
    """(register, offset) of a DW_OP_bregN operation, or None."""
    m = re.match(r"^DW_OP_breg(\d+) (\w+)([+-]\d+)", op)
    return (arch.register(int(m.group(1)), m.group(2)), int(m.group(3))) if m else None
