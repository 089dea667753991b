// SPDX-License-Identifier: GPL-2.0-or-later
//
// The BTF source: a fixture's BTF (pahole -J from its DWARF, in its .BTF
// section and as a raw file), a module's split BTF over it, and a real
// kernel's (Linux 6.18's /sys/kernel/btf/vmlinux, tests/data/btf). On the
// fixture, what BTF gives must be what the DWARF gives at the entry; on the
// kernel, the offsets are pahole's for the same BTF.
#include "kprobectl/btf.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "kprobectl/arch.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

CliResult Kernel(const std::vector<std::string>& args, bool btf) {
  std::vector<std::string> all = {"-k", FixturePath("kernel_btf")};
  if (btf) all.push_back("--btf");
  all.insert(all.end(), args.begin(), args.end());
  return RunKprobectl(all);
}

// `kprobectl --btf FILE -D SPEC`: the running kernel's place, FILE's types.
std::string Definition618(const std::string& spec) {
  CliResult r = RunKprobectl({"--btf", FixturePath("vmlinux-6.18.btf"), "-D", spec});
  INFO(spec << ": " << r.err);
  CHECK(r.status == 0);
  return r.out;
}

ArgExpr Expr(const std::string& name) {
  ArgExpr e;
  e.kind = ArgKind::kVariable;
  e.name = name;
  return e;
}

}  // namespace

TEST_CASE("btf: a fixture's BTF gives what its DWARF gives at the entry") {
  // Member chains, bitfields, anonymous union members and a struct in it,
  // arrays and their elements, strings from char arrays and pointers, a
  // typedef chain under const volatile, enums, function pointers, stack
  // arguments past the sixth, typed $retval and $argN.
  for (const char* spec : {"btf_outer o->id o->flag_a o->flag_b o->delta", "btf_outer o->raw o->lo o->hi",
                           "btf_outer o->child->name.text:string o->child->tag:string o->child->name.len",
                           "btf_outer o->sector o->state o->samples[2] o->samples",
                           "btf_outer o->ops->open o->ops->close o->embedded.tag o->embedded.name.len",
                           "btf_outer label:string o->child->tag[3] $params", "btf_pair $params",
                           "btf_pair p.second p.first", "btf_many $params", "btf_state s ops->open",
                           "btf_state%return $retval", "btf_many%return $retval", "btf_outer o->child->tag:x8[4]"}) {
    CliResult dwarf = Kernel({"-D", spec}, false), btf = Kernel({"-D", spec}, true);
    INFO(spec << "\nDWARF: " << dwarf.err << "\nBTF: " << btf.err);
    CHECK(dwarf.status == 0);
    CHECK(btf.out == dwarf.out);
  }
  // The same, pinned: what the kernel is sent.
  CHECK(Kernel({"-D", "btf_outer o->flag_b o->delta o->hi o->sector o->state"}, true).out ==
        "p:probe/btf_outer btf_outer+0 flag_b=+4(%di):b5@3/32 delta=+4(%di):b12@8/32 hi=+12(%di):u32 "
        "sector=+24(%di):u64 state=+32(%di):u32\n");
  CHECK(Kernel({"-D", "btf_many g h:string $arg2 $arg8"}, true).out ==
        "p:probe/btf_many btf_many+0 g=+8(%sp):s64 h=+0(+16(%sp)):string arg2=%si:s64 arg8=+16(%sp):x64\n");
}

TEST_CASE("btf: the raw BTF file and the ELF's .BTF section read alike") {
  std::string spec = "btf_outer o->child->name.text:string o->delta";
  CliResult raw = Kernel({"--btf", FixturePath("kernel_btf.btf"), "-D", spec}, false);
  INFO(raw.err);
  CHECK(raw.out == Kernel({"-D", spec}, true).out);
  CHECK(raw.out == "p:probe/btf_outer btf_outer+0 text=+0(+8(+16(%di))):string delta=+4(%di):b12@8/32\n");
}

TEST_CASE("btf: vars lists the parameters at the entry, and the return value at the return") {
  CHECK(Kernel({"vars", "btf_state"}, true).out ==
        "Available variables at btf_state\n\t@<btf_state+0> (BTF: the parameters at entry)\n"
        "\t\tenum state\ts\n\t\tconst struct ops*\tops\n");
  // A struct in two argument registers, with the members that can be read.
  CHECK(Kernel({"vars", "btf_pair"}, true).out ==
        "Available variables at btf_pair\n\t@<btf_pair+0> (BTF: the parameters at entry)\n\t\tint\tbefore\n"
        "\t\tstruct pair\tp\t(in pieces: p.first p.second)\n\t\tunsigned char\tsmall\n");
  CHECK(Kernel({"vars", "btf_many%return"}, true).out ==
        "Available variables at btf_many%return\n\t@<btf_many+0> (BTF: the return value)\n\t\tblk_t\t$retval\n");
}

