// SPDX-License-Identifier: GPL-2.0-or-later
//
// The running kernel's files, in a temporary tree: /sys/kernel/notes,
// debuginfo places, the kprobe blacklist, available_filter_functions,
// /proc/kallsyms.
#include "kprobectl/kernel_image.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"
#include "kprobectl/target.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::string Note(uint32_t type, const std::string& name, const std::string& desc) {
  std::string out;
  auto word = [&](uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  word(static_cast<uint32_t>(name.size() + 1));
  word(static_cast<uint32_t>(desc.size()));
  word(type);
  out += name;
  out += '\0';
  while (out.size() % 4) out += '\0';
  out += desc;
  while (out.size() % 4) out += '\0';
  return out;
}

std::string Bytes(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace

TEST_CASE("the build-id in /sys/kernel/notes") {
  std::string id = "0123456789abcdef0123456789abcdef01234567";
  CHECK(BuildIdFromNotes(Note(1, "Xen", "abcd") + Note(3, "GNU", Bytes(id))) == id);
  CHECK(BuildIdFromNotes(Note(1, "Xen", "abcd")).empty());
  CHECK(BuildIdFromNotes("").empty());
}

TEST_CASE("where the running kernel's debuginfo is looked for") {
  KernelEnv env;
  env.release = "6.1.0-56-cloud-amd64";
  CHECK(
      DebuginfoCandidates(env, "abcdef") ==
      std::vector<std::string>{"/usr/lib/debug/boot/vmlinux-6.1.0-56-cloud-amd64",
                               "/usr/lib/debug/lib/modules/6.1.0-56-cloud-amd64/vmlinux",
                               "/boot/vmlinux-6.1.0-56-cloud-amd64", "/lib/modules/6.1.0-56-cloud-amd64/build/vmlinux",
                               "/lib/modules/6.1.0-56-cloud-amd64/vmlinux", "/usr/lib/debug/.build-id/ab/cdef.debug"});
}

TEST_CASE("finding the debuginfo, with the build-id checked") {
  TempDir root;
  KernelEnv env;
  env.release = "6.1.0-test";
  env.root = root.path();
  env.notes = "/notes";
  std::string image_path = FixturePath("kernel_like");
  auto image = ElfImage::Open(image_path);
  REQUIRE(image);
  WriteFile(root / "notes", Note(3, "GNU", Bytes(image->build_id())));

  auto none = FindKernelDebuginfo(env, false);
  REQUIRE_FALSE(none);
  CHECK(
      Replace(none.error().message, root.path(), "ROOT") ==
      "no debuginfo for the running kernel 6.1.0-test; looked at ROOT/usr/lib/debug/boot/vmlinux-6.1.0-test, "
      "ROOT/usr/lib/debug/lib/modules/6.1.0-test/vmlinux, ROOT/boot/vmlinux-6.1.0-test, "
      "ROOT/lib/modules/6.1.0-test/build/vmlinux, ROOT/lib/modules/6.1.0-test/vmlinux, ROOT/usr/lib/debug/.build-id/" +
          image->build_id().substr(0, 2) + "/" + image->build_id().substr(2) + ".debug");
  CHECK(none.error().hint ==
        "install linux-image-6.1.0-test-dbg (Debian, Ubuntu: -dbgsym) or kernel-debuginfo (Fedora), set "
        "DEBUGINFOD_URLS, or name the image with -k VMLINUX");

  std::filesystem::create_directories(root / "boot");
  std::filesystem::copy_file(image_path, root / "boot/vmlinux-6.1.0-test");
  CHECK(*FindKernelDebuginfo(env, false) == root / "boot/vmlinux-6.1.0-test");

  WriteFile(root / "notes", Note(3, "GNU", Bytes("00112233445566778899aabbccddeeff00112233")));
  auto mismatch = FindKernelDebuginfo(env, false);
  REQUIRE_FALSE(mismatch);
  CHECK(mismatch.error().message == "'" + (root / "boot/vmlinux-6.1.0-test") +
                                        "' is not the running kernel's image: its build-id is " + image->build_id() +
                                        ", the running kernel's (/notes) is 00112233445566778899aabbccddeeff00112233");
  CHECK(mismatch.error().hint == "install the debuginfo of kernel 6.1.0-test, or add -f to use this file anyway");
  CHECK(*FindKernelDebuginfo(env, true) == root / "boot/vmlinux-6.1.0-test");
}

TEST_CASE("the kprobe blacklist from debugfs, KASLR's slide taken off") {
  auto list = KprobeBlacklist::FromDebugfs(
      "0xffffffff87800990-0xffffffff878009b0\tasm_exc_divide_error\n"
      "0xffffffff86a31000-0xffffffff86a31100\tdo_int3\n"
      "0xffffffffc0001000-0xffffffffc0001010\tsome_mod_fn [some_mod]\n",
      0x5a00000);
  REQUIRE(list.Find(0xffffffff81e00990));
  CHECK(list.Find(0xffffffff81e00990)->name == "asm_exc_divide_error");
  CHECK(list.Find(0xffffffff81031050)->name == "do_int3");
  CHECK_FALSE(list.Find(0xffffffff81031100));
  CHECK(list.Find(0xffffffffba601008)->name == "some_mod_fn [some_mod]");
}

TEST_CASE("traceable functions, kallsyms names and the KASLR slide") {
  auto traceable = TraceableFunctions::FromAvailable("vfs_read\nvfs_write\next4_sync_file [ext4]\n");
  ElfSymbol read, trace;
  read.name = "vfs_read";
  trace.name = "t_show";
  CHECK(traceable.known());
  CHECK(traceable.Traceable(read));
  CHECK_FALSE(traceable.Traceable(trace));
  CHECK(TraceableFunctions().Traceable(trace));  // unknown: no refusal

  auto names = KallsymsNames::Parse(
      "ffffffff81000000 T _text\nffffffff81001000 t umask_show\n"
      "ffffffff81002000 t umask_show\nffffffff81003000 d some_data\n"
      "ffffffffc0000000 t umask_show\t[mod]\n");
  CHECK(names.Count("umask_show") == 3);
  CHECK(names.Count("_text") == 1);
  CHECK(names.Count("some_data") == 0);

  auto image = ElfImage::Open(FixturePath("kernel_like"));
  REQUIRE(image);
  const ElfSymbol* text = image->Find("_text");
  REQUIRE(text);
  char line[64];
  std::snprintf(line, sizeof line, "%llx T _text\n", static_cast<unsigned long long>(text->value + 0x2000000));
  CHECK(*KallsymsNames::Parse(line).Slide(*image) == 0x2000000);
  CHECK_FALSE(KallsymsNames::Parse("0000000000000000 T _text\n").Slide(*image));  // hidden addresses
  CHECK(KernelTextSymbol(*image) == "_text");

  // arm64's Linux 6.1 has no _text in kallsyms: the slide comes from _stext.
  auto arm64 = ElfImage::Open(FixturePath("arm64/kernel_like"));
  REQUIRE(arm64);
  const ElfSymbol* stext = arm64->Find("_stext");
  REQUIRE(stext);
  CHECK(stext->value == arm64->Find("_text")->value + 16);
  CHECK(KernelTextSymbol(*arm64) == "_stext");
  std::snprintf(line, sizeof line, "%llx T _stext\n", static_cast<unsigned long long>(stext->value + 0x3000000));
  CHECK(*KallsymsNames::Parse(line).Slide(*arm64) == 0x3000000);
  CHECK_FALSE(KallsymsNames::Parse(line).Slide(*image));  // x86-64's kernel_like has no _stext
}

TEST_CASE("offline, the image says what is blacklisted and traceable") {
  auto image = ElfImage::Open(FixturePath("kernel_like"));
  REQUIRE(image);
  auto blacklist = KprobeBlacklist::FromImage(*image, X86_64Arch());
  REQUIRE(blacklist);
  CHECK(blacklist->empty());  // a user program has no such sections
  auto traceable = TraceableFunctions::FromImage(*image, X86_64Arch());
  REQUIRE(traceable);
  CHECK_FALSE(traceable->known());  // nor __mcount_loc: then nothing is refused
}

TEST_CASE("modules: by name under the release's trees, debuginfo first") {
  CHECK(ModuleName("/lib/modules/6.1/kernel/fs/nls/nls-utf8.ko.xz") == "nls_utf8");
  CHECK(ModuleName("ext4") == "ext4");
  TempDir root;
  KernelEnv env;
  env.release = "6.1.0-test";
  env.root = root.path();
  std::filesystem::create_directories(root / "lib/modules/6.1.0-test/kernel/fs/nls");
  std::filesystem::create_directories(root / "usr/lib/debug/lib/modules/6.1.0-test/kernel/drivers/net");
  WriteFile(root / "lib/modules/6.1.0-test/kernel/fs/nls/nls-utf8.ko.zst", "x");
  WriteFile(root / "lib/modules/6.1.0-test/kernel/drivers_dummy.ko", "x");
  WriteFile(root / "usr/lib/debug/lib/modules/6.1.0-test/kernel/drivers/net/dummy.ko", "x");
  CHECK(*FindKernelModule(env, "nls_utf8") == root / "lib/modules/6.1.0-test/kernel/fs/nls/nls-utf8.ko.zst");
  CHECK(*FindKernelModule(env, "dummy") == root / "usr/lib/debug/lib/modules/6.1.0-test/kernel/drivers/net/dummy.ko");
  auto missing = FindKernelModule(env, "veth");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "no module 'veth' for kernel 6.1.0-test under " + root.path() +
                                       "/usr/lib/debug/lib/modules/6.1.0-test or " + root.path() +
                                       "/lib/modules/6.1.0-test");
}

