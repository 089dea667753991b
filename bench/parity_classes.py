# SPDX-License-Identifier: GPL-2.0-or-later
#
# The named classes of bench/parity: each disagreement between kprobectl
# and perf (a probe address one has and the other not, a variable one
# fetches or lists and the other not, or fetches elsewhere) is explained by
# a class only when its test holds on the DWARF (parity_dwarf.py, read with
# llvm-dwarfdump), the symbol table or the kernel's lists; what no test
# explains is left "unexplained" for a person to look at. docs/parity.md
# gives each class's sentence and evidence.
import re
from collections import namedtuple

from parity_arch import breg_of, register_of

Class = namedtuple("Class", "key title explanation")

CLASSES = [
    Class("constant", "kprobectl fetches constants perf leaves out",
          "a parameter or local whose location at the probe is a constant (DW_OP_litN/DW_OP_constN with "
          "DW_OP_stack_value, DW_OP_implicit_value, DW_AT_const_value) is fetched by kprobectl as \\IMM and "
          "listed by vars; perf leaves it out: FSE_readNCount_bmi2 inlined at FSE_readNCount_body_default+84 "
          "has bmi2 = DW_OP_lit0 and hbSize = DW_OP_lit8, kprobectl bmi2=\\0 hbSize=\\8"),
    Class("stack-value", "perf dereferences a computed value",
          "where DWARF gives a value as a register plus an offset (DW_OP_bregN k or DW_OP_fbreg k, then "
          "DW_OP_stack_value: the value is the address, not what is stored there), perf reads memory at it; "
          "kprobectl cannot fetch such a value and leaves it out: __d_free head=+176(%di) where head is "
          "DW_OP_breg5 RDI+176, DW_OP_stack_value"),
    Class("addr-value", "perf reads a constant address as a symbol of the variable's name",
          "a pointer whose value is a link-time address (DW_OP_addr A, DW_OP_stack_value: a string literal) is "
          "fetched by perf as @NAME+0, memory at a symbol named like the parameter, which the kernel does not "
          "have: __dump_mmp_msg inlined in kmmpd, msg=@msg+0 where msg is DW_OP_addr 0xffffffff8231e760, "
          "DW_OP_stack_value and the image has no symbol msg"),
    Class("nested", "perf adds the variables of functions inlined at the probe",
          "perf's $params and -V take in the parameters and variables of copies of other functions inlined into "
          "the probed one that begin at the probe's address (at a later view: they have not begun when the probe "
          "fires), a parameter of the same name fetched again as the probed function's: _set_memory_wb at "
          "set_memory_wb+51, perf numpages addr numpages addr, the second pair change_page_attr_clear's, and -V "
          "lists its 'long unsigned int* addr'; kprobectl takes the probed function's only"),
    Class("wide-struct", "perf fetches a struct wider than a register as its first 8 bytes",
          "a struct wider than a register that kprobectl's $params does not take member by member (one of more "
          "than 16 bytes passed by value, a copy on the stack, DW_OP_fbreg k, whose members are fetched by "
          "name; or one in pieces none of which holds a whole member) is fetched by perf as its first 8 bytes, "
          "with the warning 'exceeds max-bitwidth. Cut down to 64 bits'; kprobectl leaves it out: "
          "rtc_tm_to_ktime's struct rtc_time tm (36 bytes), perf tm=+8(%sp), kprobectl tm.tm_year by name; on "
          "arm64 such a struct is passed by reference (AAPCS64), in memory at a register (DW_OP_bregN 0) which "
          "gcc gives for the whole function though the function copies the reference there only later: "
          "btf_snprintf_show's va_list args (32 bytes) is DW_OP_breg4 W4+0, and x4 is set by 'mov x4, x2' at "
          "+16; perf args=+0(%x4) at the entry, +8"),
    Class("members", "kprobectl fetches a struct's members, perf its first 8 bytes",
          "a struct the DWARF keeps in several places (DW_OP_piece: passed by value in two registers, or "
          "members in registers and stack slots), or a struct parameter of 9-16 bytes passed on the stack, is "
          "fetched by kprobectl's $params member by member, each from the place that holds it (VAR_MEMBER), "
          "and one in pieces listed by vars with them; perf reads the first piece (8 bytes) as the whole struct, "
          "with the warning 'exceeds max-bitwidth. Cut down to 64 bits', and lists nothing when that piece is "
          "empty: genregs_get, struct membuf to is DW_OP_reg1 RDX, DW_OP_piece 0x8, DW_OP_reg2 RCX, "
          "DW_OP_piece 0x8, perf to=%dx, kprobectl to_p=%dx to_left=%cx; do_ip_getsockopt's optlen on the "
          "stack, perf optlen=+8(%sp), kprobectl optlen_user=+8(%sp) optlen_is_kernel=+16(%sp):b1@0/8"),
    Class("first-op", "perf reads a location of several operations as its first",
          "for a location kprobectl cannot follow (arithmetic on two registers, a comparison: DWARF's "
          "expression evaluates to the value) perf takes the first operation and reads memory there; "
          "kprobectl leaves it out: cgroup_attach_unlock inlined at cgroup_update_dfl_csses+366, "
          "lock_threadgroup = DW_OP_breg7 RSP+16, DW_OP_breg14 R14+0, DW_OP_ne, DW_OP_stack_value (a bool), "
          "perf lock_threadgroup=+16(%sp)"),
    Class("later-location", "perf fetches a parameter where it is only later in the function",
          "a parameter with no location at a function's entry is fetched by perf from the first address after "
          "it where it has one (perf's scan past the fentry call), a place that can hold something else at the "
          "entry; kprobectl leaves it out: ZSTD_execSequenceEnd sequence=%dx, whose location list begins at "
          "+0x16"),
    Class("notrace", "perf probes inside functions the kernel refuses",
          "perf -k offers probes in inlined copies inside functions ftrace cannot trace (no __fentry__ call: "
          "the kernel's 'inline' is notrace), which kprobe_events refuses (within_notrace_func); kprobectl "
          "leaves them out saying so: __mpol_put in __do_sys_set_mempolicy_home_node, a function absent from "
          "available_filter_functions"),
    Class("blacklist", "perf probes functions on the kprobe blacklist",
          "perf -k offers probes on functions the kernel's kprobe blacklist refuses (NOKPROBE_SYMBOL, "
          ".kprobes.text, .noinstr.text, .entry.text); kprobectl refuses them with the reason: __die_body, "
          "whose _kbl_addr___die_body is in _kprobe_blacklist"),
    Class("empty-entry", "perf probes an inlined copy at an entry_pc where none of its code is",
          "for an inlined copy whose DW_AT_entry_pc lies in an empty range ([P, P)), perf probes P, an "
          "instruction of the caller's, kprobectl the copy's first instruction: ZSTD_decompressBegin in "
          "ZSTD_decompressBegin_usingDict, entry_pc +5 (push %r12) with range [+5, +5), code from +0x10"),
    Class("hoisted-entry", "kprobectl probes an inlined copy's code gcc placed before its entry_pc",
          "for an inlined copy whose DW_AT_entry_pc lies in an empty range and whose first code lies at a lower "
          "address (gcc scheduled it ahead of the call), perf probes the entry_pc, kprobectl the copy's first "
          "instruction; on a straight path both fire once a call, but that code can run where no call follows: "
          "6.12's btf_type_str inlined in btf_check_type_match, entry_pc +1125 (view 4, [+1125, +1125)), its "
          "only code [+659, +668) (the kind of t->info, which the code on the other path uses too) before the "
          "'jne +1125' to the branch that makes the call: kprobectl's +659 runs for every argument compared, "
          "perf's +1125 only where the call is made (read from the disassembly; not fired)"),
    Class("entry-value", "kprobectl reads a parameter's value at entry where the function begins",
          "a parameter located by DW_OP_entry_value(DW_OP_regN), DW_OP_stack_value (the register's value when "
          "the function was entered) is that register at the out-of-line function's first instruction (its "
          "DWARF entry; on arm64 after ftrace's NOPs, which leave the registers alone): kprobectl fetches and "
          "lists it there; perf does not evaluate DW_OP_entry_value ('Failed to find the location', -V lists "
          "nothing): arm64 6.12's vlan_dev_real_dev dev, DW_OP_entry_value(DW_OP_reg0 W0), DW_OP_stack_value, "
          "kprobectl dev=%x0 at +8"),
    Class("later-view", "perf fetches a parameter as it is after the function's first statements",
          "where a parameter's location list has an entry for the entry address's first view alone ([P, P): "
          "the value as the call passed it, when the probe fires) before one for later views of P (after "
          "statements that emit no code there, such as argc-- or erratum++), kprobectl fetches the first and "
          "perf the second, read as memory: copy_strings.isra.0 argc is DW_OP_reg5 RDI at [P, P), then "
          "DW_OP_breg5 RDI-1, DW_OP_stack_value; kprobectl argc=%di, perf argc=-1(%di), memory at argc-1"),
    Class("weak-twice", "perf probes the function that runs twice, for a weak definition another file overrides",
          "for a function with an overridden weak definition (its code and DWARF stay, its symbol does not), "
          "perf writes both as SYM+0, which the kernel resolves to the one that runs: two probes at one place, "
          "each call fires twice; kprobectl leaves the overridden one out, saying so: "
          "copy_from_kernel_nofault_allowed (mm/maccess.c's weak one, arch/x86/mm/maccess.c's that runs)"),
    Class("folded", "perf fetches no parameter of a copy that begins with an empty range",
          "an inlined copy that begins with an empty range, [P, P) (the call begins at P and emits no "
          "instruction there: all its code is its caller's, or the rest of it is elsewhere) is probed at P by "
          "both tools; its parameters located there for P's first view, when the probe fires, kprobectl "
          "fetches and lists, perf neither: "
          "css_next_descendant_pre(NULL, &cgrp->self) in cgroup_update_dfl_csses+161, root=%r14 pos=\\0"),
    Class("first-view", "kprobectl fetches a variable located at the probe's address for its views only",
          "a variable whose location list holds it at the probe's address P only in an entry [P, P) (gcc's "
          "views: the statements that begin at P, before P's instruction runs, when the probe fires; the "
          "registers are the same at every view of P) is fetched and listed by kprobectl from that entry; "
          "perf's look-up takes the entries that cover P, [lo, hi) with lo <= P < hi, and finds none: "
          "relay_buf_full inlined at relay_switch_subbuf+363, buf = DW_OP_reg3 RBX at [P, P), kprobectl buf=%bx"),
    Class("self-split", "perf reads a function's split-off part inlined back into it as a second copy",
          "gcc's function splitting can inline a function's own split-off part back into it: a copy of F "
          "nested in a copy of F, beginning at the same address (the issue's d_same_name+86 kind); kprobectl "
          "probes the outer copy once, perf reads both, so its $params repeat every parameter and -V adds the "
          "inner part's locals: xen_swiotlb_unmap_sg in xen_swiotlb_map_sg+131, perf hwdev=%r13 ... twice and "
          "-V's sg (the part's loop variable)"),
    Class("blacklist-copy", "perf probes inlined copies inside functions on the kprobe blacklist",
          "perf -k offers probes in copies of a function inlined into functions the kernel's kprobe blacklist "
          "names, and on the blacklisted function itself, which the kernel refuses; kprobectl leaves them out "
          "saying so: notifier_call_chain (NOKPROBE_SYMBOL) and its copy in atomic_notifier_call_chain+30"),
    Class("redundant-copy", "perf skips an inlined copy called on the line that declares it",
          "perf's die_walk_instances ignores an inlined copy whose DW_AT_call_file and DW_AT_call_line are its "
          "origin's DW_AT_decl_file and DW_AT_decl_line ('Ignore redundant instances', tools/perf/util/"
          "dwarf-aux.c); a tracepoint's header declares __traceiter_X and trace_X, which calls it, on one line, "
          "so gcc's copy of __traceiter_X inlined in trace_X is one of those: __traceiter_clk_set_duty_cycle in "
          "clk_core_set_duty_cycle_nolock+156, call and declaration at include/trace/events/clk.h:253; the "
          "copy's code runs on each traced call, kprobectl probes it, perf only the out-of-line function"),
    Class("split-part", "perf probes the split-off rest of a function as a copy of it",
          "gcc's partial inlining splits FUNC into a head (inlined into callers, and kept as FUNC) and the rest, "
          "FUNC.part.N, entered from the head only; perf probes FUNC.part.N+0 as one more place of FUNC, so a "
          "call that takes the slow path fires twice (and, for %return, returns twice); kprobectl leaves it "
          "out, saying so: dmar_set_interrupt.part.0, which dmar_set_interrupt+19 jumps to "
          "(tests/fixtures/partial.c shows the counts end to end)"),
    Class("const-string", "perf lists a string the DWARF holds as a constant",
          "__func__ has no location, only DW_AT_const_value (its characters): no fetcharg can read it, and "
          "kprobectl lists what can be fetched; perf -V lists it as 'char* __func__' (kvfree_call_rcu)"),
    Class("init-percpu", "perf names a place in the init code from a per-CPU symbol",
          "perf 5.10 writes a probe in an inlined copy inside an __init function (.init.text) as "
          "__per_cpu_end+OFF: a per-CPU symbol, whose value (0x36000 in the image and in kallsyms) is an "
          "offset into the per-CPU area, not an address, so the kernel resolves the target outside its "
          "text; its fetches there read symbols named after the parameters (handler=@handler+0). "
          "kprobectl names the place acpi_scan_init+93 (acpi_scan_add_handler's copy), which a boot-time "
          "probe (kprobe_event=) can take; perf 6.1 and 7.3 name its place in 7.3's image acpi_scan_init+100"),
    Class("other-function", "perf lists another function's places for one whose DWARF has no code",
          "5.10's weak arch_cpu_idle_exit (kernel/sched/idle.c) has a symbol and code, but its DIE has no "
          "address, range or inlined copy (nor any other DIE of its name); perf -V lists "
          "@<arch_cpu_idle_prepare+0> and +5, the code of the function before it, and its -D fails; "
          "kprobectl says the debuginfo has no such function"),
    Class("caller-vars", "vars lists the caller's variables at an inlined copy",
          "at an inlined copy kprobectl lists the variables of the function it is inlined into, which are as "
          "live there (and can be fetched by name); perf lists the copy's own only: __raise_softirq_irqoff at "
          "takeover_tasklets+101 with takeover_tasklets' cpu"),
]
BY_KEY = {c.key: c for c in CLASSES}

