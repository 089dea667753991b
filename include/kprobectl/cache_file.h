// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the persistent caches (the debuginfo index, the symbol index) share:
// a fast hash to check a file's every byte, a read-only mapping of a file,
// and a write that readers never see half done (a temporary file beside the
// target, renamed into place). In: paths and bytes. Out: bytes or errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kprobectl/result.h"

namespace kprobectl {

// 64 bits of hash (four interleaved multiply-rotate lanes: fast enough to
// check a whole cache file on every run).
uint64_t Hash64(const void* data, size_t size, uint64_t seed = 0);

// The hash a cache file holds of itself: its first `header_size` bytes,
// with the 8 at `hash_at` (where the hash is kept) read as zero, then the rest.
uint64_t FileHash64(const unsigned char* data, size_t size, size_t header_size, size_t hash_at);

// Lower-case hex of raw bytes (a build-id, for file names).
std::string HexOf(std::string_view bytes);

// A whole file mapped read-only, its pages read in at once (a cache file is
// hashed whole as soon as it is opened).
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);
  const unsigned char* data() const { return static_cast<const unsigned char*>(map_.get()); }
  size_t size() const { return size_; }
  std::shared_ptr<const void> keep() const { return map_; }

 private:
  std::shared_ptr<const void> map_;
  size_t size_ = 0;
};

// Creates the directory as needed, writes a temporary file beside `path`
// and renames it into place.
Result<void> WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace kprobectl
