// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the user wrote: a perf-probe style probe spec, parsed but not resolved.
//
//   [[GRP:]EV=]FUNC[@SRC|@VER|@*][:RLN|+OFFS|%return|;PTN] [ARG...]
//   [[GRP:]EV=]SRC:ALN | SRC;PTN [ARG...]      (SRC has a '.' before ':'/';')
//   [[GRP:]EV=]0xADDR[%return] [ARG...]
//   [[GRP:]EV=][%][sdt_]PROVIDER:NAME [ARG...]    (a USDT marker)
//   [[GRP:]EV=]tp:TRACEPOINT [ARG...]             (a kernel tracepoint)
//   [[GRP:]EV=]ev:SYSTEM:EVENT [ARG...]           (an event probe on an event)
//   ARG := [NAME=]EXPR[:TYPE]; EXPR may start with a cast, ((TYPE *)FIELD)->...
//
// Positions (`pos`) are byte offsets into ProbeSpec::text so later stages can
// point a caret at the token they reject.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

struct ProbePoint {
  std::string function;                     // unescaped; empty for SRC:ALN, SRC;PTN
  std::string file;                         // @SRC, or SRC of SRC:ALN
  std::string version;                      // sym@VER (without the '@'); "@VER" for sym@@VER
  bool any_file = false;                    // FUNC@*
  std::optional<uint64_t> address;          // 0xADDR
  std::optional<uint64_t> line;             // relative to FUNC's declaration, or absolute with SRC
  std::optional<uint64_t> offset;           // +OFFS
  std::optional<std::string> lazy_pattern;  // ;PTN, as written
  bool retprobe = false;                    // %return
  std::string tracepoint;                   // tp:NAME, a tracepoint probe (nothing else is set)
  // ev:SYSTEM:EVENT, an event probe on an existing event (nothing else is set).
  std::string event_system;
  std::string event_name;
  // A USDT marker, [%][sdt_]PROVIDER:NAME (nothing else is set): the
  // provider and the name, either a glob.
  std::string sdt_provider;
  std::string sdt_name;
  size_t pos = 0;  // where the point starts in the spec text
};

enum class ArgKind {
  kVariable,   // var, var->member.field[3]
  kVars,       // $vars
  kParams,     // $params
  kRetval,     // $retval
  kComm,       // $comm
  kArg,        // $argN (number = N)
  kStackN,     // $stackN (number = N)
  kStack,      // $stack
  kRegister,   // %REG (name)
  kSymbol,     // @SYM[+-OFF] (name, offset)
  kAddress,    // @0xADDR (number), or @+OFF file-relative (file_relative)
  kImmediate,  // \IMM (name holds the text after '\')
};

struct ArgAccessor {
  enum Kind { kArrow, kDot, kIndex } kind;
  std::string member;  // for kArrow/kDot
  int64_t index = 0;   // for kIndex
  size_t pos = 0;
};

// +|-[u]OFF(...) around the base, innermost first.
struct ArgDeref {
  int64_t offset = 0;
  bool user = false;
};

struct ArgExpr {
  ArgKind kind = ArgKind::kVariable;
  std::string name;
  std::vector<ArgAccessor> accessors;
  uint64_t number = 0;
  int64_t offset = 0;
  bool file_relative = false;
  std::vector<ArgDeref> derefs;
  size_t pos = 0;  // of the base expression
  // A C cast before a variable, "(struct sk_buff *)", as written (blanks
  // kept), for event probes' fields: the type what follows points to.
  std::string cast;
  size_t cast_pos = 0;
};

struct ProbeArg {
  std::string name;  // NAME= as given, or empty
  ArgExpr expr;
  std::string type;  // :TYPE as given, or empty
  std::string text;  // the whole argument as written
  size_t pos = 0;
  size_t type_pos = 0;
};

struct ProbeSpec {
  std::string text;   // the whole spec as written
  std::string group;  // GRP: or empty
  std::string event;  // EV= or empty
  ProbePoint point;
  std::vector<ProbeArg> args;
};

// Parses "POINT [ARG...]". Errors quote `text` with a caret.
Result<ProbeSpec> ParseProbeSpec(std::string_view text);

// The parts of the grammar, exposed for tests. `offset` is added to every
// position so carets line up with the enclosing spec text.
Result<ProbePoint> ParseProbePoint(std::string_view spec_text, size_t begin, size_t end, std::string* group,
                                   std::string* event);
Result<ProbeArg> ParseProbeArg(std::string_view spec_text, size_t begin, size_t end);

// Whether resolving this spec needs DWARF (source lines, files, variables).
bool NeedsDebuginfo(const ProbeSpec& spec);
bool NeedsDebuginfo(const ArgExpr& expr);

// perf's short rendering of the point, for messages: "compute+4", "main.c:12",
// "compute%return".
std::string DescribePoint(const ProbePoint& point);

}  // namespace kprobectl
