// SPDX-License-Identifier: GPL-2.0-or-later
#include <catch2/catch.hpp>

#include "kprobectl/probe_spec.h"

using namespace kprobectl;

namespace {

std::string KindName(ArgKind k) {
  switch (k) {
    case ArgKind::kVariable:
      return "var";
    case ArgKind::kVars:
      return "$vars";
    case ArgKind::kParams:
      return "$params";
    case ArgKind::kRetval:
      return "$retval";
    case ArgKind::kComm:
      return "$comm";
    case ArgKind::kArg:
      return "$arg";
    case ArgKind::kStackN:
      return "$stackN";
    case ArgKind::kStack:
      return "$stack";
    case ArgKind::kRegister:
      return "reg";
    case ArgKind::kSymbol:
      return "sym";
    case ArgKind::kAddress:
      return "addr";
    case ArgKind::kImmediate:
      return "imm";
  }
  return "?";
}

std::string Render(const ProbeArg& a) {
  const ArgExpr& e = a.expr;
  std::string out = KindName(e.kind);
  if (!a.name.empty()) out = a.name + "=" + out;
  if (!e.name.empty()) out += " " + e.name;
  if (e.kind == ArgKind::kArg || e.kind == ArgKind::kStackN || e.kind == ArgKind::kAddress)
    out += " " + std::to_string(e.number);
  if (e.file_relative) out += " file-relative";
  if (e.offset) out += " off=" + std::to_string(e.offset);
  for (const ArgAccessor& acc : e.accessors) {
    if (acc.kind == ArgAccessor::kArrow) out += " ->" + acc.member;
    if (acc.kind == ArgAccessor::kDot) out += " ." + acc.member;
    if (acc.kind == ArgAccessor::kIndex) out += " [" + std::to_string(acc.index) + "]";
  }
  for (const ArgDeref& d : e.derefs) out += " deref(" + std::string(d.user ? "u" : "") + std::to_string(d.offset) + ")";
  if (!a.type.empty()) out += " :" + a.type;
  return out;
}

}  // namespace

TEST_CASE("arguments parse into expressions") {
  struct Row {
    const char* input;
    const char* expected;
  } rows[] = {
      {"filename", "var filename"},
      {"fn=filename:string", "fn=var filename :string"},
      {"req->hdr.len", "var req ->hdr .len"},
      {"p->arr[2].x", "var p ->arr [2] .x"},
      {"a[-1]", "var a [-1]"},
      {"$vars", "$vars"},
      {"$params", "$params"},
      {"$retval", "$retval"},
      {"$retval:s32", "$retval :s32"},
      {"$comm", "$comm"},
      {"$arg1", "$arg 1"},
      {"$arg12:u8", "$arg 12 :u8"},
      {"$stack", "$stack"},
      {"$stack3", "$stackN 3"},
      {"$stack0", "$stackN 0"},
      {"%di", "reg di"},
      {"x=%r10:x32", "x=reg r10 :x32"},
      {"@jiffies", "sym jiffies"},
      {"@jiffies+8:u64", "sym jiffies off=8 :u64"},
      {"@sym.local-16", "sym sym.local off=-16"},
      {"@0xffffffff81000000", "addr 18446744071578845184"},
      {"@+0x4010:u32", "addr 16400 file-relative :u32"},
      {"+0(%di):string", "reg di deref(0) :string"},
      {"-8(%bp)", "reg bp deref(-8)"},
      {"+u8(%si):u32", "reg si deref(u8) :u32"},
      {"+8(+0(%di)):x64", "reg di deref(0) deref(8) :x64"},
      {"+0($arg2):string", "$arg 2 deref(0) :string"},
      {"\\123", "imm 123"},
      {"\\0x1f:u8", "imm 0x1f :u8"},
      {"\\-5:s32", "imm -5 :s32"},
      {"s=\\\"hello\":string", "s=imm \"hello\" :string"},
      {"x:b4@2/32", "var x :b4@2/32"},
      {"arr:u8[16]", "var arr :u8[16]"},
      {"+0(%di):string[4]", "reg di deref(0) :string[4]"},
      {"ptr:%pd", "var ptr :%pd"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    std::string text = std::string("f ") + row.input;
    auto spec = ParseProbeSpec(text);
    REQUIRE(spec);
    REQUIRE(spec->args.size() == 1);
    CHECK(Render(spec->args[0]) == row.expected);
  }
}

TEST_CASE("an immediate string may hold blanks") {
  auto spec = ParseProbeSpec("f s=\\\"a b\":string %di");
  REQUIRE(spec);
  REQUIRE(spec->args.size() == 2);
  CHECK(spec->args[0].expr.name == "\"a b\"");
}

TEST_CASE("bad arguments get a caret under the bad token") {
  struct Row {
    const char* input;
    const char* message;
  } rows[] = {
      {"f $foo", "invalid argument: unknown special variable '$foo'\n    f $foo\n      ^"},
      {"f $arg0", "invalid argument: invalid '$arg0': expected $argN with 1 <= N <= 2048\n    f $arg0\n      ^"},
      {"f %", "invalid argument: expected a register name after '%'\n    f %\n       ^"},
      {"f x:", "invalid argument: expected a type after ':'\n    f x:\n        ^"},
      {"f x:int", "invalid argument: unknown type 'int'\n    f x:int\n        ^"},
      {"f x:u7", "invalid argument: unknown type 'u7'\n    f x:u7\n        ^"},
      {"f x:b9@0/8",
       "invalid argument: invalid bitfield type 'b9@0/8': width and offset must fit in a container of 8, 16, "
       "32 or 64 bits\n    f x:b9@0/8\n        ^"},
      {"f x:u8[0]",
       "invalid argument: invalid array type 'u8[0]': the length must be a number from 1 to 64\n    f x:u8[0]\n"
       "        ^"},
      {"f +8%di", "invalid argument: expected '(' after the offset\n    f +8%di\n        ^"},
      {"f +8(%di", "invalid argument: expected ')'\n    f +8(%di\n            ^"},
      {"f +x(%di)", "invalid argument: expected an offset in +OFFSET(EXPR)\n    f +x(%di)\n       ^"},
      {"f a->", "invalid argument: expected a member name\n    f a->\n         ^"},
      {"f a[x]", "invalid argument: expected an array index\n    f a[x]\n        ^"},
      {"f a[1", "invalid argument: expected ']'\n    f a[1\n         ^"},
      {"f =x", "invalid argument: expected an argument name before '='\n    f =x\n      ^"},
      {"f @", "invalid argument: expected a symbol or an address after '@'\n    f @\n       ^"},
      {"f \\", "invalid argument: expected a number or \"string\" after '\\'\n    f \\\n       ^"},
      {"f a-b", "invalid argument: unexpected '-'\n    f a-b\n       ^"},
      {"f +0($vars)", "invalid argument: $vars and $params cannot be dereferenced\n    f +0($vars)\n      ^"},
      {"f 1abc",
       "invalid argument: expected a variable, $special, %register, @symbol, +OFFSET(...) or \\immediate\n"
       "    f 1abc\n      ^"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto spec = ParseProbeSpec(row.input);
    REQUIRE_FALSE(spec);
    CHECK(spec.error().message == row.message);
    CHECK_FALSE(spec.error().hint.empty());
  }
}
