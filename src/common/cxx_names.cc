// SPDX-License-Identifier: GPL-2.0-or-later
//
// Demangled names are C++ declarations without a grammar at hand, so they
// are read with two rules that hold for what abi::__cxa_demangle prints:
// brackets ((), <>, [], {}) nest, and the word "operator" at the start of a
// scope begins a name that runs to the parameter list and may hold
// brackets and blanks of its own (operator<, operator(), operator new[],
// operator unsigned long).
#include "kprobectl/cxx_names.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

#include "kprobectl/lang_names.h"

namespace kprobectl {

namespace {

bool StartsOperator(std::string_view s, size_t i) {
  if (s.substr(i, 8) != "operator") return false;
  if (i > 0 && s[i - 1] != ':' && s[i - 1] != ' ') return false;
  char next = i + 8 < s.size() ? s[i + 8] : '\0';
  return !(std::isalnum(static_cast<unsigned char>(next)) || next == '_');
}

bool Opens(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool Closes(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }

// Strips qualifiers after the parameter list: " const", " volatile", " &",
// " &&", " noexcept", " [clone .cold]" (ABI tags are gone already).
std::string_view StripQualifiers(std::string_view s, std::string& qualifiers) {
  static constexpr std::string_view kSuffixes[] = {" const", " volatile", " &&", " &", " noexcept"};
  for (bool again = true; again;) {
    again = false;
    if (s.ends_with("]")) {
      size_t open = s.rfind(" [clone ");
      if (open != std::string_view::npos) {
        qualifiers.insert(0, s.substr(open));
        s = s.substr(0, open);
        again = true;
        continue;
      }
    }
    for (std::string_view suffix : kSuffixes)
      if (s.ends_with(suffix) && s.size() > suffix.size() && s[s.size() - suffix.size() - 1] == ')') {
        qualifiers.insert(0, suffix);
        s.remove_suffix(suffix.size());
        again = true;
        break;
      }
  }
  return s;
}

// Where the parameter list of `s` (ending in ')') opens, matching brackets
// from the end; npos when it does not end in one.
size_t ParamsStart(std::string_view s) {
  if (!s.ends_with(")")) return std::string_view::npos;
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// A type as ParamsMatch compares it: blanks only where two words meet,
// a leading "const " moved after the type.
std::string NormalizeType(std::string_view t) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      bool word_before = !out.empty() && (std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '_');
      size_t j = i;
      while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
      bool word_after = j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_');
      if (word_before && word_after) out += ' ';
      i = j - 1;
      continue;
    }
    out += c;
  }
  if (out.starts_with("const ")) {
    size_t end = out.find_first_of("*&", 6);
    std::string base = out.substr(6, end == std::string::npos ? std::string::npos : end - 6);
    out = base + " const" + (end == std::string::npos ? "" : out.substr(end));
  }
  return out;
}

std::vector<std::string> SplitParams(std::string_view list) {
  std::vector<std::string> out;
  if (list.size() < 2) return out;
  list = list.substr(1, list.size() - 2);
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && Opens(list[i])) ++depth;
    if (i < list.size() && Closes(list[i])) --depth;
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      std::string type = NormalizeType(list.substr(start, i - start));
      if (!type.empty() && type != "void") out.push_back(type);
      start = i + 1;
    }
  }
  return out;
}

// Without its ABI tags: "shop::Cart::label[abi:cxx11](int) const" is
// shop::Cart::label, as it is written and as the DWARF's scopes name it
// (gcc tags what returns or holds a C++11 std::string or std::list).
std::string WithoutAbiTags(std::string_view s) {
  if (s.find("[abi:") == std::string_view::npos) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t tag = s.find("[abi:", i);
    size_t end = tag == std::string_view::npos ? tag : s.find(']', tag);
    if (end == std::string_view::npos) {
      out += s.substr(i);
      break;
    }
    out += s.substr(i, tag - i);
    i = end + 1;
  }
  return out;
}

}  // namespace