CONSTANT = re.compile(r"^(DW_OP_lit\d+|DW_OP_const\w* [^,]+|DW_OP_implicit_value.*?), DW_OP_stack_value$|"
                      r"^DW_OP_implicit_value")
COMPUTED = re.compile(r"^DW_OP_(breg\d+ \w+[+-]\d+|bregx .*|fbreg [+-]?\d+), DW_OP_stack_value$")
ENTRY_VALUE = re.compile(r"^DW_OP_entry_value\((DW_OP_reg\d+ \w+)\), DW_OP_stack_value$")
ADDR_VALUE = re.compile(r"^DW_OP_addr 0x[0-9a-f]+, DW_OP_stack_value$")


def base_name(name):
    return name.split(".")[0]


class Probed:
    """The DWARF scopes at one probe address, split around the probed
    function's instance: `outer` (its callers' scopes, when it is an
    inlined copy), `own` (the instance and its lexical blocks) and `nested`
    (copies of other functions inlined into it, and their blocks)."""

    def __init__(self, dwarf, func, address):
        self.address, self.arch = address, dwarf.arch
        chain = dwarf.chain(address) if dwarf and dwarf.tool else []
        copies = [i for i, scope in enumerate(chain)
                  if scope.tag != "DW_TAG_lexical_block" and base_name(scope.name) == base_name(func)]
        # A copy of func directly inside a copy of func (lexical blocks
        # between them, no other function) is its own split-off part
        # inlined back into it (gcc's function splitting): no copy of its
        # own, the outer one is probed. (A call of func inside another
        # function inlined into func is recursion, a copy of its own.)
        self.self_split = len(copies) > 1 and chain[copies[1]].tag == "DW_TAG_inlined_subroutine" and all(
            s.tag == "DW_TAG_lexical_block" for s in chain[copies[0] + 1:copies[1]])
        index = (copies[0] if self.self_split else copies[-1]) if copies else None
        self.folded = False
        if index is None:
            # A copy of func folded whole into the code at address: no
            # range of it holds the address, yet it is probed there. It
            # can be a sibling of the innermost scope, not a child: 7.3's
            # d_ancestor in is_subdir has [+147, +147), and +147 (its
            # entry_pc, 'jmp' into its code) is read_seqlock_excl's.
            for depth in range(len(chain), 0, -1):
                copy = folded_copy(chain[depth - 1], func, address)
                if copy is not None:
                    self.outer, self.own, self.nested = chain[:depth], [copy], []
                    self.inlined = self.found = self.folded = True
                    return
            self.outer, self.own, self.nested = [], chain, []
            self.found = False
            return
        end = next((i for i in range(index + 1, len(chain)) if chain[i].tag == "DW_TAG_inlined_subroutine"),
                   len(chain))
        self.outer, self.own, self.nested = chain[:index], chain[index:end], chain[end:]
        self.inlined = chain[index].tag == "DW_TAG_inlined_subroutine"
        self.found = True

    @staticmethod
    def named(scopes, name):
        return [v for s in scopes for v in s.variables() if v.name == name]

    def own_var(self, name):
        """The probed instance's variable `name`, innermost block first."""
        found = self.named(reversed(self.own), name)
        return found[0] if found else None

    def location(self, name):
        var = self.own_var(name)
        return var.location_at(self.address) if var else None

    def is_constant(self, name):
        var = self.own_var(name)
        if not var:
            return False
        loc = var.location_at(self.address)
        return bool(loc and CONSTANT.match(loc)) or (loc is None and "DW_AT_const_value" in var.attrs)


