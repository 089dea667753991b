// SPDX-License-Identifier: GPL-2.0-or-later
//
// Which index a DwarfInfo uses, chosen at its first name look-up: the cache
// file when it is valid; else, with a cache directory, a full index built
// now (on two threads) and written there; else a scan per name when the
// file allows one, or a full walk kept in memory.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "dwarf_internal.h"
#include "dwarf_windows.h"
#include "kprobectl/cache_file.h"

namespace kprobectl::dwarf {

namespace {

// An index of what was just walked, for this run only. Serialized and read
// back with an empty key, which always matches: the view cannot refuse it.
std::unique_ptr<NameIndex> InMemory(const IndexContents& contents) {
  auto view = IndexView::Trusted(SerializeIndex({}, contents, false));
  return MakeViewIndex(std::move(*view));
}

// Drops this process's view of [begin, end) of a read-only file mapping;
// the next access reads the page cache again.
void Release(void* map, size_t map_size, uint64_t begin, uint64_t end) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  begin = (begin + page - 1) / page * page;
  end = std::min<uint64_t>(end, map_size) / page * page;
  if (end > begin) madvise(static_cast<char*>(map) + begin, end - begin, MADV_DONTNEED);
}

constexpr uint64_t kReleaseBatch = 8 << 20;  // as the unit reader releases

}  // namespace

NameIndex& DwarfInfo::Index() {
  Settle();
  if (!index_) index_ = ChooseIndex();  // a scan or a walk waits for every unit
  return *index_;
}

void DwarfInfo::Settle() {
  if (settled_) return;
  settled_ = true;
  CheckCache();
  // A valid index says where each name's DIEs are: each is read through
  // its unit's window, and no unit before it need be.
  if (!cached_ || !options_.unit_windows || !map_) return;
  if (auto units = cached_->Units())
    windows_ = UnitWindows::Make(fd_, static_cast<const unsigned char*>(map_), map_size_, elf_, std::move(*units));
}

ReadyDwarf DwarfInfo::Ready() {
  Settle();
  return windows_ ? units_.Stop(windows_.get()) : units_.Wait();
}

ReadyDwarf DwarfInfo::ReadyFor(Dwarf_Off last_die) {
  Settle();
  return windows_ ? units_.Stop(windows_.get()) : units_.WaitThrough(last_die);
}

Dwarf_Off DwarfInfo::OffsetOf(Dwarf_Die* die) const { return windows_ ? windows_->Offset(die) : dwarf_dieoffset(die); }

DwarfInfo::Found DwarfInfo::Instances(const std::string& name, size_t max_units) {
  auto found = Index().Functions(name, max_units);
  Dwarf_Off last = 0;
  for (const FunctionInstance& fn : found) last = std::max(last, fn.die);
  return Found{ReadyFor(last), std::move(found)};
}

std::vector<Dwarf_Off> DwarfInfo::Globals(const std::string& name) {
  auto found = Index().Globals(name);
  (void)ReadyFor(found.empty() ? 0 : *std::max_element(found.begin(), found.end()));
  return found;
}

std::optional<Dwarf_Die> DwarfInfo::Global(const std::string& name) {
  auto found = Index().Globals(name);
  if (found.empty()) return std::nullopt;
  return ReadyFor(*std::max_element(found.begin(), found.end())).Die(found.front());
}

std::vector<Dwarf_Off> DwarfInfo::UnitsWithFile(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') + 1);
  NameIndex& index = Index();
  if (index.KnowsFiles()) {
    auto units = index.UnitsWithFile(base);
    (void)ReadyFor(units.empty() ? 0 : *std::max_element(units.begin(), units.end()));
    return units;
  }
  // No index of files: each CU's line program header says (a few hundred
  // bytes each, where libdw would decode every row).
  // Every unit in file order: through the whole file's handle, which reads
  // them so (a window each would cost more).
  ReadyDwarf dwarf = Ready();
  std::vector<Dwarf_Off> out;
  uint64_t released = 0;
  for (Dwarf_Off unit : index.Units()) {
    Dwarf_Die cu;
    units_.ReadThrough(unit);
    if (!dwarf_offdie(dwarf.get(), unit, &cu)) continue;
    auto files = UnitFiles(&cu, line_sections_ ? &*line_sections_ : nullptr);
    if (std::binary_search(files.begin(), files.end(), base)) out.push_back(unit);
    // Each CU DIE read maps the pages around it: let them go as we pass.
    if (unit - released >= kReleaseBatch) {
      ReleaseInfo(released, unit);
      released = unit;
    }
  }
  ReleaseInfo(released, ~uint64_t{0});
  return out;
}

void DwarfInfo::ReleaseInfo(uint64_t begin, uint64_t end) {
  if (!map_ || !info_section_) return;  // only a mapping of the file this object made
  end = std::min(end, info_section_->size);
  if (end > begin) Release(map_, map_size_, info_section_->offset + begin, info_section_->offset + end);
}

std::vector<Dwarf_Off> DwarfInfo::Units() {
  (void)Ready();
  return Index().Units();
}

