// SPDX-License-Identifier: GPL-2.0-or-later
//
// CheckedBytes: a cache file whose blocks are checked as they are read. A
// read checks the blocks it touches and only those; a block that does not
// match fails every read that touches it; the seal covers the header and
// the table, so a change there, a truncation or an extension is refused at
// once. Over a file (LazyFile), only the pages read are in memory.
#include "kprobectl/cache_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "test_support.h"

using namespace kprobectl;

namespace {

constexpr size_t kHeader = 32, kSealAt = 8;

// A header, then `blocks` blocks of distinct bytes, sealed.
std::string Sealed(size_t blocks) {
  std::string bytes(kHeader, 'h');
  for (size_t i = 0; i < blocks * kCheckBlock + 100; ++i) bytes += static_cast<char>(i * 7 + i / 251);
  SealBlocks(bytes, kHeader, kSealAt);
  return bytes;
}

size_t PayloadOf(const std::string& sealed) {
  // The table is 8 bytes a block after the header.
  for (size_t payload = kHeader; payload <= sealed.size(); ++payload)
    if (payload + BlockTableSize(payload, kHeader) == sealed.size()) return payload;
  return 0;
}

const unsigned char* Data(const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

TEST_CASE("checked bytes: each read checks the blocks it touches, and only those") {
  const std::string good = Sealed(4);
  const size_t payload = PayloadOf(good);
  REQUIRE(payload == kHeader + 4 * kCheckBlock + 100);
  std::string bad = good;
  const size_t in_third = kHeader + 2 * kCheckBlock + 17;
  bad[in_third] = static_cast<char>(bad[in_third] ^ 4);
  auto checked = CheckedBytes::Open(Data(bad), bad.size(), payload, kHeader, kSealAt);
  REQUIRE(checked);  // the seal covers the header and the table, not the blocks
  CHECK(checked->Read(0, kHeader) == Data(bad));
  CHECK(checked->Read(kHeader, 10) == Data(bad) + kHeader);
  // Blocks lie on pages: the first is the header's page after the header.
  CHECK(checked->Read(kCheckBlock, kCheckBlock) != nullptr);
  CHECK(checked->Read(kCheckBlock - 1, 2) != nullptr);              // the first and second
  CHECK(checked->Read(kHeader + 4 * kCheckBlock, 100) != nullptr);  // the short last block
  CHECK(checked->Read(in_third, 1) == nullptr);
  CHECK(checked->Read(2 * kCheckBlock - 1, 2) == nullptr);              // across into it
  CHECK(checked->Read(kHeader + kCheckBlock, kCheckBlock) == nullptr);  // a page's span crossing into it
  CHECK(checked->Read(3 * kCheckBlock, 1) != nullptr);                  // the page after it
  CHECK(checked->Read(kHeader + kCheckBlock + 5, 1) != nullptr);        // its neighbour still reads
  CHECK(checked->Read(payload - 1, 1) != nullptr);
  CHECK(checked->Read(payload, 1) == nullptr);  // past the payload: the table is not data
  CHECK(checked->Read(payload - 1, 2) == nullptr);
  CHECK(checked->Read(~uint64_t{0}, 2) == nullptr);
  auto fine = CheckedBytes::Open(Data(good), good.size(), payload, kHeader, kSealAt);
  REQUIRE(fine);
  CHECK(fine->Read(kHeader, payload - kHeader) == Data(good) + kHeader);
}

TEST_CASE("checked bytes: blocks lie on pages, whatever the header's and the payload's lengths") {
  for (size_t header : {size_t{32}, size_t{4095}, size_t{4096}, size_t{5000}, size_t{8192}})
    for (size_t payload : {header, header + 1, (header / 4096 + 1) * 4096, (header / 4096 + 2) * 4096 + 7}) {
      INFO("header " << header << ", payload " << payload);
      std::string bytes(payload, '\0');
      for (size_t i = 0; i < payload; ++i) bytes[i] = static_cast<char>(i * 13 + i / 4096);
      SealBlocks(bytes, header, kSealAt);
      // A block per page the payload reaches past the header, none when empty.
      const size_t pages = payload > header ? (payload - 1) / kCheckBlock - header / kCheckBlock + 1 : 0;
      CHECK(bytes.size() == payload + 8 * pages);
      auto checked = CheckedBytes::Open(Data(bytes), bytes.size(), payload, header, kSealAt);
      REQUIRE(checked);
      CHECK(checked->Read(0, payload) == Data(bytes));
      if (payload == header) continue;
      std::string bad = bytes;
      bad[payload - 1] = static_cast<char>(bad[payload - 1] ^ 1);
      auto spoilt = CheckedBytes::Open(Data(bad), bad.size(), payload, header, kSealAt);
      REQUIRE(spoilt);
      CHECK(spoilt->Read(payload - 1, 1) == nullptr);
      // The header's first byte after it fails only if it shares the page.
      const bool same_page = (payload - 1) / kCheckBlock == header / kCheckBlock;
      CHECK(spoilt->Read(header, 1) == (same_page ? nullptr : Data(bad) + header));
    }
}

TEST_CASE("checked bytes: the header, the table, a truncation and an extension are refused at once") {
  const std::string good = Sealed(2);
  const size_t payload = PayloadOf(good);
  for (size_t at : {size_t{0}, kSealAt, kHeader - 1, payload, good.size() - 1}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 1);
    CHECK(CheckedBytes::Open(Data(bad), bad.size(), payload, kHeader, kSealAt).error().message ==
          "corrupt (hash mismatch)");
  }
  for (size_t size : {size_t{0}, kHeader, payload, good.size() - 1})
    CHECK(CheckedBytes::Open(Data(good), size, payload, kHeader, kSealAt).error().message == "truncated or extended");
  std::string longer = good + "x";
  CHECK_FALSE(CheckedBytes::Open(Data(longer), longer.size(), payload, kHeader, kSealAt));
  // A block moved (two swapped) fails: a block's hash is seeded with where it is.
  std::string swapped = Sealed(2);
  std::string first = swapped.substr(kHeader, kCheckBlock);
  swapped.replace(kHeader, kCheckBlock, swapped.substr(kHeader + kCheckBlock, kCheckBlock));
  swapped.replace(kHeader + kCheckBlock, kCheckBlock, first);
  auto checked = CheckedBytes::Open(Data(swapped), swapped.size(), payload, kHeader, kSealAt);
  REQUIRE(checked);
  CHECK(checked->Read(kHeader, 1) == nullptr);
}

namespace {

// Which of the pages of [p, p + size) are resident (mincore).
std::vector<bool> Resident(const unsigned char* p, size_t size) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((size + page - 1) / page);
  REQUIRE(mincore(const_cast<unsigned char*>(p), size, in.data()) == 0);
  std::vector<bool> out;
  for (unsigned char c : in) out.push_back((c & 1) != 0);
  return out;
}

}  // namespace

