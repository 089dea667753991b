// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kprobectl {

namespace {

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

}  // namespace

uint64_t Hash64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* end = p + size;
  // One multiply and a rotate per word and lane: each block of a cache
  // file a command reads is hashed, and the whole file when it is written.
  uint64_t lanes[4] = {seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1};
  for (; end - p >= 32; p += 32)
    for (size_t i = 0; i < 4; ++i) {
      uint64_t x = (lanes[i] ^ Word(p + 8 * i)) * kPrime1;
      lanes[i] = (x << 31) | (x >> 33);
    }
  uint64_t h = size;
  for (uint64_t lane : lanes) h = Round(h ^ lane, lane);
  for (; end - p >= 8; p += 8) h = Round(h, Word(p));
  for (; p < end; ++p) h = Round(h, *p);
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  return h;
}

std::string HexOf(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

namespace {

// Blocks lie on the file's pages, not after the header: block k is
// [k * kCheckBlock, (k + 1) * kCheckBlock) less the header and what is past
// the payload, so a read of a block is a read of one page (a block after
// the header took two, each a page fault, on every look-up).
size_t FirstBlock(size_t header_size) { return header_size / kCheckBlock; }

struct Span {
  size_t at, length;
};

// Block `block`'s bytes: from `begin` (the header's end) or its page's
// start, to its page's end or `end` (the payload's).
Span BlockSpan(size_t block, size_t begin, size_t end) {
  const size_t at = std::max(block * kCheckBlock, begin);
  return {at, std::min((block + 1) * kCheckBlock, end) - at};
}

}  // namespace

size_t BlockTableSize(size_t payload, size_t header_size) {
  if (payload <= header_size) return 0;
  return ((payload - 1) / kCheckBlock - FirstBlock(header_size) + 1) * 8;
}

namespace {

uint64_t SealOf(const unsigned char* header, size_t header_size, size_t hash_at, const unsigned char* table,
                size_t table_size) {
  std::string copy(reinterpret_cast<const char*>(header), header_size);
  std::memset(copy.data() + hash_at, 0, 8);
  return Hash64(copy.data(), copy.size(), Hash64(table, table_size));
}

// A block's hash, seeded with where it starts (a block moved is a block
// changed).
uint64_t BlockHash(const unsigned char* data, Span block) { return Hash64(data + block.at, block.length, block.at); }

// The hashes of the blocks of [begin, end), 8 bytes each, into `table`.
void HashBlocksOf(const unsigned char* data, size_t begin, size_t end, unsigned char* table) {
  for (size_t block = FirstBlock(begin), n = BlockTableSize(end, begin) / 8; n > 0; ++block, --n, table += 8) {
    const uint64_t h = BlockHash(data, BlockSpan(block, begin, end));
    std::memcpy(table, &h, 8);
  }
}

}  // namespace

void SealBlocks(std::string& bytes, size_t header_size, size_t hash_at) {
  const size_t payload = bytes.size();
  bytes.resize(payload + BlockTableSize(payload, header_size));  // none for an empty payload
  auto* data = reinterpret_cast<unsigned char*>(bytes.data());
  HashBlocksOf(data, header_size, payload, data + payload);
  uint64_t seal = SealOf(data, header_size, hash_at, data + payload, bytes.size() - payload);
  std::memcpy(bytes.data() + hash_at, &seal, 8);
}

Result<CheckedBytes> CheckedBytes::Open(const unsigned char* data, size_t size, size_t payload, size_t header_size,
                                        size_t hash_at) {
  if (size < header_size || payload < header_size || payload > size ||
      size - payload != BlockTableSize(payload, header_size))
    return Fail("truncated or extended");
  uint64_t seal;
  std::memcpy(&seal, data + hash_at, 8);
  if (SealOf(data, header_size, hash_at, data + payload, size - payload) != seal)
    return Fail("corrupt (hash mismatch)");
  CheckedBytes out;
  out.data_ = data;
  out.payload_ = payload;
  out.header_size_ = header_size;
  out.table_ = data + payload;
  out.checked_.assign(BlockTableSize(payload, header_size) / 8 / 64 + 1, 0);
  return out;
}

Result<CheckedBytes> CheckedBytes::Open(std::shared_ptr<const LazyFile> file, size_t payload, size_t header_size,
                                        size_t hash_at) {
  const size_t size = file->size();
  // The header and the block table, read in for the seal; the blocks as
  // they are used.
  const unsigned char* data = file->Read(0, std::min(header_size, size));
  if (!data || (payload <= size && !file->Read(payload, size - payload))) return Fail("unreadable");
  CheckedBytes out = KP_TRY(Open(data, size, payload, header_size, hash_at));
  out.file_ = std::move(file);
  return out;
}

void HashBlocks(const unsigned char* data, size_t size, unsigned char* table) { HashBlocksOf(data, 0, size, table); }

CheckedBytes CheckedBytes::Against(const unsigned char* data, size_t size, const unsigned char* table) {
  CheckedBytes out;
  out.data_ = data;
  out.payload_ = size;
  out.table_ = table;
  out.checked_.assign(BlockTableSize(size, 0) / 8 / 64 + 1, 0);
  return out;
}

CheckedBytes CheckedBytes::Trusted(const unsigned char* data, size_t payload) {
  CheckedBytes out;
  out.data_ = data;
  out.payload_ = payload;
  return out;
}

const unsigned char* CheckedBytes::Read(uint64_t offset, uint64_t length) const {
  if (offset > payload_ || length > payload_ - offset) return nullptr;
  if (!table_ || length == 0) return data_ + offset;
  // The header is the seal's: checked when the file was opened.
  uint64_t begin = std::max<uint64_t>(offset, header_size_), end = offset + length;
  if (end <= begin) return data_ + offset;
  const size_t first = FirstBlock(header_size_);
  for (uint64_t block = begin / kCheckBlock, last = (end - 1) / kCheckBlock; block <= last; ++block) {
    const size_t n = block - first;  // its place in the table
    uint64_t& word = checked_[n / 64];
    const uint64_t bit = uint64_t{1} << (n % 64);
    if (word & bit) continue;
    uint64_t expected;
    std::memcpy(&expected, table_ + n * 8, 8);
    const Span span = BlockSpan(block, header_size_, payload_);
    if (file_ && !file_->Read(span.at, span.length)) return nullptr;
    if (BlockHash(data_, span) != expected) return nullptr;
    word |= bit;
  }
  return data_ + offset;
}

namespace {

constexpr size_t kPage = 4096;

// All of [at, at + length) from `fd` into `to`; false on an error or an
// early end (the file shrank: a cache file being replaced is renamed over,
// never truncated, so this is a file someone else changed).
bool ReadFully(int fd, unsigned char* to, size_t length, off_t at) {
  while (length > 0) {
    ssize_t n = pread(fd, to, length, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    to += n;
    length -= static_cast<size_t>(n);
    at += n;
  }
  return true;
}

}  // namespace

Result<std::shared_ptr<const LazyFile>> LazyFile::Open(const std::string& path) {
  // O_NONBLOCK: a FIFO put in a cache file's place must not hang us.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  std::shared_ptr<LazyFile> file(new LazyFile);
  file->fd_ = fd;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Fail("'" + path + "' is not a regular file");
  if (st.st_size == 0) return Fail("'" + path + "' is empty");
  file->size_ = static_cast<size_t>(st.st_size);
  // Anonymous memory is resident only where written: the pages read in.
  void* memory = mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return Fail("cannot read '" + path + "': " + std::strerror(errno));
  // Not in huge pages (transparent_hugepage=always): a page read in would
  // make 2 MB resident.
  madvise(memory, file->size_, MADV_NOHUGEPAGE);
  file->data_ = static_cast<unsigned char*>(memory);
  file->loaded_.assign((file->size_ + kPage - 1) / kPage / 64 + 1, 0);
  return std::shared_ptr<const LazyFile>(std::move(file));
}

LazyFile::~LazyFile() {
  if (data_) munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
}

const unsigned char* LazyFile::Read(uint64_t offset, uint64_t length) const {
  if (offset > size_ || length > size_ - offset) return nullptr;
  if (length == 0) return data_ + offset;
  auto loaded = [this](size_t page) { return (loaded_[page / 64] >> (page % 64)) & 1; };
  const size_t last = (offset + length - 1) / kPage;
  for (size_t page = offset / kPage; page <= last;) {
    if (loaded(page)) {
      ++page;
      continue;
    }
    // A run of pages not read yet, in one read.
    size_t end = page;
    while (end <= last && !loaded(end)) ++end;
    const size_t at = page * kPage, bytes = std::min(end * kPage, size_) - at;
    if (!ReadFully(fd_, data_ + at, bytes, static_cast<off_t>(at))) return nullptr;
    for (; page < end; ++page) loaded_[page / 64] |= uint64_t{1} << (page % 64);
  }
  return data_ + offset;
}

CacheBytes CacheBytes::Owned(std::string bytes) {
  CacheBytes out;
  out.owned_ = std::move(bytes);
  return out;
}

CacheBytes CacheBytes::File(std::shared_ptr<const LazyFile> file) {
  CacheBytes out;
  out.file_ = std::move(file);
  return out;
}

const unsigned char* CacheBytes::Header(size_t size) const {
  if (file_) return file_->Read(0, size);
  return size <= owned_.size() ? reinterpret_cast<const unsigned char*>(owned_.data()) : nullptr;
}

Result<CheckedBytes> CacheBytes::Check(size_t payload, size_t header_size, size_t hash_at, bool trusted) const {
  if (file_) return CheckedBytes::Open(file_, payload, header_size, hash_at);
  const auto* data = reinterpret_cast<const unsigned char*>(owned_.data());
  if (!trusted) return CheckedBytes::Open(data, owned_.size(), payload, header_size, hash_at);
  if (payload > owned_.size()) return Fail("truncated");
  return CheckedBytes::Trusted(data, payload);
}

Result<void> WriteFileAtomically(const std::string& path, std::string_view bytes) {
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

}  // namespace kprobectl
