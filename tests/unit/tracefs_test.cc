// SPDX-License-Identifier: GPL-2.0-or-later
#include <catch2/catch.hpp>
#include <map>

#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/strings.h"
#include "kprobectl/tracefs_dir.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

TEST_CASE("tracefs is found from the mount table") {
  std::string tracefs =
      "22 27 0:21 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
      "38 22 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:16 - tracefs tracefs rw\n";
  CHECK(TracefsFromMountinfo(tracefs) == "/sys/kernel/tracing");
  std::string debugfs = "37 22 0:7 / /sys/kernel/debug rw,relatime shared:15 - debugfs debugfs rw\n";
  CHECK(TracefsFromMountinfo(debugfs) == "/sys/kernel/debug/tracing");
  CHECK(TracefsFromMountinfo(debugfs + tracefs) == "/sys/kernel/tracing");
  CHECK(TracefsFromMountinfo("40 22 0:12 / /mnt/my\\040trace rw - tracefs nodev rw\n") == "/mnt/my trace");
  CHECK(TracefsFromMountinfo("22 27 0:21 / /sys rw - sysfs sysfs rw\n").empty());
}

TEST_CASE("the --tracefs option overrides the search, and must exist") {
  TempDir dir;
  LocateOptions options;
  options.override_dir = dir.path();
  CHECK(*LocateTracefs(options) == dir.path());
  options.override_dir = dir / "missing";
  auto missing = LocateTracefs(options);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "--tracefs '" + dir.path() + "/missing' is not a directory");
}

TEST_CASE("without tracefs and without the right to mount it, say what to run") {
  TempDir dir;
  WriteFile(dir / "mountinfo", "22 27 0:21 / /sys rw - sysfs sysfs rw\n");
  LocateOptions options;
  options.mountinfo_path = dir / "mountinfo";
  options.may_mount = false;
  auto result = LocateTracefs(options);
  REQUIRE_FALSE(result);
  CHECK(result.error().message == "tracefs is not mounted");
  CHECK(result.error().hint ==
        "as root, run: mount -t tracefs nodev /sys/kernel/tracing (or give its place with --tracefs DIR)");
}

TEST_CASE("features of a kernel with uprobes but no kprobes (this project's build machine)") {
  std::string readme = ReadFile(DataPath("readme-linux-6.18-no-kprobes.txt"));
  REQUIRE_FALSE(readme.empty());
  KernelFeatures f = ParseFeatures(readme, false, true);
  CHECK_FALSE(f.kprobe_events);
  CHECK(f.uprobe_events);
  CHECK(f.arg_n);
  CHECK(f.retprobe_args);
  CHECK(f.user_deref);
  CHECK(f.immediates);
  CHECK(f.ustring);
  CHECK(f.symstr);
  CHECK(f.bitfields);
  CHECK(f.arrays);
  CHECK(f.dentry_types);
  CHECK(f.comm);
  CHECK(f.stack_n);
  CHECK_FALSE(f.kretprobe_suffix);  // its place line is only in kernels with kprobe_events
  auto refused = RequireProbeKind(f, ProbeKind::kKernel);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "this kernel has no kprobe_events (CONFIG_KPROBE_EVENTS)");
  CHECK(refused.error().hint ==
        "probe a user-space program with -x BINARY, or boot a kernel built with CONFIG_KPROBES=y and "
        "CONFIG_KPROBE_EVENTS=y");
  CHECK(RequireProbeKind(f, ProbeKind::kUser));
}

TEST_CASE("an old README lacks the newer fetch types, and they are refused") {
  KernelFeatures old = ParseFeatures("type: s8/16/32/64, u8/16/32/64, x8/16/32/64, string", true, true);
  auto ustring = RequireFetchType(old, ProbeKind::kKernel, *ParseFetchType("ustring"), "ustring");
  REQUIRE_FALSE(ustring);
  CHECK(ustring.error().message == "this kernel does not support the type 'ustring' (ustring, Linux 5.5)");
  CHECK_FALSE(RequireFetchType(old, ProbeKind::kKernel, *ParseFetchType("b1@0/8"), "b1@0/8"));
  CHECK_FALSE(RequireFetchType(old, ProbeKind::kKernel, *ParseFetchType("u8[2]"), "u8[2]"));
  CHECK(RequireFetchType(old, ProbeKind::kKernel, *ParseFetchType("string"), "string"));
  auto user_symstr = RequireFetchType(AllFeatures(), ProbeKind::kUser, *ParseFetchType("symstr"), "symstr");
  REQUIRE_FALSE(user_symstr);
  CHECK(user_symstr.error().message == "type 'symstr' is for kernel probes; user probes cannot use it");
}

