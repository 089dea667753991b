// SPDX-License-Identifier: GPL-2.0-or-later
//
// The BTF index (btf_index.h) against libbpf's reading of the same blob,
// type by type and name by name, and its cache file never trusted where it
// was not written as it is: every truncation refused, every flipped byte
// either refused or caught by the check of the block it lies in, never an
// answer that differs.
#include "btf/btf_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "btf/btf_file.h"
#include "btf/btf_raw.h"
#include "kprobectl/cache_file.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;
using kprobectl::btf::File;
using kprobectl::btf::Index;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const kprobectl::btf::BlobKey kKey{1525, 42, 7};

// Every type of `path` as both readers see them, and `sample` of its names
// and pointers (libbpf looks each up with a pass over every type).
void CompareReaders(const std::string& path, const std::string& cache_dir, size_t sample) {
  auto libbpf = File::Open(path, nullptr, {}, File::kLibbpf);
  auto indexed = File::Open(path, nullptr, cache_dir, File::kIndexed);
  REQUIRE(libbpf);
  REQUIRE(indexed);
  uint32_t id = 1;
  for (; libbpf->Get(id).kind != kprobectl::btf::Type::kVoid || libbpf->Get(id + 1).kind != kprobectl::btf::Type::kVoid;
       ++id) {
    INFO("type " << id);
    REQUIRE(indexed->Get(id) == libbpf->Get(id));
  }
  CHECK(indexed->Get(id) == kprobectl::btf::Type{});  // past the last
  CHECK(indexed->Get(0) == kprobectl::btf::Type{});
  auto names = libbpf->FunctionNames();
  REQUIRE(indexed->FunctionNames() == names);
  const size_t name_step = std::max<size_t>(1, names.size() / sample);
  for (size_t i = 0; i < names.size(); i += name_step)
    REQUIRE(indexed->FindFunction(names[i]) == libbpf->FindFunction(names[i]));
  const uint32_t step = std::max<uint32_t>(1, id / static_cast<uint32_t>(sample));
  for (uint32_t t = 1; t < id; t += step) {
    kprobectl::btf::Type type = libbpf->Get(t);
    for (auto kind : {kprobectl::btf::Type::kStruct, kprobectl::btf::Type::kUnion, kprobectl::btf::Type::kEnum,
                      kprobectl::btf::Type::kTypedef, kprobectl::btf::Type::kInt})
      if (type.kind == kind) REQUIRE(indexed->FindType(type.name, kind) == libbpf->FindType(type.name, kind));
  }
  for (auto kind : {kprobectl::btf::Type::kStruct, kprobectl::btf::Type::kTypedef, kprobectl::btf::Type::kInt}) {
    CHECK(indexed->FindType("", kind) == libbpf->FindType("", kind));
    CHECK(indexed->FindType("void", kind) == libbpf->FindType("void", kind));
    CHECK(indexed->FindType("no_such_type", kind) == libbpf->FindType("no_such_type", kind));
  }
  CHECK(indexed->FindFunction("no_such_function") == std::nullopt);
  for (uint32_t t = 0; t < id + 2; t += step) REQUIRE(indexed->PointerTo(t) == libbpf->PointerTo(t));
}

}  // namespace

TEST_CASE("btf index: every type, name and pointer as libbpf reads them (fixture)") {
  TempDir cache;
  CompareReaders(FixturePath("kernel_btf.btf"), {}, 1000);            // built in memory
  CompareReaders(FixturePath("kernel_btf.btf"), cache.path(), 1000);  // built and written
  CompareReaders(FixturePath("kernel_btf.btf"), cache.path(), 1000);  // read from the cache file
}

TEST_CASE("btf index: every type of the running kernel's BTF as libbpf reads it") {
  const std::string vmlinux = "/sys/kernel/btf/vmlinux";
  if (access(vmlinux.c_str(), R_OK) != 0) {
    WARN("no " + vmlinux + " to read: nothing compared");
    return;
  }
  TempDir cache;
  CompareReaders(vmlinux, cache.path(), 100);
  CompareReaders(vmlinux, cache.path(), 100);
}

