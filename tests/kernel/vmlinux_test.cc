// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl on a real kernel image: Debian's 6.1 cloud vmlinux with its
// DWARF (the VM's, fetched by tests/vm/kernel-info), offline (-k -D), for
// what only a kernel's size and gcc's treatment of it show: split
// functions, split parts inlined back, $params of inlined copies, hints.
// Each was a difference from perf on a sample of the kernel's functions.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>

#include "kprobectl/elf_image.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The vmlinux, or skip (fail in CI) when the set-up could not fetch it.
std::string Vmlinux() {
  const char* info = std::getenv("KP_VM_KERNEL_INFO");
  std::string text = info ? ReadFile(info) : std::string();
  auto words = SplitWords(text);
  if (words.size() != 3) {
    if (std::getenv("CI") && std::string(std::getenv("CI")) == "true") FAIL("no VM kernel: " << (info ? info : ""));
    WARN("SKIPPED: the VM's kernel was not fetched (tests/vm/kernel-info)");
    std::exit(4);
  }
  return words[2];
}

// Every test gets the same index cache, built once.
struct Cache {
  ScopedEnv env{"XDG_CACHE_HOME", FixturePath("vmlinux-cache")};
};

CliResult Run(const std::vector<std::string>& args) {
  static Cache cache;
  std::vector<std::string> all = {"-k", Vmlinux()};
  all.insert(all.end(), args.begin(), args.end());
  return RunKprobectl(all);
}

}  // namespace

TEST_CASE("a hot/cold split function has an entry, variables and lines in both parts") {
  auto result = Run({"-D", "do_exit code"});
  INFO(result.err);
  CHECK(result.out == "p:probe/do_exit do_exit+0 code=%di:s64\n");
  result = Run({"vars", "do_exit"});
  CHECK(result.out == "Available variables at do_exit\n\t@<do_exit+0>\n\t\tlong int\tcode\n");
  // Line 33 of do_exit is in its cold part: a probe there names that part,
  // which the kernel takes (it checks "do_exit", the name without its suffix).
  result = Run({"-D", "do_exit:33"});
  CHECK(result.out == "p:probe/do_exit_L33 do_exit.cold+0\n");
  for (const char* fn : {"udp_sendmsg", "start_this_handle", "do_tcp_setsockopt"}) {
    result = Run({"-D", std::string(fn) + " $params"});
    INFO(fn << ": " << result.err);
    CHECK(result.status == 0);
    CHECK(result.out.starts_with("p:probe/" + std::string(fn) + " " + fn + "+0 "));
  }
}

TEST_CASE("a split part inlined back into its own function is no copy of it") {
  auto result = Run({"-D", "__brelse"});
  auto lines = SplitLines(result.out);
  CHECK(lines.size() == 11);  // as perf: the out-of-line one and 10 inlined copies
  CHECK(result.out.find("__brelse+21") == std::string::npos);
  CHECK(result.out.find("invalidate_bh_lru+73") == std::string::npos);
  CHECK(Run({"-D", "d_same_name"}).out == "p:probe/d_same_name d_same_name+0\n");
}

TEST_CASE("$params at an inlined copy are the probed function's, not its caller's") {
  auto result = Run({"-D", "em_pd_get $params"});
  CHECK(result.out ==
        "p:probe/em_pd_get em_pd_get+0 dev=%di:x64\n"
        "p:probe/em_pd_get_1 em_cpu_get+15 dev=%ax:x64\n"
        "p:probe/em_pd_get_2 em_dev_register_perf_domain+1392 dev=%ax:x64\n");
  // A copy folded whole into its caller's code (its one range is empty,
  // [+5, +5)) holds no address, yet its parameters are the probe's: here
  // they have no location, and cgroup_save_control's cgrp is not one.
  auto folded = Run({"-D", "css_next_descendant_pre $params"});
  CHECK(folded.out.find("p:probe/css_next_descendant_pre cgroup_save_control+5\n") == 0);
  CHECK(folded.out.find("cgrp") == std::string::npos);
  CHECK(folded.out.find(" cgroup_type_write+259 root=%r14:x64 pos=\\0:x64\n") != std::string::npos);
  auto named = Run({"-D", "css_next_descendant_pre pos"});
  CHECK(named.err.find("variable 'pos' has no location at cgroup.c:3192") != std::string::npos);
  // A copy that begins with an empty range, the rest of its code later
  // (hrtimer_cancel in do_nanosleep: [+56, +56), then [+123, +139)).
  auto begins_empty = Run({"-D", "hrtimer_cancel $params"});
  CHECK(begins_empty.out.find(" do_nanosleep+56\n") != std::string::npos);
  CHECK(begins_empty.out.find(" t=") == std::string::npos);
}

