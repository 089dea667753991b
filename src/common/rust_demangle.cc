// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one file that uses libiberty: GNU's demangler, which reads both of
// Rust's schemes (legacy since rustc 1.0, v0 with -C
// symbol-mangling-version=v0; Debian 12's libiberty 20230104 has both).
// Without DMGL_VERBOSE it leaves out the legacy hash and v0's crate
// disambiguators, which differ between builds and no user writes.
#include <libiberty/demangle.h>

#include <cctype>
#include <cstdlib>
#include <memory>

#include "kprobectl/lang_names.h"

namespace kprobectl {

namespace {

// Legacy Rust symbols are Itanium-mangled paths whose last element is
// "h" and 16 hex digits: "..17h0123456789abcdefE".
bool IsLegacyRust(std::string_view s) {
  constexpr size_t kHash = 19;  // "17h" and 16 hex digits
  if (!s.starts_with("_ZN") || !s.ends_with("E") || s.size() < 3 + kHash + 1) return false;
  std::string_view hash = s.substr(s.size() - 1 - kHash, kHash);
  if (!hash.starts_with("17h")) return false;
  for (char c : hash.substr(3))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Rust's symbols may carry a suffix LLVM added (".llvm.1234"): cut, as
// libiberty reads the mangled part only.
std::string_view WithoutLlvmSuffix(std::string_view s) {
  size_t dot = s.find(".llvm.");
  return dot == std::string_view::npos ? s : s.substr(0, dot);
}

// v0 writes an inherent impl's method as "<r::shop::Cart>::add" (the
// type qualified in angle brackets), legacy as "r::shop::Cart::add": the
// brackets go when they hold a plain path, at the start of the name: not a
// trait impl's "<T as Trait>::m", nor a type that is no path, whose
// brackets tell methods apart ("<*const u8>::is_null" and "<*mut
// u8>::is_null", "<&dyn r::Shape>::m", "<[u8]>::len", "<dyn r::Shape>::m").
std::string PlainInherentPath(std::string s) {
  if (!s.starts_with("<")) return s;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>' && --depth == 0) {
      std::string inner = s.substr(1, i - 1);
      const bool path = !inner.empty() && (std::isalpha(static_cast<unsigned char>(inner[0])) || inner[0] == '_') &&
                        !inner.starts_with("dyn ") && !inner.starts_with("impl ");
      if (!path || inner.find(" as ") != std::string::npos || s.compare(i + 1, 2, "::") != 0) return s;
      return inner + s.substr(i + 1);
    }
  }
  return s;
}

}  // namespace

bool IsRustSymbol(std::string_view symbol) {
  symbol = WithoutLlvmSuffix(symbol);
  return (symbol.starts_with("_R") && symbol.size() > 2 && std::isupper(static_cast<unsigned char>(symbol[2]))) ||
         IsLegacyRust(symbol);
}

std::optional<std::string> DemangleRust(std::string_view symbol) {
  if (!IsRustSymbol(symbol)) return std::nullopt;
  std::string mangled(WithoutLlvmSuffix(symbol));
  std::unique_ptr<char, decltype(&std::free)> out(cplus_demangle(mangled.c_str(), DMGL_PARAMS | DMGL_RUST), &std::free);
  if (!out) return std::nullopt;
  return PlainInherentPath(out.get());
}

}  // namespace kprobectl