def folded_copy(scope, func, address):
    """An inlined copy of `func` inside `scope` that begins at `address`
    with an empty range, [address, address): all its code folded into its
    caller's, or the rest of it elsewhere."""
    for child in scope.scopes():
        if child.tag == "DW_TAG_inlined_subroutine" and base_name(child.name) == base_name(func) and \
                (address, address) in child.ranges():
            return child
        inside = child.tag == "DW_TAG_lexical_block" or (address, address) in child.ranges()
        found = folded_copy(child, func, address) if inside else None
        if found is not None:
            return found
    return None


# --- the tests, one per kind of disagreement ----------------------------------


def in_pieces(loc):
    return bool(loc) and ("DW_OP_piece" in loc or "DW_OP_bit_piece" in loc)


def by_members(var, loc):
    """A location kprobectl's $params reads member by member: pieces, or a
    parameter in memory at the frame base (a struct passed on the stack;
    kprobectl takes those of 9-16 bytes, which only a struct can be)."""
    return in_pieces(loc) or bool(var.tag == "DW_TAG_formal_parameter" and loc and
                                  re.match(r"^DW_OP_fbreg [+-]?\d+$", loc))


def member_of(probed, name):
    """The probed instance's struct whose member kprobectl fetches as
    `name` (VAR_MEMBER), or None."""
    if not probed.found:
        return None
    for scope in reversed(probed.own):
        for var in scope.variables():
            if name.startswith(var.name + "_") and by_members(var, var.location_at(probed.address)):
                return var.name
    return None