TEST_CASE("a split part standing for another function's tail is no copy, a macro's caller's is") {
  // acpi_subsys_poweroff_late+40 is acpi_subsys_suspend_late's tail, an
  // inlined_subroutine "called" from that function's declaration line
  // (device_pm.c:1166): perf has acpi_subsys_suspend_late+0 only.
  CHECK(Run({"-D", "acpi_subsys_suspend_late"}).out == "p:probe/acpi_subsys_suspend_late acpi_subsys_suspend_late+0\n");
  // SYSCALL_DEFINE declares __do_sys_openat and its callers on one line
  // (fs/open.c:1347): those copies are real calls.
  CHECK(Run({"-D", "__do_sys_openat"}).out ==
        "p:probe/__do_sys_openat __x64_sys_openat+38\n"
        "p:probe/__do_sys_openat_1 __ia32_sys_openat+37\n");
}

TEST_CASE("variables are the probed function's, not those of a copy inlined at a later view of its address") {
  // At set_memory_wb+51 _set_memory_wb (view 0) and change_page_attr_clear
  // (view 2) both begin; 'addr' is _set_memory_wb's %di.
  CHECK(Run({"-D", "_set_memory_wb $params"}).out ==
        "p:probe/_set_memory_wb set_memory_wb+51 numpages=%si:s32 addr=%di:u64\n"
        "p:probe/_set_memory_wb_1 _set_memory_wb+0 addr=%di:u64 numpages=%si:s32\n");
  CHECK(Run({"-D", "set_memory_wb+51 addr"}).out == "p:probe/set_memory_wb set_memory_wb+51 addr=%di:u64\n");
  // vfs_read:20 is where new_sync_read's copy begins: 'ret' is vfs_read's.
  CHECK(Run({"-D", "vfs_read:20 ret"}).out == "p:probe/vfs_read_L20 vfs_read+357 ret=%bx:s64\n");
}

TEST_CASE("a register's value at the frame's entry is no value at an inlined copy's entry") {
  // opipe_prep's flags in do_splice+205 is DW_OP_entry_value(DW_OP_reg9
  // R9), do_splice's %r9 on entry, overwritten by then.
  CHECK(Run({"-D", "opipe_prep $params"}).out ==
        "p:probe/opipe_prep do_splice+205 pipe=%bp:x64\n"
        "p:probe/opipe_prep_1 do_tee+144 pipe=%bx:x64\n");
  auto named = Run({"-D", "opipe_prep flags"});
  CHECK(named.status == 1);
  CHECK(named.err.find("'flags' is only known as the value a register had when do_splice was entered") !=
        std::string::npos);
}

TEST_CASE("vars lists a function on the kprobe blacklist, saying a probe there would be refused") {
  auto vars = Run({"vars", "__die_body"});
  CHECK(vars.status == 0);
  CHECK(vars.out ==
        "Available variables at __die_body\n\t@<__die_body+0>\n\t\tconst char*\tstr\n"
        "\t\tstruct pt_regs*\tregs\n\t\tlong int\terr\n");
  CHECK(vars.err.find("kprobectl: a probe at __die_body of ") == 0);
  CHECK(vars.err.find(" would be refused: '__die_body' is on the kernel's kprobe blacklist") != std::string::npos);
  CHECK(Run({"-D", "__die_body $params"}).status == 1);
}

