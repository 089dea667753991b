// SPDX-License-Identifier: GPL-2.0-or-later
//
// libbpf's BTF parser, confined here: btf__parse reads raw BTF and the
// .BTF section of an ELF file alike, btf__parse_split a module's over its
// base. Each type is copied out as a btf::Type when asked for.
#include "btf_file.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "btf_index.h"
#include "btf_raw.h"

namespace kprobectl::btf {

namespace {

std::string Name(const struct ::btf* b, uint32_t offset) {
  const char* name = btf__name_by_offset(b, offset);
  return name ? name : "";
}

void CopyDetails(const struct ::btf* b, const struct btf_type* t, Type& out) {
  switch (btf_kind(t)) {
    case BTF_KIND_INT: {
      uint8_t encoding = btf_int_encoding(t);
      out.size = t->size;
      out.is_signed = (encoding & BTF_INT_SIGNED) != 0;
      out.is_char = (encoding & BTF_INT_CHAR) != 0 || (t->size == 1 && out.name.find("char") != std::string::npos);
      out.is_bool = (encoding & BTF_INT_BOOL) != 0;
      out.int_bits = btf_int_bits(t);
      out.int_offset = btf_int_offset(t);
      break;
    }
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
      out.size = t->size;
      out.is_signed = btf_kflag(t);
      break;
    case BTF_KIND_FLOAT:
      out.size = t->size;
      break;
    case BTF_KIND_ARRAY:
      out.next = btf_array(t)->type;
      out.count = btf_array(t)->nelems;
      break;
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION: {
      out.size = t->size;
      const struct btf_member* m = btf_members(t);
      for (uint16_t i = 0; i < btf_vlen(t); ++i)
        out.members.push_back(
            {Name(b, m[i].name_off), m[i].type, btf_member_bit_offset(t, i), btf_member_bitfield_size(t, i)});
      break;
    }
    case BTF_KIND_FUNC_PROTO: {
      out.next = t->type;
      const struct btf_param* p = btf_params(t);
      for (uint16_t i = 0; i < btf_vlen(t); ++i) out.members.push_back({Name(b, p[i].name_off), p[i].type, 0, 0});
      break;
    }
    default:
      out.next = t->type;  // pointers, typedefs, qualifiers, functions (their prototype)
      break;
  }
}

}  // namespace

File::File() = default;

template <typename Lookup>
auto File::Indexed(Lookup lookup) const {
  auto found = lookup(*index_);
  if (!found) {
    if (auto rebuilt = Index::Open(path_, cache_dir_, false)) {
      index_ = std::move(rebuilt);
      found = lookup(*index_);
    }
  }
  // The blob gone since: nothing found.
  return found ? std::move(*found) : typename decltype(found)::value_type{};
}

Result<File> File::Open(const std::string& path, std::shared_ptr<const File> base, const std::string& cache_dir,
                        Reader reader) {
  if (!base && reader == kIndexed) {
    if (auto index = Index::Open(path, cache_dir)) {
      File f;
      f.path_ = path;
      f.cache_dir_ = cache_dir;
      f.index_ = std::move(index);
      return f;
    }
  }
  // libbpf prints its complaints to stderr; its errors come back here as values.
  libbpf_set_print(nullptr);
  errno = 0;
  struct ::btf* b = base ? btf__parse_split(path.c_str(), base->btf_) : btf__parse(path.c_str(), nullptr);
  return FromLibbpf(path, b, std::move(base));
}

Result<File> File::OpenSplit(const std::string& path, std::string_view bytes, std::shared_ptr<const File> base) {
  // libbpf reads split BTF from a file here (Debian 12's libbpf 1.1 does
  // not export btf__new_split): the bytes are given to it as one, in memory.
  int fd = bytes.empty() ? -1 : memfd_create("kprobectl-split-btf", MFD_CLOEXEC);
  bool written = fd >= 0;
  for (size_t at = 0; written && at < bytes.size();) {
    ssize_t n = write(fd, bytes.data() + at, bytes.size() - at);
    written = n > 0;
    at += written ? static_cast<size_t>(n) : 0;
  }
  libbpf_set_print(nullptr);
  errno = bytes.empty() ? ENOENT : errno;
  struct ::btf* b =
      written ? btf__parse_raw_split(("/proc/self/fd/" + std::to_string(fd)).c_str(), base->btf_) : nullptr;
  int error = errno;
  if (fd >= 0) close(fd);
  errno = error;
  return FromLibbpf(path, b, std::move(base));
}

Result<File> File::FromLibbpf(const std::string& path, struct ::btf* b, std::shared_ptr<const File> base) {
  if (!b) {
    int error = errno ? errno : EINVAL;
    if (error == ENOENT)
      return Fail("no BTF at " + path + (path.starts_with("/sys/") ? "" : " (no such file, or no .BTF section)"),
                  "a kernel built with CONFIG_DEBUG_INFO_BTF has it at /sys/kernel/btf/vmlinux");
    // libbpf's own codes (LIBBPF_ERRNO__*, from 4000) say the file is not BTF or ELF.
    std::string why = error >= 4000 ? "it is neither raw BTF nor an ELF file" : std::strerror(error);
    return Fail("cannot read the BTF of " + path + ": " + why,
                "give a raw BTF file or an ELF file with a .BTF section");
  }
  File f;
  f.path_ = path;
  f.btf_ = b;
  f.base_ = std::move(base);
  return f;
}

File::File(File&& other) noexcept
    : path_(std::move(other.path_)),
      btf_(std::exchange(other.btf_, nullptr)),
      base_(std::move(other.base_)),
      cache_dir_(std::move(other.cache_dir_)),
      index_(std::move(other.index_)) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    btf__free(btf_);
    path_ = std::move(other.path_);
    btf_ = std::exchange(other.btf_, nullptr);
    base_ = std::move(other.base_);
    cache_dir_ = std::move(other.cache_dir_);
    index_ = std::move(other.index_);
  }
  return *this;
}