def members_for_whole(probed, name, ours):
    """perf fetches a struct whole (its first 8 bytes), kprobectl its
    members (NAME_...)."""
    var = probed.own_var(name)
    return bool(var) and by_members(var, probed.location(name)) and any(k.startswith(name + "_") for k in ours)


def kp_only_fetch(probed, name, fetch):
    if member_of(probed, name):
        return "members"
    if fetch.startswith("\\") and probed.is_constant(name):
        return "constant"
    if probed.found and probed.folded and probed.location(name):
        return "folded"
    if probed.found and first_view_only(probed, name, fetch):
        return "first-view"
    if entry_value_at_entry(probed, name, fetch):
        return "entry-value"
    return None


def entry_value_at_entry(probed, name, fetch):
    """At the out-of-line function's first instruction (its DWARF entry:
    low_pc, or its first range as listed), `name` is located by its
    register's value on entry, as `fetch` reads it (None: listed)."""
    if not probed.found or probed.inlined:
        return False
    ranges = probed.own[0].ranges()
    m = ENTRY_VALUE.match(probed.location(name) or "")
    if not m or not ranges or ranges[0][0] != probed.address:
        return False
    return fetch is None or fetch == "%" + (register_of(probed.arch, m.group(1)) or "?")


def first_view_only(probed, name, fetch):
    """The probed instance's `name` is located at the probe's address by
    an empty entry [P, P) alone (no entry covers P), as `fetch` reads it
    (None: listed)."""
    from parity_dwarf import RANGE
    var = probed.own_var(name)
    if var is None:
        return False
    spans = [(int(lo, 16), int(hi, 16), ops) for lo, hi, ops in RANGE.findall(var.attrs.get("DW_AT_location", ""))]
    at = [ops for lo, hi, ops in spans if lo == hi == probed.address]
    if not at or any(lo <= probed.address < hi for lo, hi, _ in spans):
        return False
    if fetch is None or fetch == "%" + (register_of(probed.arch, at[0]) or "?"):
        return True
    # In the frame: the frame base is the CFA, the stack pointer plus the
    # frame's size at the probe, above the slot (btf_type_str's t at 6.12's
    # btf_distill_func_proto+561, DW_OP_fbreg -72: +24(%sp), the CFA
    # sp+96 after six pushes and sub $0x28; the code there loads 0x18(%rsp)).
    fbreg = re.match(r"^DW_OP_fbreg ([+-]?\d+)$", at[0])
    slot = re.match(r"^\+?(\d+)\(%sp\)$", fetch)
    return bool(fbreg and slot and int(slot.group(1)) > int(fbreg.group(1)))


