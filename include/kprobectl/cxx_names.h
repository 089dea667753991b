// SPDX-License-Identifier: GPL-2.0-or-later
//
// C++ names as a user writes them and as a binary holds them. In: a
// mangled symbol (_ZN4shop4Cart3addERKNS_4ItemEi) or a name typed in a probe
// point ("shop::Cart::add", "shop::Cart::add(int)", "shop::Box<int>::get").
// Out: the demangled name (libstdc++'s abi::__cxa_demangle), split into the
// qualified name a probe point matches ("shop::Cart::add"), its parameter
// list, and what follows it (" const"); and whether a written parameter list
// picks an overload.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kprobectl {

// Whether a symbol is mangled: C++ (_Z) or Rust (legacy or v0).
bool IsMangled(std::string_view symbol);

// The demangled name of a C++ symbol (one that starts with _Z) or a Rust
// one (lang_names.h: without its hash), or nullopt.
std::optional<std::string> Demangle(std::string_view mangled);

struct CxxName {
  std::string qualified;   // "shop::Cart::add", "shop::max<int>", "shop::Cart::operator()", "shop::Cart::~Cart"
  std::string params;      // "(shop::Item const&, int)", "()"; empty when the name has none
  std::string qualifiers;  // what follows the parameters: " const", " &&", " [clone .cold]"
};

// A demangled name, split; a template function's return type is dropped
// ("int shop::max<int>(int, int)" is shop::max<int> with (int, int)), and
// ABI tags too ("shop::Cart::label[abi:cxx11](int) const" is
// shop::Cart::label with (int) and " const").
CxxName SplitCxxName(std::string_view demangled);

// Whether a probe point's function is written as C++: a scope ("::"), a
// parameter list, a template or an operator.
bool IsCxxName(std::string_view name);

// The last scope of a qualified name, which DWARF names the function by:
// "shop::Cart::add" -> "add", "shop::Box<int>::get" -> "get",
// "a::operator<" -> "operator<", "main::{lambda(int)#1}::operator()" ->
// "operator()".
std::string LastScope(std::string_view qualified);

// Whether a parameter list as written ("(int)", "(const Item&, int)")
// names the demangled one ("(int)", "(shop::Item const&, int)"): the same
// types in order, blanks aside, "const T" read as "T const", a type's
// scopes optional.
bool ParamsMatch(std::string_view written, std::string_view demangled);

// A symbol's qualified name and parameters: demangled when it is C++, else
// the name as it is with no parameters.
CxxName SymbolCxxName(std::string_view symbol);

// Whether a demangled name is code the compiler made for a function (a
// thunk, a transaction clone, a guard variable...), where no call of the
// function begins.
bool MadeForAnother(std::string_view demangled);

// A symbol as messages, listings and traces show it: a C++ one demangled
// without its return type ("shop::Cart::add(shop::Item const&, int)"), any
// other as it is.
std::string DisplaySymbol(std::string_view symbol);

}  // namespace kprobectl