TEST_CASE("error_log: the entry for our command, with its caret") {
  std::string log = ReadFile(DataPath("error_log-uprobe.txt"));
  auto entry = FindErrorLogEntry(log, "p:tst/b /tmp/my-app:0x1139 x=%di:string");
  REQUIRE(entry);
  CHECK(*entry ==
        "String accepts only memory argument\n"
        "    p:tst/b /tmp/my-app:0x1139 x=%di:string\n"
        "                                     ^");
  CHECK_FALSE(FindErrorLogEntry(log, "p:tst/zz /tmp/my-app:0x1139"));
  CHECK_FALSE(FindErrorLogEntry("", "p:tst/b x"));
}

TEST_CASE("profiles: hits, and misses for kprobes") {
  auto user = ParseProfile("  /tmp/demo probe_demo/compute                               3\n", ProbeKind::kUser);
  REQUIRE(user.contains("probe_demo/compute"));
  CHECK(user["probe_demo/compute"].hits == 3);
  CHECK_FALSE(user["probe_demo/compute"].misses);
  auto kernel = ParseProfile("  probe/vfs_read__return      120       2\n", ProbeKind::kKernel);
  CHECK(kernel["probe/vfs_read__return"].hits == 120);
  CHECK(*kernel["probe/vfs_read__return"].misses == 2);
}

TEST_CASE("TracefsDir reads, appends and lists a real directory") {
  TempDir dir;
  TracefsDir fs(dir.path());
  WriteFile(dir / "uprobe_events", "");
  REQUIRE(fs.Append("uprobe_events", "a\n"));
  REQUIRE(fs.Append("uprobe_events", "b\n"));
  CHECK(*fs.Read("uprobe_events") == "a\nb\n");
  REQUIRE(fs.Write("uprobe_events", "c\n"));
  CHECK(*fs.Read("uprobe_events") == "c\n");
  REQUIRE(fs.MakeDirectory("instances"));
  REQUIRE(fs.MakeDirectory("instances/x"));
  CHECK(*fs.List("instances") == std::vector<std::string>{"x"});
  REQUIRE(fs.RemoveDirectory("instances/x"));
  CHECK(fs.List("instances")->empty());
  auto missing = fs.Read("nope");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "cannot open " + dir.path() + "/nope: No such file or directory");
}

namespace {

// What the kernel does with writes to uprobe_events, in memory: definitions
// are kept (or rejected with an error_log entry when `reject` says so), "-:"
// lines remove them, and each event gets an enable file.
class FakeKernel : public TracefsDir {
 public:
  explicit FakeKernel(std::function<bool(const std::string&)> reject, bool log_errors = true)
      : TracefsDir("/fake"), reject_(std::move(reject)), log_errors_(log_errors) {
    files_["README"] = "uprobe_events";
    files_["uprobe_events"] = "";
    files_["error_log"] = "";
  }
  bool Exists(std::string_view path) const override { return files_.contains(std::string(path)); }
  Result<std::string> Read(std::string_view path) const override {
    auto it = files_.find(std::string(path));
    if (it == files_.end()) return Fail("no " + std::string(path));
    return it->second;
  }
  Result<void> Append(std::string_view path, std::string_view data) const override {
    if (path != "uprobe_events") return Fail("unexpected append");
    std::string line(Trim(data));
    std::string& events = files_["uprobe_events"];
    if (line.starts_with("-:")) {
      std::string name = line.substr(2);
      std::string kept;
      bool found = false;
      for (const std::string& l : SplitLines(events)) {
        if (l.find(":" + name + " ") != std::string::npos)
          found = true;
        else
          kept += l + "\n";
      }
      if (!found) return Fail("cannot write to /fake/uprobe_events: No such file or directory");
      events = kept;
      files_.erase("events/" + name + "/enable");
      return {};
    }
    if (reject_(line)) {
      if (log_errors_)
        files_["error_log"] += "[  1.000000] trace_uprobe: error: Invalid fetch argument\n  Command: " + line +
                               "\n                              ^\n";
      return Fail("cannot write to /fake/uprobe_events: Invalid argument");
    }
    events += line + "\n";
    std::string name = SplitWords(line)[0].substr(2);
    files_["events/" + name + "/enable"] = "0\n";
    ++writes_;
    return {};
  }
  Result<void> Write(std::string_view path, std::string_view data) const override {
    files_[std::string(path)] = std::string(data);
    return {};
  }
  std::string& File(const std::string& path) { return files_[path]; }
  int writes() const { return writes_; }

 private:
  mutable std::map<std::string, std::string> files_;
  mutable int writes_ = 0;
  std::function<bool(const std::string&)> reject_;
  bool log_errors_;
};

TraceEventDef UserDef(const std::string& event, const std::string& args = "") {
  auto def =
      ParseDefinition("p:kpt/" + event + " /bin/true:0x1000" + (args.empty() ? "" : " " + args), ProbeKind::kUser);
  REQUIRE(def);
  return *def;
}

}  // namespace