def perf_only(probed, name, fetch, perf_stderr):
    """Why perf fetches (`fetch`) or, for -V (`fetch` None), lists a
    variable kprobectl leaves out."""
    var, loc = probed.own_var(name), probed.location(name)
    nested = probed.named(probed.nested, name) if probed.found else []
    if probed.found and probed.self_split and not loc and any(v.location_at(probed.address) for v in nested):
        return "self-split"
    if nested and (var is None or (var.tag != "DW_TAG_formal_parameter" and
                                   any(v.tag == "DW_TAG_formal_parameter" for v in nested))):
        return "nested"
    # The probed copy's own variable has no location at all, the nested
    # copy's of that name one here, which perf lists (stage2_put_pte's ptep
    # at __kvm_nvhe_stage2_map_walk_leaf+272, kvm_clear_pte's in W20).
    if var is not None and loc is None and any(v.location_at(probed.address) for v in nested):
        return "nested"
    if loc and COMPUTED.match(loc) and (fetch is None or re.match(r"^[+-]\d+\(", fetch)):
        return "stack-value"
    if loc and ADDR_VALUE.match(loc) and fetch in (None, f"@{name}+0"):
        return "addr-value"
    if loc and "DW_OP_piece" in loc and (fetch is None or (
            "exceeds max-bitwidth" in perf_stderr and register_of(probed.arch, loc) == fetch[1:])):
        return "wide-struct"
    if loc and re.match(r"^DW_OP_fbreg [+-]?\d+$", loc) and fetch and "exceeds max-bitwidth" in perf_stderr and \
            re.match(r"^[+-]\d+\(%sp\)$", fetch):
        return "wide-struct"  # passed on the stack
    if loc and re.match(r"^DW_OP_breg\d+ \w+[+-]\d+$", loc) and fetch and "exceeds max-bitwidth" in perf_stderr \
            and fetch == perf_fetch(probed.arch, loc):
        return "wide-struct"  # passed by reference (arm64: a composite of more than 16 bytes)
    if loc and first_op_only(probed.arch, loc, fetch):
        return "first-op"
    if var is not None and loc is None and fetch is None and "DW_AT_const_value" in var.attrs and \
            var.name == "__func__":
        return "const-string"
    if var is not None and loc == "" and var.tag == "DW_TAG_formal_parameter":
        later = later_location(var, probed.address)
        if later and (fetch is None or (fetch.startswith("%") and register_of(probed.arch, later) == fetch[1:])):
            return "later-location"
    return None


