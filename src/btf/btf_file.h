// SPDX-License-Identifier: GPL-2.0-or-later
//
// One BTF blob as plain data, type by type: what the rest of the btf stage
// reads, so that only btf_file.cc knows libbpf. A module's BTF is split: its
// type ids continue those of its base (vmlinux), which it keeps open.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

struct btf;

namespace kprobectl::btf {

struct Type {
  enum Kind {
    kVoid,
    kInt,
    kPointer,
    kArray,
    kStruct,
    kUnion,
    kEnum,
    kForward,
    kTypedef,
    kVolatile,
    kConst,
    kRestrict,
    kFunction,
    kPrototype,
    kFloat,
    kTypeTag,
    kOther,  // variables, data sections, declaration tags
  } kind = kVoid;
  std::string name;
  uint32_t size = 0;       // bytes: int, float, struct, union, enum
  uint32_t next = 0;       // what it refers to: pointee, element, typedef'd, qualified, prototype, return type
  uint32_t count = 0;      // array elements
  bool is_signed = false;  // int, enum
  bool is_char = false;    // int: a character type
  bool is_bool = false;    // int
  uint32_t int_bits = 0;   // int: value bits (less than size * 8 for an old-style bitfield)
  uint32_t int_offset = 0;
  struct Member {
    std::string name;
    uint32_t type = 0;
    uint32_t bit_offset = 0;     // struct and union members
    uint32_t bitfield_size = 0;  // 0: not a bitfield
    bool operator==(const Member&) const = default;
  };
  std::vector<Member> members;  // struct and union members, a prototype's parameters
  bool operator==(const Type&) const = default;
};

class Index;

class File {
 public:
  // Who reads a raw BTF blob: its index (btf_index.h), or libbpf (which
  // reads the rest: ELF files' .BTF sections, a module's split BTF).
  enum Reader { kIndexed, kLibbpf };
  // A raw BTF file (/sys/kernel/btf/vmlinux) or an ELF file's .BTF section;
  // with `base`, split BTF over it (a module's). With `cache_dir`, a raw
  // blob's index is kept there.
  static Result<File> Open(const std::string& path, std::shared_ptr<const File> base = nullptr,
                           const std::string& cache_dir = {}, Reader reader = kIndexed);
  // Split BTF given as its bytes (a module's .BTF section, which a
  // compressed .ko holds out of libbpf's reach), over `base`; `path` names
  // it in messages.
  static Result<File> OpenSplit(const std::string& path, std::string_view bytes, std::shared_ptr<const File> base);
  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  const std::string& path() const { return path_; }
  Type Get(uint32_t id) const;
  // The FUNC named `name` (its id), in this blob or its base.
  std::optional<uint32_t> FindFunction(std::string_view name) const;
  // Every FUNC's name, in id order (duplicates possible).
  std::vector<std::string> FunctionNames() const;
  // A named type of this kind (Type::kStruct, kUnion, kEnum, kTypedef,
  // kInt), in this blob or its base.
  std::optional<uint32_t> FindType(std::string_view name, Type::Kind kind) const;
  // The pointer type to `id`, when the BTF has one.
  std::optional<uint32_t> PointerTo(uint32_t id) const;

 private:
  File();
  // What libbpf made of `path` (null: errno says why), as a File.
  static Result<File> FromLibbpf(const std::string& path, struct ::btf* b, std::shared_ptr<const File> base);
  // A look-up through the index; when a block of its cache file fails its
  // check, the blob is indexed again from its bytes (and the cache file
  // rewritten), and the look-up made there.
  template <typename Lookup>
  auto Indexed(Lookup lookup) const;

  std::string path_;
  struct ::btf* btf_ = nullptr;
  std::shared_ptr<const File> base_;
  std::string cache_dir_;
  mutable std::unique_ptr<Index> index_;  // null: libbpf's btf_
};

}  // namespace kprobectl::btf
