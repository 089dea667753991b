// SPDX-License-Identifier: GPL-2.0-or-later
//
// The whole CLI, in-process, against a prepared running system: RunCli is
// given a KernelEnv whose /proc, /sys and tracefs are a test's directory
// (a kernel of 6.12's tracefs README, the BTF fixture as
// /sys/kernel/btf/vmlinux, a kallsyms of its functions), so the paths that
// read the running kernel are tested here rather than only in the VM.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "kprobectl/cli.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// A running kernel without DWARF: its BTF, kallsyms and tracefs.
struct RunningTree {
  TempDir root;
  TempDir tracefs;
  KernelEnv env;
  RunningTree() {
    env.release = "6.12.0-kptree";
    env.machine = "x86_64";
    env.root = root.path();
    std::filesystem::create_directories(root / "sys/kernel/btf");
    std::filesystem::copy_file(FixturePath("kernel_btf.btf"), root / "sys/kernel/btf/vmlinux");
    std::filesystem::create_directories(root / "proc");
    WriteFile(root / "proc/kallsyms",
              "ffffffff81000000 T _text\n"
              "ffffffff81001000 T btf_pair\n"
              "ffffffff81001100 T btf_outer\n"
              "ffffffff81001200 T btf_state\n"
              "ffffffff81002000 T _etext\n");
    WriteFile(tracefs / "README", ReadFile(DataPath("readme-linux-6.12.txt")));
    WriteFile(tracefs / "kprobe_events", "");
    WriteFile(tracefs / "uprobe_events", "");
    WriteFile(tracefs / "dynamic_events", "");
    WriteFile(tracefs / "error_log", "");
  }
  CliResult Run(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--tracefs", tracefs.path()});
    std::ostringstream out, err;
    CliResult r;
    r.status = RunCli(args, out, err, env);
    r.out = out.str();
    r.err = err.str();
    return r;
  }
};

}  // namespace

TEST_CASE("running tree: -D reads the prepared kernel's BTF and kallsyms, never this machine's") {
  RunningTree tree;
  // The same BTF read as a -k image's gives the same fetches; the running
  // kernel's probe is placed by its symbol, as kallsyms names it.
  CliResult running = tree.Run({"-D", "btf_pair $params"});
  INFO(running.err);
  CHECK(running.status == 0);
  CHECK(running.err.empty());
  CliResult image = RunKprobectl({"-k", FixturePath("kernel_btf"), "--btf", "-D", "btf_pair $params"});
  CHECK(image.status == 0);
  CHECK(running.out == image.out);
  CHECK(running.out == "p:probe/btf_pair btf_pair+0 before=%di:s32 p_first=%si:s64 p_second=%dx:s64 small=%cx:u8\n");
}

TEST_CASE("running tree: a function the prepared kernel does not have is named, with its nearest names") {
  RunningTree tree;
  CliResult r = tree.Run({"-D", "btf_pairs"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "kprobectl: error: no function 'btf_pairs' in the running kernel 6.12.0-kptree (/proc/kallsyms)\n"
        "  hint: similar names: btf_pair\n");
}