TEST_CASE("a variable in memory at a loaded pointer plus an offset is a nested fetch") {
  // bpf_map_mmap_close's map: DW_OP_breg5 RDI+112, DW_OP_deref,
  // DW_OP_plus_uconst 0xc8, vma->vm_file->private_data.
  CHECK(Run({"-D", "bpf_map_mmap_close map"}).out ==
        "p:probe/bpf_map_mmap_close bpf_map_mmap_close+0 map=+200(+112(%di)):x64\n");
}

TEST_CASE("a struct passed in two registers is fetched member by member") {
  // do_tcp_setsockopt's sockptr_t optval at the entry: DW_OP_reg2 RCX,
  // DW_OP_piece 0x8, DW_OP_reg8 R8, DW_OP_piece 0x8. Its pointers (an
  // anonymous union) are RCX; is_kernel is a 1-bit bitfield at bit 64
  // (DW_AT_bit_size 1, DW_AT_data_bit_offset 0x40): R8's bit 0.
  CHECK(Run({"-D", "do_tcp_setsockopt optval.user optval.is_kernel"}).out ==
        "p:probe/do_tcp_setsockopt do_tcp_setsockopt+0 user=%cx:x64 is_kernel=%r8:b1@0/8\n");
  std::string params =
      "p:probe/do_tcp_setsockopt do_tcp_setsockopt+0 sk=%di:x64 level=%si:s32 optname=%dx:s32 optval_kernel=%cx:x64 "
      "optval_user=%cx:x64 optval_is_kernel=%r8:b1@0/8 optlen=%r9:u32\n";
  CHECK(Run({"-D", "do_tcp_setsockopt $params"}).out == params);
  // BTF, through the ABI: the same.
  CHECK(Run({"--btf", "-D", "do_tcp_setsockopt $params"}).out == params);
  CHECK(Run({"vars", "do_tcp_setsockopt"})
            .out.find("\t\tsockptr_t\toptval\t(in pieces: optval.kernel optval.user optval.is_kernel)\n") !=
        std::string::npos);
  auto whole = Run({"-D", "do_tcp_setsockopt optval"});
  CHECK(whole.status == 1);
  CHECK(whole.err ==
        "kprobectl: error: invalid argument: 'optval' is split over several places here (bytes 0-7 and 8-15: "
        "DW_OP_piece), and the kernel fetches one place per argument\n    do_tcp_setsockopt optval\n"
        "                      ^\n  hint: fetch its members: optval.kernel optval.user optval.is_kernel\n");
}

TEST_CASE("pieces that are constants, bits, and parts of a register") {
  // do_misc_fixups+1775 builds BPF_LD_IMM64(BPF_REG_3, addr) in ld_addrs:
  // code DW_OP_lit24, dst_reg DW_OP_lit3 (DW_OP_bit_piece 4), the first
  // imm DW_OP_reg0 RAX (4 bytes), the second DW_OP_breg0 RAX+0,
  // DW_OP_const1u 32, DW_OP_shr: RAX's upper half.
  CHECK(Run({"-D", "do_misc_fixups+1775 ld_addrs[0].code ld_addrs[0].dst_reg ld_addrs[0].imm ld_addrs[1].imm"}).out ==
        "p:probe/do_misc_fixups do_misc_fixups+1775 code=\\24:u8 dst_reg=\\3:u8 imm=%ax:s32 imm_1=%ax:b32@32/64\n");
  // copy_from_sockptr_offset inlined at sk_setsockopt+121: src.is_kernel
  // is DW_OP_breg0 RAX+0, DW_OP_lit1, DW_OP_and (DW_OP_bit_piece 1).
  CHECK(Run({"-D", "copy_from_sockptr_offset $params"})
            .out.find(" sk_setsockopt+121 offset=\\0:u64 size=\\4:u64 src_kernel=%cx:x64 src_user=%cx:x64 "
                      "src_is_kernel=%ax:b1@0/8\n") != std::string::npos);
}

