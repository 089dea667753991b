// SPDX-License-Identifier: GPL-2.0-or-later
//
// Golden CLI output for the DWARF fixtures, driven by data files:
// tests/data/golden/FIXTURE.txt holds commands ("> ARGS", run as
// `kprobectl -x FIXTURE ARGS`, where ARGS after the first word is one
// argument) each followed by the exact output expected. @BIN@ stands for the
// fixture's path and @SRC@ for the directory of the fixture sources.
//
// Each file is checked three times, since the answers must not depend on
// how names were found: with --no-cache (a scan per name), with an empty
// cache directory (the first command builds the index, the others read it),
// and with that index file corrupted (detected, rebuilt).
#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

void CheckGoldenOnce(const std::string& fixture, const std::vector<std::string>& options) {
  std::string bin = FixturePath(fixture);
  std::string src = DataPath("../fixtures");
  src = src.substr(0, src.size() - std::string("/data/../fixtures").size()) + "/fixtures";
  auto lines = SplitLines(ReadFile(DataPath("golden/" + fixture + ".txt")));
  REQUIRE_FALSE(lines.empty());
  size_t checked = 0;
  for (size_t i = 0; i < lines.size();) {
    if (!lines[i].starts_with("> ")) {
      ++i;
      continue;
    }
    std::string command = lines[i].substr(2);
    std::string expected;
    for (++i; i < lines.size() && !lines[i].starts_with("> "); ++i) expected += lines[i] + "\n";
    size_t space = command.find(' ');
    // kernel_* fixtures stand in for a kernel image: -k instead of -x.
    bool kernel = fixture.substr(fixture.rfind('/') + 1).starts_with("kernel");
    std::vector<std::string> args = options;
    for (std::string arg : {kernel ? "-k" : "-x", bin.c_str()}) args.push_back(arg);
    args.push_back(command.substr(0, space));
    if (space != std::string::npos) args.push_back(command.substr(space + 1));
    INFO("kprobectl " << Join(options, " ") << " -x " << fixture << " " << command);
    auto result = RunKprobectl(args);
    CHECK(result.err.empty());
    CHECK(result.status == 0);
    CHECK(Replace(Replace(result.out, bin, "@BIN@"), src, "@SRC@") == expected);
    ++checked;
  }
  CHECK(checked > 5);
}

void CheckGolden(const std::string& fixture) {
  CheckGoldenOnce(fixture, {"--no-cache"});
  TempDir cache;
  ScopedEnv env("XDG_CACHE_HOME", cache.path());
  CheckGoldenOnce(fixture, {});
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache.path()))
    if (entry.is_regular_file()) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  // A flip in the middle: the same answers, whether or not the commands read
  // the block it is in (each block is checked when read, not the whole file
  // on every run; a large index, Rust's, has blocks these commands never read).
  std::string bytes = ReadFile(files[0]);
  bytes[bytes.size() / 2] ^= 0x40;
  WriteFile(files[0], bytes);
  CheckGoldenOnce(fixture, {});
  // A flip in the header, checked on every open: the same answers, the index
  // rebuilt and rewritten.
  bytes = ReadFile(files[0]);
  bytes[8] ^= 0x40;
  WriteFile(files[0], bytes);
  CheckGoldenOnce(fixture, {});
  bool rewritten = ReadFile(files[0]) != bytes;
  CHECK(rewritten);
}

// A file without a GNU build-id (Go writes its own) has no index cache:
// each run scans, with or without a cache directory, and leaves none.
void CheckGoldenWithoutBuildId(const std::string& fixture) {
  CheckGoldenOnce(fixture, {"--no-cache"});
  TempDir cache;
  ScopedEnv env("XDG_CACHE_HOME", cache.path());
  CheckGoldenOnce(fixture, {});
  CHECK(std::filesystem::recursive_directory_iterator(cache.path()) == std::filesystem::recursive_directory_iterator());
}

}  // namespace

TEST_CASE("golden definitions, listings and variables: records -O0") { CheckGolden("records_O0"); }
TEST_CASE("golden definitions, listings and variables: records -O2") { CheckGolden("records_O2"); }
// Hot/cold parts, split parts inlined back, $params at inlined copies.
TEST_CASE("golden definitions, listings and variables: split functions") { CheckGolden("split"); }
// Variables located through memory: a load and offsets after a register.
TEST_CASE("golden definitions, listings and variables: locations through memory") { CheckGolden("deref"); }
// An inline function's own lines, not those of the callers its copies are in.
TEST_CASE("golden definitions, listings and variables: a function's own lines") { CheckGolden("own_lines"); }
// Structs split over registers and stack slots (DW_OP_piece): their members.
TEST_CASE("golden definitions, listings and variables: structs in pieces") { CheckGolden("pieces"); }
TEST_CASE("golden definitions, listings and variables: split functions in a kernel image") {
  CheckGolden("kernel_split");
}
TEST_CASE("golden kernel definitions from an image (-k): SYMBOL+OFF, _text+OFF, @SYMBOL") {
  CheckGolden("kernel_like");
}
// The same sources built for arm64: its registers, the AAPCS64's argument
// slots, its frame (the CFA in sp), and a kernel image's patchable entry.
TEST_CASE("golden arm64: records -O0") { CheckGolden("arm64/records_O0"); }
TEST_CASE("golden arm64: records -O2") { CheckGolden("arm64/records_O2"); }
TEST_CASE("golden arm64: a kernel image with ftrace's patchable entry") { CheckGolden("arm64/kernel_like"); }
// Go (Debian's go 1.19) and Rust (rustc 1.63): names as each language
// writes them, listings from Go's entry rows, variables in pieces.
TEST_CASE("golden Go: funcs, line and vars, optimised and not") {
  CheckGoldenWithoutBuildId("gofx");
  CheckGoldenWithoutBuildId("gofx_noopt");
}
TEST_CASE("golden Rust: funcs, line and vars, O0, O2 and v0 mangling") {
  CheckGolden("rsfx_O0");
  CheckGolden("rsfx_O2");
  CheckGolden("rsfx_v0");
}