def first_op_only(arch, loc, fetch):
    """A location of several operations kprobectl cannot follow, which
    perf reads as its first (a DW_OP_bregN k: +k(%reg))."""
    ops = [op.strip() for op in loc.split(",")]
    if len(ops) < 2 or (len(ops) == 2 and ops[1] == "DW_OP_stack_value"):
        return False
    if fetch is None:
        return True
    breg = breg_of(arch, ops[0]) if re.match(r"^DW_OP_breg\d+ \w+[+-]\d+$", ops[0]) else None
    if breg:
        return fetch == f"{breg[1]:+d}(%{breg[0]})"
    # The frame base is the CFA, which perf turns into the stack pointer
    # plus an offset at the probe (ext4_xattr_inode_free_quota len,
    # DW_OP_fbreg -136, DW_OP_deref, DW_OP_plus_uconst 1: perf +32(%sp)).
    return bool(re.match(r"^DW_OP_fbreg [+-]?\d+$", ops[0]) and re.match(r"^[+-]?\d+\(%sp\)$", fetch))


def later_location(var, address):
    """The first location after `address` of a variable that has none
    there (perf's scan: address + 1, + 2, ... each looked up with
    dwarf_getlocation_addr, which no empty entry [P, P) answers: 7.3's
    igmp_mcf_get_next.isra.0 psf is a DW_OP_GNU_parameter_ref at [+5, +5)
    before DW_OP_reg4 RSI at [+5, +22), and perf fetches %si)."""
    from parity_dwarf import RANGE
    spans = sorted((int(lo, 16), ops) for lo, hi, ops in RANGE.findall(var.attrs.get("DW_AT_location", ""))
                   if int(hi, 16) > int(lo, 16))
    for lo, ops in spans:
        if lo > address:
            return ops
    return None


