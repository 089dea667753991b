// SPDX-License-Identifier: GPL-2.0-or-later
//
// The raw BTF format (the kernel's include/uapi/linux/btf.h, read by hand so
// that libbpf stays in btf_file.cc) and the layout of its cache file, shared
// by the index's reader (btf_index.cc) and its builder (btf_index_build.cc).
//
// Cache file (little-endian), a payload sealed by SealBlocks:
//   header, 128 bytes (IndexHeader);
//   the blob's type section, then its string section, copied; or, where the
//     blob could be mapped (a file; /sys/kernel/btf/vmlinux since Linux
//     6.16), nothing: the index refers to the blob's own sections
//     (kReferToBlob), and holds the hash of each 4 KB of the blob (after
//     the functions) against which what is read of it is checked;
//   u32 offsets[types]: each type's offset in the type section (0: void);
//   slots[]: an open-addressing table (a power of two, at least 1.5 times
//     the names) of the types of the kinds looked up by name, each {u32 id,
//     u32 high half of the name's hash}, 0 when empty, probed linearly from
//     the hash's low bits; inserted in id order, so that the first match
//     along a probe is the lowest id, libbpf's answer;
//   u32 pointers[types]: the first pointer type to each type, or 0;
//   u32 functions[]: the FUNC types' ids, in id order;
//   then the block table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "btf_file.h"

namespace kprobectl::btf {

constexpr uint16_t kBtfMagic = 0xeB9F;
constexpr uint32_t kBtfHeaderSize = 24;  // magic, version, flags, hdr_len, type_off/len, str_off/len

enum RawKind : uint32_t {
  kRawInt = 1,
  kRawPtr = 2,
  kRawArray = 3,
  kRawStruct = 4,
  kRawUnion = 5,
  kRawEnum = 6,
  kRawFwd = 7,
  kRawTypedef = 8,
  kRawVolatile = 9,
  kRawConst = 10,
  kRawRestrict = 11,
  kRawFunc = 12,
  kRawFuncProto = 13,
  kRawVar = 14,
  kRawDatasec = 15,
  kRawFloat = 16,
  kRawDeclTag = 17,
  kRawTypeTag = 18,
  kRawEnum64 = 19,
};

// A little-endian word of a blob, wherever it lies.
inline uint32_t U32(const unsigned char* p) {
  uint32_t w;
  __builtin_memcpy(&w, p, 4);
  return w;
}

constexpr uint32_t KindOfInfo(uint32_t info) { return (info >> 24) & 0x1f; }
constexpr uint32_t VlenOfInfo(uint32_t info) { return info & 0xffff; }
constexpr bool KflagOfInfo(uint32_t info) { return (info >> 31) != 0; }

// The bytes after a type's 12-byte common part; -1 for a kind not known.
constexpr int64_t ExtraSize(uint32_t kind, uint32_t vlen) {
  switch (kind) {
    case kRawInt:
    case kRawVar:
    case kRawDeclTag:
      return 4;
    case kRawArray:
      return 12;
    case kRawStruct:
    case kRawUnion:
      return int64_t{vlen} * 12;
    case kRawEnum:
    case kRawFuncProto:
      return int64_t{vlen} * 8;
    case kRawDatasec:
    case kRawEnum64:
      return int64_t{vlen} * 12;
    case kRawPtr:
    case kRawFwd:
    case kRawTypedef:
    case kRawVolatile:
    case kRawConst:
    case kRawRestrict:
    case kRawFunc:
    case kRawFloat:
    case kRawTypeTag:
      return 0;
    default:
      return -1;
  }
}

// The kinds btf::File looks up by name (FindFunction, FindType).
constexpr bool NamedKind(uint32_t kind) {
  return kind == kRawFunc || kind == kRawStruct || kind == kRawUnion || kind == kRawEnum || kind == kRawEnum64 ||
         kind == kRawTypedef || kind == kRawInt;
}

// How btf::Type names a kind (ENUM64 is an enum, as ENUM).
inline Type::Kind TypeKindOf(uint32_t kind) {
  switch (kind) {
    case kRawInt:
      return Type::kInt;
    case kRawPtr:
      return Type::kPointer;
    case kRawArray:
      return Type::kArray;
    case kRawStruct:
      return Type::kStruct;
    case kRawUnion:
      return Type::kUnion;
    case kRawEnum:
    case kRawEnum64:
      return Type::kEnum;
    case kRawFwd:
      return Type::kForward;
    case kRawTypedef:
      return Type::kTypedef;
    case kRawVolatile:
      return Type::kVolatile;
    case kRawConst:
      return Type::kConst;
    case kRawRestrict:
      return Type::kRestrict;
    case kRawFunc:
      return Type::kFunction;
    case kRawFuncProto:
      return Type::kPrototype;
    case kRawFloat:
      return Type::kFloat;
    case kRawTypeTag:
      return Type::kTypeTag;
    default:
      return Type::kOther;
  }
}

constexpr char kIndexMagic[8] = {'K', 'P', 'B', 'T', 'F', 'I', 'D', 'X'};
// 3: blocks on the file's pages (cache_file.h)
constexpr uint32_t kIndexVersion = 3;
// IndexHeader::flags: types_at and strs_at are offsets in the blob, not in
// the index.
constexpr uint32_t kReferToBlob = 1;

struct IndexHeader {
  char magic[8];
  uint32_t version;
  uint32_t types;  // type ids, void's included
  uint64_t source_size;
  int64_t source_mtime_ns;
  uint64_t sample;
  uint64_t payload;  // bytes before the block table
  uint64_t seal;
  uint32_t types_at, types_len, strs_at, strs_len;
  uint32_t offsets_at, slots_at, slots, pointers_at, funcs_at, funcs;
  uint32_t flags, blob_hashes_at;
  uint32_t reserved[6];
};
static_assert(sizeof(IndexHeader) == 128);
constexpr size_t kSealAt = offsetof(IndexHeader, seal);

struct NameSlot {
  uint32_t id, check;
};
static_assert(sizeof(NameSlot) == 8);

// FNV-1a over 8-byte words: names are short, and a kernel has 100,000 of
// them to hash when the index is built.
inline uint64_t NameHash(const char* name, size_t size) {
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t at = 0;
  for (; at + 8 <= size; at += 8) {
    uint64_t w;
    __builtin_memcpy(&w, name + at, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  __builtin_memcpy(&tail, name + at, size - at);
  h = (h ^ tail ^ (uint64_t{size} << 56)) * 0x100000001b3ULL;
  h ^= h >> 32;
  return h * 0x9E3779B185EBCA87ULL;
}

}  // namespace kprobectl::btf
