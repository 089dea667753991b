// SPDX-License-Identifier: GPL-2.0-or-later
//
// A user-space stack walked through call frame information, as perf's
// --call-graph dwarf walks it: most distributions build without frame
// pointers, so the kernel's own user stack trace (which follows them)
// stops after the first frame. In: what a probe captured when it fired
// (a few registers and the bytes above the stack pointer, as hidden
// fetchargs of the probe), and where each file is mapped in the process.
// Out: the return addresses, innermost first. Each file's CFI (.eh_frame,
// else .debug_frame) is read with libdw, in src/debuginfo/unwind.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kprobectl {

struct CapturedStack {
  std::map<unsigned, uint64_t> registers;  // DWARF register number -> value
  unsigned pc_register = 0;                // which of them is the program counter (DWARF number)
  unsigned sp_register = 0;                // and the stack pointer
  uint64_t stack_start = 0;                // the address `stack` begins at (the stack pointer)
  std::string_view stack;                  // the captured bytes
};

// A file mapped in the process: its path, and its load bias (an address
// in the file is the runtime address minus the bias).
struct LoadedFile {
  std::string path;
  uint64_t bias = 0;
};
using FindLoadedFile = std::function<std::optional<LoadedFile>(uint64_t address)>;

class Unwinder {
 public:
  Unwinder();
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;
  // The program counters of the frames, the probe's own first; it stops
  // where the CFI, the captured bytes or the mapping runs out.
  std::vector<uint64_t> Unwind(const CapturedStack& stack, const FindLoadedFile& find, size_t max_frames = 64);

 private:
  struct File;
  File* Open(const std::string& path);
  std::map<std::string, std::unique_ptr<File>> files_;  // null: no CFI
};

}  // namespace kprobectl