def both_fetch(probed, name, ours, theirs, perf_stderr):
    """Why kprobectl and perf fetch one variable differently."""
    var = probed.own_var(name)
    if var is None:
        return None
    from parity_dwarf import RANGE
    here = [(int(lo, 16), int(hi, 16), ops) for lo, hi, ops in RANGE.findall(var.attrs.get("DW_AT_location", ""))
            if int(lo, 16) == probed.address]
    views = [ops for lo, hi, ops in here if hi == lo], [ops for lo, hi, ops in here if hi > lo]
    if views[0] and views[1] and ours == "%" + (register_of(probed.arch, views[0][0]) or "?") and \
            theirs == perf_fetch(probed.arch, views[1][0]):
        return "later-view"
    # A value that is a register plus nothing (&local at the frame's
    # bottom): kprobectl fetches the register, perf memory there.
    loc = probed.location(name)
    m = re.match(r"^\+0\((%\w+)\)$", theirs)
    if loc and COMPUTED.match(loc) and m and ours == m.group(1):
        return "stack-value"
    return None


def perf_fetch(arch, ops):
    """What perf makes of a location's first operation: %reg, or memory
    at a register plus an offset."""
    breg = breg_of(arch, ops)
    if breg:
        return f"{breg[1]:+d}(%{breg[0]})"
    reg = register_of(arch, ops)
    return "%" + reg if reg else None