namespace {

// Everything `view` answers: each answer the truth (`good`'s), or a failed
// read. Whether a read failed.
bool ReadsTruthOrFails(const Index& view, const Index& good, uint32_t types, const std::vector<std::string>& names) {
  bool failed = false;
  for (uint32_t id = 0; id <= types; ++id) {
    auto type = view.Get(id);
    failed |= !type;
    if (type) REQUIRE(*type == *good.Get(id));
  }
  auto listed = view.FunctionNames();
  failed |= !listed;
  if (listed) REQUIRE(*listed == names);
  for (const std::string& name : names) {
    auto found = view.Find(name, kprobectl::btf::kRawFunc);
    failed |= !found;
    if (found) REQUIRE(*found == *good.Find(name, kprobectl::btf::kRawFunc));
  }
  for (uint32_t id = 0; id <= types; ++id) {
    auto pointer = view.PointerTo(id);
    failed |= !pointer;
    if (pointer) REQUIRE(*pointer == *good.PointerTo(id));
  }
  return failed;
}

}  // namespace

TEST_CASE("btf index: every truncation is refused, every flipped byte refused or caught") {
  const std::string blob = Slurp(FixturePath("kernel_btf.btf"));
  REQUIRE(blob.size() == kKey.size);
  // A copy of the blob's sections, or the blob's own read in place.
  for (bool refer : {false, true}) {
    INFO((refer ? "referring to the blob" : "a copy of the blob"));
    auto built = Index::Build(blob, kKey, refer);
    REQUIRE(built);
    CHECK((*built).refers_to_blob() == refer);
    const std::string bytes = (*built).bytes();
    auto good = Index::FromBytes(bytes, kKey, blob);
    REQUIRE(good);
    CHECK((*good)->refers_to_blob() == refer);
    uint32_t types = 1;
    while ((*good)->Get(types)->kind != kprobectl::btf::Type::kVoid) ++types;
    auto names = *(*good)->FunctionNames();
    for (size_t size = 0; size < bytes.size(); ++size) CHECK_FALSE(Index::FromBytes(bytes.substr(0, size), kKey, blob));
    CHECK_FALSE(Index::FromBytes(bytes + '\0', kKey, blob));
    if (refer) CHECK(Index::FromBytes(bytes, kKey).error().message == "refers to the blob, which cannot be mapped");
    size_t refused = 0, caught = 0;
    for (size_t at = 0; at < bytes.size(); ++at) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(bad[at] ^ 0x20);
      auto view = Index::FromBytes(bad, kKey, blob);
      if (!view) {
        ++refused;
        continue;
      }
      caught += ReadsTruthOrFails(**view, **good, types, names);
    }
    // The header and the block table are the seal's, the rest its block's
    // (one here: reading anything checks it).
    CHECK(refused >= sizeof(kprobectl::btf::IndexHeader));
    CHECK(refused + caught == bytes.size());
  }
}

TEST_CASE("btf index: a blob read in place is checked against its index: a flipped byte is caught, never answered") {
  const std::string blob = Slurp(FixturePath("kernel_btf.btf"));
  REQUIRE(blob.size() == kKey.size);
  auto built = Index::Build(blob, kKey, true);
  REQUIRE(built);
  const std::string bytes = (*built).bytes();
  auto good = Index::FromBytes(bytes, kKey, blob);
  REQUIRE(good);
  uint32_t types = 1;
  while ((*good)->Get(types)->kind != kprobectl::btf::Type::kVoid) ++types;
  auto names = *(*good)->FunctionNames();
  size_t caught = 0;
  for (size_t at = 0; at < blob.size(); ++at) {
    std::string bad = blob;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    auto view = Index::FromBytes(bytes, kKey, bad);  // the key as the index's: only the bytes differ
    REQUIRE(view);
    caught += ReadsTruthOrFails(**view, **good, types, names);
  }
  // The fixture is one 4 KB block: every flip in it is caught on the
  // first read.
  CHECK(caught == blob.size());
}

TEST_CASE("btf index: another blob (size, mtime or content) is refused, saying so") {
  auto built = Index::Build(Slurp(FixturePath("kernel_btf.btf")), kKey);
  REQUIRE(built);
  for (kprobectl::btf::BlobKey other : {kprobectl::btf::BlobKey{1526, 42, 7}, kprobectl::btf::BlobKey{1525, 43, 7},
                                        kprobectl::btf::BlobKey{1525, 42, 8}})
    CHECK(Index::FromBytes((*built).bytes(), other).error().message == "the BTF changed (size, mtime or content)");
  CHECK(Index::FromBytes(std::string(300, 'K'), kKey).error().message == "not a kprobectl BTF index");
  CHECK_FALSE(Index::Build("not BTF at all, but long enough", kKey));
}

