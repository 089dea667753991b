// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl on a real kernel image, offline: its answers compared with its
// own through another route over a sample of the whole image. BTF (the
// image's .BTF section, written by pahole from the DWARF) against the
// DWARF; each CU read through a libdw handle of its own against the whole
// file's handle. Nothing here depends on one build's offsets.
#include <catch2/catch.hpp>
#include <map>

#include "kprobectl/strings.h"
#include "vmlinux_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

// BTF and DWARF of the same kernel: at a function's entry the BTF source
// (--btf: the image's .BTF section, its DWARF set aside) must fetch every
// parameter as the DWARF does: same register or stack slot, same type.
namespace {

// "p:probe/E TARGET a=X b=Y" lines: TARGET -> {a: X, b: Y}.
std::map<std::string, std::map<std::string, std::string>> ParsedDefinitions(const std::string& out) {
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
    auto dwarf = ParsedDefinitions(Run({"-D", fn + " $params"}).out);
    auto btf = ParsedDefinitions(Run({"--btf", "-D", fn + " $params"}).out);
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
    // A function this image lacks (renamed, inlined away) is left out, saying so.
    std::string fn = SplitWords(spec)[0];
    fn = fn.substr(0, fn.find('%'));
    if (Facts().Named(fn).empty()) {
      WARN("not checked on this image: no function " << fn);
      continue;
    }
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
  for (size_t i = 0; i < names.size(); i += 97) {
    // By address too: the CU from .debug_aranges (UnitWindows::UnitDieAt).
    if (const Symbol* symbol = Facts().Function(names[i]))
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