TEST_CASE("adding is all or nothing: a rejected definition takes back the others") {
  FakeKernel kernel([](const std::string& line) { return line.find("bad=") != std::string::npos; });
  kernel.File("uprobe_events") = "p:other/keep /bin/true:0x0000000000000010\n";
  std::vector<std::string> log;
  ProbeEvents events(kernel, [&](std::string_view line) { log.emplace_back(line); });
  auto result = events.Add({UserDef("one"), UserDef("two"), UserDef("three", "bad=%di")});
  REQUIRE_FALSE(result);
  CHECK(result.error().message ==
        "the kernel rejected the probe definition: Invalid fetch argument\n"
        "    p:kpt/three /bin/true:0x1000 bad=%di\n"
        "                       ^");
  CHECK(kernel.writes() == 2);
  CHECK(kernel.File("uprobe_events") == "p:other/keep /bin/true:0x0000000000000010\n");
  CHECK(log == std::vector<std::string>{"write /fake/uprobe_events: p:kpt/one /bin/true:0x1000",
                                        "write /fake/uprobe_events: p:kpt/two /bin/true:0x1000",
                                        "write /fake/uprobe_events: p:kpt/three /bin/true:0x1000 bad=%di",
                                        "write /fake/uprobe_events: -:kpt/two",
                                        "write /fake/uprobe_events: -:kpt/one"});
}

TEST_CASE("a rejection without an error_log entry still names the definition and the errno") {
  FakeKernel kernel([](const std::string&) { return true; }, /*log_errors=*/false);
  auto result = ProbeEvents(kernel).Add({UserDef("one")});
  REQUIRE_FALSE(result);
  CHECK(result.error().message ==
        "the kernel rejected the probe definition\n"
        "    p:kpt/one /bin/true:0x1000\n"
        "  (cannot write to /fake/uprobe_events: Invalid argument)");
}

TEST_CASE("listing, names, enabled state and removal") {
  FakeKernel kernel([](const std::string&) { return false; });
  ProbeEvents events(kernel);
  REQUIRE(events.Add({UserDef("one", "a=%di"), UserDef("two")}));
  auto listed = events.List();
  REQUIRE(listed);
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0] == UserDef("one", "a=%di"));
  CHECK(*events.Names() == std::set<std::string>{"kpt/one", "kpt/two"});
  CHECK(events.EnabledIn(UserDef("one"))->empty());
  kernel.File("events/kpt/one/enable") = "1\n";
  CHECK(*events.EnabledIn(UserDef("one")) == std::vector<std::string>{""});
  REQUIRE(events.Disable(UserDef("one"), {""}));
  CHECK(kernel.File("events/kpt/one/enable") == "0");
  REQUIRE(events.Remove(UserDef("one")));
  CHECK(*events.Names() == std::set<std::string>{"kpt/two"});
  auto gone = events.Remove(UserDef("one"));
  REQUIRE_FALSE(gone);
  CHECK(gone.error().message ==
        "cannot remove kpt:one: cannot write to /fake/uprobe_events: No such file or directory");
}

TEST_CASE("features of Debian 13's 6.12 kernel: fprobes, tracepoint probes, BTF arguments") {
  std::string readme = ReadFile(DataPath("kernels/6.12/README"));
  REQUIRE_FALSE(readme.empty());
  KernelFeatures f = ParseFeatures(readme, true, true);
  CHECK(f.fprobe_events);
  CHECK(f.tprobe_events);
  CHECK(f.btf_args);
  CHECK(f.ref_ctr_offset);
  CHECK(f.dentry_types);
  CHECK(f.symstr);
  KernelFeatures old = ParseFeatures(ReadFile(DataPath("readme-linux-6.18-no-kprobes.txt")), false, true);
  CHECK_FALSE(old.fprobe_events);  // no kprobes: the kprobe/fprobe place lines are absent
}

