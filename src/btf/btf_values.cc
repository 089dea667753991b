// SPDX-License-Identifier: GPL-2.0-or-later
//
// Values that are not a function's parameters: what an event's field holds,
// named by a C type (the event's format file spells it, or a cast, or the
// tracepoint's prototype), walked over BTF as parameters are.
#include "btf_file.h"
#include "btf_types.h"
#include "btf_walk.h"
#include "kprobectl/btf.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace btf {

namespace {

// A C type as written: its named base and how many pointers over it.
struct Spelled {
  std::string base;
  unsigned pointers = 0;
};

Spelled Spell(std::string_view c_type) {
  Spelled out;
  std::string text(Trim(c_type));
  while (!text.empty() && (text.back() == '*' || text.back() == ' ')) {
    if (text.back() == '*') ++out.pointers;
    text.pop_back();
  }
  // Qualifiers say nothing of the layout.
  for (std::string_view qualifier : {"const ", "volatile ", "__user "})
    for (size_t at; (at = text.find(qualifier)) != std::string::npos;) text.erase(at, qualifier.size());
  for (std::string_view qualifier : {" const", " volatile", " __user"})
    if (std::string_view(text).ends_with(qualifier)) text.resize(text.size() - qualifier.size());
  out.base = std::string(Trim(text));
  return out;
}

Result<uint32_t> BaseType(const File& file, const std::string& base) {
  std::optional<uint32_t> id;
  if (base == "void") return 0U;
  if (base.starts_with("struct "))
    id = file.FindType(base.substr(7), Type::kStruct);
  else if (base.starts_with("union "))
    id = file.FindType(base.substr(6), Type::kUnion);
  else if (base.starts_with("enum "))
    id = file.FindType(base.substr(5), Type::kEnum);
  else if (id = file.FindType(base, Type::kTypedef); !id)
    id = file.FindType(base, Type::kInt);
  if (!id)
    return Fail("the kernel's BTF (" + file.path() + ") has no type '" + base + "'",
                "name a type the kernel has, e.g. struct sk_buff");
  return *id;
}

// A tracepoint's prototype with its parameters' names. btf_trace_TP (a
// typedef for every event) has the types only: a function pointer's
// parameters are nameless. The function that records the event,
// trace_event_raw_event_CLASS, has them, named after the event's class: the
// event's own for TRACE_EVENT, another for DEFINE_EVENT, found by its
// parameters' types.
std::optional<Type> NamedPrototype(const File& file, std::string_view tracepoint) {
  constexpr std::string_view kRecorder = "trace_event_raw_event_";
  auto prototype_of = [&](uint32_t function) { return file.Get(file.Get(function).next); };
  if (auto own = file.FindFunction(std::string(kRecorder) + std::string(tracepoint))) return prototype_of(*own);
  auto typedef_id = file.FindType("btf_trace_" + std::string(tracepoint), Type::kTypedef);
  if (!typedef_id) return std::nullopt;
  Type pointer = file.Get(Peel(file, *typedef_id));
  Type wanted = pointer.kind == Type::kPointer ? file.Get(pointer.next) : Type{};
  if (wanted.kind != Type::kPrototype) return std::nullopt;
  auto same_types = [&](const Type& candidate) {
    if (candidate.members.size() != wanted.members.size()) return false;
    for (size_t i = 0; i < wanted.members.size(); ++i)
      if (candidate.members[i].type != wanted.members[i].type) return false;
    return true;
  };
  for (const std::string& function : file.FunctionNames()) {
    if (!function.starts_with(kRecorder)) continue;
    auto id = file.FindFunction(function);
    if (!id) continue;
    Type candidate = prototype_of(*id);
    if (candidate.kind == Type::kPrototype && same_types(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

}  // namespace btf

Result<VariableFetch> BtfInfo::FetchFromValue(std::string_view c_type, const ArgExpr& expr, bool want_string) const {
  btf::Spelled spelled = btf::Spell(c_type);
  uint32_t base = KP_TRY(btf::BaseType(*file_, spelled.base));
  btf::Walked w;
  w.place.base.root = VariableFetch::kArgument;
  w.name = expr.name;
  w.what = "'" + expr.name + "'";
  size_t first = 0;
  std::optional<uint32_t> type = base;
  for (unsigned i = 0; i < spelled.pointers && type; ++i) type = file_->PointerTo(*type);
  if (type) {
    w.type = *type;
  } else if (spelled.pointers == 1 && !expr.accessors.empty() && expr.accessors[0].kind == ArgAccessor::kArrow) {
    // No "T *" in this BTF (nothing the kernel has uses one): step into
    // what the value points to by hand.
    w.place = btf::Pointee(w.place, 0);
    w.type = base;
    ArgAccessor dot = expr.accessors[0];
    dot.kind = ArgAccessor::kDot;
    KP_TRY_VOID(btf::WalkMember(*file_, w, dot));
    first = 1;
  } else {
    return Fail("the kernel's BTF has no type '" + std::string(c_type) + "' to read " + w.what + " through");
  }
  for (size_t i = first; i < expr.accessors.size(); ++i) {
    const ArgAccessor& acc = expr.accessors[i];
    if (acc.kind == ArgAccessor::kIndex)
      KP_TRY_VOID(btf::WalkIndex(*file_, w, acc));
    else
      KP_TRY_VOID(btf::WalkMember(*file_, w, acc));
  }
  return btf::Read(*file_, w, want_string);
}

std::optional<std::string> BtfInfo::TracepointParameter(std::string_view tracepoint, std::string_view name) const {
  auto prototype = btf::NamedPrototype(*file_, tracepoint);
  if (!prototype) return std::nullopt;
  for (const btf::Type::Member& p : prototype->members)
    if (p.name == name) return btf::TypeName(*file_, p.type);
  return std::nullopt;
}

std::optional<FetchType> BtfInfo::ScalarType(std::string_view c_type) const {
  btf::Spelled spelled = btf::Spell(c_type);
  if (spelled.pointers) return FetchType::Of(FetchType::kHex);
  auto base = btf::BaseType(*file_, spelled.base);
  if (!base || *base == 0) return std::nullopt;
  auto type = btf::ScalarFetchType(*file_, *base, std::string(c_type));
  if (!type) return std::nullopt;
  return *type;
}

}  // namespace kprobectl