TEST_CASE("btf: what BTF cannot answer is refused, saying what can") {
  auto err = [](const std::vector<std::string>& args) {
    CliResult r = Kernel(args, args.front() != "--btf");
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    return r.err;
  };
  // No lines, no locals, no places but the entry, no struct passed in two
  // registers as one value.
  CHECK(err({"-D", "btf_outer:2"}) ==
        "kprobectl: error: 'btf_outer:2' needs the kernel's DWARF: BTF has no lines or source files (--btf sets the "
        "DWARF aside)\n  hint: leave out --btf to use the DWARF\n");
  CHECK(err({"-D", "btf_outer+4 o"}) ==
        "kprobectl: error: invalid argument: BTF knows parameters only at a function's entry, and btf_outer+4 is not "
        "one\n    btf_outer+4 o\n                ^\n  hint: probe FUNC or FUNC%return; other places need the kernel's "
        "DWARF\n");
  CHECK(
      err({"-D", "btf_outer nope"}) ==
      "kprobectl: error: invalid argument: 'btf_outer' has no parameter 'nope' (BTF knows parameters, not locals)\n"
      "    btf_outer nope\n              ^\n  hint: its parameters: o, flags, label; locals need the kernel's DWARF\n");
  CHECK(err({"-D", "btf_outer o->nope"}) ==
        "kprobectl: error: invalid argument: struct outer has no member 'nope'\n    btf_outer o->nope\n"
        "              ^\n  hint: its members: id, flag_a, flag_b, delta, child, sector, state, samples, ops, "
        "embedded\n");
  CHECK(
      err({"-D", "btf_pair p"}) ==
      "kprobectl: error: invalid argument: 'p' is passed in two argument registers (bytes 0-15), and the kernel "
      "fetches one place per argument\n    btf_pair p\n             ^\n  hint: fetch its members: p.first p.second\n");
  CHECK(err({"-D", "btf_outer o->samples:string"}) ==
        "kprobectl: error: invalid argument: 'o->samples' (short int[4]) cannot be read as a string: only char arrays "
        "and char pointers can\n    btf_outer o->samples:string\n              ^\n");
  // --btf FILE must open.
  CHECK(err({"--btf", "/nonexistent.btf", "-D", "btf_outer o"}) ==
        "kprobectl: error: no BTF at /nonexistent.btf (no such file, or no .BTF section)\n"
        "  hint: a kernel built with CONFIG_DEBUG_INFO_BTF has it at /sys/kernel/btf/vmlinux\n");
  CHECK(
      err({"--btf", DataPath("golden/split.txt"), "-D", "btf_outer o"}) ==
      "kprobectl: error: cannot read the BTF of " + DataPath("golden/split.txt") +
          ": it is neither raw BTF nor an ELF file\n  hint: give a raw BTF file or an ELF file with a .BTF section\n");
  // An ELF file's BTF is its architecture's kernel: not the probed one's
  // (here the machine's, x86-64) when they differ.
  CHECK(err({"--btf", FixturePath("arm64/kernel_like"), "-D", "btf_outer o"}) ==
        "kprobectl: error: --btf '" + FixturePath("arm64/kernel_like") +
            "' is an arm64 kernel's, and the kernel probed is x86-64's\n  hint: probe that kernel with -k '" +
            FixturePath("arm64/kernel_like") + "' --btf (its own architecture)\n");
  CliResult user = RunKprobectl({"-x", FixturePath("types"), "--btf", "-D", "main"});
  CHECK(user.status != 0);
  CHECK(user.err ==
        "kprobectl: error: --btf is for kernel probes; -x reads the program's DWARF\n"
        "  hint: leave out --btf\n");
}

TEST_CASE("btf: a module's split BTF names its own types and its kernel's") {
  std::string ko = FixturePath("kpmod_btf.ko");
  CliResult r = RunKprobectl({"-m", ko, "--btf", FixturePath("kernel_btf.btf"), "-D",
                              "btf_mod_open dev->in->name.text:string dev->label:string dev->unit flags dev->owner"});
  INFO(r.err);
  CHECK(r.out ==
        "p:probe/btf_mod_open kpmod_btf:btf_mod_open+0 text=+0(+8(+8(%di))):string label=+24(%di):string "
        "unit=+0(%di):s32 flags=%si:u64 owner=+16(%di):x64\n");
  // Its functions are its own, not its base's.
  r = RunKprobectl({"-m", ko, "--btf", FixturePath("kernel_btf.btf"), "funcs"});
  CHECK(r.out == "btf_mod_open\n");
  // Without its base, split BTF cannot be read.
  r = RunKprobectl({"-m", ko, "--btf", "/nonexistent.btf", "-D", "btf_mod_open dev"});
  CHECK(r.status != 0);
}

