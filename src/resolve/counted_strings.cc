// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's string and []byte, Rust's &str, &[u8], String and Vec<u8>: a
// pointer and a length, no NUL at the end. The kernel has no counted
// string fetch, and ":string" would read past the length into whatever
// follows (Go packs its string constants back to back), so such a value
// named whole becomes two fetches: its bytes as a byte array of a bound
// (u8[N], the kernel's arrays take at most 64 elements) and its length in
// a field named NAME__len. The trace's plan pairs them (trace/plan.cc) and
// prints the bytes cut at min(length, bound) as a string, marking a cut.
#include "kprobectl/strings.h"
#include "kprobectl/trace_event_def.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

// The members that hold the pointer and the length, by the type's name as
// each compiler writes it. Rust's String and Vec reach their pointer
// through RawVec, Unique and NonNull (rustc 1.63), in later versions
// through other wrappers: each path is tried in order, and the first that
// ends in a pointer taken (a one-member wrapper fetches as a value too).
struct Shape {
  std::string language;
  std::vector<std::vector<std::string>> pointers;
  std::vector<std::string> length;
};

std::optional<Shape> ShapeOf(std::string type, Debuginfo::Language language) {
  if (type.starts_with("struct ")) type.erase(0, 7);
  if (language == Debuginfo::Language::kGo) {
    // A generic function's shape instantiation names its type parameters'
    // types as shapes of their own: "go.shape.string_0", "go.shape.[]uint8_1".
    if (type.starts_with("go.shape.") && type.find_last_of('_') != std::string::npos) {
      type = type.substr(9, type.find_last_of('_') - 9);
    }
    if (type == "string") return Shape{"Go string", {{"str"}}, {"len"}};
    if (type == "[]uint8") return Shape{"Go []byte", {{"array"}}, {"len"}};
    return std::nullopt;
  }
  if (language != Debuginfo::Language::kRust) return std::nullopt;
  if (type == "&str" || type == "&mut str" || type == "&[u8]" || type == "&mut [u8]")
    return Shape{"Rust " + type, {{"data_ptr"}}, {"length"}};
  std::vector<std::vector<std::string>> raw_vec = {
      {"buf", "ptr", "pointer", "pointer"}, {"buf", "inner", "ptr", "pointer", "pointer"}, {"buf", "ptr", "pointer"}};
  if (type == "String" || type == "alloc::string::String") {
    for (auto& path : raw_vec) path.insert(path.begin(), "vec");
    return Shape{"Rust String", raw_vec, {"vec", "len"}};
  }
  if (type == "Vec<u8>" || type == "Vec<u8, alloc::alloc::Global>") return Shape{"Rust Vec<u8>", raw_vec, {"len"}};
  return std::nullopt;
}

// The value's path as written: "m.Currency", "r[0]", "p->name".
std::string PathOf(const ArgExpr& e) {
  std::string out = e.name;
  for (const ArgAccessor& a : e.accessors)
    out += a.kind == ArgAccessor::kIndex ? "[" + std::to_string(a.index) + "]"
                                         : (a.kind == ArgAccessor::kArrow ? "->" : ".") + a.member;
  return out;
}

ProbeArg Member(const ProbeArg& whole, const std::vector<std::string>& path, std::string name, std::string type) {
  ProbeArg out = whole;
  for (const std::string& member : path) out.expr.accessors.push_back({ArgAccessor::kDot, member, 0, whole.pos});
  out.name = std::move(name);
  out.type = std::move(type);
  return out;
}

}  // namespace

}  // namespace kprobectl::resolve

namespace kprobectl {

std::optional<std::string> CountedStringKind(const std::string& type, Debuginfo::Language language) {
  auto shape = resolve::ShapeOf(type, language);
  return shape ? std::optional<std::string>(shape->language) : std::nullopt;
}

}  // namespace kprobectl

namespace kprobectl::resolve {

Result<std::optional<std::vector<TypedFetch>>> CountedStringArg(const ProbeSpec& spec, const ProbeArg& arg,
                                                                Debuginfo& debuginfo, const DwarfAddress& at,
                                                                const MemberFetcher& fetch) {
  const Debuginfo::Language language = debuginfo.LanguageAt(at);
  if (language == Debuginfo::Language::kOther) return std::nullopt;
  auto type_name = debuginfo.TypeNameOf(at, arg.expr);
  if (!type_name) return std::nullopt;  // the plain fetch says what is wrong
  std::optional<Shape> shape = ShapeOf(*type_name, language);
  if (!shape) return std::nullopt;
  unsigned bound = kCountedStringBound;
  if (!arg.type.empty()) {
    auto type = ParseFetchType(arg.type);
    if (!type || !type->array_len || type->base != FetchType::kUnsigned || type->bits != 8)
      return ArgError(spec, arg.type_pos,
                      "'" + PathOf(arg.expr) + "' is a " + shape->language +
                          ", a pointer and a length: its bytes are fetched as u8[N], N the bound (1 to 64), "
                          "and cut at its length",
                      "write :u8[N] to set the bound (" + std::to_string(kCountedStringBound) +
                          " without a type), or fetch its members");
    bound = type->array_len;
  }
  // Named as the plain fetch would be: by its last member ("it.Name":
  // Name), else the variable's name ("r[0]": r).
  std::string base = arg.name;
  if (base.empty()) {
    base = arg.expr.name;
    for (const ArgAccessor& a : arg.expr.accessors)
      if (!a.member.empty()) base = a.member;
  }
  std::optional<Error> first_error;
  for (const std::vector<std::string>& pointer : shape->pointers) {
    auto bytes = fetch(Member(arg, pointer, base, "u8[" + std::to_string(bound) + "]"));
    if (!bytes || !bytes->c_type.ends_with('*')) {
      if (!first_error)
        first_error = bytes ? Error{"'" + PathOf(arg.expr) + "' is a " + shape->language +
                                        " whose pointer to its bytes is not where kprobectl looks for it",
                                    "fetch its members"}
                            : bytes.error();
      continue;
    }
    std::vector<TypedFetch> out{std::move(*bytes)};
    out.push_back(KP_TRY(fetch(Member(arg, shape->length, base + std::string(kCountedLengthSuffix), ""))));
    return out;
  }
  return std::unexpected(*first_error);
}

}  // namespace kprobectl::resolve
