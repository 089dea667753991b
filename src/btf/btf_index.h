// SPDX-License-Identifier: GPL-2.0-or-later
//
// A raw BTF blob (/sys/kernel/btf/vmlinux, --btf FILE) read without libbpf,
// through an index kept in the cache. In: the blob's path and the cache
// directory. Out: its types by id, functions and named types by name,
// pointer types, decoded from the raw BTF bytes as libbpf decodes them.
//
// libbpf parses every one of a kernel's 150,000 types on each run (5.5 MB,
// most of a BTF command's time and memory); the answer needs a handful. The
// index holds each type's offset, a hash table of the names, the first
// pointer type to each type and the functions in id order, and either the
// hash of each 4 KB of the blob, whose own types and strings are read
// where it can be mapped (a file; /sys/kernel/btf/vmlinux since Linux
// 6.16: no copy to make, write or read), or a copy of them (a blob that
// must be read whole, which a warm run must not do); a warm run reads the
// few pages its look-ups land on, each 4 KB block checked against its hash
// when first read (LazyFile, CheckedBytes). It is keyed by the blob's size and mtime and the
// hash of its first and last 4 KB (its header, first types and the end of
// its strings), read from the blob on every run: /sys/kernel/btf/vmlinux is
// the running kernel's own .BTF section, fixed until the next boot, which
// makes a new sysfs node (a new mtime); a file is keyed as the DWARF index
// keys one. Anything else is a miss: the blob is read whole, indexed (a few
// milliseconds, less than libbpf's parse) and the index written.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "btf_file.h"
#include "kprobectl/cache_file.h"
#include "kprobectl/result.h"

namespace kprobectl::btf {

// What a cache file must match: the blob it indexes.
struct BlobKey {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t sample = 0;  // hash of the first and last 4 KB
};

class Index {
 public:
  // Null when `path` is not raw little-endian BTF this reader knows (an ELF
  // file, an unknown kind, no such file): libbpf reads it then, and says
  // what is wrong. `use_cache` false: the blob is read even when the cache
  // file is there (which failed a check), and the cache file rewritten.
  static std::unique_ptr<Index> Open(const std::string& path, const std::string& cache_dir, bool use_cache = true);
  // Built from a blob's bytes in memory (tests); null as Open. `refer`: the
  // index refers to `blob`, which must outlive it, rather than copying it.
  static std::unique_ptr<Index> Build(std::string_view blob, const BlobKey& key, bool refer = false);
  // A cache file's bytes (over `blob` when they refer to it, which must
  // outlive the index); the error says what did not match.
  static Result<std::unique_ptr<Index>> FromBytes(std::string bytes, const BlobKey& key, std::string_view blob = {});
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  // Each fails only when a block of the cache file fails its check.
  Result<Type> Get(uint32_t id) const;
  // The first type (lowest id) of this BTF kind (BTF_KIND_*) named `name`.
  Result<std::optional<uint32_t>> Find(std::string_view name, uint32_t btf_kind) const;
  Result<std::vector<std::string>> FunctionNames() const;
  // The first pointer type to `id`.
  Result<std::optional<uint32_t>> PointerTo(uint32_t id) const;
  // Whether it reads the blob's own types and strings (else its copy).
  bool refers_to_blob() const { return sections_ == &blob_checked_; }
  const std::string& bytes() const { return bytes_.owned(); }

 private:
  Index() = default;
  // `blob`: the blob's bytes, when they can be read in place (null else).
  Result<void> Adopt(const BlobKey& key, bool trusted, std::string_view blob);
  Result<const unsigned char*> Read(uint64_t offset, uint64_t length) const;
  // Of the types and strings (types_at_, strs_at_ are offsets in these).
  Result<const unsigned char*> ReadSections(uint64_t offset, uint64_t length) const;
  Result<uint32_t> Word(uint64_t offset) const;
  Result<std::string> String(uint32_t offset) const;
  // The first type of a kind with no name: not in the name table.
  Result<std::optional<uint32_t>> FindAnonymous(uint32_t btf_kind) const;

  CacheBytes bytes_;
  CheckedBytes checked_;
  std::shared_ptr<const void> blob_keep_;  // the blob's mapping, read in place
  CheckedBytes blob_checked_;
  const CheckedBytes* sections_ = &checked_;  // the types and strings: checked_ or blob_checked_
  uint32_t types_ = 0, types_at_ = 0, types_len_ = 0, strs_at_ = 0, strs_len_ = 0;
  uint32_t offsets_at_ = 0, slots_at_ = 0, slots_ = 0, pointers_at_ = 0, funcs_at_ = 0, funcs_ = 0;
};

// The cache file of the blob with key `key`: `dir`/btf-<sample>.idx.
std::string IndexPath(const std::string& dir, const BlobKey& key);

}  // namespace kprobectl::btf
