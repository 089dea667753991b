// SPDX-License-Identifier: GPL-2.0-or-later
//
// Building the index: the blob's header and every type's length checked
// (as libbpf's btf_parse_hdr, btf_parse_str_sec and btf_parse_type_sec
// check them: a blob that fails is left to libbpf, which says why), each
// type's offset noted, the names hashed, the tables sorted and the whole
// sealed for the cache. A few milliseconds for a kernel's 5.5 MB.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "btf_index.h"
#include "btf_raw.h"

namespace kprobectl::btf {

namespace {

// The blob, opened, and its key: size, mtime, first and last 4 KB.
struct Source {
  int fd = -1;
  BlobKey key;
  Source() = default;
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;
  ~Source() {
    if (fd >= 0) close(fd);
  }
};

bool ReadAt(int fd, char* out, size_t size, off_t at) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, out + done, size - done, at + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool OpenSource(const std::string& path, Source& source) {
  // O_NONBLOCK: a FIFO in the blob's place must not hang us.
  source.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (source.fd < 0 || fstat(source.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < kBtfHeaderSize) return false;
  source.key.size = static_cast<uint64_t>(st.st_size);
  source.key.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  const size_t sample = std::min<uint64_t>(kCheckBlock, source.key.size);
  std::string first(sample, '\0'), last(sample, '\0');
  if (!ReadAt(source.fd, first.data(), sample, 0) ||
      !ReadAt(source.fd, last.data(), sample, static_cast<off_t>(source.key.size - sample)))
    return false;
  source.key.sample = Hash64(last.data(), sample, Hash64(first.data(), sample, source.key.size));
  return true;
}

// The whole blob: mapped where the file lets itself be (a file on disk;
// /sys/kernel/btf/vmlinux since Linux 6.16, whose pages the mapping shows
// as they are), and the index refers to it; else read, and the index holds
// a copy of its sections.
class Blob {
 public:
  // Mapped, or nothing.
  static std::optional<Blob> Map(const Source& source) {
    void* map = mmap(nullptr, source.key.size, PROT_READ, MAP_PRIVATE, source.fd, 0);
    if (map == MAP_FAILED) return std::nullopt;
    Blob out;
    out.size_ = source.key.size;
    out.map_ = map;
    return out;
  }
  // Mapped, or read.
  static std::optional<Blob> Of(const Source& source) {
    if (auto mapped = Map(source)) return mapped;
    Blob out;
    out.size_ = source.key.size;
    out.read_ = ReadAll(source);
    if (!out.read_) return std::nullopt;
    return out;
  }
  Blob(Blob&& other) noexcept
      : map_(std::exchange(other.map_, nullptr)), read_(std::move(other.read_)), size_(other.size_) {}
  Blob& operator=(Blob&&) = delete;
  ~Blob() {
    if (map_) munmap(map_, size_);
  }
  std::string_view bytes() const {
    return {map_ ? static_cast<const char*>(map_) : read_.get(), static_cast<size_t>(size_)};
  }
  bool mapped() const { return map_ != nullptr; }

 private:
  Blob() = default;
  static std::unique_ptr<char[]> ReadAll(const Source& source);
  void* map_ = nullptr;
  std::unique_ptr<char[]> read_;
  uint64_t size_ = 0;
};

// All of it (sysfs hands out a page per read), into memory not zeroed first.
std::unique_ptr<char[]> Blob::ReadAll(const Source& source) {
  const size_t room = source.key.size + 1;
  std::unique_ptr<char[]> out(new char[room]);
  size_t done = 0;
  for (;;) {
    ssize_t n = pread(source.fd, out.get() + done, room - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return nullptr;
    if (n == 0) break;
    done += static_cast<size_t>(n);
    if (done == room) return nullptr;  // grew since its size was taken
  }
  return done == source.key.size ? std::move(out) : nullptr;
}

// Large tables in 2 MB pages where the kernel gives them (transparent huge
// pages, "madvise" by default): a fault a table instead of a fault a 4 KB
// page, and no TLB miss a slot of a hash table filled at random, which on a
// virtual machine (two-level page walks, a fault a few microseconds) were
// most of an index's build.
void PreferHugePages(const void* p, size_t size) {
  constexpr uintptr_t kHuge = 2 << 20;
  // The 2 MB boundaries inside [p, p + size), as offsets from p: the
  // pointer itself stays a pointer (no integer made one again).
  const auto address = reinterpret_cast<uintptr_t>(p);
  const size_t skip = (kHuge - address % kHuge) % kHuge;
  if (size <= skip) return;
  const size_t length = (size - skip) / kHuge * kHuge;
  auto* start = const_cast<char*>(static_cast<const char*>(p)) + skip;
  if (length > 0) madvise(start, length, MADV_HUGEPAGE);
}

// What the first pass over the types counts, for the index's layout.
struct Counts {
  uint32_t types = 1;  // void's id included
  uint32_t named = 0, funcs = 0;
};

// A name outside the strings never matches, as in libbpf; the thousands
// of anonymous types would make one long probe (Find scans for those).
bool Indexed(uint32_t kind, uint32_t name_off, const unsigned char* strs, uint64_t str_len) {
  return NamedKind(kind) && name_off < str_len && strs[name_off] != '\0';
}

// Where the type at `at` ends, its length checked against the section as
// libbpf checks it; nothing past the section.
std::optional<uint64_t> TypeEnd(const unsigned char* types, uint64_t type_len, uint64_t at) {
  if (at + 12 > type_len) return std::nullopt;
  const uint32_t info = U32(types + at + 4);
  const int64_t extra = ExtraSize(KindOfInfo(info), VlenOfInfo(info));
  if (extra < 0 || at + 12 + static_cast<uint64_t>(extra) > type_len) return std::nullopt;
  return at + 12 + static_cast<uint64_t>(extra);
}

std::optional<Counts> Count(const unsigned char* types, uint64_t type_len, const unsigned char* strs,
                            uint64_t str_len) {
  Counts c;
  for (uint64_t at = 0; at < type_len; ++c.types) {
    const std::optional<uint64_t> end = TypeEnd(types, type_len, at);
    if (!end || c.types == UINT32_MAX) return std::nullopt;
    const uint32_t kind = KindOfInfo(U32(types + at + 4));
    c.named += Indexed(kind, U32(types + at), strs, str_len);
    c.funcs += kind == kRawFunc;
    at = *end;
  }
  return c;
}

void Store32(std::string& out, uint64_t at, uint32_t value) { std::memcpy(out.data() + at, &value, 4); }
uint32_t Load32(const std::string& out, uint64_t at) {
  return U32(reinterpret_cast<const unsigned char*>(out.data() + at));
}

}  // namespace

// The tables are written where they lie in the file (no table built and
// then copied in): every page of memory a build touches afresh is a fault,
// microseconds each on a virtual machine, and the file's pages as many
// again in the page cache.
std::unique_ptr<Index> Index::Build(std::string_view blob, const BlobKey& key, bool refer) {
  const auto* raw = reinterpret_cast<const unsigned char*>(blob.data());
  uint16_t magic;
  if (blob.size() < kBtfHeaderSize) return nullptr;
  std::memcpy(&magic, raw, 2);
  const uint64_t hdr_len = U32(raw + 4), type_off = U32(raw + 8), type_len = U32(raw + 12), str_off = U32(raw + 16),
                 str_len = U32(raw + 20);
  if (magic != kBtfMagic || hdr_len < kBtfHeaderSize || type_off % 4 || type_off + type_len > str_off ||
      hdr_len + str_off + str_len > blob.size() || str_len == 0 || (refer && blob.size() != key.size))
    return nullptr;
  const unsigned char* types = raw + hdr_len + type_off;
  const unsigned char* strs = raw + hdr_len + str_off;
  if (strs[0] != '\0' || strs[str_len - 1] != '\0') return nullptr;
  const std::optional<Counts> counts = Count(types, type_len, strs, str_len);
  if (!counts) return nullptr;

  IndexHeader h{};
  std::memcpy(h.magic, kIndexMagic, sizeof kIndexMagic);
  h.version = kIndexVersion;
  h.types = counts->types;
  h.source_size = key.size;
  h.source_mtime_ns = key.mtime_ns;
  h.sample = key.sample;
  h.types_len = static_cast<uint32_t>(type_len);
  h.strs_len = static_cast<uint32_t>(str_len);
  // The layout in 64 bits, each place checked to fit the header's 32.
  uint64_t at = sizeof h, types_at = at, strs_at = at + type_len;
  if (refer) {
    h.flags = kReferToBlob;
    types_at = hdr_len + type_off;
    strs_at = hdr_len + str_off;
  } else {
    at += type_len + str_len;
  }
  const uint64_t slot_count = std::max<uint64_t>(2, std::bit_ceil(uint64_t{counts->named} * 3 / 2 + 1));
  auto align8 = [](uint64_t n) { return (n + 7) / 8 * 8; };
  const uint64_t offsets_at = align8(at), slots_at = align8(offsets_at + uint64_t{counts->types} * 4),
                 pointers_at = align8(slots_at + slot_count * sizeof(NameSlot)),
                 funcs_at = align8(pointers_at + uint64_t{counts->types} * 4),
                 hashes_at = align8(funcs_at + uint64_t{counts->funcs} * 4),
                 payload = hashes_at + (refer ? BlockTableSize(blob.size(), 0) : 0);
  if (payload > UINT32_MAX || strs_at + str_len > UINT32_MAX) return nullptr;
  h.types_at = static_cast<uint32_t>(types_at);
  h.strs_at = static_cast<uint32_t>(strs_at);
  // At most two thirds full (a look-up probes about 2 slots, a miss 5), a
  // 1 MB table for a kernel's 70,000 names rather than 2 MB at a quarter.
  h.slots = static_cast<uint32_t>(slot_count);
  h.offsets_at = static_cast<uint32_t>(offsets_at);
  h.slots_at = static_cast<uint32_t>(slots_at);
  h.pointers_at = static_cast<uint32_t>(pointers_at);
  h.funcs_at = static_cast<uint32_t>(funcs_at);
  h.funcs = counts->funcs;
  if (refer) h.blob_hashes_at = static_cast<uint32_t>(hashes_at);
  h.payload = payload;

  std::string out;
  out.reserve(h.payload + BlockTableSize(h.payload, sizeof h));
  PreferHugePages(out.data(), out.capacity());
  out.resize(h.payload);
  if (!refer) {
    std::memcpy(out.data() + h.types_at, types, type_len);
    std::memcpy(out.data() + h.strs_at, strs, str_len);
  }
  auto* slots = reinterpret_cast<unsigned char*>(out.data() + h.slots_at);
  const uint32_t mask = h.slots - 1;
  // The second pass checks again what the first counted: a mapped file
  // another process changes in between must not take a write out of the
  // tables (any difference: no index).
  uint32_t id = 1, func = 0;
  for (uint64_t offset = 0; offset < type_len; ++id) {
    const std::optional<uint64_t> end = TypeEnd(types, type_len, offset);
    if (id >= h.types || !end) return nullptr;
    const unsigned char* t = types + offset;
    const uint32_t name_off = U32(t), kind = KindOfInfo(U32(t + 4));
    Store32(out, h.offsets_at + uint64_t{id} * 4, static_cast<uint32_t>(offset));
    if (Indexed(kind, name_off, strs, str_len)) {
      const char* name = reinterpret_cast<const char*>(strs + name_off);
      const uint64_t hash = NameHash(name, strnlen(name, str_len - name_off));
      // In id order: the first match along a probe is the lowest id.
      uint32_t slot = static_cast<uint32_t>(hash) & mask;
      for (uint32_t probes = 1; U32(slots + uint64_t{slot} * sizeof(NameSlot)); ++probes) {
        if (probes == h.slots) return nullptr;  // full
        slot = (slot + 1) & mask;
      }
      const NameSlot filled{id, static_cast<uint32_t>(hash >> 32)};
      std::memcpy(slots + uint64_t{slot} * sizeof(NameSlot), &filled, sizeof filled);
    }
    if (kind == kRawFunc) {
      if (func >= h.funcs) return nullptr;
      Store32(out, h.funcs_at + uint64_t{func++} * 4, id);
    }
    // The first (lowest id) pointer to each type.
    if (const uint32_t to = U32(t + 8);
        kind == kRawPtr && to < h.types && Load32(out, h.pointers_at + uint64_t{to} * 4) == 0)
      Store32(out, h.pointers_at + uint64_t{to} * 4, id);
    offset = *end;
  }
  if (id != h.types || func != h.funcs) return nullptr;
  if (refer) HashBlocks(raw, blob.size(), reinterpret_cast<unsigned char*>(out.data() + h.blob_hashes_at));
  std::memcpy(out.data(), &h, sizeof h);
  SealBlocks(out, sizeof h, kSealAt);

  std::unique_ptr<Index> index(new Index);
  index->bytes_ = CacheBytes::Owned(std::move(out));
  if (!index->Adopt(key, true, refer ? blob : std::string_view())) return nullptr;
  return index;
}

std::unique_ptr<Index> Index::Open(const std::string& path, const std::string& cache_dir, bool use_cache) {
  Source source;
  if (!OpenSource(path, source)) return nullptr;
  const std::string cache_file = cache_dir.empty() ? std::string() : IndexPath(cache_dir, source.key);
  if (!cache_file.empty() && use_cache) {
    // Only the pages a look-up reads are read, of the index and the blob.
    if (auto file = LazyFile::Open(cache_file)) {
      std::unique_ptr<Index> index(new Index);
      index->bytes_ = CacheBytes::File(std::move(*file));
      auto blob = Blob::Map(source);
      if (index->Adopt(source.key, false, blob ? blob->bytes() : std::string_view())) {
        if (index->refers_to_blob()) index->blob_keep_ = std::make_shared<const Blob>(std::move(*blob));
        return index;
      }
    }
  }
  auto blob = Blob::Of(source);
  if (!blob) return nullptr;
  auto index = Build(blob->bytes(), source.key, blob->mapped());
  if (index && index->refers_to_blob()) index->blob_keep_ = std::make_shared<const Blob>(std::move(*blob));
  // A cache: without it, the next run reads the blob again.
  if (index && !cache_file.empty()) (void)WriteFileAtomically(cache_file, index->bytes());
  return index;
}

}  // namespace kprobectl::btf
