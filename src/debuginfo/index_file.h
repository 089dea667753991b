// SPDX-License-Identifier: GPL-2.0-or-later
//
// The persistent index of a DWARF file's names, as bytes. In: the functions
// (each instance's DIE offset, flagged when it is an inlined copy), the
// global variables and the units that one walk of the DWARF found. Out: a
// file under the cache directory, named after the build-id, that later runs
// map and search without touching the DWARF.
//
// The file is never trusted: it is used only when its magic, format version,
// build-id, the indexed file's size and mtime, its own length and the seal
// of its header and block table agree, and each block a look-up reads
// only when its hash agrees (CheckedBytes: a warm look-up reads a few
// pages of megabytes, and hashing them all cost a quarter of its time).
// Anything else is a cache miss and the index is rebuilt; a look-up that
// meets a block that fails says so (an error), and its caller rebuilds.
// It is written to a temporary file and renamed into place, so concurrent
// runs see either the old file, the new one, or none. Nothing here knows
// libdw: offsets are plain integers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kprobectl/cache_file.h"
#include "kprobectl/result.h"

namespace kprobectl::dwarf {

// What a cache file must match: the indexed file.
struct IndexKey {
  std::string build_id;  // raw bytes, 1 to 48 of them
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

constexpr uint64_t kInlinedFlag = uint64_t{1} << 63;  // in a function posting
// An inline function's abstract definition, posted only for a name that has
// no code anywhere (every call of it folded away), so that a look-up can say
// so rather than "no function".
constexpr uint64_t kAbstractFlag = uint64_t{1} << 62;
constexpr uint64_t kPostingFlags = kInlinedFlag | kAbstractFlag;

// A frame description entry of .debug_frame: the code it covers, where it is.
struct FrameEntry {
  uint64_t start, end, offset;
};

struct IndexContents {
  // Sorted by name, each list sorted by DIE offset. Function postings carry
  // kInlinedFlag for inlined copies, kAbstractFlag for an abstract-only name.
  std::vector<std::pair<std::string, std::vector<uint64_t>>> functions;
  std::vector<std::pair<std::string, std::vector<uint64_t>>> globals;
  std::vector<uint64_t> units;     // each CU's DIE offset, in file order
  std::vector<FrameEntry> frames;  // sorted by start
  // Source file basename -> the CUs (DIE offsets) whose line tables name it.
  std::vector<std::pair<std::string, std::vector<uint64_t>>> files;
};

// `seal` false: for this run only (IndexView::Trusted), no block table.
std::string SerializeIndex(const IndexKey& key, const IndexContents& contents, bool seal = true);

// A read-only view of serialized index bytes, from a file or from memory.
class IndexView {
 public:
  // Validates `bytes` against `key`; the error says what did not match.
  static Result<std::unique_ptr<IndexView>> FromBytes(std::string bytes, const IndexKey& key);
  static Result<std::unique_ptr<IndexView>> FromFile(const std::string& path, const IndexKey& key);
  // Bytes this run serialized (unsealed): nothing to check but the layout.
  static Result<std::unique_ptr<IndexView>> Trusted(std::string bytes);
  ~IndexView();
  IndexView(const IndexView&) = delete;
  IndexView& operator=(const IndexView&) = delete;

  // Each fails only when what it reads fails its check.
  Result<std::vector<uint64_t>> Functions(std::string_view name) const;
  Result<std::vector<uint64_t>> Globals(std::string_view name) const;
  Result<std::vector<uint64_t>> Files(std::string_view basename) const;
  Result<std::vector<std::string>> FunctionNames() const;
  Result<std::vector<uint64_t>> Units() const;
  // The .debug_frame offset of the FDE that covers `address`.
  Result<std::optional<uint64_t>> FrameFor(uint64_t address) const;

 private:
  struct Record {
    uint32_t name_at, name_size, first, count;
  };
  IndexView() = default;
  static Result<std::unique_ptr<IndexView>> Adopt(CacheBytes bytes, const IndexKey& key, bool trusted);
  Result<void> Validate(const IndexKey& key, bool trusted);
  Result<const unsigned char*> Read(uint64_t offset, uint64_t length) const;
  Result<Record> RecordAt(size_t record) const;
  Result<std::string_view> RecordName(const Record& record) const;
  Result<std::vector<uint64_t>> Find(size_t first_record, size_t count, std::string_view name) const;

  CacheBytes bytes_;
  uint32_t functions_ = 0, globals_ = 0, files_ = 0, units_ = 0, postings_ = 0, frames_ = 0;
  size_t records_at_ = 0, postings_at_ = 0, names_at_ = 0;
  CheckedBytes checked_;
};

// `dir`/<build-id in hex>.idx; written with WriteFileAtomically.
std::string IndexFilePath(const std::string& dir, const IndexKey& key);

}  // namespace kprobectl::dwarf
