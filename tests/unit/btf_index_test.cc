// SPDX-License-Identifier: GPL-2.0-or-later
//
// The BTF index (btf_index.h) against libbpf's reading of the same blob,
// type by type and name by name, and its cache file never trusted where it
// was not written as it is: every truncation refused, every flipped byte
// either refused or caught by the check of the block it lies in, never an
// answer that differs.
#include "btf/btf_index.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
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

const btf::BlobKey kKey{1525, 42, 7};

// Every type of `path` as both readers see them, and `sample` of its names
// and pointers (libbpf looks each up with a pass over every type).
void CompareReaders(const std::string& path, const std::string& cache_dir, size_t sample) {
  auto libbpf = File::Open(path, nullptr, {}, File::kLibbpf);
  auto indexed = File::Open(path, nullptr, cache_dir, File::kIndexed);
  REQUIRE(libbpf);
  REQUIRE(indexed);
  uint32_t id = 1;
  for (; libbpf->Get(id).kind != btf::Type::kVoid || libbpf->Get(id + 1).kind != btf::Type::kVoid; ++id) {
    INFO("type " << id);
    REQUIRE(indexed->Get(id) == libbpf->Get(id));
  }
  CHECK(indexed->Get(id) == btf::Type{});  // past the last
  CHECK(indexed->Get(0) == btf::Type{});
  auto names = libbpf->FunctionNames();
  REQUIRE(indexed->FunctionNames() == names);
  const size_t name_step = std::max<size_t>(1, names.size() / sample);
  for (size_t i = 0; i < names.size(); i += name_step)
    REQUIRE(indexed->FindFunction(names[i]) == libbpf->FindFunction(names[i]));
  const uint32_t step = std::max<uint32_t>(1, id / static_cast<uint32_t>(sample));
  for (uint32_t t = 1; t < id; t += step) {
    btf::Type type = libbpf->Get(t);
    for (auto kind : {btf::Type::kStruct, btf::Type::kUnion, btf::Type::kEnum, btf::Type::kTypedef, btf::Type::kInt})
      if (type.kind == kind) REQUIRE(indexed->FindType(type.name, kind) == libbpf->FindType(type.name, kind));
  }
  for (auto kind : {btf::Type::kStruct, btf::Type::kTypedef, btf::Type::kInt}) {
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

TEST_CASE("btf index: every truncation is refused, every flipped byte refused or caught") {
  std::string blob = Slurp(FixturePath("kernel_btf.btf"));
  auto built = Index::Build(blob, kKey);
  REQUIRE(built);
  const std::string bytes = (*built).bytes();
  auto good = Index::FromBytes(bytes, kKey);
  REQUIRE(good);
  uint32_t types = 1;
  while ((*good)->Get(types)->kind != btf::Type::kVoid) ++types;
  auto names = *(*good)->FunctionNames();
  for (size_t size = 0; size < bytes.size(); ++size) CHECK_FALSE(Index::FromBytes(bytes.substr(0, size), kKey));
  CHECK_FALSE(Index::FromBytes(bytes + '\0', kKey));
  size_t refused = 0, caught = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    auto view = Index::FromBytes(bad, kKey);
    if (!view) {
      ++refused;
      continue;
    }
    // Read everything: what is answered is the truth, or the read fails.
    bool failed = false;
    for (uint32_t id = 0; id <= types; ++id) {
      auto type = (*view)->Get(id);
      failed |= !type;
      if (type) REQUIRE(*type == *(*good)->Get(id));
    }
    auto listed = (*view)->FunctionNames();
    failed |= !listed;
    if (listed) REQUIRE(*listed == names);
    for (const std::string& name : names) {
      auto found = (*view)->Find(name, btf::kRawFunc);
      failed |= !found;
      if (found) REQUIRE(*found == *(*good)->Find(name, btf::kRawFunc));
    }
    caught += failed;
  }
  // The header and the block table are the seal's, the rest its block's
  // (one here: reading anything checks it).
  CHECK(refused >= sizeof(btf::IndexHeader));
  CHECK(refused + caught == bytes.size());
}

TEST_CASE("btf index: another blob (size, mtime or content) is refused, saying so") {
  auto built = Index::Build(Slurp(FixturePath("kernel_btf.btf")), kKey);
  REQUIRE(built);
  for (btf::BlobKey other : {btf::BlobKey{1526, 42, 7}, btf::BlobKey{1525, 43, 7}, btf::BlobKey{1525, 42, 8}})
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
  bytes[200] = static_cast<char>(bytes[200] ^ 1);  // a type's bytes: passes the seal, fails its block
  REQUIRE(WriteFileAtomically(index_file, bytes));
  auto libbpf = File::Open(path, nullptr, {}, File::kLibbpf);
  auto indexed = File::Open(path, nullptr, cache.path());
  REQUIRE(indexed);
  for (uint32_t id = 1; id < 40; ++id) REQUIRE(indexed->Get(id) == libbpf->Get(id));
  CHECK(Slurp(index_file) == good);  // written again
}