TEST_CASE("where else a variable can be fetched, for lines before the function's own") {
  // Inside new_sync_read's copy (which began at vfs_read+357): its 'ret'.
  auto result = Run({"-D", "vfs_read+360 ret"});
  CHECK(result.status == 1);
  CHECK(result.err.find("  hint: it can be fetched at read_write.c:390 read_write.c:392 read_write.c:393\n") !=
        std::string::npos);
}

TEST_CASE("line lists a function's own lines, not those of the callers that hold its inlined copies") {
  // getname_flags (fs/namei.c:129) is inlined into the syscalls that
  // SYSCALL_DEFINE makes at the end of fs/namei.c; their lines (4121 is
  // its "line 3992") are at its copies' first addresses. perf -L numbers
  // 0-74 (a subset: it also leaves out lines that share an address with
  // another line, which kprobectl probes).
  auto result = Run({"line", "getname_flags"});
  CHECK(result.status == 0);
  std::vector<std::string> numbered;
  for (const std::string& line : SplitLines(result.out))
    if (auto words = SplitWords(line); !words.empty() && !line.starts_with("<")) numbered.push_back(words[0]);
  CHECK(Join(numbered, " ") ==
        "0 1 2 3 4 6 7 10 11 18 19 21 22 23 24 33 34 35 42 43 44 45 47 48 49 50 51 52 54 55 56 57 61 63 64 65 66 67 "
        "68 72 73 74");
  result = Run({"line", "getname_flags@fs/namei.c:72"});
  CHECK(SplitLines(result.out).at(0) == "<getname_flags@fs/namei.c:72>");
  CHECK(SplitLines(result.out).at(1) == "     72  ");
  result = Run({"-D", "getname_flags:3992"});
  CHECK(result.err ==
        "kprobectl: error: line 3992 of getname_flags (fs/namei.c:4121) is past its end; the nearest line with code "
        "is 74\n  hint: list the lines that have code with 'kprobectl line getname_flags'\n");
}

TEST_CASE("line 0 is a function's entry, and a block's own declarations end no function") {
  // ext4_mb_use_best_found's declaration line has no row of the line
  // table: its line 0 is its entry, as in perf (-L numbers it, FUNC:0 is
  // FUNC). BUG_ON and min() declare __compiletime_assert_N inside its body,
  // which gcc also lists among the CU's functions: a declaration, no end
  // of this one (its lines were cut at 7 of 45).
  auto result = Run({"line", "ext4_mb_use_best_found"});
  std::vector<std::string> numbered;
  for (const std::string& line : SplitLines(result.out))
    if (auto words = SplitWords(line); !words.empty() && !line.starts_with("<")) numbered.push_back(words[0]);
  CHECK(Join(numbered, " ") == "0 2 3 4 6 7 9 10 11 15 17 18 19 28 29 30 31 33 34 35 36 37 44 45");
  result = Run({"-D", "ext4_mb_use_best_found:0"});
  CHECK(result.out == "p:probe/ext4_mb_use_best_found ext4_mb_use_best_found+0\n");
}

