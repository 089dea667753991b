// SPDX-License-Identifier: GPL-2.0-or-later
//
// A module is read against the kernel it was built for: its split BTF over
// that kernel's BTF (the -k image's .BTF section, the running kernel's only
// when the module's vermagic names it), a module named found among that
// kernel's, and one built for another kernel refused with both named. The
// fixtures are two kernels whose structs differ (kernel_btf "6.1.0-kpfx",
// kernel_btf_b "6.12.0-kpfx": struct inner and struct outer 8 bytes on)
// and a module built for each (tests/fixtures/btf_version.h).
#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/resolve.h"
#include "kprobectl/system_view.h"
#include "kprobectl/target.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// A member of the module's own struct (in: +8), one of a struct both
// kernels have and the module redefines (inner.name.text), and one of a
// struct only the kernel's BTF has whole (outer.id, through dev->owner).
const std::string kSpec = "btf_mod_open text=dev->in->name.text:string id=dev->owner->id";
// What kernel_btf's layout gives, and kernel_btf_b's.
const std::string kLayoutA =
    "p:probe/btf_mod_open kpmod_btf:btf_mod_open+0 text=+0(+8(+8(%di))):string id=+0(+16(%di)):s32\n";
const std::string kLayoutB =
    "p:probe/btf_mod_open kpmod_btf_b:btf_mod_open+0 text=+0(+16(+8(%di))):string id=+8(+16(%di)):s32\n";

// A tree with a running kernel of `release` whose /sys/kernel/btf/vmlinux
// is kernel_btf_b's, and each module under /lib/modules of its own release.
struct RunningTree {
  TempDir root;
  KernelEnv env;
  explicit RunningTree(const std::string& release) {
    env.release = release;
    env.root = root.path();
    std::filesystem::create_directories(root / "sys/kernel/btf");
    std::filesystem::copy_file(FixturePath("kernel_btf_b.btf"), root / "sys/kernel/btf/vmlinux");
    for (const auto& [built_for, file] : {std::pair{"6.1.0-kpfx", "kpmod_btf.ko"}, {"6.12.0-kpfx", "kpmod_btf_b.ko"}}) {
      std::filesystem::create_directories(root / ("lib/modules/" + std::string(built_for) + "/kernel"));
      std::filesystem::copy_file(FixturePath(file), Module(built_for, file));
    }
  }
  std::string Module(const std::string& release, const std::string& file) const {
    return root / ("lib/modules/" + release + "/kernel/" + file);
  }
};

// The view of the tree's running kernel that add and trace read.
SystemView Running(const RunningTree& tree, const Target& target) {
  return ReadSystemView(nullptr, tree.env, target, true);
}

// ELF notes holding GNU build-id `id` (its bytes), as /sys/kernel/notes and
// /sys/module/MOD/notes/.note.gnu.build-id have them.
std::string BuildIdNote(const std::string& id) {
  std::string out;
  for (uint32_t word : {uint32_t{4}, static_cast<uint32_t>(id.size()), uint32_t{3}})
    out.append(reinterpret_cast<const char*>(&word), 4);
  out += std::string("GNU\0", 4) + id;
  out.resize((out.size() + 3) / 4 * 4, '\0');
  return out;
}

TargetRequest BtfRequest(const std::string& module, const std::string& vmlinux = {}) {
  TargetRequest request;
  request.module = module;
  request.vmlinux = vmlinux;
  request.btf = true;  // the modules have DWARF too: set it aside, as a stripped .ko has none
  return request;
}

// The definition of kSpec on `target`, as -D prints it.
std::string Define(Target& target) {
  SystemView system;
  system.features = AllFeatures();
  auto spec = ParseProbeSpec(kSpec);
  REQUIRE(spec);
  auto resolution = Resolve({*spec}, target, system, ResolveOptions{});
  if (!resolution) return "error: " + resolution.error().message;
  EventNamer namer({}, false);
  REQUIRE(NameEvents(*resolution, namer));
  auto defs = Synthesize(*resolution, target);
  REQUIRE(defs);
  std::string out;
  for (const TraceEventDef& def : *defs) out += FormatDefinition(def) + "\n";
  return out;
}

