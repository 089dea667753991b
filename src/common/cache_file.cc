// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
  // One multiply and a rotate per word and lane: a cache file is hashed
  // whole on every run, so this loop is on the path of every command.
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

uint64_t FileHash64(const unsigned char* data, size_t size, size_t header_size, size_t hash_at) {
  std::string header(reinterpret_cast<const char*>(data), header_size);
  std::memset(header.data() + hash_at, 0, 8);
  return Hash64(header.data(), header_size, Hash64(data + header_size, size - header_size));
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

Result<MappedFile> MappedFile::Open(const std::string& path) {
  // O_NONBLOCK: a FIFO put in a cache file's place must not hang us.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Fail("'" + path + "' is not a regular file");
  }
  if (st.st_size == 0) {
    close(fd);
    return Fail("'" + path + "' is empty");
  }
  auto size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return Fail("cannot map '" + path + "': " + std::strerror(errno));
  MappedFile file;
  file.map_ = std::shared_ptr<const void>(map, [size](const void* p) { munmap(const_cast<void*>(p), size); });
  file.size_ = size;
  return file;
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
