// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's and Rust's function names, as their users write them. In: a symbol
// of a Rust binary (legacy "_ZN...17h<hash>E" or v0 "_R..." mangling) or of
// a Go binary ("main.(*Server).Serve", "main.Sum[go.shape.int_0]"), or a
// name written in a probe point ("r::shop::Cart::add", "main.Sum[...]").
// Out: Rust's demangled name without its hash ("r::shop::Cart::add",
// "r::main::{closure#0}"); whether a written Go name matches a symbol; the
// event name a Go function gets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kprobectl {

// Whether `symbol` is mangled as Rust's legacy (the Itanium form, ending in
// a 17h<16 hex digits>E hash) or v0 (_R) scheme.
bool IsRustSymbol(std::string_view symbol);

// A Rust symbol demangled by GNU's libiberty (legacy and v0), hashes and
// crate disambiguators dropped; an inherent method's v0 path "<r::Cart>::add"
// is written as legacy writes it, "r::Cart::add", so both manglings give one
// name. Nullopt when `symbol` is no Rust symbol.
std::optional<std::string> DemangleRust(std::string_view symbol);

// Go: the glob pattern (glob.h) a written Go name is: a pointer
// receiver's "(*" and brackets are the name's own characters, and Go's
// "[...]" (how Go's traces print a generic function's instantiations,
// whose symbols hold their shapes: "main.Sum[go.shape.int_0]") matches any
// one bracketed list; '*' and '?' elsewhere are wildcards.
// "main.(*Server).Serve" -> "main.(\*Server).Serve", "main.Sum[...]" ->
// "main.Sum\[*]".
std::string GoGlob(std::string_view written);

// A Go function's name as Go prints it: its instantiation's shapes as
// "[...]" ("main.Sum[go.shape.int_0]" -> "main.Sum[...]").
std::string GoDisplayName(std::string_view symbol);

// The event name of a Go function: its package path, receiver and name
// joined by "__", every other character dropped, generic shapes left out:
// "main.(*Server).Serve" -> main__Server__Serve, "net/http.HandleFunc" ->
// net__http__HandleFunc, "main.Sum[go.shape.int_0]" -> main__Sum,
// "main.main.func1" -> main__main__func1.
std::string GoEventBase(std::string_view name);

}  // namespace kprobectl