std::string Refusal(const std::vector<std::string>& args) {
  CliResult r = RunKprobectl(args);
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  return r.err;
}

}  // namespace

TEST_CASE("module kernel: a module's split BTF is read over the -k image's, each at its own layout") {
  for (const auto& [kernel, module, expected] :
       {std::tuple{"kernel_btf", "kpmod_btf.ko", kLayoutA}, {"kernel_btf_b", "kpmod_btf_b.ko", kLayoutB}}) {
    CliResult r = RunKprobectl({"-k", FixturePath(kernel), "-m", FixturePath(module), "--btf", "-D", kSpec});
    INFO(r.err);
    CHECK(r.out == expected);
  }
  // The image's own BTF, raw, named with --btf=FILE: the same.
  CliResult raw =
      RunKprobectl({"-m", FixturePath("kpmod_btf_b.ko"), "--btf", FixturePath("kernel_btf_b.btf"), "-D", kSpec});
  CHECK(raw.out == kLayoutB);
}

TEST_CASE("module kernel: a compressed module's split BTF is read as a plain one's, and one without BTF says so") {
  for (const char* module : {"kpmod_btf_xz.ko.xz", "kpmod_btf_zst.ko.zst"}) {
    CliResult r = RunKprobectl({"-k", FixturePath("kernel_btf"), "-m", FixturePath(module), "--btf", "-D", kSpec});
    INFO(r.err);
    std::string name = std::string(module).substr(0, std::string(module).find('.'));
    CHECK(r.out == Replace(kLayoutA, "kpmod_btf:", name + ":"));
  }
  std::string plain = FixturePath("kpmod.ko");
  CHECK(Refusal({"-m", plain, "--btf", FixturePath("kernel_btf.btf"), "-D", "process req"}) ==
        "kprobectl: error: the kernel module '" + plain +
            "' has no .BTF section\n  hint: a kernel built with CONFIG_DEBUG_INFO_BTF_MODULES gives its modules BTF\n");
}

TEST_CASE("module kernel: a module built for another kernel than the -k image is refused, both named") {
  std::string a = FixturePath("kpmod_btf.ko"), image_b = FixturePath("kernel_btf_b");
  std::string expected = "kprobectl: error: the kernel module '" + a +
                         "' was built for Linux 6.1.0-kpfx (its vermagic), and the kernel image '" + image_b +
                         "' is Linux 6.12.0-kpfx\n"
                         "  hint: probe it with -k the image of 6.1.0-kpfx (e.g. "
                         "/usr/lib/debug/boot/vmlinux-6.1.0-kpfx), or probe the module built for 6.12.0-kpfx\n";
  // Through BTF, and through its DWARF too: the probes would be for a kernel it is not built for.
  CHECK(Refusal({"-k", image_b, "-m", a, "--btf", "-D", kSpec}) == expected);
  CHECK(Refusal({"-k", image_b, "-m", a, "-D", "btf_mod_open dev"}) == expected);
  // The same release built with other options is another build.
  std::string preempt = FixturePath("kpmod_btf_preempt.ko"), image_a = FixturePath("kernel_btf");
  CHECK(Refusal({"-k", image_a, "-m", preempt, "-D", "btf_mod_open dev"}) ==
        "kprobectl: error: the kernel module '" + preempt +
            "' was built as '6.1.0-kpfx SMP preempt mod_unload' (its vermagic), and the kernel image '" + image_a +
            "' as '6.1.0-kpfx SMP mod_unload': they are not one build\n"
            "  hint: probe it with -k the image of the kernel it was built with\n");
  // An image that does not say which kernel it is cannot be told to be the module's.
  std::string unnamed = FixturePath("kernel_like");
  CHECK(Refusal({"-k", unnamed, "-m", a, "-D", "btf_mod_open dev"}) ==
        "kprobectl: error: the kernel module '" + a + "' was built for Linux 6.1.0-kpfx, and the kernel image '" +
            unnamed +
            "' does not say which kernel it is (it has neither vermagic nor linux_banner)\n"
            "  hint: -k takes the kernel's image with its debuginfo, e.g. /usr/lib/debug/boot/vmlinux-VERSION\n");
}

