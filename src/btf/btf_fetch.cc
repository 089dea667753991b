// SPDX-License-Identifier: GPL-2.0-or-later
//
// A function's parameters at its entry, from its BTF prototype: where the
// target architecture's psABI puts each (arch.h: integer argument slots,
// registers then the stack; a composite by value or by reference), then
// member chains walked over BTF types to a VariableFetch, as
// dwarf_members.cc walks DWARF's.
#include <algorithm>
#include <optional>

#include "btf_file.h"
#include "btf_types.h"
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

// Where a value is: the value itself (a parameter), or memory at a value
// plus an offset (what a pointer leads to).
struct Place {
  VariableFetch base;
  bool memory = false;
  int64_t offset = 0;
};

VariableFetch ReadPlace(const Place& place) {
  VariableFetch out = place.base;
  if (place.memory) out.derefs.push_back(place.offset);
  return out;
}

Place Pointee(const Place& pointer, int64_t offset) { return Place{ReadPlace(pointer), true, offset}; }

struct Walked {
  Place place;
  uint32_t type = 0;
  std::string name;  // the last member's or the parameter's
  std::string what;  // "'req->hdr.len'", for messages
  std::optional<std::pair<FetchType, int64_t>> bitfield;
};

struct Found {
  Type::Member member;
  uint64_t bit_offset = 0;  // from the start of the outermost aggregate
};

// A member by name, looking inside anonymous structs and unions too.
std::optional<Found> FindMember(const File& file, const Type& aggregate, const std::string& name, int depth = 0) {
  if (depth > 16) return std::nullopt;
  for (const Type::Member& m : aggregate.members) {
    if (m.name == name) return Found{m, m.bit_offset};
    if (!m.name.empty()) continue;
    Type inner = file.Get(Peel(file, m.type));
    if (inner.kind != Type::kStruct && inner.kind != Type::kUnion) continue;
    if (auto found = FindMember(file, inner, name, depth + 1)) {
      found->bit_offset += m.bit_offset;
      return found;
    }
  }
  return std::nullopt;
}

std::vector<std::string> MemberNames(const Type& aggregate) {
  std::vector<std::string> names;
  for (const Type::Member& m : aggregate.members)
    if (!m.name.empty() && names.size() < 12) names.push_back(m.name);
  return names;
}

Result<void> WalkIndex(const File& file, Walked& w, const ArgAccessor& acc) {
  Type t = file.Get(Peel(file, w.type));
  if (t.kind == Type::kArray) {
    if (!w.place.memory) return Fail(w.what + " is an array the kernel cannot index here");
    w.place.offset += acc.index * static_cast<int64_t>(SizeOf(file, t.next));
  } else if (t.kind == Type::kPointer) {
    w.place = Pointee(w.place, acc.index * static_cast<int64_t>(SizeOf(file, t.next)));
  } else {
    return Fail(w.what + " (" + TypeName(file, w.type) + ") is neither an array nor a pointer, so [" +
                std::to_string(acc.index) + "] means nothing");
  }
  w.type = t.next;
  w.what = w.what.substr(0, w.what.size() - 1) + "[" + std::to_string(acc.index) + "]'";
  return {};
}

Result<void> WalkMember(const File& file, Walked& w, const ArgAccessor& acc) {
  uint32_t peeled = Peel(file, w.type);
  Type t = file.Get(peeled);
  bool arrow = acc.kind == ArgAccessor::kArrow;
  std::string bare = w.what.substr(1, w.what.size() - 2);
  uint32_t aggregate_id = peeled;
  if (arrow) {
    if (t.kind != Type::kPointer)
      return Fail(w.what + " (" + TypeName(file, w.type) + ") is not a pointer",
                  "use '.' for its members: " + bare + "." + acc.member);
    if (t.next == 0) return Fail(w.what + " is a void pointer; it has no members");
    aggregate_id = Peel(file, t.next);
  } else if (t.kind == Type::kPointer) {
    return Fail(w.what + " is a pointer (" + TypeName(file, w.type) + ")",
                "use '->' for what it points to: " + bare + "->" + acc.member);
  }
  Type aggregate = file.Get(aggregate_id);
  if (aggregate.kind == Type::kForward)
    return Fail(TypeName(file, aggregate_id) + " is declared but not defined in this BTF, so its members are unknown");
  if (aggregate.kind != Type::kStruct && aggregate.kind != Type::kUnion)
    return Fail(w.what + (arrow ? " points to a " : " is a ") + TypeName(file, aggregate_id) +
                ", which has no members");
  if (w.bitfield) return Fail(w.what + " is a bitfield; it has no members");
  auto found = FindMember(file, aggregate, acc.member);
  if (!found) {
    auto names = MemberNames(aggregate);
    return Fail(TypeName(file, aggregate_id) + " has no member '" + acc.member + "'",
                names.empty() ? "" : "its members: " + Join(names, ", "));
  }
  const Type::Member& m = found->member;
  Type member_type = file.Get(Peel(file, m.type));
  // A bitfield: BTF's kind_flag form (bitfield_size), or an int whose bits
  // are fewer than its size (the older form).
  uint64_t bits = m.bitfield_size;
  uint64_t bit_start = found->bit_offset;
  if (!bits && member_type.kind == Type::kInt && member_type.int_bits &&
      (member_type.int_bits != member_type.size * 8 || member_type.int_offset)) {
    bits = member_type.int_bits;
    bit_start += member_type.int_offset;
  }
  int64_t byte_offset = static_cast<int64_t>(bit_start / 8);
  std::optional<std::pair<FetchType, int64_t>> bitfield;
  if (bits) {
    bitfield = KP_TRY(BitfieldFetch(bit_start, bits, SizeOf(file, m.type)));
    byte_offset = bitfield->second;
  }
  if (arrow) {
    w.place = Pointee(w.place, byte_offset);
  } else {
    if (!w.place.memory)
      return Fail(w.what + " is passed in registers; its members cannot be read", "fetch it whole, " + bare);
    w.place.offset += byte_offset;
  }
  w.type = m.type;
  w.bitfield = bitfield;
  w.name = acc.member;
  w.what = "'" + bare + (arrow ? "->" : ".") + acc.member + "'";
  return {};
}

