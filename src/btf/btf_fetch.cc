// SPDX-License-Identifier: GPL-2.0-or-later
//
// A function's parameters at its entry, from its BTF prototype: where the
// target architecture's psABI puts each (arch.h: integer argument slots,
// registers then the stack; a composite by value or by reference), then
// member chains walked over BTF types to a VariableFetch (btf_walk.cc), as
// dwarf_members.cc walks DWARF's.
#include <algorithm>
#include <optional>

#include "btf_file.h"
#include "btf_types.h"
#include "btf_walk.h"
#include "kprobectl/arch.h"
#include "kprobectl/btf.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace btf {

namespace {

// How the psABI sees a parameter's type: its class, size and alignment.
uint64_t AlignOf(const File& file, uint32_t id, int depth = 0) {
  Type t = file.Get(Peel(file, id));
  if (depth > 16) return 8;
  if (t.kind == Type::kStruct || t.kind == Type::kUnion) {
    uint64_t align = 1;
    for (const Type::Member& m : t.members) align = std::max(align, AlignOf(file, m.type, depth + 1));
    return align;
  }
  if (t.kind == Type::kArray) return AlignOf(file, t.next, depth + 1);
  return std::clamp<uint64_t>(SizeOf(file, id), 1, 16);
}

// The floating-point members of an aggregate made of them only (of one
// type, as the AAPCS64's homogeneous aggregates), or 0.
unsigned FloatMembers(const File& file, uint32_t id, uint64_t* element = nullptr, int depth = 0) {
  Type t = file.Get(Peel(file, id));
  uint64_t local = 0;
  if (!element) element = &local;
  if (depth > 16) return 0;
  if (t.kind == Type::kFloat) {
    if (*element && *element != t.size) return 0;
    *element = t.size;
    return 1;
  }
  if (t.kind == Type::kArray) {
    unsigned inner = FloatMembers(file, t.next, element, depth + 1);
    return inner ? inner * t.count : 0;
  }
  if (t.kind != Type::kStruct && t.kind != Type::kUnion) return 0;
  unsigned total = 0;
  for (const Type::Member& m : t.members) {
    unsigned inner = FloatMembers(file, m.type, element, depth + 1);
    if (!inner) return 0;
    total = t.kind == Type::kUnion ? std::max(total, inner) : total + inner;
  }
  return total;
}

ParamClass ClassOf(const File& file, uint32_t id) {
  Type t = file.Get(Peel(file, id));
  ParamClass out;
  out.size = SizeOf(file, id);
  out.align = AlignOf(file, id);
  out.type_name = TypeName(file, id);
  if (t.kind == Type::kFloat) {
    out.kind = ParamClass::kFloat;
  } else if (t.kind == Type::kStruct || t.kind == Type::kUnion) {
    out.kind = ParamClass::kAggregate;
    out.float_members = FloatMembers(file, id);
    out.all_float = out.float_members > 0;
  }
  return out;
}

std::vector<ParamPlace> Places(const File& file, const Type& prototype, const Arch& arch) {
  std::vector<ParamClass> classes;
  for (const Type::Member& p : prototype.members) classes.push_back(ClassOf(file, p.type));
  return arch.PlaceParams(classes);
}

struct Prototype {
  Type type;
  std::vector<ParamPlace> places;
};

Result<Prototype> PrototypeOf(const File& file, const Arch& arch, std::string_view function) {
  auto id = file.FindFunction(function);
  if (!id)
    return Fail("no function '" + std::string(function) + "' in the BTF of " + file.path(),
                "BTF describes the functions the kernel was built with, minus those whose calling convention "
                "the compiler changed; kernel DWARF knows them all");
  Type prototype = file.Get(file.Get(*id).next);
  if (prototype.kind != Type::kPrototype)
    return Fail("the BTF of " + file.path() + " gives '" + std::string(function) + "' no prototype");
  // A variadic function ends with a nameless void parameter.
  if (!prototype.members.empty() && prototype.members.back().type == 0) prototype.members.pop_back();
  std::vector<ParamPlace> places = Places(file, prototype, arch);
  return Prototype{std::move(prototype), std::move(places)};
}

Result<Walked> Parameter(const File& file, const Prototype& proto, std::string_view function, const std::string& name) {
  for (size_t i = 0; i < proto.type.members.size(); ++i) {
    const Type::Member& p = proto.type.members[i];
    if (p.name != name) continue;
    const ParamPlace& place = proto.places[i];
    if (place.kind == ParamPlace::kUnreadable)
      return Fail("parameter '" + name + "' of '" + std::string(function) + "' " + place.why);
    Walked w;
    w.place.base.root = VariableFetch::kArgument;
    w.place.base.argument = place.slot;
    // A composite passed by reference: the slot holds its address; by
    // value, its members are in the `slots` slots' bits.
    w.place.memory = place.kind == ParamPlace::kByReference;
    Type t = file.Get(Peel(file, p.type));
    if (!w.place.memory && (t.kind == Type::kStruct || t.kind == Type::kUnion)) w.place.slots = place.slots;
    w.type = p.type;
    w.name = name;
    w.what = "'" + name + "'";
    return w;
  }
  std::vector<std::string> names;
  for (const Type::Member& p : proto.type.members) names.push_back(p.name);
  return Fail("'" + std::string(function) + "' has no parameter '" + name + "' (BTF knows parameters, not locals)",
              names.empty() ? "it takes no parameters"
                            : "its parameters: " + Join(names, ", ") + "; locals need the kernel's DWARF");
}

}  // namespace

}  // namespace btf