TEST_CASE("module kernel: a module without vermagic has its BTF read only over a base named with --btf=FILE") {
  std::string bare = FixturePath("kpmod_btf_bare.ko");
  std::string expected = "kprobectl: error: the kernel module '" + bare +
                         "' has no vermagic in its .modinfo: which kernel it was built for is unknown, and its split "
                         "BTF can be read only over the BTF of the kernel it was built for\n"
                         "  hint: name that kernel's BTF with --btf=FILE\n";
  CHECK(Refusal({"-k", FixturePath("kernel_btf_b"), "-m", bare, "--btf", "-D", kSpec}) == expected);
  RunningTree tree("6.1.0-kpfx");
  auto running = OpenTarget(BtfRequest(bare), tree.env, SearchPaths{});
  REQUIRE_FALSE(running);
  CHECK("kprobectl: error: " + running.error().message + "\n  hint: " + running.error().hint + "\n" == expected);
  // Named, the base is the user's word; its DWARF needs none.
  CliResult named = RunKprobectl({"-m", bare, "--btf", FixturePath("kernel_btf.btf"), "-D", kSpec});
  CHECK(named.out == Replace(kLayoutA, "kpmod_btf:", "kpmod_btf_bare:"));
  CHECK(RunKprobectl({"-k", FixturePath("kernel_btf_b"), "-m", bare, "-D", "btf_mod_open dev->unit"}).out ==
        "p:probe/btf_mod_open kpmod_btf_bare:btf_mod_open+0 unit=+0(%di):s32\n");
}

TEST_CASE("module kernel: the running kernel's BTF is a module's base only when the module was built for it") {
  RunningTree tree("6.12.0-kpfx");
  // Built for it: read over its /sys/kernel/btf/vmlinux, at its layout.
  auto built_for_it = OpenTarget(BtfRequest(FixturePath("kpmod_btf_b.ko")), tree.env, SearchPaths{});
  REQUIRE(built_for_it);
  CHECK(built_for_it->btf->path() == FixturePath("kpmod_btf_b.ko"));
  CHECK(Define(*built_for_it) == kLayoutB);
  // Built for another: refused, not read at the running kernel's layout.
  std::string a = FixturePath("kpmod_btf.ko");
  auto other = OpenTarget(BtfRequest(a), tree.env, SearchPaths{});
  REQUIRE_FALSE(other);
  CHECK(other.error().message == "the kernel module '" + a +
                                     "' was built for Linux 6.1.0-kpfx (its vermagic), and the running kernel is "
                                     "6.12.0-kpfx: its split BTF can be read only over the BTF of the kernel it was "
                                     "built for");
  CHECK(other.error().hint ==
        "name that kernel's image with -k (e.g. /usr/lib/debug/boot/vmlinux-6.1.0-kpfx), or its BTF with --btf=FILE");
  // Without --btf its DWARF answers, which needs no base.
  TargetRequest dwarf = BtfRequest(a);
  dwarf.btf = false;
  auto with_dwarf = OpenTarget(dwarf, tree.env, SearchPaths{});
  REQUIRE(with_dwarf);
  CHECK(with_dwarf->debuginfo);
  // With -k its image, the same module reads right.
  auto paired = OpenTarget(BtfRequest(a, FixturePath("kernel_btf")), tree.env, SearchPaths{});
  REQUIRE(paired);
  CHECK(Define(*paired) == kLayoutA);
}

