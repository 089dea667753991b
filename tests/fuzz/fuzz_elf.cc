// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: a binary a user points kprobectl at (seeds: the test
// fixtures), through the CLI's own entry point: -D with variables, vars,
// line and funcs, as `kprobectl -x FILE ...` runs them. libelf and libdw
// read the file: a crash in them on a malformed file is kprobectl's crash.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "kprobectl/cli.h"

namespace {

std::string TempPath() {
  static const std::string path = [] {
    char dir[] = "/tmp/kprobectl-fuzz-elf.XXXXXX";
    KP_FUZZ_CHECK(mkdtemp(dir) != nullptr);
    return std::string(dir) + "/binary";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = TempPath();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  for (std::vector<std::string> args : {std::vector<std::string>{"-D", "compute a b"},
                                        {"vars", "compute"},
                                        {"line", "compute"},
                                        {"funcs"},
                                        {"-D", "main:3"}}) {
    args.insert(args.begin(), {"--no-cache", "-x", path});
    std::ostringstream out, err;
    kprobectl::RunCli(args, out, err);
  }
  unlink(path.c_str());
  return 0;
}