BtfInfo::BtfInfo(std::shared_ptr<const btf::File> file, const Arch& arch) : file_(std::move(file)), arch_(&arch) {}
BtfInfo::~BtfInfo() = default;

Result<std::unique_ptr<BtfInfo>> BtfInfo::Open(const std::string& path, const Arch& arch, const std::string& base_path,
                                               const std::string& cache_dir, BtfReader reader) {
  std::shared_ptr<const btf::File> base;
  // Split BTF is libbpf's to read, over a base libbpf read.
  if (!base_path.empty())
    base = std::make_shared<const btf::File>(KP_TRY(btf::File::Open(base_path, nullptr, {}, btf::File::kLibbpf)));
  auto file = std::make_shared<const btf::File>(KP_TRY(
      btf::File::Open(path, base, cache_dir, reader == BtfReader::kLibbpf ? btf::File::kLibbpf : btf::File::kIndexed)));
  return std::unique_ptr<BtfInfo>(new BtfInfo(std::move(file), arch));
}

Result<std::unique_ptr<BtfInfo>> BtfInfo::OpenSplit(const std::string& path, std::string_view bytes, const Arch& arch,
                                                    const std::string& base_path) {
  auto base = std::make_shared<const btf::File>(KP_TRY(btf::File::Open(base_path, nullptr, {}, btf::File::kLibbpf)));
  auto file = std::make_shared<const btf::File>(KP_TRY(btf::File::OpenSplit(path, bytes, std::move(base))));
  return std::unique_ptr<BtfInfo>(new BtfInfo(std::move(file), arch));
}

const std::string& BtfInfo::path() const { return file_->path(); }

bool BtfInfo::HasFunction(std::string_view function) const { return file_->FindFunction(function).has_value(); }

std::vector<std::string> BtfInfo::Functions() const {
  std::vector<std::string> names = file_->FunctionNames();
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<std::vector<BtfParameter>> BtfInfo::Parameters(std::string_view function) const {
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, *arch_, function));
  std::vector<BtfParameter> out;
  for (const btf::Type::Member& p : proto.type.members) {
    BtfParameter param;
    param.name = p.name;
    param.c_type = btf::TypeName(*file_, p.type);
    auto walked = btf::Parameter(*file_, proto, function, p.name);
    if (walked && walked->place.slots > 1) {
      param.in_pieces = true;
      for (const btf::MemberFetch& m : btf::ReadableMembers(*file_, *walked))
        (m.fetch ? param.piece_members : param.pieces_refused).push_back(m.path);
    }
    out.push_back(std::move(param));
  }
  return out;
}

Result<VariableFetch> BtfInfo::Fetch(std::string_view function, const ArgExpr& expr, bool want_string) const {
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, *arch_, function));
  btf::Walked w = KP_TRY(btf::Parameter(*file_, proto, function, expr.name));
  for (const ArgAccessor& acc : expr.accessors) {
    if (acc.kind == ArgAccessor::kIndex)
      KP_TRY_VOID(btf::WalkIndex(*file_, w, acc));
    else
      KP_TRY_VOID(btf::WalkMember(*file_, w, acc));
  }
  auto fetch = btf::Read(*file_, w, want_string);
  if (!fetch && w.place.slots) {
    // A struct in two argument registers: what can be read of it.
    std::vector<std::string> readable;
    for (const btf::MemberFetch& m : btf::ReadableMembers(*file_, w))
      if (m.fetch) readable.push_back(m.path);
    if (!readable.empty()) return Fail(fetch.error().message, "fetch its members: " + Join(readable, " "));
  }
  return fetch;
}

Result<std::vector<VariableFetch>> BtfInfo::FetchAll(std::string_view function,
                                                     std::vector<std::string>* skipped) const {
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, *arch_, function));
  std::vector<VariableFetch> out;
  for (const btf::Type::Member& p : proto.type.members) {
    auto walked = btf::Parameter(*file_, proto, function, p.name);
    if (walked && walked->place.slots > 1) {
      // A struct in two argument registers: its members, as the DWARF's
      // pieces of it give them.
      for (btf::MemberFetch& m : btf::ReadableMembers(*file_, *walked))
        if (m.fetch)
          out.push_back(std::move(*m.fetch));
        else if (skipped)
          skipped->push_back(m.path + ": " + m.fetch.error().message);
      continue;
    }
    auto fetch = walked ? btf::Read(*file_, *walked, false) : std::unexpected(walked.error());
    if (fetch)
      out.push_back(std::move(*fetch));
    else if (skipped)
      skipped->push_back(p.name + ": " + fetch.error().message);
  }
  return out;
}

std::optional<std::pair<FetchType, std::string>> BtfInfo::ReturnType(std::string_view function) const {
  auto proto = btf::PrototypeOf(*file_, *arch_, function);
  if (!proto || proto->type.next == 0) return std::nullopt;
  auto type = btf::ScalarFetchType(*file_, proto->type.next, "$retval");
  if (!type) return std::nullopt;
  return std::pair<FetchType, std::string>{*type, btf::TypeName(*file_, proto->type.next)};
}

}  // namespace kprobectl