def perf_repeat(probed, name):
    if probed.found and probed.self_split and probed.named(probed.nested, name):
        return "self-split"
    if probed.found and probed.named(probed.nested, name):
        return "nested"
    return None


def kp_only_var(probed, name):
    if in_pieces(probed.location(name)):
        return "members"  # perf reads the first piece only, and it is empty
    if probed.is_constant(name):
        return "constant"
    if probed.found and probed.folded and probed.location(name):
        return "folded"
    if probed.found and probed.inlined and not probed.own_var(name) and probed.named(probed.outer, name):
        return "caller-vars"
    if probed.found and first_view_only(probed, name, None):
        return "first-view"
    if entry_value_at_entry(probed, name, None):
        return "entry-value"
    return None


def redundant_copy(dwarf, func, address):
    """kprobectl's `address` is the entry of an inlined copy of `func`
    called on the line that declares it (perf's die_walk_instances ignores
    such copies)."""
    if not dwarf or not dwarf.tool:
        return False
    for scope in dwarf.chain(address):
        if scope.tag != "DW_TAG_inlined_subroutine" or base_name(scope.name) != base_name(func):
            continue
        entry = scope.number("DW_AT_entry_pc") or min(lo for lo, _ in scope.ranges())
        m = re.match(r"^(0x[0-9a-f]+)", scope.attrs.get("DW_AT_abstract_origin", ""))
        origin = dwarf.die(int(m.group(1), 16)) if m else None
        if entry == address and origin and \
                (scope.attrs.get("DW_AT_call_file"), scope.number("DW_AT_call_line")) == \
                (origin.attrs.get("DW_AT_decl_file"), origin.number("DW_AT_decl_line")):
            return True
    return False


def entry_class(kp_address, perf_address):
    """The class of an empty-entry pair: kprobectl's first instruction of
    the copy after perf's entry_pc, or before it (code scheduled ahead)."""
    return "empty-entry" if kp_address > perf_address else "hoisted-entry"


def empty_entry(dwarf, func, perf_address, kp_address):
    """perf's address is an inlined copy's entry_pc in an empty range and
    kprobectl's the copy's first instruction."""
    if not dwarf or not dwarf.tool:
        return False
    for scope in dwarf.chain(kp_address):
        if scope.tag != "DW_TAG_inlined_subroutine" or base_name(scope.name) != base_name(func):
            continue
        ranges = scope.ranges()
        if (scope.number("DW_AT_entry_pc") == perf_address and (perf_address, perf_address) in ranges
                and not scope.has_pc(perf_address) and min(lo for lo, hi in ranges if hi > lo) == kp_address):
            return True
    return False


def init_percpu(table, kp_address, perf_address):
    """kprobectl's `kp_address` is in the init code (_sinittext to
    _einittext) and perf's target resolves to an address below the kernel's
    (a per-CPU symbol's offset plus OFF) on the same page offset."""
    start, end = table.get("_sinittext"), table.get("_einittext")
    return bool(start and end) and start[0] <= kp_address < end[0] and perf_address < 1 << 47 and \
        (kp_address - perf_address) % 4096 == 0