TEST_CASE("module kernel: a module named is looked for among the -k image's kernel's, not the running one's") {
  RunningTree tree("6.12.0-kpfx");
  auto running = OpenTarget(BtfRequest("kpmod_btf_b"), tree.env, SearchPaths{});
  REQUIRE(running);
  CHECK(running->path == tree.Module("6.12.0-kpfx", "kpmod_btf_b.ko"));
  CHECK(Define(*running) == kLayoutB);
  auto image = OpenTarget(BtfRequest("kpmod_btf", FixturePath("kernel_btf")), tree.env, SearchPaths{});
  REQUIRE(image);
  CHECK(image->path == tree.Module("6.1.0-kpfx", "kpmod_btf.ko"));
  CHECK(Define(*image) == kLayoutA);
  auto missing = OpenTarget(BtfRequest("kpmod_btf_b", FixturePath("kernel_btf")), tree.env, SearchPaths{});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "no module 'kpmod_btf_b' for kernel 6.1.0-kpfx under " + tree.root.path() +
                                       "/usr/lib/debug/lib/modules/6.1.0-kpfx or " + tree.root.path() +
                                       "/lib/modules/6.1.0-kpfx");
}

TEST_CASE("module kernel: probes written to the running kernel must be for it") {
  RunningTree tree("6.12.0-kpfx");
  TargetRequest request;
  request.module = FixturePath("kpmod_btf.ko");
  auto other = OpenTarget(request, tree.env, SearchPaths{});
  REQUIRE(other);
  auto refused = CheckForRunningKernel(*other, Running(tree, *other), true);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "the kernel module '" + FixturePath("kpmod_btf.ko") +
                                       "' was built for Linux 6.1.0-kpfx (its vermagic), and the running kernel is "
                                       "6.12.0-kpfx: probes on it are not probes on the module this kernel loads");
  CHECK(refused.error().hint ==
        "probe the module built for 6.12.0-kpfx (-m NAME finds it under /lib/modules/6.12.0-kpfx)");
  // Through the policy, as add and trace apply it.
  auto spec = ParseProbeSpec("btf_mod_open dev");
  REQUIRE(spec);
  auto resolved = Resolve({*spec}, *other, Running(tree, *other), ResolveOptions{});
  REQUIRE_FALSE(resolved);
  CHECK(resolved.error().message == refused.error().message);

  request.module = FixturePath("kpmod_btf_b.ko");
  auto own = OpenTarget(request, tree.env, SearchPaths{});
  REQUIRE(own);
  CHECK(CheckForRunningKernel(*own, Running(tree, *own), false));
  // Loaded, it must be the file the kernel loaded (-f accepts another).
  REQUIRE(own->image->build_id().size() == 40);
  std::filesystem::create_directories(tree.root / "sys/module/kpmod_btf_b/notes");
  WriteFile(tree.root / "sys/module/kpmod_btf_b/notes/.note.gnu.build-id", BuildIdNote("\xab\xcd"));
  auto another_build = CheckForRunningKernel(*own, Running(tree, *own), false);
  REQUIRE_FALSE(another_build);
  CHECK(another_build.error().message == "'" + FixturePath("kpmod_btf_b.ko") +
                                             "' is not the module kpmod_btf_b the running kernel has loaded: its "
                                             "build-id is " +
                                             own->image->build_id() +
                                             ", the loaded one's (/sys/module/kpmod_btf_b/notes) is abcd");
  CHECK(another_build.error().hint ==
        "give the loaded module's own file or its debuginfo (-m kpmod_btf_b finds them), or add -f to use this file "
        "anyway");
  CHECK(CheckForRunningKernel(*own, Running(tree, *own), true));
  std::string same;
  for (size_t i = 0; i < 40; i += 2)
    same += static_cast<char>(std::stoi(own->image->build_id().substr(i, 2), nullptr, 16));
  WriteFile(tree.root / "sys/module/kpmod_btf_b/notes/.note.gnu.build-id", BuildIdNote(same));
  CHECK(CheckForRunningKernel(*own, Running(tree, *own), false));
  // With -k, that image must be the running kernel's too (-f accepts another).
  request.vmlinux = FixturePath("kernel_btf_b");
  auto paired = OpenTarget(request, tree.env, SearchPaths{});
  REQUIRE(paired);
  REQUIRE_FALSE(paired->kernel_build_id.empty());
  WriteFile(tree.root / "sys/kernel/notes", BuildIdNote("\x01\x23"));
  auto not_running = CheckForRunningKernel(*paired, Running(tree, *paired), false);
  REQUIRE_FALSE(not_running);
  CHECK(not_running.error().message == "'" + FixturePath("kernel_btf_b") + "' is not the running kernel's image: its " +
                                           "build-id is " + paired->kernel_build_id +
                                           ", the running kernel's (/sys/kernel/notes) is 0123");
  CHECK(CheckForRunningKernel(*paired, Running(tree, *paired), true));
  // A module without vermagic says nothing of its kernel: taken as it is.
  request = {};
  request.module = FixturePath("kpmod_btf_bare.ko");
  auto bare = OpenTarget(request, tree.env, SearchPaths{});
  REQUIRE(bare);
  CHECK(CheckForRunningKernel(*bare, Running(tree, *bare), false));
}

