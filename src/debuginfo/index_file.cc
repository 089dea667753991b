// SPDX-License-Identifier: GPL-2.0-or-later
//
// Layout (little-endian, as the supported hosts are, x86-64 and arm64), a
// payload sealed by SealBlocks (cache_file.h: each 4 KB block's hash after
// it, checked when a look-up first reads the block):
//   header, 128 bytes: magic "KPROBIDX", u32 version, u32 build-id size,
//     u8 build-id[48], u64 indexed file size, i64 its mtime (ns), u64 the
//     payload's size, u64 the seal (of the header and the block table),
//     u32 functions, u32 globals, u32 units, u32 postings, u32 frames,
//     u32 files, 8 bytes reserved;
//   u64 units[units];
//   frames[frames], each u64 start, u64 end, u64 .debug_frame offset of
//     the FDE for [start, end), sorted;
//   records[functions + globals + files], each u32 name offset, u32 name
//     size, u32 first posting, u32 posting count; names sorted bytewise in
//     each table (files: source basenames, postings the CUs naming them);
//   u64 postings[postings];
//   the names' bytes;
//   the block table.
#include "index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kprobectl/cache_file.h"

namespace kprobectl::dwarf {

namespace {

constexpr char kMagic[8] = {'K', 'P', 'R', 'O', 'B', 'I', 'D', 'X'};
// 11: blocks on the file's pages, 10: checked block by block, 9: Rust's
// qualified and linkage names, 8: qualified names without ABI tags, 7: C++
// qualified and linkage names, 6: split parts in other functions' code
constexpr uint32_t kVersion = 11;
constexpr size_t kHeaderSize = 128;
constexpr size_t kRecordSize = 16;
constexpr size_t kHashAt = 88;
constexpr size_t kFrameSize = 24;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t build_id_size;
  unsigned char build_id[48];
  uint64_t source_size;
  int64_t source_mtime_ns;
  uint64_t payload;
  uint64_t seal;
  uint32_t functions, globals, units, postings, frames, files;
  unsigned char reserved[8];
};
static_assert(sizeof(Header) == kHeaderSize && offsetof(Header, seal) == kHashAt);

uint32_t U32(const unsigned char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
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
  if (!words.empty()) out.append(reinterpret_cast<const char*>(words.data()), words.size() * 8);
}

Error Corrupt() { return Error{"corrupt (a block's hash)", ""}; }

}  // namespace

std::string SerializeIndex(const IndexKey& key, const IndexContents& contents, bool seal) {
  Header header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kVersion;
  header.build_id_size = static_cast<uint32_t>(std::min<size_t>(key.build_id.size(), sizeof header.build_id));
  std::memcpy(header.build_id, key.build_id.data(), header.build_id_size);
  header.source_size = key.size;
  header.source_mtime_ns = key.mtime_ns;
  header.functions = static_cast<uint32_t>(contents.functions.size());
  header.globals = static_cast<uint32_t>(contents.globals.size());
  header.files = static_cast<uint32_t>(contents.files.size());
  header.units = static_cast<uint32_t>(contents.units.size());
  header.frames = static_cast<uint32_t>(contents.frames.size());
  std::string out(kHeaderSize, '\0');
  PutWords(out, contents.units);
  for (const FrameEntry& f : contents.frames) PutWords(out, {f.start, f.end, f.offset});
  uint32_t name_at = 0, posting_at = 0;
  PutRecords(out, contents.functions, &name_at, &posting_at);
  PutRecords(out, contents.globals, &name_at, &posting_at);
  PutRecords(out, contents.files, &name_at, &posting_at);
  header.postings = posting_at;
  for (const auto& [name, postings] : contents.functions) PutWords(out, postings);
  for (const auto& [name, postings] : contents.globals) PutWords(out, postings);
  for (const auto& [name, postings] : contents.files) PutWords(out, postings);
  for (const auto& [name, postings] : contents.functions) out += name;
  for (const auto& [name, postings] : contents.globals) out += name;
  for (const auto& [name, postings] : contents.files) out += name;
  header.payload = out.size();
  std::memcpy(out.data(), &header, kHeaderSize);
  if (seal) SealBlocks(out, kHeaderSize, kHashAt);
  return out;
}

Result<std::unique_ptr<IndexView>> IndexView::FromBytes(std::string bytes, const IndexKey& key) {
  return Adopt(CacheBytes::Owned(std::move(bytes)), key, false);
}

Result<std::unique_ptr<IndexView>> IndexView::Trusted(std::string bytes) {
  return Adopt(CacheBytes::Owned(std::move(bytes)), {}, true);
}

Result<std::unique_ptr<IndexView>> IndexView::FromFile(const std::string& path, const IndexKey& key) {
  // Not read in at once: a look-up reads a few of its pages.
  return Adopt(CacheBytes::File(KP_TRY(LazyFile::Open(path))), key, false);
}

Result<std::unique_ptr<IndexView>> IndexView::Adopt(CacheBytes bytes, const IndexKey& key, bool trusted) {
  std::unique_ptr<IndexView> view(new IndexView);
  view->bytes_ = std::move(bytes);
  KP_TRY_VOID(view->Validate(key, trusted));
  return view;
}

IndexView::~IndexView() = default;