TEST_CASE("fprobes and tracepoint probes are written to and listed from dynamic_events") {
  TempDir dir;
  TracefsDir fs(dir.path());
  // dynamic_events repeats kprobes and holds kinds that are not ours.
  WriteFile(dir / "kprobe_events", "p:kpt/k vfs_read+0\n");
  WriteFile(dir / "dynamic_events",
            "p:kpt/k vfs_read+0\ns:synthetic/wakeup pid_t pid\nt:kpt/t sched_switch prev=prev\n");
  ProbeEvents events(fs);
  auto fprobe = ParseDefinition("f:kpt/f vfs_read%return ret=$retval", ProbeKind::kKernel);
  REQUIRE(fprobe);
  REQUIRE(events.Add({*fprobe}));
  CHECK(ReadFile(dir / "dynamic_events") ==
        "p:kpt/k vfs_read+0\ns:synthetic/wakeup pid_t pid\nt:kpt/t sched_switch prev=prev\nf:kpt/f vfs_read%return "
        "ret=$retval\n");
  CHECK(ReadFile(dir / "kprobe_events") == "p:kpt/k vfs_read+0\n");
  auto listed = events.List();
  REQUIRE(listed);
  std::vector<std::string> names;
  for (const TraceEventDef& def : *listed) names.push_back(def.FullName() + " " + EventsFileOf(def).data());
  CHECK(names == std::vector<std::string>{"kpt:k kprobe_events", "kpt:t dynamic_events", "kpt:f dynamic_events"});
  REQUIRE(events.Remove(*fprobe));
  CHECK(ReadFile(dir / "dynamic_events") ==
        "p:kpt/k vfs_read+0\ns:synthetic/wakeup pid_t pid\nt:kpt/t sched_switch prev=prev\nf:kpt/f vfs_read%return "
        "ret=$retval\n-:kpt/f\n");
}

namespace {

// The features a README gives, by name, in KernelFeatures' order.
std::string FeatureNames(const KernelFeatures& f) {
  std::vector<std::pair<const char*, bool>> all = {{"kprobe_events", f.kprobe_events},
                                                   {"uprobe_events", f.uprobe_events},
                                                   {"%return", f.kretprobe_suffix},
                                                   {"r[maxactive]", f.kprobe_maxactive},
                                                   {"$argN", f.arg_n},
                                                   {"$argN@return", f.retprobe_args},
                                                   {"+u", f.user_deref},
                                                   {"\\imm", f.immediates},
                                                   {"ustring", f.ustring},
                                                   {"symstr", f.symstr},
                                                   {"bitfields", f.bitfields},
                                                   {"arrays", f.arrays},
                                                   {"%pd/%pD", f.dentry_types},
                                                   {"$comm", f.comm},
                                                   {"$stackN", f.stack_n},
                                                   {"f:", f.fprobe_events},
                                                   {"t:", f.tprobe_events},
                                                   {"btf-args", f.btf_args},
                                                   {"ref_ctr_offset", f.ref_ctr_offset},
                                                   {"e:", f.eprobe_listed}};
  std::string out;
  for (const auto& [name, on] : all)
    if (on) out += (out.empty() ? "" : " ") + std::string(name);
  return out;
}

KernelFeatures KernelReadme(const std::string& version) {
  std::string readme = ReadFile(DataPath("kernels/" + version + "/README"));
  REQUIRE_FALSE(readme.empty());
  return ParseFeatures(readme, true, true);
}

}  // namespace

// Each README as the VM's kernel gave it (tests/data/kernels/VERSION; the
// build in its release file): what kprobectl takes from it, whole.
TEST_CASE("features of the VM's kernels, from their READMEs: 5.10, 6.1, 6.12, 7.3") {
  std::map<std::string, std::string> seen;
  for (const char* version : {"5.10", "6.1", "6.12", "7.3"}) seen[version] = FeatureNames(KernelReadme(version));
  std::string common = "kprobe_events uprobe_events %return r[maxactive] $argN";
  std::string v6_12 = common +
                      " $argN@return +u \\imm ustring symstr bitfields arrays %pd/%pD $comm $stackN f: t: btf-args "
                      "ref_ctr_offset e:";
  CHECK(seen == std::map<std::string, std::string>{
                    {"5.10", common + " +u \\imm ustring bitfields arrays $comm $stackN ref_ctr_offset"},
                    // symstr came with 6.2, and to 6.1.43 with a fix that needed it.
                    {"6.1", common + " +u \\imm ustring symstr bitfields arrays $comm $stackN ref_ctr_offset e:"},
                    {"6.12", v6_12},
                    {"7.3", v6_12},
                });
}

TEST_CASE("Linux 5.10 refuses what came after it, naming the first kernel that has it") {
  KernelFeatures f = KernelReadme("5.10");
  std::vector<std::string> said;
  for (const char* type : {"symstr", "%pd", "%pD", "ustring", "b3@2/8", "u8[4]"}) {
    auto ok = RequireFetchType(f, ProbeKind::kKernel, *ParseFetchType(type), type);
    said.push_back(ok ? std::string(type) + ": taken" : ok.error().message);
  }
  CHECK(said == std::vector<std::string>{
                    "this kernel does not support the type 'symstr' (symstr, Linux 6.2)",
                    "this kernel does not support the type '%pd' (%pd/%pD, Linux 6.10)",
                    "this kernel does not support the type '%pD' (%pd/%pD, Linux 6.10)",
                    "ustring: taken",
                    "b3@2/8: taken",
                    "u8[4]: taken",
                });
}
