// SPDX-License-Identifier: GPL-2.0-or-later
//
// A real module read against its own kernel: Debian's 6.1 dummy.ko as
// /lib/modules has it (stripped: BTF, no DWARF) with -k the same kernel's
// vmlinux (the VM's, fetched by tests/vm/kernel-info). Its split BTF must
// be read over that image's BTF, not over the running kernel's: struct
// net_device is the kernel's, and its members lie elsewhere in another
// kernel (name: 0 in 6.1, 280 in 6.18). The expected offsets are pahole's,
// read from the image's own BTF.
#include <sys/utsname.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The tree the VM's kernel was unpacked into, and its dummy module's two files there.
std::string Tree(const VmKernel& kernel) {
  return kernel.vmlinux.substr(0, kernel.vmlinux.rfind("/usr/lib/debug/boot/"));
}
std::string Stripped(const VmKernel& kernel) {
  return Tree(kernel) + "/lib/modules/" + kernel.version + "/kernel/drivers/net/dummy.ko";
}
std::string Debug(const VmKernel& kernel) {
  return Tree(kernel) + "/usr/lib/debug/lib/modules/" + kernel.version + "/kernel/drivers/net/dummy.ko";
}

VmKernel Kernel() {
  VmKernel kernel = VmKernelOrSkip();
  for (const std::string& file : {Stripped(kernel), Debug(kernel)})
    if (!std::filesystem::exists(file)) FAIL("the VM kernel's tree has no " << file);
  return kernel;
}

CliResult Run(const std::vector<std::string>& args) {
  static ScopedEnv cache{"XDG_CACHE_HOME", FixturePath("vmlinux-cache")};
  return RunKprobectl(args);
}

// Where pahole, reading the image's BTF, puts `member` in struct net_device.
std::string PaholeOffset(const VmKernel& kernel, const std::string& member) {
  std::string layout =
      RunProgram({"/bin/sh", "-c", "pahole -F btf -C net_device '" + kernel.vmlinux + "' 2>/dev/null"});
  for (const std::string& line : SplitLines(layout)) {
    auto words = SplitWords(line);
    // "\tchar name[16]; /* 0 16 */": the member's name ends with ';' (or "[N];").
    for (size_t i = 0; i + 3 < words.size(); ++i)
      if ((words[i] == member + ";" || words[i].starts_with(member + "[")) && words[i + 1] == "/*") return words[i + 2];
  }
  FAIL("pahole shows no net_device." << member << " in " << kernel.vmlinux);
  return {};
}

const std::string kSpec = "dummy_dev_init name=dev->name:string ifindex=dev->ifindex mtu=dev->mtu";

std::string Expected(const VmKernel& kernel) {
  return "p:probe/dummy_dev_init dummy:dummy_dev_init+0 name=+" + PaholeOffset(kernel, "name") +
         "(%di):string ifindex=+" + PaholeOffset(kernel, "ifindex") + "(%di):s32 mtu=+" + PaholeOffset(kernel, "mtu") +
         "(%di):u32\n";
}

}  // namespace

TEST_CASE("vmlinux: a stripped module's BTF is read over its -k image's, at that kernel's offsets") {
  VmKernel kernel = Kernel();
  CliResult btf = Run({"-k", kernel.vmlinux, "-m", Stripped(kernel), "-D", kSpec});
  INFO(btf.err);
  CHECK(btf.status == 0);
  CHECK(btf.out == Expected(kernel));
  // The module's DWARF (its debug package's file) says the same.
  CliResult dwarf = Run({"-k", kernel.vmlinux, "-m", Debug(kernel), "-D", kSpec});
  INFO(dwarf.err);
  CHECK(dwarf.out == btf.out);
}

TEST_CASE("vmlinux: a module of another kernel than the running one is not read over the running kernel's BTF") {
  VmKernel kernel = Kernel();
  utsname u;
  REQUIRE(uname(&u) == 0);
  if (kernel.version == u.release) {
    WARN("not tested: the running kernel is the module's own");
    return;
  }
  CliResult r = Run({"-m", Stripped(kernel), "-D", kSpec});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "kprobectl: error: 'dummy_dev_init' needs debuginfo: '" + Stripped(kernel) +
                     "' has no DWARF debuginfo, and no BTF stands in: the kernel module '" + Stripped(kernel) +
                     "' was built for Linux " + kernel.version + " (its vermagic), and the running kernel is " +
                     u.release +
                     ": its split BTF can be read only over the BTF of the kernel it was built for\n"
                     "  hint: install the kernel's debug package for its modules' DWARF; or name that kernel's image "
                     "with -k (e.g. /usr/lib/debug/boot/vmlinux-" +
                     kernel.version + "), or its BTF with --btf=FILE\n");
  // Asked for (--btf), the BTF's refusal is the error.
  CliResult asked = Run({"-m", Stripped(kernel), "--btf", "-D", kSpec});
  CHECK(asked.err == "kprobectl: error: the kernel module '" + Stripped(kernel) + "' was built for Linux " +
                         kernel.version + " (its vermagic), and the running kernel is " + u.release +
                         ": its split BTF can be read only over the BTF of the kernel it was built for\n"
                         "  hint: name that kernel's image with -k (e.g. /usr/lib/debug/boot/vmlinux-" +
                         kernel.version + "), or its BTF with --btf=FILE\n");
  // Its DWARF needs no base: the definitions are the module's, for its own kernel.
  CHECK(Run({"-m", Debug(kernel), "-D", kSpec}).out == Expected(kernel));
}

TEST_CASE("vmlinux: a module's vermagic is its kernel image's, and another image is refused") {
  VmKernel kernel = Kernel();
  // The fixture kernel_btf says it is 6.1.0-kpfx: not this module's kernel.
  std::string other = FixturePath("kernel_btf");
  CliResult r = Run({"-k", other, "-m", Stripped(kernel), "-D", kSpec});
  CHECK(r.err == "kprobectl: error: the kernel module '" + Stripped(kernel) + "' was built for Linux " +
                     kernel.version + " (its vermagic), and the kernel image '" + other +
                     "' is Linux 6.1.0-kpfx\n  hint: probe it with -k the image of " + kernel.version +
                     " (e.g. /usr/lib/debug/boot/vmlinux-" + kernel.version +
                     "), or probe the module built for 6.1.0-kpfx\n");
}
