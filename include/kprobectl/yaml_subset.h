// SPDX-License-Identifier: GPL-2.0-or-later
//
// The part of YAML that the Prometheus exporter-toolkit's web configuration
// needs, read strictly: block mappings, block sequences of scalars, flow
// sequences of scalars ([a, b]), plain and quoted scalars, '#' comments.
// Anything else (anchors, aliases, tags, block and flow mappings in a
// line, multi-line strings, tabs for indentation, a key given twice) is an
// error naming FILE:LINE rather than a guess. In: the text and the name to
// give it. Out: a tree of nodes that carry their line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

struct YamlEntry;

struct YamlNode {
  enum Kind { kNull, kScalar, kMap, kList };
  Kind kind = kNull;
  int line = 0;
  std::string scalar;
  std::vector<YamlEntry> map;  // in the file's order
  std::vector<YamlNode> list;
};

struct YamlEntry {
  std::string key;
  YamlNode value;
};

Result<YamlNode> ParseYamlSubset(std::string_view text, const std::string& path);

}  // namespace kprobectl