bool MadeForAnother(std::string_view demangled) {
  static constexpr std::string_view kMadeFor[] = {"non-virtual thunk to ",
                                                  "virtual thunk to ",
                                                  "covariant return thunk to ",
                                                  "transaction clone for ",
                                                  "non-transaction clone for ",
                                                  "TLS init function for ",
                                                  "TLS wrapper function for ",
                                                  "guard variable for ",
                                                  "vtable for ",
                                                  "VTT for ",
                                                  "typeinfo for ",
                                                  "typeinfo name for ",
                                                  "construction vtable for "};
  for (std::string_view prefix : kMadeFor)
    if (demangled.starts_with(prefix)) return true;
  return false;
}

bool IsMangled(std::string_view symbol) { return symbol.starts_with("_Z") || IsRustSymbol(symbol); }

std::optional<std::string> Demangle(std::string_view mangled) {
  // Rust's legacy symbols are Itanium-shaped too: libstdc++ would read
  // their hash as a last scope ("r::Cart::add::h0123..."), libiberty not.
  if (IsRustSymbol(mangled)) return DemangleRust(mangled);
  if (!mangled.starts_with("_Z")) return std::nullopt;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(std::string(mangled).c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !out) return std::nullopt;
  return std::string(out.get());
}

CxxName SplitCxxName(std::string_view demangled) {
  CxxName out;
  // Code the compiler made for a function, not the function: kept whole,
  // so that no probe point matches it.
  if (MadeForAnother(demangled)) {
    out.qualified = std::string(demangled);
    return out;
  }
  std::string untagged = WithoutAbiTags(demangled);
  std::string_view s = StripQualifiers(untagged, out.qualifiers);
  size_t open = ParamsStart(s);
  std::string_view name = s;
  // "X::operator()" written without parameters: the brackets are its name's.
  if (open != std::string_view::npos && s.substr(0, open).ends_with("operator")) open = std::string_view::npos;
  if (open != std::string_view::npos && open > 0) {
    out.params = std::string(s.substr(open));
    name = s.substr(0, open);
  } else {
    out.qualifiers.clear();
  }
  // A return type ends at the last blank outside brackets before the name.
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (depth == 0 && StartsOperator(name, i)) break;
    if (Opens(name[i])) ++depth;
    if (Closes(name[i]) && depth > 0) --depth;
    if (depth == 0 && name[i] == ' ') start = i + 1;
  }
  out.qualified = std::string(name.substr(start));
  return out;
}

bool IsCxxName(std::string_view name) {
  return name.find("::") != std::string_view::npos || name.find('(') != std::string_view::npos ||
         name.find('<') != std::string_view::npos || name.find('~') != std::string_view::npos ||
         StartsOperator(name, 0);
}

std::string LastScope(std::string_view qualified) {
  size_t last = 0;
  int depth = 0;
  for (size_t i = 0; i < qualified.size(); ++i) {
    if (depth == 0 && StartsOperator(qualified, i)) break;
    if (Opens(qualified[i])) ++depth;
    if (Closes(qualified[i]) && depth > 0) --depth;
    if (depth == 0 && qualified.substr(i, 2) == "::") last = i + 2;
  }
  return std::string(qualified.substr(last));
}

bool ParamsMatch(std::string_view written, std::string_view demangled) {
  std::vector<std::string> want = SplitParams(written), have = SplitParams(demangled);
  if (want.size() != have.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& w = want[i];
    const std::string& h = have[i];
    bool same =
        w == h || (h.size() >= w.size() + 2 && h.ends_with(w) && h.compare(h.size() - w.size() - 2, 2, "::") == 0);
    if (!same) return false;
  }
  return true;
}

CxxName SymbolCxxName(std::string_view symbol) {
  if (auto demangled = Demangle(symbol)) return SplitCxxName(*demangled);
  return CxxName{std::string(symbol), {}, {}};
}

std::string DisplaySymbol(std::string_view symbol) {
  auto demangled = Demangle(symbol);
  if (!demangled) return std::string(symbol);
  CxxName name = SplitCxxName(*demangled);
  return name.qualified + name.params + name.qualifiers;
}

}  // namespace kprobectl
