// SPDX-License-Identifier: GPL-2.0-or-later
#include "dwarf_units.h"

#include "dwarf_windows.h"

namespace kprobectl::dwarf {

namespace {

constexpr uint64_t kReleaseBatch = 8 << 20;

}  // namespace

Dwarf_Die ReadyDwarf::Die(Dwarf_Off offset) const {
  Dwarf_Die die;
  if (windows_ && windows_->Die(offset, &die)) return die;
  if (reader_) reader_->ReadThrough(offset);
  dwarf_offdie(dwarf_, offset, &die);
  return die;
}

bool ReadyDwarf::UnitAt(uint64_t address, Dwarf_Die* cu) const {
  // With windows, the address ranges' table gives the CU DIE's offset
  // alone, read as Die reads it, where dwarf_addrdie would intern every
  // unit before it through the whole file's handle.
  if (auto die = windows_ ? windows_->UnitDieAt(address) : std::nullopt) {
    if (windows_->Die(*die, cu)) return true;
    if (reader_) reader_->ReadThrough(*die);
    return dwarf_offdie(dwarf_, *die, cu) != nullptr;
  }
  if (dwarf_addrdie(dwarf_, address, cu)) return true;
  // libdw 0.188 finds a unit by address only through .debug_aranges, which
  // Go does not write, nor clang by default: each unit's own ranges say.
  Dwarf_Off offset = 0, next = 0;
  size_t header = 0;
  while (dwarf_nextcu(dwarf_, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
    if (reader_) reader_->ReadThrough(offset + header);
    if (dwarf_offdie(dwarf_, offset + header, cu) && dwarf_haspc(cu, address) == 1) return true;
    offset = next;
  }
  return false;
}

Dwarf_Off ReadyDwarf::Offset(Dwarf_Die* die) const { return windows_ ? windows_->Offset(die) : dwarf_dieoffset(die); }

Dwarf_Die ReadyDwarf::CuOf(Dwarf_Die* die) const {
  Dwarf_Die cu;
  dwarf_diecu(die, &cu, nullptr, nullptr);
  return cu;
}

UnitReader::UnitReader(Dwarf* dwarf, std::function<void(uint64_t, uint64_t)> release)
    : dwarf_(dwarf), release_(std::move(release)) {}

void UnitReader::Start() {
  thread_ = std::thread([this] { Read(); });
}

UnitReader::~UnitReader() {
  if (thread_.joinable()) thread_.join();
}

ReadyDwarf UnitReader::Wait() {
  if (thread_.joinable()) thread_.join();
  return ReadyDwarf(dwarf_, nullptr, nullptr);
}

ReadyDwarf UnitReader::WaitThrough(Dwarf_Off last_die) {
  if (thread_.joinable()) {
    limit_.store(last_die);
    thread_.join();
  }
  return ReadyDwarf(dwarf_, nullptr, nullptr);
}

ReadyDwarf UnitReader::Stop(UnitWindows* windows) {
  ReadyDwarf ready = WaitThrough(0);
  ready.windows_ = windows;
  ready.reader_ = this;
  return ready;
}

void UnitReader::ReadThrough(Dwarf_Off die) {
  if (done_ || next_unit_ > die) return;
  limit_.store(die);
  Read();
}

const std::vector<UnitSpan>& UnitReader::All(const ReadyDwarf&) {
  limit_.store(~Dwarf_Off{0});
  Read();
  return units_;
}

void UnitReader::Read() {
  if (done_) return;
  Dwarf_Off next;
  size_t header_size;
  uint8_t offset_size = 4;
  bool stopped = false;
  while (dwarf_nextcu(dwarf_, next_unit_, &next, &header_size, nullptr, nullptr, &offset_size) == 0) {
    if (next_unit_ > limit_.load(std::memory_order_relaxed)) {
      stopped = true;
      break;
    }
    Dwarf_Die cu;
    // dwarf_offdie makes libdw intern the unit now, in order.
    if (dwarf_offdie(dwarf_, next_unit_ + header_size, &cu)) units_.push_back({next_unit_, dwarf_dieoffset(&cu)});
    if (offset_size != 4) dwarf64_ = true;
    if (release_ && next_unit_ - released_ >= kReleaseBatch) {
      release_(released_, next_unit_);
      released_ = next_unit_;
    }
    next_unit_ = next;
  }
  if (release_) release_(released_, next_unit_);
  released_ = next_unit_;
  done_ = !stopped;
}

}  // namespace kprobectl::dwarf