// Whether an index built now could be kept: else building it would cost
// every run what a scan costs once.
bool DwarfInfo::CacheWritable() {
  std::error_code ec;
  std::filesystem::create_directories(options_.cache_dir, ec);
  if (ec || access(options_.cache_dir.c_str(), W_OK) != 0) {
    status_.problem = "cannot write the cache directory '" + options_.cache_dir +
                      "': " + (ec ? ec.message() : std::string(std::strerror(errno))) +
                      "; names found by a scan instead";
    return false;
  }
  return true;
}

void DwarfInfo::CheckCache() {
  if (options_.cache_dir.empty()) return;
  if (key_.build_id.empty()) {
    status_.problem = "the file has no build-id to key a cache by";
    return;
  }
  status_.file = IndexFilePath(options_.cache_dir, key_);
  if (access(status_.file.c_str(), F_OK) != 0) return;
  auto view = IndexView::FromFile(status_.file, key_);
  if (view)
    cached_ = std::move(*view);
  else
    status_.problem = status_.file + ": " + view.error().message + "; rebuilt";
}

IndexContents DwarfInfo::WalkAll() {
  ReadyDwarf dwarf = Ready();
  std::vector<Dwarf_Off> units;
  for (const UnitSpan& unit : units_.All(dwarf)) units.push_back(unit.die);
  std::vector<Dwarf*> handles{dwarf.get()};
  // A second handle over the same mapping, for a second thread.
  Elf* elf2 = nullptr;
  Dwarf* dwarf2 = nullptr;
  unsigned cores = std::thread::hardware_concurrency();
  if (map_ && units.size() >= 64 && cores > 1) {
    elf2 = OpenElf(map_, map_size_);
    if (elf2) dwarf2 = dwarf_begin_elf(elf2, DWARF_C_READ, nullptr);
    if (dwarf2) handles.push_back(dwarf2);
  }
  // The walk reads every page of .debug_info: let those behind both
  // threads go, as ReadUnits does.
  uint64_t released = 0;
  auto done_below = [&](Dwarf_Off die) {
    // `die` is a CU DIE: its unit starts a header before it.
    uint64_t below = die == ~Dwarf_Off{0} ? die : die - std::min<Dwarf_Off>(die, 64);
    if (below > released && below - released >= kReleaseBatch) {
      ReleaseInfo(released, below);
      released = below;
    }
    if (die == ~Dwarf_Off{0}) ReleaseInfo(released, die);
  };
  IndexContents contents =
      WalkUnits(handles, units, options_.progress, line_sections_ ? &*line_sections_ : nullptr, done_below);
  if (elf_) contents.frames = ReadFrameTable(elf_);
  if (dwarf2) dwarf_end(dwarf2);
  CloseElf(elf2);
  return contents;
}

std::optional<ScanInput> DwarfInfo::ScanInputs() {
  if (!map_ || !elf_) return std::nullopt;
  if (IsRelocatable(elf_)) return std::nullopt;  // strp values live in relocations
  auto info = FindSection(elf_, ".debug_info");
  auto str = FindSection(elf_, ".debug_str");
  auto abbrev = FindSection(elf_, ".debug_abbrev");
  if (!info || !str || !abbrev || info->compressed || str->compressed || abbrev->compressed) return std::nullopt;
  ready_ = Ready();
  const std::vector<UnitSpan>& units = units_.All(*ready_);
  if (units_.dwarf64(*ready_)) return std::nullopt;
  auto allowed = AbbrevsAllowScan(fd_, abbrev->raw);
  if (!allowed || !*allowed) return std::nullopt;
  ScanInput input;
  input.dwarf = &*ready_;
  input.fd = fd_;
  input.info = info->raw;
  input.str = str->raw;
  input.units = units;
  input.full_walk = [this] { return InMemory(WalkAll()); };
  return input;
}

std::unique_ptr<NameIndex> DwarfInfo::BuildIndex() {
  IndexContents contents = WalkAll();
  if (auto written = WriteFileAtomically(status_.file, SerializeIndex(key_, contents)); !written)
    status_.problem = written.error().message;
  status_.use = IndexStatus::kCacheBuilt;
  return InMemory(contents);
}

std::unique_ptr<NameIndex> DwarfInfo::ChooseIndex() {
  if (cached_) {
    status_.use = IndexStatus::kCacheRead;
    return MakeViewIndex(std::move(cached_), [this] {
      status_.problem = status_.file + ": corrupt (a block's hash); rebuilt";
      return BuildIndex();
    });
  }
  if (!status_.file.empty() && !CacheWritable()) status_.file.clear();  // no cache: as --no-cache
  if (!status_.file.empty()) return BuildIndex();
  if (auto input = ScanInputs()) {
    status_.use = IndexStatus::kScan;
    return MakeScanIndex(std::move(*input));
  }
  status_.use = IndexStatus::kWalk;
  return InMemory(WalkAll());
}

}  // namespace kprobectl::dwarf