// The fetch that reads what the path leads to: a scalar, a bitfield, a
// string (char arrays and pointers), or an array of scalars.
Result<VariableFetch> Read(const File& file, const Walked& w, bool want_string) {
  Type t = file.Get(Peel(file, w.type));
  VariableFetch fetch;
  if (w.bitfield) {
    fetch = ReadPlace(w.place);
    fetch.type = w.bitfield->first;
  } else if (want_string) {
    if (t.kind == Type::kArray && IsChar(file, t.next) && w.place.memory) {
      fetch = w.place.base;  // the string starts at the array's own address
      fetch.derefs.push_back(w.place.offset);
    } else if (t.kind == Type::kPointer && (t.next == 0 || IsChar(file, t.next))) {
      fetch = ReadPlace(w.place);
      fetch.derefs.push_back(0);
    } else {
      return Fail(w.what + " (" + TypeName(file, w.type) +
                  ") cannot be read as a string: only char arrays and char pointers can");
    }
    fetch.type = FetchType::Of(FetchType::kString);
  } else if (t.kind == Type::kArray) {
    if (!w.place.memory) return Fail(w.what + " is an array the kernel cannot read here");
    fetch = w.place.base;
    fetch.derefs.push_back(w.place.offset);
    if (IsChar(file, t.next)) {
      fetch.type = FetchType::Of(FetchType::kString);
    } else {
      if (t.count == 0 || t.count > 64)
        return Fail(w.what + " is an array of " + std::to_string(t.count) + " elements; the kernel reads 1 to 64",
                    "fetch elements, " + w.what.substr(1, w.what.size() - 2) + "[0]");
      fetch.type = KP_TRY(ScalarFetchType(file, t.next, w.what + "'s elements")).ArrayOf(t.count);
    }
  } else {
    fetch = ReadPlace(w.place);
    fetch.type = KP_TRY(ScalarFetchType(file, w.type, w.what));
  }
  fetch.name = w.name;
  fetch.c_type = TypeName(file, w.type);
  return fetch;
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

Result<Walked> Parameter(const Prototype& proto, std::string_view function, const std::string& name) {
  for (size_t i = 0; i < proto.type.members.size(); ++i) {
    const Type::Member& p = proto.type.members[i];
    if (p.name != name) continue;
    const ParamPlace& place = proto.places[i];
    if (place.kind == ParamPlace::kUnreadable)
      return Fail("parameter '" + name + "' of '" + std::string(function) + "' " + place.why);
    Walked w;
    w.place.base.root = VariableFetch::kArgument;
    w.place.base.argument = place.slot;
    // A composite passed by reference: the slot holds its address.
    w.place.memory = place.kind == ParamPlace::kByReference;
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

Result<std::unique_ptr<BtfInfo>> BtfInfo::Open(const std::string& path, const Arch& arch,
                                               const std::string& base_path) {
  std::shared_ptr<const btf::File> base;
  if (!base_path.empty()) base = std::make_shared<const btf::File>(KP_TRY(btf::File::Open(base_path)));
  auto file = std::make_shared<const btf::File>(KP_TRY(btf::File::Open(path, base)));
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
  for (const btf::Type::Member& p : proto.type.members) out.push_back({p.name, btf::TypeName(*file_, p.type)});
  return out;
}

Result<VariableFetch> BtfInfo::Fetch(std::string_view function, const ArgExpr& expr, bool want_string) const {
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, *arch_, function));
  btf::Walked w = KP_TRY(btf::Parameter(proto, function, expr.name));
  for (const ArgAccessor& acc : expr.accessors) {
    if (acc.kind == ArgAccessor::kIndex)
      KP_TRY_VOID(btf::WalkIndex(*file_, w, acc));
    else
      KP_TRY_VOID(btf::WalkMember(*file_, w, acc));
  }
  return btf::Read(*file_, w, want_string);
}

Result<std::vector<VariableFetch>> BtfInfo::FetchAll(std::string_view function,
                                                     std::vector<std::string>* skipped) const {
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, *arch_, function));
  std::vector<VariableFetch> out;
  for (const btf::Type::Member& p : proto.type.members) {
    auto walked = btf::Parameter(proto, function, p.name);
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
