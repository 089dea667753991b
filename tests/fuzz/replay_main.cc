// SPDX-License-Identifier: GPL-2.0-or-later
//
// main() for a fuzz target in builds without libFuzzer: runs the target on
// every file given, and every file of every directory given (the seed
// corpus and the regressions of tests/fuzz/TARGET/), so that what a fuzzer
// once found stays fixed in every build. Exits non-zero if a file is missing.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_target.h"

namespace fs = std::filesystem;

namespace {

void RunFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      std::vector<fs::path> entries;
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) entries.push_back(entry.path());
      std::sort(entries.begin(), entries.end());
      for (const fs::path& p : entries) RunFile(p), ++files;
    } else if (fs::is_regular_file(arg)) {
      RunFile(arg), ++files;
    } else {
      std::cerr << "replay: no such file or directory: " << arg << "\n";
      return 2;
    }
  }
  std::cout << "replay: " << files << " inputs, no crash\n";
  return files ? 0 : 2;
}
