// SPDX-License-Identifier: GPL-2.0-or-later
//
// What `line` (-L) is asked to show, as the user wrote it, parsed but not
// looked up. perf's grammar (tools/perf/util/probe-event.c,
// parse_line_range_desc):
//
//   FUNC[@SRC|@*][:START[+COUNT|-END]]     lines relative to FUNC's declaration
//   SRC[:START[+COUNT|-END]]               SRC has a '/' or a '.'
//   @SRC[:START[+COUNT|-END]]
//
// START+COUNT is COUNT lines from START (START..START+COUNT-1), START-END
// both ends included. The ':' before the lines is the first one that is not
// a C++ scope's "::" nor inside brackets; '\' escapes ':' and '@' in names.
// Errors quote the text with a caret under the bad part.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kprobectl/result.h"

namespace kprobectl {

struct LineRange {
  std::string function;
  std::string file;             // FUNC@SRC's SRC, or the file listed
  uint64_t start = 0;           // relative to FUNC's declaration, or absolute
  std::optional<uint64_t> end;  // inclusive; unset = to the end of the function / file
};

Result<LineRange> ParseLineRange(std::string_view text);

}  // namespace kprobectl
