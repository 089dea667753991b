// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the persistent caches (the debuginfo index, the symbol index, the BTF
// index) share: a fast hash, a file read as it is used, its blocks
// checked as they are read, and a write that readers never see half done (a
// temporary file beside the target, renamed into place). In: paths and
// bytes. Out: bytes or errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

// 64 bits of hash (four interleaved multiply-rotate lanes: fast on a block
// of a cache file, and on a name).
uint64_t Hash64(const void* data, size_t size, uint64_t seed = 0);

// Lower-case hex of raw bytes (a build-id, for file names).
std::string HexOf(std::string_view bytes);

// A cache file read a page at a time as it is used (pread into memory of
// its own), never mapped: a warm command reads a few pages of a file of
// megabytes, and a mapping made it resident by whole page-cache folios (a
// file just written sits in folios of up to 2 MB, which a fault maps
// whole): 8 MB of a BTF look-up's 15. A page read once stays, and the file
// stays open while the object lives. Not thread-safe (nor is CheckedBytes).
class LazyFile {
 public:
  static Result<std::shared_ptr<const LazyFile>> Open(const std::string& path);
  ~LazyFile();
  LazyFile(const LazyFile&) = delete;
  LazyFile& operator=(const LazyFile&) = delete;
  size_t size() const { return size_; }
  // [offset, offset + length), its pages read in as needed; null past the
  // end or when the file cannot be read.
  const unsigned char* Read(uint64_t offset, uint64_t length) const;

 private:
  LazyFile() = default;
  int fd_ = -1;
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
  mutable std::vector<uint64_t> loaded_;  // a bit per page read in
};

// A cache file checked block by block as it is read, not whole on every run:
// a warm command reads a few pages of a file of megabytes, and hashing all
// of it cost more than the command (a quarter of a warm DWARF look-up).
// The file is a payload (its header first) followed by a table of the hash
// of each block of it after the header: the payload's part in each of the
// file's kCheckBlock-byte pages (so a block read is a page read, not two),
// the header's page from the header's end; the header holds, at
// `hash_at`, the seal: a hash of the header (that field read as zero) and
// of the table.
// Opening checks the length and the seal; each read checks the blocks it
// touches that no earlier read checked. A block that fails makes the read
// fail, and the caller treats the file as a cache miss from then on.
constexpr size_t kCheckBlock = 4096;

// Appends the block table to `bytes` (the payload) and writes the seal.
void SealBlocks(std::string& bytes, size_t header_size, size_t hash_at);

class CheckedBytes {
 public:
  CheckedBytes() = default;
  // `data` (`size` bytes) as SealBlocks left it over a payload of `payload`
  // bytes (as the header says: the seal then vouches for that too).
  static Result<CheckedBytes> Open(const unsigned char* data, size_t size, size_t payload, size_t header_size,
                                   size_t hash_at);
  // The same over a file read as it is used (its header already read by
  // the caller, to find `payload`).
  static Result<CheckedBytes> Open(std::shared_ptr<const LazyFile> file, size_t payload, size_t header_size,
                                   size_t hash_at);
  // Bytes built by this process: nothing to check.
  static CheckedBytes Trusted(const unsigned char* data, size_t payload);
  // A file a cache refers to rather than copies (`size` bytes at `data`),
  // checked against `table`: HashBlocks' hashes of it when the cache was
  // built, kept in the cache (whose own check vouches for them), which
  // must outlive this.
  static CheckedBytes Against(const unsigned char* data, size_t size, const unsigned char* table);
  // [offset, offset + length) of the payload, once each block it touches
  // has matched its hash; null outside the payload or on a mismatch.
  const unsigned char* Read(uint64_t offset, uint64_t length) const;
  size_t payload() const { return payload_; }

 private:
  std::shared_ptr<const LazyFile> file_;  // null: `data_` is all there
  const unsigned char* data_ = nullptr;
  size_t payload_ = 0;
  size_t header_size_ = 0;
  const unsigned char* table_ = nullptr;   // null: trusted
  mutable std::vector<uint64_t> checked_;  // a bit per block that matched
};

// A cache's bytes: built by this run (owned: nothing to check, unless a
// test hands them in as a file's) or a cache file read as it is used.
class CacheBytes {
 public:
  CacheBytes() = default;
  static CacheBytes Owned(std::string bytes);
  static CacheBytes File(std::shared_ptr<const LazyFile> file);
  // The first `size` bytes (the header); null when there are fewer.
  const unsigned char* Header(size_t size) const;
  // The checked view of a payload of `payload` bytes (CheckedBytes::Open's
  // arguments); `trusted`: built by this run.
  Result<CheckedBytes> Check(size_t payload, size_t header_size, size_t hash_at, bool trusted) const;
  const std::string& owned() const { return owned_; }

 private:
  std::string owned_;
  std::shared_ptr<const LazyFile> file_;
};

// The size of the table SealBlocks appends to a payload of `payload` bytes.
size_t BlockTableSize(size_t payload, size_t header_size);

// The hash of each kCheckBlock bytes of `data` (`size` bytes), into `table`
// (BlockTableSize(size, 0) bytes): what CheckedBytes::Against checks.
void HashBlocks(const unsigned char* data, size_t size, unsigned char* table);

// Creates the directory as needed, writes a temporary file beside `path`
// and renames it into place.
Result<void> WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace kprobectl
