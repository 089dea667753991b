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

// The whole blob, mapped where the file lets itself be (a file on disk;
// /sys/kernel/btf/vmlinux since Linux 6.16, whose pages the mapping shows
// as they are): no copy, and no fresh page of memory a page of the blob,
// each a fault that costs microseconds on a virtual machine. Else read.
class Blob {
 public:
  static std::optional<Blob> Of(const Source& source) {
    Blob out;
    out.size_ = source.key.size;
    void* map = mmap(nullptr, out.size_, PROT_READ, MAP_PRIVATE, source.fd, 0);
    if (map != MAP_FAILED) {
      out.map_ = map;
      return out;
    }
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

void Pad(std::string& out) { out.resize((out.size() + 7) / 8 * 8, '\0'); }

template <typename T>
void Put(std::string& out, const std::vector<T>& v) {
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  Pad(out);
}

}  // namespace

std::unique_ptr<Index> Index::Build(std::string_view blob, const BlobKey& key) {
  const auto* raw = reinterpret_cast<const unsigned char*>(blob.data());
  uint16_t magic;
  if (blob.size() < kBtfHeaderSize) return nullptr;
  std::memcpy(&magic, raw, 2);
  const uint64_t hdr_len = U32(raw + 4), type_off = U32(raw + 8), type_len = U32(raw + 12), str_off = U32(raw + 16),
                 str_len = U32(raw + 20);
  if (magic != kBtfMagic || hdr_len < kBtfHeaderSize || type_off % 4 || type_off + type_len > str_off ||
      hdr_len + str_off + str_len > blob.size() || str_len == 0)
    return nullptr;
  const unsigned char* types = raw + hdr_len + type_off;
  const unsigned char* strs = raw + hdr_len + str_off;
  if (strs[0] != '\0' || strs[str_len - 1] != '\0') return nullptr;

  std::vector<uint32_t> offsets{0}, funcs, named;
  offsets.reserve(type_len / 16);
  PreferHugePages(offsets.data(), offsets.capacity() * sizeof(uint32_t));
  for (uint64_t at = 0; at < type_len;) {
    if (at + 12 > type_len) return nullptr;
    const uint32_t name_off = U32(types + at), info = U32(types + at + 4), kind = KindOfInfo(info);
    const int64_t extra = ExtraSize(kind, VlenOfInfo(info));
    if (extra < 0 || at + 12 + static_cast<uint64_t>(extra) > type_len) return nullptr;
    const auto id = static_cast<uint32_t>(offsets.size());
    offsets.push_back(static_cast<uint32_t>(at));
    // A name outside the strings never matches, as in libbpf; the
    // thousands of anonymous types would make one long probe (Find scans
    // for those).
    if (NamedKind(kind) && name_off < str_len && strs[name_off] != '\0') named.push_back(id);
    if (kind == kRawFunc) funcs.push_back(id);
    at += 12 + static_cast<uint64_t>(extra);
  }
  std::vector<uint32_t> pointers(offsets.size());
  std::vector<NameSlot> slots;
  slots.reserve(std::max<size_t>(2, std::bit_ceil(named.size() * 2)));
  PreferHugePages(slots.data(), slots.capacity() * sizeof(NameSlot));
  slots.resize(slots.capacity());
  const size_t mask = slots.size() - 1;
  for (uint32_t id = static_cast<uint32_t>(offsets.size()) - 1; id > 0; --id) {
    // Downwards: what is left is the first (lowest id) pointer to each type.
    const unsigned char* t = types + offsets[id];
    if (KindOfInfo(U32(t + 4)) == kRawPtr && U32(t + 8) < pointers.size()) pointers[U32(t + 8)] = id;
  }
  for (uint32_t id : named) {
    const char* name = reinterpret_cast<const char*>(strs + U32(types + offsets[id]));
    uint64_t hash = NameHash(name, std::strlen(name));
    size_t slot = hash & mask;
    while (slots[slot].id) slot = (slot + 1) & mask;
    slots[slot] = {id, static_cast<uint32_t>(hash >> 32)};
  }

  IndexHeader h{};
  std::memcpy(h.magic, kIndexMagic, sizeof kIndexMagic);
  h.version = kIndexVersion;
  h.types = static_cast<uint32_t>(offsets.size());
  h.source_size = key.size;
  h.source_mtime_ns = key.mtime_ns;
  h.sample = key.sample;
  std::string out(sizeof h, '\0');
  size_t payload = sizeof h + type_len + str_len + 8 + (offsets.size() + pointers.size() + funcs.size()) * 4 +
                   slots.size() * sizeof(NameSlot) + 32;
  out.reserve(payload + BlockTableSize(payload, sizeof h));
  PreferHugePages(out.data(), out.capacity());
  h.types_at = static_cast<uint32_t>(out.size());
  h.types_len = static_cast<uint32_t>(type_len);
  out.append(reinterpret_cast<const char*>(types), type_len);
  h.strs_at = static_cast<uint32_t>(out.size());
  h.strs_len = static_cast<uint32_t>(str_len);
  out.append(reinterpret_cast<const char*>(strs), str_len);
  Pad(out);
  h.offsets_at = static_cast<uint32_t>(out.size());
  Put(out, offsets);
  h.slots_at = static_cast<uint32_t>(out.size());
  h.slots = static_cast<uint32_t>(slots.size());
  Put(out, slots);
  h.pointers_at = static_cast<uint32_t>(out.size());
  Put(out, pointers);
  h.funcs_at = static_cast<uint32_t>(out.size());
  h.funcs = static_cast<uint32_t>(funcs.size());
  Put(out, funcs);
  h.payload = out.size();
  std::memcpy(out.data(), &h, sizeof h);
  SealBlocks(out, sizeof h, kSealAt);

  std::unique_ptr<Index> index(new Index);
  index->bytes_ = CacheBytes::Owned(std::move(out));
  if (!index->Adopt(key, true)) return nullptr;
  return index;
}

std::unique_ptr<Index> Index::Open(const std::string& path, const std::string& cache_dir, bool use_cache) {
  Source source;
  if (!OpenSource(path, source)) return nullptr;
  const std::string cache_file = cache_dir.empty() ? std::string() : IndexPath(cache_dir, source.key);
  if (!cache_file.empty() && use_cache) {
    // Only the pages a look-up reads are read.
    if (auto file = LazyFile::Open(cache_file)) {
      std::unique_ptr<Index> index(new Index);
      index->bytes_ = CacheBytes::File(std::move(*file));
      if (index->Adopt(source.key, false)) return index;
    }
  }
  auto blob = Blob::Of(source);
  if (!blob) return nullptr;
  auto index = Build(blob->bytes(), source.key);
  // A cache: without it, the next run reads the blob again.
  if (index && !cache_file.empty()) (void)WriteFileAtomically(cache_file, index->bytes());
  return index;
}

}  // namespace kprobectl::btf