TEST_CASE("btf index: a cache file corrupt past its seal is rebuilt, the answers unchanged") {
  TempDir cache;
  const std::string path = FixturePath("kernel_btf.btf");
  REQUIRE(File::Open(path, nullptr, cache.path()));  // writes the cache file
  auto files = std::filesystem::directory_iterator(cache.path());
  const std::string index_file = files->path().string();
  REQUIRE(index_file.ends_with(".idx"));
  std::string bytes = Slurp(index_file);
  const std::string good = bytes;
  bytes[200] = static_cast<char>(bytes[200] ^ 1);  // a table's bytes: passes the seal, fails its block
  REQUIRE(WriteFileAtomically(index_file, bytes));
  auto libbpf = File::Open(path, nullptr, {}, File::kLibbpf);
  auto indexed = File::Open(path, nullptr, cache.path());
  REQUIRE(indexed);
  for (uint32_t id = 1; id < 40; ++id) REQUIRE(indexed->Get(id) == libbpf->Get(id));
  CHECK(Slurp(index_file) == good);  // written again
}

TEST_CASE("btf index: a blob changed under its index (same size, mtime, first and last 4 KB) is read afresh") {
  const std::string vmlinux = "/sys/kernel/btf/vmlinux";
  if (access(vmlinux.c_str(), R_OK) != 0) {
    WARN("no " + vmlinux + " to copy: nothing checked");
    return;
  }
  TempDir dir, cache;
  const std::string path = dir / "vmlinux.btf";
  std::string blob = Slurp(vmlinux);
  REQUIRE(blob.size() > 3 * kCheckBlock);
  REQUIRE(WriteFileAtomically(path, blob));
  {
    auto indexed = File::Open(path, nullptr, cache.path());  // writes the cache file, which refers to the blob
    REQUIRE(indexed);
  }
  // The index refers to the blob: it holds no copy of it.
  auto files = std::filesystem::directory_iterator(cache.path());
  REQUIRE(std::filesystem::file_size(files->path()) < blob.size());
  struct stat before;
  REQUIRE(stat(path.c_str(), &before) == 0);
  // A function's name in the second half of the strings, a letter changed:
  // the file's size, mtime and both ends (the index's key) unchanged.
  const auto* raw = reinterpret_cast<const unsigned char*>(blob.data());
  const uint32_t hdr_len = kprobectl::btf::U32(raw + 4), type_off = kprobectl::btf::U32(raw + 8),
                 type_len = kprobectl::btf::U32(raw + 12), str_off = kprobectl::btf::U32(raw + 16),
                 str_len = kprobectl::btf::U32(raw + 20);
  size_t name_at = 0;
  for (uint64_t at = 0; at < type_len && !name_at;) {
    const unsigned char* t = raw + hdr_len + type_off + at;
    const uint32_t kind = kprobectl::btf::KindOfInfo(kprobectl::btf::U32(t + 4));
    if (kind == kprobectl::btf::kRawFunc && kprobectl::btf::U32(t) > str_len / 2)
      name_at = size_t{hdr_len} + str_off + kprobectl::btf::U32(t);
    at += 12 + static_cast<uint64_t>(
                   kprobectl::btf::ExtraSize(kind, kprobectl::btf::VlenOfInfo(kprobectl::btf::U32(t + 4))));
  }
  REQUIRE(name_at > 0);
  const std::string old_name = blob.c_str() + name_at;
  size_t middle = name_at;
  while (blob[middle] < 'a' || blob[middle] > 'y') ++middle;
  blob[middle] = static_cast<char>(blob[middle] + 1);
  const std::string new_name = blob.c_str() + name_at;
  INFO(old_name << " -> " << new_name);
  {
    int fd = open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, blob.data() + middle, 1, static_cast<off_t>(middle)) == 1);
    close(fd);
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
  }
  auto libbpf = File::Open(path, nullptr, {}, File::kLibbpf);
  auto indexed = File::Open(path, nullptr, cache.path());
  REQUIRE(libbpf);
  REQUIRE(indexed);
  // Every type: the one whose name changed is answered as the file now
  // says (its block failed its hash, the index was built again).
  for (uint32_t id = 1; libbpf->Get(id).kind != kprobectl::btf::Type::kVoid; ++id) {
    INFO("type " << id);
    REQUIRE(indexed->Get(id) == libbpf->Get(id));
  }
  CHECK(indexed->FunctionNames() == libbpf->FunctionNames());
  // And by name, from the index built again (the one built before has
  // the old name in its table).
  CHECK(indexed->FindFunction(new_name) == libbpf->FindFunction(new_name));
  CHECK(indexed->FindFunction(new_name).has_value());
  CHECK(indexed->FindFunction(old_name) == libbpf->FindFunction(old_name));
}
