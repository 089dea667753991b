// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's build information (.go.buildinfo, written by every Go linker since
// 1.13; see Go's src/debug/buildinfo/buildinfo.go): a 32-byte header,
// "\xff Go buildinf:", the pointer size, flags; then, since Go 1.18 (flag
// 2), the Go version as a string prefixed by its length (a varint); before
// 1.18, at offset 16, a pointer to runtime.buildVersion, a Go string
// (pointer, length). The version decides how arguments are passed (Go's
// register ABI came to each architecture with a version: Arch::GoRegisterAbiIn).
#include "go_buildinfo.h"

#include <cstring>

namespace kprobectl {

namespace {

constexpr std::string_view kMagic = "\xff Go buildinf:";
constexpr size_t kHeaderSize = 32;

uint64_t ReadWord(const unsigned char* p, size_t size, bool big_endian) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v |= uint64_t{p[big_endian ? i : size - 1 - i]} << (8 * (size - 1 - i));
  return v;
}

}  // namespace

std::string GoVersionFromBuildInfo(std::string_view bytes, const ReadVirtual& read) {
  if (bytes.size() < kHeaderSize || !bytes.starts_with(kMagic)) return "";
  auto ptr_size = static_cast<size_t>(static_cast<unsigned char>(bytes[14]));
  auto flags = static_cast<unsigned char>(bytes[15]);
  bool big_endian = flags & 1;
  if (flags & 2) {
    uint64_t length = 0;
    size_t at = kHeaderSize;
    for (int shift = 0; at < bytes.size() && shift < 64; shift += 7) {
      auto b = static_cast<unsigned char>(bytes[at++]);
      length |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) break;
    }
    if (length == 0 || length > 64 || at + length > bytes.size()) return "";
    return std::string(bytes.substr(at, length));
  }
  if ((ptr_size != 4 && ptr_size != 8) || bytes.size() < 16 + ptr_size || !read) return "";
  uint64_t string_at = ReadWord(reinterpret_cast<const unsigned char*>(bytes.data()) + 16, ptr_size, big_endian);
  std::string header = read(string_at, 2 * ptr_size);
  if (header.size() != 2 * ptr_size) return "";
  const auto* h = reinterpret_cast<const unsigned char*>(header.data());
  uint64_t data = ReadWord(h, ptr_size, big_endian), length = ReadWord(h + ptr_size, ptr_size, big_endian);
  if (length == 0 || length > 64) return "";
  return read(data, length);
}

unsigned GoMinorVersion(std::string_view version) {
  // "go1.19.8", "go1.21rc2", "devel go1.22-..." : the minor number after "go1.".
  size_t at = version.find("go1.");
  if (at == std::string_view::npos) return 0;
  unsigned minor = 0;
  for (size_t i = at + 4; i < version.size() && version[i] >= '0' && version[i] <= '9' && minor < 1000; ++i)
    minor = minor * 10 + static_cast<unsigned>(version[i] - '0');
  return minor;
}

}  // namespace kprobectl