TEST_CASE("btf: BtfInfo reads prototypes, slots and return types") {
  auto btf = BtfInfo::Open(FixturePath("kernel_btf.btf"), X86_64Arch());
  REQUIRE(btf);
  const BtfInfo& info = **btf;
  CHECK(info.HasFunction("btf_pair"));
  CHECK_FALSE(info.HasFunction("no_such_function"));
  auto functions = info.Functions();
  CHECK(std::find(functions.begin(), functions.end(), "btf_many") != functions.end());
  auto params = info.Parameters("btf_pair");
  REQUIRE(params);
  REQUIRE(params->size() == 3);
  CHECK((*params)[1].name == "p");
  CHECK((*params)[1].c_type == "struct pair");
  // A 16-byte struct takes two integer slots, fetched member by member:
  // `small` is the 4th argument.
  std::vector<std::string> skipped;
  auto all = info.FetchAll("btf_pair", &skipped);
  REQUIRE(all);
  REQUIRE(all->size() == 4);
  CHECK((*all)[1].name == "p_first");
  CHECK((*all)[1].argument == 2);
  CHECK((*all)[2].name == "p_second");
  CHECK((*all)[2].argument == 3);
  CHECK((*all)[3].name == "small");
  CHECK((*all)[3].argument == 4);
  CHECK(skipped.empty());
  auto fetch = info.Fetch("btf_outer", Expr("label"), true);
  REQUIRE(fetch);
  CHECK(fetch->argument == 3);
  CHECK(fetch->type.IsString());
  auto ret = info.ReturnType("btf_many");
  REQUIRE(ret);
  CHECK(ret->second == "blk_t");
  CHECK(FormatFetchType(ret->first) == "u64");
  CHECK_FALSE(info.Parameters("no_such_function"));
}

TEST_CASE("btf: Linux 6.18's BTF, with the offsets pahole shows for it") {
  // pahole vmlinux-6.18.btf: struct file f_path at 64 (path.dentry +8),
  // dentry d_name at 32 (qstr.name +8); open_how flags at 0; sock_common
  // skc_dport at 12; sk_buff dev at 16, len at 112, pkt_type:3 at 128 bit 0;
  // net_device name at 280; task_struct comm at 1752, pid at 1264.
  CHECK(Definition618("vfs_read file->f_path.dentry->d_name.name:string count buf") ==
        "p:probe/vfs_read vfs_read+0 name=+0(+40(+72(%di))):string count=%dx:u64 buf=%si:x64\n");
  CHECK(Definition618("do_sys_openat2 filename:string how->flags dfd") ==
        "p:probe/do_sys_openat2 do_sys_openat2+0 filename=+0(%si):string flags=+0(%dx):u64 dfd=%di:s32\n");
  CHECK(Definition618("tcp_sendmsg sk->__sk_common.skc_dport size") ==
        "p:probe/tcp_sendmsg tcp_sendmsg+0 skc_dport=+12(%di):u16 size=%dx:u64\n");
  CHECK(Definition618("ip_rcv skb->pkt_type skb->dev->name:string skb->len") ==
        "p:probe/ip_rcv ip_rcv+0 pkt_type=+128(%di):b3@0/8 name=+280(+16(%di)):string len=+112(%di):u32\n");
  CHECK(Definition618("wake_up_process p->comm:string p->pid") ==
        "p:probe/wake_up_process wake_up_process+0 comm=+1752(%di):string pid=+1264(%di):s32\n");
  CHECK(Definition618("hrtimer_start_range_ns $params") ==
        "p:probe/hrtimer_start_range_ns hrtimer_start_range_ns+0 timer=%di:x64 tim=%si:s64 delta_ns=%dx:u64 "
        "mode=%cx:u32\n");
  CHECK(Definition618("vfs_read%return $retval") == "r:probe/vfs_read__return vfs_read+0 retval=$retval:s64\n");
  // symstr names the function an address is, as symbol does: the pointer's
  // value, not a string it points to (file_operations' read_iter at 40).
  CHECK(Definition618("vfs_read op=file->f_op->read_iter:symstr at=file->f_op->read_iter:symbol") ==
        "p:probe/vfs_read vfs_read+0 op=+40(+8(%di)):symstr at=+40(+8(%di)):symbol\n");
}