TEST_CASE("checked bytes over a file read as it is used: the same answers, only the pages read in") {
  test::TempDir dir;
  const std::string path = dir / "cache.idx";
  const std::string good = Sealed(6);
  const size_t payload = PayloadOf(good);
  test::WriteFile(path, good);
  auto file = LazyFile::Open(path);
  REQUIRE(file);
  const unsigned char* base = (*file)->Read(0, 0);
  REQUIRE(base);
  CHECK(Resident(base, good.size()) == std::vector<bool>(good.size() / 4096 + 1, false));
  auto checked = CheckedBytes::Open(*file, payload, kHeader, kSealAt);
  REQUIRE(checked);
  // The header's page and the table's are in; the blocks are not.
  std::vector<bool> in = Resident(base, good.size());
  CHECK(in.front());
  CHECK(in.back());
  CHECK_FALSE(in[2]);
  const size_t in_fourth = kHeader + 3 * kCheckBlock + 5;
  const unsigned char* p = checked->Read(in_fourth, 10);
  REQUIRE(p);
  CHECK(std::memcmp(p, good.data() + in_fourth, 10) == 0);
  in = Resident(base, good.size());
  CHECK(in[3]);
  CHECK_FALSE(in[4]);  // a block is a page: the header does not shift it
  CHECK_FALSE(in[1]);
  CHECK_FALSE(in[5]);
  CHECK(std::memcmp(checked->Read(kHeader, payload - kHeader), good.data() + kHeader, payload - kHeader) == 0);
  CHECK((*file)->Read(good.size(), 1) == nullptr);
  CHECK((*file)->Read(~uint64_t{0}, 2) == nullptr);

  // A block that does not match fails as it does in memory.
  std::string bad = good;
  bad[in_fourth] = static_cast<char>(bad[in_fourth] ^ 4);
  test::WriteFile(path, bad);
  auto changed = CheckedBytes::Open(*LazyFile::Open(path), payload, kHeader, kSealAt);
  REQUIRE(changed);
  CHECK(changed->Read(in_fourth, 1) == nullptr);
  CHECK(changed->Read(kHeader, 1) != nullptr);
  // Truncated after it was opened: what is not read yet cannot be, what
  // was read stays.
  auto early = LazyFile::Open(path);
  REQUIRE(early);
  REQUIRE((*early)->Read(0, kHeader));
  REQUIRE(truncate(path.c_str(), static_cast<off_t>(kHeader)) == 0);
  CHECK((*early)->Read(kHeader + 2 * kCheckBlock, 8) == nullptr);
  CHECK((*early)->Read(0, kHeader) != nullptr);
  CHECK_FALSE(LazyFile::Open(dir / "missing"));
}