TEST_CASE("modules: MOD:SYMBOL+OFF definitions with DWARF, from plain and compressed files") {
  for (const char* file : {"kpmod.ko", "kpmod_xz.ko.xz", "kpmod_zst.ko.zst"}) {
    INFO(file);
    std::string module = std::string(file).substr(0, std::string(file).find('.'));
    auto r = RunKprobectl({"-m", FixturePath(file), "-D", "process req->id factor", "-D", "tally x", "-D",
                           "summarize records_total", "-D", "process%return $retval"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out == "p:probe/process " + module +
                       ":process+0 id=+0(%di):s32 factor=%si:s32\n"
                       "p:probe/tally " +
                       module +
                       ":tally+0 x=%di:s32\n"
                       "p:probe/summarize " +
                       module +
                       ":summarize+0 records_total=@records_total:s64\n"
                       "r:probe/process__return " +
                       module + ":process+0 retval=$retval:s32\n");
  }
}

TEST_CASE("a weak definition another file overrides is no place to probe: no symbol holds its code") {
  // weak_default.c's weak_allowed: the linker kept its code and DWARF, not
  // its symbol; kallsyms cannot name it and nothing calls it.
  std::string image = FixturePath("kernel_weak");
  std::string left_out = "kprobectl: left out weak_allowed of " + FixtureSourceDir() +
                         "/weak_default.c: no symbol holds its code at 0x401120: a definition the linker replaced (a "
                         "weak one another file overrides), which nothing calls\n";
  struct Row {
    std::string spec, out;
  } rows[] = {
      {"weak_allowed $params", "p:probe/weak_allowed weak_allowed+0 src=%di:x64 size=%si:u64\n"},
      {"weak_allowed%return $retval", "r:probe/weak_allowed__return weak_allowed+0 retval=$retval:s32\n"},
      {"weak_allowed:1", "p:probe/weak_allowed_L1 weak_allowed+0\n"},
  };
  for (const Row& row : rows) {
    INFO(row.spec);
    auto r = RunKprobectl({"--no-cache", "-k", image, "-D", row.spec});
    CHECK(r.status == 0);
    CHECK(r.out == row.out);  // the symbol's code, not the replaced copy's (_text+...)
    CHECK(r.err == left_out);
  }
  // Its caller has a symbol; an address the user writes is probed as asked.
  CHECK(RunKprobectl({"--no-cache", "-k", image, "-D", "weak_caller"}).err.empty());
  auto raw = RunKprobectl({"--no-cache", "-k", image, "-D", "0x401120"});
  CHECK(raw.status == 0);
  CHECK(raw.out == "p:probe/weak_allowed _text+10\n");
  auto vars = RunKprobectl({"--no-cache", "-k", image, "vars", "weak_allowed"});
  CHECK(
      vars.out ==
      "Available variables at weak_allowed\n\t@<weak_allowed+0>\n\t\tconst void*\tsrc\n\t\tlong unsigned int\tsize\n");
  CHECK(vars.err == left_out);
}

TEST_CASE("the kprobe blacklist: probes refused with the reason, vars lists what is there and says so") {
  std::string image = FixturePath("kernel_blacklist");
  for (std::string spec : {"die_body $params", "die_body%return $retval", "die_body err"}) {
    INFO(spec);
    auto r = RunKprobectl({"--no-cache", "-k", image, "-D", spec});
    CHECK(r.status != 0);
    CHECK(r.out.empty());
    CHECK(r.err ==
          "kprobectl: error: 'die_body' is on the kernel's kprobe blacklist (die_body): the kernel refuses probes "
          "there, which could recurse or break its entry code\n"
          "  hint: probe a function that calls it, or one it calls\n");
  }
  CHECK(RunKprobectl({"--no-cache", "-k", image, "-D", "die_caller $params"}).status == 0);
  // An assembly entry point, no function of the symbol table or the DWARF:
  // the blacklist is why, not "no function" (perf's test_adding_blacklisted
  // takes the kernel's first blacklisted names, asm_exc_* on x86).
  auto entry = RunKprobectl({"--no-cache", "-k", image, "-D", "asm_exc_fixture"});
  CHECK(entry.status == 1);
  CHECK(entry.err ==
        "kprobectl: error: 'asm_exc_fixture' is on the kernel's kprobe blacklist (.entry_text): the kernel refuses "
        "probes there, which could recurse or break its entry code\n"
        "  hint: probe a function that calls it, or one it calls\n");
  auto vars = RunKprobectl({"--no-cache", "-k", image, "vars", "die_body"});
  CHECK(vars.status == 0);
  CHECK(vars.out == "Available variables at die_body\n\t@<die_body+0>\n\t\tconst char*\tstr\n\t\tlong int\terr\n");
  CHECK(vars.err == "kprobectl: a probe at die_body of " + FixtureSourceDir() +
                        "/blacklisted.c would be refused: 'die_body' is on the kernel's kprobe blacklist (die_body): "
                        "the kernel refuses probes there, which could recurse or break its entry code\n");
  CHECK(RunKprobectl({"--no-cache", "-k", image, "vars", "die_caller"}).err.empty());
}

TEST_CASE("modules: a module not loaded yet is probed, its probes wait for it, but fprobes cannot") {
  TargetRequest request;
  request.module = FixturePath("kpmod.ko");
  auto target = OpenTarget(request, KernelEnv{}, SearchPaths{});
  REQUIRE(target);
  SystemView system;
  system.features = AllFeatures();
  system.running = true;  // for this machine's kernel, which has no kpmod
  auto spec = ParseProbeSpec("process req->id");
  REQUIRE(spec);
  auto waiting = Resolve({*spec}, *target, system, ResolveOptions{});
  REQUIRE(waiting);
  CHECK(waiting->left_out ==
        std::vector<std::string>{"module kpmod is not loaded: its probes wait for it, and fire from when it loads "
                                 "(its init function included)"});
  EventNamer namer({}, false);
  REQUIRE(NameEvents(*waiting, namer));
  auto defs = Synthesize(*waiting, *target);
  REQUIRE(defs);
  CHECK(FormatDefinition(defs->front()) == "p:probe/process kpmod:process+0 id=+0(%di):s32");
  ResolveOptions fprobe;
  fprobe.fprobe = true;
  auto refused = Resolve({*spec}, *target, system, fprobe);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "module kpmod is not loaded, and only a kprobe waits for a module to load");
  system.loaded_modules.insert("kpmod");
  auto loaded = Resolve({*spec}, *target, system, ResolveOptions{});
  REQUIRE(loaded);
  CHECK(loaded->left_out.empty());
}
