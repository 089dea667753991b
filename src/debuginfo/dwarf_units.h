// SPDX-License-Identifier: GPL-2.0-or-later
//
// Readiness as a type. libdw reaches a unit only through all those before
// it, and interning their headers is what a first look-up costs; UnitReader
// does it on a thread of its own, started with the object, while the
// caller reads the ELF symbols. libdw 0.188 is not thread-safe on a shared
// handle, so nothing may use the handle while that thread runs: a
// ReadyDwarf is the permission to, and only UnitReader makes one, after
// its thread has ended (all units read, or stopped after the last unit a
// look-up needs; later units are then interned by libdw as they are
// reached). Holding one means: the handle is this thread's.
#pragma once

#include <elfutils/libdw.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace kprobectl::dwarf {

struct UnitSpan {
  uint64_t start;  // the unit header's offset in .debug_info
  Dwarf_Off die;   // its CU DIE
};

class UnitWindows;
class UnitReader;

class ReadyDwarf {
 public:
  // The whole file's handle (for what goes by address: dwarf_addrdie).
  Dwarf* get() const { return dwarf_; }
  // The DIE at a .debug_info offset: through its unit's window where
  // there are windows (dwarf_windows.h), else the whole file's handle.
  Dwarf_Die Die(Dwarf_Off offset) const;
  // A DIE's .debug_info offset, whichever handle it was read through.
  Dwarf_Off Offset(Dwarf_Die* die) const;
  // The CU whose code holds `address` (dwarf_addrdie), read as Die reads.
  bool UnitAt(uint64_t address, Dwarf_Die* cu) const;
  Dwarf_Die CuOf(Dwarf_Die* die) const;

 private:
  friend class UnitReader;
  ReadyDwarf(Dwarf* dwarf, UnitWindows* windows, UnitReader* reader)
      : dwarf_(dwarf), windows_(windows), reader_(reader) {}
  Dwarf* dwarf_;
  UnitWindows* windows_;
  UnitReader* reader_;  // with windows: reads the units a DIE outside them needs
};

class UnitReader {
 public:
  // `release(begin, end)` may drop [begin, end) of .debug_info (section
  // offsets) from memory: the headers' pages, once passed. Until Start(),
  // no thread: the handle is ready at once.
  UnitReader(Dwarf* dwarf, std::function<void(uint64_t, uint64_t)> release);
  void Start();
  ~UnitReader();
  UnitReader(const UnitReader&) = delete;
  UnitReader& operator=(const UnitReader&) = delete;

  // Waits for the thread to read every unit it will.
  ReadyDwarf Wait();
  // Lets the thread stop after the unit that holds `last_die`, and waits.
  ReadyDwarf WaitThrough(Dwarf_Off last_die);
  // Stops the thread after the unit it is reading: each unit is read
  // through its window (null: none), and the whole file's handle interns
  // units only as something asks for them.
  ReadyDwarf Stop(UnitWindows* windows);
  // Every unit, in file order; those the thread left are read now.
  const std::vector<UnitSpan>& All(const ReadyDwarf& ready);
  // Reads (on this thread, the thread stopped) through the unit that holds
  // `die`, letting the pages passed go as the thread does.
  void ReadThrough(Dwarf_Off die);
  // Whether a unit read so far is DWARF64.
  bool dwarf64(const ReadyDwarf&) const { return dwarf64_; }

  // For setting up and tearing down, before the thread starts or after it
  // ended: nothing else.
  Dwarf* handle_unread() const { return dwarf_; }

 private:
  void Read();

  Dwarf* dwarf_;
  std::function<void(uint64_t, uint64_t)> release_;
  std::thread thread_;
  std::vector<UnitSpan> units_;
  Dwarf_Off next_unit_ = 0;  // where Read goes on
  uint64_t released_ = 0;    // .debug_info below this is released
  bool done_ = false;        // every unit read
  bool dwarf64_ = false;
  std::atomic<Dwarf_Off> limit_{~Dwarf_Off{0}};  // Read stops past the unit holding this
};

}  // namespace kprobectl::dwarf