TEST_CASE("module kernel: an image's version from its vermagic or banner, a module's from its .modinfo") {
  auto image = ElfImage::Open(FixturePath("kernel_btf_b"));
  REQUIRE(image);
  KernelVersion version = KernelVersionOf(*image);
  CHECK(version.release == "6.12.0-kpfx");
  CHECK(version.vermagic == "6.12.0-kpfx SMP mod_unload ");
  auto banner = ElfImage::Open(FixturePath("kernel_banner"));
  REQUIRE(banner);
  CHECK(KernelVersionOf(*banner).release == "6.1.0-kpfx");
  CHECK(KernelVersionOf(*banner).vermagic.empty());
  // Such an image is checked by its release alone: a module of other options passes.
  CliResult by_release = RunKprobectl(
      {"-k", FixturePath("kernel_banner"), "-m", FixturePath("kpmod_btf_preempt.ko"), "-D", "btf_mod_open dev->unit"});
  INFO(by_release.err);
  CHECK(by_release.out == "p:probe/btf_mod_open kpmod_btf_preempt:btf_mod_open+0 unit=+0(%di):s32\n");
  CHECK(Refusal({"-k", FixturePath("kernel_banner"), "-m", FixturePath("kpmod_btf_b.ko"), "-D", "btf_mod_open dev"}) ==
        "kprobectl: error: the kernel module '" + FixturePath("kpmod_btf_b.ko") +
            "' was built for Linux 6.12.0-kpfx (its vermagic), and the kernel image '" + FixturePath("kernel_banner") +
            "' is Linux 6.1.0-kpfx\n  hint: probe it with -k the image of 6.12.0-kpfx (e.g. "
            "/usr/lib/debug/boot/vmlinux-6.12.0-kpfx), or probe the module built for 6.1.0-kpfx\n");
  auto none = ElfImage::Open(FixturePath("kernel_like"));
  REQUIRE(none);
  CHECK(KernelVersionOf(*none).release.empty());
  using namespace std::string_view_literals;
  KernelVersion module = ModuleVersionOf("license=GPL\0\0name=dummy\0vermagic=6.1.0-56-cloud-amd64 SMP preempt \0"sv);
  CHECK(module.release == "6.1.0-56-cloud-amd64");
  CHECK(module.vermagic == "6.1.0-56-cloud-amd64 SMP preempt ");
  CHECK(ModuleVersionOf("license=GPL\0"sv).vermagic.empty());
  CHECK(ModuleVersionOf("vermagic=6.1"sv).release == "6.1");  // the last string unended
}
