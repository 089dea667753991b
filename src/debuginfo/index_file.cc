// SPDX-License-Identifier: GPL-2.0-or-later
//
// Layout (little-endian, as the only supported host is x86-64):
//   header, 128 bytes: magic "KPROBIDX", u32 version, u32 build-id size,
//     u8 build-id[64], u64 indexed file size, i64 its mtime (ns), u64 this
//     file's size, u64 hash (of the file, this field read as zero),
//     u32 functions, u32 globals, u32 units, u32 postings;
//   u64 units[units];
//   records[functions + globals], each u32 name offset, u32 name size,
//     u32 first posting, u32 posting count; names sorted bytewise;
//   u64 postings[postings];
//   the names' bytes.
#include "index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kprobectl::dwarf {

namespace {

constexpr char kMagic[8] = {'K', 'P', 'R', 'O', 'B', 'I', 'D', 'X'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 128;
constexpr size_t kRecordSize = 16;
constexpr size_t kHashAt = 104;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t build_id_size;
  unsigned char build_id[64];
  uint64_t source_size;
  int64_t source_mtime_ns;
  uint64_t file_size;
  uint64_t hash;
  uint32_t functions, globals, units, postings;
};
static_assert(sizeof(Header) == kHeaderSize && offsetof(Header, hash) == kHashAt);

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL, kPrime2 = 0xC2B2AE3D27D4EB4FULL;

uint64_t Round(uint64_t acc, uint64_t word) {
  acc += word * kPrime2;
  acc = (acc << 31) | (acc >> 33);
  return acc * kPrime1;
}

uint64_t Word(const unsigned char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

uint32_t U32(const unsigned char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

uint64_t FileHash(const unsigned char* data, size_t size) {
  Header header;
  std::memcpy(&header, data, kHeaderSize);
  header.hash = 0;
  return Hash64(&header, kHeaderSize, Hash64(data + kHeaderSize, size - kHeaderSize));
}

void PutRecords(std::string& out, const std::vector<std::pair<std::string, std::vector<uint64_t>>>& table,
                uint32_t* name_at, uint32_t* posting_at) {
  for (const auto& [name, postings] : table) {
    uint32_t record[4] = {*name_at, static_cast<uint32_t>(name.size()), *posting_at,
                          static_cast<uint32_t>(postings.size())};
    out.append(reinterpret_cast<const char*>(record), sizeof record);
    *name_at += static_cast<uint32_t>(name.size());
    *posting_at += static_cast<uint32_t>(postings.size());
  }
}

void PutWords(std::string& out, const std::vector<uint64_t>& words) {
  out.append(reinterpret_cast<const char*>(words.data()), words.size() * 8);
}

}  // namespace

uint64_t Hash64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + size;
  uint64_t lanes[4] = {seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1};
  for (; end - p >= 32; p += 32)
    for (int i = 0; i < 4; ++i) lanes[i] = Round(lanes[i], Word(p + 8 * i));
  uint64_t h = size;
  for (uint64_t lane : lanes) h = Round(h ^ lane, lane);
  for (; end - p >= 8; p += 8) h = Round(h, Word(p));
  for (; p < end; ++p) h = Round(h, *p);
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  return h;
}

std::string SerializeIndex(const IndexKey& key, const IndexContents& contents) {
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kVersion;
  header.build_id_size = static_cast<uint32_t>(std::min<size_t>(key.build_id.size(), sizeof header.build_id));
  std::memcpy(header.build_id, key.build_id.data(), header.build_id_size);
  header.source_size = key.size;
  header.source_mtime_ns = key.mtime_ns;
  header.functions = static_cast<uint32_t>(contents.functions.size());
  header.globals = static_cast<uint32_t>(contents.globals.size());
  header.units = static_cast<uint32_t>(contents.units.size());
  std::string out(kHeaderSize, '\0');
  PutWords(out, contents.units);
  uint32_t name_at = 0, posting_at = 0;
  PutRecords(out, contents.functions, &name_at, &posting_at);
  PutRecords(out, contents.globals, &name_at, &posting_at);
  header.postings = posting_at;
  for (const auto& [name, postings] : contents.functions) PutWords(out, postings);
  for (const auto& [name, postings] : contents.globals) PutWords(out, postings);
  for (const auto& [name, postings] : contents.functions) out += name;
  for (const auto& [name, postings] : contents.globals) out += name;
  header.file_size = out.size();
  std::memcpy(out.data(), &header, kHeaderSize);
  header.hash = FileHash(reinterpret_cast<const unsigned char*>(out.data()), out.size());
  std::memcpy(out.data(), &header, kHeaderSize);
  return out;
}

Result<std::unique_ptr<IndexView>> IndexView::FromBytes(std::string bytes, const IndexKey& key) {
  std::unique_ptr<IndexView> view(new IndexView);
  view->owned_ = std::move(bytes);
  view->data_ = reinterpret_cast<const unsigned char*>(view->owned_.data());
  view->size_ = view->owned_.size();
  KP_TRY_VOID(view->Validate(key));
  return view;
}

Result<std::unique_ptr<IndexView>> IndexView::FromFile(const std::string& path, const IndexKey& key) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kHeaderSize)) {
    close(fd);
    return Fail("'" + path + "' is truncated");
  }
  // Every byte is read at once (the hash): populate the mapping in one go.
  void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return Fail("cannot map '" + path + "': " + std::strerror(errno));
  std::unique_ptr<IndexView> view(new IndexView);
  view->map_ = map;
  view->map_size_ = static_cast<size_t>(st.st_size);
  view->data_ = static_cast<const unsigned char*>(map);
  view->size_ = view->map_size_;
  KP_TRY_VOID(view->Validate(key));
  return view;
}

