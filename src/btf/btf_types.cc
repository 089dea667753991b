// SPDX-License-Identifier: GPL-2.0-or-later
#include "btf_types.h"

namespace kprobectl::btf {

namespace {

constexpr int kMaxDepth = 64;  // a chain of typedefs and qualifiers longer than this is a broken blob

bool IsQualifier(Type::Kind kind) {
  return kind == Type::kTypedef || kind == Type::kConst || kind == Type::kVolatile || kind == Type::kRestrict ||
         kind == Type::kTypeTag;
}

std::string Tagged(const char* tag, const std::string& name) {
  return std::string(tag) + " " + (name.empty() ? "(anonymous)" : name);
}

std::string Spell(const File& file, uint32_t id, int depth) {
  if (depth > kMaxDepth) return "?";
  Type t = file.Get(id);
  auto inner = [&] { return Spell(file, t.next, depth + 1); };
  switch (t.kind) {
    case Type::kVoid:
      return "void";
    case Type::kInt:
    case Type::kFloat:
    case Type::kTypedef:
      return t.name;
    case Type::kStruct:
      return Tagged("struct", t.name);
    case Type::kUnion:
      return Tagged("union", t.name);
    case Type::kEnum:
      return Tagged("enum", t.name);
    case Type::kForward:
      return t.name;
    case Type::kPointer:
      return inner() + "*";
    case Type::kConst:
      return "const " + inner();
    case Type::kVolatile:
      return "volatile " + inner();
    case Type::kRestrict:
    case Type::kTypeTag:
      return inner();
    case Type::kArray:
      return Spell(file, t.next, depth + 1) + "[" + std::to_string(t.count) + "]";
    case Type::kPrototype:
      return inner() + " (*)()";
    default:
      return t.name.empty() ? "?" : t.name;
  }
}

// "'req->hdr'" -> "req->hdr", for hints that show what to type.
std::string Bare(const std::string& what) {
  if (what.size() >= 2 && what.front() == '\'' && what.back() == '\'') return what.substr(1, what.size() - 2);
  return what;
}

}  // namespace

uint32_t Peel(const File& file, uint32_t id) {
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    Type t = file.Get(id);
    if (!IsQualifier(t.kind)) break;
    id = t.next;
  }
  return id;
}

std::string TypeName(const File& file, uint32_t id) { return Spell(file, id, 0); }

uint64_t SizeOf(const File& file, uint32_t id) {
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    Type t = file.Get(Peel(file, id));
    switch (t.kind) {
      case Type::kInt:
      case Type::kEnum:
      case Type::kFloat:
      case Type::kStruct:
      case Type::kUnion:
        return t.size;
      case Type::kPointer:
        return 8;
      case Type::kArray:
        return t.count * SizeOf(file, t.next);
      default:
        return 0;
    }
  }
  return 0;
}

bool IsChar(const File& file, uint32_t id) {
  Type t = file.Get(Peel(file, id));
  return t.kind == Type::kInt && t.size == 1 && (t.is_char || t.name.find("char") != std::string::npos);
}

Result<FetchType> ScalarFetchType(const File& file, uint32_t id, const std::string& what) {
  Type t = file.Get(Peel(file, id));
  auto integer = [](FetchType::Base base, uint64_t bytes) {
    return FetchType::Integer(base, static_cast<unsigned>(bytes * 8));
  };
  switch (t.kind) {
    case Type::kPointer:
      return FetchType::Integer(FetchType::kHex, 64);
    case Type::kEnum:
      return integer(t.is_signed ? FetchType::kSigned : FetchType::kUnsigned, t.size ? t.size : 4);
    case Type::kInt:
      if (t.size != 1 && t.size != 2 && t.size != 4 && t.size != 8)
        return Fail(
            what + " is a " + std::to_string(t.size * 8) + "-bit " + t.name + "; the kernel fetches at most 64 bits",
            "fetch a part of it with +OFFSET(...):u64");
      if (t.is_bool) return integer(FetchType::kUnsigned, t.size);
      // Plain "char" reads as a character; int8_t and uint8_t as numbers.
      if (t.name == "char") return FetchType::Of(FetchType::kChar);
      return integer(t.is_signed ? FetchType::kSigned : FetchType::kUnsigned, t.size);
    case Type::kFloat:
      return integer(FetchType::kHex, t.size);  // the kernel has no floating-point type: show the bits
    case Type::kStruct:
    case Type::kUnion:
      // A struct the size of a register: its bits, as perf fetches it.
      if (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8) return integer(FetchType::kHex, t.size);
      return Fail(what + " is a " + TypeName(file, id) + ", not a value the kernel can fetch",
                  "name one of its members: " + Bare(what) + ".MEMBER");
    case Type::kArray:
      return Fail(what + " is an array (" + TypeName(file, id) + ")", "fetch an element, " + Bare(what) + "[0]");
    case Type::kPrototype:
    case Type::kFunction:
      return Fail(what + " is a function");
    default:
      return Fail(what + " has a type the kernel cannot fetch (" + TypeName(file, id) + ")");
  }
}

}  // namespace kprobectl::btf