// BTF and DWARF of the same kernel: at a function's entry the BTF source
// (--btf: the image's .BTF section, its DWARF set aside) must fetch every
// parameter as the DWARF does: same register or stack slot, same type.
namespace {

// "p:probe/E TARGET a=X b=Y" lines: TARGET -> {a: X, b: Y}.
std::map<std::string, std::map<std::string, std::string>> Definitions(const std::string& out) {
  std::map<std::string, std::map<std::string, std::string>> defs;
  for (const std::string& line : SplitLines(out)) {
    auto words = SplitWords(line);
    if (words.size() < 2 || !line.starts_with("p:")) continue;
    auto& args = defs[words[1]];
    for (size_t i = 2; i < words.size(); ++i)
      if (size_t eq = words[i].find('='); eq != std::string::npos)
        args[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  return defs;
}

}  // namespace

TEST_CASE("BTF and DWARF fetch the same parameters at the entry, on a sample of the kernel's functions") {
  auto funcs = SplitLines(Run({"funcs"}).out);
  REQUIRE(funcs.size() > 30000);
  size_t same = 0, named_apart = 0, compared_functions = 0;
  // Every 300th function (clones, whose parameters BTF does not describe, left out).
  for (size_t i = 0; i < funcs.size(); i += 300) {
    const std::string& fn = funcs[i];
    if (fn.find('.') != std::string::npos) continue;
    auto dwarf = Definitions(Run({"-D", fn + " $params"}).out);
    auto btf = Definitions(Run({"--btf", "-D", fn + " $params"}).out);
    for (const auto& [target, args] : btf) {
      if (!dwarf.contains(target)) continue;
      ++compared_functions;
      for (const auto& [name, fetch] : args) {
        INFO(fn << " at " << target << ": " << name);
        if (!dwarf[target].contains(name)) {
          ++named_apart;  // a declaration and its definition may name a parameter apart
          continue;
        }
        CHECK(fetch == dwarf[target][name]);
        ++same;
      }
    }
  }
  CHECK(compared_functions > 80);
  CHECK(same > 150);
  CHECK(named_apart <= 3);
}

TEST_CASE("BTF and DWARF follow the same member chains") {
  for (const char* spec :
       {"vfs_read file->f_path.dentry->d_name.name:string count buf", "do_sys_openat2 filename:string how->flags dfd",
        "tcp_sendmsg sk->__sk_common.skc_dport size", "ip_rcv skb->pkt_type skb->dev->name:string skb->len",
        "wake_up_process p->comm:string p->pid p->comm[2]", "hrtimer_start_range_ns $params", "vfs_read%return $retval",
        "do_exit code", "genregs_get to.left to.p $params", "ipv6_setsockopt optval.is_kernel optval.kernel",
        "do_ip_getsockopt $params"}) {
    auto dwarf = Run({"-D", spec}), btf = Run({"--btf", "-D", spec});
    INFO(spec << "\nDWARF: " << dwarf.err << "\nBTF: " << btf.err);
    CHECK(dwarf.status == 0);
    // The DWARF's first definition is the entry; inlined copies follow.
    REQUIRE_FALSE(SplitLines(dwarf.out).empty());
    CHECK(btf.out == SplitLines(dwarf.out).front() + "\n");
  }
}

// Each CU read through a libdw handle of its own (a window, with a valid
// index) answers what the whole file's handle answers: definitions,
// return probes and variables of functions spread over the image (every
// 97th traceable function: some 400, in as many CUs; and each one's
// address + 1, found through the address ranges' table), and lines.
TEST_CASE("unit windows: every answer is the one the whole file's handle gives") {
  auto funcs = Run({"funcs"});
  REQUIRE(funcs.status == 0);
  std::vector<std::string> names = SplitLines(funcs.out);
  REQUIRE(names.size() > 10000);
  std::vector<std::vector<std::string>> commands = {{"-D", "do_sys_openat2:10 dfd filename how->flags op.open_flag"},
                                                    {"-D", "tcp_v4_connect:20 sk daddr err"},
                                                    {"-V", "do_fault_around"},
                                                    {"-D", "active_show buf"},
                                                    {"-D", "fs/open.c:1320 fd op.open_flag"},
                                                    {"-L", "do_sys_openat2"}};
  auto image = ElfImage::Open(Vmlinux());
  REQUIRE(image);
  for (size_t i = 0; i < names.size(); i += 97) {
    // By address too: the CU from .debug_aranges (UnitWindows::UnitDieAt).
    if (const ElfSymbol* symbol = image->Find(names[i]))
      commands.push_back({"-D", Hex(symbol->value + 1) + " $params"});
    commands.push_back({"-D", names[i] + " $params"});
    commands.push_back({"-D", names[i] + "%return $retval"});
    commands.push_back({"vars", names[i]});
  }
  size_t compared = 0;
  for (const auto& command : commands) {
    CliResult windows = Run(command);
    CliResult whole = [&] {
      ScopedEnv off("KPROBECTL_UNIT_WINDOWS", "0");
      return Run(command);
    }();
    INFO(Join(command, " "));
    CHECK(windows.status == whole.status);
    CHECK(windows.out == whole.out);
    CHECK(windows.err == whole.err);
    ++compared;
  }
  CHECK(compared > 1000);
}