IndexView::~IndexView() {
  if (map_) munmap(map_, map_size_);
}

Result<void> IndexView::Validate(const IndexKey& key) {
  if (size_ < kHeaderSize) return Fail("truncated");
  Header header;
  std::memcpy(&header, data_, kHeaderSize);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return Fail("not a kprobectl index");
  if (header.version != kVersion)
    return Fail("index format " + std::to_string(header.version) + ", not " + std::to_string(kVersion));
  if (header.build_id_size != key.build_id.size() ||
      std::memcmp(header.build_id, key.build_id.data(), key.build_id.size()) != 0)
    return Fail("the index is of another build-id");
  if (header.source_size != key.size || header.source_mtime_ns != key.mtime_ns)
    return Fail("the indexed file changed (size or mtime)");
  if (header.file_size != size_) return Fail("truncated or extended");
  uint64_t fixed = kHeaderSize + uint64_t{header.units} * 8 +
                   (uint64_t{header.functions} + header.globals) * kRecordSize + uint64_t{header.postings} * 8;
  if (fixed > size_) return Fail("truncated");
  if (FileHash(data_, size_) != header.hash) return Fail("corrupt (hash mismatch)");
  functions_ = header.functions;
  globals_ = header.globals;
  units_ = header.units;
  postings_ = header.postings;
  names_at_ = static_cast<size_t>(fixed);
  // The hash says the bytes are as written; the records are checked against
  // the layout once, so a lookup never reads outside the file.
  for (size_t r = 0; r < size_t{functions_} + globals_; ++r) {
    const unsigned char* rec = data_ + kHeaderSize + size_t{units_} * 8 + r * kRecordSize;
    if (uint64_t{U32(rec)} + U32(rec + 4) > size_ - names_at_ || uint64_t{U32(rec + 8)} + U32(rec + 12) > postings_)
      return Fail("corrupt (a record outside the file)");
  }
  return {};
}

std::string_view IndexView::RecordName(size_t record) const {
  const unsigned char* rec = data_ + kHeaderSize + size_t{units_} * 8 + record * kRecordSize;
  return {reinterpret_cast<const char*>(data_ + names_at_ + U32(rec)), U32(rec + 4)};
}

std::vector<uint64_t> IndexView::Find(size_t first_record, size_t count, std::string_view name) const {
  size_t lo = first_record, hi = first_record + count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (RecordName(mid) < name) lo = mid + 1;
    else hi = mid;
  }
  if (lo == first_record + count || RecordName(lo) != name) return {};
  const unsigned char* rec = data_ + kHeaderSize + size_t{units_} * 8 + lo * kRecordSize;
  const unsigned char* postings =
      data_ + kHeaderSize + size_t{units_} * 8 + (size_t{functions_} + globals_) * kRecordSize;
  std::vector<uint64_t> out(U32(rec + 12));
  std::memcpy(out.data(), postings + size_t{U32(rec + 8)} * 8, out.size() * 8);
  return out;
}

std::vector<uint64_t> IndexView::Functions(std::string_view name) const { return Find(0, functions_, name); }

std::vector<uint64_t> IndexView::Globals(std::string_view name) const { return Find(functions_, globals_, name); }

std::vector<std::string> IndexView::FunctionNames() const {
  std::vector<std::string> out;
  out.reserve(functions_);
  for (size_t r = 0; r < functions_; ++r) out.emplace_back(RecordName(r));
  return out;
}

std::vector<uint64_t> IndexView::Units() const {
  std::vector<uint64_t> out(units_);
  std::memcpy(out.data(), data_ + kHeaderSize, out.size() * 8);
  return out;
}

std::string IndexFilePath(const std::string& dir, const IndexKey& key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (char ch : key.build_id) {
    auto c = static_cast<unsigned char>(ch);
    name += kHex[c >> 4];
    name += kHex[c & 15];
  }
  return dir + "/" + name + ".idx";
}

Result<void> WriteIndexFile(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::path target(path);
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) return Fail("cannot create '" + target.parent_path().string() + "': " + ec.message());
  std::string temp = path + ".tmp." + std::to_string(getpid());
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("cannot create '" + temp + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      close(fd);
      unlink(temp.c_str());
      return Fail("cannot write '" + temp + "': " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    unlink(temp.c_str());
    return Fail("cannot write '" + path + "': " + why);
  }
  return {};
}

}  // namespace kprobectl::dwarf
