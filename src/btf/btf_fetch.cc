// SPDX-License-Identifier: GPL-2.0-or-later
//
// A function's parameters at its entry, from its BTF prototype: where the
// System V ABI puts each (integer argument slots: six registers, then the
// stack), then member chains walked over BTF types to a VariableFetch
// (btf_walk.cc), as dwarf_members.cc walks DWARF's.
#include <algorithm>
#include <optional>

#include "btf_file.h"
#include "btf_types.h"
#include "btf_walk.h"
#include "kprobectl/btf.h"
#include "kprobectl/strings.h"
#include "kprobectl/x86_64_abi.h"

namespace kprobectl {

namespace btf {

namespace {

// Where a parameter is at the entry: the Nth integer argument, or why it
// cannot be read there.
struct Slot {
  unsigned argument = 0;  // 0: not readable
  unsigned eightbytes = 1;
  std::string why;
};

// The System V classification, as far as a kernel's parameters need it:
// integers, pointers and enums take one slot; a struct or union of up to
// 16 bytes one or two (on the stack, whole, when the registers left do not
// hold it); bigger ones are copied to the stack; floats go in SSE registers.
std::vector<Slot> Slots(const File& file, const Type& prototype) {
  constexpr unsigned kRegisters = x86_64::kArgumentRegisters.size();
  unsigned registers = 0, stack = 0;
  std::vector<Slot> out;
  for (const Type::Member& p : prototype.members) {
    Type t = file.Get(Peel(file, p.type));
    uint64_t size = SizeOf(file, p.type);
    Slot slot;
    if (t.kind == Type::kFloat) {
      slot.why = "is a floating-point value, passed in an SSE register the kernel cannot fetch";
    } else if ((t.kind == Type::kStruct || t.kind == Type::kUnion) && size > 16) {
      slot.why =
          "is a " + std::to_string(size) + "-byte " + TypeName(file, p.type) + " passed by value, copied to the stack";
      stack += static_cast<unsigned>((size + 7) / 8);
    } else {
      slot.eightbytes = size > 8 ? 2 : 1;
      if (registers + slot.eightbytes <= kRegisters) {
        slot.argument = registers + 1;
        registers += slot.eightbytes;
      } else {
        slot.argument = kRegisters + 1 + stack;
        stack += slot.eightbytes;
      }
    }
    out.push_back(slot);
  }
  return out;
}

struct Prototype {
  Type type;
  std::vector<Slot> slots;
};

Result<Prototype> PrototypeOf(const File& file, std::string_view function) {
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
  std::vector<Slot> slots = Slots(file, prototype);
  return Prototype{std::move(prototype), std::move(slots)};
}

Result<Walked> Parameter(const File& file, const Prototype& proto, std::string_view function, const std::string& name) {
  for (size_t i = 0; i < proto.type.members.size(); ++i) {
    const Type::Member& p = proto.type.members[i];
    if (p.name != name) continue;
    const Slot& slot = proto.slots[i];
    if (!slot.argument) return Fail("parameter '" + name + "' of '" + std::string(function) + "' " + slot.why);
    Walked w;
    w.place.base.root = VariableFetch::kArgument;
    w.place.base.argument = slot.argument;
    Type t = file.Get(Peel(file, p.type));
    if (t.kind == Type::kStruct || t.kind == Type::kUnion) w.place.slots = slot.eightbytes;
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

BtfInfo::BtfInfo(std::shared_ptr<const btf::File> file) : file_(std::move(file)) {}
BtfInfo::~BtfInfo() = default;

Result<std::unique_ptr<BtfInfo>> BtfInfo::Open(const std::string& path, const std::string& base_path) {
  std::shared_ptr<const btf::File> base;
  if (!base_path.empty()) base = std::make_shared<const btf::File>(KP_TRY(btf::File::Open(base_path)));
  auto file = std::make_shared<const btf::File>(KP_TRY(btf::File::Open(path, base)));
  return std::unique_ptr<BtfInfo>(new BtfInfo(std::move(file)));
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
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, function));
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
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, function));
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
  btf::Prototype proto = KP_TRY(btf::PrototypeOf(*file_, function));
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
  auto proto = btf::PrototypeOf(*file_, function);
  if (!proto || proto->type.next == 0) return std::nullopt;
  auto type = btf::ScalarFetchType(*file_, proto->type.next, "$retval");
  if (!type) return std::nullopt;
  return std::pair<FetchType, std::string>{*type, btf::TypeName(*file_, proto->type.next)};
}

}  // namespace kprobectl