Result<void> IndexView::Validate(const IndexKey& key, bool trusted) {
  const unsigned char* bytes = bytes_.Header(kHeaderSize);
  if (!bytes) return Fail("truncated");
  Header header;
  std::memcpy(&header, bytes, kHeaderSize);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return Fail("not a kprobectl index");
  if (header.version != kVersion)
    return Fail("index format " + std::to_string(header.version) + ", not " + std::to_string(kVersion));
  if (!trusted && (header.build_id_size != key.build_id.size() ||
                   std::memcmp(header.build_id, key.build_id.data(), key.build_id.size()) != 0))
    return Fail("the index is of another build-id");
  if (!trusted && (header.source_size != key.size || header.source_mtime_ns != key.mtime_ns))
    return Fail("the indexed file changed (size or mtime)");
  // The header and the block table, now; the rest as it is read.
  checked_ = KP_TRY(bytes_.Check(header.payload, kHeaderSize, kHashAt, trusted));
  uint64_t fixed = kHeaderSize + uint64_t{header.units} * 8 + uint64_t{header.frames} * kFrameSize +
                   (uint64_t{header.functions} + header.globals + header.files) * kRecordSize +
                   uint64_t{header.postings} * 8;
  if (fixed > header.payload) return Fail("truncated");
  functions_ = header.functions;
  globals_ = header.globals;
  files_ = header.files;
  units_ = header.units;
  postings_ = header.postings;
  frames_ = header.frames;
  records_at_ = kHeaderSize + size_t{units_} * 8 + size_t{frames_} * kFrameSize;
  postings_at_ = records_at_ + (size_t{functions_} + globals_ + files_) * kRecordSize;
  names_at_ = static_cast<size_t>(fixed);
  return {};
}

Result<const unsigned char*> IndexView::Read(uint64_t offset, uint64_t length) const {
  const unsigned char* p = checked_.Read(offset, length);
  if (!p) return std::unexpected(Corrupt());
  return p;
}

// A record, checked against the layout as it is read: a look-up never
// reads outside the file.
Result<IndexView::Record> IndexView::RecordAt(size_t record) const {
  const unsigned char* rec = KP_TRY(Read(records_at_ + record * kRecordSize, kRecordSize));
  Record r{U32(rec), U32(rec + 4), U32(rec + 8), U32(rec + 12)};
  if (uint64_t{r.name_at} + r.name_size > checked_.payload() - names_at_ || uint64_t{r.first} + r.count > postings_)
    return Fail("corrupt (a record outside the file)");
  return r;
}

Result<std::string_view> IndexView::RecordName(const Record& r) const {
  return std::string_view(reinterpret_cast<const char*>(KP_TRY(Read(names_at_ + r.name_at, r.name_size))), r.name_size);
}

Result<std::vector<uint64_t>> IndexView::Find(size_t first_record, size_t count, std::string_view name) const {
  size_t lo = first_record, hi = first_record + count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    Record r = KP_TRY(RecordAt(mid));
    if (KP_TRY(RecordName(r)) < name)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == first_record + count) return std::vector<uint64_t>{};
  Record r = KP_TRY(RecordAt(lo));
  if (KP_TRY(RecordName(r)) != name) return std::vector<uint64_t>{};
  std::vector<uint64_t> out(r.count);
  if (!out.empty())
    std::memcpy(out.data(), KP_TRY(Read(postings_at_ + size_t{r.first} * 8, out.size() * 8)), out.size() * 8);
  return out;
}

Result<std::vector<uint64_t>> IndexView::Functions(std::string_view name) const { return Find(0, functions_, name); }

Result<std::vector<uint64_t>> IndexView::Globals(std::string_view name) const {
  return Find(functions_, globals_, name);
}

Result<std::vector<uint64_t>> IndexView::Files(std::string_view basename) const {
  return Find(size_t{functions_} + globals_, files_, basename);
}

Result<std::vector<std::string>> IndexView::FunctionNames() const {
  std::vector<std::string> out;
  out.reserve(functions_);
  for (size_t r = 0; r < functions_; ++r) {
    Record record = KP_TRY(RecordAt(r));
    out.emplace_back(KP_TRY(RecordName(record)));
  }
  return out;
}

Result<std::vector<uint64_t>> IndexView::Units() const {
  std::vector<uint64_t> out(units_);
  if (!out.empty()) std::memcpy(out.data(), KP_TRY(Read(kHeaderSize, out.size() * 8)), out.size() * 8);
  return out;
}

Result<std::optional<uint64_t>> IndexView::FrameFor(uint64_t address) const {
  // The last FDE that starts at or below `address`, if it covers it.
  const size_t frames = kHeaderSize + size_t{units_} * 8;
  auto word = [&](size_t i, size_t field) -> Result<uint64_t> {
    uint64_t w;
    std::memcpy(&w, KP_TRY(Read(frames + i * kFrameSize + field * 8, 8)), 8);
    return w;
  };
  size_t lo = 0, hi = frames_;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (KP_TRY(word(mid, 0)) <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || address >= KP_TRY(word(lo - 1, 1))) return std::nullopt;
  return KP_TRY(word(lo - 1, 2));
}

std::string IndexFilePath(const std::string& dir, const IndexKey& key) {
  return dir + "/" + HexOf(key.build_id) + ".idx";
}

}  // namespace kprobectl::dwarf
