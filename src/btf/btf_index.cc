// SPDX-License-Identifier: GPL-2.0-or-later
//
// Reading the index: every read goes through CheckedBytes (its blocks
// checked on first use) and is bounds-checked against the section it is
// in, so a cache file, whoever wrote it, is never read outside itself and
// never trusted where its hashes disagree. Types decode as btf_file.cc's
// CopyDetails decodes libbpf's (the tests compare them type by type).
#include "btf_index.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "btf_raw.h"

namespace kprobectl::btf {

namespace {

Error Corrupt() { return Error{"the BTF index failed its check (a block's hash)", ""}; }

}  // namespace

Index::~Index() = default;

Result<std::unique_ptr<Index>> Index::FromBytes(std::string bytes, const BlobKey& key, std::string_view blob) {
  std::unique_ptr<Index> index(new Index);
  index->bytes_ = CacheBytes::Owned(std::move(bytes));
  KP_TRY_VOID(index->Adopt(key, false, blob));
  return index;
}

Result<void> Index::Adopt(const BlobKey& key, bool trusted, std::string_view blob) {
  IndexHeader h;
  const unsigned char* header = bytes_.Header(sizeof h);
  if (!header) return Fail("truncated");
  std::memcpy(&h, header, sizeof h);
  if (std::memcmp(h.magic, kIndexMagic, sizeof kIndexMagic) != 0) return Fail("not a kprobectl BTF index");
  if (h.version != kIndexVersion)
    return Fail("index format " + std::to_string(h.version) + ", not " + std::to_string(kIndexVersion));
  if (h.source_size != key.size || h.source_mtime_ns != key.mtime_ns || h.sample != key.sample)
    return Fail("the BTF changed (size, mtime or content)");
  checked_ = KP_TRY(bytes_.Check(h.payload, sizeof h, kSealAt, trusted));
  // The seal vouches for the header: its sections are checked against the
  // payload once, each read against its section.
  auto inside = [&](uint64_t at, uint64_t bytes) { return at >= sizeof h && at + bytes <= checked_.payload(); };
  const bool refer = (h.flags & kReferToBlob) != 0;
  // The types and strings: in this file, or in the blob (a table of its
  // blocks' hashes in this file).
  auto in_sections = [&](uint64_t at, uint64_t bytes) { return refer ? at + bytes <= key.size : inside(at, bytes); };
  if (h.flags & ~kReferToBlob || h.types == 0 || !in_sections(h.types_at, h.types_len) ||
      !in_sections(h.strs_at, h.strs_len) || h.strs_len == 0 || !inside(h.offsets_at, uint64_t{h.types} * 4) ||
      !std::has_single_bit(h.slots) || !inside(h.slots_at, uint64_t{h.slots} * sizeof(NameSlot)) ||
      !inside(h.pointers_at, uint64_t{h.types} * 4) || !inside(h.funcs_at, uint64_t{h.funcs} * 4) ||
      (refer && !inside(h.blob_hashes_at, BlockTableSize(key.size, 0))))
    return Fail("corrupt (a section outside the file)");
  if (refer) {
    if (blob.size() != key.size) return Fail("refers to the blob, which cannot be mapped");
    const auto* data = reinterpret_cast<const unsigned char*>(blob.data());
    if (trusted) {
      blob_checked_ = CheckedBytes::Trusted(data, blob.size());
    } else {
      const unsigned char* table = checked_.Read(h.blob_hashes_at, BlockTableSize(key.size, 0));
      if (!table) return std::unexpected(Corrupt());
      blob_checked_ = CheckedBytes::Against(data, blob.size(), table);
    }
    sections_ = &blob_checked_;
  }
  types_ = h.types;
  types_at_ = h.types_at;
  types_len_ = h.types_len;
  strs_at_ = h.strs_at;
  strs_len_ = h.strs_len;
  offsets_at_ = h.offsets_at;
  slots_at_ = h.slots_at;
  slots_ = h.slots;
  pointers_at_ = h.pointers_at;
  funcs_at_ = h.funcs_at;
  funcs_ = h.funcs;
  return {};
}

Result<const unsigned char*> Index::Read(uint64_t offset, uint64_t length) const {
  const unsigned char* p = checked_.Read(offset, length);
  if (!p) return std::unexpected(Corrupt());
  return p;
}

Result<const unsigned char*> Index::ReadSections(uint64_t offset, uint64_t length) const {
  const unsigned char* p = sections_->Read(offset, length);
  if (!p) return std::unexpected(Corrupt());
  return p;
}

Result<uint32_t> Index::Word(uint64_t offset) const { return U32(KP_TRY(Read(offset, 4))); }

Result<std::string> Index::String(uint32_t offset) const {
  // Out of the section: no name, as libbpf's btf__name_by_offset.
  if (offset >= strs_len_) return std::string();
  std::string out;
  for (uint64_t at = offset; at < strs_len_;) {
    // One block at a time, up to its end or the section's.
    uint64_t absolute = strs_at_ + at;
    uint64_t chunk = std::min<uint64_t>(kCheckBlock - absolute % kCheckBlock, strs_len_ - at);
    const unsigned char* p = KP_TRY(ReadSections(absolute, chunk));
    const void* nul = std::memchr(p, '\0', chunk);
    size_t take = nul ? static_cast<size_t>(static_cast<const unsigned char*>(nul) - p) : chunk;
    out.append(reinterpret_cast<const char*>(p), take);
    if (nul) return out;
    at += chunk;
  }
  return std::unexpected(Corrupt());  // the builder checked the section ends with a NUL
}

Result<Type> Index::Get(uint32_t id) const {
  Type out;
  if (id == 0 || id >= types_) return out;  // void, or an id out of range
  uint32_t offset = KP_TRY(Word(offsets_at_ + uint64_t{id} * 4));
  if (uint64_t{offset} + 12 > types_len_) return std::unexpected(Corrupt());
  const unsigned char* t = KP_TRY(ReadSections(uint64_t{types_at_} + offset, 12));
  const uint32_t name_off = U32(t), info = U32(t + 4), size_type = U32(t + 8);
  const uint32_t kind = KindOfInfo(info), vlen = VlenOfInfo(info);
  int64_t extra = ExtraSize(kind, vlen);
  if (extra < 0 || uint64_t{offset} + 12 + static_cast<uint64_t>(extra) > types_len_) return std::unexpected(Corrupt());
  const unsigned char* x = KP_TRY(ReadSections(uint64_t{types_at_} + offset + 12, static_cast<uint64_t>(extra)));
  out.kind = TypeKindOf(kind);
  out.name = KP_TRY(String(name_off));
  switch (kind) {
    case kRawInt: {
      uint32_t v = U32(x), encoding = (v >> 24) & 0x0f;
      out.size = size_type;
      out.is_signed = (encoding & 1) != 0;
      out.is_char = (encoding & 2) != 0 || (size_type == 1 && out.name.find("char") != std::string::npos);
      out.is_bool = (encoding & 4) != 0;
      out.int_bits = v & 0xff;
      out.int_offset = (v >> 16) & 0xff;
      break;
    }
    case kRawEnum:
    case kRawEnum64:
      out.size = size_type;
      out.is_signed = KflagOfInfo(info);
      break;
    case kRawFloat:
      out.size = size_type;
      break;
    case kRawArray:
      out.next = U32(x);
      out.count = U32(x + 8);
      break;
    case kRawStruct:
    case kRawUnion: {
      out.size = size_type;
      bool kflag = KflagOfInfo(info);
      for (uint32_t i = 0; i < vlen; ++i) {
        const unsigned char* m = x + size_t{i} * 12;
        uint32_t bits = U32(m + 8);
        out.members.push_back(
            {KP_TRY(String(U32(m))), U32(m + 4), kflag ? bits & 0xffffff : bits, kflag ? bits >> 24 : 0});
      }
      break;
    }
    case kRawFuncProto:
      out.next = size_type;
      for (uint32_t i = 0; i < vlen; ++i) {
        const unsigned char* p = x + size_t{i} * 8;
        out.members.push_back({KP_TRY(String(U32(p))), U32(p + 4), 0, 0});
      }
      break;
    default:
      out.next = size_type;  // pointers, typedefs, qualifiers, functions (their prototype)
      break;
  }
  return out;
}

Result<std::optional<uint32_t>> Index::Find(std::string_view name, uint32_t btf_kind) const {
  // libbpf's btf__find_by_name_kind answers 0 (no type) for "void".
  if (name == "void") return std::nullopt;
  if (name.empty()) return FindAnonymous(btf_kind);
  const uint64_t hash = NameHash(name.data(), name.size());
  const uint32_t mask = slots_ - 1;
  // At most every slot: a table without an empty one (a corrupt file that
  // passed its checks, which cannot be) must not loop forever.
  for (uint32_t probe = 0, slot = static_cast<uint32_t>(hash) & mask; probe < slots_;
       ++probe, slot = (slot + 1) & mask) {
    NameSlot s;
    std::memcpy(&s, KP_TRY(Read(slots_at_ + uint64_t{slot} * sizeof s, sizeof s)), sizeof s);
    if (s.id == 0) break;
    if (s.check != static_cast<uint32_t>(hash >> 32)) continue;
    if (s.id >= types_) return std::unexpected(Corrupt());
    uint32_t offset = KP_TRY(Word(offsets_at_ + uint64_t{s.id} * 4));
    if (uint64_t{offset} + 12 > types_len_) return std::unexpected(Corrupt());
    const unsigned char* t = KP_TRY(ReadSections(uint64_t{types_at_} + offset, 12));
    if (KindOfInfo(U32(t + 4)) != btf_kind) continue;
    if (KP_TRY(String(U32(t))) == name) return s.id;
  }
  return std::nullopt;
}

Result<std::optional<uint32_t>> Index::FindAnonymous(uint32_t btf_kind) const {
  for (uint32_t id = 1; id < types_; ++id) {
    uint32_t offset = KP_TRY(Word(offsets_at_ + uint64_t{id} * 4));
    if (uint64_t{offset} + 12 > types_len_) return std::unexpected(Corrupt());
    const unsigned char* t = KP_TRY(ReadSections(uint64_t{types_at_} + offset, 12));
    if (KindOfInfo(U32(t + 4)) == btf_kind && U32(t) < strs_len_ && KP_TRY(String(U32(t))).empty()) return id;
  }
  return std::nullopt;
}

Result<std::vector<std::string>> Index::FunctionNames() const {
  std::vector<std::string> out;
  out.reserve(funcs_);
  for (uint32_t i = 0; i < funcs_; ++i) {
    uint32_t id = KP_TRY(Word(funcs_at_ + uint64_t{i} * 4));
    if (id == 0 || id >= types_) return std::unexpected(Corrupt());
    uint32_t offset = KP_TRY(Word(offsets_at_ + uint64_t{id} * 4));
    if (uint64_t{offset} + 12 > types_len_) return std::unexpected(Corrupt());
    uint32_t name_off = U32(KP_TRY(ReadSections(uint64_t{types_at_} + offset, 4)));
    out.push_back(KP_TRY(String(name_off)));
  }
  return out;
}

Result<std::optional<uint32_t>> Index::PointerTo(uint32_t id) const {
  if (id >= types_) return std::nullopt;
  uint32_t pointer = KP_TRY(Word(pointers_at_ + uint64_t{id} * 4));
  if (pointer == 0) return std::nullopt;
  return pointer;
}

std::string IndexPath(const std::string& dir, const BlobKey& key) {
  std::string sample(reinterpret_cast<const char*>(&key.sample), sizeof key.sample);
  return dir + "/btf-" + HexOf(sample) + ".idx";
}

}  // namespace kprobectl::btf