File::~File() { btf__free(btf_); }

Type File::Get(uint32_t id) const {
  if (index_) return Indexed([&](const Index& index) { return index.Get(id); });
  Type out;
  const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
  if (!t) return out;                  // void, or an id out of range
  out.kind = TypeKindOf(btf_kind(t));  // libbpf's BTF_KIND_* are the raw kinds
  out.name = Name(btf_, t->name_off);
  CopyDetails(btf_, t, out);
  return out;
}

std::optional<uint32_t> File::FindFunction(std::string_view name) const {
  if (index_) return Indexed([&](const Index& index) { return index.Find(name, BTF_KIND_FUNC); });
  int id = btf__find_by_name_kind(btf_, std::string(name).c_str(), BTF_KIND_FUNC);
  if (id <= 0) return std::nullopt;
  return static_cast<uint32_t>(id);
}

std::vector<std::string> File::FunctionNames() const {
  if (index_) return Indexed([](const Index& index) { return index.FunctionNames(); });
  std::vector<std::string> out;
  uint32_t count = btf__type_cnt(btf_);
  // A split blob's own types come after its base's.
  for (uint32_t id = base_ ? btf__type_cnt(base_->btf_) : 1; id < count; ++id) {
    const struct btf_type* t = btf__type_by_id(btf_, id);
    if (t && btf_is_func(t)) out.push_back(Name(btf_, t->name_off));
  }
  return out;
}

std::optional<uint32_t> File::FindType(std::string_view name, Type::Kind kind) const {
  __u32 btf_kind = 0;
  switch (kind) {
    case Type::kStruct:
      btf_kind = BTF_KIND_STRUCT;
      break;
    case Type::kUnion:
      btf_kind = BTF_KIND_UNION;
      break;
    case Type::kEnum:
      btf_kind = BTF_KIND_ENUM;
      break;
    case Type::kTypedef:
      btf_kind = BTF_KIND_TYPEDEF;
      break;
    case Type::kInt:
      btf_kind = BTF_KIND_INT;
      break;
    default:
      return std::nullopt;
  }
  if (index_) {
    auto found = Indexed([&](const Index& index) { return index.Find(name, btf_kind); });
    if (!found && kind == Type::kEnum)
      found = Indexed([&](const Index& index) { return index.Find(name, BTF_KIND_ENUM64); });
    return found;
  }
  int id = btf__find_by_name_kind(btf_, std::string(name).c_str(), btf_kind);
  if (id <= 0 && kind == Type::kEnum) id = btf__find_by_name_kind(btf_, std::string(name).c_str(), BTF_KIND_ENUM64);
  if (id <= 0) return std::nullopt;
  return static_cast<uint32_t>(id);
}

std::optional<uint32_t> File::PointerTo(uint32_t id) const {
  if (index_) return Indexed([&](const Index& index) { return index.PointerTo(id); });
  uint32_t count = btf__type_cnt(btf_);
  for (uint32_t i = 1; i < count; ++i) {
    const struct btf_type* t = btf__type_by_id(btf_, i);
    if (t && btf_is_ptr(t) && t->type == id) return i;
  }
  return std::nullopt;
}

}  // namespace kprobectl::btf
